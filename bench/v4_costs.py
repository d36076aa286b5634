#!/usr/bin/env python3
"""What protocol v4's features cost: quiet rooms, side panes, announcements.

    bench/v4_costs.py [--binary .build/release/typingd] [--baseline OLD] [--runs 5]
                      [--w1 bench/out/w1.jsonl] [--instructions]

Three rows, each a ratio of two runs measured in the same run (medians of --runs
alternating runs, manual clock, output to /dev/null):

- quiet: keystrokes in a room above `--quiet-above 50` of 100,000 members against a
  room of 100: the time of the keystroke lines (the run with them minus the run
  without). A keystroke in a quiet room visits no screen, so the ratio stays near 1.
- side panes: keystrokes in the channel of a room of 10,000 members, each with a side
  pane on a thread of their own, against the same room without side panes.
- announce: the W1 workload (bench/gen_w1.py) with `--announce-after-ms 2000`
  against without it.
- W1 unchanged: the W1 workload without any v4 option, against --baseline.

With --baseline (the previous build, e.g. 3.1.0), each row also runs that build on
the same files (without the v4 options it lacks), in the same run. With
--instructions, each figure is the instruction count under valgrind's cachegrind
(`--cache-sim=no`, one run each, `--threads 1`): exact and the same on every run,
where times on a shared machine drift; use `--w1` with a 200,000-line file then
(valgrind runs about 50 times slower).
"""
import argparse
import re
import sys
import os
import statistics
import subprocess
import tempfile
import time


def timed(argv, path):
    with open(path, "rb") as stdin, open(os.devnull, "wb") as stdout:
        start = time.perf_counter()
        subprocess.run(argv, stdin=stdin, stdout=stdout, check=True)
        return time.perf_counter() - start


def instructions(argv, path):
    """The instructions `argv` runs on `path` (valgrind cachegrind, no cache model)."""
    with open(path, "rb") as stdin:
        run = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
                             + argv + ["--threads", "1"], stdin=stdin, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, check=True)
    match = re.search(r"I\s+refs:\s+([\d,]+)", run.stderr)
    if not match:
        sys.exit("v4_costs.py: no instruction count from valgrind:\n" + run.stderr[-2000:])
    return int(match.group(1).replace(",", ""))


def medians(runs, pairs, count=False):
    """Alternates the (name, argv, path) runs; returns each one's median time, or
    with `count` its instruction count (one run: it does not vary)."""
    if count:
        return {name: instructions(argv, path) for name, argv, path in pairs}
    times = {name: [] for name, _, _ in pairs}
    for _ in range(runs):
        for name, argv, path in pairs:
            times[name].append(timed(argv, path))
    return {name: statistics.median(values) for name, values in times.items()}


def room(path, members, keystrokes, side_panes=False):
    with open(path, "w") as out:
        for m in range(members):
            out.write('{"cmd":"join","conv":"big","user":"m%d"}\n' % m)
        if side_panes:
            for m in range(members):
                out.write('{"cmd":"open","conv":"big","user":"m%d","thread":"own%d","pane":"side","at":1}\n' % (m, m))
        for k in range(keystrokes):
            out.write('{"cmd":"type","conv":"big","user":"m%d","at":%d}\n' % (k % 50, 10 + k))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/typingd")
    parser.add_argument("--baseline", help="the previous build, run on the same files in the same run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keystrokes", type=int, default=200000)
    parser.add_argument("--w1", default="bench/out/w1.jsonl")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions under valgrind instead of timing")
    args = parser.parse_args()
    count = args.instructions
    scratch = tempfile.TemporaryDirectory()
    if count:
        # Valgrind 3.19 (Debian 12) cannot read the DWARF 5 the Swift toolchain
        # writes: it counts copies without debug information.
        for option in ("binary", "baseline"):
            if getattr(args, option):
                copy = os.path.join(scratch.name, option)
                subprocess.run(["strip", "--strip-debug", "-o", copy, getattr(args, option)], check=True)
                setattr(args, option, copy)
    unit = "instructions" if count else "s"
    fmt = (lambda v: f"{v / 1e6:,.1f}M") if count else (lambda v: f"{v:.3f} s")
    base = [args.binary, "--clock", "manual", "--no-drain"]
    old = [args.baseline, "--clock", "manual", "--no-drain"] if args.baseline else None
    print(f"v4_costs.py: {'instruction counts' if count else f'medians of {args.runs} alternating runs'}"
          + (", against the baseline build" if old else ""), flush=True)
    with tempfile.TemporaryDirectory() as d:
        paths = {}
        for name, members, keystrokes, panes in [("quiet100", 100, args.keystrokes, False),
                                                 ("quiet100_setup", 100, 0, False),
                                                 ("quiet100k", 100000, args.keystrokes, False),
                                                 ("quiet100k_setup", 100000, 0, False),
                                                 ("plain10k", 10000, args.keystrokes // 10, False),
                                                 ("plain10k_setup", 10000, 0, False),
                                                 ("side10k", 10000, args.keystrokes // 10, True),
                                                 ("side10k_setup", 10000, 0, True)]:
            paths[name] = os.path.join(d, name + ".jsonl")
            room(paths[name], members, keystrokes, panes)

        def keystrokes(t, prefix=""):
            small = t[prefix + "quiet100"] - t[prefix + "quiet100_setup"]
            large = t[prefix + "quiet100k"] - t[prefix + "quiet100k_setup"]
            return small, large

        quiet = base + ["--quiet-above", "50"]
        runs = [(n, quiet, paths[n]) for n in ("quiet100", "quiet100_setup", "quiet100k", "quiet100k_setup")]
        if old:
            runs += [("old_" + n, old, paths[n]) for n in ("quiet100", "quiet100_setup", "quiet100k", "quiet100k_setup")]
        t = medians(args.runs, runs, count)
        small, large = keystrokes(t)
        print(f"quiet: {args.keystrokes} keystrokes, --quiet-above 50, room of 100 {fmt(small)}, of 100,000 "
              f"{fmt(large)}: {large / small:.2f}x", flush=True)
        if old:
            small, large = keystrokes(t, "old_")
            print(f"  previous build (no --quiet-above): room of 100 {fmt(small)}, of 100,000 {fmt(large)}: "
                  f"{large / small:.2f}x", flush=True)
        runs = [(n, base, paths[n]) for n in ("plain10k", "plain10k_setup", "side10k", "side10k_setup")]
        if old:
            runs += [("old_" + n, old, paths[n]) for n in ("plain10k", "plain10k_setup")]
        t = medians(args.runs, runs, count)
        plain = t["plain10k"] - t["plain10k_setup"]
        side = t["side10k"] - t["side10k_setup"]
        print(f"side panes: {args.keystrokes // 10} channel keystrokes in a room of 10,000, without side panes "
              f"{fmt(plain)}, each member with one {fmt(side)}: {side / plain:.2f}x", flush=True)
        if old:
            previous = t["old_plain10k"] - t["old_plain10k_setup"]
            print(f"  previous build, without side panes: {fmt(previous)} ({plain / previous:.2f}x of it without, "
                  f"{side / previous:.2f}x with)", flush=True)
        if os.path.exists(args.w1):
            runs = [("plain", base, args.w1), ("announce", base + ["--announce-after-ms", "2000"], args.w1)]
            if old:
                runs.append(("old", old, args.w1))
            t = medians(args.runs, runs, count)
            print(f"announce: W1 {fmt(t['plain'])}, with --announce-after-ms 2000 {fmt(t['announce'])}: "
                  f"{t['announce'] / t['plain']:.2f}x", flush=True)
            if old:
                print(f"W1 unchanged: previous build {fmt(t['old'])}, this one {fmt(t['plain'])}: "
                      f"{t['plain'] / t['old']:.4f}x", flush=True)
        else:
            print(f"announce: skipped, no {args.w1} (bench/gen_w1.py > {args.w1})")


if __name__ == "__main__":
    main()
