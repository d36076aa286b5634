#!/usr/bin/env python3
"""Check that typingd-cluster route neither loses nor doubles a line across restarts, on a real cluster.

    router_check.py --input commands.jsonl [--servers URLS] [--partitions 4] [--rate 20000]

Needs a running cluster (cluster.sh) with a fresh stream (typingd-cluster ctl wipe). Sends
the input through typingd-cluster route four times, under four names, each run stopped and
restarted on the way:

  file     stdin a regular file; SIGTERM twice mid-run, restarted each time (seek);
  pipe     stdin a pipe; SIGTERM mid-run, restarted with `tail -c +X+1 |` and
           --input-offset X, X read from the router's "stored through byte X";
  skip     stdin a pipe of the whole input; SIGTERM, restarted on the whole input
           again (the router skips the stored bytes);
  kill     kill -9 mid-run, lines waiting 0.5 s for their message while
           checkpoints are written every 0.1 s (the checkpoint lags what is
           read), restarted: lines are sent again, under the same line numbers.

Then it reads every message of the stream and applies, per router name and
partition, the shards' rule (Typingd-Router, Typingd-Lines: a line numbered at
or below the last one applied is dropped) and requires each partition's lines
to be exactly the input's lines for that partition (typingd-cluster partition --lines), in order:
nothing lost, nothing doubled. Exits 0 when all four hold.
"""
import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys

from lib import STREAM, binary, connect, decode_body, default_servers, routes_of

HERE = os.path.dirname(os.path.abspath(__file__))
STORED = re.compile(rb"stored through byte (\d+) \((\d+) lines\)")


def router(args, name, extra=(), stdin=None, shell_input=None):
    command = [binary(), "route", "--servers", args.servers,
               "--partitions", str(args.partitions), "--name", name + args.suffix, "--rate", str(args.rate)] + list(extra)
    if shell_input is not None:   # a pipe: `shell_input | typingd-cluster route ...`
        feeder = subprocess.Popen(shell_input, shell=True, stdout=subprocess.PIPE)
        proc = subprocess.Popen(command, stdin=feeder.stdout, stderr=subprocess.PIPE)
        feeder.stdout.close()
        proc.feeder = feeder
        return proc
    proc = subprocess.Popen(command, stdin=stdin, stderr=subprocess.PIPE)
    proc.feeder = None
    return proc


def finish(proc, label, kill_after=None, sig=signal.SIGTERM):
    """Waits for a router run (signalling it kill_after s after it starts
    reading); its status and stderr."""
    head = b""
    if kill_after is not None:
        while b": reading at byte" not in head:
            line = proc.stderr.readline()
            if not line:
                break
            head += line
        try:
            proc.wait(kill_after)
        except subprocess.TimeoutExpired:
            proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    err = head + err
    if proc.feeder:
        proc.feeder.kill()
        proc.feeder.wait()
    for line in err.decode(errors="replace").splitlines():
        print("  {}: {}".format(label, line))
    return proc.returncode, err


def stored_through(err):
    found = STORED.findall(err)
    return int(found[-1][0]) if found else None


async def read_stream(args):
    """Every message of the stream: (subject, headers, data), in stream order."""
    nc = await connect(args.servers, "router_check", timeout=10)
    js = nc.jetstream()
    info = await js.stream_info(STREAM)
    sub = await js.pull_subscribe("typingd.cmd.*", stream=STREAM)
    got = []
    while len(got) < info.state.messages:
        for msg in await sub.fetch(min(500, info.state.messages - len(got)), timeout=10):
            got.append((msg.subject, msg.headers or {}, decode_body(msg.headers, msg.data)))
            await msg.ack()
    await nc.close()
    return got


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", required=True, help="command lines (a workload.py output)")
    parser.add_argument("--servers")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rate", type=float, default=20000, help="route --rate: runs last long enough to stop")
    args = parser.parse_args()
    args.servers = args.servers or default_servers()
    args.suffix = "-{}".format(os.getpid())   # names of this run only: earlier checkpoints do not apply
    data = open(args.input, "rb").read()
    lines = [l[:-1] if l.endswith(b"\r") else l for l in data.split(b"\n")]
    if not data.endswith(b"\n"):
        sys.exit("router_check.py: the input must end with a line end")
    lines.pop()
    expected = [[] for _ in range(args.partitions)]
    for line, partitions in zip(lines, routes_of(lines, args.partitions)):
        for p in partitions:
            expected[p].append(line)
    spell = len(lines) / args.rate   # seconds a whole run takes
    status = {}
    path = os.path.abspath(args.input)

    # file: SIGTERM twice, restarts seek.
    runs = []
    for i, when in enumerate((0.3, 0.3, None)):
        with open(path, "rb") as f:
            runs.append(finish(router(args, "file", stdin=f), "file run {}".format(i + 1), spell * when if when else None))
    stops = [stored_through(err) for _, err in runs]
    status["file"] = all(code == 0 for code, _ in runs) and stops[0] < stops[1] < stops[2] == len(data)

    # pipe: SIGTERM, restart on the rest of the input with --input-offset.
    code1, err1 = finish(router(args, "pipe", shell_input="cat '{}'".format(path)), "pipe run 1", spell * 0.4)
    at = stored_through(err1)
    code2, err2 = finish(router(args, "pipe", ["--input-offset", str(at)],
                                shell_input="tail -c +{} '{}'".format(at + 1, path)), "pipe run 2")
    status["pipe"] = code1 == 0 and code2 == 0 and 0 < at < len(data) and stored_through(err2) == len(data)

    # skip: SIGTERM, restart on the whole input again through a pipe.
    code1, err1 = finish(router(args, "skip", shell_input="cat '{}'".format(path)), "skip run 1", spell * 0.5)
    code2, err2 = finish(router(args, "skip", shell_input="cat '{}'".format(path)), "skip run 2")
    status["skip"] = code1 == 0 and code2 == 0 and 0 < stored_through(err1) < len(data) == stored_through(err2)

    # kill: kill -9 mid-run (after a checkpoint or two), restart.
    with open(path, "rb") as f:
        # Lines wait 0.5 s for their message: checkpoints written meanwhile must
        # not count them (a checkpoint of the position read would lose them).
        code1, _ = finish(router(args, "kill", ["--linger-ms", "500", "--checkpoint-ms", "100"], stdin=f),
                          "kill run 1", spell * 0.5,
                          signal.SIGKILL)
    with open(path, "rb") as f:
        code2, err2 = finish(router(args, "kill", stdin=f), "kill run 2")
    status["kill"] = code1 == -signal.SIGKILL and code2 == 0 and stored_through(err2) == len(data)

    # What a shard applies, per name and partition.
    messages = asyncio.run(read_stream(args))
    applied = {name: [[] for _ in range(args.partitions)] for name in status}
    last = {name: [0] * args.partitions for name in status}
    dropped = {name: 0 for name in status}
    for subject, headers, body in messages:
        name, p = headers.get("Typingd-Router", ""), int(subject.rsplit(".", 1)[1])
        if not name.endswith(args.suffix):
            continue   # an earlier run's
        name = name[:-len(args.suffix)]
        first = int(headers.get("Typingd-Lines", 0))
        body_lines = body.split(b"\n")[:-1]
        if headers.get("Nats-Msg-Id") != "{}{}:{}:{}:{}".format(name, args.suffix, p, first, len(body_lines)):
            print("  a message without the contract's headers: {}".format(headers))
            status[name] = False
            continue
        skip = max(0, last[name][p] - first + 1)
        dropped[name] += min(skip, len(body_lines))
        applied[name][p].extend(body_lines[skip:])
        last[name][p] = max(last[name][p], first + len(body_lines) - 1)
    for name in status:
        wrong = [p for p in range(args.partitions) if applied[name][p] != expected[p]]
        for p in wrong:
            got, want = applied[name][p], expected[p]
            i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            print("  {}: partition {}: {} lines applied, {} expected; first difference at line {}".format(
                name, p, len(got), len(want), i + 1))
        print("{} {}: {} lines per input in {} partitions, {} re-sent lines dropped by the shards' rule{}".format(
            "PASS" if status[name] and not wrong else "FAIL", name, len(lines), args.partitions, dropped[name],
            "" if status[name] else " (a run did not end as it should: see its log above)"))
        status[name] = status[name] and not wrong
    sys.exit(0 if all(status.values()) else 1)


if __name__ == "__main__":
    main()
