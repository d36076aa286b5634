#!/bin/sh
# The cluster's cost: CPU seconds per 100k command lines of the whole cluster
# (router, 4 shards with typingd's engine in-process, 3 nats-servers) against
# one plain typingd on the same input, unpaced, at 5000 and at 1000 lines a
# second, alternating runs (harness/cost.py; its options pass through, e.g.
# --runs 5, --lines 100000, --baseline OTHER-typingd-cluster).
#
#   cluster/cost.sh [cost.py options]
#
# Builds typingd and typingd-cluster (release) when missing, runs its own
# 3-node cluster on PORT_BASE COST_PORT_BASE (default 20222) and stops
# everything it started by pid. The last line reads
#   cluster cost: unpaced R1x, 5000/s R2x, 1000/s R3x
# (medians of each run's cluster/plain ratio).
set -eu
here=$(dirname "$(readlink -f "$0")")
root=$(dirname "$here")
case ${1:-} in -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;; esac
if [ ! -x "$root/.build/release/typingd" ]; then (cd "$root" && swift build -c release >&2); fi
if [ ! -x "$here/.build/release/typingd-cluster" ]; then (cd "$here" && swift build -c release >&2); fi
command -v nats-server > /dev/null || { echo "cost.sh: no nats-server on PATH (scripts/install-deps.sh)" >&2; exit 1; }
exec python3 "$here/harness/cost.py" --rates 0,5000,1000 "$@"
