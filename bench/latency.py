#!/usr/bin/env python3
"""Latency of the live daemon (--clock real), against `cat` in the same run.

    bench/latency.py [--binary .build/release/typingd] [--requests 5000] [--rounds 3] [--threads 1,N]

Round trip: one process writes a line and waits for the reply line, N times in a
row: `{"cmd":"stats","id":i}` through typingd, and the same line echoed by `cat`
(the floor for any pipe-based filter). Rounds alternate cat and typingd with each
--threads value (default: 1 and the number of cores); the table gives p50/p99
per round and the median over rounds, with the ratio to cat.

Timeout lateness: keystrokes in --timeouts separate conversations, 10 ms apart,
with --timeout-ms 100; lateness is the arrival of each clearing indicator minus
(the time the keystroke was written + 100 ms). That includes the keystroke's own
trip into typingd, so it is an upper bound.
"""
import argparse
import json
import os
import statistics
import subprocess
import threading
import time


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class LineProcess:
    """A child process spoken to with raw os.write / os.read, lines in and out."""

    def __init__(self, argv):
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.out = self.process.stdin.fileno()
        self.inp = self.process.stdout.fileno()
        self.buffer = b""

    def write(self, data):
        os.write(self.out, data)

    def readline(self):
        while b"\n" not in self.buffer:
            chunk = os.read(self.inp, 65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def round_trips(argv, requests):
    proc = LineProcess(argv)
    samples = []
    for i in range(requests):
        line = b'{"cmd":"stats","id":%d}\n' % i
        start = time.perf_counter()
        proc.write(line)
        proc.readline()
        samples.append((time.perf_counter() - start) * 1e6)
    proc.close()
    return samples[requests // 10:]  # drop the warm-up tenth


def lateness(binary, count, timeout_ms=100, spacing=0.010, threads=1):
    proc = LineProcess([binary, "--timeout-ms", str(timeout_ms), "--no-drain", "--threads", str(threads)])
    for c in range(count):
        proc.write(('{"cmd":"join","conv":"c%d","user":"a"}\n{"cmd":"join","conv":"c%d","user":"b"}\n' % (c, c)).encode())
    sent = {}
    arrived = {}

    def reader():
        while len(arrived) < count:
            event = json.loads(proc.readline())
            if event.get("event") == "indicator" and event["text"] == "":
                arrived[event["conv"]] = time.perf_counter()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    start = time.perf_counter()
    for c in range(count):
        target = start + c * spacing
        while time.perf_counter() < target:
            time.sleep(min(0.002, max(0.0, target - time.perf_counter())))
        sent["c%d" % c] = time.perf_counter()
        proc.write(b'{"cmd":"type","conv":"c%d","user":"a"}\n' % c)
    thread.join(timeout=30)
    proc.close()
    return [(arrived[c] - sent[c] - timeout_ms / 1000) * 1000 for c in sent if c in arrived]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/typingd")
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeouts", type=int, default=1000)
    parser.add_argument("--threads", help="comma-separated --threads values (default: 1 and the cores)")
    args = parser.parse_args()

    threads = [int(t) for t in args.threads.split(",")] if args.threads else sorted({1, os.cpu_count() or 1})
    names = ["cat"] + [f"typingd {t}t" for t in threads]
    argvs = {"cat": ["cat"]}
    for t in threads:
        argvs[f"typingd {t}t"] = [args.binary, "--threads", str(t)]
    print(f"round trip, {args.requests} sequential requests per round (first tenth dropped), µs: p50 / p99")
    print(f"{'round':>6}  " + "  ".join(f"{n:>17}" for n in names))
    p50 = {n: [] for n in names}
    p99 = {n: [] for n in names}
    for r in range(1, args.rounds + 1):
        for n in names:
            samples = round_trips(argvs[n], args.requests)
            p50[n].append(percentile(samples, 50))
            p99[n].append(percentile(samples, 99))
        print(f"{r:>6}  " + "  ".join(f"{p50[n][-1]:8.1f} {p99[n][-1]:8.1f}" for n in names))
    m = statistics.median
    print(f"{'median':>6}  " + "  ".join(f"{m(p50[n]):8.1f} {m(p99[n]):8.1f}" for n in names))
    for n in names[1:]:
        print(f"  {n}: p50 {m(p50[n]) / m(p50['cat']):.2f}x cat")

    for t in threads:
        late = lateness(args.binary, args.timeouts, threads=t)
        print(f"\ntimeout lateness, typingd {t}t, over {len(late)} timeouts (--timeout-ms 100), ms: "
              f"p50 {percentile(late, 50):.2f}  p99 {percentile(late, 99):.2f}  max {max(late):.2f}")


if __name__ == "__main__":
    main()
