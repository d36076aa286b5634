#!/bin/sh
# Builds and runs this package against a tagged copy of the repository it sits in,
# depending on typingd by version (what SwiftPM checks for unsafe flags), and checks
# its output. .ci/run calls it.   examples/embedding/run.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=${TYPINGD_PACKAGE_VERSION:-4.0.0}

# A clone of the committed tree, tagged with the version the package asks for.
git clone --quiet --no-hardlinks "$root" "$work/typingd"
git -C "$work/typingd" -c user.name=ci -c user.email=ci@localhost tag -a "$version" -m "typingd $version"

cp -R "$here/Package.swift" "$here/Sources" "$work/"
cd "$work"
TYPINGD_PACKAGE_URL="file://$work/typingd" TYPINGD_PACKAGE_VERSION="$version" \
    swift build --scratch-path "$work/.build" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
TYPINGD_PACKAGE_URL="file://$work/typingd" TYPINGD_PACKAGE_VERSION="$version" \
    swift run --skip-build --scratch-path "$work/.build" Embedding > "$work/out.txt"
if ! diff -u "$here/expected.txt" "$work/out.txt"; then
    echo "examples/embedding: the output differs from expected.txt" >&2
    exit 1
fi
echo "examples/embedding: built against typingd $version by version, and its output is as expected"
