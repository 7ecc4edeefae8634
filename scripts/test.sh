#!/usr/bin/env bash
# The README's test command (and CI's): every unit and integration test, then the API
# documentation of both libraries, with every DocC warning (an undocumented symbol, a broken
# symbol link) an error. It ends with one line, `N passed, N failed`, counting each XCTest case,
# each Swift Testing test and each DocC archive; it exits non-zero when that line says a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"

log=$(mktemp -t livepush-test.XXXXXX)
trap 'rm -f "$log"' EXIT

swift test 2>&1 | tee "$log"
test_status=${PIPESTATUS[0]}

# XCTest prints "Test Case '…' passed|failed|skipped (…)"; Swift Testing "✔ Test … passed after",
# "✘ Test … failed after". A crash ends `swift test` before its summary: counted as one failure.
xctest_passed=$(grep -cE "^Test Case '.*' passed \(" "$log")
xctest_failed=$(grep -cE "^Test Case '.*' failed \(" "$log")
xctest_skipped=$(grep -cE "^Test Case '.*' skipped \(" "$log")
testing_passed=$(grep -cE "Test [^ ].* passed after [0-9.]+ seconds" "$log")
testing_failed=$(grep -cE "Test [^ ].* failed after [0-9.]+ seconds" "$log")
# Swift Testing's run summary ("Test run with N tests … passed|failed after") matches too.
testing_passed=$((testing_passed - $(grep -cE "Test run with [0-9]+ tests? .*passed after" "$log")))
testing_failed=$((testing_failed - $(grep -cE "Test run with [0-9]+ tests? .*failed after" "$log")))
crashed=0
if [ "$test_status" -ne 0 ] && [ $((xctest_failed + testing_failed)) -eq 0 ]; then
    echo "test.sh: swift test exited $test_status with no failing test reported (a crash or a build error)"
    crashed=1
fi

docs_passed=0
docs_failed=0
for target in LivePush LivePushLoopback; do
    if swift package --disable-sandbox generate-documentation --target "$target" --warnings-as-errors; then
        docs_passed=$((docs_passed + 1))
    else
        echo "test.sh: the $target documentation has warnings or errors"
        docs_failed=$((docs_failed + 1))
    fi
done

passed=$((xctest_passed + testing_passed + docs_passed))
failed=$((xctest_failed + testing_failed + docs_failed + crashed))
echo "test.sh: XCTest $xctest_passed passed, $xctest_failed failed, $xctest_skipped skipped;" \
     "Swift Testing $testing_passed passed, $testing_failed failed; DocC $docs_passed passed, $docs_failed failed"
if [ "$failed" -gt 0 ]; then
    echo "test.sh: failing:"
    grep -E "^Test Case '.*' failed \(|✘ Test .* failed after" "$log" | grep -v "Test run with" | sed 's/^/  /'
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
