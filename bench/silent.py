#!/usr/bin/env python3
"""Members who cannot see a change cost nothing per change; many languages cost O(1) per viewer.

    bench/silent.py [--binary .build/release/typingd] [--also NAME=PATH ...]
                    [--sizes 0,25000,50000,100000] [--changes 10000] [--runs 3] [--quick]

Rows (each: the input's user+system CPU seconds, median of --runs, minus the same
input's setup alone, so what is left is the changes):

- `silent N`: a room of N members with `receive_typing: false` and two who type and
  send in turn, --changes times (type + send = one change pair).
- `thread N`: the same, the N members with their screen in a thread of their own.
- `open-thread N`: `--audience open`, every view of the N open in its own thread.
- `languages N`: N members, each with a locale of their own among N loaded tables,
  then 20,000 `open`s by one member who reads the last of them (a render of one
  viewer each); the setup alone is the joins.
- `joins N`: N members joining a room where one types, each with a locale of their
  own among N loaded tables (the setup alone is loading the tables and one join).

Each row should be flat in N: the per-change work is the viewers who can see the
change (two), and finding a viewer's phrase is O(1) however many tables there are.
--also runs other binaries (e.g. the previous build) on the same inputs,
alternating with the first, so that their ratios come from the same run.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile


def cpu_of(binary, args, path):
    """User+system CPU seconds of one run of `binary` on `path`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(path, "rb") as stdin, open(os.devnull, "wb") as stdout:
        subprocess.run([binary, "--clock", "manual", "--no-drain", *args], stdin=stdin, stdout=stdout, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def room(directory, kind, size, changes):
    """(setup path, full path, extra args) for a silent/thread/open-thread row."""
    setup = [b'{"cmd":"join","conv":"r","user":"ana","name":"Ana"}\n',
             b'{"cmd":"join","conv":"r","user":"ben","name":"Ben"}\n']
    args = []
    if kind == "open-thread":
        args = ["--audience", "open"]
        setup += [b'{"cmd":"open","conv":"r","user":"ana"}\n', b'{"cmd":"open","conv":"r","user":"ben"}\n']
    for m in range(size):
        if kind == "silent":
            setup.append(b'{"cmd":"join","conv":"r","user":"m%d","receive_typing":false}\n' % m)
        else:
            setup.append(b'{"cmd":"join","conv":"r","user":"m%d"}\n' % m)
            setup.append(b'{"cmd":"open","conv":"r","user":"m%d","thread":"t%d"}\n' % (m, m))
    churn = []
    for i in range(changes):
        user = b"ana" if i % 2 == 0 else b"ben"
        churn.append(b'{"cmd":"type","conv":"r","user":"%s","at":%d}\n' % (user, 10 * i + 1))
        churn.append(b'{"cmd":"send","conv":"r","user":"%s","at":%d}\n' % (user, 10 * i + 5))
    return write(directory, f"{kind}-{size}", setup, churn) + (args,)


def tables(directory, count):
    """A folder of `count` small valid tables, locales x0 … x<count-1>."""
    folder = os.path.join(directory, f"tables-{count}")
    if os.path.isdir(folder):
        return folder
    os.makedirs(folder)
    for i in range(count):
        table = {"locale": f"x{i}",
                 "names": {"0+1": "someone", "0+n": "{r} people", "1": "{0}", "1+1": "{0} and 1 more",
                           "1+n": "{0} and {r} more", "2": "{0} and {1}", "2+1": "{0}, {1} and 1 more",
                           "2+n": "{0}, {1} and {r} more", "3": "{0}, {1} and {2}"},
                 "verbs": {a: f"{a}-{i}" for a in ("typing", "recording_audio", "recording_video", "sending_photo",
                                                   "sending_video", "sending_file", "sharing_location")},
                 "clause": "{names} {verb}", "separator": "; ", "end": "."}
        with open(os.path.join(folder, f"x{i:06d}.json"), "w") as f:
            json.dump(table, f)
    return folder


def languages(directory, size, opens):
    folder = tables(directory, max(size, 1))
    setup = [b'{"cmd":"join","conv":"r","user":"ana","name":"Ana"}\n',
             b'{"cmd":"type","conv":"r","user":"ana","at":1,"timeout_ms":86400000}\n']
    for m in range(size):
        setup.append(b'{"cmd":"join","conv":"r","user":"m%d","locale":"x%d"}\n' % (m, m))
    churn = []
    viewer = b"m%d" % (size - 1) if size else b"ana"
    for i in range(opens):
        churn.append(b'{"cmd":"open","conv":"r","user":"%s","view":"%s"}\n' % (viewer, b"list" if i % 2 else b"chat"))
    return write(directory, f"languages-{size}", setup, churn) + (["--phrases", folder],)


def joins(directory, size):
    folder = tables(directory, max(size, 1))
    setup = [b'{"cmd":"join","conv":"r","user":"ana","name":"Ana"}\n']
    churn = [b'{"cmd":"type","conv":"r","user":"ana","at":1,"timeout_ms":86400000}\n']
    for m in range(size):
        churn.append(b'{"cmd":"join","conv":"r","user":"m%d","locale":"x%d"}\n' % (m, m))
    return write(directory, f"joins-{size}", setup, churn) + (["--phrases", folder],)


def write(directory, name, setup, churn):
    only = os.path.join(directory, f"{name}.setup.jsonl")
    full = os.path.join(directory, f"{name}.jsonl")
    with open(only, "wb") as f:
        f.write(b"".join(setup))
    with open(full, "wb") as f:
        f.write(b"".join(setup + churn))
    return only, full


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/typingd")
    parser.add_argument("--also", action="append", default=[], help="NAME=PATH of another binary to compare")
    parser.add_argument("--sizes", default="0,25000,50000,100000")
    parser.add_argument("--language-sizes", default="100,2500,5000,10000")
    parser.add_argument("--changes", type=int, default=10000)
    parser.add_argument("--opens", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", default="silent,thread,open-thread,languages,joins")
    parser.add_argument("--quick", action="store_true", help="smaller sizes and one run")
    options = parser.parse_args()
    if options.quick:
        options.sizes, options.language_sizes, options.changes, options.opens, options.runs = \
            "0,10000", "100,2000", 2000, 4000, 1
    binaries = [("typingd", options.binary)] + [tuple(a.split("=", 1)) for a in options.also]
    sizes = [int(s) for s in options.sizes.split(",")]
    language_sizes = [int(s) for s in options.language_sizes.split(",")]
    rows = options.rows.split(",")
    print(f"{'row':<22}" + "".join(f"{name:>14}" for name, _ in binaries) + "   (CPU seconds of the changes)")
    with tempfile.TemporaryDirectory(prefix="typingd-silent-") as directory:
        cases = []
        for kind in ("silent", "thread", "open-thread"):
            if kind in rows:
                cases += [(f"{kind} {n}", room(directory, kind, n, options.changes), True) for n in sizes]
        if "languages" in rows:
            cases += [(f"languages {n}", languages(directory, n, options.opens), True) for n in language_sizes]
        if "joins" in rows:
            cases += [(f"joins {n}", joins(directory, n), True) for n in language_sizes]
        for label, (setup, full, args), subtract in cases:
            samples = {name: [] for name, _ in binaries}
            for _ in range(options.runs):
                for name, binary in binaries:
                    total = cpu_of(binary, args, full)
                    base = cpu_of(binary, args, setup) if subtract else 0.0
                    samples[name].append(max(total - base, 0.0))
            print(f"{label:<22}" + "".join(f"{statistics.median(samples[name]):>14.3f}" for name, _ in binaries),
                  flush=True)


if __name__ == "__main__":
    main()
