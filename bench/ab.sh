#!/bin/sh
# A/B timing on this noisy machine: runs each command N times, alternating, and
# prints the median wall time of each.  bench/ab.sh N INPUT 'command A' 'command B' ...
set -eu
runs=$1; input=$2; shift 2
for cmd in "$@"; do : > "/tmp/ab.$(printf %s "$cmd" | md5sum | cut -c1-8)"; done
i=0
while [ $i -lt "$runs" ]; do
    for cmd in "$@"; do
        file="/tmp/ab.$(printf %s "$cmd" | md5sum | cut -c1-8)"
        /usr/bin/time -f "%e" -a -o "$file" sh -c "$cmd" < "$input" > /dev/null 2>&1
    done
    i=$((i + 1))
done
for cmd in "$@"; do
    file="/tmp/ab.$(printf %s "$cmd" | md5sum | cut -c1-8)"
    printf '%6s s  %s\n' "$(sort -n "$file" | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')" "$cmd"
done
