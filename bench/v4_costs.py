#!/usr/bin/env python3
"""What protocol v4's features cost: quiet rooms, side panes, announcements.

    bench/v4_costs.py [--binary .build/release/typingd] [--runs 5] [--w1 bench/out/w1.jsonl]

Three rows, each a ratio of two runs measured in the same run (medians of --runs
alternating runs, manual clock, output to /dev/null):

- quiet: keystrokes in a room above `--quiet-above 50` of 100,000 members against a
  room of 100: the time of the keystroke lines (the run with them minus the run
  without). A keystroke in a quiet room visits no screen, so the ratio stays near 1.
- side panes: keystrokes in the channel of a room of 10,000 members, each with a side
  pane on a thread of their own, against the same room without side panes.
- announce: the W1 workload (bench/gen_w1.py) with `--announce-after-ms 2000`
  against without it.
"""
import argparse
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


def medians(runs, pairs):
    """Alternates the (name, argv, path) runs; returns each one's median time."""
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
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keystrokes", type=int, default=200000)
    parser.add_argument("--w1", default="bench/out/w1.jsonl")
    args = parser.parse_args()
    base = [args.binary, "--clock", "manual", "--no-drain"]
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
        quiet = base + ["--quiet-above", "50"]
        t = medians(args.runs, [(n, quiet, paths[n]) for n in ("quiet100", "quiet100_setup", "quiet100k", "quiet100k_setup")])
        small = t["quiet100"] - t["quiet100_setup"]
        large = t["quiet100k"] - t["quiet100k_setup"]
        print(f"quiet: {args.keystrokes} keystrokes, 100 members {small:.3f} s, 100,000 members {large:.3f} s: "
              f"{large / small:.2f}x", flush=True)
        t = medians(args.runs, [(n, base, paths[n]) for n in ("plain10k", "plain10k_setup", "side10k", "side10k_setup")])
        plain = t["plain10k"] - t["plain10k_setup"]
        side = t["side10k"] - t["side10k_setup"]
        print(f"side panes: {args.keystrokes // 10} channel keystrokes in a room of 10,000, without side panes "
              f"{plain:.3f} s, each member with one {side:.3f} s: {side / plain:.2f}x", flush=True)
        if os.path.exists(args.w1):
            t = medians(args.runs, [("plain", base, args.w1), ("announce", base + ["--announce-after-ms", "2000"], args.w1)])
            print(f"announce: W1 {t['plain']:.3f} s, with --announce-after-ms 2000 {t['announce']:.3f} s: "
                  f"{t['announce'] / t['plain']:.2f}x", flush=True)
        else:
            print(f"announce: skipped, no {args.w1} (bench/gen_w1.py > {args.w1})")


if __name__ == "__main__":
    main()
