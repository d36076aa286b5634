#!/bin/sh
# Starts the web chat for people: the gateway and its typingd, until Ctrl-C.
#
#   examples/web-chat/run.sh [GATEWAY OPTION ...]
#
# Makes examples/web-chat/.venv when it is missing (websockets and the Python client
# of this tree), then runs gateway.py on 127.0.0.1:8080 (PORT=N for another port,
# HOST=0.0.0.0 to let other machines in) with typing stopping 5 s after the last
# keystroke. Options go to gateway.py: --timeout-ms 3000, --max-listed 2,
# --style compact, -- --order recent (after --: typingd's own). Open the printed URL
# in several tabs, e.g. URL?user=alice&name=Alice and URL?user=bob&name=Bob, or
# without a name to pick one; &room=NAME for a room other than general.
set -eu
case ${1:-} in
-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=$here/.venv
if ! "$venv/bin/python" -c 'import websockets, typingd' 2>/dev/null; then
    echo "run.sh: creating $venv (websockets, clients/python)" >&2
    python3 -m venv --clear "$venv"
    "$venv/bin/pip" install -q websockets==15.0.1
    copy=$(mktemp -d "${TMPDIR:-/tmp}/typingd-client.XXXXXX")
    cp -R "$root/clients/python/." "$copy"
    "$venv/bin/pip" install -q "$copy"
    rm -rf "$copy"
fi
typingd=${TYPINGD_BINARY:-$root/.build/release/typingd}
if [ ! -x "$typingd" ]; then
    echo "run.sh: no typingd at $typingd: build it (swift build -c release) or set TYPINGD_BINARY" >&2
    exit 1
fi
exec "$venv/bin/python" "$here/gateway.py" --host "${HOST:-127.0.0.1}" --port "${PORT:-8080}" --typingd "$typingd" "$@"
