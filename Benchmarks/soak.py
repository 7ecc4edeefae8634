#!/usr/bin/env python3
"""Soak test: `livepush push --loop forever` in real time through `livepush loopback` (a
fault-injecting relay) into a private nginx-rtmp, with a random fault every ~20 s. Checks that
nothing crashes, that the pusher's RSS does not grow, that every lost connection is restored,
that Ctrl-C stops the pusher cleanly, and that nginx's last recording is well-formed.

Stdlib only; reuses push-benchmark.py (nginx). Builds nothing: point --livepush at a build.
Not run in CI (10 minutes by default); the short CI variant is
Tests/LivePushIntegrationTests/SoakTests.swift. See Benchmarks/README.md ("Soak").
"""

import argparse
import importlib.util
import json
import os
import platform
import random
import signal
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

from children import Child, describe_exit, stop_all_children  # noqa: E402  (next to this script)

_spec = importlib.util.spec_from_file_location("push_benchmark", os.path.join(HERE, "push-benchmark.py"))
pb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pb)

WORK = pb.WORK
log = pb.log

RSS_GROWTH_TARGET_MIB = 5.0   # pusher VmRSS, end - start (after the warm-up)
RSS_SAMPLE_PERIOD_S = 5.0
STREAM = "soak"

# The fault catalogue: (label, --fault specs, seconds until the loopback is restarted clean or
# None). The loopback CLI takes its faults at start only, so every fault is injected by
# restarting the loopback on the same port with new --fault specs: the restart drops the
# pusher's connection (a fault of its own) and the connection-scoped rules (`conn=1` is the
# first connection to the new loopback, i.e. the pusher's reconnect) hit what follows.
# Rules that would hit every later connection are lifted by a clean restart after a while.
FAULTS = [
    ("restart", [], None),
    ("reset-after=1s", ["reset-after=1s@conn=1"], None),
    ("reset-after-bytes=200k", ["reset-after-bytes=200k@conn=1"], None),
    ("stall@after=1s", ["stall@after=1s,conn=1"], 20.0),  # buffers hide a stall for ~14 s
    ("throttle=40k", ["throttle=40k"], 5.0),
    ("close-after-publish", ["close-after-publish@conn=1"], None),
    ("refuse@conn=1-2", ["refuse@conn=1-2"], None),
    ("latency=300ms", ["latency=300ms"], 6.0),
]



class SoakError(Exception):
    pass


# --------------------------------------------------------------------------------------------
# nginx (recording on) and the loopback


class RecordingNginx(pb.Nginx):
    """push-benchmark's private nginx, with `record all` into <dir>/rec (one file per stream,
    overwritten by each publish) and a `.done` marker once nginx has closed a recording."""

    def __init__(self, nginx, module):
        super().__init__(nginx, module)
        self.rec_dir = os.path.join(self.dir, "rec")
        os.makedirs(self.rec_dir, exist_ok=True)

    def _config(self):
        conf = super()._config()
        return conf.replace(
            "      record off;\n",
            "      record all;\n"
            "      record_path %s;\n"
            "      record_unique off;\n"
            "      exec_record_done /usr/bin/touch $path.done;\n" % self.rec_dir)

    def recording(self, stream):
        return os.path.join(self.rec_dir, stream + ".flv")


class Loopback:
    """`livepush loopback --listen PORT --upstream nginx` that is restarted to change faults."""

    def __init__(self, livepush, port, upstream_port, log_dir):
        self.livepush = livepush
        self.port = port
        self.upstream = "127.0.0.1:%d" % upstream_port
        self.log_dir = log_dir
        self.child = None
        self.generation = 0
        self.crashes = []          # (time, exit description, stderr tail)
        self.faults = []

    def start(self, faults, attempts=25):
        self.generation += 1
        cmd = [self.livepush, "loopback", "--listen", str(self.port), "--upstream", self.upstream]
        for spec in faults:
            cmd += ["--fault", spec]
        last = ""
        for _ in range(attempts):
            child = Child("loopback", cmd, self.log_dir)
            ok = child.out.wait_for(lambda line: line.startswith("loopback listening"), 10.0, child.alive)
            if ok and child.alive():
                self.child = child
                self.faults = list(faults)
                return
            child.stop(grace=2.0)
            last = " | ".join(child.stderr_tail())
            time.sleep(0.2)  # the old listener is going away; try the port again
        raise SoakError("livepush loopback did not start on port %d: %s" % (self.port, last))

    def restart(self, faults):
        self.stop()
        self.start(faults)

    def check(self):
        """Notes an exit we did not ask for (a crash) and starts the loopback again."""
        if self.child is not None and not self.child.alive() and not self.child.stopping:
            self.crashes.append((time.monotonic(), describe_exit(self.child.exit), self.child.stderr_tail()))
            log("  loopback exited unexpectedly (%s); restarting it" % describe_exit(self.child.exit))
            self.child.stop()
            self.child = None
            self.start(self.faults)

    def stop(self):
        if self.child is None:
            return
        code, _sig = self.child.stop()
        if code not in (0, None) and code != -signal.SIGINT:
            # Ctrl-C ends the loopback with 0; anything else on the way out is worth reporting.
            self.crashes.append((time.monotonic(), "on stop: " + describe_exit(code), self.child.stderr_tail()))
        self.child = None

    def fault_lines(self):
        return self.child.out.snapshot() if self.child else []


# --------------------------------------------------------------------------------------------
# The pusher's events and memory


def vm_rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def pusher_events(pusher):
    """[(arrival time, event dict)] of the pusher's JSON lines."""
    out = []
    for t, line in pusher.out.snapshot():
        if not line.startswith("{"):
            continue
        try:
            out.append((t, json.loads(line)))
        except ValueError:
            pass
    return out


def recovery_state(events):
    """(pending, losses, successes, failures, recoveries [(lost t, recovered t)])."""
    pending = None
    losses = successes = failures = 0
    recoveries = []
    for t, ev in events:
        name = ev.get("event")
        if name == "connectionLost":
            losses += 1
            if pending is None:
                pending = t
        elif name == "reconnectSucceeded":
            successes += 1
            if pending is not None:
                recoveries.append((pending, t))
                pending = None
        elif name == "reconnectFailed":
            failures += 1
    return pending, losses, successes, failures, recoveries


# --------------------------------------------------------------------------------------------
# Recording check


def probe_recording(ffprobe, path):
    """Returns (ok, description)."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return False, "missing or empty: %s" % path
    try:
        out = subprocess.run(
            [ffprobe, "-v", "error", "-show_entries",
             "stream=index,codec_type,codec_name:packet=stream_index,codec_type,dts_time,flags",
             "-of", "json", path],
            check=True, capture_output=True, text=True, timeout=120).stdout
        info = json.loads(out)
    except Exception as exc:
        return False, "ffprobe failed: %s" % exc
    packets = info.get("packets", [])
    video = [p for p in packets if p.get("codec_type") == "video"]
    audio = [p for p in packets if p.get("codec_type") == "audio"]
    problems = []
    if not video:
        problems.append("no video")
    elif "K" not in video[0].get("flags", ""):
        problems.append("first video frame is not a keyframe")
    for index in sorted({p.get("stream_index") for p in packets}):
        last = None
        for p in packets:
            if p.get("stream_index") != index:
                continue
            dts = p.get("dts_time")
            if dts is None:
                continue
            dts = float(dts)
            if last is not None and dts < last:
                problems.append("stream %s: dts goes backwards (%.3f after %.3f)" % (index, dts, last))
                break
            last = dts
    span = 0.0
    times = [float(p["dts_time"]) for p in packets if p.get("dts_time") is not None]
    if times:
        span = max(times) - min(times)
    codecs = "+".join(s.get("codec_name", "?") for s in info.get("streams", []))
    desc = "%s, %d video / %d audio packets, %.1f s, %.1f MiB" % (
        codecs, len(video), len(audio), span, os.path.getsize(path) / 1048576)
    if problems:
        return False, desc + "; " + "; ".join(problems)
    return True, desc + "; first video frame a keyframe, dts monotonic per stream"


# --------------------------------------------------------------------------------------------
# Main


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Soak `livepush push --loop forever` with a random loopback fault every ~INTERVAL s.")
    p.add_argument("--livepush", help="livepush binary (default: .build/release/livepush, else .build/debug/livepush)")
    p.add_argument("--duration", type=float, default=600.0, help="seconds of soak after the first publish (default 600)")
    p.add_argument("--interval", type=float, default=20.0, help="mean seconds between faults (default 20, jittered +-25%%)")
    p.add_argument("--warmup", type=float, default=30.0, help="seconds before the RSS baseline sample (default 30)")
    p.add_argument("--seed", type=int, help="RNG seed for the fault order and timing (default: random, printed)")
    p.add_argument("--input", default=os.path.join(REPO, "Media", "sample-h264-aac.mp4"), help="media file to loop")
    p.add_argument("--ffprobe", default="ffprobe", help="ffprobe binary (default: ffprobe in PATH)")
    p.add_argument("--nginx", default=pb.DEFAULT_NGINX, help="nginx binary (default: %(default)s)")
    p.add_argument("--rtmp-module", default=pb.DEFAULT_RTMP_MODULE, help="ngx_rtmp_module.so (default: %(default)s)")
    p.add_argument("--keep-logs", action="store_true", help="keep the nginx dir (config, log, recording)")
    args = p.parse_args(argv)
    if args.duration <= 0 or args.interval <= 0:
        p.error("--duration and --interval must be positive")
    return args


def find_livepush(path):
    candidates = [path] if path else [os.path.join(REPO, ".build", "release", "livepush"),
                                      os.path.join(REPO, ".build", "debug", "livepush")]
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise SoakError("livepush binary not found (%s); build it with `swift build -c release` or pass --livepush"
                    % ", ".join(os.path.relpath(c, REPO) if os.path.isabs(c) else c for c in candidates))


class Verdicts:
    def __init__(self):
        self.items = []

    def add(self, name, ok, value):
        self.items.append((name, ok, value))

    def lines(self):
        return ["  %-32s %-42s %s" % (name, value, "n/a" if ok is None else ("PASS" if ok else "MISS"))
                for name, ok, value in self.items]

    @property
    def all_pass(self):
        return all(ok is not False for _n, ok, _v in self.items)


def main(argv):
    args = parse_args(argv)
    livepush = find_livepush(args.livepush)
    ffprobe = pb.resolve(args.ffprobe)
    media = os.path.abspath(args.input)
    if not os.path.exists(media):
        raise SoakError("missing input %s" % media)
    for path in (args.nginx, args.rtmp_module):
        if not os.path.exists(path):
            raise SoakError("missing %s (install nginx and libnginx-mod-rtmp)" % path)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    rng = random.Random(seed)
    log_dir = os.path.join(WORK, "logs", "soak-" + time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(log_dir, exist_ok=True)

    nginx = RecordingNginx(args.nginx, args.rtmp_module)
    loopback = None
    pusher = None
    try:
        nginx.start()
        loopback = Loopback(livepush, pb.free_loopback_port(), nginx.port, log_dir)
        loopback.start([])
        url = "rtmp://127.0.0.1:%d/live/%s" % (loopback.port, STREAM)
        push_cmd = [livepush, "push", media, url, "--loop", "forever", "--json",
                    "--retry-interval", "500", "--retry-count", "100", "--send-timeout", "2000"]
        header = [
            "LivePush soak",
            "date:      %s" % time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "host:      %s, %d CPUs, Python %s" % (platform.platform(), os.cpu_count() or 0, platform.python_version()),
            "livepush:  %s" % os.path.relpath(livepush, REPO) if livepush.startswith(REPO) else "livepush:  %s" % livepush,
            "push:      livepush push %s rtmp://127.0.0.1:%d/live/%s --loop forever --json"
            % (os.path.relpath(media, REPO), loopback.port, STREAM),
            "           --retry-interval 500 --retry-count 100 --send-timeout 2000",
            "path:      pusher -> livepush loopback 127.0.0.1:%d (restarted per fault) -> nginx-rtmp 127.0.0.1:%d (record all)"
            % (loopback.port, nginx.port),
            "plan:      %g s, a fault every ~%g s (+-25%%), seed %d; RSS every %g s, baseline after %g s"
            % (args.duration, args.interval, seed, RSS_SAMPLE_PERIOD_S, args.warmup),
        ]
        print("\n".join(header), flush=True)

        pusher = Child("pusher", push_cmd, log_dir)
        if not pusher.out.wait_for(lambda l: '"event":"pushStarted"' in l, 20.0, pusher.alive):
            raise SoakError("the pusher did not start publishing: %s (%s)"
                            % (describe_exit(pusher.poll()), " | ".join(pusher.stderr_tail())))
        start = time.monotonic()
        end = start + args.duration
        log("publishing; soaking for %g s (logs in %s)" % (args.duration, os.path.relpath(log_dir, REPO)))

        def jitter():
            return args.interval * rng.uniform(0.75, 1.25)

        bag = []
        injected = []            # [time, label, clean restart time or None]
        rss = []                 # (time, KiB)
        pusher_crash = None
        next_fault = start + jitter()
        clean_at = None
        next_sample = start
        while True:
            now = time.monotonic()
            if pusher.poll() is not None:
                pusher_crash = (now, describe_exit(pusher.exit), pusher.stderr_tail())
                log("  pusher exited unexpectedly: %s" % describe_exit(pusher.exit))
                break
            loopback.check()
            if now >= next_sample:
                kib = vm_rss_kib(pusher.pid)
                if kib is not None:
                    rss.append((now, kib))
                next_sample += RSS_SAMPLE_PERIOD_S
            if now >= end:
                break
            if clean_at is not None and now >= clean_at:
                log("  %6.1f s  clean restart" % (now - start))
                injected[-1][2] = time.monotonic()   # before: the restart itself drops the connection
                loopback.restart([])
                clean_at = None
            elif now >= next_fault:
                if not bag:
                    bag = list(FAULTS)
                    rng.shuffle(bag)
                label, specs, clean_after = bag.pop()
                log("  %6.1f s  fault %s" % (now - start, label))
                injected.append([time.monotonic(), label, None])
                loopback.restart(specs)
                t = time.monotonic()
                clean_at = t + clean_after if clean_after else None
                next_fault = max(t + jitter(), (clean_at or t) + 2.0)
            time.sleep(0.1)  # the scenario's clock; events are read by threads

        # Wind down: lift any fault, let the pusher recover, then Ctrl-C it.
        stop_status = None
        stopped_event = False
        settle_ok = False
        if pusher_crash is None:
            if clean_at is not None:   # a fault still in force: lift it
                log("  %6.1f s  clean restart (end)" % (time.monotonic() - start))
                injected[-1][2] = time.monotonic()
                loopback.restart([])
            deadline = time.monotonic() + 60.0
            while time.monotonic() < deadline and pusher.alive():
                if recovery_state(pusher_events(pusher))[0] is None:
                    settle_ok = True
                    break
                time.sleep(0.2)
            # One more statistics period, so that the stream is flowing when we stop it.
            pusher.out.wait_for(lambda l: '"event":"stats"' in l, 5.0, pusher.alive, since=pusher.out.count())
            if not pusher.alive():
                pusher_crash = (time.monotonic(), describe_exit(pusher.exit), pusher.stderr_tail())
            else:
                t_int = time.monotonic()
                code, used = pusher.stop(signal.SIGINT, grace=15.0)
                stop_status = (code, used, time.monotonic() - t_int)
                stopped_event = any(ev.get("event") == "stopped" for _t, ev in pusher_events(pusher))
        elif pusher is not None:
            pusher.stop()

        # The last recording: nginx touches <file>.done once it has closed it.
        rec_path = nginx.recording(STREAM)
        done = False
        deadline = time.monotonic() + 15.0
        while time.monotonic() < deadline:
            if os.path.exists(rec_path + ".done"):
                done = True
                break
            time.sleep(0.1)
        loopback.stop()
        rec_ok, rec_desc = (None, "ffprobe not found") if ffprobe is None else probe_recording(ffprobe, rec_path)
        if not done:
            rec_desc += " (nginx never reported it closed)"
            rec_ok = False

        # ---------------------------------------------------------------- report
        events = pusher_events(pusher)
        pending, losses, successes, failures, recoveries = recovery_state(events)
        counts = {}
        for _t, ev in events:
            counts[ev.get("event")] = counts.get(ev.get("event"), 0) + 1
        final_stats = next((ev.get("stats") for _t, ev in reversed(events) if ev.get("event") == "stopped"), None)

        out = ["", "== faults ==", ""]
        hdr = "%-3s %7s  %-24s %8s %5s %5s %7s  %s" % ("#", "t s", "fault", "clean s", "lost", "recon", "tries", "restored after (s)")
        out += [hdr, "-" * len(hdr)]
        bounds = [f[0] for f in injected] + [float("inf")]
        for i, (t, label, clean) in enumerate(injected):
            window = [(et, ev) for et, ev in events if bounds[i] <= et < bounds[i + 1]]
            lost = sum(1 for _t, ev in window if ev.get("event") == "connectionLost")
            ok = sum(1 for _t, ev in window if ev.get("event") == "reconnectSucceeded")
            tries = sum(1 for _t, ev in window if ev.get("event") == "reconnectStarted")
            restored = ["%.1f" % (b - a) for a, b in recoveries if bounds[i] <= a < bounds[i + 1]]
            out.append("%-3d %7.1f  %-24s %8s %5d %5d %7d  %s" % (
                i + 1, t - start, label, "-" if clean is None else "%.1f" % (clean - start), lost, ok, tries,
                ", ".join(restored) or "-"))
        gaps = [b - a for a, b in recoveries]
        out += ["",
                "pusher events: %s" % ", ".join("%s %d" % (k, counts[k]) for k in sorted(counts) if k not in ("stats", "stateChanged")),
                "restore time (connectionLost -> reconnectSucceeded): n=%d, median %s s, max %s s" % (
                    len(gaps), "%.2f" % statistics.median(gaps) if gaps else "-", "%.2f" % max(gaps) if gaps else "-")]
        if final_stats:
            dropped = final_stats.get("droppedFrames") or {}
            out.append("final stats: %.1f s of media sent (%d loops), %d video + %d audio frames, %.1f MiB; "
                       "dropped %s" % (
                           final_stats.get("mediaTimeSent", 0), final_stats.get("loopsCompleted", 0),
                           final_stats.get("videoFramesSent", 0), final_stats.get("audioFramesSent", 0),
                           final_stats.get("bytesSent", 0) / 1048576,
                           ", ".join("%s %d" % (k, v) for k, v in dropped.items()) or "-"))

        out += ["", "== memory (pusher VmRSS, /proc/PID/status) ==", ""]
        base = next(((t, k) for t, k in rss if t - start >= args.warmup), None)
        growth = None
        if rss:
            line = []
            for t, k in rss:
                line.append("%d:%.1f" % (round(t - start), k / 1024))
            for i in range(0, len(line), 10):
                out.append("  " + "  ".join(line[i:i + 10]))
        if base is not None:
            last = rss[-1]
            peak = max(k for _t, k in rss)
            growth = (last[1] - base[1]) / 1024
            after = [(t, k) for t, k in rss if t >= base[0]]
            slope = None
            if len(after) >= 3:
                xs = [t for t, _k in after]
                ys = [k / 1024 for _t, k in after]
                mx, my = statistics.fmean(xs), statistics.fmean(ys)
                den = sum((x - mx) ** 2 for x in xs)
                slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den * 60 if den else None
            out += ["",
                    "start %.1f MiB at %.0f s, end %.1f MiB at %.0f s, max %.1f MiB, growth %+.2f MiB%s" % (
                        base[1] / 1024, base[0] - start, last[1] / 1024, last[0] - start, peak / 1024, growth,
                        "" if slope is None else " (trend %+.2f MiB/min)" % slope)]
        else:
            out += ["", "no sample after the %g s warm-up (run longer)" % args.warmup]

        out += ["", "== stop and recording ==", ""]
        if stop_status:
            code, used, took = stop_status
            out.append("Ctrl-C (SIGINT): %s after %.2f s%s; stopped event %s" % (
                describe_exit(code), took,
                "" if used == signal.SIGINT else " (needed %s)" % signal.Signals(used).name if used else "",
                "seen" if stopped_event else "MISSING"))
        out.append("nginx recording %s: %s" % (os.path.basename(rec_path), rec_desc))

        verdicts = Verdicts()
        crash_list = ([("pusher",) + pusher_crash[1:]] if pusher_crash else []) + \
            [("loopback", c[1], c[2]) for c in loopback.crashes]
        verdicts.add("zero crashes", not crash_list,
                     "none" if not crash_list else "; ".join("%s %s" % (c[0], c[1]) for c in crash_list))
        verdicts.add("RSS growth < %g MiB" % RSS_GROWTH_TARGET_MIB, None if growth is None else growth < RSS_GROWTH_TARGET_MIB,
                     "-" if growth is None else "%+.2f MiB" % growth)
        recovered = pending is None and failures == 0 and settle_ok and losses > 0
        verdicts.add("all faults recovered", recovered,
                     "%d lost, %d restored, %d reconnectFailed%s" % (
                         losses, successes, failures, "" if pending is None else ", one still lost"))
        clean_stop = stop_status is not None and stop_status[0] == 0 and stop_status[1] == signal.SIGINT and stopped_event
        verdicts.add("clean stop on SIGINT (exit 0)", clean_stop,
                     "-" if stop_status is None else describe_exit(stop_status[0]))
        verdicts.add("last recording well-formed", rec_ok, "ffprobe" if rec_ok is not None else "skipped")
        out += ["", "== verdict ==", ""] + verdicts.lines()
        for c in crash_list:
            out.append("  %s: %s; stderr: %s" % (c[0], c[1], " | ".join(c[2]) or "-"))
        out.append("")
        out.append("logs: %s" % os.path.relpath(log_dir, REPO))
        print("\n".join(out), flush=True)
        return 0 if verdicts.all_pass else 1
    finally:
        stop_all_children()
        nginx.cleanup(keep=args.keep_logs)
        if args.keep_logs:
            log("nginx dir kept: %s" % nginx.dir)


if __name__ == "__main__":
    pb.run_script(main, errors=(SoakError,), on_exit=stop_all_children, interrupted="interrupted; every process stopped")
