#!/usr/bin/env python3
"""A W1-like workload that follows the rules for several typingd processes.

    workload.py [--lines N] [--conversations N] [--seed S] > workload.jsonl

It is bench/gen_w1.py's stream (joins, keystroke bursts ending in send, empty,
timeout, leave, remove or offline) with what a sharded deployment adds: renames
and settings sent with `user` (to every partition), every `join` carrying the
user's current name and setting, views opened and closed, a `query` with an id
now and then. It ends with a tick far past every deadline, then `snapshot` and
`stats` with ids, so that a checker can compare the final state too.
"""
import argparse
import json
import os
import random
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--conversations", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    generator = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "gen_w1.py")
    base = subprocess.run([sys.executable, generator, "--lines", str(args.lines), "--conversations",
                           str(args.conversations), "--bursts", str(max(10, args.conversations // 5)),
                           "--seed", str(args.seed)], check=True, capture_output=True).stdout.splitlines()

    names, hidden = {}, set()          # the user's current name and send_typing=false users
    memberships = {}                   # user -> set of conversations
    out = sys.stdout
    at = 0
    queries = 0

    def emit(command):
        out.write(json.dumps(command, ensure_ascii=False, separators=(",", ":")) + "\n")

    for raw in base:
        command = json.loads(raw)
        at = command.get("at", at)
        cmd, user, conv = command.get("cmd"), command.get("user"), command.get("conv")
        if cmd == "join":
            if user in names:
                command["name"] = names[user]
            else:
                names[user] = command.get("name")
            if user in hidden:
                command["send_typing"] = False
            memberships.setdefault(user, set()).add(conv)
        elif cmd in ("leave", "remove"):
            memberships.get(user, set()).discard(conv)
            if not memberships.get(user):
                memberships.pop(user, None)
                names.pop(user, None)   # a user with no memberships is forgotten
                hidden.discard(user)
        emit(command)
        if cmd == "join" and rng.random() < 0.3:
            emit({"cmd": "open", "conv": conv, "user": user, "at": at})
        roll = rng.random()
        if roll < 0.004 and memberships:
            someone = rng.choice(sorted(memberships))
            names[someone] = "{} ({})".format(someone.upper(), rng.randrange(1000))
            emit({"cmd": "user", "user": someone, "name": names[someone], "at": at})
        elif roll < 0.005 and memberships:
            someone = rng.choice(sorted(memberships))
            setting = someone in hidden
            (hidden.discard if setting else hidden.add)(someone)
            emit({"cmd": "user", "user": someone, "send_typing": setting, "at": at})
        elif roll < 0.010 and cmd in ("type", "send") and conv is not None:
            emit({"cmd": "close", "conv": conv, "user": user, "at": at})
        elif roll < 0.012 and conv is not None:
            queries += 1
            emit({"cmd": "query", "conv": conv, "id": "q{}".format(queries), "at": at})
    emit({"cmd": "tick", "at": at + 86_400_000 + 1})
    emit({"cmd": "snapshot", "id": "final-snapshot"})
    emit({"cmd": "stats", "id": "final-stats"})


if __name__ == "__main__":
    main()
