#!/bin/sh
# SPDX-License-Identifier: MIT
# osu_layer.sh KIND OSU_BUILD LAYER - the OSU micro-benchmarks' blocking
# collectives, the same binaries with and without the MPI drop-in layer
# (docs/mpi.md, "Outside validation"), with OSU's own validation (-c).
#   KIND       openmpi or mpich (the launcher and its options)
#   OSU_BUILD  a configured and built osu-micro-benchmarks tree (built with
#              that MPI's mpicc; the binaries are in c/mpi/collective/blocking)
#   LAYER      build/lib/libobc_mpi.so (Open MPI) or libobc_mpi_mpich.so
# Two passes per benchmark, rank count and mode (PASSES="check time"):
#   check  OSU's validation (-c) on TYPES, ITERS iterations: the Pass/Fail
#          counts (OSU's timing with -c includes its checks: not quoted);
#   time   no -c, MPI_INT, TIME_ITERS iterations: the latency table.
# Environment (defaults are short, for a loaded machine; on a quiet one use
# e.g. TIME_ITERS=1000 TIME_WARMUP=200 for numbers worth quoting):
#   RANKS="2 4"  ITERS=3  WARMUP=1  TIME_ITERS=20  TIME_WARMUP=5
#   MAXSIZE=4194304  LIMIT=300 (s per run)  PASSES="check time"
#   BENCHES="bcast allreduce allgather alltoall reduce barrier gather scatter
#            alltoallv allgatherv"
#   TYPES=all    OSU's -T (all = MPI_CHAR, MPI_INT, MPI_FLOAT; MPI_CHAR
#                reductions are passed to MPI by the layer, the others served)
#   SIZES="8 1024 65536 1048576 4194304"  the latency table's rows
#   KEEP=DIR     keep every run's output there
# Prints two tables: per run, OSU's Pass/Fail counts, the exit status and
# the layer's served/passed line (OBC_MPI_REPORT=1); then the average
# latency (µs) of each benchmark, rank count and size, plain and through the
# layer (MPI_INT). Exit status 1 if any run failed a check or did not exit 0.
kind=$1 osu=$2 layer=$3
if [ -z "$kind" ] || [ ! -d "$osu/c/mpi/collective/blocking" ] || [ ! -f "$layer" ]; then
    echo "usage: $0 openmpi|mpich OSU_BUILD_DIR LAYER.so" >&2
    exit 2
fi
bin=$osu/c/mpi/collective/blocking
: "${RANKS:=2 4}" "${ITERS:=3}" "${WARMUP:=1}" "${MAXSIZE:=4194304}" "${LIMIT:=300}"
: "${TIME_ITERS:=20}" "${TIME_WARMUP:=5}" "${PASSES:=check time}"
: "${BENCHES:=bcast allreduce allgather alltoall reduce barrier gather scatter alltoallv allgatherv}"
: "${TYPES:=all}" "${SIZES:=8 1024 65536 1048576 4194304}"
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
rows=$work/rows # kind n bench mode type size latency validation (from the last pass)
: >"$rows"
# obcrun's and torchrun's variables must not reach the ranks' libobc
unset OBC_RANK OBC_NRANKS OBC_BOOTSTRAP RANK WORLD_SIZE

launch() { # launch MODE N PROG ARGS...
    mode=$1 n=$2
    shift 2
    case $kind in
    openmpi)
        set -- --allow-run-as-root --oversubscribe -n "$n" \
            -x OBC_MPI_REPORT=1 ${mode_layer:+-x LD_PRELOAD="$layer"} "$@"
        timeout -k 5 "$LIMIT" mpirun.openmpi "$@"
        ;;
    mpich)
        set -- -n "$n" -genv OBC_MPI_REPORT 1 ${mode_layer:+-genv LD_PRELOAD "$layer"} "$@"
        timeout -k 5 "$LIMIT" mpirun.mpich "$@"
        ;;
    *)
        echo "osu_layer: unknown kind $kind" >&2
        exit 2
        ;;
    esac
}

bad=0
printf '%-8s %-3s %-10s %-6s %-5s %5s %5s %4s %6s  %s\n' MPI n bench mode run ok fail rc secs \
    "layer's line (served/passed)"
for n in $RANKS; do
    for b in $BENCHES; do
        prog=$bin/osu_$b
        [ -x "$prog" ] || {
            echo "osu_layer: no $prog" >&2
            bad=1
            continue
        }
        for pass in $PASSES; do
            if [ "$b" = barrier ] && [ "$pass" = check ]; then
                set -- -i "$ITERS" -x "$WARMUP" # no sizes, no -c: completing is the check
            elif [ "$b" = barrier ]; then
                set -- -i "$TIME_ITERS" -x "$TIME_WARMUP"
            elif [ "$pass" = check ]; then
                set -- -c -i "$ITERS" -x "$WARMUP" -u 1 -m "$MAXSIZE" -T "$TYPES"
            else
                set -- -i "$TIME_ITERS" -x "$TIME_WARMUP" -m "$MAXSIZE" -T mpi_int
            fi
            for mode in plain layer; do
                mode_layer=
                [ "$mode" = layer ] && mode_layer=1
                out=$work/$kind.$n.$b.$pass.$mode
                t0=$(date +%s)
                launch "$mode" "$n" "$prog" "$@" >"$out" 2>&1
                rc=$?
                secs=$(($(date +%s) - t0))
                [ -n "$KEEP" ] && mkdir -p "$KEEP" && cp "$out" "$KEEP/"
                # rows: "# Datatype: MPI_INT." sets the type; barrier has
                # one number under "# Avg Latency(us)"; a later pass's rows
                # replace an earlier one's (the table reads the last)
                awk -v k="$kind" -v n="$n" -v b="$b" -v m="$mode" '
                    /^# Datatype:/ { t = $3; sub(/\.$/, "", t) }
                    b == "barrier" && /^ *[0-9.]+ *$/ { print k, n, b, m, "-", 0, $1, "-" }
                    b != "barrier" && /^[0-9]+ +[0-9.]+/ {
                        print k, n, b, m, (t == "" ? "MPI_CHAR" : t), $1, $2, $NF }
                ' "$out" >>"$rows"
                pass_n=$(grep -c ' Pass$' "$out")
                fail=$(grep -c ' Fail$' "$out")
                line=$(sed -n 's/^obc-mpi: //p' "$out" | head -n 1)
                [ "$mode" = plain ] && line=-
                printf '%-8s %-3s %-10s %-6s %-5s %5s %5s %4s %6s  %s\n' "$kind" "$n" "$b" "$mode" \
                    "$pass" "$pass_n" "$fail" "$rc" "$secs" "${line:-no line}"
                if [ "$rc" -ne 0 ] || [ "$fail" -ne 0 ] || { [ "$mode" = layer ] && [ -z "$line" ]; }; then
                    bad=1
                    tail -n 15 "$out" | sed 's/^/    | /'
                fi
            done
        done
    done
done

echo
echo "average latency, µs ($kind; MPI_INT; from the last of PASSES=\"$PASSES\"; barrier: one row)"
printf '%-3s %-10s %9s %12s %12s %7s\n' n bench bytes plain layer layer/plain
for n in $RANKS; do
    for b in $BENCHES; do
        for s in $SIZES; do
            [ "$b" = barrier ] && s=0
            awk -v k="$kind" -v n="$n" -v b="$b" -v s="$s" '
                $1 == k && $2 == n && $3 == b && $6 == s { v[$4, $5] = $7 }  # the last pass wins
                function pick(m) {
                    if ((m, "MPI_INT") in v) return v[m, "MPI_INT"]
                    if ((m, "MPI_CHAR") in v) return v[m, "MPI_CHAR"]
                    if ((m, "-") in v) return v[m, "-"]
                    return "-"
                }
                END {
                    p = pick("plain"); l = pick("layer")
                    if (p == "-" && l == "-") exit
                    r = (p != "-" && l != "-" && p > 0) ? sprintf("%.2f", l / p) : "-"
                    printf "%-3s %-10s %9s %12s %12s %7s\n", n, b, (b == "barrier" ? "-" : s), p, l, r
                }' "$rows"
            [ "$b" = barrier ] && break
        done
    done
done
exit $bad
