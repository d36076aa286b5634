#!/bin/sh
# The web chat in a real browser: gateway, page and typingd, checked end to end.
#
#   examples/web-chat/check.sh
#
# Installs what is missing: Debian's chromium and chromium-driver (scripts/need: apt-get, as root
# or with sudo), and a venv in examples/web-chat/.venv with the pinned websockets and
# selenium from PyPI and the Python client (clients/python, reinstalled when it
# changes). Starts gateway.py on a free 127.0.0.1 port with --timeout-ms 1500
# --max-listed 2 --announce-after-ms 800 --bot-think-ms 2000 (stopped by its pid on
# any exit), then check.py: three windows of a
# headless Chromium are Alice, Bob and Carol; what Carol's indicator line shows is
# checked as Alice and Bob type, send and stop, as four people type; a thread's side
# pane and the channel each have their typing line; the bot's "Bot is thinking...";
# the live region, in the accessibility tree, says only typingd's announcements
# (--announce-after-ms 800); a page without ?room= must be in the default room,
# general; and 200 keystrokes are timed from
# Alice's keydown to Carol's indicator changing (p99 must be under 100 ms). Ends with
# "N passed, N failed"; exits 0 when all passed.
# When a tool cannot be installed it fails under CI=true and skips otherwise.
# Environment: TYPINGD_BINARY (default .build/release/typingd, built when
# missing), CHROMIUM (/usr/bin/chromium), CHROMEDRIVER (/usr/bin/chromedriver),
# SCREENSHOT (where to save Carol's window; default: the work folder, deleted),
# KEYSTROKES (200), KEEP=1 to keep the work folder.
set -eu
case ${1:-} in
"") ;;
*) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; [ "$1" = -h ] || [ "$1" = --help ]; exit $? ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
started_at=$(date +%s)
chromium=${CHROMIUM:-/usr/bin/chromium}
chromedriver=${CHROMEDRIVER:-/usr/bin/chromedriver}
pins="websockets==15.0.1 selenium==4.50.0"

cannot() { # WHY: under CI a missing tool fails the check; elsewhere it skips it
    if [ "${CI:-}" = true ]; then
        echo "check.sh: FAIL: $1 (CI=true: not skipping)" >&2
        exit 1
    fi
    echo "check.sh: SKIPPED, $1" >&2
    exit 0
}

# Chromium and its driver, from Debian.
if [ ! -x "$chromium" ] || [ ! -x "$chromedriver" ]; then
    echo "check.sh: installing chromium and chromium-driver" >&2
    "$root/scripts/need" chromium chromium-driver \
        || cannot "chromium and chromium-driver could not be installed with apt-get"
    [ -x "$chromium" ] && [ -x "$chromedriver" ] || cannot "no $chromium or $chromedriver after installing"
fi

# The venv: pinned websockets and selenium, and the Python client of this tree.
venv=$here/.venv
py=$venv/bin/python
if ! "$py" -c 'import sys, websockets, selenium
sys.exit(not ("websockets==" + websockets.__version__ + " selenium==" + selenium.__version__ == sys.argv[1]))' "$pins" 2>/dev/null; then
    echo "check.sh: creating $venv with $pins" >&2
    { python3 -m venv --clear "$venv" 2>/dev/null \
        || { "$root/scripts/need" python3-venv && python3 -m venv --clear "$venv"; }; } \
        || cannot "python3 -m venv does not work"
    # shellcheck disable=SC2086
    "$venv/bin/pip" install -q $pins || cannot "pip could not install $pins"
    rm -f "$venv/typingd-client.sum"
fi
# The client as this tree has it: installed from a copy (pip would build inside
# clients/python), again whenever its files change.
client_sum=$(cd "$root/clients/python" && find pyproject.toml typingd -type f ! -name '*.pyc' | LC_ALL=C sort | xargs cat | cksum)
if [ "$(cat "$venv/typingd-client.sum" 2>/dev/null)" != "$client_sum" ] || ! "$py" -c 'import typingd' 2>/dev/null; then
    echo "check.sh: installing clients/python into $venv" >&2
    copy=$(mktemp -d "${TMPDIR:-/tmp}/typingd-client.XXXXXX")
    cp -R "$root/clients/python/." "$copy"
    "$venv/bin/pip" install -q --no-deps --force-reinstall --no-build-isolation "$copy" 2>/dev/null \
        || "$venv/bin/pip" install -q --no-deps --force-reinstall "$copy" \
        || { rm -rf "$copy"; cannot "pip could not install clients/python"; }
    rm -rf "$copy"
    echo "$client_sum" > "$venv/typingd-client.sum"
fi

typingd=${TYPINGD_BINARY:-$root/.build/release/typingd}
if [ ! -x "$typingd" ]; then
    (cd "$root" && swift build -c release >&2)
fi
typingd=$(cd "$(dirname "$typingd")" && pwd)/$(basename "$typingd")

work=$(mktemp -d "${TMPDIR:-/tmp}/typingd-web-chat.XXXXXX")
gateway_pid=""
cleanup() {
    if [ -n "$gateway_pid" ]; then
        kill -TERM "$gateway_pid" 2>/dev/null || true
        tries=0
        while kill -0 "$gateway_pid" 2>/dev/null && [ $tries -lt 50 ]; do sleep 0.1; tries=$((tries + 1)); done
        # Still there after 5 s: its typingd first, then the gateway.
        for child in $(cat /proc/"$gateway_pid"/task/*/children 2>/dev/null); do kill -KILL "$child" 2>/dev/null || true; done
        kill -KILL "$gateway_pid" 2>/dev/null || true
    fi
    if [ "${KEEP:-0}" = 1 ]; then echo "check.sh: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The gateway on a port the system picks; it says which once it listens.
"$py" "$here/gateway.py" --host 127.0.0.1 --port 0 --typingd "$typingd" --timeout-ms 1500 --max-listed 2 \
    --announce-after-ms 800 --bot-think-ms 2000 \
    > "$work/gateway.out" 2> "$work/gateway.log" &
gateway_pid=$!
tries=0
until grep -q "serving http" "$work/gateway.out" 2>/dev/null; do
    tries=$((tries + 1))
    if [ $tries -ge 200 ] || ! kill -0 "$gateway_pid" 2>/dev/null; then
        echo "check.sh: the gateway did not start:" >&2
        cat "$work/gateway.log" >&2
        echo "0 passed, 1 failed"
        exit 1
    fi
    sleep 0.05
done
url=$(sed -n 's/^web-chat: serving \(http:[^ ]*\).*/\1/p' "$work/gateway.out")
echo "check.sh: gateway at $url (pid $gateway_pid; typingd --timeout-ms 1500 --max-listed 2 --announce-after-ms 800)"

status=0
SE_OFFLINE=true timeout 150 "$py" "$here/check.py" --url "$url" --chromium "$chromium" --chromedriver "$chromedriver" \
    --timeout-ms 1500 --announce-after-ms 800 --bot-think-ms 2000 \
    --keystrokes "${KEYSTROKES:-200}" --screenshot "${SCREENSHOT:-$work/screenshot.png}" \
    --figures "$work/latency.json" || status=$?
if [ $status -ne 0 ]; then
    echo "check.sh: check.py exited $status; the gateway's log:" >&2
    tail -n 30 "$work/gateway.log" >&2
fi
if ! kill -0 "$gateway_pid" 2>/dev/null; then
    echo "check.sh: the gateway died during the check" >&2
    status=1
fi
echo "check.sh: $(( $(date +%s) - started_at )) s in all"
exit $status
