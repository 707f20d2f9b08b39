#!/usr/bin/env bash
# Scratch driver of the netlab A/B (netlab_ab.txt): usage: bash netlab_ab_exp.sh "SIZE=4M PERF_EXTRA='-c 0' run label LD_LIBRARY_PATH=/tmp/ns/old" ... ("raw" runs bench/netlab/raw_alltoall).
# experiment: obc alltoall 1 MiB/peer on 4 netlab hosts, variants
set -u
SRC=/work/main
. "$SRC/tests/netlab/nljob.sh"
nlj_init
BUILD=$SRC/build
nlj_lab_up a2a 4 --rate 1gbit
run() { # label env...
  local label=$1; shift
  NLJ_RANK_ENV="$*"
  if [ -n "${PERF_REC:-}" ]; then (sleep 1.5; perf record -a -g -F 2000 -o $PERF_REC -- sleep ${PERF_SECS:-1.5} >/dev/null 2>&1) & fi
  nlj_launch 4 1 "$BUILD/bin/obc-perf" -o alltoall --csv -v -b ${SIZE:-4M} -e ${SIZE:-4M} -w 2 -m 20 -n 40 -t 2 ${PERF_EXTRA:-}
  nlj_wait 600
  echo "== $label: $(grep -E '^obc,' "$NLJ_DIR/rank0.log")"
  grep '^#' "$NLJ_DIR/rank0.log" | head -5
}
ips=(); for ((i = 0; i < 4; i++)); do ips+=("$("$NETLAB" ip "$i")"); done
raw() {
  local pids=() port=$((31000 + RANDOM % 2000))
  if [ -n "${PERF_REC:-}" ]; then (sleep 0.5; perf record -a -g -F 2000 -o $PERF_REC -- sleep ${PERF_SECS:-1.5} >/dev/null 2>&1) & fi
  for ((h = 3; h >= 0; h--)); do
    timeout -k 5 600 "$NETLAB" exec "$h" $BUILD/bench/raw_alltoall "$h" 4 $(( $(numfmt --from=iec ${SIZE:-4M}) / 4)) ${RAWN:-40} "$port" "${ips[@]}" >>/tmp/raw.log 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  echo "== raw: $(grep -E '^raw,' /tmp/raw.log | tail -1)"
}
: > /tmp/raw.log
cpu() { awk '/^cpu /{b=$2+$3+$4+$7+$8; i=$5+$6} /^ctxt/{c=$2} END{print b, i, c}' /proc/stat; }
for v in "$@"; do
  read b0 i0 c0 < <(cpu)
  "$NETLAB" counters > /tmp/cnt.before
  eval "$v"
  read b1 i1 c1 < <(cpu)
  "$NETLAB" counters > /tmp/cnt.after
  python3 "$(dirname "$0")/netlab_cntdiff.py" /tmp/cnt.before /tmp/cnt.after
  echo "   cpu busy $((b1-b0)) idle $((i1-i0)) ctxt $((c1-c0))"
done
nlj_lab_down
