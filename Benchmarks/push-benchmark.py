#!/usr/bin/env python3
"""Compare `livepush push` against `ffmpeg -c copy -f flv` pushing the same file to a local
nginx-rtmp server: wall time, CPU time (user+sys) and peak RSS of the pushing process.

Stdlib only. Builds nothing: point --livepush at a release build
(`swift build -c release` -> .build/release/livepush). See Benchmarks/README.md.
"""

import argparse
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work")

CPU_RATIO_TARGET = 0.70      # livepush CPU time <= 0.7 x ffmpeg's
RSS_RATIO_TARGET = 1.00      # livepush peak RSS <= ffmpeg's (both map the same libav* libraries)

DEFAULT_NGINX = "/usr/sbin/nginx"
DEFAULT_RTMP_MODULE = "/usr/lib/nginx/modules/ngx_rtmp_module.so"


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Input file


def input_path(duration):
    return os.path.join(WORK, "bench-%ss-1280x720p30-h264-aac.mp4" % _fmt_num(duration))


def _fmt_num(x):
    return ("%g" % x).replace(".", "_")


def generate_input(ffmpeg, duration, force=False):
    """60 s (by default) 1280x720 30 fps H.264 (GOP 2 s, ~2.5 Mbps, no B-frames) + AAC MP4,
    cached in Benchmarks/work/."""
    os.makedirs(WORK, exist_ok=True)
    path = input_path(duration)
    if os.path.exists(path) and not force:
        return path
    log("generating %s (%s s of 1280x720p30, this takes a while) ..." % (os.path.relpath(path), duration))
    tmp = path + ".part.mp4"
    cmd = [
        ffmpeg, "-hide_banner", "-loglevel", "error", "-y", "-nostdin",
        "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=%s" % duration,
        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=%s" % duration,
        "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=44100:duration=%s" % duration,
        # Temporal noise keeps the encoder near the target bitrate (testsrc2 alone is too easy).
        "-filter_complex", "[0:v]noise=alls=12:allf=t[v];[1:a][2:a]amerge=inputs=2[a]",
        "-map", "[v]", "-map", "[a]",
        "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-r", "30",
        "-g", "60", "-keyint_min", "60", "-sc_threshold", "0", "-bf", "0",
        "-b:v", "2500k", "-maxrate", "2500k", "-bufsize", "5000k",
        "-c:a", "aac", "-b:a", "128k", "-ar", "44100", "-ac", "2",
        "-movflags", "+faststart", tmp,
    ]
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)
    os.replace(tmp, path)
    log("generated in %.1f s" % (time.monotonic() - t0))
    return path


def describe_input(ffprobe, path):
    try:
        out = subprocess.run(
            [ffprobe, "-v", "error", "-show_entries",
             "stream=codec_name,width,height,r_frame_rate,sample_rate,channels:format=duration,bit_rate",
             "-of", "json", path],
            check=True, capture_output=True, text=True, timeout=30).stdout
        info = json.loads(out)
    except Exception as exc:  # informational only
        return "(ffprobe failed: %s)" % exc
    parts = []
    for s in info.get("streams", []):
        if s.get("width"):
            parts.append("%s %sx%s @%s" % (s.get("codec_name"), s["width"], s["height"], s.get("r_frame_rate")))
        else:
            parts.append("%s %s Hz %sch" % (s.get("codec_name"), s.get("sample_rate"), s.get("channels")))
    fmt = info.get("format", {})
    dur = float(fmt.get("duration", 0) or 0)
    rate = float(fmt.get("bit_rate", 0) or 0) / 1e6
    size = os.path.getsize(path) / 1048576
    return "%s; %.1f s, %.2f Mbit/s, %.1f MiB" % (" + ".join(parts), dur, rate, size)


# --------------------------------------------------------------------------------------------
# nginx-rtmp


def free_loopback_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_accepts(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        try:
            s.connect(("127.0.0.1", port))
            return True
        except OSError:
            return False


class Nginx:
    """A private foreground nginx with only an RTMP `live` application (no recording, no HTTP)."""

    def __init__(self, nginx, module, app_directives=""):
        self.nginx = nginx
        self.module = module
        self.app_directives = app_directives  # extra lines for the `live` application
        self.dir = tempfile.mkdtemp(prefix="livepush-bench-nginx-")
        self.error_log = os.path.join(self.dir, "error.log")
        self.proc = None
        self.port = None

    def start(self, timeout=10.0):
        for _attempt in range(3):
            self.port = free_loopback_port()
            conf = os.path.join(self.dir, "nginx.conf")
            with open(conf, "w") as f:
                f.write(self._config())
            console = open(os.path.join(self.dir, "console.log"), "wb")
            self.proc = subprocess.Popen(
                [self.nginx, "-p", self.dir + "/", "-c", conf, "-e", self.error_log],
                stdin=subprocess.DEVNULL, stdout=console, stderr=console,
                start_new_session=True)  # Ctrl-C in the terminal must not reach it; we stop it
            console.close()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if port_accepts(self.port):
                    if self.proc.poll() is None:
                        return
                    break
                time.sleep(0.02)  # readiness poll, bounded by deadline
            exited = self.proc.poll() is not None
            self.stop()
            text = self.log_text()
            if not (exited and "Address already in use" in text):
                raise BenchError("nginx did not start on port %s:\n%s" % (self.port, text))
        raise BenchError("nginx: could not get a free port")

    def _config(self):
        user = "user root;\n" if os.geteuid() == 0 else ""
        return (
            "daemon off;\n"
            "master_process off;\n"
            "%s"
            "error_log %s info;\n"
            "pid %s/nginx.pid;\n"
            "load_module %s;\n"
            "events { worker_connections 256; }\n"
            "rtmp {\n"
            "  server {\n"
            "    listen 127.0.0.1:%d;\n"
            "    chunk_size 4096;\n"
            "    application live {\n"
            "      live on;\n"
            "      record off;\n"
            "%s"
            "    }\n"
            "  }\n"
            "}\n" % (user, self.error_log, self.dir, self.module, self.port,
                     "".join("      %s\n" % d for d in self.app_directives.splitlines() if d.strip())))

    def url(self, stream):
        return "rtmp://127.0.0.1:%d/live/%s" % (self.port, stream)

    def log_text(self):
        try:
            with open(self.error_log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)

    def cleanup(self, keep=False):
        self.stop()
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# Measured runs


class Run:
    def __init__(self, mode, tool, index, stream, cmd):
        self.mode, self.tool, self.index, self.stream, self.cmd = mode, tool, index, stream, cmd
        self.wall = self.user = self.sys = self.rss_mib = None
        self.exit = None
        self.timed_out = False
        self.published = None
        self.stderr_tail = ""

    @property
    def cpu(self):
        return None if self.user is None else self.user + self.sys

    @property
    def ok(self):
        return self.exit == 0 and not self.timed_out and self.published is not False

    def as_dict(self):
        d = {k: getattr(self, k) for k in
             ("mode", "tool", "index", "stream", "cmd", "wall", "user", "sys", "rss_mib", "exit",
              "timed_out", "published")}
        d["cpu"] = self.cpu
        d["ok"] = self.ok
        return d


def measure(run, timeout, log_dir):
    """Runs run.cmd, waits for it with os.wait4 and records wall/CPU/peak RSS of that child."""
    os.makedirs(log_dir, exist_ok=True)
    base = os.path.join(log_dir, "%s-%s-%d" % (run.mode, run.tool, run.index))
    with open(base + ".stdout", "wb") as out, open(base + ".stderr", "wb") as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(run.cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        timer = threading.Timer(timeout, _timeout_kill, args=(proc, run))
        timer.daemon = True
        timer.start()
        try:
            while True:
                try:
                    _pid, status, usage = os.wait4(proc.pid, 0)
                    break
                except InterruptedError:
                    continue
        except BaseException:  # Ctrl-C / SIGTERM: do not leave the child running
            proc.kill()
            proc.wait()
            raise
        finally:
            timer.cancel()
        run.wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # keep Popen from waiting again
    run.exit = proc.returncode
    run.user = usage.ru_utime
    run.sys = usage.ru_stime
    run.rss_mib = usage.ru_maxrss / 1024.0  # Linux: KiB
    if not run.ok:
        with open(base + ".stderr", errors="replace") as f:
            run.stderr_tail = "".join(f.readlines()[-15:])
    return run


def measure_publish(run, timeout, log_dir, nginx):
    """measure(), then whether nginx saw the run's stream published."""
    measure(run, timeout, log_dir)
    run.published = ("publish: name='%s'" % run.stream) in nginx.log_text()
    return run


def tool_arguments(doc, livepush):
    """An argument parser with the options every side-by-side benchmark takes."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--livepush", default=livepush)
    p.add_argument("--ffmpeg", default="ffmpeg")
    p.add_argument("--nginx", default=DEFAULT_NGINX)
    p.add_argument("--rtmp-module", default=DEFAULT_RTMP_MODULE)
    return p


def report_head(title):
    """The first lines of a report: title, date, host."""
    return [title,
            "date:      %s" % time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "host:      %s, %d CPUs, Python %s" % (platform.platform(), os.cpu_count() or 0, platform.python_version())]


def _timeout_kill(proc, run):
    run.timed_out = True
    try:
        proc.terminate()
        time.sleep(2)
        proc.kill()
    except OSError:
        pass


# --------------------------------------------------------------------------------------------
# Reporting


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, spec="%.2f"):
    return "-" if v is None else spec % v


def ratio(a, b):
    if a is None or b in (None, 0):
        return None
    return a / b


def report_mode(title, runs, tools, duration):
    lines = ["", "== %s ==" % title, ""]
    header = "%-4s %-9s %8s %8s %8s %8s %9s  %s" % ("run", "tool", "wall s", "cpu s", "user s", "sys s",
                                                     "RSS MiB", "result")
    lines += [header, "-" * len(header)]
    for r in runs:
        result = "ok" if r.ok else ("TIMEOUT" if r.timed_out else
                                    ("exit %s" % r.exit if r.exit != 0 else "not published"))
        lines.append("%-4d %-9s %8s %8s %8s %8s %9s  %s" % (
            r.index, r.tool, fmt(r.wall), fmt(r.cpu), fmt(r.user), fmt(r.sys), fmt(r.rss_mib, "%.1f"), result))
    lines.append("")

    med = {}
    for tool in tools:
        good = [r for r in runs if r.tool == tool and r.ok]
        med[tool] = {
            "n": len(good),
            "wall": median([r.wall for r in good]),
            "cpu": median([r.cpu for r in good]),
            "rss": median([r.rss_mib for r in good]),
        }
    header = "%-22s %8s %8s %9s %10s" % ("median (ok runs)", "wall s", "cpu s", "RSS MiB", "x realtime")
    lines += [header, "-" * len(header)]
    for tool in tools:
        m = med[tool]
        speed = ratio(duration, m["wall"])
        lines.append("%-22s %8s %8s %9s %10s" % ("%s (n=%d)" % (tool, m["n"]), fmt(m["wall"]), fmt(m["cpu"]),
                                                 fmt(m["rss"], "%.1f"), fmt(speed, "%.1f")))
    result = {"medians": med, "targets": {}}
    if "livepush" in med and "ffmpeg" in med:
        lp, ff = med["livepush"], med["ffmpeg"]
        lines.append("%-22s %8s %8s %9s" % ("livepush / ffmpeg", fmt(ratio(lp["wall"], ff["wall"])),
                                            fmt(ratio(lp["cpu"], ff["cpu"])), fmt(ratio(lp["rss"], ff["rss"]))))
    lines += ["", "targets:"]
    cpu_ratio = ratio(med.get("livepush", {}).get("cpu"), med.get("ffmpeg", {}).get("cpu"))
    rss_ratio = ratio(med.get("livepush", {}).get("rss"), med.get("ffmpeg", {}).get("rss"))
    for name, value, limit, unit in (
        ("CPU time livepush/ffmpeg <= %.2f" % CPU_RATIO_TARGET, cpu_ratio, CPU_RATIO_TARGET, "x"),
        ("peak RSS livepush/ffmpeg <= %.2f" % RSS_RATIO_TARGET, rss_ratio, RSS_RATIO_TARGET, "x"),
    ):
        verdict = "n/a" if value is None else ("PASS" if value <= limit else "MISS")
        lines.append("  %-36s %10s  %s" % (name, "-" if value is None else "%.2f%s" % (value, unit), verdict))
        result["targets"][name] = {"value": value, "limit": limit, "verdict": verdict}
    return lines, result


# --------------------------------------------------------------------------------------------
# Main


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Benchmark `livepush push` against `ffmpeg -c copy -f flv` into a local nginx-rtmp.")
    p.add_argument("--livepush", default=os.path.join(REPO, ".build", "release", "livepush"),
                   help="livepush binary (default: .build/release/livepush)")
    p.add_argument("--ffmpeg", default="ffmpeg", help="ffmpeg binary (default: ffmpeg in PATH)")
    p.add_argument("--ffprobe", default="ffprobe", help="ffprobe binary (default: ffprobe in PATH)")
    p.add_argument("--nginx", default=DEFAULT_NGINX, help="nginx binary (default: %(default)s)")
    p.add_argument("--rtmp-module", default=DEFAULT_RTMP_MODULE, help="ngx_rtmp_module.so (default: %(default)s)")
    p.add_argument("--input", help="use this media file instead of the generated one")
    p.add_argument("--duration", type=float, default=60.0,
                   help="length in seconds of the generated input (default 60; e.g. 5 for a quick check)")
    p.add_argument("--regenerate", action="store_true", help="regenerate the cached input file")
    p.add_argument("--mode", choices=("fast", "realtime", "both"), default="both",
                   help="fast: livepush --fast vs ffmpeg; realtime: livepush vs ffmpeg -re (default both)")
    p.add_argument("--fast", dest="mode", action="store_const", const="fast", help="same as --mode fast")
    p.add_argument("--realtime", dest="mode", action="store_const", const="realtime", help="same as --mode realtime")
    p.add_argument("--runs", type=int, default=3, help="runs per tool in fast mode (default 3)")
    p.add_argument("--realtime-runs", type=int, default=1,
                   help="runs per tool in real-time mode (default 1; each lasts the input's duration)")
    p.add_argument("--only", choices=("livepush", "ffmpeg"), help="run only one tool (no ratios)")
    p.add_argument("--livepush-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for `livepush push` (repeatable)")
    p.add_argument("--timeout", type=float, help="per-run timeout in seconds (default: 3 x duration + 60)")
    p.add_argument("--json", metavar="PATH", help="also write raw results as JSON to PATH")
    p.add_argument("--keep-logs", action="store_true", help="keep the nginx dir (logs) after the run")
    p.add_argument("--strict", action="store_true", help="exit 3 if any target is MISS")
    return p.parse_args(argv)


def resolve(binary):
    if os.sep in binary:
        return os.path.abspath(binary) if os.access(binary, os.X_OK) else None
    return shutil.which(binary)


def encode_comparison_setup(doc, argv):
    """The arguments and tools of a benchmark that encodes beside ffmpeg (transcode, renditions):
    (args, ffmpeg, ffprobe, livepush), with a release livepush required."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--livepush", default=os.path.join(REPO, ".build", "release", "livepush"))
    p.add_argument("--ffmpeg", default="ffmpeg")
    p.add_argument("--ffprobe", default="ffprobe")
    p.add_argument("--nginx", default=DEFAULT_NGINX)
    p.add_argument("--rtmp-module", default=DEFAULT_RTMP_MODULE)
    p.add_argument("--duration", type=float, default=20.0, help="seconds of 1280x720p30 input (default 20)")
    p.add_argument("--runs", type=int, default=3, help="runs per tool, alternating (default 3)")
    args = p.parse_args(argv)
    ffmpeg, ffprobe, livepush = resolve(args.ffmpeg), resolve(args.ffprobe), resolve(args.livepush)
    if ffmpeg is None or livepush is None:
        raise BenchError("need ffmpeg and a release livepush (swift build -c release): %s" % args.livepush)
    return args, ffmpeg, ffprobe, livepush


def run_encode_comparison(name, title, encode_line, args, ffprobe, src, tools, streams_of, command_of):
    """Starts nginx, prints the benchmark's head, then runs the tools in turn, round after round
    (`args.runs`): each run publishes the fresh streams `streams_of(counter)` with the command
    `command_of(tool, urls)`, and counts as published when nginx saw every one. Returns the runs."""
    log_dir = os.path.join(WORK, "logs", name + "-" + time.strftime("%Y%m%d-%H%M%S"))
    nginx = Nginx(args.nginx, args.rtmp_module)
    runs = []
    try:
        nginx.start()
        print("\n".join([
            title,
            "date:      %s" % time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "host:      %d CPUs" % (os.cpu_count() or 0),
            "input:     %s" % os.path.relpath(src, REPO),
            "           %s" % describe_input(ffprobe, src),
            "encode:    %s" % encode_line,
            "server:    nginx-rtmp on 127.0.0.1:%d" % nginx.port,
        ]), flush=True)
        counter = 0
        for i in range(1, args.runs + 1):
            for tool in tools:
                counter += 1
                streams = streams_of(counter)
                run = Run(name, tool.replace(",", "_"), i, streams[0], command_of(tool, [nginx.url(s) for s in streams]))
                run.tool = tool
                log("run %d/%d %s ..." % (i, args.runs, tool))
                measure(run, 10 * args.duration + 60, log_dir)
                log_text = nginx.log_text()
                run.published = all(("publish: name='%s'" % s) in log_text for s in streams)
                if not run.ok:
                    log("  FAILED: %s\n%s" % (" ".join(run.cmd), run.stderr_tail))
                runs.append(run)
    finally:
        nginx.cleanup()
    return runs


def main(argv):
    args = parse_args(argv)
    tools = ["livepush", "ffmpeg"] if args.only is None else [args.only]

    ffmpeg = resolve(args.ffmpeg)
    ffprobe = resolve(args.ffprobe)
    if ffmpeg is None:
        raise BenchError("ffmpeg not found: %s" % args.ffmpeg)
    livepush = None
    if "livepush" in tools:
        livepush = resolve(args.livepush)
        if livepush is None:
            raise BenchError("livepush binary not found or not executable: %s\n"
                             "build it with `swift build -c release`, pass --livepush PATH, "
                             "or use --only ffmpeg" % args.livepush)
    for path in (args.nginx, args.rtmp_module):
        if not os.path.exists(path):
            raise BenchError("missing %s (install nginx and libnginx-mod-rtmp)" % path)

    src = os.path.abspath(args.input) if args.input else generate_input(ffmpeg, args.duration, args.regenerate)
    duration = args.duration
    if ffprobe:
        try:
            duration = float(subprocess.run(
                [ffprobe, "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", src],
                check=True, capture_output=True, text=True, timeout=30).stdout.strip())
        except Exception:
            pass
    timeout = args.timeout or (3 * duration + 60)

    modes = {"fast": ["fast"], "realtime": ["realtime"], "both": ["fast", "realtime"]}[args.mode]
    log_dir = os.path.join(WORK, "logs", time.strftime("%Y%m%d-%H%M%S"))

    nginx = Nginx(args.nginx, args.rtmp_module)
    out = []
    results = {"input": src, "duration": duration, "modes": {}}
    all_ok = True
    any_miss = False
    try:
        nginx.start()
        out += [
            "LivePush push benchmark",
            "date:      %s" % time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "host:      %s, %d CPUs, Python %s" % (platform.platform(), os.cpu_count() or 0,
                                                   platform.python_version()),
            "input:     %s" % os.path.relpath(src, REPO),
            "           %s" % (describe_input(ffprobe, src) if ffprobe else ""),
            "livepush:  %s" % (livepush or "(skipped)"),
            "ffmpeg:    %s" % ffmpeg,
            "server:    nginx-rtmp on 127.0.0.1:%d (record off)" % nginx.port,
            "measured:  the pushing process only (wall, user+sys CPU, peak RSS via wait4)",
        ]
        print("\n".join(out), flush=True)
        counter = 0
        for mode in modes:
            n = args.runs if mode == "fast" else args.realtime_runs
            runs = []
            for i in range(1, n + 1):
                for tool in tools:  # alternate tools run by run
                    counter += 1
                    stream = "bench-%d" % counter
                    url = nginx.url(stream)
                    if tool == "livepush":
                        cmd = [livepush, "push", src, url] + (["--fast"] if mode == "fast" else []) + args.livepush_arg
                    else:
                        cmd = [ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin"] \
                            + (["-re"] if mode == "realtime" else []) + ["-i", src, "-c", "copy", "-f", "flv", url]
                    run = Run(mode, tool, i, stream, cmd)
                    log("[%s] run %d/%d %s -> %s ..." % (mode, i, n, tool, stream))
                    measure(run, timeout, log_dir)
                    run.published = ("publish: name='%s'" % stream) in nginx.log_text()
                    if not run.ok:
                        all_ok = False
                        log("  FAILED (%s): %s\n%s" % ("timeout" if run.timed_out else "exit %s" % run.exit,
                                                       " ".join(cmd), run.stderr_tail))
                    runs.append(run)
            title = ("fast mode: `livepush push --fast` vs `ffmpeg -c copy`, %d run(s) each" % n
                     if mode == "fast" else
                     "real-time mode: `livepush push` vs `ffmpeg -re -c copy`, %d run(s) each" % n)
            lines, summary = report_mode(title, runs, tools, duration)
            any_miss = any_miss or any(t["verdict"] == "MISS" for t in summary["targets"].values())
            print("\n".join(lines), flush=True)
            out += lines
            results["modes"][mode] = {"runs": [r.as_dict() for r in runs], **summary}
        print("\nper-run logs: %s" % os.path.relpath(log_dir, REPO), flush=True)
    finally:
        nginx.cleanup(keep=args.keep_logs)
        if args.keep_logs:
            log("nginx dir kept: %s" % nginx.dir)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    if not all_ok:
        return 1
    if args.strict and any_miss:
        return 3
    return 0


def _on_sigterm(_signo, _frame):
    raise KeyboardInterrupt


def run_script(main, errors=(), on_exit=None, interrupted="interrupted"):
    """The `__main__` of every script here: SIGTERM counts as Ctrl-C; exit 130 when interrupted,
    2 on an expected error (after `on_exit`, e.g. stopping child processes), else main's status."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        if on_exit:
            on_exit()
        log(interrupted)
        sys.exit(130)
    except (BenchError, subprocess.CalledProcessError) + tuple(errors) as exc:
        if on_exit:
            on_exit()
        log("error: %s" % exc)
        sys.exit(2)


if __name__ == "__main__":
    run_script(main, interrupted="interrupted; nginx stopped")
