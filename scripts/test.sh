#!/usr/bin/env bash
# The README's test command (and CI's): every unit and integration test, then the API
# documentation of both libraries, with every DocC warning (an undocumented symbol, a broken
# symbol link) an error.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
swift test
for target in LivePush LivePushLoopback; do
    swift package --disable-sandbox generate-documentation --target "$target" --warnings-as-errors
done
