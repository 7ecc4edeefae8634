#!/usr/bin/env python3
"""Loudness CPU per channel: `livepush push --fast` with and without `--loudness`, beside
ffmpeg's `loudnorm` on the same work.

The same generated source (pink noise, about -8 LUFS, 48 kHz stereo, with 320x240 H.264 that
both tools copy) is pushed/converted four ways, and user+sys CPU of each child is read from
wait4's rusage:

  livepush, audio re-encoded (--source-volume 100: decode + AAC encode, no loudness stage)
  livepush --loudness -23 (the same + the loudness stage)
  ffmpeg -c:v copy -c:a aac (decode + AAC encode)
  ffmpeg -c:v copy -af loudnorm=I=-23:TP=-1 -c:a aac (the same + loudnorm)

The stage's cost is the difference of the first two; loudnorm's the difference of the last two.
Both are given as CPU milliseconds per second of sound and as a share of one core in real
time. Python 3 standard library only; needs ffmpeg and a release build:

    swift build -c release && Benchmarks/loudness-benchmark.py [--duration 60] [--runs 3]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def cpu_of(command, cwd):
    """User+sys CPU seconds of one child (and its children it waited for), and its exit status."""
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if process.returncode != 0:
        sys.exit(f"{command[0]} failed ({process.returncode}): {stderr[-2000:]}")
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--livepush", default=".build/release/livepush")
    parser.add_argument("--ffmpeg", default=shutil.which("ffmpeg") or "ffmpeg")
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    livepush = os.path.abspath(args.livepush)
    if not os.access(livepush, os.X_OK):
        sys.exit(f"{livepush} not found: swift build -c release first")
    with tempfile.TemporaryDirectory(prefix="loudness-bench-") as work:
        source = os.path.join(work, "source.mp4")
        d = args.duration
        subprocess.run([args.ffmpeg, "-v", "error", "-nostdin", "-y",
                        "-f", "lavfi", "-i", f"testsrc2=size=320x240:rate=25:d={d}",
                        "-f", "lavfi", "-i", f"anoisesrc=color=pink:amplitude=1:seed=2:sample_rate=48000:d={d}",
                        "-filter_complex", "[1:a]volume=4dB,alimiter=limit=0.97:level=false,pan=stereo|c0=c0|c1=c0[a]",
                        "-map", "0:v", "-map", "[a]", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50",
                        "-c:a", "aac", "-b:a", "160k", "-t", str(d), source], check=True)
        out = os.path.join(work, "out")
        os.makedirs(out)
        ways = {
            "livepush re-encode": [livepush, "push", source, "--fast", "--source-volume", "100", "--receiver-dir", out],
            "livepush --loudness -23": [livepush, "push", source, "--fast", "--loudness", "-23", "--receiver-dir", out],
            "ffmpeg aac": [args.ffmpeg, "-v", "error", "-nostdin", "-y", "-i", source, "-c:v", "copy", "-c:a", "aac",
                           "-b:a", "128k", "-f", "flv", os.path.join(out, "f.flv")],
            "ffmpeg loudnorm + aac": [args.ffmpeg, "-v", "error", "-nostdin", "-y", "-i", source, "-c:v", "copy",
                                      "-af", "loudnorm=I=-23:TP=-1", "-ar", "48000", "-c:a", "aac", "-b:a", "128k",
                                      "-f", "flv", os.path.join(out, "g.flv")],
        }
        medians = {}
        for name, command in ways.items():
            times = [cpu_of(command, work) for _ in range(args.runs)]
            medians[name] = statistics.median(times)
            print(f"{name:26s} user+sys CPU: median {medians[name]:.3f} s of {args.runs} runs "
                  f"({', '.join(f'{t:.3f}' for t in times)})")
        stage = medians["livepush --loudness -23"] - medians["livepush re-encode"]
        loudnorm = medians["ffmpeg loudnorm + aac"] - medians["ffmpeg aac"]
        for name, cost in [("LivePush loudness stage", stage), ("ffmpeg loudnorm", loudnorm)]:
            print(f"{name:26s} {cost * 1000 / d:6.2f} ms CPU per s of sound "
                  f"({cost / d * 100:.2f} % of one core per real-time channel)")


if __name__ == "__main__":
    main()
