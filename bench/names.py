#!/usr/bin/env python3
"""A join's cost against the length of its name: flat per byte, not per scalar of generic code.

    bench/names.py [--binary .build/release/typingd] [--also NAME=PATH ...]
                   [--joins 4000] [--runs 3] [--lengths 8,100,400,1000]

For each length L (bytes of UTF-8, at most the 1,024 a name may have), --joins
joins into 50 rooms, every name L bytes long: ASCII names, and names of 2-byte
letters with a control character and spaces at both ends (the path that cleans).
Rows: microseconds per join (user+system CPU, median of --runs, the run of
8-byte ASCII names taken away), so what is left is what the name's length costs.
Before commit "DisplayName.clean costs one scan of the name's bytes", a 900-byte
name cost about 2 ms a join (2,000 joins: 4.2 s against 0.03 s with short names).
--also runs other binaries (e.g. the previous build) on the same inputs,
alternating with the first, so that their figures come from the same run.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile


def cpu_of(binary, path):
    """User+system CPU seconds of one run of `binary` on `path`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(path, "rb") as stdin, open(os.devnull, "wb") as stdout:
        subprocess.run([binary, "--clock", "manual", "--no-drain"], stdin=stdin, stdout=stdout, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def name(kind, length, i):
    tag = str(i)
    if kind == "ascii":
        return "N" * max(1, length - len(tag)) + tag
    # " \u0007" + 2-byte letters + tag + "  ": cleaned (a control dropped, spaces trimmed).
    letters = max(1, (length - len(tag) - 4) // 2)
    return " \u0007" + "é" * letters + tag + " "


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--binary", default=os.path.join(here, "..", ".build", "release", "typingd"))
    parser.add_argument("--also", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--joins", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lengths", default="8,100,400,1000")
    args = parser.parse_args()
    binaries = [("this", args.binary)] + [tuple(a.split("=", 1)) for a in args.also]
    lengths = [int(x) for x in args.lengths.split(",")]
    if any(not 1 <= n <= 1024 for n in lengths):
        parser.error("--lengths: each from 1 to 1024 (a name's limit)")
    with tempfile.TemporaryDirectory() as work:
        inputs = {}
        for kind in ("ascii", "cleaned"):
            for length in sorted(set(lengths + [8])):
                path = os.path.join(work, "{}-{}.jsonl".format(kind, length))
                with open(path, "w") as f:
                    for i in range(args.joins):
                        f.write(json.dumps({"cmd": "join", "conv": "c{}".format(i % 50), "user": "u{}".format(i),
                                            "name": name(kind, length, i)}, ensure_ascii=False) + "\n")
                inputs[(kind, length)] = path
        times = {}
        for _ in range(args.runs):
            for key, path in inputs.items():
                for label, binary in binaries:
                    times.setdefault((label, key), []).append(cpu_of(binary, path))
        print("µs per join above 8-byte ASCII names, {} joins, median of {} runs".format(args.joins, args.runs))
        for label, _ in binaries:
            base = statistics.median(times[(label, ("ascii", 8))])
            for kind in ("ascii", "cleaned"):
                row = ["{:>5} B {:7.1f}".format(n, 1e6 * (statistics.median(times[(label, (kind, n))]) - base) / args.joins)
                       for n in lengths]
                print("{:<8} {:<8} {}".format(label, kind, "   ".join(row)))


if __name__ == "__main__":
    main()
