#!/bin/bash
# usage: ab2.sh NP SIZE ROUNDS spec...   spec = label:BUILD:ENV..   (BUILD dir with bin/) ; label ending in _ip => -i 1
NP=$1; SZ=$2; R=$3; shift 3
B=/tmp/obc-anchors-build
for r in $(seq $R); do
  line="r$r ompi=$(mpirun.openmpi --allow-run-as-root --oversubscribe -np $NP $B/mpi_bcast_bench.openmpi -b $SZ -e $SZ -n 200 -m 200 -t 100 -c 1 $EXTRA 2>/dev/null | grep -v '^#' | tail -1 | cut -d, -f4)"
  for spec in "$@"; do
    label=${spec%%:*}; rest=${spec#*:}; W=${rest%%:*}; envs=${rest#*:}
    ip=; [ "${label%_ip}" != "$label" ] && ip="-i 1"
    v=$(env $envs $W/bin/obcrun -n $NP $W/bin/obc-perf -b $SZ -e $SZ -n 200 -m 200 -t 100 -c 1 --csv $EXTRA $ip 2>/dev/null | grep -v '^#' | tail -1 | cut -d, -f4)
    line="$line $label=$v"
  done
  echo "$line"
done | tee /tmp/exp/last.txt
python3 - <<'PY'
import re,statistics,collections
d=collections.defaultdict(list)
for l in open('/tmp/exp/last.txt'):
    for k,v in re.findall(r'(\w+)=([\d.]+)',l): d[k].append(float(v))
print("MEDIANS", {k:round(statistics.median(v),1) for k,v in d.items()})
PY
