#!/usr/bin/env bash
# Kept as the record of what ran: /tmp/exp was a build of d79ecfc (before the change), /tmp/mb/raw_alltoall
# bench/netlab/raw_alltoall.c built with cc -O2. Columns: impl,nranks,bytes,usec,...,user_s,sys_s,round.
# experiment: netlab alltoall 4 hosts 1gbit, base (/tmp/exp = HEAD d79ecfc lib) vs ref (/work/main build):
# time per call (obc-perf median of max over ranks) and CPU seconds of all ranks (user+sys).
set -u
SRC=/work/main
OUT=${1:-/tmp/mb/cpu}
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-4194304 16777216 67108864}
mkdir -p "$OUT"
. "$SRC/tests/netlab/nljob.sh"
nlj_init
nlj_lab_up a2a 4 --rate 1gbit
ips=(); for ((i = 0; i < 4; i++)); do ips+=("$("$NETLAB" ip "$i")"); done
for ((r = 1; r <= ROUNDS; r++)); do
  for s in $SIZES; do
    for v in base:/tmp/exp/build ref:/work/main/build; do
      name=${v%%:*}; B=${v#*:}
      NLJ_RANK_ENV="LD_LIBRARY_PATH=$B/lib"
      nlj_launch 4 1 /usr/bin/time -f "cpu %U %S" $B/bin/obc-perf -o alltoall --csv -b $s -e $s -w 2 -m 20 -n 20 -t 100 >/dev/null
      nlj_wait 600
      cpu=$(cat "$NLJ_DIR"/rank*.log | awk '/^cpu /{u+=$2; s+=$3} END{printf "%.2f,%.2f", u, s}')
      grep -E '^obc,' "$NLJ_DIR/rank0.log" | sed "s/^obc/$name/;s/$/,$cpu,r$r/" | tee -a "$OUT/res.csv"
    done
    port=$((31000 + RANDOM % 2000)); pids=()
    for ((h = 3; h >= 0; h--)); do
      timeout -k 5 600 "$NETLAB" exec "$h" /tmp/mb/raw_alltoall "$h" 4 $((s / 4)) 20 "$port" "${ips[@]}" >>"$OUT/raw.log" 2>&1 &
      pids+=($!)
    done
    wait "${pids[@]}"
    grep -E '^raw,' "$OUT/raw.log" | tail -1 | sed "s/$/,,,r$r/" | tee -a "$OUT/res.csv"
  done
done
nlj_lab_down
