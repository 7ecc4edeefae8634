#!/usr/bin/env python3
"""Reconnect benchmark: how fast does a pusher get frames to nginx-rtmp again after its TCP
connection is reset? `livepush push` (automatic reconnect) against `ffmpeg -re -c copy -f flv`
(no retry: it exits) and `ffmpeg -f fifo -attempt_recovery 1` (ffmpeg's built-in retry), each
pushing through `livepush loopback`, a fault-injecting relay in front of a private nginx-rtmp
that resets every connection N times, 2 s after accepting it.

With `--fault stale` the path dies silently instead: the loopback resets the pusher's side but
keeps its connection to nginx open and silent, so nginx holds the old publisher and answers
"Already publishing" until `drop_idle_publisher` (default 10 s here) lets it go. Every
connection dies `--fault-spacing` seconds after it was accepted, until `--resets` have died.

Stdlib only; reuses push-benchmark.py (input generation, nginx). Builds nothing: point
--livepush at a release build. See Benchmarks/README.md ("Reconnect benchmark").
"""

import argparse
import importlib.util
import json
import os
import platform
import re
import signal
import socket
import statistics
import struct
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

from children import T0, Child, stop_all_children  # noqa: E402  (next to this script)

_spec = importlib.util.spec_from_file_location("push_benchmark", os.path.join(HERE, "push-benchmark.py"))
pb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pb)

WORK = pb.WORK
BenchError = pb.BenchError
log = pb.log

MEDIAN_TARGET_S = 1.0        # livepush: median reset -> first frame at nginx < 1 s


# --------------------------------------------------------------------------------------------
# A minimal RTMP subscriber: nginx's side of "the first frame accepted again"


def _amf_encode(value):
    if value is None:
        return b"\x05"
    if isinstance(value, bool):
        return b"\x01" + (b"\x01" if value else b"\x00")
    if isinstance(value, (int, float)):
        return b"\x00" + struct.pack(">d", float(value))
    if isinstance(value, str):
        data = value.encode()
        return b"\x02" + struct.pack(">H", len(data)) + data
    if isinstance(value, dict):
        out = b"\x03"
        for k, v in value.items():
            key = k.encode()
            out += struct.pack(">H", len(key)) + key + _amf_encode(v)
        return out + b"\x00\x00\x09"
    raise TypeError(value)


def _amf_decode(data):
    """Decodes the AMF0 values of a command message (enough for nginx-rtmp's replies)."""
    values = []
    pos = 0

    def string(p, wide=False):
        n = struct.unpack_from(">I" if wide else ">H", data, p)[0]
        p += 4 if wide else 2
        return data[p:p + n].decode("utf-8", "replace"), p + n

    def props(p):
        obj = {}
        while p + 3 <= len(data) and data[p:p + 3] != b"\x00\x00\x09":
            key, p = string(p)
            obj[key], p = value(p)
        return obj, p + 3

    def value(p):
        marker = data[p]
        p += 1
        if marker == 0x00:
            return struct.unpack_from(">d", data, p)[0], p + 8
        if marker == 0x01:
            return data[p] != 0, p + 1
        if marker == 0x02:
            return string(p)
        if marker == 0x0C:
            return string(p, wide=True)
        if marker == 0x03:
            return props(p)
        if marker == 0x08:
            return props(p + 4)
        if marker in (0x05, 0x06):
            return None, p
        if marker == 0x0A:
            n = struct.unpack_from(">I", data, p)[0]
            p += 4
            items = []
            for _ in range(n):
                v, p = value(p)
                items.append(v)
            return items, p
        if marker == 0x0B:
            return struct.unpack_from(">d", data, p)[0], p + 10
        raise ValueError("AMF0 marker 0x%02x" % marker)

    try:
        while pos < len(data):
            v, pos = value(pos)
            values.append(v)
    except (ValueError, IndexError, struct.error):
        pass
    return values


class RtmpPlayer(threading.Thread):
    """Plays rtmp://127.0.0.1:PORT/APP/STREAM from nginx and records when each audio/video
    frame arrives (sequence headers excluded). nginx-rtmp forwards a frame to its players as
    soon as the publisher's frame is in, so the arrival time here is when nginx accepted it
    (plus loopback latency). nginx keeps players of a stream across publishers (idle_streams
    is on by default), so one player sees every reconnect."""

    def __init__(self, port, app, stream, log_path):
        super().__init__(daemon=True)
        self.port, self.app, self.stream = port, app, stream
        self.video = []          # arrival times of video frames
        self.audio = []          # arrival times of audio frames
        self.statuses = []       # (time, onStatus code)
        self.errors = []
        self.playing = threading.Event()
        self._halt = threading.Event()
        self._lock = threading.Lock()
        self._log = open(log_path, "w")
        self._sock = None

    # -- public

    def stop(self):
        self._halt.set()
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.join(3)
        self._log.close()

    def video_times(self):
        with self._lock:
            return list(self.video)

    def audio_times(self):
        with self._lock:
            return list(self.audio)

    # -- session

    def run(self):
        while not self._halt.is_set():
            try:
                self._session()
            except Exception as exc:  # nginx closed us, or a parse error: note it and play again
                if not self._halt.is_set():
                    self.errors.append("%s: %s" % (type(exc).__name__, exc))
                    self._note("player error: %s" % exc)
            if self._halt.wait(0.2):
                break

    def _note(self, text):
        try:
            self._log.write("%9.3f %s\n" % (time.monotonic() - T0, text))
            self._log.flush()
        except ValueError:
            pass

    def _recv(self, n):
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = self._sock.recv(n - len(buf))
            except socket.timeout:
                if self._halt.is_set():
                    raise EOFError("stopped")
                continue
            if not chunk:
                raise EOFError("nginx closed the player connection")
            buf += chunk
        self._received += n
        return bytes(buf)

    def _send(self, csid, mtype, msid, payload, timestamp=0):
        out = bytearray()
        out += bytes([csid]) + struct.pack(">I", timestamp)[1:] + struct.pack(">I", len(payload))[1:]
        out += bytes([mtype]) + struct.pack("<I", msid)
        for i in range(0, len(payload), 128):  # default outgoing chunk size
            if i:
                out += bytes([0xC0 | csid])
            out += payload[i:i + 128]
        self._sock.sendall(bytes(out))

    def _command(self, csid, msid, *values):
        self._send(csid, 20, msid, b"".join(_amf_encode(v) for v in values))

    def _session(self):
        self._sock = sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(0.5)
        self._received = 0
        try:
            # Handshake: C0 C1, S0 S1 S2, C2 (= S1).
            sock.sendall(b"\x03" + b"\x00" * 8 + os.urandom(1528))
            self._recv(1)
            s1 = self._recv(1536)
            self._recv(1536)
            sock.sendall(s1)
            tc_url = "rtmp://127.0.0.1:%d/%s" % (self.port, self.app)
            self._command(3, 0, "connect", 1, {
                "app": self.app, "flashVer": "LNX 9,0,124,2", "tcUrl": tc_url, "fpad": False,
                "capabilities": 15, "audioCodecs": 4071, "videoCodecs": 252, "videoFunction": 1})
            self._note("player: connect %s/%s" % (tc_url, self.stream))
            self._read_loop()
        finally:
            self._sock = None
            sock.close()

    def _read_loop(self):
        chunk_size = 128
        ack_window = 0
        acked = 0
        streams = {}   # csid -> [timestamp, length, type, msid, has_extended_ts, body]
        while not self._halt.is_set():
            b0 = self._recv(1)[0]
            fmt, csid = b0 >> 6, b0 & 0x3F
            if csid == 0:
                csid = 64 + self._recv(1)[0]
            elif csid == 1:
                b = self._recv(2)
                csid = 64 + b[0] + 256 * b[1]
            st = streams.setdefault(csid, [0, 0, 0, 0, False, bytearray()])
            if fmt <= 2:
                h = self._recv((11, 7, 3)[fmt])
                ts = int.from_bytes(h[0:3], "big")
                if fmt <= 1:
                    st[1] = int.from_bytes(h[3:6], "big")
                    st[2] = h[6]
                if fmt == 0:
                    st[3] = struct.unpack("<I", h[7:11])[0]
                st[4] = ts == 0xFFFFFF
                if st[4]:
                    self._recv(4)
            elif st[4]:
                self._recv(4)
            body = st[5]
            n = min(chunk_size, st[1] - len(body))
            body += self._recv(n)
            if ack_window and self._received - acked >= ack_window // 2:
                acked = self._received
                self._send(2, 3, 0, struct.pack(">I", self._received & 0xFFFFFFFF))
            if len(body) < st[1]:
                continue
            mtype, msid, data = st[2], st[3], bytes(body)
            st[5] = bytearray()
            if mtype == 1 and len(data) >= 4:
                chunk_size = struct.unpack(">I", data[:4])[0] & 0x7FFFFFFF
            elif mtype == 5 and len(data) >= 4:
                ack_window = struct.unpack(">I", data[:4])[0]
            elif mtype == 4 and len(data) >= 6 and struct.unpack(">H", data[:2])[0] == 6:
                self._send(2, 4, 0, b"\x00\x07" + data[2:6])  # ping response
            elif mtype == 20:
                self._on_command(_amf_decode(data))
            elif mtype == 9 and data:
                frame_type, codec = data[0] >> 4, data[0] & 0x0F
                header = codec == 7 and len(data) > 1 and data[1] != 1
                if frame_type != 5 and not header:
                    t = time.monotonic()
                    with self._lock:
                        first = not self.video or t - self.video[-1] > 0.3
                        self.video.append(t)
                    if first:
                        self._note("player: video frame (first after a gap)")
            elif mtype == 8 and data:
                header = data[0] >> 4 == 10 and len(data) > 1 and data[1] == 0
                if not header:
                    with self._lock:
                        self.audio.append(time.monotonic())

    def _on_command(self, values):
        if not values:
            return
        name = values[0]
        txn = values[1] if len(values) > 1 else 0
        if name == "_result" and txn == 1:
            self._command(3, 0, "createStream", 2, None)
        elif name == "_result" and txn == 2:
            msid = int(values[3]) if len(values) > 3 and isinstance(values[3], float) else 1
            self._command(8, msid, "play", 0, None, self.stream, -1000)  # -1000: live only
            self._note("player: play %s (stream id %d)" % (self.stream, msid))
        elif name == "onStatus":
            info = values[3] if len(values) > 3 and isinstance(values[3], dict) else {}
            code = info.get("code", "?")
            self.statuses.append((time.monotonic(), code))
            self._note("player: onStatus %s" % code)
            if code == "NetStream.Play.Start":
                self.playing.set()
        elif name == "_error":
            self._note("player: _error %s" % values[3:])


# --------------------------------------------------------------------------------------------
# The fault-injecting relay

_LINE = re.compile(r"connection (\d+): (accepted|upstream connected|fault (.*)|closed \((.*)\))$")


def start_loopback(livepush, upstream_port, faults, log_dir, name):
    cmd = [livepush, "loopback", "--listen", "0", "--upstream", "127.0.0.1:%d" % upstream_port]
    for fault in faults:
        cmd += ["--fault", fault]
    child = Child(name, cmd, log_dir)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for _t, line in child.out.snapshot():
            m = re.search(r"listening on rtmp://[^:]+:(\d+)/", line)
            if m:
                return child, int(m.group(1))
        if child.poll() is not None:
            break
        time.sleep(0.02)  # bounded readiness poll
    child.stop()
    raise BenchError("the loopback did not start: %s\n%s" % (" ".join(cmd), "\n".join(child.stderr_tail(20))))


def parse_loopback(lines):
    """connection number -> {accepted, upstream, fault, closed, reason} (times)."""
    conns = {}
    for t, line in lines:
        m = _LINE.search(line)
        if not m:
            continue
        c = conns.setdefault(int(m.group(1)), {})
        what = m.group(2)
        if what == "accepted":
            c["accepted"] = t
        elif what == "upstream connected":
            c["upstream"] = t
        elif what.startswith("fault"):
            c.setdefault("fault", t)
        else:
            c["closed"] = t
            c["reason"] = m.group(4)
    return conns


# --------------------------------------------------------------------------------------------
# Analysis: one row per reset


def first_after(times, t0, t1=None):
    for t in times:
        if t > t0 and (t1 is None or t <= t1):
            return t
    return None


def analyze(loop_lines, video_times, audio_times, pusher_events=None):
    """For each connection reset by the fault: the reset time and what followed it.

    reset   = earliest of the loopback's `fault` line, its `closed (reset ...)` line and (livepush)
              the pusher's connectionLost for that connection;
    accept  = the next connection accepted by the loopback (a new TCP connection);
    upstream= that connection's relay to nginx is up (the earliest it can publish);
    publish = (livepush) reconnectSucceeded, i.e. nginx answered NetStream.Publish.Start;
    sent    = (livepush) first stats event after publish with videoFramesSent grown;
    audio   = first audio frame nginx forwarded to our player after `accept`;
    frame   = first video frame nginx forwarded to our player after `accept`: accepted by nginx.
    """
    conns = parse_loopback(loop_lines)
    events = pusher_events or []
    lost = [t for t, e in events if e.get("event") == "connectionLost"]
    succeeded = [t for t, e in events if e.get("event") == "reconnectSucceeded"]
    stats = [(t, e["stats"].get("videoFramesSent", 0)) for t, e in events
             if e.get("event") == "stats" and isinstance(e.get("stats"), dict)]
    numbers = sorted(conns)
    reset_numbers = [n for n in numbers
                     if "fault" in conns[n] or "reset by fault" in conns[n].get("reason", "")]
    rows = []
    for i, n in enumerate(reset_numbers):
        c = conns[n]
        candidates = [c.get("fault"), c.get("closed") if "reset" in c.get("reason", "") else None]
        nxt_accept = [conns[m]["accepted"] for m in numbers if m > n and "accepted" in conns[m]]
        window_end = nxt_accept[0] if nxt_accept else None
        lost_t = first_after(lost, c.get("accepted", 0), window_end)
        candidates.append(lost_t)
        reset = min(t for t in candidates if t is not None)
        row = {"conn": n, "reset": reset, "accept": None, "upstream": None, "publish": None,
               "sent": None, "audio": None, "frame": None, "next_conn": None, "late": False}
        # The first connection accepted after the reset (ffmpeg's fifo may have opened others before).
        later = [m for m in numbers if m > n and conns[m].get("accepted", 0) >= reset]
        if later:
            m = later[0]
            row["next_conn"] = m
            row["accept"] = conns[m]["accepted"]
            row["upstream"] = conns[m].get("upstream")
            row["audio"] = first_after(audio_times, conns[m]["accepted"])
            row["frame"] = first_after(video_times, conns[m]["accepted"])
        if events:
            row["publish"] = first_after(succeeded, reset)
            if row["publish"] is not None:
                before = [v for t, v in stats if t <= row["publish"]]
                base = before[-1] if before else 0
                row["sent"] = next((t for t, v in stats if t > row["publish"] and v > base), None)
        rows.append(row)
    # A recovery that only came after the following reset did not recover that connection.
    for a, b in zip(rows, rows[1:]):
        if a["frame"] is not None and a["frame"] > b["reset"]:
            a["late"] = True
    return conns, rows


def rel(row, key):
    v = row.get(key)
    return None if v is None else v - row["reset"]


def recoveries(rows):
    return [rel(r, "frame") for r in rows if r["frame"] is not None]


# --------------------------------------------------------------------------------------------
# Runs


def wait_until(predicate, deadline, children):
    """Polls (every 50 ms, up to `deadline`) until predicate() is true or a child exits."""
    while time.monotonic() < deadline:
        if predicate():
            return "done"
        for child in children:
            if child.poll() is not None:
                return "exited"
        time.sleep(0.05)
    return "time limit"


def parse_json_lines(lines):
    out = []
    for t, line in lines:
        if line.startswith("{"):
            try:
                out.append((t, json.loads(line)))
            except ValueError:
                pass
    return out


def fault_specs(args):
    """The loopback's --fault arguments for the chosen fault kind."""
    if args.fault == "reset":
        return ["reset-after=%s@conn=1-%d" % (args.reset_after, args.resets)]
    # Every connection that lives this long dies silently; the rejected attempts in between end
    # sooner, so each recovered connection is faulted once.
    return ["stale@after=%gs" % args.fault_spacing]


def stale_run_limit(args):
    """Each cycle: the connection lives --fault-spacing, then nginx holds it drop_idle_publisher."""
    return args.resets * (args.fault_spacing + args.drop_idle_publisher + 5) + 30


def run_tool(tool, ctx):
    """Runs one tool through a fresh loopback and player; returns a result dict."""
    args = ctx["args"]
    stream = {"livepush": "bench-livepush", "ffmpeg": "bench-ffmpeg", "fifo": "bench-fifo"}[tool]
    faults = fault_specs(args)
    fault = " ".join(faults)
    log_dir = ctx["log_dir"]
    player = RtmpPlayer(ctx["nginx"].port, "live", stream, os.path.join(log_dir, tool + "-player.log"))
    player.start()
    if not player.playing.wait(10):
        log("warning: the player did not get NetStream.Play.Start for %s" % stream)
    loopback, port = start_loopback(ctx["livepush"], ctx["nginx"].port, faults, log_dir, tool + "-loopback")
    url = "rtmp://127.0.0.1:%d/live/%s" % (port, stream)
    src = ctx["input"]
    if tool == "livepush":
        cmd = [ctx["livepush"], "push", src, url, "--loop", "forever", "--json",
               "--retry-interval", str(args.retry_interval), "--retry-count", str(args.retry_count),
               "--stats-interval", str(args.stats_interval)]
        limit = args.time_limit or (args.resets * 5 + 30 if args.fault == "reset" else stale_run_limit(args))
    elif tool == "ffmpeg":
        cmd = [ctx["ffmpeg"], "-hide_banner", "-loglevel", "warning", "-nostdin", "-re", "-stream_loop", "-1",
               "-i", src, "-c", "copy", "-f", "flv", url]
        limit = 30
    else:
        cmd = [ctx["ffmpeg"], "-hide_banner", "-loglevel", "warning", "-nostdin", "-re", "-stream_loop", "-1",
               "-i", src, "-map", "0:v", "-map", "0:a", "-c", "copy",
               # The MP4's codec tags (avc1, mp4a) reach the inner flv muxer unchanged through fifo,
               # which then refuses them ("Tag avc1 incompatible with output codec id '27'") and never
               # publishes; FLV's own ids (7 = H.264, 10 = AAC) make it work.
               "-tag:v", "7", "-tag:a", "10",
               "-f", "fifo", "-fifo_format", "flv",
               "-attempt_recovery", "1", "-recovery_wait_time", "1", "-drop_pkts_on_overflow", "1",
               "-queue_size", "600", url]
        limit = max(args.fifo_time_limit, stale_run_limit(args)) if args.fault == "stale" else args.fifo_time_limit
    result = {"tool": tool, "cmd": cmd, "fault": fault, "limit": limit}
    log("[%s] %s" % (tool, " ".join(cmd)))
    pusher = Child(tool, cmd, log_dir)
    try:
        def finished():
            conns = parse_loopback(loopback.out.snapshot())
            if args.fault == "stale":
                # Every fault fired, and a frame reached nginx after the last one.
                faulted = sorted(c["fault"] for c in conns.values() if "fault" in c)
                return len(faulted) >= args.resets and first_after(player.video_times(), faulted[-1]) is not None
            beyond = [n for n in conns if n > args.resets and "accepted" in conns[n]]
            return bool(beyond) and first_after(player.video_times(), conns[min(beyond)]["accepted"]) is not None
        outcome = wait_until(finished, pusher.started + limit, [pusher, loopback])
        result["outcome"] = outcome
        result["wall"] = time.monotonic() - pusher.started
        if outcome == "exited" and pusher.exit is not None:
            result["exit_unprompted"] = pusher.exit
        if pusher.poll() is None:
            time.sleep(0.3)  # let the last frames and stats land
        result["exit"], _ = pusher.stop(signal.SIGINT, grace=10)
        result["stopped_at"] = pusher.exited_at
    finally:
        pusher.stop()
        loopback.stop()
        player.stop()
    events = parse_json_lines(pusher.out.snapshot()) if tool == "livepush" else None
    conns, rows = analyze(loopback.out.snapshot(), player.video_times(), player.audio_times(), events)
    result.update(conns=conns, rows=rows, started=pusher.started, events=events,
                  stderr_tail=pusher.stderr_tail(6), player_errors=player.errors[:5],
                  initial_frame=first_after(player.video_times(), pusher.started))
    if events is not None:
        counts = {}
        for _t, e in events:
            counts[e.get("event")] = counts.get(e.get("event"), 0) + 1
        result["event_counts"] = counts
        final = [e for _t, e in events if e.get("event") == "stopped"]
        result["final_stats"] = final[-1].get("stats") if final else None
        result["errors"] = [e.get("error") for _t, e in events if e.get("error")]
    return result


# --------------------------------------------------------------------------------------------
# Report


def fmt(v, spec="%.3f"):
    return "-" if v is None else spec % v


def summarize(values):
    return (statistics.median(values) if values else None, max(values) if values else None)


def report_tool(title, res, resets_wanted):
    lines = ["", "== %s ==" % title, "", "command: %s" % " ".join(os.path.relpath(c, REPO) if c.startswith(REPO) else c
                                                                for c in res["cmd"])]
    rows = res["rows"]
    started = res["started"]
    header = "%-5s %-5s %8s %8s %8s %8s %8s %8s %8s  %s" % (
        "reset", "conn", "at s", "accept", "upstream", "publish", "sent", "audio", "video", "note")
    lines += ["", "times after the reset, in seconds (`at` is since the pusher started):", header, "-" * len(header)]
    for i, r in enumerate(rows, 1):
        note = []
        if r["next_conn"] is None:
            note.append("no new connection")
        elif r["frame"] is None:
            note.append("no frame at nginx after conn %d" % r["next_conn"])
        if r["late"]:
            note.append("frame only after the next reset")
        if r["next_conn"] is not None and r["next_conn"] != r["conn"] + 1:
            note.append("next conn %d" % r["next_conn"])
        lines.append("%-5d %-5d %8.3f %8s %8s %8s %8s %8s %8s  %s" % (
            i, r["conn"], r["reset"] - started, fmt(rel(r, "accept")), fmt(rel(r, "upstream")),
            fmt(rel(r, "publish")), fmt(rel(r, "sent")), fmt(rel(r, "audio")), fmt(rel(r, "frame")),
            ", ".join(note)))
    rec = recoveries(rows)
    on_time = [rel(r, "frame") for r in rows if r["frame"] is not None and not r["late"]]
    med, worst = summarize(rec)
    lines += ["", "resets: %d (of %d configured); recovered (a video frame reached nginx again): %d" % (
        len(rows), resets_wanted, len(rec))]
    lines.append("reset -> first video frame at nginx: median %s s, worst %s s" % (fmt(med), fmt(worst)))
    anyf = [min(v for v in (rel(r, "audio"), rel(r, "frame")) if v is not None) for r in rows
            if r["audio"] is not None or r["frame"] is not None]
    amed, aworst = summarize(anyf)
    lines.append("reset -> first audio/video at nginx: median %s s, worst %s s (n=%d)" % (fmt(amed), fmt(aworst), len(anyf)))
    if res["tool"] == "livepush":
        pub = [rel(r, "publish") for r in rows if r["publish"] is not None]
        pmed, pworst = summarize(pub)
        lines.append("reset -> reconnectSucceeded:         median %s s, worst %s s (n=%d)" % (fmt(pmed), fmt(pworst), len(pub)))
    else:
        ups = [rel(r, "upstream") for r in rows if r["upstream"] is not None]
        umed, uworst = summarize(ups)
        lines.append("reset -> next conn upstream:         median %s s, worst %s s (n=%d)" % (fmt(umed), fmt(uworst), len(ups)))
    lines.append("all (reset -> video frame, s): %s" % (" ".join("%.3f" % v for v in rec) or "-"))
    first = res.get("initial_frame")
    lines.append("first video frame at nginx after start: %s s" % fmt(None if first is None else first - started))
    how = {"done": "recovered after the last faulted connection",
           "exited": "the pusher exited by itself",
           "time limit": "time limit (%d s) reached" % res["limit"]}[res["outcome"]]
    if "exit_unprompted" in res:
        last = rows[0]["reset"] if rows else None
        stopped = res.get("stopped_at")
        lines.append("ended: %s with status %s, %s s after the pusher started%s" % (
            how, res["exit_unprompted"], fmt(None if stopped is None else stopped - started, "%.2f"),
            "" if last is None or stopped is None else ", %.3f s after reset 1" % (stopped - last)))
    else:
        lines.append("ended: %s; stopped with SIGINT after %.1f s, exit status %s" % (how, res["wall"], res["exit"]))
    if res.get("event_counts") is not None:
        keys = ("pushStarted", "firstFramePushed", "connectionLost", "sendDataTimeout", "reconnectStarted", "staleSession",
                "reconnectSucceeded", "reconnectFailed", "sdkError", "stopped")
        lines.append("events: " + ", ".join("%s %d" % (k, res["event_counts"].get(k, 0)) for k in keys))
        fs = res.get("final_stats")
        if fs:
            d = fs.get("droppedFrames", {})
            lines.append("final stats: %s video + %s audio frames sent, dropped %s" % (
                fs.get("videoFramesSent"), fs.get("audioFramesSent"),
                " ".join("%s=%s" % kv for kv in sorted(d.items())) if isinstance(d, dict) else d))
        other = [e for e in res.get("errors", []) if isinstance(e, dict) and e.get("name") != "connectionLost"]
        if other:
            lines.append("other errors: %s" % "; ".join("%s: %s" % (e.get("name"), e.get("message")) for e in other[:5]))
    if res["stderr_tail"] and res["tool"] != "livepush":
        lines.append("stderr (last lines):")
        lines += ["  " + s for s in res["stderr_tail"]]
    if res.get("player_errors"):
        lines.append("player notes: %s" % "; ".join(res["player_errors"]))
    return lines, rec, med, worst, amed


# --------------------------------------------------------------------------------------------
# Main


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Reset the pusher's connection N times (through `livepush loopback` in front of a "
                    "private nginx-rtmp) and time reset -> first frame at nginx: livepush vs ffmpeg.")
    p.add_argument("--livepush", default=os.path.join(REPO, ".build", "release", "livepush"),
                   help="livepush binary (default: .build/release/livepush)")
    p.add_argument("--ffmpeg", default="ffmpeg", help="ffmpeg binary (default: ffmpeg in PATH)")
    p.add_argument("--ffprobe", default="ffprobe", help="ffprobe binary (default: ffprobe in PATH)")
    p.add_argument("--nginx", default=pb.DEFAULT_NGINX, help="nginx binary (default: %(default)s)")
    p.add_argument("--rtmp-module", default=pb.DEFAULT_RTMP_MODULE, help="ngx_rtmp_module.so (default: %(default)s)")
    p.add_argument("--input", help="use this media file instead of the generated one")
    p.add_argument("--duration", type=float, default=60.0, help="length of the generated input (default 60 s)")
    p.add_argument("--resets", type=int, default=20, help="connections reset by the fault (default 20)")
    p.add_argument("--fault", choices=("reset", "stale"), default="reset",
                   help="reset: the loopback resets both sides; stale: a silent path death, nginx keeps the "
                        "old publisher until drop_idle_publisher (default reset)")
    p.add_argument("--drop-idle-publisher", type=int, default=10,
                   help="nginx drop_idle_publisher in s with --fault stale (default 10)")
    p.add_argument("--fault-spacing", type=float, default=15.0,
                   help="with --fault stale: each connection dies this long after it was accepted (default 15)")
    p.add_argument("--reset-after", default="2s", help="each faulted connection is reset this long after "
                                                       "the loopback accepts it (default 2s)")
    p.add_argument("--retry-interval", type=int, default=500, help="livepush --retry-interval in ms (default 500)")
    p.add_argument("--retry-count", type=int, default=100, help="livepush --retry-count (default 100)")
    p.add_argument("--stats-interval", type=float, default=0.1,
                   help="livepush --stats-interval in s, for the `sent` column (default 0.1)")
    p.add_argument("--tools", default="livepush,ffmpeg,fifo",
                   help="comma-separated subset of livepush,ffmpeg,fifo (default all three)")
    p.add_argument("--time-limit", type=float, help="livepush run limit in s (default 5 x resets + 30)")
    p.add_argument("--fifo-time-limit", type=float, default=90.0, help="ffmpeg fifo run limit in s (default 90)")
    p.add_argument("--json", metavar="PATH", help="also write raw results as JSON to PATH")
    p.add_argument("--keep-logs", action="store_true", help="keep the nginx dir (config, error.log)")
    p.add_argument("--strict", action="store_true", help="exit 3 if the livepush target is MISS")
    args = p.parse_args(argv)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = [t for t in tools if t not in ("livepush", "ffmpeg", "fifo")]
    if bad or not tools:
        p.error("--tools: unknown %s" % ",".join(bad))
    if args.resets < 1:
        p.error("--resets must be at least 1")
    args.tool_list = tools
    return args


def main(argv):
    args = parse_args(argv)
    ffmpeg = pb.resolve(args.ffmpeg)
    ffprobe = pb.resolve(args.ffprobe)
    if ffmpeg is None:
        raise BenchError("ffmpeg not found: %s" % args.ffmpeg)
    livepush = pb.resolve(args.livepush)  # the loopback is livepush too, so always needed
    if livepush is None:
        raise BenchError("livepush binary not found or not executable: %s\n"
                         "build it with `swift build -c release` or pass --livepush PATH" % args.livepush)
    for path in (args.nginx, args.rtmp_module):
        if not os.path.exists(path):
            raise BenchError("missing %s (install nginx and libnginx-mod-rtmp)" % path)
    src = os.path.abspath(args.input) if args.input else pb.generate_input(ffmpeg, args.duration)
    log_dir = os.path.join(WORK, "logs", "reconnect-" + time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(log_dir, exist_ok=True)

    directives = "drop_idle_publisher %ds;" % args.drop_idle_publisher if args.fault == "stale" else ""
    nginx = pb.Nginx(args.nginx, args.rtmp_module, directives)
    results = {}
    out = []
    status = 0
    try:
        nginx.start()
        out += [
            "LivePush reconnect benchmark",
            "date:      %s" % time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "host:      %s, %d CPUs, Python %s" % (platform.platform(), os.cpu_count() or 0,
                                                   platform.python_version()),
            "input:     %s" % os.path.relpath(src, REPO),
            "           %s" % (pb.describe_input(ffprobe, src) if ffprobe else ""),
            "livepush:  %s" % os.path.relpath(livepush, REPO),
            "ffmpeg:    %s" % ffmpeg,
            "server:    nginx-rtmp on 127.0.0.1:%d (record off%s), behind a fresh `livepush loopback` per tool"
            % (nginx.port, ", " + directives if directives else ""),
            ("fault:     reset-after=%s@conn=1-%d (connections 1-%d are reset %s after being accepted; "
             "later ones are left alone)" % (args.reset_after, args.resets, args.resets, args.reset_after))
            if args.fault == "reset" else
            ("fault:     %s (a silent path death: the pusher's side is reset, the side to nginx stays open "
             "and silent until nginx drops the idle publisher)" % " ".join(fault_specs(args))),
            "measured:  reset = earliest of the loopback's `fault`/`closed (reset ...)` lines and livepush's",
            "           connectionLost. video (audio) = first video (audio) frame, sequence headers excluded,",
            "           that nginx forwards to an RTMP player run by this script, after the next connection",
            "           was accepted by the loopback: the frame was accepted by nginx. accept/upstream = the",
            "           loopback's next connection and its relay to nginx; publish = livepush's",
            "           reconnectSucceeded (NetStream.Publish.Start); sent = first livepush stats event",
            "           (every %gs) after it with videoFramesSent grown. Times: time.monotonic() when each" % args.stats_interval,
            "           line/frame reached this script, in seconds after the reset.",
        ]
        print("\n".join(out), flush=True)
        ctx = {"args": args, "nginx": nginx, "livepush": livepush, "ffmpeg": ffmpeg, "input": src,
               "log_dir": log_dir}
        titles = {
            "livepush": "livepush push --loop forever --retry-interval %d --retry-count %d" % (
                args.retry_interval, args.retry_count),
            "ffmpeg": "ffmpeg -re -c copy -f flv (no retry)",
            "fifo": "ffmpeg -f fifo -fifo_format flv -attempt_recovery 1 -recovery_wait_time 1",
        }
        summary = {}
        summary_any = {}
        for tool in args.tool_list:
            res = run_tool(tool, ctx)
            results[tool] = res
            lines, rec, med, worst, any_med = report_tool(titles[tool], res, args.resets)
            summary[tool] = (len(res["rows"]), len(rec), med, worst)
            summary_any[tool] = any_med
            print("\n".join(lines), flush=True)
            out += lines
        lines = ["", "== summary: reset -> first video frame accepted again by nginx ==", ""]
        header = "%-44s %7s %10s %9s %9s" % ("tool", "resets", "recovered", "median s", "worst s")
        lines += [header, "-" * len(header)]
        for tool in args.tool_list:
            n, r, med, worst = summary[tool]
            short = {"livepush": "livepush push (retry every %d ms)" % args.retry_interval,
                     "ffmpeg": "ffmpeg -re -c copy -f flv (no retry)",
                     "fifo": "ffmpeg -f fifo -attempt_recovery 1"}[tool]
            lines.append("%-44s %7d %10d %9s %9s" % (short, n, r, fmt(med), fmt(worst)))
        lines += ["", "targets:"]
        if args.fault == "stale":
            lines.append("  (none: recovery waits for nginx's drop_idle_publisher %d s; compare the tools)"
                         % args.drop_idle_publisher)
            if "livepush" in summary and (summary["livepush"][1] < summary["livepush"][0]
                                          or results["livepush"]["outcome"] != "done"):
                status = 1
        elif "livepush" in summary:
            n, r, med, _worst = summary["livepush"]
            verdict = "MISS" if med is None or med >= MEDIAN_TARGET_S or r < n else "PASS"
            lines.append("  livepush median reset -> video frame < %.0f s (all recovered)     %8s s  %s" % (
                MEDIAN_TARGET_S, fmt(med), verdict))
            any_med = summary_any.get("livepush")
            any_verdict = "MISS" if any_med is None or any_med >= MEDIAN_TARGET_S else "PASS"
            lines.append("  livepush median reset -> audio or video < %.0f s (informational) %8s s  %s" % (
                MEDIAN_TARGET_S, fmt(any_med), any_verdict))
            if verdict == "MISS" and args.strict:
                status = 3
            if r < args.resets or results["livepush"]["outcome"] != "done":
                status = status or 1
        else:
            lines.append("  livepush median reset -> video frame < %.0f s   -  n/a" % MEDIAN_TARGET_S)
        lines.append("")
        lines.append("per-run logs: %s" % os.path.relpath(log_dir, REPO))
        print("\n".join(lines), flush=True)
        out += lines
    finally:
        stop_all_children()
        nginx.cleanup(keep=args.keep_logs)
        if args.keep_logs:
            log("nginx dir kept: %s" % nginx.dir)
    if args.json:
        def plain(res):
            d = dict(res)
            d["rows"] = [{k: (v - res["started"] if isinstance(v, float) and k not in ("conn",) else v)
                          for k, v in r.items()} for r in res["rows"]]
            d["conns"] = {n: {k: (v - res["started"] if isinstance(v, float) else v) for k, v in c.items()}
                          for n, c in res["conns"].items()}
            d["events"] = None
            for k in ("started", "stopped_at", "initial_frame"):
                d.pop(k, None)
            return d
        with open(args.json, "w") as f:
            json.dump({t: plain(r) for t, r in results.items()}, f, indent=2)
    return status


if __name__ == "__main__":
    pb.run_script(main, on_exit=stop_all_children, interrupted="interrupted; every child stopped")
