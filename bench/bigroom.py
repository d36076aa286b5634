#!/usr/bin/env python3
"""Big rooms: is the cost per written indicator event flat in the room's size?

    bench/bigroom.py [--binary .build/release/typingd] [--sizes 10,100,1000,10000]
                     [--changes 4000] [--keystrokes 0] [--runs 3]

For each size M: one conversation of M members (named), then a churn of
--changes × 1000 / M streak starts and stops (a few million events per size) with min(20, M/2) typers active at any time,
each typing --keystrokes more keystrokes (which change nothing, and only add
input to parse) before sending. Every start or stop changes what every member
sees, so the work is about M events per change; what matters is the time per
event, which must not grow with M (no per-viewer work proportional to the
typers). In small rooms the cost of parsing each change's line is shared by
few events, so their time per event is higher whatever the engine does.

The time of the churn alone is the run with churn minus the run with only the
joins (medians of --runs each, manual clock, output to /dev/null).
"""
import argparse
import os
import random
import statistics
import subprocess
import tempfile
import time


def write_inputs(directory, size, changes, keystrokes=0, seed=7):
    rng = random.Random(seed)
    joins = [b'{"cmd":"join","conv":"big","user":"m%d","name":"Member %d"}\n' % (m, m) for m in range(size)]
    typers = max(1, min(20, size // 2))
    churn = []
    t = 0
    active = []
    idle = list(range(size))
    rng.shuffle(idle)
    made = 0
    while made < changes:
        t += 10
        if len(active) < typers and idle:
            m = idle.pop()
            active.append(m)
            churn.append(b'{"cmd":"type","conv":"big","user":"m%d","at":%d}\n' % (m, t))
            made += 1
        else:
            m = active.pop(rng.randrange(len(active)))
            for _ in range(keystrokes):
                churn.append(b'{"cmd":"type","conv":"big","user":"m%d","at":%d}\n' % (m, t))
            churn.append(b'{"cmd":"send","conv":"big","user":"m%d","at":%d}\n' % (m, t))
            idle.insert(0, m)
            made += 1
    only_joins = os.path.join(directory, f"joins-{size}.jsonl")
    full = os.path.join(directory, f"churn-{size}.jsonl")
    with open(only_joins, "wb") as f:
        f.write(b"".join(joins))
    with open(full, "wb") as f:
        f.write(b"".join(joins + churn))
    return only_joins, full


def timed(binary, path):
    with open(path, "rb") as stdin, open(os.devnull, "wb") as stdout:
        start = time.perf_counter()
        subprocess.run([binary, "--clock", "manual", "--no-drain"], stdin=stdin, stdout=stdout, check=True)
        return time.perf_counter() - start


def count_events(binary, path):
    with open(path, "rb") as stdin:
        out = subprocess.run([binary, "--clock", "manual", "--no-drain"], stdin=stdin,
                             capture_output=True, check=True).stdout
    return out.count(b'"event":"indicator"')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/typingd")
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--changes", type=int, default=4000)
    parser.add_argument("--keystrokes", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'members':>8} {'typers':>6} {'events':>10} {'churn s':>8} {'ns/event':>9}")
    results = []
    with tempfile.TemporaryDirectory() as directory:
        for size in map(int, args.sizes.split(",")):
            # Enough changes for a few million events in every row.
            changes = min(200_000, max(400, args.changes * 1000 // size))
            joins, full = write_inputs(directory, size, changes, args.keystrokes)
            events = count_events(args.binary, full) - count_events(args.binary, joins)
            base = statistics.median(timed(args.binary, joins) for _ in range(args.runs))
            total = statistics.median(timed(args.binary, full) for _ in range(args.runs))
            churn = max(0.0, total - base)
            per = churn / events * 1e9 if events else float("nan")
            results.append(per)
            print(f"{size:>8} {max(1, min(20, size // 2)):>6} {events:>10,} {churn:>8.3f} {per:>9.1f}")
    print(f"largest / smallest ns per event: {max(results) / min(results):.2f}")


if __name__ == "__main__":
    main()
