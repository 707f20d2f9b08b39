#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/check.sh - `make check`: the rules a reviewer would otherwise check by hand.
#  1. clang-format: every C file is formatted (.clang-format);
#  2. layers: a folder of src/ includes only the headers its layer may use
#     (STYLE.md: api -> setup -> engine -> algo -> transport.h, arena.h -> platform,
#     core; setup also wires bootstrap, and core is the ground floor);
#  3. getenv: only src/core/config.c reads the environment;
#  4. mpi/ (the MPI drop-in layer, a library of its own): its files include
#     only obc.h, mpi.h and its own mpi_layer.h, and only mpi/mpi_env.c reads
#     the environment.
set -u
cd "$(dirname "$0")/.."
fail=0

files=$(git ls-files '*.c' '*.h')
if command -v clang-format >/dev/null; then
    bad=$(echo "$files" | xargs clang-format --dry-run 2>&1 | grep -c 'warning:')
    if [ "$bad" -gt 0 ]; then
        echo "check: clang-format would change $bad places (run clang-format -i)"
        fail=1
    fi
fi

# allowed include prefixes per layer (besides the layer itself and obc.h)
allowed() {
    case $1 in
    platform) echo "platform/" ;;
    core) echo "core/ platform/" ;;
    bootstrap) echo "bootstrap/ core/ platform/" ;;
    transport) echo "transport/ core/ platform/" ;;
    # algo and engine see the transport layer through its two outward
    # headers only: transport.h (the p2p interface and its per-peer ops
    # table) and arena.h (the host arena's shared memory, which the
    # shared-memory algorithms and the engine's boards and waits use).
    # shm/ and tcp/ inside it are private to transport/.
    algo) echo "algo/ transport/transport.h transport/arena.h core/" ;;
    engine) echo "engine/ algo/algo.h transport/transport.h transport/arena.h core/ platform/" ;;
    # setup assembles a communicator: bootstrap, host layout, transports
    # (the p2p links and the host arena it builds), engine; api reaches it
    # through setup.h only.
    setup) echo "setup/ bootstrap/bootstrap.h transport/transport.h transport/arena.h engine/engine.h core/ platform/" ;;
    api) echo "api/ setup/setup.h engine/engine.h algo/algo.h core/ platform/ bootstrap/bootstrap.h" ;;
    esac
}
for f in $(git ls-files 'src/*.c' 'src/*.h'); do
    layer=$(echo "$f" | cut -d/ -f2)
    ok=$(allowed "$layer")
    grep -o '#include "[^"]*"' "$f" | sed 's/#include "\(.*\)"/\1/' | while read -r inc; do
        [ "$inc" = obc.h ] && continue
        hit=0
        for p in $ok; do
            case $inc in "$p"*) hit=1 ;; esac
        done
        if [ $hit = 0 ]; then
            echo "check: $f includes \"$inc\", outside its layer ($layer may use: $ok)"
            echo fail >"${TMPDIR:-/tmp}/obc-check-fail.$$"
        fi
    done
done
if [ -e "${TMPDIR:-/tmp}/obc-check-fail.$$" ]; then
    rm -f "${TMPDIR:-/tmp}/obc-check-fail.$$"
    fail=1
fi

# tests/fuzz is the exception: its libFuzzer targets drive one layer's decoders
# from inside, as the unit tests beside the code do (they link obc_fuzzlib).
for f in $(git ls-files 'tools/*.c' 'tests/*.c' 'examples/*.c' | grep -v '^tests/fuzz/'); do
    if grep -q '#include "\(core\|engine\|algo\|transport\|bootstrap\|platform\|setup\|api\)/' "$f"; then
        echo "check: $f uses library internals; tools, tests and examples use obc.h only"
        fail=1
    fi
done

getenv_users=$(git grep -l 'getenv(' -- 'src/*.c' | grep -v '^src/core/config.c$')
if [ -n "$getenv_users" ]; then
    echo "check: getenv outside src/core/config.c: $getenv_users"
    fail=1
fi

for f in $(git ls-files 'mpi/*.c' 'mpi/*.h'); do
    for inc in $(grep -o '#include "[^"]*"' "$f" | sed 's/#include "\(.*\)"/\1/'); do
        case $inc in
        obc.h | mpi_layer.h) ;;
        *)
            echo "check: $f includes \"$inc\"; the MPI layer uses obc.h, <mpi.h> and mpi_layer.h only"
            fail=1
            ;;
        esac
    done
    if grep -q '#include <\(core\|engine\|algo\|transport\|bootstrap\|platform\|setup\|api\)/' "$f"; then
        echo "check: $f uses library internals"
        fail=1
    fi
done
mpi_getenv=$(git grep -l 'getenv(' -- 'mpi/*.c' | grep -v '^mpi/mpi_env.c$')
if [ -n "$mpi_getenv" ]; then
    echo "check: getenv in the MPI layer outside mpi/mpi_env.c: $mpi_getenv"
    fail=1
fi

if [ $fail = 0 ]; then
    echo "check: format, layers and getenv rules hold"
fi
exit $fail
