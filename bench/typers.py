#!/usr/bin/env python3
"""N typers in one room: starting, keystrokes and timeouts stay flat per typer.

    bench/typers.py [--binary .build/release/typingd] [--sizes 10000,100000,400000] [--runs 3]

One conversation of N members under `--audience open` with nobody's view open (so
nothing is rendered or written); the cost measured is keeping the room's typers in
order. For each N and each `--order`:

- start: every member starts a streak (N starts);
- keystroke: then every typer types again, in the order they started (N keystrokes;
  under `recent` each one moves its typer to the front);
- timeout: then one `tick` past the deadline (N timeouts in one line).

The time of each phase is the run with it minus the run without it (medians of
--runs, manual clock, output to /dev/null); flat means the time per typer does not
grow with N. Before the typers were kept in an order-statistics structure, one tick
timing out 100,000 typers took 4.3 s, and a keystroke under `recent` went from 13 to
93 µs between 10,000 and 100,000 typers.
"""
import argparse
import os
import statistics
import tempfile

from offline import timed


def phases(n):
    joins = ['{"cmd":"join","conv":"room","user":"u%d"}\n' % u for u in range(n)]
    starts = ['{"cmd":"type","conv":"room","user":"u%d","at":1000}\n' % u for u in range(n)]
    again = ['{"cmd":"type","conv":"room","user":"u%d","at":2000}\n' % u for u in range(n)]
    tick = ['{"cmd":"tick","at":100000}\n']
    return joins, (("start", starts), ("keystroke", again), ("timeout", tick))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/typingd")
    parser.add_argument("--sizes", default="10000,100000,400000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'N':>8} {'order':>7} {'phase':>10} {'phase s':>9} {'ns per typer':>13}")
    with tempfile.TemporaryDirectory() as directory:
        for n in (int(size) for size in args.sizes.split(",")):
            joins, steps = phases(n)
            for order in ("start", "recent", "name"):
                argv = [args.binary, "--clock", "manual", "--no-drain", "--audience", "open",
                        "--order", order, "--max-members", str(max(n, 1))]
                lines = list(joins)
                path = os.path.join(directory, "in.jsonl")
                before = None
                for name, more in ((None, []),) + steps:
                    lines += more
                    with open(path, "w") as out:
                        out.writelines(lines)
                    total = statistics.median(timed(argv, path) for _ in range(args.runs))
                    if name is not None:
                        phase = max(0.0, total - before)
                        print(f"{n:>8} {order:>7} {name:>10} {phase:>9.3f} {phase / n * 1e9:>13.0f}", flush=True)
                    before = total


if __name__ == "__main__":
    main()
