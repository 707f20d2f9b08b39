#!/bin/bash
# old vs new python/obc/torch.py (profiler records), gloo as the anchor, 8-byte dist.all_reduce
cd /work/main
run() { # label np iters backend
  timeout 300 build/bin/obcrun -n $2 env PYTHONPATH=python OBC_LIBRARY=$PWD/build/lib/libobc.so /usr/bin/python3 bench/results/2026-12-02-torch-profiler/allreduce_8b.py $4 $3 2>/dev/null | tail -1
}
for cond in idle busy np4; do
  np=2; it=5000; busy=
  [ $cond = np4 ] && { np=4; it=1000; }
  [ $cond = busy ] && { sh -c 'while :; do :; done' & busy=$!; }
  for round in 1 2 3; do
    cp /tmp/torch_old.py python/obc/torch.py; old=$(run old $np $it obc)
    cp /tmp/torch_keep.py python/obc/torch.py; new=$(run new $np $it obc)
    gl=$(run gloo $np $((it/10)) gloo)
    echo "$cond round $round: old $old new $new gloo $gl us"
  done
  [ -n "$busy" ] && kill $busy
done
cp /tmp/torch_keep.py python/obc/torch.py
