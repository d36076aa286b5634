#!/usr/bin/env python3
"""A W1-like workload that follows the rules for several typingd processes.

    workload.py [--lines N] [--conversations N] [--seed S] > workload.jsonl

It is bench/gen_w1.py's stream (joins, keystroke bursts ending in send, empty,
timeout, leave, remove or offline) with what a sharded deployment adds: renames
and settings sent with `user` (to every partition), every `join` carrying the
user's current name, locale and settings, views opened and closed, a `query`
with an id now and then. And protocol v3 (run typingd with --phrases on the
repository's phrases/ folder): activities other than typing, threads (people
type in one and look at it, and queries ask about one), chat-list views, users
with a locale, receive_typing turned off and on again, and people going offline
while they look at a thread or the chat list (their screens change without a
render: the snapshot's `forgotten`). It ends with a `snapshot` while typing is
still live, a tick far past every deadline, then `snapshot` and `stats` with
ids, so that a checker can compare the final state too. The same seed gives
the same bytes.
"""
import argparse
import json
import os
import random
import subprocess
import sys

ACTIVITIES = ["recording_audio", "recording_video", "sending_photo", "sending_video", "sending_file",
              "sharing_location"]
# Tags served by phrases/*.json, directly or by dropping a subtag (pt-BR -> pt,
# es-419 -> es), and two that fall back to English.
LOCALES = ["de", "fr", "pt-BR", "ru", "ja", "es-419", "zh", "ar", "en-GB", "sv"]
THREADS = ["t1", "t2", "thread with spaces ✓"]


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

    # A user's settings, as every partition must learn them (Protocol.md, "Running
    # several typingd processes"): forgotten with the user's last membership.
    names, hidden, locales, deaf = {}, set(), {}, set()   # deaf: receive_typing false
    memberships = {}                   # user -> set of conversations
    members_of = {}                    # conversation -> set of users
    activity, place = {}, {}           # (conv, user) -> what they do, and in which thread (None: main)
    out = sys.stdout
    at = 0
    queries = 0

    def emit(command):
        out.write(json.dumps(command, ensure_ascii=False, separators=(",", ":")) + "\n")

    def someone():
        return rng.choice(sorted(memberships)) if memberships else None

    def where(command, key):
        if place.get(key) is not None:
            command["thread"] = place[key]
        return command

    for raw in base:
        command = json.loads(raw)
        at = command.get("at", at)
        cmd, user, conv = command.get("cmd"), command.get("user"), command.get("conv")
        key = (conv, user)
        if cmd == "join":
            if user in names:
                command["name"] = names[user]
            else:
                names[user] = command.get("name")
            if user in hidden:
                command["send_typing"] = False
            if user in locales:
                command["locale"] = locales[user]
            if user in deaf:
                command["receive_typing"] = False
            memberships.setdefault(user, set()).add(conv)
            members_of.setdefault(conv, set()).add(user)
            place.pop(key, None)           # a join is at the main timeline
        elif cmd in ("leave", "remove"):
            memberships.get(user, set()).discard(conv)
            members_of.get(conv, set()).discard(user)
            place.pop(key, None)
            if not memberships.get(user):
                memberships.pop(user, None)
                names.pop(user, None)   # a user with no memberships is forgotten
                hidden.discard(user)
                locales.pop(user, None)
                deaf.discard(user)
        elif cmd == "type" and not command.get("empty"):
            roll = rng.random()
            if roll < 0.015:
                activity[key] = rng.choice(ACTIVITIES)
            elif roll < 0.02:
                activity.pop(key, None)
            if activity.get(key):
                command["activity"] = activity[key]
            roll = rng.random()
            if roll < 0.01:
                # Moves to a thread (a streak elsewhere stops: `moved`) and looks at
                # it; so does someone else now and then.
                place[key] = rng.choice(THREADS)
                if rng.random() < 0.8:
                    emit({"cmd": "open", "conv": conv, "user": user, "thread": place[key], "at": at})
                others = sorted(members_of.get(conv, set()) - {user})
                if others and rng.random() < 0.6:
                    emit({"cmd": "open", "conv": conv, "user": rng.choice(others), "thread": place[key], "at": at})
            elif roll < 0.04 and place.get(key) is not None:
                place[key] = None
            where(command, key)
        elif cmd in ("type", "send"):
            where(command, key)        # an emptied box or a send where the user types
            activity.pop(key, None)    # the next message starts as typing
        elif cmd == "offline" and memberships.get(user) and rng.random() < 0.6:
            # Looking at a thread or the chat list when going offline: the screen
            # goes back to the main chat without a render (forgotten).
            there = rng.choice(sorted(memberships[user]))
            if rng.random() < 0.7:
                emit({"cmd": "open", "conv": there, "user": user, "thread": rng.choice(THREADS), "at": at})
            else:
                emit({"cmd": "open", "conv": there, "user": user, "view": "list", "at": at})
        emit(command)
        if cmd == "join":
            roll = rng.random()
            if roll < 0.2:
                emit({"cmd": "open", "conv": conv, "user": user, "at": at})
            elif roll < 0.25:
                emit({"cmd": "open", "conv": conv, "user": user, "thread": rng.choice(THREADS), "at": at})
            elif roll < 0.3:
                emit({"cmd": "open", "conv": conv, "user": user, "view": "list", "at": at})
        roll = rng.random()
        if roll < 0.004 and memberships:
            who = someone()
            names[who] = "{} ({})".format(who.upper(), rng.randrange(1000))
            emit({"cmd": "user", "user": who, "name": names[who], "at": at})
        elif roll < 0.005 and memberships:
            who = someone()
            setting = who in hidden
            (hidden.discard if setting else hidden.add)(who)
            emit({"cmd": "user", "user": who, "send_typing": setting, "at": at})
        elif roll < 0.0065 and memberships:
            who = someone()
            locales[who] = rng.choice(LOCALES)
            change = {"cmd": "user", "user": who, "locale": locales[who], "at": at}
            if rng.random() < 0.3:
                names[who] = "{} [{}]".format(who.upper(), locales[who])
                change["name"] = names[who]
            emit(change)
        elif roll < 0.0075 and memberships:
            who = someone()
            setting = who in deaf
            (deaf.discard if setting else deaf.add)(who)
            emit({"cmd": "user", "user": who, "receive_typing": setting, "at": at})
        elif roll < 0.0095 and conv is not None and cmd in ("join", "type", "send"):
            # The chat list, or back to the chat (a new screen either way).
            view = "list" if rng.random() < 0.5 else "chat"
            emit({"cmd": "open", "conv": conv, "user": user, "view": view, "at": at})
        elif roll < 0.0145 and cmd in ("type", "send") and conv is not None:
            emit({"cmd": "close", "conv": conv, "user": user, "at": at})
        elif roll < 0.0165 and conv is not None:
            queries += 1
            query = {"cmd": "query", "conv": conv, "id": "q{}".format(queries), "at": at}
            if rng.random() < 0.3:
                query["thread"] = rng.choice(THREADS)
            emit(query)
    emit({"cmd": "snapshot", "id": "live-snapshot", "at": at})
    emit({"cmd": "tick", "at": at + 86_400_000 + 1})
    emit({"cmd": "snapshot", "id": "final-snapshot"})
    emit({"cmd": "stats", "id": "final-stats"})


if __name__ == "__main__":
    main()
