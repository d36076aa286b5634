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
render: the snapshot's `forgotten`). And protocol v4 (run typingd with
--quiet-above N, the --quiet-above given here, --several-after 3 and
--announce-after-ms M): side panes opened on threads (where people type, and
elsewhere) and closed, members who follow a thread in both screens, status
streaks in people's own words (and changes of words mid-streak), a few rooms of
about N members that visitors join and leave, so that they go quiet and come back,
and rushes of four to six people typing at once (several people). It ends with a
`snapshot` while typing is still live, a tick far past every deadline, then
`snapshot` and `stats` with ids, so that a checker can compare the final state
too. The same seed gives the same bytes.
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
# A status streak's words (protocol v4): shown as given, in every language.
STATUSES = ["is thinking", "is searching the web", "is reading 3 files", "lädt eine Datei hoch",
            "думает…", "est en train d’écrire ✍", "is thinking about \"quotes\" and \\ backslashes"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--conversations", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quiet-above", type=int, default=25,
                        help="a few rooms of about this many members wander across it (typingd's --quiet-above; "
                             "0: none)")
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
    side = {}                          # (conv, user) -> the thread of their side pane
    crowded = None                     # rooms of about --quiet-above members, chosen after the first joins
    visitors = {}                      # crowded room -> its visitors, in the order they came
    visits = 0
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

    def doing(command, key):
        """The keystroke's activity: the streak's, with its words for a status."""
        what = activity.get(key)
        if isinstance(what, tuple):
            command["activity"], command["status"] = what
        elif what:
            command["activity"] = what
        return command

    def departed(conv, user):
        """A membership ends (leave or remove): what it held goes, and a user with
        no membership left is forgotten."""
        memberships.get(user, set()).discard(conv)
        members_of.get(conv, set()).discard(user)
        place.pop((conv, user), None)
        side.pop((conv, user), None)
        if not memberships.get(user):
            memberships.pop(user, None)
            names.pop(user, None)   # a user with no memberships is forgotten
            hidden.discard(user)
            locales.pop(user, None)
            deaf.discard(user)

    def crowd(at):
        """A visitor comes to or leaves a room of about --quiet-above members: the
        room goes quiet above it and shows its typers again at or below it."""
        nonlocal visits
        room = rng.choice(crowded)
        here = visitors.setdefault(room, [])
        if here and (len(here) >= 4 or rng.random() < 0.45):
            who = here.pop(0)
            emit({"cmd": "leave", "conv": room, "user": who, "at": at})
            departed(room, who)
            return
        visits += 1
        who = "v{}".format(visits)
        names[who] = "Visitor {}".format(visits)
        here.append(who)
        memberships.setdefault(who, set()).add(room)
        members_of.setdefault(room, set()).add(who)
        emit({"cmd": "join", "conv": room, "user": who, "name": names[who], "at": at})
        if rng.random() < 0.3:
            emit({"cmd": "type", "conv": room, "user": who, "at": at})

    def rush(conv, at):
        """Four to six members of `conv` type at once in its main timeline: more
        than --several-after 3 in one clause."""
        crowd_ = sorted(members_of.get(conv, set()))
        for who in rng.sample(crowd_, min(len(crowd_), rng.randint(4, 6))):
            place.pop((conv, who), None)
            emit(doing({"cmd": "type", "conv": conv, "user": who, "at": at}, (conv, who)))

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
            departed(conv, user)
        elif cmd == "type" and not command.get("empty"):
            roll = rng.random()
            if roll < 0.012:
                activity[key] = rng.choice(ACTIVITIES)
            elif roll < 0.02:
                activity[key] = ("status", rng.choice(STATUSES))   # a bot's words, changing mid-streak too
            elif roll < 0.025:
                activity.pop(key, None)
            doing(command, key)
            roll = rng.random()
            if roll < 0.01:
                # Moves to a thread (a streak elsewhere stops: `moved`) and looks at
                # it, in the channel or in a side pane beside it; so does someone
                # else now and then, and someone follows it in both screens.
                place[key] = rng.choice(THREADS)
                if rng.random() < 0.8:
                    pane = {"pane": "side"} if rng.random() < 0.3 else {}
                    emit(dict({"cmd": "open", "conv": conv, "user": user, "thread": place[key], "at": at}, **pane))
                    if pane:
                        side[key] = place[key]
                others = sorted(members_of.get(conv, set()) - {user})
                if others and rng.random() < 0.6:
                    emit({"cmd": "open", "conv": conv, "user": rng.choice(others), "thread": place[key], "at": at})
                if others and rng.random() < 0.5:
                    other = rng.choice(others)
                    side[(conv, other)] = place[key]
                    emit({"cmd": "open", "conv": conv, "user": other, "thread": place[key], "pane": "side", "at": at})
                    if rng.random() < 0.3:   # the channel on the thread too: two screens at one thread
                        emit({"cmd": "open", "conv": conv, "user": other, "thread": place[key], "at": at})
            elif roll < 0.04 and place.get(key) is not None:
                place[key] = None
            where(command, key)
        elif cmd in ("type", "send"):
            where(command, key)        # an emptied box or a send where the user types
            activity.pop(key, None)    # the next message starts as typing
        elif cmd == "offline":
            for there in list(memberships.get(user, ())):
                side.pop((there, user), None)   # offline removes the side panes
        if cmd == "offline" and memberships.get(user) and rng.random() < 0.6:
            # Looking at a thread or the chat list when going offline: the screen
            # goes back to the main chat without a render (forgotten).
            there = rng.choice(sorted(memberships[user]))
            if rng.random() < 0.7:
                emit({"cmd": "open", "conv": there, "user": user, "thread": rng.choice(THREADS), "at": at})
            else:
                emit({"cmd": "open", "conv": there, "user": user, "view": "list", "at": at})
        emit(command)
        if crowded is None and cmd != "join" and args.quiet_above > 0:
            # The first joins are done: a few rooms just at or below the limit.
            near = sorted(c for c, who in members_of.items() if args.quiet_above - 2 <= len(who) <= args.quiet_above)
            crowded = rng.sample(near, min(6, len(near))) or [sorted(members_of)[0]]
        if crowded and rng.random() < 0.004:
            crowd(at)
        if cmd in ("type", "send") and rng.random() < 0.002 and len(members_of.get(conv, ())) >= 6:
            rush(conv, at)
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
        elif roll < 0.0185 and conv in members_of and members_of[conv]:
            # A side pane opened on a thread, or closed (protocol v4).
            who = rng.choice(sorted(members_of[conv]))
            if (conv, who) in side and rng.random() < 0.6:
                side.pop((conv, who))
                emit({"cmd": "close", "conv": conv, "user": who, "pane": "side", "at": at})
            else:
                side[(conv, who)] = rng.choice(THREADS)
                emit({"cmd": "open", "conv": conv, "user": who, "thread": side[(conv, who)], "pane": "side", "at": at})
        elif roll < 0.0205 and conv is not None:
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
