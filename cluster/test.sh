#!/bin/sh
# typingd-cluster's tests, from a fresh clone: installs what is missing
# (nats-server, libnats-dev, zlib1g-dev; a venv with nats-py for the harness),
# runs the package's Swift tests (unit tests, and live ones on a nats-server each
# starts by pid), then check.sh: a 200,000-line workload through a real 3-node
# cluster against one typingd (a steady run, the stream leader killed, a shard
# killed), and the fault suite's quick set (faults.sh --quick). Ends with
# "N passed, N failed". Under CI=true a test that cannot run fails.
#
#   cluster/test.sh            (about 10-15 minutes on 2 cores)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
case ${1:-} in -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;; esac
"$here/scripts/install-deps.sh"
(cd "$here/.." && { [ -x .build/release/typingd ] || swift build -c release --product typingd >&2; })
(cd "$here" && swift test)
(cd "$here" && swift build -c release >&2)
exec "$here/check.sh"
