#!/bin/bash
# 64 MiB broadcast at 2 ranks from obc_mem_alloc buffers, out of place and in place, against
# the anchors' memcpy bound and Open MPI, three rounds (issue #13); then 4 ranks once.
# Usage: bash measure.sh   (from anywhere; writes roundN/ and np4/ beside this file)
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
for r in 1 2 3; do
    "$TOP/bench/run_bench.sh" -n 2 -i "memcpy memcpy_nt openmpi obc_shared obc_shared_inplace obc_inplace" \
        -b 64M -e 64M -M "64M 64M" -t 1 -k maxrank -o "$HERE/round$r" -D -
done
"$TOP/bench/run_bench.sh" -n 4 -i "openmpi obc_shared obc_shared_inplace obc_inplace" \
    -b 64M -e 64M -t 1 -k maxrank -o "$HERE/np4" -D -
