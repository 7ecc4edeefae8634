#!/usr/bin/env bash
# Regenerates the test samples in this directory with ffmpeg.
#
# Output is deterministic for a given ffmpeg build: every encoder runs single-threaded,
# muxers and encoders are in bit-exact mode, and metadata/creation times are stripped.
# Usage: Media/generate.sh            (writes next to this script)
#        Media/generate.sh OUTDIR     (writes somewhere else, e.g. to compare)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-$HERE}"
mkdir -p "$OUT"

DUR=4            # seconds per sample
FPS=25
SIZE=640x360
RATE=44100

# Shared input and output options.
FF=(ffmpeg -hide_banner -loglevel error -y -nostdin -threads 1)
# Synthetic video: test pattern with a moving element and frame counter.
VIDEO_IN=(-f lavfi -i "testsrc2=size=${SIZE}:rate=${FPS}:duration=${DUR}")
# Synthetic audio: 440 Hz on the left, 660 Hz on the right, merged into one stereo stream.
AUDIO_IN=(-f lavfi -i "sine=frequency=440:sample_rate=${RATE}:duration=${DUR}"
          -f lavfi -i "sine=frequency=660:sample_rate=${RATE}:duration=${DUR}")
AUDIO_MERGE=(-filter_complex "[1:a][2:a]amerge=inputs=2[a]")
BITEXACT=(-map_metadata -1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact)

# H.264: 1 s GOP (keyframe every 25 frames, no scene-cut keyframes), ~400 kbps, yuv420p.
H264_COMMON=(-c:v libx264 -preset medium -pix_fmt yuv420p -r "$FPS"
             -g "$FPS" -keyint_min "$FPS" -sc_threshold 0
             -b:v 400k -maxrate 400k -bufsize 800k
             -x264-params "threads=1:lookahead_threads=1:sliced_threads=0")
AAC=(-c:a aac -b:a 96k -ar "$RATE" -ac 2)

echo "generate: sample-h264-aac.mp4"
"${FF[@]}" "${VIDEO_IN[@]}" "${AUDIO_IN[@]}" "${AUDIO_MERGE[@]}" \
  -map 0:v -map "[a]" "${H264_COMMON[@]}" -profile:v main -bf 0 "${AAC[@]}" \
  "${BITEXACT[@]}" -movflags +faststart "$OUT/sample-h264-aac.mp4"

echo "generate: sample-bframes.mp4"
"${FF[@]}" "${VIDEO_IN[@]}" "${AUDIO_IN[@]}" "${AUDIO_MERGE[@]}" \
  -map 0:v -map "[a]" "${H264_COMMON[@]}" -profile:v high -bf 2 -b_strategy 0 "${AAC[@]}" \
  "${BITEXACT[@]}" -movflags +faststart "$OUT/sample-bframes.mp4"

echo "generate: sample.ts"
"${FF[@]}" "${VIDEO_IN[@]}" "${AUDIO_IN[@]}" "${AUDIO_MERGE[@]}" \
  -map 0:v -map "[a]" "${H264_COMMON[@]}" -profile:v main -bf 0 "${AAC[@]}" \
  "${BITEXACT[@]}" -f mpegts "$OUT/sample.ts"

echo "generate: sample-transcode.mkv"
# VP9 video + Opus audio (48 kHz): neither can go into FLV/RTMP without transcoding.
"${FF[@]}" "${VIDEO_IN[@]}" "${AUDIO_IN[@]}" "${AUDIO_MERGE[@]}" \
  -map 0:v -map "[a]" \
  -c:v libvpx-vp9 -pix_fmt yuv420p -r "$FPS" -g "$FPS" -b:v 300k \
  -deadline good -cpu-used 4 -row-mt 0 -tile-columns 0 \
  -c:a libopus -b:a 64k -ar 48000 -ac 2 \
  "${BITEXACT[@]}" -f matroska "$OUT/sample-transcode.mkv"

echo "generate: sample-audio-only.m4a"
"${FF[@]}" "${AUDIO_IN[@]}" \
  -filter_complex "[0:a][1:a]amerge=inputs=2[a]" -map "[a]" "${AAC[@]}" \
  "${BITEXACT[@]}" -movflags +faststart "$OUT/sample-audio-only.m4a"

echo "generate: sample-video-only.mp4"
"${FF[@]}" "${VIDEO_IN[@]}" \
  -map 0:v "${H264_COMMON[@]}" -profile:v main -bf 0 -b:v 200k -maxrate 200k -bufsize 400k \
  "${BITEXACT[@]}" -movflags +faststart "$OUT/sample-video-only.mp4"

echo "generate: watermark.png"
# 160x48 RGBA overlay for WatermarkFilter and the CLI: a translucent dark pill (alpha 140) with
# an opaque white play triangle and signal bars, fully transparent around it.
WM_PILL="lte(hypot(max(abs(X-79.5)-56,0),abs(Y-23.5)),22)"
WM_ICON="between(X,18,42)*lte(abs(Y-23.5),(42-X)/2)"
for i in 0 1 2 3 4; do WM_ICON+="+between(X,$((56 + 18 * i)),$((66 + 18 * i)))*between(Y,$((30 - 5 * i)),36)"; done
"${FF[@]}" -f lavfi -i "color=black:s=160x48" -frames:v 1 \
  -vf "format=rgba,geq=r='if(${WM_ICON},255,24)':g='if(${WM_ICON},255,24)':b='if(${WM_ICON},255,32)':a='if(${WM_ICON},255,if(${WM_PILL},140,0))'" \
  "${BITEXACT[@]}" "$OUT/watermark.png"

echo "generate: done ($(du -ch "$OUT"/sample* | tail -1 | cut -f1) total)"
