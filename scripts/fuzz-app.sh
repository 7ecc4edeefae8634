#!/usr/bin/env bash
# Builds the app-level libFuzzer binary (Tests/FuzzHarness, see AppFuzzTarget) with SwiftPM and
# runs one target over a copy of its corpus, then merges what reached new code back into it.
#
#   scripts/fuzz-app.sh TARGET [SECONDS] [MAX_LEN]   (default 600 s; TARGET: receiver-session,
#                                                     recorder, schedule, channels-config)
#
# These targets reach LivePush and LivePushLoopback (NIO, libav*, librtmp), so SwiftPM builds every
# module with -sanitize=fuzzer,address into .build-fuzz/spm; the package adds the LivePushFuzz
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
    schedule|channels-config) max_len=${3:-8192} ;;
    *) echo "usage: scripts/fuzz-app.sh receiver-session|recorder|schedule|channels-config [SECONDS] [MAX_LEN]" >&2; exit 2 ;;
esac

out=.build-fuzz
mkdir -p "$out"
echo "fuzz-app: building LivePushFuzz (sanitized, release)"
LIVEPUSH_FUZZ=1 nice -n 10 swift build -c release --scratch-path "$out/spm" --product LivePushFuzz \
    --sanitize=fuzzer --sanitize=address 2>&1 | grep -E "error|warning: unre|Compiling LivePush|Build complete" || true
binary=$out/spm/release/LivePushFuzz
[ -x "$binary" ] || { echo "fuzz-app: the build failed" >&2; exit 1; }

corpus=Tests/Fuzz/Corpus/$target
work=$out/$target-corpus
rm -rf "$work"
mkdir -p "$corpus" "$work" "$out/$target-artifacts"
cp -R "$corpus"/. "$work"/

export LIVEPUSH_FUZZ_TARGET=$target
status=0
nice -n 10 "$binary" "$work" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix="$out/$target-artifacts/" || status=$?

# Keep the named seeds and a small set of found inputs (named by their SHA-1) covering all reached.
merged=$out/$target-merged
rm -rf "$merged"
mkdir -p "$merged"
find "$corpus" -type f -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' -exec cp {} "$merged"/ \;
if "$binary" -set_cover_merge=1 "$merged" "$corpus" "$work" >"$out/$target-merge.log" 2>&1; then
    grep -E "MERGE-OUTER: [0-9]+ new files" "$out/$target-merge.log" || true
    rm -rf "$corpus"
    mv "$merged" "$corpus"
else
    echo "fuzz-app: merging failed (see $out/$target-merge.log); the corpus is left as it was" >&2
fi
echo "fuzz-app: $target corpus: $(find "$corpus" -type f | wc -l) files"
exit "$status"
