#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/test-all.sh - the README's test command after the install step: every
# test in the normal build, then the multi-process suites under ASan+UBSan and
# under TSan, then a clang build with its unit and integration tests. Runs all
# four even when one fails, then prints one closing line "N passed, N failed"
# over all of them (the ctest summaries stay above it).
cd "$(dirname "$0")/.." || exit 2
passed=0
failed=0
status=0
for target in test asan tsan clang; do
    log=$(mktemp)
    make "$target" 2>&1 | tee "$log"
    summary=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
    if [ -z "$summary" ]; then
        echo "test-all: make $target did not run its tests"
        failed=$((failed + 1))
        status=1
    else
        nfail=$(echo "$summary" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
        ntotal=$(echo "$summary" | sed -E 's/.* failed out of ([0-9]+).*/\1/')
        passed=$((passed + ntotal - nfail))
        failed=$((failed + nfail))
        [ "$nfail" -eq 0 ] || status=1
    fi
    rm -f "$log"
done
echo "$passed passed, $failed failed"
exit $status
