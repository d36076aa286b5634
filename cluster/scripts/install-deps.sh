#!/bin/sh
# Installs what typingd-cluster needs and a fresh Debian machine with the Swift
# toolchain lacks: nats-server, libnats-dev, zlib1g-dev, pkg-config and jansson's
# headers, through the repository's one install helper (scripts/need: apt-get, as
# root or through sudo). Does nothing when they are there (found on PATH or by
# pkg-config, however they were installed).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
missing=""
command -v nats-server >/dev/null 2>&1 || missing="$missing nats-server"
if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists libnats || missing="$missing libnats-dev"
    pkg-config --exists zlib || missing="$missing zlib1g-dev"
    pkg-config --exists jansson || missing="$missing libjansson-dev"
else
    missing="$missing pkg-config libnats-dev zlib1g-dev libjansson-dev"
fi
# shellcheck disable=SC2086
[ -z "$missing" ] || "$here/../../scripts/need" $missing
