#!/usr/bin/env python3
"""A tiny HTTP server that checks type A auth_keys for nginx-rtmp's `on_publish`.

    auth_server.py [--port P] [--skew S] [--timestamp expiry|issued] [--validity S]

The private key comes from the AUTH_SERVER_KEY environment variable (so that it is not on
the command line) or --key. nginx-rtmp calls `on_publish http://127.0.0.1:P/publish;` with
form fields (POST, or the query of a GET) call, app, name, tcurl, ... and the publish
arguments, e.g. auth_key. The answer is 200 when

    auth_key = TIMESTAMP-RAND-UID-HASH,  HASH == md5("/" + app + "/" + name + "-TIMESTAMP-RAND-UID-KEY")

and now <= expiry + skew (expiry = TIMESTAMP, or TIMESTAMP + validity with --timestamp issued);
403 otherwise. Any other path answers 200 `ok` (readiness probe).

Prints `listening on 127.0.0.1:PORT` on stdout once it accepts connections (--port 0, the
default, picks a free port), and one line per decision on stderr, with the hash masked:
`publish app=live name=s -> 403 expired`.
"""
import argparse
import hashlib
import hmac
import http.server
import os
import re
import sys
import time
import urllib.parse


def decide(fields, key, now, meaning, validity, skew):
    """Returns (status, reason)."""
    app = fields.get("app", "")
    name = fields.get("name", "")
    values = fields.get("auth_key_all", [])
    if not values:
        return 403, "missing"
    if len(values) > 1:
        return 403, "malformed"
    parts = values[0].split("-")
    if len(parts) != 4 or not re.fullmatch(r"[0-9]+", parts[0]) or not parts[1] or not parts[2] \
            or not re.fullmatch(r"[0-9a-f]{32}", parts[3]):
        return 403, "malformed"
    timestamp, rand, uid, digest = parts
    uri = "/" + app + "/" + name
    expected = hashlib.md5(f"{uri}-{timestamp}-{rand}-{uid}-{key}".encode("utf-8")).hexdigest()
    if not hmac.compare_digest(expected, digest):
        return 403, "hash mismatch"
    expiry = int(timestamp) + (validity if meaning == "issued" else 0)
    if now > expiry + skew:
        return 403, f"expired {now - expiry} s ago"
    return 200, f"valid for {expiry - now} s"


def main():
    parser = argparse.ArgumentParser(description="auth_key checker for nginx-rtmp on_publish")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--key", default=os.environ.get("AUTH_SERVER_KEY"))
    parser.add_argument("--skew", type=int, default=0)
    parser.add_argument("--timestamp", choices=["expiry", "issued"], default="expiry")
    parser.add_argument("--validity", type=int, default=0)
    args = parser.parse_args()
    if not args.key:
        parser.error("a key is required: AUTH_SERVER_KEY or --key")

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, body_fields):
            url = urllib.parse.urlsplit(self.path)
            pairs = urllib.parse.parse_qsl(url.query, keep_blank_values=True) + body_fields
            fields = {}
            for k, v in pairs:
                fields.setdefault(k, v)
            fields["auth_key_all"] = [v for k, v in pairs if k == "auth_key"]
            if url.path == "/publish":
                status, reason = decide(fields, args.key, int(time.time()), args.timestamp, args.validity, args.skew)
                sys.stderr.write(f"publish app={fields.get('app', '')} name={fields.get('name', '')} -> {status} {reason}\n")
                sys.stderr.flush()
            else:
                status, reason = 200, "ok"
            body = (reason + "\n").encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self._answer([])

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8", "replace") if length > 0 else ""
            self._answer(urllib.parse.parse_qsl(body, keep_blank_values=True))

        def log_message(self, format, *args):  # the decision line above is the log
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
