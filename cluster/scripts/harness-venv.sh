#!/bin/sh
# The test harness's Python (harness/*.py read the stream with nats-py, a test
# tool, not part of the product): cluster/.venv, made when missing. Prints its
# python's path.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
venv=$here/.venv
if ! "$venv/bin/python" -c 'import nats' 2>/dev/null; then
    echo "harness-venv: making $venv with nats-py" >&2
    python3 -m venv "$venv" >&2 \
        || { "$here/../scripts/need" python3-venv >&2 && python3 -m venv --clear "$venv" >&2; } \
        || { echo "harness-venv: python3 -m venv failed (apt-get install python3-venv)" >&2; exit 1; }
    "$venv/bin/pip" install -q nats-py==2.16.0 >&2
fi
echo "$venv/bin/python"
