#!/usr/bin/env python3
"""One user typing in N conversations at once, then gone: offline and drain stay linear.

    bench/offline.py [--binary .build/release/typingd] [--sizes 50000,100000,200000] [--runs 3]

For each N: the user and a partner join N conversations and the user types in
every one (N live streaks). Then either one `offline` line (every streak stops,
N indicators) or one `tick` past the deadline (every streak times out). The time
of that last line is the run with it minus the run without it (medians of --runs,
manual clock, output to /dev/null). Linear means the time per stop stays flat as
N grows; before protocol v2's reshape, `offline` shifted an array per stop
(O(N^2): +1.0 s at 200,000, 26 s at 1,000,000).
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/typingd")
    parser.add_argument("--sizes", default="50000,100000,200000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    argv = [args.binary, "--clock", "manual", "--no-drain"]
    print(f"{'N':>8} {'ending':>8} {'last line s':>12} {'ns per stop':>12}")
    with tempfile.TemporaryDirectory() as directory:
        for n in (int(size) for size in args.sizes.split(",")):
            base = os.path.join(directory, "base.jsonl")
            with open(base, "w") as out:
                for c in range(n):
                    out.write('{"cmd":"join","conv":"c%d","user":"u"}\n{"cmd":"join","conv":"c%d","user":"p"}\n' % (c, c))
                for c in range(n):
                    out.write('{"cmd":"type","conv":"c%d","user":"u","at":1000}\n' % c)
            setup = statistics.median(timed(argv, base) for _ in range(args.runs))
            for ending, line in (("offline", '{"cmd":"offline","user":"u","at":2000}\n'),
                                 ("timeout", '{"cmd":"tick","at":100000}\n')):
                full = os.path.join(directory, ending + ".jsonl")
                with open(base, "rb") as src, open(full, "wb") as out:
                    out.write(src.read())
                    out.write(line.encode())
                total = statistics.median(timed(argv, full) for _ in range(args.runs))
                last = max(0.0, total - setup)
                print(f"{n:>8} {ending:>8} {last:>12.3f} {last / n * 1e9:>12.0f}", flush=True)


if __name__ == "__main__":
    main()
