#!/bin/sh
# typingd-cluster on this machine, start to end: a 3-node NATS JetStream cluster
# on 127.0.0.1, its stream and buckets, one shard per partition, a gateway for
# viewer u6, and a router fed a conversation of the repository's transcripts,
# two lines a second; then what u6 saw, and everything stopped by pid. It runs
# on the real clock: the timings, and so which indicators u6 is sent, vary from
# run to run.
#
#   cluster/demo.sh            (from anywhere; about 30 s, 3-5 minutes the first time: it builds)
#
# It installs what is missing (nats-server, libnats-dev, zlib1g-dev: apt-get, as
# root or through sudo), builds typingd-cluster (release), and keeps nothing:
# the nodes' state and the logs go to a temporary folder, removed at the end
# (KEEP=1 keeps it). Ports: PORT_BASE (default 14222) +0..2, +2000, +4000.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
case ${1:-} in -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;; esac

"$here/scripts/install-deps.sh"
echo "demo: building typingd-cluster (swift build -c release in cluster/)" >&2
(cd "$here" && swift build -c release >/dev/null) || { echo "demo: the build failed: run 'swift build -c release' in $here to see why" >&2; exit 1; }
bin=$here/.build/release/typingd-cluster

export PORT_BASE=${PORT_BASE:-14222}
work=$(mktemp -d "${TMPDIR:-/tmp}/typingd-demo.XXXXXX")
pids=""
cleanup() {
    for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in $pids; do wait "$pid" 2>/dev/null || true; done
    "$here/cluster.sh" stop "$work/nats" >/dev/null 2>&1 || true
    if [ "${KEEP:-0}" = 1 ]; then echo "demo: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
wait_for() { # FILE PATTERN SECONDS
    tries=0
    until grep -q "$2" "$1" 2>/dev/null; do
        tries=$((tries + 1))
        [ $tries -lt $(($3 * 10)) ] || { echo "demo: no \"$2\" in $1 after $3 s:" >&2; tail -n 5 "$1" >&2; exit 1; }
        sleep 0.1
    done
}

cd "$root"   # the shards' typingd options name the repository's phrase tables
echo "demo: starting 3 nats-server nodes on 127.0.0.1:$PORT_BASE-$((PORT_BASE + 2))" >&2
"$here/cluster.sh" start "$work/nats" >&2
"$bin" ctl ready --timeout 60 >&2
"$bin" ctl setup >&2
for p in 0 1 2 3; do
    "$bin" shard --partition "$p" > "$work/shard-$p.log" 2>&1 &
    pids="$pids $!"
done
for p in 0 1 2 3; do wait_for "$work/shard-$p.log" "caught up" 60; done
echo "demo: 4 shards caught up; a gateway for viewer u6, then the router" >&2
"$bin" gateway --viewer u6 --seconds 16 > "$work/u6.jsonl" 2> "$work/gateway.log" &
gateway=$!
pids="$pids $gateway"
wait_for "$work/gateway.log" "subscribed" 30
input=$root/examples/transcripts/02_group_fills_up.in.jsonl
sed 's/,"at":[0-9]*//' "$input" | "$bin" route --name "demo-$$" --stamp --rate 2 2> "$work/router.log"
# The router's summary and where it stored through (its last lines but for the
# "disconnected" its connection logs as it closes).
sed -n -e '/ lines in .* lines\/s)/p' -e '/^router: [0-9:.]* end of input: /p' "$work/router.log" >&2
wait "$gateway" || true
echo "demo: what viewer u6 saw, as it arrived (typing ends 3 s after the last keystroke: the shards tick; on the real clock, this varies from run to run):"
sed -n '/"typing":\[\]/{s/.*"conv":"\([^"]*\)".*/  [\1] (nobody typing)/p;d;}; s/.*"conv":"\([^"]*\)".*"text":"\([^"]*\)".*/  [\1] \2/p' "$work/u6.jsonl"
