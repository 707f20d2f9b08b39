cd /tmp/adapt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
it="openmpi obc_inplace obc_inplace+OBC_XLATE_NS=1000000 obc_inplace+OBC_YIELD_NS=20000 obc_inplace+OBC_YIELD_NS=200000"
O=/tmp/big
for r in $(seq ${FROM:-1} ${ROUNDS:-20}); do
  for op in allreduce broadcast; do
    bench/run_bench.sh -O $op -n 4 -t 0.3 -b 8 -e 4K -f 8 -i "$it" -o $O/idle/$op/r$r > /dev/null 2>&1
    bench/run_bench.sh -O $op -n 4 -U 1 -t 0.3 -b 8 -e 4K -f 8 -i "$it" -o $O/busy/$op/r$r > /dev/null 2>&1
    pkill -x yes
  done
  echo "round $r $(date +%T)"
done
git checkout -q docs/perf
echo done
