#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/install-deps.sh - everything obc needs on a fresh Debian 12 machine, as root:
# the toolchain and test tools, and what the benchmarks and later issues compare
# against or drive (Open MPI, MPICH and their headers for the MPI layer, mpi4py,
# torch/numpy for Gloo and the binding, iptables
# for netlab). Idempotent: a second run installs nothing.
set -e
PKGS="build-essential cmake pkg-config clang libclang-rt-14-dev clang-format libcmocka-dev libxxhash-dev \
openmpi-bin libopenmpi-dev mpich libmpich-dev \
python3 python3-numpy python3-torch python3-matplotlib python3-pytest python3-mpi4py \
iproute2 iptables util-linux procps"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "install-deps: run as root to install:$missing" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing
fi
