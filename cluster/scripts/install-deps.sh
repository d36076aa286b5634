#!/bin/sh
# Installs what typingd-cluster needs and a fresh Debian machine with the Swift
# toolchain lacks: nats-server, libnats-dev, zlib1g-dev, pkg-config (apt-get, as
# root or through sudo). Does nothing when they are there.
set -eu
missing=""
command -v nats-server >/dev/null 2>&1 || missing="$missing nats-server"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists libnats || missing="$missing libnats-dev"
    pkg-config --exists zlib || missing="$missing zlib1g-dev"
    pkg-config --exists jansson || missing="$missing libjansson-dev"
else
    missing="$missing libnats-dev zlib1g-dev libjansson-dev"
fi
[ -n "$missing" ] || exit 0
echo "install-deps: installing$missing" >&2
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
# shellcheck disable=SC2086
as_root apt-get install -y $missing >/dev/null || { as_root apt-get update >/dev/null && as_root apt-get install -y $missing >/dev/null; }
