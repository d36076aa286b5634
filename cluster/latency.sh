#!/bin/sh
# Keystroke to gateway: how long a `type` written to the router takes to be
# applied at a gateway, p50 and p99, idle (five runs) and among 5000 background
# lines a second (harness/latency.py; its options pass through, e.g.
# --idle-runs 3, --busy-seconds 30, --rate 2000, --router-option=--linger-ms=50).
#
#   cluster/latency.sh [latency.py options]
#
# Builds typingd-cluster (release) when missing, runs its own 3-node cluster on
# PORT_BASE LATENCY_PORT_BASE (default 22222), a fresh stream, 4 shards, a
# gateway and a router per run, and stops everything it started by pid. The
# last line reads
#   cluster latency: idle p99 Xms, 5000/s p99 Yms
# (X: the worst idle run's p99). It exits non-zero when an idle run's p99 is
# above 20 ms, the busy run's above 50 ms, or a keystroke never arrived.
set -eu
here=$(dirname "$(readlink -f "$0")")
case ${1:-} in -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;; esac
if [ ! -x "$here/.build/release/typingd-cluster" ]; then (cd "$here" && swift build -c release >&2); fi
command -v nats-server > /dev/null || { echo "latency.sh: no nats-server on PATH (scripts/install-deps.sh)" >&2; exit 1; }
exec python3 "$here/harness/latency.py" "$@"
