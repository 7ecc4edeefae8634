#!/usr/bin/env bash
# Builds one libFuzzer target and runs it over a copy of its corpus, then merges the inputs that
# reached new code back into the corpus kept in the repo.
#
#   scripts/fuzz.sh TARGET [SECONDS]    (default 600; TARGET is a file name of Tests/Fuzz/*.swift)
#
# A target is LivePushWire (built as its own module, so the harness sees only its public API, as
# the unit tests do) + Tests/LivePushTests/FuzzSupport (the same code the corpus replay test runs)
# + the harness Tests/Fuzz/TARGET.swift. Everything is built into .build-fuzz/. One fuzzing
# process, one thread: the machine is shared. A crash leaves its input in
# .build-fuzz/TARGET-artifacts/; once fixed, keep it in Tests/Fuzz/Regressions/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swiftc >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"

target=${1:-}
seconds=${2:-600}
harness=Tests/Fuzz/$target.swift
if [ -z "$target" ] || [ ! -f "$harness" ]; then
    echo "usage: scripts/fuzz.sh TARGET [SECONDS]; targets:" $(basename -s .swift Tests/Fuzz/*.swift) >&2
    exit 2
fi

out=.build-fuzz
mkdir -p "$out/wire"
flags=(-sanitize=fuzzer,address -parse-as-library -O -g)
# Linking a sanitized binary with gold warns about every ASan symbol; only show a failure's output.
compile() {
    if ! swiftc "${flags[@]}" "$@" 2>"$out/compile.log"; then
        grep -v "Cannot export local symbol" "$out/compile.log" >&2
        exit 1
    fi
}
wire=$out/wire/LivePushWire.o
if [ ! -f "$wire" ] || [ -n "$(find Sources/LivePushWire -newer "$wire")" ]; then
    echo "fuzz: building LivePushWire"
    compile -module-name LivePushWire -wmo -c Sources/LivePushWire/*.swift -o "$wire" \
        -emit-module -emit-module-path "$out/wire/LivePushWire.swiftmodule"
fi
echo "fuzz: building $target"
compile -module-name FuzzHarness -I "$out/wire" Tests/LivePushTests/FuzzSupport/*.swift "$harness" "$wire" \
    -o "$out/$target"

source scripts/fuzz-corpus.sh
fuzz_corpus_copy "$out" "$target"
work=$out/$target-corpus

# -max_len leaves room for a whole handshake (3,073 bytes) and then some chunks.
# -timeout turns an input that hangs a parser into a finding, and -malloc_limit_mb one that makes
# it allocate megabytes for a few kilobytes (a length field trusted before the bytes arrive).
status=0
"$out/$target" "$work" -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=8 \
    -use_value_profile=1 -print_final_stats=1 -artifact_prefix="$out/$target-artifacts/" || status=$?

fuzz_corpus_merge "$out" "$target" "$out/$target"
exit "$status"
