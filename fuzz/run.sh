#!/bin/sh
# Builds the libFuzzer target (coverage-instrumented, with AddressSanitizer) and
# runs it. SwiftPM's --sanitize=fuzzer links libFuzzer but does not instrument
# Swift code for coverage on its own, hence the -sanitize-coverage flags.
#
#   fuzz/run.sh [SECONDS] [JOBS]      (default: 60 seconds, 1 job)
#
# The corpus lives in fuzz/corpus/ (committed: seeds from the golden
# transcripts, plus what the fuzzer found worth keeping); new finds go there,
# crashes to fuzz/out/. A crash found is replayed with
#   fuzz/.build/release/FuzzLineHandler fuzz/out/crash-...
# and belongs in examples/transcripts/ as a regression transcript once fixed.
# Before committing a grown corpus, keep only what adds coverage:
#   mkdir corpus-min && .build/release/FuzzLineHandler -merge=1 corpus-min corpus
#   rm -rf corpus && mv corpus-min corpus
set -eu
cd "$(dirname "$0")"
seconds=${1:-60}
jobs=${2:-1}

swift build -c release --product FuzzLineHandler \
    --sanitize=fuzzer --sanitize=address \
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
# shellcheck disable=SC2086
"$binary" corpus -dict=typingd.dict -max_len=4096 -max_total_time="$seconds" \
    -artifact_prefix=out/ -print_final_stats=1 $parallel
