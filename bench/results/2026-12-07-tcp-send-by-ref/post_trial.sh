#!/usr/bin/env bash
# Kept as the record of what ran (OP=alltoall|broadcast HOSTS=4): base = /work/main/build at 894c22a, post = a worktree build of 8d6cede.
# experiment: netlab broadcast, base (/tmp/exp: relay copies into slots) vs ref (/work/main: relay
# forwards by reference): time per call and CPU seconds of all ranks (user+sys).
set -u
SRC=/work/main
OUT=${1:-/tmp/mb/bcpu}
ROUNDS=${ROUNDS:-3}
HOSTS=${HOSTS:-4} PER=${PER:-1} RATE=${RATE:-1gbit}
SIZES=${SIZES:-16777216 67108864}
mkdir -p "$OUT"
. "$SRC/tests/netlab/nljob.sh"
nlj_init
nlj_lab_up p2 "$HOSTS" --rate "$RATE"
for ((r = 1; r <= ROUNDS; r++)); do
  for s in $SIZES; do
    for v in base:/work/main/build post:/tmp/wt/build; do
      name=${v%%:*}; B=${v#*:}
      NLJ_RANK_ENV="LD_LIBRARY_PATH=$B/lib"
      nlj_launch "$HOSTS" "$PER" /usr/bin/time -f "cpu %U %S" $B/bin/obc-perf -o ${OP:-broadcast} --csv -b $s -e $s -w 2 -m 10 -n 10 -t 100 -c ${CHECK:-0} >/dev/null
      nlj_wait 600
      cpu=$(cat "$NLJ_DIR"/rank*.log | awk '/^cpu /{u+=$2; s+=$3} END{printf "%.2f,%.2f", u, s}')
      grep -E '^obc,' "$NLJ_DIR/rank0.log" | sed "s/^obc/$name/;s/$/,$cpu,r$r/" | tee -a "$OUT/res.csv"
    done
  done
done
nlj_lab_down
