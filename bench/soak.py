#!/usr/bin/env python3
"""A long run: does typingd's memory stay flat under churn?

    bench/soak.py [--binary .build/release/typingd] [--lines 20000000] [--churn 0.05]

Streams `gen_w1.py --lines N --churn P --users 10000000` (conversations keep
being replaced by new ones with new users, so ids never stop coming; with a
large user pool each user is in about one conversation, so the live state stays
the same size) through typingd --clock manual --no-drain. Every million lines it
asks for `stats`, waits for the reply and reads VmRSS, then prints the series
and the end compared with the first million: the goal is within 10 %.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(os.path.dirname(HERE), ".build", "release", "typingd"))
    parser.add_argument("--lines", type=int, default=20_000_000)
    parser.add_argument("--churn", type=float, default=0.05)
    parser.add_argument("--every", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=10_000_000,
                        help="user pool: large, so each user is in about one conversation and replacing "
                             "conversations keeps the live state the same size")
    args = parser.parse_args()

    generator = subprocess.Popen([sys.executable, os.path.join(HERE, "gen_w1.py"), "--lines", str(args.lines),
                                  "--churn", str(args.churn), "--users", str(args.users)],
                                 stdout=subprocess.PIPE, bufsize=1 << 20)
    daemon = subprocess.Popen([args.binary, "--clock", "manual", "--no-drain"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, bufsize=1 << 20)
    replies = {}
    arrived = threading.Condition()

    def reader():
        for line in daemon.stdout:
            if line.startswith(b'{"event":"stats"'):
                event = json.loads(line)
                with arrived:
                    replies[event["id"]] = event
                    arrived.notify_all()

    threading.Thread(target=reader, daemon=True).start()
    samples = []
    count = 0
    start = time.time()
    batch = []
    for line in generator.stdout:
        batch.append(line)
        count += 1
        if count % args.every == 0:
            daemon.stdin.write(b"".join(batch))
            batch.clear()
            daemon.stdin.write(b'{"cmd":"stats","id":%d}\n' % count)
            daemon.stdin.flush()
            with arrived:
                arrived.wait_for(lambda: count in replies)
            stats = replies[count]
            samples.append((count, rss_mib(daemon.pid), stats))
            print(f"{count:>11,} lines  RSS {samples[-1][1]:6.1f} MiB  conversations {stats['conversations']:>6,}  "
                  f"members {stats['members']:>7,}  typing {stats['typing']:>5,}  errors {stats['errors']}  "
                  f"({time.time() - start:.0f} s)", flush=True)
    daemon.stdin.write(b"".join(batch))
    daemon.stdin.close()
    daemon.wait()
    generator.wait()
    first, last = samples[0][1], samples[-1][1]
    print(f"RSS after {samples[0][0]:,} lines: {first:.1f} MiB; after {samples[-1][0]:,}: {last:.1f} MiB "
          f"({(last - first) / first * 100:+.1f} %); peak {max(s[1] for s in samples):.1f} MiB")


if __name__ == "__main__":
    main()
