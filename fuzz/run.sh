#!/bin/sh
# Builds the libFuzzer target (coverage-instrumented, with AddressSanitizer and the
# engine's invariant checker) and runs it.
#
#   fuzz/run.sh [SECONDS] [JOBS]      (default: 60 seconds, 1 job)
#
# What is kept in git, as swift-protobuf keeps its fuzzing (FuzzTesting/):
#   typingd.dict       the dictionary: the protocol's keys, commands and values;
#   regressions/NAME   named cases: inputs that once failed, or that were written
#                      for a finding; `swift test` checks each one with the
#                      fuzzer's own properties (LineHandlerFuzz), so a bug that
#                      comes back fails there without running the fuzzer.
# What is not: the corpus (fuzz/corpus/, ignored), which starts from seeds made
# here from the golden transcripts and grows with every run; crashes go to
# fuzz/out/. A crash found is replayed with
#   fuzz/.build/release/FuzzLineHandler fuzz/out/crash-...
# and, once fixed, is copied to fuzz/regressions/ under a name that says what it
# was (and, when it tells a story, becomes a golden transcript too).
#
# SwiftPM's --sanitize=fuzzer links libFuzzer but does not instrument Swift code
# for coverage on its own, hence the -sanitize-coverage flags.
set -eu
cd "$(dirname "$0")"
seconds=${1:-60}
jobs=${2:-1}

swift build -c release --product FuzzLineHandler \
    --sanitize=fuzzer --sanitize=address \
    -Xswiftc -DTYPINGD_INTERNAL_CHECKS \
    -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp >&2
binary=.build/release/FuzzLineHandler

mkdir -p corpus out
# Seeds: each golden transcript, behind three option bytes (v1 options, v2
# options, where to cut the input), written again each run so new ones join.
for input in ../examples/transcripts/*.in.jsonl; do
    name=$(basename "$input" .in.jsonl)
    { printf '\000\000\200'; cat "$input"; } > "corpus/seed-$name"
    { printf '\377\033\100'; cat "$input"; } > "corpus/seed-$name-options"
done

if [ "$jobs" -gt 1 ]; then
    parallel="-jobs=$jobs -workers=$jobs"
else
    parallel=""
fi
# corpus/ grows; regressions/ is read as more seeds and never written.
# shellcheck disable=SC2086
"$binary" corpus regressions -dict=typingd.dict -max_len=4096 -max_total_time="$seconds" \
    -artifact_prefix=out/ -print_final_stats=1 $parallel
