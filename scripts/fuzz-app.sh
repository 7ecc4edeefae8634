#!/usr/bin/env bash
# Builds the app-level libFuzzer binary (Tests/FuzzHarness, see AppFuzzTarget) with SwiftPM and
# runs one target over a copy of its corpus, then merges what reached new code back into it.
#
#   scripts/fuzz-app.sh TARGET [SECONDS] [MAX_LEN]   (default 600 s; TARGET: receiver-session,
#                                                     recorder, schedule, channels-config,
#                                                     whip-response, sdp-answer, hls-playlist)
#
# These targets reach LivePush and LivePushLoopback (NIO, libav*, librtmp), so SwiftPM builds every
# module with -sanitize=fuzzer,address into .build-fuzz/spm (SwiftPM's --sanitize instruments the C
# targets only; the Swift ones get it through -Xswiftc); the package adds the LivePushFuzz
# executable only when LIVEPUSH_FUZZ is set. One process, one thread, niced: the machine is
# shared. A crash leaves its input in .build-fuzz/TARGET-artifacts/; once fixed, keep it in
# Tests/Fuzz/Regressions/TARGET/ (FuzzCorpusReplayTests replays it) with a test in FuzzFindingTests.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"

target=${1:-}
seconds=${2:-600}
case "$target" in
    receiver-session) max_len=${3:-1100000} ;;  # a 16 MiB name is out of reach; 1 MiB messages are not
    recorder) max_len=${3:-65536} ;;
    schedule|channels-config|sdp-answer) max_len=${3:-8192} ;;
    whip-response) max_len=${3:-16384} ;;  # room for a head with several Link fields and an answer
    hls-playlist) max_len=${3:-16384} ;;  # a window of some segments with their tags
    *) echo "usage: scripts/fuzz-app.sh receiver-session|recorder|schedule|channels-config|whip-response|sdp-answer|hls-playlist [SECONDS] [MAX_LEN]" >&2; exit 2 ;;
esac

out=.build-fuzz
mkdir -p "$out"
echo "fuzz-app: building LivePushFuzz (sanitized, release)"
LIVEPUSH_FUZZ=1 nice -n 10 swift build -c release --scratch-path "$out/spm" --product LivePushFuzz \
    --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing 2>&1 | grep -E "error|warning: unre|Compiling LivePush|Build complete" || true
binary=$out/spm/release/LivePushFuzz
[ -x "$binary" ] || { echo "fuzz-app: the build failed" >&2; exit 1; }

source scripts/fuzz-corpus.sh
fuzz_corpus_copy "$out" "$target"
work=$out/$target-corpus

export LIVEPUSH_FUZZ_TARGET=$target
status=0
nice -n 10 "$binary" "$work" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix="$out/$target-artifacts/" || status=$?

fuzz_corpus_merge "$out" "$target" "$binary"
exit "$status"
