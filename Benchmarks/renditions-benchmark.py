#!/usr/bin/env python3
"""Renditions: one transcoded input, two renditions. An HEVC 1280x720p30 source goes out as H.264
1280x720 at 2500 kbit/s to one output and as H.264 640x360 at 800 kbit/s to another, libx264
veryfast, `--fast`, into the same local nginx-rtmp:

    livepush push SRC URL0 URL1 --fast --preset veryfast --target-bitrate 2500 --gop 2
                  --no-adaptive-bitrate --output-video 1=640x360@800
    ffmpeg -i SRC -filter_complex "[0:v]split=2[a][b];[b]scale=640:360[c]"
           -map [a] ... -f flv URL0   -map [c] ... -f flv URL1

Target (issue 34): livepush's CPU time and peak RSS <= 1.0 x ffmpeg's. ffmpeg decodes the HEVC
once and scales the decoded pictures for the second encode; a pipeline that decodes its own
720p encode again for the second rendition pays for a second decode.

Reuses push-benchmark.py's nginx and measurement. Stdlib only.
"""

import importlib.util
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("push_benchmark", os.path.join(HERE, "push-benchmark.py"))
pb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pb)

CPU_RATIO_TARGET = 1.0
RSS_RATIO_TARGET = 1.0
GOP_SECONDS = 2
FPS = 30


def hevc_input(ffmpeg, duration):
    """The push benchmark's H.264 input made HEVC (libx265, cached in Benchmarks/work/)."""
    h264 = pb.generate_input(ffmpeg, duration)
    path = os.path.join(pb.WORK, "input-hevc-%ss.mp4" % pb._fmt_num(duration))
    if os.path.exists(path):
        return path
    pb.log("generating %s (HEVC, this takes a while) ..." % os.path.relpath(path))
    tmp = path + ".part.mp4"
    subprocess.run([ffmpeg, "-hide_banner", "-loglevel", "error", "-y", "-nostdin", "-i", h264,
                    "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error:keyint=60:bframes=0",
                    "-b:v", "2500k", "-tag:v", "hvc1", "-c:a", "copy", "-movflags", "+faststart", tmp],
                   check=True, stdin=subprocess.DEVNULL)
    os.replace(tmp, path)
    return path


def commands(tool, livepush, ffmpeg, src, urls):
    if tool == "livepush":
        return [livepush, "push", src, urls[0], urls[1], "--fast", "--preset", "veryfast",
                "--target-bitrate", "2500", "--gop", str(GOP_SECONDS), "--no-adaptive-bitrate",
                "--audio-bitrate", "128", "--output-video", "1=640x360@800"]
    gop = str(GOP_SECONDS * FPS)

    def encode(label, kbps):
        return ["-map", label, "-map", "0:a", "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency",
                "-pix_fmt", "yuv420p", "-b:v", "%dk" % kbps, "-maxrate", "%dk" % kbps, "-bufsize", "%dk" % kbps,
                "-g", gop, "-bf", "0", "-c:a", "aac", "-b:a", "128k", "-f", "flv"]
    return ([ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-i", src,
             "-filter_complex", "[0:v]split=2[a][b];[b]scale=640:360[c]"]
            + encode("[a]", 2500) + [urls[0]] + encode("[c]", 800) + [urls[1]])


def main(argv):
    args, ffmpeg, ffprobe, livepush = pb.encode_comparison_setup(__doc__, argv)
    src = hevc_input(ffmpeg, args.duration)
    tools = ["livepush", "ffmpeg"]
    runs = pb.run_encode_comparison(
        "renditions", "LivePush renditions benchmark",
        "H.264 libx264 veryfast, 1280x720 at 2500 kbit/s + 640x360 at 800 kbit/s, GOP %d s, AAC 128k" % GOP_SECONDS,
        args, ffprobe, src, tools, lambda counter: ["renditions-%d-720p" % counter, "renditions-%d-360p" % counter],
        lambda tool, urls: commands(tool, livepush, ffmpeg, src, urls))

    med = {}
    lines = ["", "%-18s %4s %8s %8s %9s" % ("median (ok runs)", "n", "wall s", "cpu s", "RSS MiB"), "-" * 52]
    for tool in tools:
        good = [r for r in runs if r.tool == tool and r.ok]
        med[tool] = {"wall": pb.median([r.wall for r in good]), "cpu": pb.median([r.cpu for r in good]),
                     "rss": pb.median([r.rss_mib for r in good])}
        m = med[tool]
        lines.append("%-18s %4d %8s %8s %9s" % (tool, len(good), pb.fmt(m["wall"]), pb.fmt(m["cpu"]), pb.fmt(m["rss"], "%.1f")))
    lines.append("per run: " + ", ".join("%s %s cpu %.2f s rss %.0f MiB" % (r.tool, r.index, r.cpu, r.rss_mib)
                                         for r in runs if r.ok))
    cpu = pb.ratio(med["livepush"]["cpu"], med["ffmpeg"]["cpu"])
    rss = pb.ratio(med["livepush"]["rss"], med["ffmpeg"]["rss"])
    verdict = lambda value, limit: "n/a" if value is None else ("PASS" if value <= limit else "MISS")
    lines += ["", "targets:",
              "  %-44s %8s  %s" % ("CPU livepush / ffmpeg <= %.2f" % CPU_RATIO_TARGET, pb.fmt(cpu), verdict(cpu, CPU_RATIO_TARGET)),
              "  %-44s %8s  %s" % ("RSS livepush / ffmpeg <= %.2f" % RSS_RATIO_TARGET, pb.fmt(rss), verdict(rss, RSS_RATIO_TARGET))]
    print("\n".join(lines), flush=True)
    return 0 if all(r.ok for r in runs) else 1


if __name__ == "__main__":
    pb.run_script(main)
