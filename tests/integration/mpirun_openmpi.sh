#!/bin/sh
# SPDX-License-Identifier: MIT
# mpirun_openmpi.sh MPIRUN HELPER - obc under the real Open MPI launcher:
# MPIRUN (mpirun.openmpi) starts 3 copies of HELPER (tests/integration/mpirun_rank.c)
# on this host, the rendezvous on OBC_BOOTSTRAP at a free port. Passes when mpirun
# exits 0 and every rank said it formed the job with its rank and the right size.
set -u
mpirun=$1
helper=$2
n=3

port=$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])') || {
    echo "mpirun_openmpi: cannot pick a free port"
    exit 1
}
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT

# Variables of obcrun and torchrun would win over Open MPI's: a ctest started under
# either must not hand them down.
unset OBC_RANK OBC_NRANKS OBC_BOOTSTRAP RANK WORLD_SIZE
# Containers run tests as root, which Open MPI refuses unless told; --oversubscribe
# because the host may have fewer cores than ranks.
timeout -k 5 100 "$mpirun" --allow-run-as-root --oversubscribe -n $n \
    -x OBC_BOOTSTRAP=127.0.0.1:"$port" -x OBC_TIMEOUT=60 "$helper" $n >"$out" 2>&1
rc=$?
cat "$out"
if [ $rc -ne 0 ]; then
    echo "mpirun_openmpi: mpirun exited with status $rc"
    exit 1
fi
r=0
while [ $r -lt $n ]; do
    if ! grep -q "^mpirun_rank: rank $r of $n ok\$" "$out"; then
        echo "mpirun_openmpi: rank $r did not report 'rank $r of $n ok'"
        exit 1
    fi
    r=$((r + 1))
done
echo "mpirun_openmpi: $n ranks under $mpirun (port $port): ok"
