#!/usr/bin/env python3
"""Languages: does a room whose viewers read four languages cost more than one in English?

    bench/languages.py [--binary .build/release/typingd] [--members 2000]
                       [--changes 3000] [--runs 7] [--also NAME=BINARY ...]

One conversation of --members named members, then a churn of --changes streak
starts and stops with 20 typers active at any time (every change re-renders what
every member sees: about --members indicator events each), run three ways:

- english: nobody gives a locale (the built-in table);
- four:    a quarter of the members each read de, fr, ru and ja (the shipped
           tables in phrases/, loaded with --phrases), in join order de, fr, ru,
           ja, de, … so that viewers of the same language are never neighbours;
- four-activities: as four, with a third of the keystrokes recording audio or
           sending a photo, so that phrases have two or three clauses.

The time of the churn alone is the run minus the run of its joins alone (medians
of --runs alternating runs, manual clock, output to /dev/null). Reported: seconds,
ns per indicator event, and the ratio of each case to english (goal: four ≤ 1.5×).
--also runs the english case with another binary (an earlier build), for W1-style
comparisons in the same run.
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LANGUAGES = ["de", "fr", "ru", "ja"]


def write_inputs(directory, members, changes, case, seed=11):
    rng = random.Random(seed)
    joins = []
    for m in range(members):
        locale = "" if case == "english" else ',"locale":"%s"' % LANGUAGES[m % 4]
        joins.append(b'{"cmd":"join","conv":"big","user":"m%d","name":"Member %d"%s}\n' % (m, m, locale.encode()))
    active, idle = [], list(range(members))
    rng.shuffle(idle)
    churn, t, made = [], 0, 0
    while made < changes:
        t += 10
        if len(active) < 20 and idle:
            m = idle.pop()
            active.append(m)
            activity = ""
            if case == "four-activities" and rng.random() < 1 / 3:
                activity = ',"activity":"%s"' % rng.choice(["recording_audio", "sending_photo"])
            churn.append(b'{"cmd":"type","conv":"big","user":"m%d","at":%d%s}\n' % (m, t, activity.encode()))
        else:
            m = active.pop(rng.randrange(len(active)))
            churn.append(b'{"cmd":"send","conv":"big","user":"m%d","at":%d}\n' % (m, t))
            idle.insert(0, m)
        made += 1
    only_joins = os.path.join(directory, f"joins-{case}.jsonl")
    full = os.path.join(directory, f"churn-{case}.jsonl")
    with open(only_joins, "wb") as f:
        f.write(b"".join(joins))
    with open(full, "wb") as f:
        f.write(b"".join(joins + churn))
    return only_joins, full


def arguments(case):
    if case == "english":
        return []
    return [arg for language in LANGUAGES for arg in ("--phrases", os.path.join(ROOT, "phrases", language + ".json"))]


def timed(binary, args, path):
    with open(path, "rb") as stdin, open(os.devnull, "wb") as stdout:
        start = time.perf_counter()
        subprocess.run([binary, "--clock", "manual", "--no-drain", "--threads", "1", *args],
                       stdin=stdin, stdout=stdout, check=True)
        return time.perf_counter() - start


def count_events(binary, args, path):
    with open(path, "rb") as stdin:
        out = subprocess.run([binary, "--clock", "manual", "--no-drain", *args], stdin=stdin,
                             capture_output=True, check=True).stdout
    return out.count(b'"event":"indicator"')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/typingd"))
    parser.add_argument("--members", type=int, default=2000)
    parser.add_argument("--changes", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--also", action="append", default=[], help="NAME=BINARY: the english case with another build")
    args = parser.parse_args()
    cases = [("english", args.binary), ("four", args.binary), ("four-activities", args.binary)]
    cases += [("english@" + spec.split("=", 1)[0], spec.split("=", 1)[1]) for spec in args.also]
    with tempfile.TemporaryDirectory() as directory:
        inputs = {}
        for name, _ in cases:
            case = name.split("@")[0]
            if case not in inputs:
                inputs[case] = write_inputs(directory, args.members, args.changes, case)
        samples = {name: [] for name, _ in cases}
        for _ in range(args.runs):
            for name, binary in cases:
                case = name.split("@")[0]
                joins, full = inputs[case]
                samples[name].append(timed(binary, arguments(case), full) - timed(binary, arguments(case), joins))
        english = statistics.median(samples["english"])
        print(f"languages: one room of {args.members} members, {args.changes} changes, medians of {args.runs} alternating runs")
        print(f"{'case':<24} {'seconds':>8} {'events':>10} {'ns/event':>9} {'vs english':>10}")
        for name, binary in cases:
            case = name.split("@")[0]
            events = count_events(binary, arguments(case), inputs[case][1]) - count_events(binary, arguments(case), inputs[case][0])
            median = statistics.median(samples[name])
            print(f"{name:<24} {median:8.3f} {events:10d} {median / max(events, 1) * 1e9:9.1f} {median / english:9.2f}x")


if __name__ == "__main__":
    sys.exit(main())
