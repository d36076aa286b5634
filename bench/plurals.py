#!/usr/bin/env python3
"""Plurals: does a long plural rule cost more than a short one?

    bench/plurals.py [--binary .build/release/typingd] [--members 200]
                     [--churn 20] [--ranges 95000] [--runs 7] [--also NAME=BINARY ...]

One conversation of --members named members who all read table `xx` (English's
phrases), all of whom start typing, then --churn lines of one typer sending and
typing again (with the defaults: 420 lines). Every render phrases
each typer's view ("A, B, and 198 others are typing..."), so every render looks up
the plural category of about 200 counts of 128 or more, which the rules do not
work out in advance. Two tables, the same but for `plural`:

- small: `one` is English's `i = 1 and v = 0`;
- big:   `one` is `i = 1 and v = 0 or n = 1000000,1000002,...` with --ranges
         values (95,000: a 760 KB table), none of which a count here reaches, so
         a rule scanned range by range is scanned to its end.

The time of the typing alone is the run minus the run of its joins alone (medians
of --runs alternating runs, manual clock, one thread, output to /dev/null).
Reported: seconds, and big over small for each binary (goal: within 1.2x).
--also runs both tables with another binary (the baseline build), in the same run.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

ENGLISH = {
    "names": {"0+1": "Someone", "0+n": "{r} people", "1": "{0}", "1+1": "{0} and someone else",
              "1+n": "{0} and {r} others", "2": "{0} and {1}", "2+1": "{0}, {1}, and someone else",
              "2+n": "{0}, {1}, and {r} others", "3": "{0}, {1}, and {2}"},
    "verbs": {"typing": {"one": "is typing", "other": "are typing"},
              "recording_audio": {"one": "is recording audio", "other": "are recording audio"},
              "recording_video": {"one": "is recording video", "other": "are recording video"},
              "sending_photo": {"one": "is sending a photo", "other": "are sending photos"},
              "sending_video": {"one": "is sending a video", "other": "are sending videos"},
              "sending_file": {"one": "is sending a file", "other": "are sending files"},
              "sharing_location": {"one": "is sharing a location", "other": "are sharing locations"}},
    "clause": "{names} {verb}", "separator": "; ", "end": "...",
}


def write_table(directory, case, ranges):
    rule = "i = 1 and v = 0"
    if case == "big":
        rule += " or n = " + ",".join(str(1_000_000 + 2 * k) for k in range(ranges))
    table = dict(ENGLISH, locale="xx", plural={"one": rule})
    path = os.path.join(directory, f"table-{case}.json")
    with open(path, "w") as f:
        json.dump(table, f, ensure_ascii=False)
    return path


def write_inputs(directory, members, churn):
    joins = [b'{"cmd":"join","conv":"room","user":"m%d","name":"Member %d","locale":"xx"}\n' % (m, m)
             for m in range(members)]
    typing, t = [], 0
    for m in range(members):
        t += 10
        typing.append(b'{"cmd":"type","conv":"room","user":"m%d","at":%d}\n' % (m, t))
    for k in range(churn):
        m = k % members
        t += 10
        command = b"send" if k % 2 == 0 else b"type"
        typing.append(b'{"cmd":"%s","conv":"room","user":"m%d","at":%d}\n' % (command, m, t))
    only_joins = os.path.join(directory, "joins.jsonl")
    full = os.path.join(directory, "typing.jsonl")
    with open(only_joins, "wb") as f:
        f.write(b"".join(joins))
    with open(full, "wb") as f:
        f.write(b"".join(joins + typing))
    return only_joins, full


def timed(binary, table, path):
    with open(path, "rb") as stdin, open(os.devnull, "wb") as stdout:
        start = time.perf_counter()
        subprocess.run([binary, "--clock", "manual", "--no-drain", "--threads", "1", "--phrases", table],
                       stdin=stdin, stdout=stdout, check=True)
        return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/typingd"))
    parser.add_argument("--members", type=int, default=200)
    parser.add_argument("--churn", type=int, default=20)
    parser.add_argument("--ranges", type=int, default=95_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--also", action="append", default=[], help="NAME=BINARY: both tables with another build")
    args = parser.parse_args()
    binaries = [("typingd", args.binary)] + [tuple(spec.split("=", 1)) for spec in args.also]
    with tempfile.TemporaryDirectory() as directory:
        tables = {case: write_table(directory, case, args.ranges) for case in ("small", "big")}
        joins, full = write_inputs(directory, args.members, args.churn)
        samples = {(name, case): [] for name, _ in binaries for case in tables}
        for _ in range(args.runs):
            for name, binary in binaries:
                for case, table in tables.items():
                    samples[(name, case)].append(timed(binary, table, full) - timed(binary, table, joins))
        lines = 2 * args.members + args.churn
        size = os.path.getsize(tables["big"])
        print(f"plurals: a room of {args.members} typers, {lines} lines; big rule {args.ranges} ranges "
              f"({size:,} bytes); medians of {args.runs} alternating runs")
        print(f"{'binary':<12} {'case':<6} {'seconds':>8} {'vs small':>9}")
        for name, _ in binaries:
            small = statistics.median(samples[(name, "small")])
            for case in tables:
                median = statistics.median(samples[(name, case)])
                print(f"{name:<12} {case:<6} {median:8.3f} {median / small:8.2f}x")


if __name__ == "__main__":
    sys.exit(main())
