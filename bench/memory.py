#!/usr/bin/env python3
"""Resident memory of typingd per membership, and after everyone leaves.

    bench/memory.py [--binary .build/release/typingd] [--conversations 200000] [--size 5]
                    [--users-per-conversation-share 5]

Drives one typingd (manual clock) through pipes. After each phase it sends a
`stats` request and waits for the reply, so everything before it has been
applied, then reads VmRSS from /proc/PID/status:

  empty   the process before any join;
  joined  --conversations conversations of --size members each. Users are
          shared: each is a member of --share conversations, as in a real chat
          service (--share 1 gives every membership its own user, the worst case);
  left    after every member left (all conversations forgotten).

Prints bytes per membership (joined − empty) / memberships, and what stayed
resident after leaving.
"""
import argparse
import json
import os
import subprocess


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Daemon:
    def __init__(self, argv):
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.ids = 0

    def send(self, lines):
        self.process.stdin.write(lines)

    def sync(self):
        """Sends stats with a fresh id and waits for its reply; returns it."""
        self.ids += 1
        self.process.stdin.write(b'{"cmd":"stats","id":%d}\n' % self.ids)
        while True:
            line = self.process.stdout.readline()
            event = json.loads(line)
            if event.get("event") == "stats" and event.get("id") == self.ids:
                return event


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/typingd")
    parser.add_argument("--conversations", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=5)
    parser.add_argument("--share", type=int, default=5, help="conversations each user is in")
    args = parser.parse_args()

    daemon = Daemon([args.binary, "--clock", "manual", "--no-drain"])
    pid = daemon.process.pid
    daemon.sync()
    empty = rss_kib(pid)

    members = args.conversations * args.size
    users = max(1, members // args.share)
    batch = []
    for c in range(args.conversations):
        for k in range(args.size):
            u = (c * args.size + k) % users
            batch.append(b'{"cmd":"join","conv":"conv-%d","user":"user-%d","name":"User %d"}\n' % (c, u, u))
        if len(batch) >= 20000:
            daemon.send(b"".join(batch))
            batch.clear()
    daemon.send(b"".join(batch))
    batch.clear()
    stats = daemon.sync()
    joined = rss_kib(pid)
    assert stats["members"] == members, stats

    for c in range(args.conversations):
        for k in range(args.size):
            u = (c * args.size + k) % users
            batch.append(b'{"cmd":"leave","conv":"conv-%d","user":"user-%d"}\n' % (c, u))
        if len(batch) >= 20000:
            daemon.send(b"".join(batch))
            batch.clear()
    daemon.send(b"".join(batch))
    stats = daemon.sync()
    left = rss_kib(pid)
    assert stats["members"] == 0 and stats["conversations"] == 0, stats
    daemon.process.stdin.close()
    daemon.process.wait()

    print(f"memberships {members:,} ({args.conversations:,} conversations of {args.size}, "
          f"{users:,} users in {args.share} each)")
    print(f"RSS empty {empty / 1024:.1f} MiB, joined {joined / 1024:.1f} MiB, after leaving {left / 1024:.1f} MiB")
    print(f"bytes per membership: {(joined - empty) * 1024 / members:.0f}")
    print(f"resident after everyone left, above empty: {(left - empty) / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
