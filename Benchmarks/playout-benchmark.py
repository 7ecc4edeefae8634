#!/usr/bin/env python3
"""A real-time playout channel with a splice every 10 s: `livepush playout SCHEDULE URL` (encode
mode, every entry encoded at the channel's format) against ffmpeg's concat demuxer pushing the
same sequence (`ffmpeg -re -f concat -i LIST -c:v libx264 -c:a aac -f flv URL`), both into the
same private nginx-rtmp, one after the other.

    Benchmarks/playout-benchmark.py [--livepush PATH] [--duration 600] [--size 1280x720]

The clips are generated once (Benchmarks/work/): four 10 s clips, each a flat colour with a tone
of its own; the sequence plays them in turn. Measured per tool: wall and CPU time (user + sys,
os.wait4) and peak RSS of the pushing process; and, in what it pushed (each tool also writes it
to a local FLV: livepush with --record, ffmpeg through its tee muxer), the A/V offset at every
splice: the time of the first picture of the new colour against the time the new tone starts
(timestamps as a player follows them). Prints a plain-text report; exit 0 when both runs
succeeded, 1 otherwise, 2 on setup errors.
"""
import importlib.util
import json
import math
import os
import shutil
import struct
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
_spec = importlib.util.spec_from_file_location("push_benchmark", os.path.join(HERE, "push-benchmark.py"))
pb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pb)

# name, colour, luma of that colour (BT.601 limited range), tone Hz
CLIPS = [("A", "red", 81, 440), ("B", "lime", 145, 660), ("X", "blue", 41, 880), ("Y", "white", 235, 1100)]
CLIP_SECONDS = 10
RATE = 8000  # audio analysis sample rate


def make_clips(ffmpeg, size):
    os.makedirs(pb.WORK, exist_ok=True)
    paths = []
    for name, colour, _luma, tone in CLIPS:
        path = os.path.join(pb.WORK, "playout-%s-%s.mp4" % (name, size))
        paths.append(path)
        if os.path.exists(path):
            continue
        pb.log("generating %s ..." % os.path.relpath(path, REPO))
        subprocess.run([ffmpeg, "-hide_banner", "-loglevel", "error", "-y", "-nostdin",
                        "-f", "lavfi", "-i", "color=c=%s:s=%s:r=25:d=%d" % (colour, size, CLIP_SECONDS),
                        "-f", "lavfi", "-i", "sine=frequency=%d:sample_rate=44100:duration=%d" % (tone, CLIP_SECONDS),
                        "-ac", "2", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast", "-g", "50",
                        "-c:a", "aac", "-shortest", path + ".part.mp4"], check=True, stdin=subprocess.DEVNULL)
        os.replace(path + ".part.mp4", path)
    return paths


def goertzel(samples, start, end, hz):
    k = 2 * math.cos(2 * math.pi * hz / RATE)
    s1 = s2 = 0.0
    for i in range(max(0, start), min(len(samples), end)):
        s0 = samples[i] + k * s1 - s2
        s2, s1 = s1, s0
    n = max(1, min(len(samples), end) - max(0, start))
    return 2 * math.sqrt(max(0.0, s1 * s1 + s2 * s2 - k * s1 * s2)) / n


def splice_offsets(ffmpeg, ffprobe, path, size):
    """(picture time, sound time) of each splice in `path`: A/V offset = sound - picture."""
    pts = subprocess.run([ffprobe, "-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time",
                          "-of", "csv=p=0", path], capture_output=True, text=True, check=True).stdout.split()
    times = sorted(float(t) for t in pts if t and t != "N/A")
    # passthrough: one picture per packet (a constant-rate output would duplicate pictures to fill
    # the small holes at splices and shift every later picture against its timestamp).
    raw = subprocess.run([ffmpeg, "-v", "error", "-nostdin", "-i", path, "-an", "-fps_mode", "passthrough",
                          "-vf", "scale=32:24", "-pix_fmt", "gray",
                          "-f", "rawvideo", "-"], capture_output=True, check=True).stdout
    frames = [raw[i:i + 768] for i in range(0, len(raw) - 767, 768)]
    pcm = subprocess.run([ffmpeg, "-v", "error", "-nostdin", "-i", path, "-vn", "-ac", "1",
                          "-af", "aresample=async=1:min_hard_comp=0.001:first_pts=0", "-ar", str(RATE), "-f", "f32le", "-"],
                         capture_output=True, check=True).stdout
    samples = struct.unpack("<%df" % (len(pcm) // 4), pcm[:len(pcm) // 4 * 4])
    def clip_of(frame):
        mean = sum(frame) / len(frame)
        return min(CLIPS, key=lambda c: abs(c[2] - mean))
    labels = [clip_of(f) for f in frames]
    offsets = []
    for i in range(1, min(len(labels), len(times))):
        if labels[i] == labels[i - 1]:
            continue
        picture, tone = times[i], labels[i][3]
        steady = goertzel(samples, int((picture + 0.15) * RATE), int((picture + 0.35) * RATE), tone)
        sound = None
        t = picture - 0.3
        while t < picture + 0.3 and steady > 0.02:
            if goertzel(samples, int(t * RATE), int((t + 0.02) * RATE), tone) > steady / 2:
                sound = t
                break
            t += 0.005
        offsets.append((picture, sound))
    return offsets


def main():
    p = pb.tool_arguments(__doc__, os.path.join(REPO, ".build", "release", "livepush"))
    p.add_argument("--duration", type=int, default=600, help="seconds of channel (default 600: 60 splices)")
    p.add_argument("--size", default="1280x720", help="picture size of the clips and the channel")
    p.add_argument("--analyze", metavar="DIR", help="only measure the splices of DIR/livepush.flv and DIR/ffmpeg.flv (a run's log directory)")
    args = p.parse_args()
    if args.analyze:
        for tool in ("livepush", "ffmpeg"):
            offsets = splice_offsets(shutil.which(args.ffmpeg), shutil.which("ffprobe"), os.path.join(args.analyze, tool + ".flv"), args.size)
            measured = [s - v for v, s in offsets if s is not None]
            print("%-10s splices %d/%d, worst |A/V| %.1f ms, mean %.1f ms (sound - picture)" % (
                tool, len(measured), len(offsets), 1000 * max(map(abs, measured), default=0),
                1000 * sum(measured) / max(1, len(measured))))
        return 0
    ffmpeg, ffprobe = shutil.which(args.ffmpeg), shutil.which("ffprobe")
    if ffmpeg is None or ffprobe is None or not os.access(args.livepush, os.X_OK):
        pb.log("need ffmpeg, ffprobe and a livepush binary (%s)" % args.livepush)
        return 2
    clips = make_clips(ffmpeg, args.size)
    entries = max(1, args.duration // CLIP_SECONDS)
    run_dir = os.path.join(pb.WORK, "logs", "playout-" + time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(run_dir, exist_ok=True)
    schedule = os.path.join(run_dir, "schedule.json")
    with open(schedule, "w") as f:
        json.dump({"content": [{"id": "e%d" % i, "source": clips[i % 4], "in": 0, "out": CLIP_SECONDS}
                               for i in range(entries)]}, f)
    concat = os.path.join(run_dir, "concat.txt")
    with open(concat, "w") as f:
        f.writelines("file '%s'\n" % clips[i % 4] for i in range(entries))

    nginx = pb.Nginx(args.nginx, args.rtmp_module)
    runs, recordings = [], {}
    try:
        nginx.start()
        for tool in ("livepush", "ffmpeg"):
            url = nginx.url("playout-" + tool)
            recordings[tool] = os.path.join(run_dir, tool + ".flv")
            if tool == "livepush":
                cmd = [args.livepush, "playout", schedule, url, "--size", args.size, "--record", recordings[tool]]
            else:
                cmd = [ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-f", "concat", "-safe", "0",
                       "-i", concat, "-map", "0:v", "-map", "0:a", "-c:v", "libx264", "-preset", "veryfast", "-g", "50",
                       "-b:v", "1500k", "-maxrate", "1500k", "-bufsize", "3000k", "-c:a", "aac", "-b:a", "128k",
                       "-f", "tee", "[f=flv:onfail=ignore]%s|[f=flv]%s" % (url, recordings[tool])]
            run = pb.Run("playout", tool, 1, "playout-" + tool, cmd)
            pb.log("%s: %d entries, %d s in real time ..." % (tool, entries, entries * CLIP_SECONDS))
            runs.append(pb.measure_publish(run, entries * CLIP_SECONDS * 2 + 120, run_dir, nginx))
    finally:
        nginx.cleanup()

    lines = pb.report_head("LivePush playout benchmark") + [
             "channel:   %d entries of %d s (%s, 25 fps, colour + tone each), a splice every %d s, real time" % (
                 entries, CLIP_SECONDS, args.size, CLIP_SECONDS),
             "livepush:  livepush playout SCHEDULE URL --size %s --record FILE (encode mode)" % args.size,
             "ffmpeg:    ffmpeg -re -f concat -i LIST -c:v libx264 -preset veryfast -b:v 1500k -c:a aac -b:a 128k -f tee [flv URL|FILE]",
             "",
             "%-10s %9s %8s %8s %8s %9s %9s %10s %10s  %s" % ("tool", "wall s", "user s", "sys s", "cpu s", "cpu %", "RSS MiB",
                                                            "splices", "worst A/V", "result")]
    ok = True
    for run in runs:
        offsets = splice_offsets(ffmpeg, ffprobe, recordings[run.tool], args.size) if run.ok else []
        measured = [abs(s - v) for v, s in offsets if s is not None]
        worst = "%.1f ms" % (1000 * max(measured)) if measured else "n/a"
        result = "ok" if run.ok else ("TIMEOUT" if run.timed_out else "FAILED exit %s" % run.exit)
        ok = ok and run.ok
        share = 100 * run.cpu / run.wall if run.ok and run.wall else None
        lines.append("%-10s %9s %8s %8s %8s %9s %9s %10s %10s  %s" % (
            run.tool, pb.fmt(run.wall), pb.fmt(run.user), pb.fmt(run.sys), pb.fmt(run.cpu), pb.fmt(share, "%.1f"),
            pb.fmt(run.rss_mib, "%.1f"), "%d/%d" % (len(measured), len(offsets)), worst, result))
        if not run.ok:
            lines += ["", "--- %s stderr tail ---" % run.tool, run.stderr_tail]
    lines += ["", "worst A/V: the largest |sound - picture| over the splices where the new tone was found."]
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    pb.run_script(lambda argv: main())
