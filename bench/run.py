#!/usr/bin/env python3
"""All of typingd's performance figures in one command.

    swift build -c release && bench/run.py [--runs 5] [--quick]

1. W1 (bench/gen_w1.py, seed 1, 1,000,000 lines; generated into bench/out/ if
   missing): typingd --clock manual --no-drain with the default threads (one per
   core) and with --threads 1, the single-threaded jansson floor (bench/floor.c,
   compiled into bench/out/ if missing), `jq -c .`, and any --also NAME=BINARY
   (an earlier build, say), each with stdin from the
   file and stdout to /dev/null, run in alternation --runs times. Median wall
   time, lines per second, ratio to the floor, peak RSS.
2. Big rooms (bench/bigroom.py): time per indicator event for rooms of 10 to
   10,000 members.
3. Memory (bench/memory.py): bytes per membership with 1,000,000 memberships,
   and what stays resident after everyone leaves.

--quick uses a 200,000-line W1 and smaller rooms, for a look in a minute.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")


def ensure_inputs(lines):
    os.makedirs(OUT, exist_ok=True)
    w1 = os.path.join(OUT, "w1.jsonl" if lines == 1_000_000 else f"w1-{lines}.jsonl")
    if not os.path.exists(w1):
        print(f"generating {os.path.relpath(w1, ROOT)} ...", file=sys.stderr)
        with open(w1 + ".tmp", "wb") as out:
            subprocess.run([sys.executable, os.path.join(HERE, "gen_w1.py"), "--lines", str(lines)],
                           stdout=out, check=True)
        os.rename(w1 + ".tmp", w1)
    floor = os.path.join(OUT, "floor")
    if not os.path.exists(floor) or os.path.getmtime(floor) < os.path.getmtime(os.path.join(HERE, "floor.c")):
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "jansson"], capture_output=True,
                               text=True, check=True).stdout.split()
        subprocess.run(["cc", "-O2", "-o", floor, os.path.join(HERE, "floor.c"), *flags], check=True)
    return w1, floor


def run_once(argv, path):
    """Wall seconds and peak RSS (KiB) of one run.

    The peak comes from /usr/bin/time (%M): a child forked from Python would
    report Python's own size, as Linux keeps the high-water mark across exec.
    """
    rss_file = os.path.join(OUT, ".rss")
    with open(path, "rb") as stdin, open(os.devnull, "wb") as stdout:
        start = time.perf_counter()
        status = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file, *argv],
                                stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL).returncode
        elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{argv[0]} failed with status {status}")
    with open(rss_file) as f:
        return elapsed, int(f.read().split()[-1])


def w1_table(binary, floor, w1, runs, also=()):
    lines = sum(1 for _ in open(w1, "rb"))
    threads = os.cpu_count() or 1
    contenders = [(f"typingd {threads}t", [binary, "--clock", "manual", "--no-drain"]),
                  ("typingd 1t", [binary, "--clock", "manual", "--no-drain", "--threads", "1"]),
                  ("floor", [floor])]
    for entry in also:
        name, _, path = entry.partition("=")
        contenders.append((name, [path, "--clock", "manual", "--no-drain"]))
    if shutil.which("jq"):
        contenders.append(("jq -c .", ["jq", "-c", "."]))
    times = {name: [] for name, _ in contenders}
    rss = {name: 0 for name, _ in contenders}
    for _, argv in contenders:  # one uncounted round: file cache, CPU clocks
        run_once(argv, w1)
    for _ in range(runs):
        for name, argv in contenders:
            seconds, peak = run_once(argv, w1)
            times[name].append(seconds)
            rss[name] = max(rss[name], peak)
    floor_time = statistics.median(times["floor"])
    print(f"W1: {lines:,} lines ({os.path.getsize(w1) / 1e6:.1f} MB), median of {runs} alternating runs "
          f"after one warm-up round")
    width = max(len(name) for name, _ in contenders)
    print(f"  {'command':<{width}} {'time s':>7} {'lines/s':>12} {'vs floor':>9} {'peak RSS':>10}   runs")
    for name, _ in contenders:
        median = statistics.median(times[name])
        spread = " ".join(f"{t:.2f}" for t in times[name])
        print(f"  {name:<{width}} {median:>7.2f} {lines / median:>12,.0f} {median / floor_time:>8.2f}x "
              f"{rss[name] / 1024:>8.1f} MiB   {spread}")
    default = f"typingd {threads}t"
    print(f"  typingd ({threads} threads) takes {statistics.median(times[default]) / statistics.median(times['typingd 1t']):.2f}x "
          f"the time of 1 thread, with {rss[default] / max(1, rss['typingd 1t']):.2f}x its peak RSS")
    if "jq -c ." in times:
        print(f"  typingd is {statistics.median(times['jq -c .']) / statistics.median(times[default]):.2f}x "
              f"faster than jq -c .")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "typingd"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--also", action="append", default=[], metavar="NAME=BINARY",
                        help="another typingd in the W1 table (an earlier build, say)")
    args = parser.parse_args()
    if not os.path.exists(args.binary):
        raise SystemExit(f"no {args.binary}: run `swift build -c release` first")
    print(f"machine: {os.cpu_count()} cores; {subprocess.run(['uname', '-sr'], capture_output=True, text=True).stdout.strip()}")

    w1, floor = ensure_inputs(200_000 if args.quick else 1_000_000)
    w1_table(args.binary, floor, w1, args.runs, args.also)

    print("\nBig rooms (bench/bigroom.py):")
    sys.stdout.flush()
    bigroom = [sys.executable, os.path.join(HERE, "bigroom.py"), "--binary", args.binary]
    if args.quick:
        bigroom += ["--sizes", "10,1000,10000", "--changes", "1000", "--runs", "1"]
    subprocess.run(bigroom, check=True)

    print("\nMemory (bench/memory.py):")
    sys.stdout.flush()
    memory = [sys.executable, os.path.join(HERE, "memory.py"), "--binary", args.binary]
    if args.quick:
        memory += ["--conversations", "40000"]
    subprocess.run(memory, check=True)
    subprocess.run(memory + ["--share", "1"], check=True)


if __name__ == "__main__":
    main()
