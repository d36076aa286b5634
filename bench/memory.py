#!/usr/bin/env python3
"""Resident memory of typingd per membership, typing, and after everyone leaves.

    bench/memory.py [--binary .build/release/typingd] [--conversations 200000] [--size 5]
                    [--share 5] [--id-bytes 0] [--name-bytes 0]

Drives one typingd (manual clock) through pipes. After each phase it sends a
`stats` request and waits for the reply, so everything before it has been
applied, waits a moment (typingd gives memory back while idle), then reads VmRSS
from /proc/PID/status:

  empty    the process before any join;
  joined   --conversations conversations of --size members each. Users are
           shared: each is a member of --share conversations, as in a real chat
           service (--share 1 gives every membership its own user, the worst case);
  typing   every member typed once: one streak per membership, all at once, and
           every member's indicator holds the other typers;
  stopped  every streak stopped (send);
  left     after every member left (all conversations forgotten).

--id-bytes pads conversation and user ids to that many bytes (at most 256, the
protocol's limit), --name-bytes gives every user a name of that many bytes (at most
1024). Prints bytes per membership for each phase, and what stayed resident.
"""
import argparse
import io
import json
import os
import queue
import subprocess
import threading
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Daemon:
    """typingd through pipes; a thread reads its output all the time (indicator
    events included), so typingd never blocks on a full pipe, and hands on the
    replies to `stats`."""

    def __init__(self, argv):
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.ids = 0
        self.replies = queue.Queue()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        # Buffered: the pipe is unbuffered (bufsize=0, so that writes go out at once),
        # and a line read from a raw file is read one byte per system call.
        for line in io.BufferedReader(self.process.stdout, 1 << 16):
            if line.startswith(b'{"event":"stats"'):
                self.replies.put(json.loads(line))

    def send(self, lines):
        self.process.stdin.write(lines)

    def sync(self):
        """Sends stats with a fresh id and waits for its reply; returns it."""
        self.ids += 1
        self.process.stdin.write(b'{"cmd":"stats","id":%d}\n' % self.ids)
        while True:
            event = self.replies.get(timeout=600)
            if event.get("id") == self.ids:
                return event


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/typingd")
    parser.add_argument("--conversations", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=5)
    parser.add_argument("--share", type=int, default=5, help="conversations each user is in")
    parser.add_argument("--id-bytes", type=int, default=0, help="pad ids to this many bytes")
    parser.add_argument("--name-bytes", type=int, default=0, help="names of this many bytes")
    args = parser.parse_args()

    daemon = Daemon([args.binary, "--clock", "manual", "--no-drain"])
    pid = daemon.process.pid

    def measure():
        daemon.sync()
        time.sleep(0.3)
        daemon.sync()
        return rss_kib(pid)

    def pad(text):
        return text + b"-" * max(0, args.id_bytes - len(text))

    members = args.conversations * args.size
    users = max(1, members // args.share)
    pairs = [(pad(b"conv-%d" % c), pad(b"user-%d" % ((c * args.size + k) % users)))
             for c in range(args.conversations) for k in range(args.size)]

    def phase(template):
        batch = []
        for conv, user in pairs:
            batch.append(template % (conv, user))
            if len(batch) >= 20000:
                daemon.send(b"".join(batch))
                batch.clear()
        daemon.send(b"".join(batch))

    empty = measure()
    name = b"N" * args.name_bytes if args.name_bytes else b"User"
    phase(b'{"cmd":"join","conv":"%s","user":"%s","name":"' + name + b'"}\n')
    joined = measure()
    phase(b'{"cmd":"type","conv":"%s","user":"%s"}\n')
    stats = daemon.sync()
    typing = measure()
    assert stats["members"] == members and stats["typing"] == members, stats
    phase(b'{"cmd":"send","conv":"%s","user":"%s"}\n')
    stopped = measure()
    phase(b'{"cmd":"leave","conv":"%s","user":"%s"}\n')
    stats = daemon.sync()
    left = measure()
    assert stats["members"] == 0 and stats["conversations"] == 0 and stats["typing"] == 0, stats
    daemon.process.stdin.close()
    daemon.process.wait()

    ids = f"{args.id_bytes}-byte ids" if args.id_bytes else "ids of 6-12 bytes"
    names = f"{args.name_bytes}-byte names" if args.name_bytes else "4-byte names"
    print(f"memberships {members:,} ({args.conversations:,} conversations of {args.size}, "
          f"{users:,} users in {args.share} each; {ids}, {names})")
    print(f"RSS MiB: empty {empty / 1024:.1f}, joined {joined / 1024:.1f}, typing {typing / 1024:.1f}, "
          f"stopped {stopped / 1024:.1f}, left {left / 1024:.1f}")
    print(f"bytes per membership: joined {(joined - empty) * 1024 / members:.0f}, "
          f"all typing {(typing - empty) * 1024 / members:.0f}")
    print(f"resident above empty: after everyone stopped typing {(stopped - joined) / 1024:+.1f} MiB "
          f"(vs joined), after everyone left {(left - empty) / 1024:+.1f} MiB")


if __name__ == "__main__":
    main()
