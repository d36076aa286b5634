#!/bin/sh
# Builds typingd with the Swift standard library linked in, and installs it, stripped,
# under a prefix with its manual pages and shell completions:
#
#   ./install.sh [--prefix DIR]        (default prefix: /usr/local)
#
#   DIR/bin/typingd
#   DIR/share/man/man1/typingd.1, typingd.check.1, typingd.replay.1
#   DIR/share/doc/typingd/Protocol.md  (the full reference the pages point to)
#   DIR/share/typingd/phrases/*.json   (the phrase tables: --phrases DIR/share/typingd/phrases)
#   DIR/share/bash-completion/completions/typingd
#   DIR/share/zsh/site-functions/_typingd
#   DIR/share/fish/vendor_completions.d/typingd.fish
#
# The binary needs no Swift toolchain where it runs: only libjansson (Debian:
# libjansson4) and the C and C++ runtimes every Debian system has (`ldd` lists no
# Swift library). Building needs the Swift toolchain, pkg-config, libjansson-dev and
# strip (binutils). It builds once, into .build-static/ beside the normal .build/:
# the manual pages and the completions are written by the built binary itself.
set -eu
cd "$(dirname "$0")"

prefix=/usr/local
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=${2:?--prefix needs a folder}; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        -h|--help) sed -n '2,/^set -eu$/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown argument $1 (try --help)" >&2; exit 64 ;;
    esac
done

# What building needs: each missing piece is named, with what installs it.
missing=false
if ! command -v swift >/dev/null 2>&1; then
    echo "install.sh: swift is not on PATH: install the Swift toolchain (https://www.swift.org/install/linux/) and put its usr/bin on PATH" >&2
    missing=true
fi
if ! command -v pkg-config >/dev/null 2>&1; then
    echo "install.sh: pkg-config is missing (SwiftPM finds jansson with it): apt-get install pkg-config" >&2
    missing=true
elif ! pkg-config --exists jansson; then
    echo "install.sh: jansson's headers are missing (pkg-config finds no jansson.pc): apt-get install libjansson-dev" >&2
    missing=true
fi
if ! command -v strip >/dev/null 2>&1; then
    echo "install.sh: strip is missing (the installed binary is stripped): apt-get install binutils" >&2
    missing=true
fi
if $missing; then exit 69; fi

swift build -c release --static-swift-stdlib --scratch-path .build-static --product typingd
binary=.build-static/release/typingd

install -d "$prefix/bin" "$prefix/share/man/man1" "$prefix/share/bash-completion/completions" \
    "$prefix/share/zsh/site-functions" "$prefix/share/fish/vendor_completions.d" "$prefix/share/typingd/phrases" \
    "$prefix/share/doc/typingd"
install -m 755 "$binary" "$prefix/bin/typingd"
strip "$prefix/bin/typingd"
# The pages are dated by the last commit when there is one (reproducible builds).
if [ -z "${SOURCE_DATE_EPOCH:-}" ] && date=$(git log -1 --format=%ct 2>/dev/null) && [ -n "$date" ]; then
    SOURCE_DATE_EPOCH=$date
    export SOURCE_DATE_EPOCH
fi
# An earlier install.sh installed a page for ArgumentParser's help subcommand.
rm -f "$prefix/share/man/man1/typingd.help.1"
"$prefix/bin/typingd" --generate-manual "$prefix/share/man/man1"
chmod 644 "$prefix"/share/man/man1/typingd*.1
install -m 644 Protocol.md "$prefix/share/doc/typingd/Protocol.md"
install -m 644 phrases/*.json "$prefix/share/typingd/phrases/"
"$prefix/bin/typingd" --generate-completion-script bash > "$prefix/share/bash-completion/completions/typingd"
"$prefix/bin/typingd" --generate-completion-script zsh > "$prefix/share/zsh/site-functions/_typingd"
"$prefix/bin/typingd" --generate-completion-script fish > "$prefix/share/fish/vendor_completions.d/typingd.fish"

echo "installed $("$prefix/bin/typingd" --version) in $prefix:"
echo "  $prefix/bin/typingd"
echo "  $prefix/share/man/man1/typingd.1, typingd.check.1, typingd.replay.1 (man typingd)"
echo "  $prefix/share/doc/typingd/Protocol.md (the full reference)"
echo "  $prefix/share/typingd/phrases (--phrases $prefix/share/typingd/phrases)"
echo "  completions for bash, zsh and fish under $prefix/share"
