#!/usr/bin/env python3
"""Thread screens in a big room: entering, leaving, forgotten and told stay flat in N.

    bench/thread_screens.py [--binary .build/release/typingd] [--baseline OTHER]
                            [--sizes 25000,100000,400000] [--baseline-max 100000]
                            [--runs 3]

For each N and each order (join order, reverse): N members join one room, each opens
its thread `t` (under `--audience members`), then each leaves the thread's screen by
one of three endings: `offline` (its screen is forgotten), `close` (told at once), or
`forget` (forgotten, as a snapshot's rebuild does). Then a `send` tells the forgotten
screens. Prints the time per input line (median of --runs alternating runs, manual
clock, output to /dev/null); flat in N means each step costs the same whatever the
room's size. With --baseline, the other binary runs the same files in the same run
(sizes up to --baseline-max: a build whose thread viewers are sorted arrays takes
seconds per 100,000 lines in reverse order).
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


def write_input(path, n, order, ending):
    members = range(n) if order == "join" else range(n - 1, -1, -1)
    lines = 0
    with open(path, "w") as out:
        for m in range(n):
            out.write('{"cmd":"join","conv":"room","user":"m%d"}\n' % m)
        for m in members:
            out.write('{"cmd":"open","conv":"room","user":"m%d","thread":"t","at":1}\n' % m)
        for m in members:
            if ending == "offline":
                out.write('{"cmd":"offline","user":"m%d","at":2}\n' % m)
            else:
                out.write('{"cmd":"%s","conv":"room","user":"m%d","at":2}\n' % (ending, m))
        out.write('{"cmd":"join","conv":"room","user":"teller"}\n')
        out.write('{"cmd":"send","conv":"room","user":"teller","at":3}\n')
        lines = 3 * n + 2
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/typingd")
    parser.add_argument("--baseline")
    parser.add_argument("--sizes", default="25000,100000,400000")
    parser.add_argument("--baseline-max", type=int, default=100000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    options = ["--clock", "manual", "--no-drain", "--audience", "members"]
    binaries = [("this", args.binary)] + ([("baseline", args.baseline)] if args.baseline else [])
    print(f"{'N':>8} {'order':>7} {'ending':>8} " + " ".join(f"{name + ' ns/line':>17}" for name, _ in binaries))
    with tempfile.TemporaryDirectory() as directory:
        for n in (int(size) for size in args.sizes.split(",")):
            for order in ("join", "reverse"):
                for ending in ("offline", "close", "forget"):
                    path = os.path.join(directory, "input.jsonl")
                    lines = write_input(path, n, order, ending)
                    times = {name: [] for name, _ in binaries}
                    for _ in range(args.runs):
                        # Alternating runs: the machine's noise falls on both alike.
                        for name, binary in binaries:
                            if name == "baseline" and n > args.baseline_max:
                                continue
                            times[name].append(timed([binary] + options, path))
                    cells = []
                    for name, _ in binaries:
                        if times[name]:
                            cells.append(f"{statistics.median(times[name]) / lines * 1e9:>17.0f}")
                        else:
                            cells.append(f"{'-':>17}")
                    print(f"{n:>8} {order:>7} {ending:>8} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
