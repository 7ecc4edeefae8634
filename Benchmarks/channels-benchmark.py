#!/usr/bin/env python3
"""Many channels in one process: `livepush channels` with N real-time, stream-copied, looping
channels (a 320x240, ~300 kbit/s file) to one nginx-rtmp, beside as many `ffmpeg -re -c copy
-f flv` processes as the comparison asks for, in the same run: CPU (share of one core), RSS
(total, and per extra channel against one channel), threads, pacing (each channel's media time
against the wall clock, from /metrics), and how many channels /metrics reports pushing.

Stdlib only. Builds nothing: point --livepush at a release build
(`swift build -c release`, exactly as the README builds). See Benchmarks/README.md.
"""

import importlib.util
import json
import os
import shutil
import subprocess
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
_spec = importlib.util.spec_from_file_location("push_benchmark", os.path.join(HERE, "push-benchmark.py"))
pb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pb)


class BigNginx(pb.Nginx):
    """The benchmarks' nginx with room for hundreds of publishers."""

    def _config(self):
        return super()._config().replace("worker_connections 256;", "worker_connections 4096;")


def make_input(ffmpeg):
    path = os.path.join(pb.WORK, "channel-320x240-300k.mp4")
    if not os.path.exists(path):
        os.makedirs(pb.WORK, exist_ok=True)
        subprocess.run([ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
                        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=20",
                        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=20",
                        "-c:v", "libx264", "-preset", "veryfast", "-b:v", "250k", "-maxrate", "250k", "-bufsize", "500k",
                        "-g", "50", "-c:a", "aac", "-b:a", "48k", "-ac", "2", "-shortest", path], check=True)
    return path


def proc_figures(pid):
    """(cpu seconds, RSS MiB, threads) of a process, from /proc."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = threads = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            if line.startswith("Threads:"):
                threads = int(line.split()[1])
    return cpu, rss, threads


def thread_roles(pid):
    """{thread name: count} of a process, from /proc/PID/task/*/comm."""
    roles = {}
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, task)) as f:
                name = f.read().strip()
        except OSError:
            continue
        roles[name] = roles.get(name, 0) + 1
    return roles


def scrape(url):
    """{(name, frozenset(labels)): value} from a Prometheus text page (simple lines only)."""
    samples = {}
    with urllib.request.urlopen(url, timeout=10) as response:
        for line in response.read().decode().splitlines():
            if not line or line.startswith("#"):
                continue
            head, value = line.rsplit(" ", 1)
            name, labels = (head.split("{", 1) + [""])[:2]
            pairs = frozenset(tuple(p.split("=", 1)) for p in labels.rstrip("}").replace('"', "").split(",") if "=" in p)
            samples[(name, pairs)] = float(value)
    return samples


def leads(samples):
    """Per channel: media time sent minus the time its push has run, read in one snapshot."""
    return {dict(labels)["channel"]: v for (name, labels), v in samples.items() if name == "livepush_channel_lead_seconds"}


class MachineWatch:
    """What the machine did to every process during a window: a canary thread that only sleeps 5 ms at a
    time (how much later than asked it woke: a stall of the whole machine shows here as in any process),
    and the host's steal time (a VM's CPUs taken by other guests), from /proc/stat."""

    def __init__(self):
        self.worst_oversleep = 0.0
        self.stalls_over_50ms = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _cpu_ticks():
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        return sum(fields[:8]), fields[7]  # total (user..steal), steal

    def _run(self):
        while not self._stop.is_set():
            before = time.monotonic()
            time.sleep(0.005)
            late = time.monotonic() - before - 0.005
            self.worst_oversleep = max(self.worst_oversleep, late)
            if late > 0.05:
                self.stalls_over_50ms += 1

    def start(self):
        self._start = self._cpu_ticks()
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()
        total, steal = (b - a for a, b in zip(self._start, self._cpu_ticks()))
        self.steal_share = steal / total if total else 0.0


def late_packets(samples, where):
    """Packets later than each bound (seconds, as labelled), summed over the channels: as the producers handed them
    to the outputs (where="channel"), or as the outputs wrote them to their sockets (where="output")."""
    totals = {}
    for (name, labels), v in samples.items():
        if name == "livepush_%s_late_packets_total" % where:
            bound = dict(labels)["later_than"]
            totals[bound] = totals.get(bound, 0) + v
    return totals


def run_livepush(args, media, nginx, channels, run_dir):
    """One `livepush channels` process with `channels` channels: settle, then measure for --seconds."""
    port = pb.free_loopback_port()
    config = os.path.join(run_dir, "channels-%d.json" % channels)
    with open(config, "w") as f:
        # The media is read from its own folder: a configuration reads only inside its media root.
        json.dump({"control": "127.0.0.1:%d" % port, "mediaRoot": os.path.dirname(os.path.abspath(media)),
                   "channels": [{"id": "c%d" % i, "input": media, "loop": "forever", "outputs": [nginx.url("lp%d-%d" % (channels, i))]}
                                for i in range(channels)]}, f)
    log_file = open(os.path.join(run_dir, "livepush-%d.log" % channels), "wb")
    proc = subprocess.Popen([args.livepush, "channels", config, "--log-format", "json"], stdin=subprocess.DEVNULL,
                            stdout=log_file, stderr=log_file)
    metrics = "http://127.0.0.1:%d/metrics" % port
    try:
        deadline = time.monotonic() + 60
        pushing = 0
        while time.monotonic() < deadline:  # readiness poll, bounded
            try:
                states = scrape(metrics)
                pushing = int(states.get(("livepush_channels", frozenset({("state", "pushing")})), 0))
                if pushing == channels:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        time.sleep(args.settle)
        cpu0, _, _ = proc_figures(proc.pid)
        t0 = time.monotonic()
        watch = MachineWatch().start()
        start_samples = scrape(metrics)
        first = leads(start_samples)
        peak_rss = peak_threads = 0
        lags = {c: [] for c in first}  # per channel: its lead over the wall clock, each second
        slowest_scrape = 0.0
        while time.monotonic() - t0 < args.seconds:
            time.sleep(1)
            _, rss, threads = proc_figures(proc.pid)
            peak_rss, peak_threads = max(peak_rss, rss), max(peak_threads, threads)
            # The lead is read with the media time in the channel's own snapshot: how long the
            # scrape of 200 channels takes does not enter it.
            before = time.monotonic()
            sample = leads(scrape(metrics))
            slowest_scrape = max(slowest_scrape, time.monotonic() - before)
            for c, values in lags.items():
                if c in sample:
                    values.append(sample[c])
        cpu1, rss, threads = proc_figures(proc.pid)
        watch.stop()
        roles = thread_roles(proc.pid)
        wall = time.monotonic() - t0
        last_samples = scrape(metrics)
        pushing = int(last_samples.get(("livepush_channels", frozenset({("state", "pushing")})), 0))
        # Pacing: how far each channel's lead strays from its own steady lead (the median of its
        # samples), worst sample of the worst channel. The producer's batches lead by up to 20 ms.
        drift = [max(abs(v - sorted(values)[len(values) // 2]) for v in values) for values in lags.values() if values]
        # Lateness: every packet, counted by the channel as it hands it over (not sampled).
        late, worst_late = {}, {}
        for where in ("channel", "output"):
            before, after = late_packets(start_samples, where), late_packets(last_samples, where)
            late[where] = {bound: int(after.get(bound, 0) - before.get(bound, 0)) for bound in after}
            worst_late[where] = 1000 * max((v for (name, _), v in last_samples.items()
                                            if name == "livepush_%s_pacing_lateness_worst_seconds" % where), default=float("nan"))
        sent = sum(v for (name, _), v in last_samples.items()
                   if name in ("livepush_channel_video_frames_sent_total", "livepush_channel_audio_frames_sent_total"))
        with open(os.path.join(run_dir, "leads-%d.json" % channels), "w") as f:
            json.dump(lags, f)
        return {"tool": "livepush", "streams": channels, "processes": 1, "cpu_share": (cpu1 - cpu0) / wall,
                "rss_mib": peak_rss, "threads": peak_threads, "pushing": pushing,
                "worst_pacing_ms": 1000 * max(drift, default=float("nan")), "ok": proc.poll() is None,
                "slowest_scrape_ms": 1000 * slowest_scrape, "thread_roles": roles,
                "late_packets": late, "worst_late_ms": worst_late, "frames_sent": int(sent),
                "steal": watch.steal_share, "canary_ms": 1000 * watch.worst_oversleep, "canary_stalls": watch.stalls_over_50ms}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log_file.close()


def run_ffmpeg(args, media, nginx, processes, run_dir):
    """`processes` x `ffmpeg -re -stream_loop -1 -i FILE -c copy -f flv URL`, measured together."""
    procs = []
    logs = open(os.path.join(run_dir, "ffmpeg-%d.log" % processes), "wb")
    try:
        for i in range(processes):
            procs.append(subprocess.Popen([args.ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-stream_loop", "-1",
                                           "-i", media, "-c", "copy", "-f", "flv", nginx.url("ff%d-%d" % (processes, i))],
                                          stdin=subprocess.DEVNULL, stdout=logs, stderr=logs))
        time.sleep(args.settle + 2)
        cpu0 = sum(proc_figures(p.pid)[0] for p in procs)
        t0 = time.monotonic()
        peak_rss = 0
        while time.monotonic() - t0 < args.seconds:
            time.sleep(1)
            peak_rss = max(peak_rss, sum(proc_figures(p.pid)[1] for p in procs))
        cpu1 = sum(proc_figures(p.pid)[0] for p in procs)
        wall = time.monotonic() - t0
        threads = sum(proc_figures(p.pid)[2] for p in procs)
        alive = sum(1 for p in procs if p.poll() is None)
        return {"tool": "ffmpeg", "streams": processes, "processes": processes, "cpu_share": (cpu1 - cpu0) / wall,
                "rss_mib": peak_rss, "threads": threads, "pushing": alive, "worst_pacing_ms": float("nan"), "ok": alive == processes}
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        logs.close()


def main(argv):
    p = pb.tool_arguments(__doc__, os.path.join(REPO, ".build", "release", "livepush"))
    p.add_argument("--channels", type=int, default=200, help="channels in the big livepush run (default 200)")
    p.add_argument("--ffmpeg-processes", type=int, default=50, help="ffmpeg processes side by side (default 50)")
    p.add_argument("--seconds", type=int, default=60, help="measured window per run (default 60)")
    p.add_argument("--settle", type=int, default=10, help="seconds after all publish before measuring (default 10)")
    args = p.parse_args(argv)
    ffmpeg = shutil.which(args.ffmpeg)
    if ffmpeg is None or not os.access(args.livepush, os.X_OK):
        pb.log("need ffmpeg and a livepush binary (%s)" % args.livepush)
        return 2
    media = make_input(ffmpeg)
    run_dir = os.path.join(pb.WORK, "logs", "channels-" + time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(run_dir, exist_ok=True)
    nginx = BigNginx(args.nginx, args.rtmp_module)
    results = []
    try:
        nginx.start()
        for channels in (1, args.channels):
            pb.log("livepush channels: %d channel(s) ..." % channels)
            results.append(run_livepush(args, media, nginx, channels, run_dir))
        pb.log("ffmpeg: %d processes ..." % args.ffmpeg_processes)
        results.append(run_ffmpeg(args, media, nginx, args.ffmpeg_processes, run_dir))
    finally:
        nginx.cleanup()
    one, many = results[0], results[1]
    per_extra = (many["rss_mib"] - one["rss_mib"]) / max(1, many["streams"] - 1)
    lines = pb.report_head("LivePush channels benchmark") + [
        "input:     %s (320x240 25 fps H.264 ~250 kbit/s + AAC 48 kbit/s), looped, stream copy, real time" % os.path.basename(media),
        "livepush:  livepush channels CONFIG.json (one process; N channels, one nginx output each)",
        "ffmpeg:    N x ffmpeg -re -stream_loop -1 -i FILE -c copy -f flv URL (one process per stream)",
        "window:    %d s measured after %d s settling" % (args.seconds, args.settle), "",
        "%-9s %8s %10s %10s %9s %8s %8s %14s  %s" % ("tool", "streams", "processes", "CPU cores", "RSS MiB", "threads",
                                                     "pushing", "lead swing", "result")]
    for r in results:
        lines.append("%-9s %8d %10d %10.3f %9.1f %8d %8d %14s  %s" % (
            r["tool"], r["streams"], r["processes"], r["cpu_share"], r["rss_mib"], r["threads"], r["pushing"],
            "-" if r["worst_pacing_ms"] != r["worst_pacing_ms"] else "%.1f ms" % r["worst_pacing_ms"], "ok" if r["ok"] else "FAILED"))
    ff = results[2]
    lines += ["",
              "livepush: %.2f MiB RSS per extra channel; %.4f cores per channel; %.2f threads per channel" % (
                  per_extra, many["cpu_share"] / many["streams"], many["threads"] / many["streams"]),
              "          threads by name at %d channels: %s" % (many["streams"], ", ".join(
                  "%s %d" % kv for kv in sorted(many["thread_roles"].items(), key=lambda kv: -kv[1]))),
              "          packets late in the window (of %d frames sent since start), against the output clock:" % many["frames_sent"]] + [
              "            %-34s > 20 ms %d, > 50 ms %d, > 100 ms %d; latest since start %.1f ms" % (
                  what, many["late_packets"][where].get("0.02", 0), many["late_packets"][where].get("0.05", 0),
                  many["late_packets"][where].get("0.1", 0), many["worst_late_ms"][where])
              for where, what in (("channel", "handed to the outputs (producers):"), ("output", "written to the sockets (outputs):"))] + [
              "          the machine meanwhile: %.0f%% of its CPU time stolen by the host; a canary thread sleeping 5 ms at a time "
              "woke up to %.1f ms late (%d times > 50 ms)" % (100 * many["steal"], many["canary_ms"], many["canary_stalls"]),
              "          slowest /metrics scrape: %.0f ms (1 channel), %.0f ms (%d channels)" % (
                  one["slowest_scrape_ms"], many["slowest_scrape_ms"], many["streams"]),
              "ffmpeg:   %.2f MiB RSS per stream; %.4f cores per stream" % (ff["rss_mib"] / ff["streams"], ff["cpu_share"] / ff["streams"]),
              "targets:  200 channels below 1 core: %s; < 2 MiB per extra channel: %s; no packet written more than 50 ms late: %s; "
              "all pushing: %s" % (many["cpu_share"] < 1, per_extra < 2, many["late_packets"]["output"].get("0.05", 1) == 0,
                                   many["pushing"] == many["streams"])]
    print("\n".join(lines))
    with open(os.path.join(run_dir, "report.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    pb.run_script(main)
