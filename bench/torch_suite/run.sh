#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh BACKEND WORLD_SIZE [LOGDIR] - torch 1.13's distributed suite
# (torch/testing/_internal/distributed/distributed_test.py) on BACKEND (obc
# or gloo) at WORLD_SIZE ranks: the collective, point-to-point, barrier,
# group and DDP tests (251 of its 279), one JSON line per test in
# LOGDIR/BACKEND.wsN.jsonl (default /tmp/torch_suite). Compare two runs
# with compare.py. Needs /usr/bin/python3 with python3-torch and a built
# libobc (build/lib). Results: docs/torch.md, "Checked against torch's own
# suite". K=REGEX picks other tests.
b=$1 ws=$2 logs=${3:-/tmp/torch_suite}
here=$(cd "$(dirname "$0")" && pwd)
[ -n "$b" ] && [ -n "$ws" ] || {
    echo "usage: $0 obc|gloo WORLD_SIZE [LOGDIR]" >&2
    exit 2
}
mkdir -p "$logs" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
sel='all_gather|all_reduce|all_to_all|broadcast|reduce|gather|scatter|send|recv|barrier|group|ddp|DistributedDataParallel'
# the suite's own per-test timeout is generous: ranks may outnumber cores
env BACKEND="$b" WORLD_SIZE="$ws" TEMP_DIR="$tmp" INIT_METHOD="${INIT_METHOD:-env://}" \
    MASTER_ADDR=127.0.0.1 MASTER_PORT="${MASTER_PORT:-29531}" \
    DISTRIBUTED_TESTS_DEFAULT_TIMEOUT=900 OBC_TIMEOUT="${OBC_TIMEOUT:-300}" \
    /usr/bin/python3 "$here/run_suite.py" -k "${K:-$sel}" --log "$logs/$b.ws$ws.jsonl"
