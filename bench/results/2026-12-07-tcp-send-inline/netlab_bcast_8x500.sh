#!/usr/bin/env bash
# A/B of two libobc builds (/tmp/ns/old: 1bb0e07, /tmp/ns/new: the kept rule) on a 4-host netlab at
# 1gbit: 1-64 MiB in-place broadcast, no checks; usec,algbw per size. (This copy: 8 hosts at
# 500mbit, 16 and 64 MiB, two rounds.)
set -u
SRC=/work/main
NLJ_NAME=nlab_inline
. "$SRC/tests/netlab/nljob.sh"
nlj_init
nlj_lab_up ab 8 --rate 500mbit
for r in 1 2; do
  for v in old new; do
    NLJ_RANK_ENV="LD_LIBRARY_PATH=/tmp/ns/$v"
    nlj_launch 8 1 "$SRC/build/bin/obc-perf" --csv -b 16M -e 64M -f 4 -c 0 -i 1 >/dev/null
    nlj_wait 300 >/dev/null
    echo "$v r$r: $(grep -v '^#' "$NLJ_DIR/rank0.log" | grep '^obc' | cut -d, -f4,5 | tr '\n' ' ')"
  done
done
nlj_lab_down
