#!/usr/bin/env python3
"""Generate workload W1 for typingd: a repeatable, realistic manual-clock stream.

    bench/gen_w1.py [--lines N] [--conversations N] [--bursts N] [--seed S] > w1.jsonl

Every line carries "at". First, every conversation is joined: sizes are
lognormal, clamped to 2..50 members, drawn from a shared pool of users (so users
are in several conversations), each join with a name. Then about --bursts typing
bursts run interleaved at any time: a member types 3..40 keystrokes 80..300 ms
apart (sometimes pausing longer than the 3 s timeout), and the burst ends with
send (75 %), an emptied box (10 %), silence (the streak times out), leave,
remove or offline; whoever left or was removed joins again later. The same seed
gives the same bytes. With --churn, conversations are also replaced over time
by new ones with new users, so the ids seen keep growing while the live state
stays the same size (bench/soak.py uses it to look for leaks).
"""
import argparse
import heapq
import json
import math
import random
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--bursts", type=int, default=2_000, help="bursts active at once")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--median-size", type=float, default=5.0, help="median conversation size")
    parser.add_argument("--long-pause", type=float, default=0.01,
                        help="chance that a gap between keystrokes outlasts the timeout")
    parser.add_argument("--users", type=int, default=0,
                        help="size of the user pool members are drawn from (default 4 per conversation)")
    parser.add_argument("--churn", type=float, default=0.0,
                        help="chance, after each burst, that an idle conversation is replaced: all "
                             "its members leave, and a new conversation of new users is joined")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = sys.stdout
    write = out.write
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    lines = 0

    def emit(obj):
        nonlocal lines
        write(dumps(obj))
        write("\n")
        lines += 1

    # Phase 1: membership. Lognormal sizes (sigma 0.8) around --median-size.
    members = []
    names = [f"c{c}" for c in range(args.conversations)]
    pool = args.users or max(100, args.conversations * 4)
    for c in range(args.conversations):
        size = int(round(math.exp(rng.gauss(math.log(args.median_size), 0.8))))
        size = max(2, min(50, size))
        users = rng.sample(range(pool), size)
        members.append(users)
        for u in users:
            if lines >= args.lines:
                return
            emit({"cmd": "join", "conv": f"c{c}", "user": f"u{u}", "name": f"User {u}", "at": 0})

    # Phase 2: interleaved bursts, scheduled on a heap of (time, seq, burst).
    now = 0
    seq = 0
    heap = []
    absent = {}  # (conv, user) -> True while left/removed, rejoin pending
    busy = [0] * args.conversations  # bursts and rejoins pending per conversation
    next_user = pool
    generation = 0

    def new_burst(start):
        nonlocal seq
        c = rng.randrange(args.conversations)
        u = rng.choice(members[c])
        keys = rng.randint(3, 40)
        seq += 1
        busy[c] += 1
        heapq.heappush(heap, (start, seq, ["type", c, u, keys]))

    def replace_conversation():
        nonlocal next_user, generation
        c = rng.randrange(args.conversations)
        if busy[c]:
            return
        for u in members[c]:
            emit({"cmd": "leave", "conv": names[c], "user": f"u{u}", "at": now})
        generation += 1
        names[c] = f"c{c}.{generation}"
        fresh = list(range(next_user, next_user + len(members[c])))
        next_user += len(fresh)
        members[c] = fresh
        for u in fresh:
            emit({"cmd": "join", "conv": names[c], "user": f"u{u}", "name": f"User {u}", "at": now})

    for _ in range(args.bursts):
        new_burst(rng.randint(0, 5000))

    while lines < args.lines and heap:
        t, _, burst = heapq.heappop(heap)
        now = max(now, t)
        kind, c, u = burst[0], burst[1], burst[2]
        conv, user = names[c], f"u{u}"
        if kind == "rejoin":
            absent.pop((c, u), None)
            busy[c] -= 1
            emit({"cmd": "join", "conv": conv, "user": user, "name": f"User {u}", "at": now})
            continue
        if (c, u) in absent:  # this member is away: start another burst instead
            busy[c] -= 1
            new_burst(now + rng.randint(80, 300))
            continue
        keys = burst[3]
        if keys > 0:
            emit({"cmd": "type", "conv": conv, "user": user, "at": now})
            burst[3] = keys - 1
            gap = rng.randint(80, 300) if rng.random() >= args.long_pause else rng.randint(3100, 6000)
            seq += 1
            heapq.heappush(heap, (now + gap, seq, burst))
            continue
        ending = rng.random()
        if ending < 0.75:
            emit({"cmd": "send", "conv": conv, "user": user, "at": now})
        elif ending < 0.85:
            emit({"cmd": "type", "conv": conv, "user": user, "empty": True, "at": now})
        elif ending < 0.94:
            pass  # silence: the streak times out
        elif ending < 0.96:
            emit({"cmd": "leave", "conv": conv, "user": user, "at": now})
            absent[(c, u)] = True
        elif ending < 0.98:
            others = [m for m in members[c] if m != u and (c, m) not in absent]
            if others:
                emit({"cmd": "remove", "conv": conv, "user": user, "by": f"u{rng.choice(others)}", "at": now})
                absent[(c, u)] = True
        else:
            emit({"cmd": "offline", "user": user, "at": now})
        busy[c] -= 1
        if (c, u) in absent:
            seq += 1
            busy[c] += 1
            heapq.heappush(heap, (now + rng.randint(1000, 20000), seq, ["rejoin", c, u]))
        if args.churn and rng.random() < args.churn:
            replace_conversation()
        new_burst(now + rng.randint(200, 2000))


if __name__ == "__main__":
    main()
