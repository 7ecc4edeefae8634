#!/usr/bin/env python3
"""Glass-to-glass-ish latency of `livepush push` in real time, WHIP beside RTMP: from the start
of the push to the first decoded frame at the far end, and per frame, from the moment the push
sends it to the moment it is decoded there.

  WHIP: livepush -> aiortc endpoint (Benchmarks/latency_whip_endpoint.py, decodes every frame)
  RTMP: livepush -> nginx-rtmp `live` -> `ffmpeg -i rtmp://... -vf showinfo -f null -` (subscriber)

Everything runs inside a network namespace of the benchmark's own (libnice gathers no ICE
candidate on loopback), so root only. Python 3 stdlib; the WHIP endpoint needs a venv with
aiortc and aiohttp (--python). Builds nothing: point --livepush at a release build.
See Benchmarks/README.md, "Latency benchmark".
"""

import argparse
import json
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work")
sys.path.insert(0, HERE)
from children import Child, describe_exit, stop_all_children  # noqa: E402  (next to this script)

import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location("push_benchmark", os.path.join(HERE, "push-benchmark.py"))
pb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pb)
BenchError, log = pb.BenchError, pb.log

# children.Child stamps lines with time.monotonic(); the WHIP endpoint (another process) stamps
# with time.time(). One offset taken at start converts the former to the latter; over a run of a
# minute the two clocks do not drift apart measurably.
WALL_MINUS_MONO = time.time() - time.monotonic()
ENDPOINT = os.path.join(HERE, "latency_whip_endpoint.py")
DEFAULT_PYTHON = "/tmp/livepush-test-venv/bin/python"
FPS = 25
RTMP_PORT = 1935   # the namespace is ours: nothing else listens in it
WHIP_PORT = 8080


def wall(mono):
    return mono + WALL_MINUS_MONO


# --------------------------------------------------------------------------------------------
# Clip


def make_clip(ffmpeg, seconds, size):
    """H.264 25 fps, no B-frames, a keyframe every second (-g 25), + AAC, cached in work/.
    No B-frames: decode order is presentation order, so pts say when a frame is sent.
    Constrained Baseline: aiortc negotiates no other H.264 profile (a High-profile offer gets
    a 500 from the endpoint, "Failed to set remote video description send parameters")."""
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "latency-%ss-%sp25-h264cbp-aac.mp4" % (pb._fmt_num(seconds), size))
    if os.path.exists(path):
        return path
    log("generating %s ..." % os.path.relpath(path, REPO))
    tmp = path + ".part.mp4"
    subprocess.run([
        ffmpeg, "-hide_banner", "-loglevel", "error", "-y", "-nostdin",
        "-f", "lavfi", "-i", "testsrc2=size=%s:rate=%d:duration=%s" % (size, FPS, seconds),
        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=%s" % seconds,
        "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "baseline", "-pix_fmt", "yuv420p", "-bf", "0",
        "-g", str(FPS), "-keyint_min", str(FPS), "-sc_threshold", "0", "-b:v", "2000k",
        "-c:a", "aac", "-b:a", "128k", "-ac", "2", "-movflags", "+faststart", tmp,
    ], check=True, stdin=subprocess.DEVNULL, timeout=300)
    os.replace(tmp, path)
    return path


def video_offset(ffprobe, clip):
    """Where the clip's first video frame sits on the push's timeline (seconds). The push's
    clock starts its earliest decode time at 0 and its wall clock at the first packet; in an
    AAC clip that is the audio priming packet, 1024 samples (21.3 ms at 48 kHz) before the
    first picture. So video pts p is due at T0 + offset + p."""
    out = subprocess.run([ffprobe, "-v", "error", "-read_intervals", "%+1", "-show_entries",
                          "packet=codec_type,dts_time", "-of", "csv=p=0", clip],
                         check=True, capture_output=True, text=True, timeout=30).stdout
    packets = [(kind, float(dts)) for kind, dts in (l.split(",")[:2] for l in out.split() if "," in l)
               if dts not in ("", "N/A")]
    first_video = next(dts for kind, dts in packets if kind == "video")
    return first_video - min(dts for _kind, dts in packets)


# --------------------------------------------------------------------------------------------
# Network namespace


class Namespace:
    """`ip netns add`, loopback up and a veth pair with 10.200.0.1 (as the WHIP tests'
    NetworkNamespace.swift): WebRTC gets a non-loopback address to gather, and nothing the
    benchmark starts can reach or disturb the machine's own network."""

    ADDRESS = "10.200.0.1"

    def __init__(self):
        self.name = "livepush-lat-%s" % secrets.token_hex(4)
        self.created = False

    def create(self):
        self._ip("netns", "add", self.name)
        self.created = True
        for args in (("link", "set", "lo", "up"),
                     ("link", "add", "wan0", "type", "veth", "peer", "name", "wan1"),
                     ("addr", "add", self.ADDRESS + "/24", "dev", "wan0"),
                     ("link", "set", "wan0", "up"), ("link", "set", "wan1", "up")):
            self._ip("-n", self.name, *args)

    def command(self, *argv):
        # `ip netns exec` execs the command: signals sent to the child reach it directly.
        return ["ip", "netns", "exec", self.name] + list(argv)

    def listening(self, port):
        out = subprocess.run(self.command("ss", "-Hltn", "sport = :%d" % port),
                             capture_output=True, text=True, timeout=10).stdout
        return bool(out.strip())

    def remove(self):
        if self.created:
            subprocess.run(["ip", "netns", "delete", self.name], capture_output=True, timeout=10)
            self.created = False

    @staticmethod
    def _ip(*args):
        result = subprocess.run(["ip"] + list(args), capture_output=True, text=True, timeout=10)
        if result.returncode != 0:
            raise BenchError("ip %s: %s" % (" ".join(args), result.stderr.strip()))


# --------------------------------------------------------------------------------------------
# What the push says about itself


def push_timeline(cli, launched):
    """From `livepush push --json`: T0, the wall time its first frame went out, and checks.

    Each event's "t" counts from a ContinuousClock reading the CLI takes after `pusher.start`,
    a little after the process was launched. That origin, in wall time, is at most
    (arrival - t) for every line (a line arrives after it was printed), so the smallest such
    difference over all lines, with a stats line every 0.5 s, is the closest estimate."""
    events = []
    for mono, line in cli.out.snapshot():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and "t" in event:
            events.append((wall(mono), event))
    if not events:
        raise BenchError("livepush printed no JSON event")
    origin = min(arrived - e["t"] for arrived, e in events)
    first = next((e for _a, e in events if e.get("event") == "firstFramePushed"), None)
    if first is None:
        names = [e.get("event") for _a, e in events]
        raise BenchError("no firstFramePushed event: %s" % names)
    t0 = origin + first["t"]
    # The push paces itself against the clock that starts at its first frame: media time sent
    # minus time elapsed since then is how far ahead of T0 + pts it wrote (its pacing batch).
    leads = [e["stats"]["mediaTimeSent"] - (e["t"] - first["t"])
             for _a, e in events if e.get("event") == "stats" and e["t"] > first["t"] + 1]
    stopped = next((e for _a, e in events if e.get("event") == "stopped"), None)
    return {
        "launched": launched, "origin": origin, "t0": t0,
        "launch_to_origin": origin - launched, "launch_to_first_frame_sent": t0 - launched,
        "lead_median": statistics.median(leads) if leads else None,
        "lead_max": max(leads) if leads else None,
        "video_frames_sent": (stopped or {}).get("stats", {}).get("videoFramesSent"),
        "events": [e.get("event") for _a, e in events if e.get("event") != "stats"],
    }


def latency_figures(timeline, frames, expected_frames, pts_known, offset):
    """frames: [(pts seconds, wall arrival)] in decode order.

    With `pts_known` the pts are on the push's timeline already (RTMP: the subscriber played
    before the publish, so ffmpeg's pts_time counts from the first packet of the stream, the
    push's output time 0). Else (WHIP: RTP timestamps start at random) the first decoded
    frame is taken to be the clip's first picture, at `offset`. Were it not, the decoder
    would have started at a later keyframe (a GOP is 25 frames) and the last frame's pts
    would fall a second or more short: `first_is_first` checks that."""
    if not frames:
        return {"frames_decoded": 0}
    shift = 0.0 if pts_known else offset - frames[0][0]
    frames = [(pts + shift, arrival) for pts, arrival in frames]
    latencies = [arrival - (timeline["t0"] + pts) for pts, arrival in frames]
    last, expected_last = frames[-1][0], offset + (expected_frames - 1) / FPS
    ordered = sorted(latencies)
    return {
        "frames_decoded": len(frames),
        "start_to_first_decoded": frames[0][1] - timeline["launched"],
        "first_sent_to_first_decoded": frames[0][1] - timeline["t0"],
        "median": statistics.median(latencies),
        "p95": ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))],
        "max": ordered[-1],
        "min": ordered[0],
        "first_decoded_pts": frames[0][0],
        "last_decoded_pts": last,
        "frames_missing_at_end": max(0, int(round((expected_last - last) * FPS))),
        "first_is_first": expected_last - last < (FPS - 0.5) / FPS,
    }


# --------------------------------------------------------------------------------------------
# The two paths


def run_push(ns, args, clip, url, extra, log_dir, name):
    """Launches `livepush push` in real time in the namespace; returns (child, launch wall time)."""
    cmd = ns.command(args.livepush, "push", clip, url, "--json", "--stats-interval", "0.5", *extra)
    launched = time.time()
    return Child(name, cmd, log_dir), launched


def wait_exit(child, deadline):
    while child.alive() and time.monotonic() < deadline:
        time.sleep(0.05)  # poll; bounded by the run's deadline
    return child.poll()


def measure_whip(ns, args, clip, log_dir):
    token = secrets.token_hex(16)
    deadline = time.monotonic() + args.run_limit
    endpoint = Child("whip-endpoint", ns.command(args.python, "-u", ENDPOINT, "--port", str(WHIP_PORT),
                                                 "--token", token), log_dir)
    if not endpoint.out.wait_for(lambda l: l.startswith("LISTENING"), 30, endpoint.alive):
        raise BenchError("the WHIP endpoint did not start: %s" % endpoint.stderr_tail())
    cli, launched = run_push(ns, args, clip, "http://127.0.0.1:%d/whip/endpoint" % WHIP_PORT,
                             ["--whip-token", token], log_dir, "livepush-whip")
    code = wait_exit(cli, deadline)
    if code is None:
        cli.stop()
        raise BenchError("WHIP: livepush still running after %d s" % args.run_limit)
    # The DELETE comes as the push ends; SUMMARY says the endpoint saw it.
    endpoint.out.wait_for(lambda l: l.startswith("SUMMARY"), 5, endpoint.alive)
    endpoint.stop()
    if code != 0:
        raise BenchError("WHIP: livepush %s: %s" % (describe_exit(code), cli.stderr_tail()))
    frames = []
    for _mono, line in endpoint.out.snapshot():
        if line.startswith("FRAME "):
            _tag, pts, arrival = line.split()
            frames.append((float(pts), float(arrival)))
    return push_timeline(cli, launched), frames, False


SHOWINFO = re.compile(r"Parsed_showinfo.*\bpts_time:\s*(-?[0-9.]+)")


def measure_rtmp(ns, args, clip, log_dir):
    deadline = time.monotonic() + args.run_limit
    nginx_dir = os.path.join(log_dir, "nginx")
    os.makedirs(nginx_dir, exist_ok=True)
    conf = os.path.join(nginx_dir, "nginx.conf")
    with open(conf, "w") as f:
        f.write(nginx_config(args.rtmp_module, nginx_dir))
    nginx = Child("nginx", ns.command(args.nginx, "-p", nginx_dir + "/", "-c", conf,
                                      "-e", os.path.join(nginx_dir, "error.log")), log_dir)
    until = time.monotonic() + 10
    while not ns.listening(RTMP_PORT):
        if not nginx.alive() or time.monotonic() > until:
            raise BenchError("nginx did not start: %s" % nginx.stderr_tail())
        time.sleep(0.05)  # readiness poll, bounded
    url = "rtmp://127.0.0.1:%d/live/latency" % RTMP_PORT
    # The subscriber plays before anything is published (nginx keeps it waiting: idle_streams
    # on), so it gets the stream from its first keyframe. -an: only pictures are measured.
    subscriber = Child("subscriber", ns.command(
        args.ffmpeg, "-hide_banner", "-nostdin", "-nostats", "-fflags", "nobuffer", "-flags", "low_delay",
        *args.subscriber_arg, "-i", url, "-an", "-vf", "showinfo", "-f", "null", "-"), log_dir)
    error_log = os.path.join(nginx_dir, "error.log")
    until = time.monotonic() + 10
    while "play: name='latency'" not in read(error_log):
        if not subscriber.alive() or time.monotonic() > until:
            raise BenchError("the subscriber did not start playing: %s" % subscriber.stderr_tail())
        time.sleep(0.05)  # readiness poll, bounded
    cli, launched = run_push(ns, args, clip, url, [], log_dir, "livepush-rtmp")
    code = wait_exit(cli, deadline)
    if code is None:
        cli.stop()
        raise BenchError("RTMP: livepush still running after %d s" % args.run_limit)
    # Everything sent has reached the subscriber a moment later; nginx keeps an idle player.
    time.sleep(2)
    subscriber.stop()
    nginx.stop()
    if code != 0:
        raise BenchError("RTMP: livepush %s: %s" % (describe_exit(code), cli.stderr_tail()))
    frames = []
    for mono, line in subscriber.err.snapshot():
        found = SHOWINFO.search(line)
        if found:
            frames.append((float(found.group(1)), wall(mono)))
    return push_timeline(cli, launched), frames, True


def nginx_config(module, directory):
    """As NginxRTMPServer.swift's, in the namespace. `live on` sends each message to the players
    as it comes (no server-side buffer); chunk_size 4096 as the push benchmark's nginx."""
    return (
        "daemon off;\nmaster_process off;\nuser root;\n"
        "error_log %s/error.log info;\npid %s/nginx.pid;\n"
        "load_module %s;\n"
        "events { worker_connections 64; }\n"
        "rtmp {\n  server {\n    listen 127.0.0.1:%d;\n    chunk_size 4096;\n"
        "    application live {\n      live on;\n      record off;\n    }\n  }\n}\n"
        % (directory, directory, module, RTMP_PORT))


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


# --------------------------------------------------------------------------------------------
# Report


def ms(value):
    return "-" if value is None else "%.0f" % (value * 1000)


def table(results, expected_frames):
    head = "%-34s %13s %9s %9s %9s %9s" % ("path", "start->1st ms", "median ms", "p95 ms", "max ms", "frames")
    lines = [head, "-" * len(head)]
    for r in results:
        f = r.get("latency", {})
        lines.append("%-34s %13s %9s %9s %9s %9s" % (
            r["path"], ms(f.get("start_to_first_decoded")), ms(f.get("median")), ms(f.get("p95")),
            ms(f.get("max")), "%s/%d" % (f.get("frames_decoded", 0), expected_frames) if "error" not in r else "FAILED"))
    lines.append("")
    for r in results:
        if "error" in r:
            lines.append("%s: %s" % (r["path"], r["error"]))
            continue
        t, f = r["timeline"], r["latency"]
        if not f.get("frames_decoded"):
            lines.append("%s: no frame decoded" % r["path"])
            continue
        lines.append("%s: launch -> t origin %s ms, -> first frame sent %s ms, first sent -> first decoded %s ms; "
                     "per frame min %s ms; decoded pts %.3f .. %.3f s (%d missing at the end%s); "
                     "push lead over its clock median %s ms, max %s ms"
                     % (r["path"], ms(t["launch_to_origin"]), ms(t["launch_to_first_frame_sent"]),
                        ms(f.get("first_sent_to_first_decoded")), ms(f.get("min")), f.get("first_decoded_pts", 0),
                        f.get("last_decoded_pts", 0), f.get("frames_missing_at_end", 0),
                        "" if f.get("first_is_first") else "; THE FIRST DECODED FRAME WAS NOT THE FIRST SENT",
                        ms(t["lead_median"]), ms(t["lead_max"])))
    return lines


# --------------------------------------------------------------------------------------------
# Main


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--livepush", default=os.path.join(REPO, ".build", "release", "livepush"))
    p.add_argument("--python", default=DEFAULT_PYTHON, help="a python with aiortc and aiohttp")
    p.add_argument("--ffmpeg", default="ffmpeg")
    p.add_argument("--ffprobe", default="ffprobe")
    p.add_argument("--nginx", default=pb.DEFAULT_NGINX)
    p.add_argument("--rtmp-module", default=pb.DEFAULT_RTMP_MODULE)
    p.add_argument("--duration", type=float, default=20, help="clip length, seconds (default 20)")
    p.add_argument("--size", default="1280x720", help="clip picture size (default 1280x720)")
    p.add_argument("--paths", default="whip,rtmp", help="which paths, in this order (default whip,rtmp)")
    p.add_argument("--run-limit", type=float, default=60, help="seconds one path may take (default 60)")
    p.add_argument("--subscriber-arg", action="append", default=[],
                   help="extra input option for the RTMP subscriber, before -i (repeatable)")
    p.add_argument("--json", help="also write the results here")
    return p.parse_args(argv)


def check_tools(args):
    if os.geteuid() != 0:
        raise BenchError("root only: the benchmark makes a network namespace")
    for tool in ("ip", "ss"):
        if shutil.which(tool) is None:
            raise BenchError("%s not found (iproute2)" % tool)
    args.livepush = os.path.abspath(args.livepush)
    if not os.access(args.livepush, os.X_OK):
        raise BenchError("no livepush at %s: `swift build -c release` or --livepush PATH" % args.livepush)
    args.ffmpeg = shutil.which(args.ffmpeg) or args.ffmpeg
    args.ffprobe = shutil.which(args.ffprobe) or args.ffprobe
    for path in (args.nginx, args.rtmp_module):
        if not os.path.exists(path):
            raise BenchError("missing %s (nginx and libnginx-mod-rtmp)" % path)
    if "whip" in args.paths and subprocess.run([args.python, "-c", "import aiortc, aiohttp"],
                                               capture_output=True).returncode != 0:
        raise BenchError("%s cannot import aiortc and aiohttp: python3 -m venv V && "
                         "V/bin/pip install aiortc aiohttp, then --python V/bin/python" % args.python)


def main(argv):
    args = parse_args(argv)
    check_tools(args)
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    clip = make_clip(args.ffmpeg, args.duration, args.size)
    expected = int(round(args.duration * FPS))
    offset = video_offset(args.ffprobe, clip)
    log_dir = os.path.join(WORK, "logs", "latency-" + time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(log_dir, exist_ok=True)
    results = []
    for path in paths:
        measure = {"whip": measure_whip, "rtmp": measure_rtmp}[path]
        label = {"whip": "WHIP -> aiortc (decoded)", "rtmp": "RTMP -> nginx -> ffmpeg (decoded)"}[path]
        result = {"path": label}
        ns = Namespace()
        log("%s: %s s real-time push ..." % (label, pb._fmt_num(args.duration)))
        try:  # each path in a namespace of its own, removed whatever happens
            ns.create()
            os.makedirs(os.path.join(log_dir, path), exist_ok=True)
            timeline, frames, pts_known = measure(ns, args, clip, os.path.join(log_dir, path))
            result["timeline"] = timeline
            result["latency"] = latency_figures(timeline, frames, expected, pts_known, offset)
        except BenchError as exc:
            result["error"] = str(exc)
            log("  FAILED: %s" % exc)
        finally:
            stop_all_children()
            ns.remove()
        results.append(result)

    out = pb.report_head("LivePush latency benchmark") + [
        "clip:      %s (%s, 25 fps, H.264 no B-frames, GOP 25, + AAC), %s s, real time"
        % (os.path.relpath(clip, REPO), args.size, pb._fmt_num(args.duration)),
        "livepush:  %s" % args.livepush,
        "network:   a network namespace of its own (veth 10.200.0.1, loopback); all parts in it",
        "sent:      a picture with pts p counts as sent at T0 + %.1f ms + p (T0: firstFramePushed; "
        "the clip's audio starts %.1f ms earlier)" % (offset * 1000, offset * 1000),
        "", ] + table(results, expected) + ["", "logs: %s" % os.path.relpath(log_dir, REPO)]
    print("\n".join(out), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"clip": clip, "duration": args.duration, "expected_frames": expected, "video_offset": offset,
                       "results": results}, f, indent=2)
    return 1 if any("error" in r or not r["latency"].get("frames_decoded") for r in results) else 0


if __name__ == "__main__":
    pb.run_script(main, on_exit=stop_all_children, interrupted="interrupted; children stopped, namespace removed")
