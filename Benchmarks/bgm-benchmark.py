#!/usr/bin/env python3
"""CPU cost of mixing background music into a real-time 720p push: `livepush push FILE URL
--bgm MUSIC` against `ffmpeg -re -i FILE -i MUSIC -filter_complex amix -c:v copy -c:a aac -f flv
URL`, both into the same private nginx-rtmp. Video is stream-copied, audio decoded, mixed with
the music and re-encoded to AAC (128 kbit/s) by both.

    Benchmarks/bgm-benchmark.py [--livepush PATH] [--runs N] [--duration S] [--strict]

Runs alternate (livepush, ffmpeg, livepush, ...). Measured: the pushing process only, wall
time and CPU time (user + sys from os.wait4's rusage) and peak RSS. Target: livepush's median
CPU time <= 1.0 x ffmpeg's. The input and nginx handling come from push-benchmark.py (same
directory); the music is a generated 30 s MP3 (two tones with a slow tremolo), cached in
Benchmarks/work/. Prints a plain-text report on stdout; progress on stderr. Exit 0 when every
run succeeded, 1 when one failed, 2 on setup errors, 3 with --strict when the target is missed.
"""
import importlib.util
import os
import shutil
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CPU_RATIO_TARGET = 1.0

_spec = importlib.util.spec_from_file_location("push_benchmark", os.path.join(HERE, "push-benchmark.py"))
pb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pb)


def generate_music(ffmpeg):
    os.makedirs(pb.WORK, exist_ok=True)
    path = os.path.join(pb.WORK, "bgm-30s-two-tones.mp3")
    if os.path.exists(path):
        return path
    pb.log("generating %s ..." % os.path.relpath(path))
    subprocess.run([
        ffmpeg, "-hide_banner", "-loglevel", "error", "-y", "-nostdin",
        "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100:duration=30",
        "-f", "lavfi", "-i", "sine=frequency=1500:sample_rate=44100:duration=30",
        "-filter_complex", "[0:a][1:a]amerge=inputs=2,tremolo=f=0.5:d=0.5[a]", "-map", "[a]",
        "-c:a", "libmp3lame", "-b:a", "192k", "-ac", "2", path + ".part.mp3",
    ], check=True, stdin=subprocess.DEVNULL)
    os.replace(path + ".part.mp3", path)
    return path


def commands(tool, livepush, ffmpeg, video, music, url):
    if tool == "livepush":
        return [livepush, "push", video, url, "--bgm", music, "--bgm-volume", "50", "--audio-bitrate", "128"]
    return [ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-i", video, "-i", music,
            "-filter_complex", "[0:a][1:a]amix=inputs=2:duration=first[a]", "-map", "0:v", "-map", "[a]",
            "-c:v", "copy", "-c:a", "aac", "-b:a", "128k", "-f", "flv", url]


def main():
    p = pb.tool_arguments(__doc__, os.path.join(REPO, ".build", "release", "livepush"))
    p.add_argument("--runs", type=int, default=3, help="runs per tool (default 3)")
    p.add_argument("--duration", type=float, default=20, help="seconds of 720p input (default 20)")
    p.add_argument("--strict", action="store_true", help="exit 3 when the CPU target is missed")
    args = p.parse_args()

    ffmpeg = shutil.which(args.ffmpeg)
    if ffmpeg is None or not os.access(args.livepush, os.X_OK):
        pb.log("need ffmpeg and a livepush binary (%s)" % args.livepush)
        return 2
    video = pb.generate_input(ffmpeg, args.duration)
    music = generate_music(ffmpeg)
    nginx = pb.Nginx(args.nginx, args.rtmp_module)
    runs = []
    try:
        nginx.start()
        log_dir = os.path.join(pb.WORK, "logs", "bgm-" + time.strftime("%Y%m%d-%H%M%S"))
        timeout = 3 * args.duration + 60
        for i in range(1, args.runs + 1):
            for tool in ("livepush", "ffmpeg"):
                stream = "bgm-%s-%d" % (tool, i)
                run = pb.Run("realtime-bgm", tool, i, stream,
                             commands(tool, args.livepush, ffmpeg, video, music, nginx.url(stream)))
                pb.log("run %d/%d %s ..." % (i, args.runs, tool))
                runs.append(pb.measure_publish(run, timeout, log_dir, nginx))
    finally:
        nginx.cleanup()

    lines = pb.report_head("LivePush BGM mixing benchmark") + [
             "input:     %s" % os.path.relpath(video, REPO),
             "           %s" % pb.describe_input("ffprobe", video),
             "music:     %s (30 s MP3, 2 tones, tremolo)" % os.path.relpath(music, REPO),
             "livepush:  %s push FILE URL --bgm MUSIC --bgm-volume 50 --audio-bitrate 128" % os.path.relpath(args.livepush, REPO),
             "ffmpeg:    ffmpeg -re -i FILE -i MUSIC -filter_complex amix=inputs=2:duration=first "
             "-map 0:v -map [a] -c:v copy -c:a aac -b:a 128k -f flv URL",
             "measured:  the pushing process only (wall, user+sys CPU, peak RSS via wait4)", "",
             "%-10s %3s %8s %8s %8s %8s %8s  %s" % ("tool", "run", "wall s", "user s", "sys s", "cpu s", "RSS MiB", "result")]
    for r in runs:
        result = "ok" if r.ok else ("TIMEOUT" if r.timed_out else "FAILED exit %s" % r.exit)
        lines.append("%-10s %3d %8s %8s %8s %8s %8s  %s" % (r.tool, r.index, pb.fmt(r.wall), pb.fmt(r.user), pb.fmt(r.sys),
                                                          pb.fmt(r.cpu), pb.fmt(r.rss_mib, "%.1f"), result))
    med = {t: pb.median([r.cpu for r in runs if r.tool == t and r.ok]) for t in ("livepush", "ffmpeg")}
    rss = {t: pb.median([r.rss_mib for r in runs if r.tool == t and r.ok]) for t in ("livepush", "ffmpeg")}
    ratio = med["livepush"] / med["ffmpeg"] if med["livepush"] and med["ffmpeg"] else None
    lines += ["", "median cpu s: livepush %s, ffmpeg %s; peak RSS MiB: livepush %s, ffmpeg %s" % (
        pb.fmt(med["livepush"]), pb.fmt(med["ffmpeg"]), pb.fmt(rss["livepush"], "%.1f"), pb.fmt(rss["ffmpeg"], "%.1f")),
        "CPU time livepush/ffmpeg <= %.2f x: %s %s" % (CPU_RATIO_TARGET, pb.fmt(ratio),
                                                        "PASS" if ratio is not None and ratio <= CPU_RATIO_TARGET else "MISS")]
    for r in runs:
        if not r.ok:
            lines += ["", "--- %s run %d stderr tail ---" % (r.tool, r.index), r.stderr_tail]
    print("\n".join(lines))
    if any(not r.ok for r in runs):
        return 1
    if args.strict and (ratio is None or ratio > CPU_RATIO_TARGET):
        return 3
    return 0


if __name__ == "__main__":
    pb.run_script(lambda argv: main())
