#!/bin/bash
# gather and scatter at 2 ranks, 8 KiB - 64 KiB gathered: the library before 3f462cb (single copy
# from 16 KiB blocks at any crowding) against the one after it, with Open MPI beside them
# (bench/ab_libs.sh: old new new old, three rounds idle, two beside a busy process).
cd "$(dirname "$0")" && ../../ab_libs.sh -O 4e0e784 -o "gather scatter" -n 2 -b 8K -e 64K -t 1 | tee ab.txt
