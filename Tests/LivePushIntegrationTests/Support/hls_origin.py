"""A live HLS origin for the HLS input's tests: a sliding-window playlist over pre-made 1 s
TS segments, one more revealed every second (real time), with cue tags placed before chosen
segments.

    python3 hls_origin.py --dir DIR --prefix a --count 20 --window 5 [--tag 6 '#EXT-OATCLS-SCTE35:...']

Serves GET /live.m3u8 and GET /NAME.ts from DIR. The first playlist request starts the clock:
segment 0 is visible at once, segment k after k seconds. Control (from the test):
POST /pause freezes the playlist as it stands (the writer stopped); POST /restart?prefix=b&count=N
starts a fresh playlist, media sequence 0, with segment b0 visible at once (the origin restarted).
Prints its port on the first line of stdout, then one line per request.
"""
import argparse
import http.server
import os
import sys
import threading
import time
import urllib.parse

lock = threading.Lock()
state = {"prefix": "a", "count": 0, "start": None, "frozen": None, "tags": {}}


def visible(now):
    """How many segments of the current phase are out."""
    if state["frozen"] is not None:
        return state["frozen"]
    if state["start"] is None:
        state["start"] = now
    return min(state["count"], int(now - state["start"]) + 1)


def playlist(now, window):
    n = visible(now)
    first = max(0, n - window)
    lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:1", "#EXT-X-MEDIA-SEQUENCE:%d" % first]
    for seq in range(first, n):
        lines += state["tags"].get((state["prefix"], seq), [])
        lines += ["#EXTINF:1.000000,", "%s%d.ts" % (state["prefix"], seq)]
    return ("\n".join(lines) + "\n").encode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--prefix", default="a")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--tag", nargs=2, action="append", default=[], metavar=("SEQUENCE", "LINE"))
    args = parser.parse_args()
    state["prefix"], state["count"] = args.prefix, args.count
    for seq, line in args.tag:
        state["tags"].setdefault((args.prefix, int(seq)), []).append(line)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def send(self, status, body, kind="application/octet-stream"):
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True

        def do_GET(self):
            path = urllib.parse.urlparse(self.path).path
            now = time.monotonic()
            with lock:
                if path == "/live.m3u8":
                    body = playlist(now, args.window)
                    print("GET %s %.3f %d" % (path, now, visible(now)), flush=True)
                    return self.send(200, body, "application/vnd.apple.mpegurl")
            name = os.path.basename(path)
            full = os.path.join(args.dir, name)
            if name.endswith(".ts") and os.path.isfile(full):
                with open(full, "rb") as f:
                    body = f.read()
                print("GET %s %.3f" % (path, now), flush=True)
                return self.send(200, body, "video/mp2t")
            print("404 %s" % path, flush=True)
            self.send(404, b"")

        def do_POST(self):
            url = urllib.parse.urlparse(self.path)
            query = urllib.parse.parse_qs(url.query)
            now = time.monotonic()
            with lock:
                if url.path == "/pause":
                    state["frozen"] = visible(now)
                elif url.path == "/restart":
                    state["prefix"] = query.get("prefix", ["b"])[0]
                    state["count"] = int(query.get("count", ["20"])[0])
                    state["start"], state["frozen"] = now, None
                else:
                    return self.send(404, b"")
            print("POST %s %.3f" % (url.path, now), flush=True)
            self.send(200, b"ok", "text/plain")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
