#!/usr/bin/env python3
"""One user with N open views: offline, closing and memory stay flat per view (D2, D9).

    bench/views.py [--binary .build/release/typingd] [--sizes 10000,100000,400000] [--runs 3]

For each N the user joins N conversations and opens a view in each (nobody types,
so nothing is written). Then either one `offline` line (every view closes) or N
`close` lines, one per view, in the order they were opened, or in reverse. The time
of the ending is the run with it minus the run without it (medians of --runs,
manual clock, output to /dev/null); flat means the time per view does not grow
with N. Before the per-user view lists were intrusive, `offline` searched an array
per view (0.70 s at 100,000 views, 10 s at 400,000) and one `close` was O(N).

Then, in one live process, resident memory (VmRSS) before the views are opened,
with them open, and after they are all closed: the views' memory goes back (D9:
200,000 views opened and closed used to keep 20 MiB).
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

from memory import rss_kib
from offline import timed


def setup_lines(n):
    for c in range(n):
        yield '{"cmd":"join","conv":"c%d","user":"u"}\n' % c
    for c in range(n):
        yield '{"cmd":"open","conv":"c%d","user":"u"}\n' % c


def endings(n):
    return (("offline", ['{"cmd":"offline","user":"u"}\n']),
            ("close", ['{"cmd":"close","conv":"c%d","user":"u"}\n' % c for c in range(n)]),
            ("close rev", ['{"cmd":"close","conv":"c%d","user":"u"}\n' % c for c in reversed(range(n))]))


def settle(process, tag):
    """Writes a stats line with an id and waits for its reply: everything before it is applied."""
    process.stdin.write(('{"cmd":"stats","id":"%s"}\n' % tag).encode())
    process.stdin.flush()
    needle = ('"id":"%s"' % tag).encode()
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("typingd ended")
        if needle in line:
            return


def memory(binary, n):
    process = subprocess.Popen([binary, "--clock", "manual", "--no-drain", "--audience", "open"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        joins = [line for line in setup_lines(n) if '"join"' in line]
        opens = [line for line in setup_lines(n) if '"open"' in line]
        process.stdin.write("".join(joins).encode())
        settle(process, "joined")
        joined = rss_kib(process.pid)
        process.stdin.write("".join(opens).encode())
        settle(process, "opened")
        opened = rss_kib(process.pid)
        process.stdin.write("".join(endings(n)[1][1]).encode())
        settle(process, "closed")
        time.sleep(0.5)  # typingd returns freed memory to the system when idle
        closed = rss_kib(process.pid)
    finally:
        process.stdin.close()
        process.wait()
    return joined, opened, closed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/typingd")
    parser.add_argument("--sizes", default="10000,100000,400000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    argv = [args.binary, "--clock", "manual", "--no-drain", "--audience", "open"]
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"{'N':>8} {'ending':>10} {'ending s':>10} {'ns per view':>12}")
    with tempfile.TemporaryDirectory() as directory:
        for n in sizes:
            base = os.path.join(directory, "base.jsonl")
            with open(base, "w") as out:
                out.writelines(setup_lines(n))
            setup = statistics.median(timed(argv, base) for _ in range(args.runs))
            for name, lines in endings(n):
                full = os.path.join(directory, "full.jsonl")
                with open(base, "rb") as src, open(full, "wb") as out:
                    out.write(src.read())
                    out.write("".join(lines).encode())
                total = statistics.median(timed(argv, full) for _ in range(args.runs))
                ending = max(0.0, total - setup)
                print(f"{n:>8} {name:>10} {ending:>10.3f} {ending / n * 1e9:>12.0f}", flush=True)
    print(f"\n{'N':>8} {'joined MiB':>11} {'views open':>11} {'all closed':>11} {'kept MiB':>9}")
    for n in sizes:
        joined, opened, closed = memory(args.binary, n)
        print(f"{n:>8} {joined / 1024:>11.1f} {opened / 1024:>11.1f} {closed / 1024:>11.1f} "
              f"{(closed - joined) / 1024:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
