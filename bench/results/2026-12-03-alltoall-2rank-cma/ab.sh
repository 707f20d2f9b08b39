#!/bin/bash
# alltoall at 2 ranks, 4 KiB - 1 MiB per rank: the library before 59183c6 (single copy from
# 64 KiB blocks at any crowding) against the one after it, with Open MPI beside them
# (bench/ab_libs.sh: old new new old, three rounds idle, two beside a busy process).
cd "$(dirname "$0")" && ../../ab_libs.sh -O 4d498fc -o alltoall -n 2 -b 4K -e 1M -t 1 | tee ab.txt
