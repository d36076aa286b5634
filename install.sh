#!/bin/sh
# Builds typingd with the Swift standard library linked in, and installs it under a
# prefix with its manual pages and shell completions:
#
#   ./install.sh [--prefix DIR]        (default prefix: /usr/local)
#
#   DIR/bin/typingd
#   DIR/share/man/man1/typingd.1, typingd.check.1, typingd.replay.1, typingd.help.1
#   DIR/share/doc/typingd/Protocol.md  (the full reference the pages point to)
#   DIR/share/typingd/phrases/*.json   (the phrase tables: --phrases DIR/share/typingd/phrases)
#   DIR/share/bash-completion/completions/typingd
#   DIR/share/zsh/site-functions/_typingd
#   DIR/share/fish/vendor_completions.d/typingd.fish
#
# The binary needs no Swift toolchain where it runs: only libjansson (Debian:
# libjansson4) and the C and C++ runtimes every Debian system has (`ldd` lists no
# Swift library). Building needs the Swift toolchain and libjansson-dev. The builds
# go to .build-static/ and .build-manual/, beside the normal .build/.
set -eu
cd "$(dirname "$0")"

prefix=/usr/local
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=${2:?--prefix needs a folder}; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown argument $1 (try --help)" >&2; exit 64 ;;
    esac
done

if ! pkg-config --exists jansson 2>/dev/null; then
    echo "install.sh: jansson's headers are missing: apt-get install libjansson-dev pkg-config" >&2
    exit 69
fi

# Two build folders: the manual's plugin builds the package its own way, and SwiftPM
# would take that build for an up-to-date static one.
swift build -c release --static-swift-stdlib --scratch-path .build-static --product typingd
binary=.build-static/release/typingd
swift package --scratch-path .build-manual generate-manual --multi-page >/dev/null
manuals=.build-manual/plugins/GenerateManual/outputs/typingd

install -d "$prefix/bin" "$prefix/share/man/man1" "$prefix/share/bash-completion/completions" \
    "$prefix/share/zsh/site-functions" "$prefix/share/fish/vendor_completions.d" "$prefix/share/typingd/phrases" \
    "$prefix/share/doc/typingd"
install -m 755 "$binary" "$prefix/bin/typingd"
# The generated pages keep the help text's blank lines, which mdoc warns about
# ("Empty input line"): each becomes a paragraph break.
for page in "$manuals"/*.1; do
    sed 's/^$/.Pp/' "$page" > "$prefix/share/man/man1/$(basename "$page")"
    chmod 644 "$prefix/share/man/man1/$(basename "$page")"
done
install -m 644 Protocol.md "$prefix/share/doc/typingd/Protocol.md"
install -m 644 phrases/*.json "$prefix/share/typingd/phrases/"
"$binary" --generate-completion-script bash > "$prefix/share/bash-completion/completions/typingd"
"$binary" --generate-completion-script zsh > "$prefix/share/zsh/site-functions/_typingd"
"$binary" --generate-completion-script fish > "$prefix/share/fish/vendor_completions.d/typingd.fish"

echo "installed $("$prefix/bin/typingd" --version) in $prefix:"
echo "  $prefix/bin/typingd"
echo "  $prefix/share/man/man1/typingd.1, typingd.check.1, typingd.replay.1, typingd.help.1 (man typingd)"
echo "  $prefix/share/doc/typingd/Protocol.md (the full reference)"
echo "  $prefix/share/typingd/phrases (--phrases $prefix/share/typingd/phrases)"
echo "  completions for bash, zsh and fish under $prefix/share"
