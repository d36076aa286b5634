#!/bin/sh
# The fault suite: faults a cluster meets, and mistakes an operator makes, each on a real 3-node cluster.
#
#   cluster/faults.sh [--quick | --all | SCENARIO ...]
#
# Scenarios (--quick, the default: all but paced, big-snapshot, node-freeze, quorum-45 and quorum-75):
#   steady          4 shards, the router unpaced: the baseline
#   paced           the router paced at 5,000 lines/s
#   backlog         everything routed (8 lines a message) before the shards start
#   two-shards      two runners per partition; partition 1's owner killed (kill -9)
#   shard-kill      partition 1's owner killed (kill -9) after a snapshot, no standby;
#                   a new shard rebuilds from the snapshot and the stream
#   big-snapshot    a state whose snapshot is 200 MB (many times the servers' max
#                   payload): stored in chunks, and a new owner restores it exactly
#   router-sigterm  SIGTERM mid-run, restarted with the same --name
#   router-kill     kill -9 mid-run, restarted with the same --name
#   router-same-name  a second router with the running one's --name: refused (exit
#                   75) before it reads a line; the first stores everything once
#   consumer-node   the node holding partition 1's consumer killed (kill -9) mid-run,
#                   started again 10 s later: its owner makes the consumer anew
#                   (leases of 30 s here, to outlive the lease bucket's election)
#   consumer-stall  partition 1's consumer replaced by one that delivers nothing and
#                   says 0 pending (as one on a node that came back did in CI); half
#                   the input routed: once ctl idle says so, every owner must have
#                   applied its partition (partition 1's from the stream); the rest
#                   routed over 10 s: after 3 stalls the owner makes its consumer anew
#   node-freeze     the node the router and partition 1's owner are connected to
#                   frozen (SIGSTOP) 30 s mid-run: both move to another node within
#                   two ping intervals; input stalls no longer than that plus an
#                   election (20 s allowed); no owner starts over
#   node-return     the node leading the lease bucket frozen 12 s, then let go: the
#                   leases outlive the election and its return, no owner starts over
#   quorum-15       two of the three nodes frozen (SIGSTOP) 15 s mid-run (snapshots every 10)
#   quorum-45       the same for 45 s
#   quorum-75       the same for 75 s
#   slow-gateway    a gateway for every viewer, 10 ms a message
#   router-stopped-while-typing  live input, stamped; the router ends while people type:
#                   the owners' ticks clear typing at its deadline (and, under
#                   --announce-after-ms, make the announcements due then)
#   two-routers     two stamping routers at once, half the conversations each
# Operator mistakes (each also ends "nothing lost"):
#   setup-live      `ctl setup` run again on a running cluster that holds data: it
#                   changes nothing and says so; `ctl wipe` is refused while owners
#                   hold leases; a forced wipe at the end keeps owner epochs rising
#   router-new-input  a router name used for one input, then given another: refused
#                   (exit 64) before storing a line; --new-input then routes it whole
#   settings-typo   PARTITONS=8 and a line that is not NAME=VALUE in --config: every
#                   role stops naming the file and line (did you mean PARTITIONS?);
#                   --partitions 8 on a 4-partition cluster: every role refuses (78)
#   no-jetstream    every role on a server without JetStream, then on one not set up:
#                   each says so and exits 78 within seconds
#   line-gap        a router's line numbers jump (lines lost before the stream): the
#                   shard logs the gap and counts it in its stats (lines_missing)
# Each ends with: 0 conversations differing from one typingd (compare.py; for the
# stamped ones, one typingd per partition fed the lines the partition applied),
# every gateway viewer on the right final indicator (faults.py finals), nothing
# lost or doubled (faults.py applied); one line per scenario, then "N passed, N
# failed" (exit 1 on a failure). Every process runs under `timeout` and is
# stopped by its pid; 127.0.0.1 only. Reads cluster.conf (PARTITIONS,
# TYPINGD_OPTIONS, LEASE_TTL, STORAGE, REPLICAS); environment: PORT_BASE (the
# environment's, else 17222: never cluster.conf's, so that a cluster started from
# the README is left alone), FAULTS_LINES (30000, before the workload's
# additions), TYPINGD_BINARY (the reference typingd), TYPINGD_CLUSTER (another
# typingd-cluster, to see a check fail), KEEP=1 to keep the work folder. The
# harness (harness/*.py) reads the stream with nats-py, in cluster/.venv (made
# when missing).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
scenarios=""
mistakes="setup-live router-new-input settings-typo no-jetstream line-gap"
quick="steady backlog two-shards shard-kill router-sigterm router-kill router-same-name node-return consumer-node consumer-stall quorum-15 slow-gateway router-stopped-while-typing two-routers $mistakes"
all="steady paced backlog two-shards shard-kill big-snapshot router-sigterm router-kill router-same-name node-freeze node-return consumer-node consumer-stall quorum-15 quorum-45 quorum-75 slow-gateway router-stopped-while-typing two-routers $mistakes"
for arg in "$@"; do
    case $arg in
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    --quick) scenarios="$scenarios $quick" ;;
    --all) scenarios="$scenarios $all" ;;
    -*) echo "faults.sh: unknown option $arg" >&2; exit 64 ;;
    *) case " $all " in *" $arg "*) scenarios="$scenarios $arg" ;;
       *) echo "faults.sh: no scenario $arg (see --help)" >&2; exit 64 ;; esac ;;
    esac
done
[ -n "$scenarios" ] || scenarios=$quick

# The configuration: cluster.conf, the environment winning; its own ports.
port_base=${PORT_BASE:-17222}
for key in PARTITIONS TYPINGD_OPTIONS LEASE_TTL STORAGE REPLICAS; do eval "saved_$key=\${$key-}"; done
. "$here/cluster.conf"
for key in PARTITIONS TYPINGD_OPTIONS LEASE_TTL STORAGE REPLICAS; do
    eval "[ -z \"\$saved_$key\" ] || $key=\$saved_$key"
done
PORT_BASE=$port_base
export PORT_BASE
partitions=$PARTITIONS
lines=${FAULTS_LINES:-30000}
cd "$root"   # TYPINGD_OPTIONS' paths are the repository's

"$here/scripts/install-deps.sh"
py=$("$here/scripts/harness-venv.sh")
typingd=${TYPINGD_BINARY:-$root/.build/release/typingd}
[ -x "$typingd" ] || { echo "faults.sh: no typingd at $typingd (swift build -c release at the root)" >&2; exit 1; }
bin=${TYPINGD_CLUSTER:-$here/.build/release/typingd-cluster}
[ -x "$bin" ] || { echo "faults.sh: no typingd-cluster at $bin (swift build -c release in $here)" >&2; exit 1; }
export TYPINGD_CLUSTER=$bin

work=$(mktemp -d "${TMPDIR:-/tmp}/typingd-faults.XXXXXX")
export CLUSTER_LIFETIME=${CLUSTER_LIFETIME:-1800}
urls=$("$here/cluster.sh" urls)
pids=""
kill_tree() { # PID: its children first (processes run under `timeout`), then it
    for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do kill_tree "$child"; done
    kill -KILL "$1" 2>/dev/null || true
}
cleanup() {
    for pid in $pids; do kill_tree "$pid"; done
    "$here/cluster.sh" stop "$work/nats" 2>/dev/null || true
    if [ "${KEEP:-0}" = 1 ]; then echo "faults.sh: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
ctl() { what=$1; shift; timeout 150 "$bin" ctl "$what" --servers "$urls" "$@"; }
fpy() { timeout 300 "$py" "$here/harness/faults.py" "$@"; }
wait_for() { # FILE PATTERN SECONDS
    tries=0
    until grep -q "$2" "$1" 2>/dev/null; do
        tries=$((tries + 1)); [ $tries -lt $(($3 * 10)) ] || return 1; sleep 0.1
    done
}

# shard P LABEL [SHARD OPTIONS...]: one runner (its audit and log: $dir/audit-P-LABEL, shard-P-LABEL.log)
shard() {
    p=$1 label=$2; shift 2
    # shellcheck disable=SC2086
    timeout -s KILL 600 "$bin" shard --servers "$urls" --partition "$p" \
        --lease-ttl "$LEASE_TTL" --replicas "$REPLICAS" --audit "$dir/audit-$p-$label" "$@" -- $TYPINGD_OPTIONS \
        >> "$dir/shard-$p-$label.log" 2>&1 &
    last_pid=$!
    pids="$pids $last_pid"
    shard_pids="$shard_pids $last_pid"
    eval "pid_${p}_$label=$last_pid"
}
shards() { # LABEL [OPTIONS...]: one per partition, each caught up
    label=$1; shift
    p=0; while [ $p -lt "$partitions" ]; do shard $p "$label" "$@"; p=$((p + 1)); done
    p=0; while [ $p -lt "$partitions" ]; do
        wait_for "$dir/shard-$p-$label.log" "caught up" 120 || { echo "  shard $p did not catch up" >&2; status=1; }
        p=$((p + 1))
    done
}
stop_pids() { # PIDS...: SIGTERM, wait
    for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}
gateway() { # [WATCH OPTIONS...]
    timeout -s KILL 900 "$bin" gateway --servers "$urls" --partitions "$partitions" --finals "$dir/finals.jsonl" \
        "$@" > "$dir/watched.jsonl" 2> "$dir/watch.log" &
    gateway_pid=$!
    pids="$pids $gateway_pid"
    wait_for "$dir/watch.log" "subscribed" 30 || { echo "  the gateway did not subscribe" >&2; return 1; }
}
router() { # NAME INPUT [ROUTER OPTIONS...]  (in the background: $router_pid)
    name=$1 input=$2; shift 2
    timeout -s KILL 600 "$bin" route --servers "${router_servers:-$urls}" --partitions "$partitions" --name "$name" "$@" \
        < "$input" 2>> "$dir/router-$name.log" &
    router_pid=$!
    pids="$pids $router_pid"
}
# A fresh stream, snapshot store and lease bucket (ctl wipe --force: the previous
# scenario's killed owners may still hold leases); a folder for the scenario. A
# typingd-cluster without `ctl wipe` (TYPINGD_CLUSTER, an older build) has a
# setup that wipes.
fresh="wipe --force"
"$bin" ctl --help 2>/dev/null | grep -q "^ *wipe " || fresh=setup
begin() { # NAME
    scenario=$1 dir=$work/$1 shard_pids="" figures="" status=0 began=$(now)
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    ctl $fresh --storage "$STORAGE" --replicas "$REPLICAS" --lease-ttl "$LEASE_TTL" > "$dir/setup.log" 2>&1 \
        || { cat "$dir/setup.log" >&2; return 1; }
}
idle() { ctl idle --partitions "$partitions" --timeout "${1:-120}" > "$dir/idle.log" 2>&1 || { cat "$dir/idle.log" >&2; status=1; }; }
# check LABEL COMMAND...: runs a check, keeps its last line as a figure, counts a failure
check() {
    label=$1; shift
    if "$@" > "$dir/check-$label.log" 2>&1; then :; else status=1; sed 's/^/    /' "$dir/check-$label.log" | tail -n 12; fi
    figures="$figures; $(tail -n 1 "$dir/check-$label.log")"
}
# The three checks of a scenario on the workload (the reference: one typingd on it).
checks() { # VIEWERS_OPTION AUDITS...
    viewers=$1; shift
    check compare timeout 300 "$py" "$here/harness/compare.py" "$work/reference.jsonl" "$@" --label compare
    check finals "$py" "$here/harness/faults.py" finals "$work/reference.jsonl" "$dir/finals.jsonl" $viewers \
        --input "$work/workload.jsonl"
}
end_gateway() {
    stop_pids "$gateway_pid"
    figures="$figures; $(sed -n 's/^\(watch\|gateway\): [0-9:.]* \([0-9]* viewers.*\)/gateway: \2/p' "$dir/watch.log" | tail -n 1)"
}
passed=0 failed=0 summary=""
finish() {
    stop_pids $shard_pids
    if [ $status -ne 0 ]; then   # what the routers and shards said last: for a failure seen only in CI
        for log in "$dir"/router-*.log "$dir"/shard-*.log; do
            [ -f "$log" ] || continue
            echo "  last lines of $(basename "$log"):" >&2
            tail -n 6 "$log" | sed 's/^/    /' >&2
        done
        for audit in "$dir"/audit-*; do   # each shard's records, to tell a lost record from a lost line
            [ -f "$audit" ] || continue
            echo "  $(basename "$audit"): $(grep -c "$(printf '\tE\t')" "$audit") records, $(grep -c '"event":"member"' "$audit") member, $(grep -c '"event":"snapshot"' "$audit") snapshot, $(grep -c '"event":"indicator"' "$audit") indicator events" >&2
        done
    fi
    line="$scenario: $([ $status -eq 0 ] && echo PASS || echo FAIL) in $(since "$began") s$figures"
    echo "$line"
    echo "$([ $status -eq 0 ] && echo PASS || echo FAIL) $scenario"
    summary="$summary
$line"
    if [ $status -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
router_figure() { # NAME
    figures="$figures; router $1: $(grep -h "lines in" "$dir/router-$1.log" | tail -n 1 | sed 's/^router: [0-9:.]* //')"
}

echo "faults.sh: workload of $lines lines, one typingd for reference; cluster on 127.0.0.1:$PORT_BASE"
# Without the workload's last tick (far past every deadline): the run ends with
# typing still shown, so that the gateways' final indicators say something.
"$py" "$here/harness/workload.py" --lines "$lines" | grep -v '"cmd":"tick"' > "$work/workload.jsonl"
# shellcheck disable=SC2086
timeout 300 "$typingd" --clock manual --no-drain $TYPINGD_OPTIONS < "$work/workload.jsonl" > "$work/reference.jsonl"
total=$(wc -l < "$work/workload.jsonl")
"$py" "$here/harness/faults.py" viewers "$work/reference.jsonl" 50 > "$work/viewers"
"$py" "$here/harness/faults.py" viewers "$work/reference.jsonl" 0 > "$work/all-viewers"
"$py" "$here/harness/faults.py" unstamp < "$work/workload.jsonl" > "$work/live.jsonl"
# Its ports must be free: clients PORT_BASE+0..2, routes +2000, monitoring +4000
# (another cluster's routes or monitoring may sit where these clients would).
"$py" -c 'import socket, sys
b = int(sys.argv[1])
for port in [b + o + i for o in (0, 2000, 4000) for i in range(3)]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        sys.exit("faults.sh: port %d (PORT_BASE %d: clients +0..2, routes +2000, monitoring +4000) is taken: "
                 "give another PORT_BASE" % (port, b))
    finally:
        s.close()' "$PORT_BASE"
"$here/cluster.sh" start "$work/nats"
ctl ready > /dev/null
for node in n1 n2 n3; do
    kill -0 "$(cat "$work/nats/$node.pid")" 2>/dev/null || { echo "faults.sh: node $node died:" >&2; tail -n 3 "$work/nats/$node.log" >&2; exit 1; }
done
suite_began=$(now)

run_steady() {
    begin steady
    shards a --tick-ms 0 --snapshot-every 0
    gateway --viewers-file "$work/viewers"
    router steady "$work/workload.jsonl"
    wait "$router_pid" || status=1
    idle; end_gateway; router_figure steady
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "steady=$work/workload.jsonl" --whole
    finish
}

run_router_same_name() {
    # A copied unit file: a second router with the first one's --name, on the same
    # input, while the first runs. It must be refused before it routes a line (exit
    # 75, a message naming the holder); the first stores everything, once.
    begin router-same-name
    shards a --tick-ms 0 --snapshot-every 0
    gateway --viewers-file "$work/viewers"
    router same "$work/workload.jsonl" --rate $((total / 4))
    first=$router_pid
    wait_for "$dir/router-same.log" "reading at byte" 30 || status=1
    timeout -s KILL 120 "$bin" route --servers "$urls" --partitions "$partitions" --name same \
        < "$work/workload.jsonl" 2> "$dir/router-same-second.log" && second=0 || second=$?
    if [ "$second" -ne 75 ] || ! grep -q "is taken" "$dir/router-same-second.log" || grep -q "reading at byte" "$dir/router-same-second.log"; then
        echo "  the second router was not refused before reading (exit $second):" >&2
        sed 's/^/    /' "$dir/router-same-second.log" >&2
        status=1
    fi
    figures="$figures; the second router: exit $second, $(grep -c "is taken" "$dir/router-same-second.log") refusal"
    wait "$first" || status=1
    idle; end_gateway; router_figure same
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "same=$work/workload.jsonl" --whole
    finish
}

run_shard_kill() {
    # No standby: the owner of partition 1 killed (kill -9) once it has stored a
    # snapshot; a new shard waits out its lease (LEASE_TTL), rebuilds from the
    # snapshot and the stream, and takes over.
    begin shard-kill
    shards a --tick-ms 0 --snapshot-every 10
    gateway --viewers-file "$work/viewers"
    router shard-kill "$work/workload.jsonl" --rate $((total / 8))
    wait_for "$dir/shard-1-a.log" "older messages purged" 60 || { echo "  partition 1 stored no snapshot" >&2; status=1; }
    kill_tree "$pid_1_a"
    killed=$(now)
    shard 1 b --tick-ms 0 --snapshot-every 10
    if wait_for "$dir/shard-1-b.log" "caught up" 60; then
        figures="$figures; partition 1's owner killed; the new one caught up $(since "$killed") s later: $(sed -n 's/.*caught up in \([0-9]*\) ms: snapshot after seq \([0-9]*\) (\([0-9]*\) events), \([0-9]*\) messages replayed.*/\1 ms, snapshot after seq \2 (\3 events) + \4 messages/p' "$dir/shard-1-b.log" | head -n 1)"
        grep -q "caught up.*snapshot after seq [1-9]" "$dir/shard-1-b.log" || { echo "  the new owner did not rebuild from a snapshot" >&2; status=1; }
    else
        echo "  the new shard did not take over" >&2; status=1
    fi
    wait "$router_pid" || status=1
    idle; end_gateway; router_figure shard-kill
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "shard-kill=$work/workload.jsonl"
    finish
}

node_of_port() { echo "n$(($1 - PORT_BASE + 1))"; }
run_node_freeze() {
    begin node-freeze
    shards a --tick-ms 0 --snapshot-every 10
    port=$(sed -n 's|.*connected to nats://127.0.0.1:\([0-9]*\).*|\1|p' "$dir/shard-1-a.log" | tail -n 1)
    [ -n "$port" ] || { echo "  partition 1's shard did not say where it is connected" >&2; port=$PORT_BASE; status=1; }
    node=$(node_of_port "$port")
    gateway --viewers-file "$work/viewers"
    # The router on the same node (tried first): one frozen node holds both.
    router_servers="nats://127.0.0.1:$port"
    for other in 0 1 2; do [ $((PORT_BASE + other)) -eq "$port" ] || router_servers="$router_servers,nats://127.0.0.1:$((PORT_BASE + other))"; done
    router node-freeze "$work/workload.jsonl" --rate $((total / 45)) --servers-in-order
    router_servers=""
    wait_for "$dir/router-node-freeze.log" "connected to nats://127.0.0.1:$port" 30 || { echo "  the router is not on $node" >&2; status=1; }
    sleep 5
    "$here/cluster.sh" pause "$node" "$work/nats"
    sleep 30
    "$here/cluster.sh" resume "$node" "$work/nats"
    wait "$router_pid" || status=1
    idle 180; end_gateway; router_figure node-freeze
    # The longest a message waited to be stored, retries included.
    stall=$(sed -n 's/.*stored after \([0-9.]*\) s of waiting.*/\1/p' "$dir/router-node-freeze.log" | sort -n | tail -n 1)
    stall=${stall:-0}
    awk -v s="$stall" 'BEGIN { exit !(s <= 20) }' || { echo "  input stalled $stall s (allowed: 20)" >&2; status=1; }
    grep -q "reconnected" "$dir/router-node-freeze.log" || { echo "  the router never moved to another node" >&2; status=1; }
    over=$(cat "$dir"/shard-*.log | grep -c "starting over" || true)
    [ "$over" -eq 0 ] || { echo "  $over owners lost their lease and started over" >&2; status=1; }
    figures="$figures; node $node (the router's and partition 1's) frozen 30 s: the longest a message waited $stall s; owners that started over: $over"
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "node-freeze=$work/workload.jsonl"
    finish
}

run_node_return() {
    begin node-return
    shards a --tick-ms 0 --snapshot-every 10
    gateway --viewers-file "$work/viewers"
    router node-return "$work/workload.jsonl" --rate $((total / 30))
    sleep 3
    node=$(ctl leader --stream KV_typingd-leases --timeout 10) || { node=""; status=1; }
    if [ -n "$node" ]; then
        "$here/cluster.sh" pause "$node" "$work/nats"
        sleep 12
        "$here/cluster.sh" resume "$node" "$work/nats"
        back=$(now)
        sleep 8   # its return: leadership may move again
        figures="$figures; node $node (leading the lease bucket) frozen 12 s, then back; the bucket's leader now $(ctl leader --stream KV_typingd-leases --timeout 10 || echo none)"
    fi
    wait "$router_pid" || status=1
    idle 180; end_gateway; router_figure node-return
    over=$(cat "$dir"/shard-*.log | grep -c "starting over" || true)
    [ "$over" -eq 0 ] || { echo "  $over owners lost their lease and started over" >&2; status=1; }
    slowest=$(sed -n 's/.*lease renewed again after \([0-9.]*\) s.*/\1/p' "$dir"/shard-*.log | sort -n | tail -n 1)
    figures="$figures; owners that started over: $over; the longest renewal outage ${slowest:-0} s (tolerated: LEASE_TTL $LEASE_TTL s less one renewal interval)"
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "node-return=$work/workload.jsonl"
    finish
}

run_big_snapshot() {
    # 200 MB of state or more: 2 million members with names of random base64 (they do
    # not deflate away) in 1,000 conversations of partition 1. Its owner stores a
    # snapshot of it (many chunks of at most the servers' max payload) and is
    # killed; then the rest of the input (typing, a snapshot, stats) is routed
    # while no owner runs, and a new owner restores the snapshot and applies it:
    # its events and final snapshot equal one typingd's on the whole input.
    begin big-snapshot
    "$py" "$here/harness/faults.py" big-state --megabytes 240 > "$dir/input.jsonl"
    grep '"name"' "$dir/input.jsonl" > "$dir/input-1.jsonl"
    grep -v '"name"' "$dir/input.jsonl" > "$dir/input-2.jsonl"
    # shellcheck disable=SC2086
    timeout 600 "$typingd" --clock manual --no-drain $TYPINGD_OPTIONS < "$dir/input.jsonl" > "$dir/reference.jsonl"
    shards a --tick-ms 0 --snapshot-every 440 --snapshot-timeout 120
    router big-1 "$dir/input-1.jsonl"
    wait "$router_pid" || status=1
    wait_for "$dir/shard-1-a.log" "snapshot after seq.*stored" 600 || { echo "  partition 1 stored no snapshot" >&2; status=1; }
    stored=$(grep -o "snapshot after seq [0-9]* ([^)]*) stored" "$dir/shard-1-a.log" | tail -n 1)
    raw_kib=$(echo "$stored" | sed -n 's/.* events, \([0-9]*\) KiB, .*/\1/p')
    [ "${raw_kib:-0}" -ge 200000 ] || { echo "  the snapshot is not of about 200 MB: $stored" >&2; status=1; }
    kill_tree "$pid_1_a"
    killed=$(now)
    router big-2 "$dir/input-2.jsonl"
    wait "$router_pid" || status=1
    shard 1 b --tick-ms 0 --snapshot-every 0 --snapshot-timeout 120
    wait_for "$dir/shard-1-b.log" "caught up" 600 || { echo "  the new owner did not catch up" >&2; status=1; }
    figures="$figures; partition 1: $stored; a new owner caught up $(since "$killed") s after the kill: $(sed -n 's/.*\(caught up in [0-9]* ms: snapshot after seq [0-9]* ([0-9]* events), [0-9]* messages replayed\).*/\1/p' "$dir/shard-1-b.log" | head -n 1)"
    grep -q "caught up.*snapshot after seq [1-9][0-9]* ([0-9]* events), [1-9][0-9]* messages replayed" "$dir/shard-1-b.log" \
        || { echo "  the new owner did not restore a snapshot and apply what came after it" >&2; status=1; }
    idle 300
    stop_pids $shard_pids; shard_pids=""
    check compare timeout 900 "$py" "$here/harness/compare.py" "$dir/reference.jsonl" "$dir"/audit-* --label compare
    finish
}

run_paced() {
    begin paced
    shards a --tick-ms 0 --snapshot-every "$SNAPSHOT_EVERY"
    gateway --viewers-file "$work/viewers"
    router paced "$work/workload.jsonl" --rate 5000
    wait "$router_pid" || status=1
    idle; end_gateway; router_figure paced
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "paced=$work/workload.jsonl"
    finish
}

run_backlog() {
    begin backlog
    router backlog "$work/workload.jsonl" --batch-lines 8 --linger-ms 0
    wait "$router_pid" || status=1
    router_figure backlog
    gateway --viewers-file "$work/viewers"
    started=$(now)
    shards a --tick-ms 0 --snapshot-every 0
    caught=$(since "$started")
    messages=$(ctl info --partitions "$partitions" 2>/dev/null | grep -o "messages [0-9]*" | head -n 1 || true)
    replayed=$(grep -ho "[0-9]* messages replayed" "$dir"/shard-*-a.log | awk '{ n += $1; if ($1 > m) m = $1 } END { print n, m }')
    figures="$figures; 4 shards drained ${replayed% *} messages (the largest partition ${replayed#* }) in $caught s"
    idle; end_gateway
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "backlog=$work/workload.jsonl" --whole
    finish
}

run_two_shards() {
    begin two-shards
    shards a --tick-ms 0 --snapshot-every 10
    p=0; while [ $p -lt "$partitions" ]; do shard $p b --tick-ms 0 --snapshot-every 10; p=$((p + 1)); done
    p=0; while [ $p -lt "$partitions" ]; do
        wait_for "$dir/shard-$p-b.log" "standby\|held by" 30 || true; p=$((p + 1))
    done
    gateway --viewers-file "$work/viewers"
    router two-shards "$work/workload.jsonl" --rate $((total / 6))
    sleep 2
    kill_tree "$pid_1_a"   # the shard under its `timeout`, with its typingd
    killed=$(now)
    wait_for "$dir/shard-1-b.log" "caught up" 60 || status=1
    figures="$figures; partition 1's owner killed, its standby caught up $(since "$killed") s later"
    wait "$router_pid" || status=1
    idle; end_gateway
    checks "--viewers $work/viewers" $(for p in $(seq 0 $((partitions - 1))); do echo "$dir/audit-$p-a $dir/audit-$p-b"; done)
    check applied fpy applied --servers "$urls" --input "two-shards=$work/workload.jsonl"
    # The standbys of the other partitions published nothing.
    extra=$(for p in 0 2 3; do cat "$dir/audit-$p-b" 2>/dev/null; done | wc -l)
    [ "$extra" -eq 0 ] || status=1
    figures="$figures; standbys of partitions 0, 2, 3 wrote $extra events"
    finish
}

router_restart() { # NAME SIGNAL
    begin "$1"
    shards a --tick-ms 0 --snapshot-every 0
    gateway --viewers-file "$work/viewers"
    router "$1" "$work/workload.jsonl" --rate $((total / 4))
    sleep 1.5
    if [ "$2" = KILL ]; then kill_tree "$router_pid"; else kill -TERM "$router_pid"; fi   # `timeout` passes TERM on
    wait "$router_pid" || true
    figures="$figures; $(grep -ho "stored through byte [0-9]*" "$dir/router-$1.log" | head -n 1 || echo "killed")"
    router "$1" "$work/workload.jsonl"
    wait "$router_pid" || status=1
    idle; end_gateway; router_figure "$1"
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "$1=$work/workload.jsonl" --whole
    finish
}
run_router_sigterm() { router_restart router-sigterm TERM; }
run_router_kill() { router_restart router-kill KILL; }

run_consumer_node() {
    # Leases with room to spare: the node killed may lead the lease bucket too,
    # and this row is about the consumer, not about an owner starting over (that
    # is node-return's). 30 s tolerates 29 s of failed renewals.
    ttl=$LEASE_TTL LEASE_TTL=30
    begin consumer-node
    shards a --tick-ms 0 --snapshot-every 10
    LEASE_TTL=$ttl
    gateway --viewers-file "$work/viewers"
    router consumer-node "$work/workload.jsonl" --rate $((total / 12))
    sleep 2
    node=$(ctl leader --consumer 1 --timeout 10) || { node=""; status=1; }
    if [ -n "$node" ]; then
        "$here/cluster.sh" kill "$node" "$work/nats"
        killed=$(now)
        if wait_for "$dir/shard-1-a.log" "making it anew" 30; then
            figures="$figures; node $node (partition 1's consumer) killed, the consumer made anew $(since "$killed") s later"
        else
            echo "  partition 1 did not make its consumer anew within 30 s" >&2; status=1
            figures="$figures; node $node (partition 1's consumer) killed, the consumer NOT made anew"
        fi
        sleep 8
        "$here/cluster.sh" restart "$node" "$work/nats"
    fi
    wait "$router_pid" || status=1
    idle 180; end_gateway; router_figure consumer-node
    figures="$figures; consumers made anew: $(cat "$dir"/shard-*-a.log | grep -c "making it anew" || true)"
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "consumer-node=$work/workload.jsonl"
    finish
}

run_consumer_stall() {
    begin consumer-stall
    shards a --tick-ms 0 --snapshot-every 0
    gateway --viewers-file "$work/viewers"
    fpy stall-consumer --servers "$urls" --partition 1 > "$dir/stall.log" 2>&1 || { cat "$dir/stall.log" >&2; status=1; }
    # Half the input at once: idle must wait for partition 1's owner to apply it from
    # the stream (its consumer says 0 pending from the start).
    half=$((total / 2))
    head -n "$half" "$work/workload.jsonl" > "$dir/first-half.jsonl"
    router consumer-stall "$dir/first-half.jsonl"
    wait "$router_pid" || status=1
    idle 60
    check caught-up fpy caught-up --servers "$urls"
    # The rest (the router resumes at the byte it stored), paced: stalls 2 and 3.
    router consumer-stall "$work/workload.jsonl" --rate $((total / 20))
    wait "$router_pid" || status=1
    idle 60; end_gateway; router_figure consumer-stall
    stalls=$(grep -c "delivered nothing new" "$dir/shard-1-a.log" || true)
    remade=$(grep -c "stalled 3 times in a row: making it anew" "$dir/shard-1-a.log" || true)
    figures="$figures; $(tail -n 1 "$dir/stall.log"); partition 1's owner: $stalls stalls, consumer made anew after 3: $remade"
    [ "$remade" -ge 1 ] || { echo "  partition 1's owner did not make its stalled consumer anew" >&2; status=1; }
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "consumer-stall=$work/workload.jsonl" --whole
    finish
}

# supervised [SHARD OPTIONS...]: one shard per partition, no supervisor: a shard
# that loses its lease starts over in place as a standby (the same process runs
# itself again, appending to the same audit and log).
supervised() {
    shards 0 "$@"
}

quorum() { # SECONDS
    begin "quorum-$1"
    supervised --tick-ms 0 --snapshot-every 10
    gateway --viewers-file "$work/viewers"
    router "quorum-$1" "$work/workload.jsonl" --rate $((total / ($1 + 20)))
    sleep 5
    # Quorum lost as an outage: the two nodes frozen (SIGSTOP), unreachable as
    # behind a partition, then let go. Not kill -9: nats-server 2.9 acknowledges a
    # write once two nodes hold it, before it reaches the disk (sync_interval came
    # in 2.10), so killing two nodes at once can lose acknowledged messages, which
    # no client can make up for (seen: a partition's early messages gone).
    "$here/cluster.sh" pause n2 "$work/nats"
    "$here/cluster.sh" pause n3 "$work/nats"
    sleep "$1"
    "$here/cluster.sh" resume n2 "$work/nats"
    "$here/cluster.sh" resume n3 "$work/nats"
    back=$(now)
    wait "$router_pid" || status=1
    idle 180; end_gateway; router_figure "quorum-$1"
    figures="$figures; nodes n2 n3 down $1 s; idle $(since "$back") s after their restart; shards started over: $(cat "$dir"/shard-*.log | grep -c "starting over" || true)"
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "quorum-$1=$work/workload.jsonl"
    finish
}
run_quorum_15() { quorum 15; }
run_quorum_45() { quorum 45; }
run_quorum_75() { quorum 75; }

run_slow_gateway() {
    begin slow-gateway
    shards a --tick-ms 0 --snapshot-every "$SNAPSHOT_EVERY"
    # A gateway that bounds its queue (64 messages) and is busy 10 ms a message:
    # shards send one message per viewer bucket per fetch, so it must be that slow
    # to fall behind at 5,000 lines/s. It must drop messages (a slow-consumer
    # error) and resync, or this proves nothing.
    gateway --all-viewers --viewers-file "$work/all-viewers" --slow-ms 10 --pending-limit 64 --drain-s 300
    router slow-gateway "$work/workload.jsonl" --rate 5000
    wait "$router_pid" || status=1
    idle; end_gateway; router_figure slow-gateway
    grep -q "[1-9][0-9]* slow-consumer errors" "$dir/watch.log" \
        || { echo "  the gateway never fell behind (no slow-consumer error): nothing to resync from" >&2; status=1; }
    checks "--viewers $work/all-viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "slow-gateway=$work/workload.jsonl"
    finish
}

run_router_stopped_while_typing() {
    begin router-stopped-while-typing
    "$py" "$here/harness/faults.py" typing --convs 40 --seconds 4 > "$dir/input.jsonl"
    shards a --tick-ms 100 --snapshot-every 0
    gateway --all-viewers --received "$dir/received.tsv"
    router typing "$dir/input.jsonl" --stamp --rate $(($(wc -l < "$dir/input.jsonl") / 4))
    wait "$router_pid" || status=1
    sleep 4   # the deadline (3 s) of the last keystrokes, and a margin
    idle; end_gateway; router_figure typing
    check applied fpy applied --servers "$urls" --input "typing=$dir/input.jsonl" --whole --stamped
    stop_pids $shard_pids; shard_pids=""
    audits=$(for p in $(seq 0 $((partitions - 1))); do printf ' --audit %s=%s' $p "$dir/audit-$p-a"; done)
    # shellcheck disable=SC2086
    check replay fpy replay --servers "$urls" --typingd "$typingd" --out "$dir/replayed.jsonl" $audits -- $TYPINGD_OPTIONS
    check finals "$py" "$here/harness/faults.py" finals "$dir/replayed.jsonl" "$dir/finals.jsonl"
    # Under --announce-after-ms, announcements due after the router stopped come
    # on the owners' ticks too, as timeouts do.
    announcements=""
    case " $TYPINGD_OPTIONS " in *" --announce-after-ms "*) announcements=--announcements ;; esac
    check clears fpy clears --servers "$urls" --received "$dir/received.tsv" $announcements
    finish
}

run_two_routers() {
    begin two-routers
    "$py" "$here/harness/faults.py" split "$work/live.jsonl" "$dir/r1.jsonl" "$dir/r2.jsonl"
    shards a --tick-ms 100 --snapshot-every 0
    gateway --viewers-file "$work/viewers"
    router r1 "$dir/r1.jsonl" --stamp --rate 5000
    r1=$router_pid
    router r2 "$dir/r2.jsonl" --stamp --rate 5000
    wait "$r1" || status=1
    wait "$router_pid" || status=1
    sleep 4
    idle; end_gateway; router_figure r1; router_figure r2
    check applied fpy applied --servers "$urls" --input "r1=$dir/r1.jsonl" --input "r2=$dir/r2.jsonl" --whole --stamped
    stop_pids $shard_pids; shard_pids=""
    audits=$(for p in $(seq 0 $((partitions - 1))); do printf ' --audit %s=%s' $p "$dir/audit-$p-a"; done)
    # shellcheck disable=SC2086
    check replay fpy replay --servers "$urls" --typingd "$typingd" --out "$dir/replayed.jsonl" $audits -- $TYPINGD_OPTIONS
    # A partition refuses `user` and `offline` (sent to every partition) for a user
    # with no conversation there ("not a member of any conversation"), with one router
    # too; a refused conversation command would be spurious.
    not_member=$(cat "$dir"/audit-* | grep '"not_member"' | grep -vc 'of any conversation' || true)
    [ "$not_member" -eq 0 ] || status=1
    figures="$figures; $not_member not_member for a conversation command"
    check finals "$py" "$here/harness/faults.py" finals "$dir/replayed.jsonl" "$dir/finals.jsonl" --viewers "$work/viewers"
    finish
}

# --- operator mistakes ---------------------------------------------------------

# expect LABEL STATUS PATTERN COMMAND...: COMMAND must exit STATUS with PATTERN on
# stderr (kept in $dir/LABEL.log), within 30 s.
expect() {
    label=$1 want=$2 pattern=$3; shift 3
    started=$(now)
    timeout -s KILL 30 "$@" > "$dir/$label.log" 2>&1 < "${expect_input:-/dev/null}" && got=0 || got=$?
    took=$(since "$started")
    if [ "$got" -ne "$want" ] || ! grep -q -- "$pattern" "$dir/$label.log"; then
        echo "  $label: exit $got (wanted $want) in $took s, without \"$pattern\":" >&2
        tail -n 4 "$dir/$label.log" | sed 's/^/    /' >&2
        status=1
    fi
    figures="$figures; $label: exit $got in $took s"
}
stream_messages() { ctl info --partitions "$partitions" 2>/dev/null | sed -n 's/^stream TYPINGD: \([0-9]*\) messages.*/\1/p'; }

run_setup_live() {
    # A cluster at work: shards, a gateway, a router half-way. `ctl setup` again must
    # change nothing (it says so, the stream keeps its messages), `ctl wipe` must be
    # refused while owners hold leases; the router then ends its input: nothing
    # lost. A forced wipe at the end, and a new owner's epoch is above the old ones.
    begin setup-live
    shards a --tick-ms 0 --snapshot-every 0
    gateway --viewers-file "$work/viewers"
    half=$((total / 2))
    head -n "$half" "$work/workload.jsonl" > "$dir/first.jsonl"
    router live "$dir/first.jsonl"
    wait "$router_pid" || status=1
    idle
    before=$(stream_messages)
    expect setup-again 0 "nothing to do" "$bin" ctl setup --servers "$urls" --storage "$STORAGE" --replicas "$REPLICAS" --lease-ttl "$LEASE_TTL"
    after=$(stream_messages)
    [ -n "$before" ] && [ "$before" = "$after" ] || { echo "  the stream held $before messages before setup, $after after" >&2; status=1; }
    expect wipe-refused 1 "refused: owners hold leases" "$bin" ctl wipe --servers "$urls"
    [ "$(stream_messages)" = "$before" ] || { echo "  the refused wipe changed the stream" >&2; status=1; }
    figures="$figures; stream: $before messages before setup, $after after"
    router live "$work/workload.jsonl"
    wait "$router_pid" || status=1
    idle; end_gateway; router_figure live
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "live=$work/workload.jsonl" --whole
    stop_pids $shard_pids; shard_pids=""
    old_epoch=$(sed -n 's/.*lease p[0-9]* taken, epoch \([0-9]*\).*/\1/p' "$dir"/shard-*-a.log | sort -n | tail -n 1)
    ctl wipe --force --storage "$STORAGE" --replicas "$REPLICAS" --lease-ttl "$LEASE_TTL" > "$dir/wipe.log" 2>&1 || { cat "$dir/wipe.log" >&2; status=1; }
    shard 1 b --tick-ms 0 --snapshot-every 0
    wait_for "$dir/shard-1-b.log" "caught up" 60 || { echo "  no owner after the wipe" >&2; status=1; }
    new_epoch=$(sed -n 's/.*lease p[0-9]* taken, epoch \([0-9]*\).*/\1/p' "$dir/shard-1-b.log" | tail -n 1)
    [ -n "$old_epoch" ] && [ -n "$new_epoch" ] && [ "$new_epoch" -gt "$old_epoch" ] \
        || { echo "  the owner after the wipe has epoch ${new_epoch:-none}, not above ${old_epoch:-none}" >&2; status=1; }
    figures="$figures; epochs: highest $old_epoch before the wipe, $new_epoch after"
    finish
}

run_router_new_input() {
    # One --name, two inputs: the workload's first 40% routed, then the other 60%
    # under the same name. Refused before a line is stored (exit 64, saying how to
    # go on); --new-input routes it whole; the shards apply both, nothing lost.
    begin router-new-input
    shards a --tick-ms 0 --snapshot-every 0
    gateway --viewers-file "$work/viewers"
    cut=$((total * 2 / 5))
    head -n "$cut" "$work/workload.jsonl" > "$dir/a.jsonl"
    tail -n +$((cut + 1)) "$work/workload.jsonl" > "$dir/b.jsonl"
    router reused "$dir/a.jsonl"
    wait "$router_pid" || status=1
    before=$(stream_messages)
    expect_input="$dir/b.jsonl"
    expect other-input 64 "checkpoint of another input" "$bin" route --servers "$urls" --partitions "$partitions" --name reused
    grep -q "new-input" "$dir/other-input.log" || { echo "  the refusal does not say how to go on" >&2; status=1; }
    # The same through a pipe: the bytes skipped are compared.
    expect other-pipe 64 "checkpoint of another input" sh -c 'cat "$1" | "$2" route --servers "$3" --partitions "$4" --name reused' \
        pipe "$dir/b.jsonl" "$bin" "$urls" "$partitions"
    expect_input=
    [ "$(stream_messages)" = "$before" ] || { echo "  a refused router stored messages" >&2; status=1; }
    router reused "$dir/b.jsonl" --new-input
    wait "$router_pid" || status=1
    idle; end_gateway; router_figure reused
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "reused=$work/workload.jsonl" --whole
    finish
}

run_settings_typo() {
    # A settings file with a misspelt setting and a stray line: every role stops,
    # naming the file and the line; the right count given wrong (8 partitions on a
    # cluster set up with 4): every role refuses before it stores or owns anything.
    begin settings-typo
    printf '# the operator meant 8 partitions\nPARTITONS=8\n' > "$dir/typo.conf"
    printf 'PARTITIONS=%s\npartitions 8\n' "$partitions" > "$dir/junk.conf"
    expect typo-route 1 "typo.conf:2: no setting \"PARTITONS\": did you mean PARTITIONS" \
        "$bin" route --servers "$urls" --config "$dir/typo.conf" --name typo
    expect typo-shard 1 "did you mean PARTITIONS" "$bin" shard --servers "$urls" --config "$dir/typo.conf" --partition 0
    expect typo-gateway 1 "did you mean PARTITIONS" "$bin" gateway --servers "$urls" --config "$dir/typo.conf" --viewer u1
    expect junk-ctl 1 "junk.conf:2: \"partitions 8\" is not NAME=VALUE" "$bin" ctl settings --config "$dir/junk.conf"
    other=$((partitions * 2)) beyond=$((partitions + 1))
    expect count-route 78 "set up with PARTITIONS=$partitions" "$bin" route --servers "$urls" --partitions "$other" --name typo
    expect count-shard 78 "set up with PARTITIONS=$partitions" "$bin" shard --servers "$urls" --partitions "$other" --partition "$beyond"
    expect count-gateway 78 "set up with PARTITIONS=$partitions" "$bin" gateway --servers "$urls" --partitions "$other" --viewer u1
    expect beyond-shard 64 "is not one of 0..$((partitions - 1))" "$bin" shard --servers "$urls" --partition "$partitions"
    [ "$(stream_messages)" = 0 ] || { echo "  a refused role stored messages" >&2; status=1; }
    shards a --tick-ms 0 --snapshot-every 0
    gateway --viewers-file "$work/viewers"
    router typo "$work/workload.jsonl"
    wait "$router_pid" || status=1
    idle; end_gateway; router_figure typo
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "typo=$work/workload.jsonl" --whole
    finish
}

run_no_jetstream() {
    # Every role pointed at a nats-server without JetStream, then at one with
    # JetStream that was never set up: each says which, and exits 78 within
    # seconds (never "waiting for the cluster" for ever). Then the cluster runs.
    begin no-jetstream
    plain=$((PORT_BASE + 10)) bare=$((PORT_BASE + 11))
    timeout -s KILL 300 nats-server -a 127.0.0.1 -p "$plain" > "$dir/plain.log" 2>&1 &
    plain_pid=$!; pids="$pids $plain_pid"
    timeout -s KILL 300 nats-server -a 127.0.0.1 -p "$bare" -js -sd "$dir/bare-js" > "$dir/bare.log" 2>&1 &
    bare_pid=$!; pids="$pids $bare_pid"
    wait_for "$dir/plain.log" "Server is ready" 20 && wait_for "$dir/bare.log" "Server is ready" 20 \
        || { echo "  the extra nats-servers did not start" >&2; status=1; }
    for role in route shard gateway; do
        case $role in route) extra="--name nojs" ;; shard) extra="--partition 0" ;; gateway) extra="--viewer u1" ;; esac
        expect_input="$work/workload.jsonl"
        # shellcheck disable=SC2086
        expect "$role-no-js" 78 "has no JetStream" "$bin" $role --servers "nats://127.0.0.1:$plain" --partitions "$partitions" $extra
        # shellcheck disable=SC2086
        expect "$role-not-set-up" 78 "not set up.*ctl setup" "$bin" $role --servers "nats://127.0.0.1:$bare" --partitions "$partitions" $extra
        expect_input=
    done
    stop_pids "$plain_pid" "$bare_pid"
    shards a --tick-ms 0 --snapshot-every 0
    gateway --viewers-file "$work/viewers"
    router nojs "$work/workload.jsonl"
    wait "$router_pid" || status=1
    idle; end_gateway; router_figure nojs
    checks "--viewers $work/viewers" "$dir"/audit-*
    check applied fpy applied --servers "$urls" --input "nojs=$work/workload.jsonl" --whole
    finish
}

run_line_gap() {
    # Lines lost between a router and the stream: the router's checkpoint moved 7
    # lines on for partition 1 between two runs (its next message's numbers jump).
    # The shard says so (which router, which numbers) and counts the 7 in its stats
    # (lines_missing); everything stored is applied (0 differ).
    begin line-gap
    shards a --tick-ms 0 --snapshot-every 0
    gateway --viewers-file "$work/viewers"
    head -n $((total / 2)) "$work/workload.jsonl" > "$dir/first.jsonl"
    router gap "$dir/first.jsonl"
    wait "$router_pid" || status=1
    fpy skip-lines --servers "$urls" --name gap --partition 1 --lines 7 > "$dir/skip.log" 2>&1 || { cat "$dir/skip.log" >&2; status=1; }
    router gap "$work/workload.jsonl"
    wait "$router_pid" || status=1
    idle; end_gateway; router_figure gap
    grep -q 'router "gap": lines [0-9]*\.\.\.[0-9]* missing (7 lines' "$dir/shard-1-a.log" \
        || { echo "  partition 1's owner did not log the gap" >&2; status=1; }
    missing=$(ctl stats --partitions "$partitions" 2>/dev/null | sed -n 's/.*"lines_missing":\([0-9]*\).*"partition":1,.*/\1/p' | head -n 1)
    [ "$missing" = 7 ] || { echo "  partition 1's stats say lines_missing ${missing:-absent}, not 7" >&2; status=1; }
    prom=$(ctl stats --prometheus 2>/dev/null | grep -c '^typingd_shard_lines_missing_total{partition="1"' || true)
    [ "$prom" -ge 1 ] || { echo "  no typingd_shard_lines_missing_total in the Prometheus stats" >&2; status=1; }
    figures="$figures; $(grep -h -o 'router "gap": lines [0-9.]* missing' "$dir/shard-1-a.log" | head -n 1); lines_missing $missing"
    checks "--viewers $work/viewers" "$dir"/audit-*
    finish
}

for name in $scenarios; do
    fn=run_$(echo "$name" | tr - _)
    $fn || { status=1; finish; }
done
echo "faults.sh: $(since "$suite_began") s for$scenarios"
echo "faults: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
