#!/usr/bin/env bash
# Installs the Debian packages LivePush builds and tests against. GStreamer's are run-time packages only:
# LivePush builds without GStreamer's dev packages and loads its libraries (dlopen) at the first WHIP output;
# the WebRTC tests need the libraries and the plugins (webrtcbin, nice, rtp payloaders).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  pkg-config librtmp-dev libgnutls28-dev libsrt-gnutls-dev srt-tools \
  libavformat-dev libavcodec-dev libavutil-dev libswresample-dev libswscale-dev \
  libfreetype-dev libfontconfig-dev fonts-dejavu-core tesseract-ocr tesseract-ocr-eng \
  libgstreamer1.0-0 libgstreamer-plugins-base1.0-0 libgstreamer-plugins-bad1.0-0 \
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-nice \
  ffmpeg nginx libnginx-mod-rtmp libnginx-mod-stream openssl python3 python3-venv systemd iproute2 \
  libxml2-utils xmltv-util >/dev/null
# The Debian nginx package starts a system service on port 80; the tests run their own.
$SUDO systemctl disable --now nginx >/dev/null 2>&1 || $SUDO service nginx stop >/dev/null 2>&1 || true
echo "install-deps: done"
