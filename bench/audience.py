#!/usr/bin/env python3
"""Big rooms under --audience open: does a step cost O(open views + typers), not O(members)?

    bench/audience.py [--binary .build/release/typingd] [--rows 10000:10,10000:100,...]
                      [--commands 200000] [--keystrokes 4] [--runs 3]

Each row is M:K: one conversation of M members of which K have their view open
(spread over the join order), and 20 typers churning: a typer starts, types
--keystrokes more keystrokes, and sends; the next one starts. About --commands
such commands run, with --order start and --order recent (where a keystroke by a
typer who is not first moves them to the front: a visible change, so a render).
Typers are members whose view is closed, so every render visits the K open views.

The time of the churn is the run with churn minus the run with only the joins
and opens (medians of --runs each, manual clock, output to /dev/null), divided
by the churn's commands. Under --audience open it should follow K and stay flat
in M; the last rows run --audience members for contrast (there every member is
the audience, so it follows M).
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

TYPERS = 20


def write_inputs(directory, members, opened, commands, keystrokes):
    step = max(1, members // opened) if opened else members + 1
    viewers = set(range(0, members, step)) if opened else set()
    viewers = set(sorted(viewers)[:opened])
    setup = [b'{"cmd":"join","conv":"big","user":"m%d","name":"Member %d"}\n' % (m, m) for m in range(members)]
    setup += [b'{"cmd":"open","conv":"big","user":"m%d"}\n' % m for m in sorted(viewers)]
    typers = [m for m in range(members) if m not in viewers][:TYPERS]
    churn, t, turn = [], 0, 0
    # Start all typers, then keep them churning: each turn one typer types a few
    # keystrokes and sends, and starts again at once (20 typers stay active).
    for m in typers:
        t += 1
        churn.append(b'{"cmd":"type","conv":"big","user":"m%d","at":%d}\n' % (m, t))
    while len(churn) < commands:
        m = typers[turn % len(typers)]
        turn += 1
        for _ in range(keystrokes):
            t += 1
            churn.append(b'{"cmd":"type","conv":"big","user":"m%d","at":%d}\n' % (m, t))
        t += 1
        churn.append(b'{"cmd":"send","conv":"big","user":"m%d","at":%d}\n' % (m, t))
        t += 1
        churn.append(b'{"cmd":"type","conv":"big","user":"m%d","at":%d}\n' % (m, t))
    base = os.path.join(directory, f"setup-{members}-{opened}.jsonl")
    full = os.path.join(directory, f"churn-{members}-{opened}.jsonl")
    with open(base, "wb") as f:
        f.write(b"".join(setup))
    with open(full, "wb") as f:
        f.write(b"".join(setup + churn))
    return base, full, len(churn)


def timed(argv, path):
    with open(path, "rb") as stdin, open(os.devnull, "wb") as stdout:
        start = time.perf_counter()
        subprocess.run(argv, stdin=stdin, stdout=stdout, check=True)
        return time.perf_counter() - start


def events(argv, path):
    with open(path, "rb") as stdin:
        return subprocess.run(argv, stdin=stdin, capture_output=True, check=True).stdout.count(b"\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/typingd")
    parser.add_argument("--rows", default="10000:10,10000:100,10000:1000,1000:10,100000:10")
    parser.add_argument("--contrast", default="1000,10000", help="member counts run under --audience members")
    parser.add_argument("--commands", type=int, default=200_000)
    parser.add_argument("--keystrokes", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = [(int(m), int(k), "open") for m, k in (row.split(":") for row in args.rows.split(","))]
    rows += [(int(m), 0, "members") for m in args.contrast.split(",") if m]
    print(f"{'audience':>8} {'members':>8} {'open':>6} {'order':>6} {'commands':>9} {'events':>10} "
          f"{'churn s':>8} {'us/command':>11} {'ns/event':>9}")
    with tempfile.TemporaryDirectory() as directory:
        for members, opened, audience in rows:
            # A room where every member is the audience writes ~M events a change:
            # fewer commands keep those rows to a few million events.
            commands = args.commands if audience == "open" else max(2000, args.commands * 100 // members)
            base, full, churned = write_inputs(directory, members, opened, commands, args.keystrokes)
            for order in ("start", "recent"):
                argv = [args.binary, "--clock", "manual", "--no-drain", "--audience", audience, "--order", order]
                written = events(argv, full) - events(argv, base)
                setup = statistics.median(timed(argv, base) for _ in range(args.runs))
                total = statistics.median(timed(argv, full) for _ in range(args.runs))
                churn = max(0.0, total - setup)
                per_event = f"{churn / written * 1e9:>9.0f}" if written else f"{'-':>9}"
                print(f"{audience:>8} {members:>8} {opened if audience == 'open' else members:>6} {order:>6} "
                      f"{churned:>9,} {written:>10,} {churn:>8.3f} {churn / churned * 1e6:>11.2f} {per_event}",
                      flush=True)


if __name__ == "__main__":
    main()
