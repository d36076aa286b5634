#!/bin/sh
# typingd on a 3-node NATS JetStream cluster, checked against one typingd.
#
#   cluster/check.sh
#
# Builds typingd-cluster (release) and installs what is missing (nats-server,
# libnats-dev; a venv with nats-py for the harness), starts a real 3-node cluster
# on 127.0.0.1, routes a 200,000-line W1-like workload (with protocol v3's
# activities, threads, chat-list views, locales read from the repository's
# phrases/ tables, receive_typing; and protocol v4's side panes opened and
# closed, status streaks in people's own words, rooms that visitors push above
# --quiet-above and back, rushes of typers past --several-after, and
# announcements after --announce-after-ms) through 4 shards, and compares every
# conversation's events, indicators and announcements, with one typingd's
# (the same options), in four phases:
#   1. a steady run, with a gateway for one viewer;
#   2. the stream's leader is killed (kill -9) mid-run, then restarted;
#   3. a shard is killed (kill -9) mid-run, after its first snapshot, and a
#      replacement takes over its partition from the latest snapshot (shards
#      snapshot every 10 messages and purge the stream behind them);
#   4. a shard is killed (kill -9), more input is routed while its partition has
#      no owner, and a replacement catches up on that backlog: a gateway for
#      every viewer must then show each screen (main screens and side panes) as
#      one typingd does at that point, and have heard each sentence a screen
#      shows and typingd announced to it.
# Every process runs under `timeout` and is stopped by its pid. Ends with
# "N passed, N failed"; exits 0 when all passed. Environment: TYPINGD_BINARY
# (default .build/release/typingd, built when missing), LINES (200000, before
# the workload's additions), PHASES ("0 1 2 3 4 F": which to run; F is the fault
# suite's quick scenarios, faults.sh --quick, on FAULTS_LINES, with the same
# typingd options; 0 is the router alone: harness/router_check.py), PORT_BASE
# (14222), TYPINGD_CLUSTER (another typingd-cluster, not built: to see a check
# fail), KEEP=1 to keep the work folder.
set -eu
case ${1:-} in
"") ;;
*) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; [ "$1" = -h ] || [ "$1" = --help ]; exit $? ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
lines=${LINES:-200000}
phases=${PHASES:-0 1 2 3 4 F}
partitions=4
lease_ttl=10   # shards' --lease-ttl: the default, but in phase 2
started_at=$(date +%s)

# What it needs: nats-server and libnats-dev, typingd-cluster, Python with nats-py
# for the harness, a typingd for reference.
"$here/scripts/install-deps.sh"
py=$("$here/scripts/harness-venv.sh")
bin=${TYPINGD_CLUSTER:-$here/.build/release/typingd-cluster}
if [ -z "${TYPINGD_CLUSTER:-}" ]; then
    (cd "$here" && swift build -c release >&2) || { echo "check.sh: typingd-cluster does not build" >&2; exit 1; }
fi
export TYPINGD_CLUSTER=$bin
typingd=${TYPINGD_BINARY:-$root/.build/release/typingd}
if [ ! -x "$typingd" ]; then
    (cd "$root" && swift build -c release >&2)
fi
typingd=$(cd "$(dirname "$typingd")" && pwd)/$(basename "$typingd")
# typingd's options, the same for the reference and every shard: the phrase
# tables the repository ships (the workload gives some users a locale), the
# group style for chat-list rows, and protocol 4's options: rooms of more than 25
# members go quiet (the workload's visitors take a few across it), a clause of
# more than 3 typers is "Several people", and a sentence that stays 1.5 s is
# announced.
phrases=$root/phrases
quiet_above=25
v4_options="--quiet-above $quiet_above --several-after 3 --announce-after-ms 1500"

work=$(mktemp -d "${TMPDIR:-/tmp}/typingd-cluster.XXXXXX")
urls=$("$here/cluster.sh" urls)
shard_pids=""
router_pid=""
watch_pid=""
kill_tree() { # PID: its children first (the router runs under `timeout`), then it
    for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do kill_tree "$child"; done
    kill -KILL "$1" 2>/dev/null || true
}
cleanup() {
    for pid in $shard_pids $router_pid $watch_pid; do kill_tree "$pid"; done
    "$here/cluster.sh" stop "$work/nats" 2>/dev/null || true
    if [ "${KEEP:-0}" = 1 ]; then echo "check.sh: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

passed=0 failed=0
result() { # NAME STATUS
    if [ "$2" -eq 0 ]; then passed=$((passed + 1)); echo "PASS $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
}
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
ctl() { what=$1; shift; timeout 90 "$bin" ctl "$what" --servers "$urls" "$@"; }

start_shard() { # PARTITION AUDIT LOG [OPTIONS...]
    p=$1 audit=$2 logfile=$3; shift 3
    "$bin" shard --servers "$urls" --lifetime 240 --tick-ms 0 --lease-ttl $lease_ttl \
        --partition "$p" --audit "$audit" "$@" -- --phrases "$phrases" --list-style group $v4_options >> "$logfile" 2>&1 &
    last_pid=$!
    shard_pids="$shard_pids $last_pid"
}
stop_shards() {
    for pid in $shard_pids; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in $shard_pids; do wait "$pid" 2>/dev/null || true; done
    shard_pids=""
}
wait_caught_up() { # LOG
    tries=0
    until grep -q "caught up" "$1" 2>/dev/null; do
        tries=$((tries + 1)); [ $tries -lt 600 ] || return 1; sleep 0.1
    done
}

echo "check.sh: workload of $lines lines, one typingd for reference"
"$py" "$here/harness/workload.py" --lines "$lines" --quiet-above $quiet_above > "$work/workload.jsonl"
# shellcheck disable=SC2086
timeout 120 "$typingd" --clock manual --no-drain --phrases "$phrases" --list-style group $v4_options \
    < "$work/workload.jsonl" > "$work/reference.jsonl"
total=$(wc -l < "$work/workload.jsonl")

echo "check.sh: starting a 3-node JetStream cluster on 127.0.0.1"
"$here/cluster.sh" start "$work/nats"
ctl ready

case " $phases " in *" 0 "*)
# 0. The router alone: restarts (SIGTERM on a file and on pipes, kill -9) lose and
# double no line.
ctl setup
head -n 20000 "$work/workload.jsonl" > "$work/router-input.jsonl"
timeout 120 "$py" "$here/harness/router_check.py" --servers "$urls" --input "$work/router-input.jsonl" > "$work/router-check.log" 2>&1 \
    && status=0 || status=1
grep -E "^(PASS|FAIL)" "$work/router-check.log" | sed 's/^/  /'
[ $status -eq 0 ] || tail -n 30 "$work/router-check.log" >&2
result "router: restarts lose and double no line" $status
;; esac

# phase NAME ROUTER_RATE SNAPSHOT_EVERY: a fresh stream (ctl wipe: the previous
# phase's killed shards may still hold leases), 4 shards, the router in the background.
begin_phase() {
    phase=$1 rate=$2 every=$3
    ctl wipe --force --lease-ttl $lease_ttl
    mkdir -p "$work/$phase"
    for p in 0 1 2 3; do
        start_shard "$p" "$work/$phase/audit-$p-a" "$work/$phase/shard-$p.log" --snapshot-every "$every"
    done
    for p in 0 1 2 3; do
        wait_caught_up "$work/$phase/shard-$p.log" || { echo "check.sh: shard $p did not start:" >&2; tail -n 5 "$work/$phase/shard-$p.log" >&2; }
    done
    phase_started=$(date +%s.%N)
    # --linger-ms 20: about 600 messages, not the default's 180, so that the
    # kills land mid-run and a replacement has messages left to apply and trim.
    timeout 200 "$bin" route --servers "$urls" --partitions $partitions --rate "$rate" \
        --linger-ms 20 --name "$phase" < "$work/workload.jsonl" 2> "$work/$phase/router.log" &
    router_pid=$!
}
end_phase() { # NAME AUDITS...
    name=$1; shift
    status=0
    wait "$router_pid" || status=$?
    router_pid=""
    cat "$work/$phase/router.log"
    routed=$(since "$phase_started")
    [ $status -eq 0 ] && { ctl idle --partitions $partitions --timeout 60 || status=$?; }
    echo "  router done after $routed s, shards idle after $(since "$phase_started") s"
    elapsed=$(since "$phase_started")
    stop_shards
    if [ $status -eq 0 ]; then
        "$py" "$here/harness/compare.py" "$work/reference.jsonl" "$@" --label "$name" || status=$?
    fi
    echo "  $total lines through the cluster in $elapsed s (routed, applied, published and acknowledged)"
    if [ $status -ne 0 ]; then   # what a failure that does not repeat needs: each shard's end and records
        for f in "$work/$phase"/shard-*.log; do
            [ -f "$f" ] || continue
            echo "  --- last lines of $(basename "$f")" >&2
            tail -n 15 "$f" | sed 's/^/    /' >&2
        done
        for f in "$work/$phase"/audit-*; do
            [ -f "$f" ] || continue
            echo "  $(basename "$f"): $(grep -c "$(printf '\tE\t')" "$f") records, $(grep -c '"event":"member"' "$f") member, $(grep -c '"event":"snapshot"' "$f") snapshot, $(grep -c '"event":"indicator"' "$f") indicator events" >&2
        done
    fi
    result "$name" "$status"
}

case " $phases " in *" 1 "*)
# 1. Steady. A gateway's view too: one viewer's subject, subscribed to throughout:
# the viewer sent the most events among those with a side pane.
viewer=$("$py" -c 'import collections, json, sys
c, side = collections.Counter(), set()
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] in ("indicator", "announce"):
        c[e["viewer"]] += 1
        if e.get("pane") == "side":
            side.add(e["viewer"])
print(max(side or c, key=lambda v: (c[v], v)))' "$work/reference.jsonl")
mkdir -p "$work/steady"
"$bin" gateway --servers "$urls" --viewer "$viewer" --seconds 200 > "$work/steady/watched.jsonl" 2> "$work/steady/watch.log" &
watch_pid=$!
tries=0
until grep -q subscribed "$work/steady/watch.log" 2>/dev/null; do
    tries=$((tries + 1)); [ $tries -lt 300 ] || { echo "check.sh: the gateway did not subscribe" >&2; exit 1; }; sleep 0.1
done
begin_phase steady 0 0
end_phase "phase 1: steady run" "$work/steady"/audit-*
kill -TERM "$watch_pid" 2>/dev/null || true; wait "$watch_pid" || true; watch_pid=""
"$py" -c 'import collections, json, sys
def per_conv(lines):
    d = collections.defaultdict(list)
    for l in lines:
        e = json.loads(l)
        if e.get("event") in ("indicator", "announce") and e["viewer"] == sys.argv[3]:
            d[e["conv"]].append(l.strip())
    return d
ref, got = per_conv(open(sys.argv[1])), per_conv(open(sys.argv[2]))
events = [l for v in got.values() for l in v]
print("  viewer %s received %d indicators (%d for a side pane) and %d announcements over NATS in %d conversations; "
      "%d conversations differ from one typingd"
      % (sys.argv[3], sum("\"indicator\"" in l for l in events), sum("\"pane\":\"side\"" in l and "\"indicator\"" in l for l in events),
         sum("\"announce\"" in l for l in events), len(got), sum(ref[c] != got[c] for c in set(ref) | set(got))))
sys.exit(ref != got)' "$work/reference.jsonl" "$work/steady/watched.jsonl" "$viewer" && status=0 || status=1
result "phase 1: a gateway subscribed to one viewer receives exactly that viewer's indicators and announcements" $status
;; esac

case " $phases " in *" 2 "*)
# 2. The stream leader dies mid-run.
# Paced to last about 4 s, so that the kill at 1.2 s is mid-run.
begin_phase failover $((lines / 4)) 0
sleep 1.2
leader=$(ctl leader)
killed_at=$(date +%s.%N)
"$here/cluster.sh" kill "$leader" "$work/nats"
echo "  killed stream leader $leader (kill -9) mid-run"
new_leader=$(ctl leader --timeout 30)
echo "  new stream leader $new_leader after $(since "$killed_at") s"
"$here/cluster.sh" restart "$leader" "$work/nats"
end_phase "phase 2: stream leader killed mid-run" "$work/failover"/audit-*
grep -h "retries" "$work/failover/router.log" | sed 's/^/  /' || true
;; esac

case " $phases " in *" 3 "*)
# 3. A shard dies mid-run; a replacement rebuilds from the snapshot and the stream.
begin_phase takeover $((lines / 4)) 10
victim=1
# Kill it mid-run, once it has stored a snapshot (so the replacement rebuilds from one).
tries=0
until grep -q "older messages purged" "$work/takeover/shard-$victim.log" 2>/dev/null; do
    tries=$((tries + 1)); [ $tries -lt 300 ] || break; sleep 0.05
done
sleep 0.3
victim_pid=$(echo $shard_pids | cut -d' ' -f$((victim + 1)))
kill -KILL "$victim_pid"
echo "  killed shard $victim (kill -9) mid-run"
sleep 0.5
# The router waits while the replacement catches up, so that input is left for it
# to apply and trim (on a fast machine the run was over before it caught up).
router_proc=$(cat /proc/"$router_pid"/task/*/children 2>/dev/null || true)   # under `timeout`
[ -z "$router_proc" ] || kill -STOP $router_proc 2>/dev/null || true
start_shard "$victim" "$work/takeover/audit-$victim-b" "$work/takeover/shard-$victim-b.log" --snapshot-every 10
wait_caught_up "$work/takeover/shard-$victim-b.log" || true
[ -z "$router_proc" ] || kill -CONT $router_proc 2>/dev/null || true
sed -n 's/^shard: /  replacement: /p' "$work/takeover/shard-$victim-b.log" | grep "caught up" || true
end_phase "phase 3: shard killed, replacement takes over" \
    "$work/takeover/audit-0-a" "$work/takeover/audit-1-a" "$work/takeover/audit-1-b" \
    "$work/takeover/audit-2-a" "$work/takeover/audit-3-a"
ctl info --partitions $partitions | sed 's/^/  /'
# The replacement started from a snapshot, and the stream was trimmed behind it.
if grep -q "caught up.*snapshot after seq [1-9]" "$work/takeover/shard-$victim-b.log" \
    && grep -q "older messages purged" "$work/takeover/shard-$victim-b.log"; then
    result "phase 3: the replacement rebuilt from a snapshot, and kept trimming the stream" 0
else
    result "phase 3: the replacement rebuilt from a snapshot, and kept trimming the stream" 1
fi
;; esac

case " $phases " in *" 4 "*)
# 4. A catch-up on a backlog. Partition 1's owner is killed (kill -9) after the
# first part of the input is applied, the next part is routed while the
# partition has no owner, then a replacement rebuilds from the snapshot and
# applies that backlog, publishing each screen's last indicator (and the
# announcements of sentences still shown) once caught up. A gateway for every
# viewer, subscribed throughout, must then show each screen as one typingd fed
# the same lines does, main screens and side panes alike.
first=$((total * 2 / 5)) second=$((total * 3 / 5))
head -n "$first" "$work/workload.jsonl" > "$work/part-a.jsonl"
# It ends with a snapshot and stats, at the time of its last line (every
# partition's clock there): what the gateway must show at that point.
sed -n "$((first + 1)),${second}p" "$work/workload.jsonl" > "$work/part-b.jsonl"
"$py" -c 'import json, sys
at = max(json.loads(l).get("at", 0) for l in open(sys.argv[1]) if l.strip())
print(json.dumps({"cmd": "snapshot", "id": "final-snapshot", "at": at}))
print(json.dumps({"cmd": "stats", "id": "final-stats", "at": at}))' "$work/part-b.jsonl" >> "$work/part-b.jsonl"
cat "$work/part-a.jsonl" "$work/part-b.jsonl" > "$work/cut.jsonl"
# shellcheck disable=SC2086
timeout 120 "$typingd" --clock manual --no-drain --phrases "$phrases" --list-style group $v4_options \
    < "$work/cut.jsonl" > "$work/reference-cut.jsonl"
phase=catchup
ctl wipe --force --lease-ttl $lease_ttl
mkdir -p "$work/$phase"
"$py" "$here/harness/faults.py" viewers "$work/reference-cut.jsonl" 0 > "$work/$phase/viewers"
"$bin" gateway --servers "$urls" --all-viewers --viewers-file "$work/$phase/viewers" --seconds 400 \
    --finals "$work/$phase/finals.jsonl" --received "$work/$phase/received.tsv" \
    > /dev/null 2> "$work/$phase/watch.log" &
watch_pid=$!
tries=0
until grep -q subscribed "$work/$phase/watch.log" 2>/dev/null; do
    tries=$((tries + 1)); [ $tries -lt 300 ] || { echo "check.sh: the gateway did not subscribe" >&2; exit 1; }; sleep 0.1
done
for p in 0 1 2 3; do
    start_shard "$p" "$work/$phase/audit-$p-a" "$work/$phase/shard-$p.log" --snapshot-every 10
done
for p in 0 1 2 3; do wait_caught_up "$work/$phase/shard-$p.log" || true; done
phase_started=$(date +%s.%N)
status=0
timeout 200 "$bin" route --servers "$urls" --partitions $partitions --linger-ms 20 --batch-lines 200 --name catchup-a \
    < "$work/part-a.jsonl" 2> "$work/$phase/router-a.log" || status=1
ctl idle --partitions $partitions --timeout 60 > /dev/null || status=1
victim_pid=$(echo $shard_pids | cut -d' ' -f2)
kill -KILL "$victim_pid"
wait "$victim_pid" 2>/dev/null || true
echo "  part one ($first lines) applied; shard 1 killed (kill -9); part two routed while partition 1 has no owner"
timeout 200 "$bin" route --servers "$urls" --partitions $partitions --linger-ms 20 --batch-lines 200 --name catchup-b \
    < "$work/part-b.jsonl" 2> "$work/$phase/router-b.log" || status=1
start_shard 1 "$work/$phase/audit-1-b" "$work/$phase/shard-1-b.log" --snapshot-every 10
wait_caught_up "$work/$phase/shard-1-b.log" || status=1
sed -n 's/^shard: /  replacement: /p' "$work/$phase/shard-1-b.log" | grep "caught up" || true
ctl idle --partitions $partitions --timeout 60 > /dev/null || status=1
kill -TERM "$watch_pid" 2>/dev/null || true; wait "$watch_pid" || status=1; watch_pid=""
stop_shards
sed -n 's/^gateway: [0-9:.]* \([0-9]* viewers.*\)/  gateway: \1/p' "$work/$phase/watch.log" | cut -c1-300
if [ $status -eq 0 ]; then
    "$py" "$here/harness/compare.py" "$work/reference-cut.jsonl" "$work/$phase"/audit-* --label "  compare" || status=1
    "$py" "$here/harness/faults.py" finals "$work/reference-cut.jsonl" "$work/$phase/finals.jsonl" \
        --viewers "$work/$phase/viewers" --input "$work/cut.jsonl" > "$work/$phase/finals.log" || status=1
    "$py" "$here/harness/faults.py" announced "$work/reference-cut.jsonl" "$work/$phase/received.tsv" \
        --viewers "$work/$phase/viewers" >> "$work/$phase/finals.log" || status=1
    sed 's/^/  /' "$work/$phase/finals.log"
fi
[ $status -eq 0 ] || tail -n 5 "$work/$phase"/shard-1-b.log >&2
result "phase 4: a replacement catches up on a backlog; a gateway shows every screen as one typingd does" $status
;; esac

case " $phases " in *" F "*)
# F. The fault suite's quick scenarios (faults.sh --quick), on its own cluster on
# the same ports: this one is stopped first (one cluster at a time).
"$here/cluster.sh" stop "$work/nats"
TYPINGD_OPTIONS="--phrases $phrases --list-style group $v4_options" \
PORT_BASE=${PORT_BASE:-14222} TYPINGD_BINARY=$typingd timeout 1200 "$here/faults.sh" --quick > "$work/faults.log" 2>&1 \
    && status=0 || status=1
grep -E "^(faults.sh: [0-9.]+ s for|[a-z0-9-]+: (PASS|FAIL))" "$work/faults.log" | sed 's/^/  /' | cut -c1-400
[ $status -eq 0 ] || tail -n 40 "$work/faults.log" >&2
result "faults.sh --quick: every quick scenario of the fault suite" $status
;; esac

echo "check.sh: $(( $(date +%s) - started_at )) s in all"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
