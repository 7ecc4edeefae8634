#!/usr/bin/env python3
"""One text overlay on a 720p push: `livepush push --fast --transcode --overlay '{text}'` against
`ffmpeg -vf drawtext` with the same font (fontconfig's sans-serif: DejaVu Sans), size, box, encoder,
bitrate and GOP, into the same local nginx-rtmp, each also without the text. Reports CPU seconds side
by side and what the text costs each (CPU with the text minus CPU without).

Target (issue 37): the overlay costs livepush less CPU than drawtext costs ffmpeg on the same work.

Reuses push-benchmark.py's input generation, nginx and measurement. Stdlib only.
"""

import importlib.util
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("push_benchmark", os.path.join(HERE, "push-benchmark.py"))
pb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pb)

BITRATE_KBPS = 2500
GOP_SECONDS = 2
FPS = 30
TEXT = "LIVE 42"
SIZE = 48
X, Y = 60, 600
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def commands(tool, livepush, ffmpeg, src, url):
    gop = str(GOP_SECONDS * FPS)
    overlay = json.dumps({"id": "bug", "text": TEXT, "x": X, "y": Y, "size": SIZE, "background": "#000000B0"})
    livepush_base = [livepush, "push", src, url, "--fast", "--transcode", "--preset", "veryfast",
                     "--target-bitrate", str(BITRATE_KBPS), "--gop", str(GOP_SECONDS), "--no-adaptive-bitrate",
                     "--audio-bitrate", "128"]
    ffmpeg_base = [ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-i", src]
    ffmpeg_enc = ["-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-pix_fmt", "yuv420p",
                  "-b:v", "%dk" % BITRATE_KBPS, "-maxrate", "%dk" % BITRATE_KBPS, "-bufsize", "%dk" % BITRATE_KBPS,
                  "-g", gop, "-bf", "0", "-c:a", "aac", "-b:a", "128k", "-f", "flv", url]
    drawtext = ("drawtext=fontfile=%s:text='%s':x=%d:y=%d:fontsize=%d:fontcolor=white:box=1:boxcolor=black@0.69:boxborderw=%d"
                % (FONT, TEXT, X, Y, SIZE, SIZE // 4))
    return {
        "livepush": livepush_base,
        "livepush+overlay": livepush_base + ["--overlay", overlay],
        "ffmpeg": ffmpeg_base + ffmpeg_enc,
        "ffmpeg+drawtext": ffmpeg_base + ["-vf", drawtext] + ffmpeg_enc,
    }[tool]


def main(argv):
    args, ffmpeg, ffprobe, livepush = pb.encode_comparison_setup(__doc__, argv)
    src = pb.generate_input(ffmpeg, args.duration)
    tools = ["livepush", "livepush+overlay", "ffmpeg", "ffmpeg+drawtext"]
    runs = pb.run_encode_comparison(
        "overlay", "LivePush overlay benchmark",
        "1280x720 %d fps, H.264 libx264 veryfast, %d kbit/s, GOP %d s; text %r at %d px with a box" % (FPS, BITRATE_KBPS, GOP_SECONDS, TEXT, SIZE),
        args, ffprobe, src, tools, lambda counter: ["overlay-%d" % counter],
        lambda tool, urls: commands(tool, livepush, ffmpeg, src, urls[0]))

    med = {}
    lines = ["", "%-18s %4s %8s %8s %9s" % ("median (ok runs)", "n", "wall s", "cpu s", "RSS MiB"), "-" * 52]
    for tool in tools:
        good = [r for r in runs if r.tool == tool and r.ok]
        med[tool] = {"wall": pb.median([r.wall for r in good]), "cpu": pb.median([r.cpu for r in good]),
                     "rss": pb.median([r.rss_mib for r in good])}
        m = med[tool]
        lines.append("%-18s %4d %8s %8s %9s" % (tool, len(good), pb.fmt(m["wall"]), pb.fmt(m["cpu"]), pb.fmt(m["rss"], "%.1f")))
    diff = lambda a, b: None if med[a]["cpu"] is None or med[b]["cpu"] is None else med[a]["cpu"] - med[b]["cpu"]
    ours, theirs = diff("livepush+overlay", "livepush"), diff("ffmpeg+drawtext", "ffmpeg")
    lines += ["", "the text's CPU cost (with minus without, median):"]
    lines.append("  livepush overlay  %8s s" % pb.fmt(ours))
    lines.append("  ffmpeg drawtext   %8s s" % pb.fmt(theirs))
    verdict = "n/a" if ours is None or theirs is None else ("PASS" if ours < theirs else "MISS")
    lines.append("  livepush+overlay total %s s vs ffmpeg+drawtext %s s; overlay costs less than drawtext: %s"
                 % (pb.fmt(med["livepush+overlay"]["cpu"]), pb.fmt(med["ffmpeg+drawtext"]["cpu"]), verdict))
    print("\n".join(lines), flush=True)
    return 0 if all(r.ok for r in runs) else 1


if __name__ == "__main__":
    pb.run_script(main)
