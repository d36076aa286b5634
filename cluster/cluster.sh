#!/bin/sh
# A 3-node NATS JetStream cluster on 127.0.0.1, started and stopped by pid.
#
#   cluster.sh start DIR          start nodes n1 n2 n3 (state, logs and pids in DIR)
#   cluster.sh stop DIR           stop every node (TERM, then KILL after 5 s)
#   cluster.sh kill NODE DIR      kill -9 one node (n1, n2 or n3)
#   cluster.sh restart NODE DIR   start a killed node again, with its stored state
#   cluster.sh pause NODE DIR     freeze one node (SIGSTOP): unreachable, as behind a
#                                 network partition, but nothing of its state is lost
#   cluster.sh resume NODE DIR    let a paused node run again (SIGCONT)
#   cluster.sh urls               the client URLs, comma-separated
#
# Ports: clients PORT_BASE+0..2 (the environment's, else cluster.conf's beside
# this script, as for every role of typingd-cluster), routes +2000, monitoring
# +4000. Every node runs
# under `timeout` (CLUSTER_LIFETIME seconds, default 600: a forgotten cluster ends
# by itself; give a larger value for longer use).
set -eu
here=$(dirname "$(readlink -f "$0")")
case ${1:-} in -h|--help|help) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;; esac
# PORT_BASE: the environment's, else cluster.conf's (read as the shell reads it,
# in a subshell), checked: one line when malformed. Only start, restart and urls
# need it: the others go by pid.
port_base() {
    if [ -n "${PORT_BASE:-}" ]; then
        base=$PORT_BASE from="the environment"
    else
        base=$( (. "$here/cluster.conf" && printf '%s' "${PORT_BASE:-}") ) \
            || { echo "cluster.sh: $here/cluster.conf does not read as shell" >&2; exit 1; }
        from=$here/cluster.conf
    fi
    case $base in
    ''|*[!0-9]*) echo "cluster.sh: PORT_BASE=\"$base\" ($from) is not a whole number from 1 to 61533" >&2; exit 1 ;;
    esac
    if [ ${#base} -gt 5 ] || [ "$base" -lt 1 ] || [ "$base" -gt 61533 ]; then
        echo "cluster.sh: PORT_BASE=$base ($from) is not a whole number from 1 to 61533" >&2; exit 1
    fi
}
lifetime=${CLUSTER_LIFETIME:-600}

urls() {
    echo "nats://127.0.0.1:$base,nats://127.0.0.1:$((base + 1)),nats://127.0.0.1:$((base + 2))"
}

start_node() { # NODE INDEX DIR
    node=$1 i=$2 dir=$3
    if [ -s "$dir/$node.pid" ] && grep -q "nats-server" "/proc/$(cat "$dir/$node.pid")/cmdline" 2>/dev/null; then
        echo "cluster.sh: $node is already running (pid $(cat "$dir/$node.pid"))" >&2; exit 1
    fi
    mkdir -p "$dir/$node"
    cat > "$dir/$node.conf" <<CONF
server_name: $node
listen: 127.0.0.1:$((base + i))
http: 127.0.0.1:$((base + 4000 + i))
jetstream { store_dir: "$dir/$node" }
cluster {
    name: typingd
    listen: 127.0.0.1:$((base + 2000 + i))
    routes: [
        nats-route://127.0.0.1:$((base + 2000))
        nats-route://127.0.0.1:$((base + 2001))
        nats-route://127.0.0.1:$((base + 2002))
    ]
}
CONF
    rm -f "$dir/$node.pid"
    timeout --signal=KILL "$lifetime" nats-server -c "$dir/$node.conf" -P "$dir/$node.pid" \
        >> "$dir/$node.log" 2>&1 &
    tries=0
    while [ ! -s "$dir/$node.pid" ]; do
        tries=$((tries + 1))
        if [ $tries -gt 100 ]; then echo "cluster.sh: $node did not start; see $dir/$node.log" >&2; exit 1; fi
        sleep 0.05
    done
}

stop_node() { # NODE DIR SIGNAL
    pidfile="$2/$1.pid"
    [ -s "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    # A node that ended on its own (its lifetime) left its pid file: signal the
    # pid only while it is still that nats-server.
    if ! grep -q "nats-server" "/proc/$pid/cmdline" 2>/dev/null; then rm -f "$pidfile"; return 0; fi
    kill "-$3" "$pid" 2>/dev/null || true
    if [ "$3" = TERM ]; then
        tries=0
        while kill -0 "$pid" 2>/dev/null; do
            tries=$((tries + 1))
            if [ $tries -gt 100 ]; then kill -KILL "$pid" 2>/dev/null || true; break; fi
            sleep 0.05
        done
    else
        while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    fi
    rm -f "$pidfile"
}

index_of() {
    case $1 in n1) echo 0 ;; n2) echo 1 ;; n3) echo 2 ;; *) echo "cluster.sh: no node $1" >&2; exit 64 ;; esac
}

usage() { sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 64; }

case ${1:-} in
start)
    [ $# -ge 2 ] || usage
    port_base
    dir=$2; mkdir -p "$dir"
    for node in n1 n2 n3; do start_node "$node" "$(index_of $node)" "$dir"; done ;;
stop)
    [ $# -ge 2 ] || usage
    for node in n1 n2 n3; do stop_node "$node" "$2" TERM; done ;;
kill)
    [ $# -ge 3 ] || usage
    index_of "$2" > /dev/null; stop_node "$2" "$3" KILL ;;
restart)
    [ $# -ge 3 ] || usage
    port_base
    start_node "$2" "$(index_of "$2")" "$3" ;;
pause|resume)
    [ $# -ge 3 ] || usage
    index_of "$2" > /dev/null
    pid=$(cat "$3/$2.pid" 2>/dev/null || true)
    if [ -z "$pid" ] || ! grep -q "nats-server" "/proc/$pid/cmdline" 2>/dev/null; then
        echo "cluster.sh: $2 is not running" >&2; exit 1
    fi
    if [ "$1" = pause ]; then kill -STOP "$pid"; else kill -CONT "$pid"; fi ;;
urls)
    port_base
    urls ;;
*)
    usage ;;
esac
