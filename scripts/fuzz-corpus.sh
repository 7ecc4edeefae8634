# Sourced by scripts/fuzz.sh and scripts/fuzz-app.sh: the corpus kept in the repo, around a run.
#
#   fuzz_corpus_copy OUT TARGET          copies Tests/Fuzz/Corpus/TARGET to OUT/TARGET-corpus (the run's)
#   fuzz_corpus_merge OUT TARGET BINARY  keeps the named seeds and a small set of found inputs (named
#                                        by their SHA-1) that covers all the old corpus and the run
#                                        reached: set-cover merge into the seeds alone, then swap.
# Extra environment for BINARY (such as LIVEPUSH_FUZZ_TARGET) is the caller's to export.

fuzz_corpus_copy() {
    local out=$1 target=$2
    local corpus=Tests/Fuzz/Corpus/$target work=$1/$2-corpus
    rm -rf "$work"
    mkdir -p "$corpus" "$work" "$out/$target-artifacts"
    cp -R "$corpus"/. "$work"/
}

fuzz_corpus_merge() {
    local out=$1 target=$2 binary=$3
    local corpus=Tests/Fuzz/Corpus/$target work=$1/$2-corpus merged=$1/$2-merged
    rm -rf "$merged"
    mkdir -p "$merged"
    find "$corpus" -type f -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' -exec cp {} "$merged"/ \;
    if "$binary" -set_cover_merge=1 "$merged" "$corpus" "$work" >"$out/$target-merge.log" 2>&1; then
        grep -E "MERGE-OUTER: [0-9]+ new files" "$out/$target-merge.log" || true
        rm -rf "$corpus"
        mv "$merged" "$corpus"
    else
        echo "fuzz: merging failed (see $out/$target-merge.log); the corpus is left as it was" >&2
    fi
    echo "fuzz: $target corpus: $(find "$corpus" -type f | wc -l) files"
}
