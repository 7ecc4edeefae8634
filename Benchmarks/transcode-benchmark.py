#!/usr/bin/env python3
"""Transcode push: `livepush push --fast --transcode` (plain, and with the beauty filter) against
`ffmpeg -c:v libx264 -preset veryfast -tune zerolatency` with the same bitrate and GOP, into the
same local nginx-rtmp. Reports encoded frames per second (frames / wall time), CPU and RSS.

Targets (issue 5): livepush fps >= 1.1 x ffmpeg's (decode, filter and encode overlap on 2
cores); the beauty filter costs <= 15% over the unfiltered run (for scale, ffmpeg's
`hqdn3d,eq` is also measured).

Reuses push-benchmark.py's input generation, nginx and measurement. Stdlib only.
"""

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("push_benchmark", os.path.join(HERE, "push-benchmark.py"))
pb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pb)

FPS_RATIO_TARGET = 1.10
BEAUTY_OVERHEAD_TARGET = 0.15

BITRATE_KBPS = 2500
GOP_SECONDS = 2
FPS = 30


def commands(tool, livepush, ffmpeg, src, url):
    gop = str(GOP_SECONDS * FPS)
    livepush_base = [livepush, "push", src, url, "--fast", "--transcode", "--preset", "veryfast",
                     "--target-bitrate", str(BITRATE_KBPS), "--gop", str(GOP_SECONDS), "--no-adaptive-bitrate",
                     "--audio-bitrate", "128"]
    ffmpeg_base = [ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-i", src]
    ffmpeg_enc = ["-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-pix_fmt", "yuv420p",
                  "-b:v", "%dk" % BITRATE_KBPS, "-maxrate", "%dk" % BITRATE_KBPS, "-bufsize", "%dk" % BITRATE_KBPS,
                  "-g", gop, "-bf", "0", "-c:a", "aac", "-b:a", "128k", "-f", "flv", url]
    return {
        "livepush": livepush_base,
        "livepush+beauty": livepush_base + ["--filter", "beauty=0.6"],
        "ffmpeg": ffmpeg_base + ffmpeg_enc,
        "ffmpeg+hqdn3d,eq": ffmpeg_base + ["-vf", "hqdn3d,eq=brightness=0.03"] + ffmpeg_enc,
    }[tool]


def main(argv):
    args, ffmpeg, ffprobe, livepush = pb.encode_comparison_setup(__doc__, argv)
    src = pb.generate_input(ffmpeg, args.duration)
    frames = int(round(args.duration * FPS))
    tools = ["livepush", "ffmpeg", "livepush+beauty", "ffmpeg+hqdn3d,eq"]
    runs = pb.run_encode_comparison(
        "transcode", "LivePush transcode benchmark",
        "H.264 libx264 veryfast zerolatency, %d kbit/s CBR-ish, GOP %d s, AAC 128k" % (BITRATE_KBPS, GOP_SECONDS),
        args, ffprobe, src, tools, lambda counter: ["transcode-%d" % counter],
        lambda tool, urls: commands(tool, livepush, ffmpeg, src, urls[0]))

    med = {}
    lines = ["", "%-18s %4s %8s %8s %8s %9s" % ("median (ok runs)", "n", "wall s", "fps", "cpu s", "RSS MiB"), "-" * 60]
    for tool in tools:
        good = [r for r in runs if r.tool == tool and r.ok]
        wall = pb.median([r.wall for r in good])
        med[tool] = {"wall": wall, "fps": frames / wall if wall else None,
                     "cpu": pb.median([r.cpu for r in good]), "rss": pb.median([r.rss_mib for r in good])}
        m = med[tool]
        lines.append("%-18s %4d %8s %8s %8s %9s" % (tool, len(good), pb.fmt(m["wall"]), pb.fmt(m["fps"], "%.1f"),
                                                  pb.fmt(m["cpu"]), pb.fmt(m["rss"], "%.1f")))
    fps_ratio = pb.ratio(med["livepush"]["fps"], med["ffmpeg"]["fps"])
    beauty = pb.ratio(med["livepush+beauty"]["wall"], med["livepush"]["wall"])
    ffmpeg_filters = pb.ratio(med["ffmpeg+hqdn3d,eq"]["wall"], med["ffmpeg"]["wall"])
    lines += ["", "targets:"]
    verdict = lambda ok: "n/a" if ok is None else ("PASS" if ok else "MISS")
    lines.append("  %-44s %8s  %s" % ("fps livepush / ffmpeg >= %.2f" % FPS_RATIO_TARGET, pb.fmt(fps_ratio),
                                      verdict(None if fps_ratio is None else fps_ratio >= FPS_RATIO_TARGET)))
    overhead = None if beauty is None else beauty - 1
    lines.append("  %-44s %7s%%  %s" % ("beauty filter overhead <= %d%%" % (BEAUTY_OVERHEAD_TARGET * 100),
                                        pb.fmt(None if overhead is None else overhead * 100, "%.1f"),
                                        verdict(None if overhead is None else overhead <= BEAUTY_OVERHEAD_TARGET)))
    lines.append("  %-44s %7s%%  (for scale)" % ("ffmpeg hqdn3d,eq overhead",
                                                pb.fmt(None if ffmpeg_filters is None else (ffmpeg_filters - 1) * 100, "%.1f")))
    print("\n".join(lines), flush=True)
    return 0 if all(r.ok for r in runs) else 1


if __name__ == "__main__":
    pb.run_script(main)
