#!/bin/bash
# A/B of OBC_CROWDED_SLEEP_MIN_BYTES at 4 and 8 ranks on 2 cores: never (0) vs default
cd /work/main
for round in 1 2 3; do
  for np in 4 8; do
    for op in broadcast allreduce; do
      for v in never default; do
        env=(); [ $v = never ] && env=(OBC_CROWDED_SLEEP_MIN_BYTES=0)
        for m in max span; do
          flag=""; [ $m = span ] && flag=-S
          env "${env[@]}" build/bin/obcrun -n $np build/bin/obc-perf -o $op -b 128K -e 32M -f 4 -t 0.3 $flag --csv --label "${v}_$m" 2>/dev/null | grep -v "^#" | sed "s/^/r$round,$op,/"
        done
      done
    done
  done
done
