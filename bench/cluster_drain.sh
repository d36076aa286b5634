#!/bin/sh
# Issue 28 ("Throughput"): one shard draining a backlog against plain typingd on
# the same lines.
#
#   bench/cluster_drain.sh [RUNS] [LINES]        (defaults 5 and 200000)
#
# Starts a 3-node cluster of its own (PORT_BASE, default 25222), makes one
# partition (ctl setup --partitions 1), routes cluster/harness/workload.py's
# lines into it once, then alternates RUNS times:
#   typingd   the root's release typingd on the same lines (--clock manual
#             --no-drain --late-at clamp, TYPINGD_OPTIONS), wall time;
#   shard     a fresh `typingd-cluster shard --partition 0` (no snapshots, no
#             ticks: the stream is the same every run) from its start until its
#             log says "caught up" (wall, polled every 5 ms), and the catch-up
#             it reports itself ("caught up in N ms"); then SIGTERM, and its
#             consumer is deleted so that the next shard replays everything again.
# Prints each run, the medians and the ratio typingd time / shard time (= the
# shard's lines per second over typingd's; the goal is >= 0.70). With
# BASE_CLUSTER=path/to/another/typingd-cluster, a shard of that build is timed too
# in each run (a before/after in the same run). Every
# process is stopped by its pid. Needs both release builds (root and cluster/).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
runs=${1:-5}
lines=${2:-200000}
port_base=${PORT_BASE:-25222}
. "$root/cluster/cluster.conf"   # TYPINGD_OPTIONS
PORT_BASE=$port_base             # the environment's, else 25222: never cluster.conf's
export PORT_BASE
typingd=${TYPINGD_BINARY:-$root/.build/release/typingd}
bin=${TYPINGD_CLUSTER:-$root/cluster/.build/release/typingd-cluster}
[ -x "$typingd" ] || { echo "cluster_drain: no $typingd (swift build -c release)" >&2; exit 1; }
[ -x "$bin" ] || { echo "cluster_drain: no $bin (cd cluster && swift build -c release)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cluster-drain.XXXXXX")
export CLUSTER_LIFETIME=${CLUSTER_LIFETIME:-1800}
shard_pid=""
cleanup() {
    [ -z "$shard_pid" ] || kill -KILL "$shard_pid" 2>/dev/null || true
    "$root/cluster/cluster.sh" stop "$work/nats" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$root"   # TYPINGD_OPTIONS' paths are the repository's

"$root/cluster/cluster.sh" start "$work/nats"
urls=$("$root/cluster/cluster.sh" urls)
(cd "$root/cluster/harness" && python3 workload.py --lines "$lines") > "$work/w.jsonl"
total=$(wc -l < "$work/w.jsonl")
timeout 60 "$bin" ctl ready --servers "$urls" >/dev/null
timeout 60 "$bin" ctl setup --servers "$urls" --partitions 1 >/dev/null
timeout 300 "$bin" route --servers "$urls" --partitions 1 --name drain < "$work/w.jsonl" 2> "$work/route.log" \
    || { cat "$work/route.log" >&2; exit 1; }

now_ns() { date +%s%N; }

# The consumer shard-0 deleted ($JS.API.CONSUMER.DELETE), by the NATS protocol itself.
delete_consumer() {
    python3 - "$PORT_BASE" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
f = s.makefile("rb")
f.readline()  # INFO
s.sendall(b'CONNECT {"verbose":false,"headers":true}\r\nSUB _INBOX.drain 1\r\n'
          b'PUB $JS.API.CONSUMER.DELETE.TYPINGD.shard-0 _INBOX.drain 0\r\n\r\n')
while True:
    line = f.readline()
    if not line:
        sys.exit("no answer to the consumer's deletion")
    if line.startswith(b"PING"):
        s.sendall(b"PONG\r\n")
    elif line.startswith(b"MSG"):
        body = f.read(int(line.split()[-1]) + 2)
        if b'"success":true' not in body and b"10014" not in body:   # 10014: no such consumer
            sys.exit("consumer not deleted: " + body.decode(errors="replace"))
        break
    elif line.startswith(b"-ERR"):
        sys.exit(line.decode())
PY
}

run_typingd() {
    start=$(now_ns)
    # shellcheck disable=SC2086
    "$typingd" --clock manual --no-drain --late-at clamp $TYPINGD_OPTIONS < "$work/w.jsonl" > /dev/null
    echo $(( ($(now_ns) - start) / 1000000 ))
}

run_shard() { # [BINARY]: prints "WALL_MS REPORTED_MS"
    shard_bin=${1:-$bin}
    log=$work/shard.log
    : > "$log"
    delete_consumer
    # The shard's stderr goes through a FIFO to a reader that copies it to the
    # log and, at "caught up in", writes the time to a second FIFO that this
    # shell waits on with a blocking read: nothing polls while the shard runs (a
    # grep every 5 ms took a tenth of the 2 cores from the shard, and nothing
    # from typingd's runs).
    rm -f "$work/err" "$work/caught"
    mkfifo "$work/err" "$work/caught"
    start=$(now_ns)
    # shellcheck disable=SC2086
    timeout -s KILL 300 "$shard_bin" shard --servers "$urls" --partition 0 --partitions 1 --snapshot-every 0 \
        --tick-ms 0 -- $TYPINGD_OPTIONS 2> "$work/err" &
    shard_pid=$!
    (
        told=""
        while IFS= read -r line; do
            printf '%s\n' "$line" >> "$log"
            case $line in *"caught up in"*) [ -n "$told" ] || { now_ns > "$work/caught"; told=1; } ;; esac
        done < "$work/err"
        [ -n "$told" ] || echo ended > "$work/caught"
    ) &
    reader=$!
    read -r caught < "$work/caught"
    case $caught in
        ended) wait "$shard_pid" || true; cat "$log" >&2; echo "cluster_drain: the shard ended" >&2; exit 1 ;;
    esac
    wall=$(( (caught - start) / 1000000 ))
    kill -TERM "$shard_pid"
    wait "$shard_pid" || true
    wait "$reader" || true
    shard_pid=""
    reported=$(sed -n 's/.*caught up in \([0-9]*\) ms.*/\1/p' "$log")
    echo "$wall $reported"
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "cluster_drain: $total lines in 1 partition, $runs alternating runs"
run_shard > /dev/null   # a warm-up: the stream's pages in memory
: > "$work/t"; : > "$work/w"; : > "$work/r"; : > "$work/bw"; : > "$work/br"
i=1
while [ $i -le "$runs" ]; do
    t=$(run_typingd)
    echo "$t" >> "$work/t"
    if [ -n "${BASE_CLUSTER:-}" ]; then
        set -- $(run_shard "$BASE_CLUSTER")
        echo "$1" >> "$work/bw"; echo "$2" >> "$work/br"
        base="   base shard ${1} ms (${2} ms)"
    else
        base=""
    fi
    set -- $(run_shard)
    echo "$1" >> "$work/w"; echo "$2" >> "$work/r"
    echo "run $i: typingd ${t} ms   shard ${1} ms from start (${2} ms catch-up it reports)$base"
    i=$((i + 1))
done
mt=$(median < "$work/t"); mw=$(median < "$work/w"); mr=$(median < "$work/r")
echo "medians: typingd $mt ms, shard $mw ms from start ($mr ms reported)"
if [ -n "${BASE_CLUSTER:-}" ]; then
    mbw=$(median < "$work/bw"); mbr=$(median < "$work/br")
    echo "base shard ($BASE_CLUSTER): $mbw ms from start ($mbr ms reported); ratio $(awk -v t="$mt" -v w="$mbw" -v r="$mbr" 'BEGIN { printf "%.2f from start, %.2f reported", t / w, t / r }')"
fi
awk -v t="$mt" -v w="$mw" -v r="$mr" -v n="$total" 'BEGIN {
    printf "lines/s: typingd %.0f, shard %.0f from start (%.0f reported)\n", n / t * 1000, n / w * 1000, n / r * 1000
    printf "ratio shard/typingd: %.2f from start, %.2f reported catch-up (goal: >= 0.70)\n", t / w, t / r }'
