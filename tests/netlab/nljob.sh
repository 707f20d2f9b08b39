# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034 # NLJ_* variables are results for the sourcing test
# tests/netlab/nljob.sh - sourced (bash) by tests/netlab/netlab_*.sh: a lab of emulated
# hosts (tools/netlab/netlab) per test, jobs of H hosts x R ranks started on it the way
# torchrun would (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=h0, MASTER_PORT, OBC_SECRET),
# waits with a deadline, per-rank exit codes and exit times, checks and a closing report.
#
#   nlj_init                      root + namespaces or exit 77 (SKIP); tools present or fail
#   nlj_lab_up TAG N [OPTS...]    `netlab up N OPTS` under a fresh NETLAB_PREFIX; the lab is
#                                 removed on EXIT, INT and TERM whatever happens
#   nlj_lab_down                  remove it now (e.g. before a lab of another size)
#   nlj_launch H R [VAR=VAL...] PROG [ARGS...]
#                                 start rank r = h*R + l on host h, in the background;
#                                 stdout+stderr in $NLJ_DIR/rank<r>.log
#   nlj_wait_lines REGEX SECS     until every rank's log has a line matching REGEX;
#                                 fails early if a rank exits first
#   nlj_wait_looping [SECS]       every rank of an nl_bcast_loop job is looping
#   nlj_give_up MSG               fail, stop the job, report, exit
#   nlj_wait SECS                 until every rank exits; SIGKILLs (and notes) the ranks
#                                 still running after SECS; 0 only if every rank exited 0.
#                                 Then NLJ_RC[r], NLJ_TEXIT[r] (nlj_now seconds:
#                                 the hosts share one clock), NLJ_KILLED[r] are set
#   nlj_result_line r, nlj_err_time r, nlj_err_msg r, nlj_names_rank MSG r
#   nlj_check DESC CMD...   nlj_fail MSG   nlj_ok MSG   nlj_expect_all_ok
#   nlj_check_survivors VICTIM T0 LIMIT WHAT A B
#                                 every rank off host VICTIM failed (exit 2) within LIMIT s
#                                 of T0, naming rank A or B; NLJ_WORST = the slowest
#   nlj_finish [SUMMARY]          one closing line, logs of failed jobs, exit 0 or 1
#
# Times given to the waits are multiplied by OBC_TEST_TIMEOUT_MULTIPLIER. Environment:
# NETLAB (default tools/netlab/netlab of this checkout), OBCT_BINDIR (the build's
# tests/bin, default build/tests/bin), NLJ_KEEP_LOGS=1 keeps the logs of a passing run,
# NLJ_TAIL (lines of each rank's log shown on failure, default 12), NLJ_RANK_ENV
# ("VAR=VAL ..." for every rank, e.g. OBC_DEBUG=INFO; the test's own settings win).

export LC_ALL=C
NLJ_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NLJ_SRC=$(cd "$NLJ_HERE/../.." && pwd)
NETLAB=${NETLAB:-$NLJ_SRC/tools/netlab/netlab}
OBCT_BINDIR=${OBCT_BINDIR:-$NLJ_SRC/build/tests/bin}
NLJ_SCALE=${OBC_TEST_TIMEOUT_MULTIPLIER:-1}
NLJ_NAME=$(basename "$0" .sh)
NLJ_OWNERS=/run/obc-netlab # <prefix>.pid: the test process that owns a lab
NLJ_FAILS=0
NLJ_FAILED_JOBS=""
NLJ_PREFIX=""
NLJ_LOGDIR=""
NLJ_JOB=0
NLJ_T_LAUNCH=0 # when the current job was started (nlj_now seconds)
NLJ_T_LINES=0  # when nlj_wait_lines was satisfied
NLJ_DIR=""
NLJ_N=0
NLJ_R=1
NLJ_PORT=0
declare -a NLJ_RC NLJ_TEXIT NLJ_KILLED

# Seconds since boot (/proc/uptime: CLOCK_BOOTTIME in 10 ms steps; nl_bcast_loop prints the same
# clock). Every emulated host shares it, and unlike the wall clock it never steps: a fresh-clone
# CI run once saw the wall clock jump 8 s during netlab_cut, which read as ranks exiting late.
nlj_now() {
    local up _
    read -r up _ </proc/uptime
    echo "$up"
}
# Microseconds now, and SECS x multiplier from now: integers, compared as such.
nlj_us() {
    local up _
    read -r up _ </proc/uptime
    echo "${up/./}0000"
}
nlj_deadline_us() { awk -v s="$1" -v m="$NLJ_SCALE" -v t="$(nlj_us)" 'BEGIN { printf "%.0f\n", t + s * m * 1e6 }'; }
# awk arithmetic on decimal strings: nlj_calc 'a - b' a=1.5 b=0.2
nlj_calc() {
    local expr=$1
    shift
    awk "BEGIN { $(printf '%s; ' "$@") printf \"%.3f\n\", ($expr) }"
}
nlj_scaled() { nlj_calc "s * m" "s=$1" "m=$NLJ_SCALE"; }

nlj_skip() {
    echo "=================================================================="
    echo "SKIP: $NLJ_NAME: $*"
    echo "=================================================================="
    echo "SKIP: $NLJ_NAME: $*" >&2
    exit 77
}

nlj_init() {
    local probe err
    [ "$(id -u)" = 0 ] || nlj_skip "not root (network namespaces need CAP_SYS_ADMIN + CAP_NET_ADMIN)"
    command -v ip >/dev/null || { echo "FAIL: $NLJ_NAME: 'ip' (iproute2) not found"; exit 1; }
    probe="nljprobe$$"
    if ! err=$(ip netns add "$probe" 2>&1); then
        nlj_skip "'ip netns add' is refused here: $err"
    fi
    ip netns del "$probe" 2>/dev/null
    [ -x "$NETLAB" ] || { echo "FAIL: $NLJ_NAME: netlab not found at $NETLAB"; exit 1; }
    NLJ_LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/obc-$NLJ_NAME.XXXXXX") || exit 1
    trap nlj_cleanup EXIT
    trap 'echo "$NLJ_NAME: interrupted (SIGINT)"; exit 130' INT
    trap 'echo "$NLJ_NAME: terminated (SIGTERM)"; exit 143' TERM
    trap 'echo "$NLJ_NAME: hangup (SIGHUP)"; exit 129' HUP
}

nlj_need_prog() {
    [ -x "$1" ] || { echo "FAIL: $NLJ_NAME: $1 is not built (OBCT_BINDIR=$OBCT_BINDIR)"; exit 1; }
}

# Labs whose owning test process is gone (a SIGKILLed run) are removed, so none piles up.
nlj_sweep_orphans() {
    local f p pid
    for f in "$NLJ_OWNERS"/*.pid; do
        [ -e "$f" ] || continue
        p=$(basename "$f" .pid)
        pid=$(cat "$f" 2>/dev/null)
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            continue
        fi
        echo "nlj: removing lab '$p' left by a dead test process ($pid)"
        NETLAB_PREFIX=$p "$NETLAB" down >/dev/null 2>&1
        rm -f "$f"
    done
}

nlj_lab_up() {
    local tag=$1 n=$2 t0
    shift 2
    [ -z "$NLJ_PREFIX" ] || nlj_lab_down
    mkdir -p "$NLJ_OWNERS"
    nlj_sweep_orphans
    # At most 9 characters: netlab names a probe interface "<prefix>probe0" (15 max).
    while :; do
        NLJ_PREFIX="n${tag:0:3}$((RANDOM % 100000))"
        [ -e "/run/netns/$NLJ_PREFIX-sw" ] || [ -e "$NLJ_OWNERS/$NLJ_PREFIX.pid" ] || break
    done
    echo $$ >"$NLJ_OWNERS/$NLJ_PREFIX.pid"
    export NETLAB_PREFIX=$NLJ_PREFIX
    t0=$(nlj_now)
    if ! "$NETLAB" up "$n" "$@" >"$NLJ_LOGDIR/netlab-up-$NLJ_PREFIX.log" 2>&1; then
        echo "FAIL: $NLJ_NAME: netlab up $n $* failed:"
        sed 's/^/    /' "$NLJ_LOGDIR/netlab-up-$NLJ_PREFIX.log"
        exit 1
    fi
    echo "lab '$NLJ_PREFIX': $n hosts${*:+ ($*)}, up in $(nlj_calc 'b - a' "a=$t0" "b=$(nlj_now)") s"
}

nlj_lab_down() {
    [ -n "$NLJ_PREFIX" ] || return 0
    nlj_kill_ranks
    NETLAB_PREFIX=$NLJ_PREFIX "$NETLAB" down >/dev/null 2>&1
    local left=(/run/netns/"$NLJ_PREFIX"-*)
    if [ -e "${left[0]}" ]; then
        echo "WARNING: namespaces of lab '$NLJ_PREFIX' survived netlab down: ${left[*]##*/}"
    else
        rm -f "$NLJ_OWNERS/$NLJ_PREFIX.pid"
    fi
    NLJ_PREFIX=""
}

nlj_cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    nlj_lab_down
    if [ -n "$NLJ_LOGDIR" ] && [ -d "$NLJ_LOGDIR" ]; then
        if [ "$rc" = 0 ] && [ "$NLJ_FAILS" = 0 ] && [ "${NLJ_KEEP_LOGS:-0}" = 0 ]; then
            rm -rf "$NLJ_LOGDIR"
        else
            echo "logs: $NLJ_LOGDIR"
        fi
    fi
    exit "$rc"
}

# SIGKILL every rank of the current job that has not exited; nothing else.
nlj_kill_ranks() {
    local r pid
    [ -n "$NLJ_DIR" ] || return 0
    for ((r = 0; r < NLJ_N; r++)); do
        [ -e "$NLJ_DIR/rank$r.exit" ] && continue
        pid=$(cat "$NLJ_DIR/rank$r.pid" 2>/dev/null) || continue
        kill -KILL "$pid" 2>/dev/null
    done
    wait 2>/dev/null
}

# A port on h0 that nothing uses (the lab's namespaces are fresh, but a second job in
# the same lab must not meet the first one's TIME_WAIT sockets), different from the last.
nlj_free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 20000))
        [ "$p" = "$NLJ_PORT" ] && continue
        [ -z "$(ip netns exec "$NLJ_PREFIX-h0" ss -Htan "( sport = :$p or sport = :$((p + 1)) )" 2>/dev/null)" ] && break
    done
    echo "$p"
}

nlj_launch() {
    local hosts=$1 per=$2 h l r master secret extra=()
    shift 2
    read -ra extra <<<"${NLJ_RANK_ENV:-}"
    nlj_kill_ranks
    NLJ_JOB=$((NLJ_JOB + 1))
    NLJ_DIR=$NLJ_LOGDIR/job$NLJ_JOB
    mkdir -p "$NLJ_DIR"
    NLJ_N=$((hosts * per))
    NLJ_R=$per
    NLJ_PORT=$(nlj_free_port)
    master=$("$NETLAB" ip 0) || exit 1
    secret=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
    NLJ_RC=()
    NLJ_TEXIT=()
    NLJ_KILLED=()
    echo "job $NLJ_JOB: $hosts hosts x $per ranks, rendezvous $master:$NLJ_PORT: $*"
    echo "$hosts x $per: $*" >"$NLJ_DIR/cmd"
    NLJ_T_LAUNCH=$(nlj_now)
    for ((h = 0; h < hosts; h++)); do
        for ((l = 0; l < per; l++)); do
            r=$((h * per + l))
            # The wrapper stays in this namespace (netlab kill does not reach it) and
            # records the exit code and time; `netlab exec` execs, so $! is the rank.
            (
                trap - EXIT INT TERM HUP
                "$NETLAB" exec "$h" env -u OBC_RANK -u OBC_NRANKS -u OBC_BOOTSTRAP \
                    -u OBC_HOST_ID -u TORCHELASTIC_USE_AGENT_STORE \
                    RANK=$r WORLD_SIZE=$NLJ_N LOCAL_RANK=$l LOCAL_WORLD_SIZE="$per" \
                    MASTER_ADDR="$master" MASTER_PORT="$NLJ_PORT" OBC_SECRET="$secret" \
                    "${extra[@]}" "$@" </dev/null >"$NLJ_DIR/rank$r.log" 2>&1 &
                echo $! >"$NLJ_DIR/rank$r.pid"
                wait $!
                rc=$?
                read -r up _ </proc/uptime
                echo "$rc $up" >"$NLJ_DIR/rank$r.exit.tmp"
                mv "$NLJ_DIR/rank$r.exit.tmp" "$NLJ_DIR/rank$r.exit"
            ) 2>/dev/null & # (no "Killed" job notices: a rank's own output is in its log)
        done
    done
}

nlj_host_of() { echo $(($1 / NLJ_R)); }
nlj_exited() { [ -e "$NLJ_DIR/rank$1.exit" ]; }

# Wait until every rank's log has a line matching the ERE; 1 (with a reason) if a rank
# exits first or SECS pass. NLJ_T_LINES: when it was reached.
nlj_wait_lines() {
    local re=$1 end r n files=()
    end=$(nlj_deadline_us "$2")
    for ((r = 0; r < NLJ_N; r++)); do files+=("$NLJ_DIR/rank$r.log"); done
    while :; do
        n=$(grep -lE -- "$re" "${files[@]}" 2>/dev/null | wc -l)
        if [ "$n" -ge "$NLJ_N" ]; then
            NLJ_T_LINES=$(nlj_now)
            return 0
        fi
        for ((r = 0; r < NLJ_N; r++)); do
            if nlj_exited "$r" && ! grep -qE -- "$re" "$NLJ_DIR/rank$r.log"; then
                echo "nlj: rank $r exited ($(cut -d' ' -f1 "$NLJ_DIR/rank$r.exit")) before" \
                    "printing /$re/"
                return 1
            fi
        done
        if [ "$(nlj_us)" -gt "$end" ]; then
            echo "nlj: only $n of $NLJ_N ranks printed /$re/ within $(nlj_scaled "$2") s"
            return 1
        fi
        sleep 0.1
    done
}

# A loop of nl_bcast_loop is running on every rank: all printed "started", then, a
# second later, a progress line ("rank R: N broadcasts at T").
nlj_wait_looping() {
    nlj_wait_lines '^rank [0-9]+: started' "${1:-30}" || return 1
    sleep 1
    nlj_wait_lines '^rank [0-9]+: [0-9]+ broadcasts at' 10
}

# The job never got going: say so, stop it, show every rank and end the test.
nlj_give_up() {
    nlj_fail "$1"
    nlj_wait 2
    echo "times from the launch (t=0):"
    nlj_table "$NLJ_T_LAUNCH"
    nlj_finish "${2:-}"
}

# Wait for every rank (at most SECS x multiplier), kill the rest, load the results.
nlj_wait() {
    local end r left pid status=0
    end=$(nlj_deadline_us "$1")
    while :; do
        left=0
        for ((r = 0; r < NLJ_N; r++)); do nlj_exited "$r" || left=$((left + 1)); done
        [ "$left" = 0 ] && break
        if [ "$(nlj_us)" -gt "$end" ]; then
            for ((r = 0; r < NLJ_N; r++)); do
                nlj_exited "$r" && continue
                pid=$(cat "$NLJ_DIR/rank$r.pid" 2>/dev/null)
                NLJ_KILLED[r]=1
                [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
            done
            wait
            break
        fi
        sleep 0.1
    done
    wait
    for ((r = 0; r < NLJ_N; r++)); do
        read -r "NLJ_RC[r]" "NLJ_TEXIT[r]" <"$NLJ_DIR/rank$r.exit" || {
            NLJ_RC[r]=255
            NLJ_TEXIT[r]=0
        }
        : "${NLJ_KILLED[r]:=0}"
        # Raced: it ended by itself (not by our SIGKILL) while the others were killed.
        [ "${NLJ_RC[r]}" != 137 ] && NLJ_KILLED[r]=0
        if [ "${NLJ_KILLED[r]}" = 1 ]; then
            echo "nlj: rank $r (host $(nlj_host_of "$r")) still running $(nlj_scaled "$1") s" \
                "after the wait began: killed (SIGKILL)"
        fi
        [ "${NLJ_RC[r]}" = 0 ] && [ "${NLJ_KILLED[r]}" = 0 ] || status=1
    done
    return $status
}

# The program's closing line ("rank R: OK|ERROR|WRONG DATA ..."), its time and message.
nlj_result_line() { grep -E "^rank $1: (OK|ERROR|WRONG DATA)" "$NLJ_DIR/rank$1.log" | tail -n 1; }
nlj_err_time() { nlj_result_line "$1" | sed -nE 's/^rank [0-9]+: (ERROR|WRONG DATA) .* at ([0-9]+\.[0-9]+): .*/\2/p'; }
nlj_err_msg() { nlj_result_line "$1" | sed -nE 's/^rank [0-9]+: (ERROR|WRONG DATA) .* at [0-9]+\.[0-9]+: //p'; }
# The closing line, else (a program without one, e.g. bcast_matrix) the log's last line.
nlj_last_words() {
    local line
    line=$(nlj_result_line "$1")
    [ -n "$line" ] || line=$(grep -v '^[[:space:]]*$' "$NLJ_DIR/rank$1.log" | tail -n 1)
    printf '%s\n' "$line" | cut -c1-300
}
# As obct_msg_names_rank: "rank R" (also "rank=R", "rank: R", "rank #R"), R a whole number.
nlj_names_rank() { printf '%s\n' "$1" | grep -qiE "rank[ =:#]*$2([^0-9]|\$)"; }
# Seconds from T0 to the exit of rank r.
nlj_since() { nlj_calc 'b - a' "a=$1" "b=$2"; }

nlj_ok() { echo "ok: $*"; }
nlj_fail() {
    echo "FAIL: $*"
    NLJ_FAILS=$((NLJ_FAILS + 1))
    case " $NLJ_FAILED_JOBS " in *" $NLJ_JOB "*) ;; *) NLJ_FAILED_JOBS="$NLJ_FAILED_JOBS $NLJ_JOB" ;; esac
}
nlj_check() {
    local desc=$1
    shift
    if "$@"; then nlj_ok "$desc"; else nlj_fail "$desc"; fi
}

# Every rank of the job exited 0 by itself.
nlj_expect_all_ok() {
    local r bad=0
    for ((r = 0; r < NLJ_N; r++)); do
        if [ "${NLJ_KILLED[r]}" = 1 ]; then
            nlj_fail "job $NLJ_JOB rank $r (host $(nlj_host_of "$r")) hung: killed by the harness"
            bad=1
        elif [ "${NLJ_RC[r]}" != 0 ]; then
            nlj_fail "job $NLJ_JOB rank $r (host $(nlj_host_of "$r")) exited ${NLJ_RC[r]}:" \
                "$(nlj_last_words "$r")"
            bad=1
        fi
    done
    [ "$bad" = 0 ] && nlj_ok "job $NLJ_JOB ($(cat "$NLJ_DIR/cmd")): all $NLJ_N ranks exited 0"
    return $bad
}

# One line per rank: exit code, exit time from T0, the program's closing line.
nlj_table() {
    local t0=$1 r
    for ((r = 0; r < NLJ_N; r++)); do
        printf '  rank %-2d host %d exit %-3s at %+8.3f s%s  %s\n' "$r" "$(nlj_host_of "$r")" \
            "${NLJ_RC[r]}" "$(nlj_since "$t0" "${NLJ_TEXIT[r]}")" \
            "$([ "${NLJ_KILLED[r]}" = 1 ] && echo ' (killed by harness)')" \
            "$(nlj_last_words "$r" | cut -c1-200)"
    done
}

nlj_tails() {
    local j r d
    for j in ${NLJ_FAILED_JOBS:-$NLJ_JOB}; do
        d=$NLJ_LOGDIR/job$j
        [ -d "$d" ] || continue
        for f in "$d"/rank*.log; do
            r=${f##*/rank}
            r=${r%.log}
            echo "----- job $j ($(cat "$d/cmd")) rank $r: exit $(cut -d' ' -f1 "$d/rank$r.exit" 2>/dev/null || echo '?'), last ${NLJ_TAIL:-12} lines -----"
            tail -n "${NLJ_TAIL:-12}" "$f" | cut -c1-400
        done
    done
}

nlj_finish() {
    if [ "$NLJ_FAILS" -gt 0 ]; then
        nlj_tails
        if grep -qs "TCP transport is issue #4" "$NLJ_LOGDIR"/job*/rank*.log; then
            echo "NOTE: obc refused a communicator that spans hosts (no TCP transport in this" \
                "build, issue #4): expected until that lands."
        fi
        echo "$NLJ_NAME: FAIL ($NLJ_FAILS check(s) failed)${1:+; $1}"
        exit 1
    fi
    echo "$NLJ_NAME: PASS${1:+ ($1)}"
    exit 0
}

# After a fault on host VICTIM at time T0 (nlj_now) and nlj_wait: every rank of the other
# hosts must have failed with an obc error (exit 2) within LIMIT seconds of T0, with a
# message naming rank A or rank B. WHAT names the fault in the report ("cut", "kill").
# Sets NLJ_WORST (the slowest survivor's time).
nlj_check_survivors() {
    local victim=$1 t0=$2 limit=$3 what=$4 a=$5 b=$6 r dt msg
    NLJ_WORST=0
    for ((r = 0; r < NLJ_N; r++)); do
        [ "$(nlj_host_of "$r")" = "$victim" ] && continue
        dt=$(nlj_since "$t0" "${NLJ_TEXIT[r]}")
        msg=$(nlj_err_msg "$r")
        if [ "${NLJ_KILLED[r]}" = 1 ] || [ "${NLJ_RC[r]}" != 2 ] || [ -z "$msg" ]; then
            nlj_fail "rank $r: want an obc error (exit 2) after the $what, got exit ${NLJ_RC[r]}$([ "${NLJ_KILLED[r]}" = 1 ] && echo ' (hung: killed by the harness)'): $(nlj_result_line "$r" | cut -c1-200)"
            continue
        fi
        NLJ_WORST=$(nlj_calc 'd > w ? d : w' "d=$dt" "w=$NLJ_WORST")
        if awk -v d="$dt" -v l="$limit" 'BEGIN { exit !(d >= 0 && d <= l) }'; then
            nlj_ok "rank $r failed $dt s after the $what (<= $limit s)"
        else
            nlj_fail "rank $r exited $dt s after the $what (want 0 .. $limit s)"
        fi
        if nlj_names_rank "$msg" "$a" || nlj_names_rank "$msg" "$b"; then
            nlj_ok "rank $r's message names rank $a or $b"
        else
            nlj_fail "rank $r's message names neither rank $a nor rank $b: $msg"
        fi
    done
}
