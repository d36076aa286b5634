#!/usr/bin/env python3
"""faults.sh's checks and inputs (each prints one line of figures; exit 1 when it fails).

    faults.py viewers REFERENCE N               the N viewers with the most indicators (0: all)
    faults.py finals REFERENCE FINALS [--viewers FILE] [--ignore-at] [--input FILE]
        every (viewer, conv, thread, view, pane) of the gateway's finals (typingd-cluster gateway --finals) and of
        the reference's last indicators (of those viewers, or all with no --viewers): the
        same typing, activities and text (and `at` unless --ignore-at); an empty indicator
        and none are the same (nothing shown). With --input (the stamped commands of the
        reference), a screen its viewer may have left and entered again since its last
        indicator is not compared: it starts from empty without an event, so its last
        indicator no longer says what it shows (a gateway that resynced knows better)
    faults.py announced REFERENCE RECEIVED [--viewers FILE]
        every screen the reference's final snapshot shows a sentence on that typingd
        announced to it (its member's `announced`, `side_announced`) must have been
        announced that sentence last at the gateway (typingd-cluster gateway --received)
    faults.py applied --input NAME=FILE [...] [--whole] [--servers URLS] [--partitions N]
        what the shards applied, per router name and partition, against the input's lines
        for that partition (the router's rule, typingd-cluster partition --lines): from each owner's stats (`routers`: the last
        line number applied) and, with --whole (a stream never purged), from the stream
        itself with the shards' rule (a line numbered at or below one applied is dropped):
        the same lines in the same order (stamped `at` aside)
    faults.py replay --typingd BIN --audit P=FILE [...] [--servers URLS] [-- OPTIONS]
        one typingd per partition fed the partition's stored messages as the shard applies
        them (the shards' rule, ticks included, --late-at clamp): the same events as the
        shard's audit; and no error `time_backwards`; prints the errors by kind
    faults.py stall-consumer --partition P [--servers URLS]
        a fault: partition P's durable consumer replaced by one that delivers nothing (its
        filter matches no subject) and says 0 pending whatever the stream holds: a
        consumer that stalled (its owner's pull requests end; new ones are answered
        with heartbeats only)
    faults.py caught-up [--servers URLS] [--partitions N]
        every partition's owner (its stats) has applied the partition's last stored message
    faults.py unstamp < WORKLOAD > INPUT          drop `at` and tick lines (live input)
    faults.py split INPUT A B                     the lines of half the conversations to A,
                                                  the rest (and lines for every partition) to B
    faults.py typing --convs N --seconds S        a live input: joins, then typing that is
                                                  still going on when the input ends
    faults.py clears --received FILE [--tick-ms T] [--servers URLS] [--announcements]
        after the last command a router sent, each indicator that drops a typer (its `at`
        is the deadline) must reach the gateway (typingd-cluster gateway --received: the wall clock of
        each) within T + 400 ms of that deadline, and so must each announcement (its `at`
        is when it was due: the owners' ticks fire them as they fire timeouts); with
        --announcements, there must be some
"""
import argparse
import asyncio
import base64
import collections
import json
import os
import random
import subprocess
import sys
import zlib

from lib import (COMMAND_SUBJECT, STREAM, conf_option, decode_body, connect, default_servers, owners, resolve,
                 routes_of)

HERE = os.path.dirname(os.path.abspath(__file__))


def key_of(event):
    """A viewer's screen: the main one or the side pane (`pane`), at a thread or the chat list."""
    return (event["viewer"], event["conv"], event.get("thread"), event.get("view"), event.get("pane"))


def shown(event, ignore_at):
    """What a screen shows: None for nothing."""
    if not event or not event.get("typing"):
        return None
    return {k: v for k, v in event.items() if not (ignore_at and k == "at")}


def cmd_viewers(args):
    counts = collections.Counter()
    with open(args.reference, "rb") as file:
        for line in file:
            if b'"indicator"' in line:
                counts[json.loads(line)["viewer"]] += 1
    for viewer, _ in counts.most_common(args.n or None):
        print(viewer)


def wanted_viewers(path):
    if not path:
        return None
    with open(path) as file:
        return {line.rstrip("\n") for line in file if line.strip()}


def last_indicators(path, wanted):
    """The reference's last indicator per screen (of the viewers wanted, or all),
    and the members of its final snapshot by (user, conv) (None without one)."""
    ref = {}
    listed, members = [], None
    with open(path, "rb") as file:
        for line in file:
            if b'"indicator"' in line:
                event = json.loads(line)
                if event.get("event") == "indicator" and (wanted is None or event["viewer"] in wanted):
                    ref[key_of(event)] = event
            elif b'"member"' in line:
                listed.append(json.loads(line))
            elif b'"snapshot"' in line:
                if json.loads(line).get("id") == "final-snapshot":
                    members = (members or {})
                    members.update({(m["user"], m["conv"]): m for m in listed})
                listed = []
    return ref, members


def on_screen(members, key):
    """Whether the viewer is still on that screen at the end, by the reference's
    final snapshot (none: every screen counts). A screen left without a render
    (a thread or the chat list opened or closed, a side pane closed or moved,
    offline, receive_typing off, leaving) shows nothing whatever its last
    indicator was: not compared."""
    if members is None:
        return True
    m = members.get((key[0], key[1]))
    if key[4] == "side":
        return bool(m and m.get("side") == key[2] and m.get("receive_typing", True))
    return bool(m and m.get("open") and not m.get("forgotten") and m.get("receive_typing", True)
                and m.get("thread") == key[2] and (m.get("view") if m.get("view") != "chat" else None) == key[3])


def screen_changes(path):
    """When each member's screens last changed without an event, by the input's
    commands and their `at`: (user, conv, pane) -> time, and user -> time for what
    changes every screen of the user (offline, receive_typing)."""
    member, user_wide = {}, {}
    with open(path, "rb") as file:
        for line in file:
            if not line.strip():
                continue
            command = json.loads(line)
            cmd, user, conv, at = command.get("cmd"), command.get("user"), command.get("conv"), command.get("at")
            if not isinstance(at, int) or not isinstance(user, str):
                continue
            panes = ()
            if cmd in ("leave", "remove", "join"):
                panes = ("main", "side")
                if "receive_typing" in command:
                    user_wide[user] = at
            elif cmd in ("open", "close"):
                panes = (command.get("pane", "main"),)
            elif cmd == "offline" or (cmd == "user" and "receive_typing" in command):
                user_wide[user] = at
            for pane in panes:
                member[(user, conv, pane)] = at
    return member, user_wide


def cmd_finals(args):
    wanted = wanted_viewers(args.viewers)
    ref, members = last_indicators(args.reference, wanted)
    changed, user_changed = screen_changes(args.input) if args.input else ({}, {})

    def entered_again(key, event):
        """Whether the screen may have been left and entered again since its last indicator."""
        if not args.input:
            return False
        since = event["at"] if event else -1
        viewer, conv, pane = key[0], key[1], key[4] or "main"
        return changed.get((viewer, conv, pane), -2) >= since or user_changed.get(viewer, -2) >= since
    got = {}
    with open(args.finals) as file:
        for line in file:
            item = json.loads(line)
            got[(item["viewer"], item["conv"], item["thread"], item["view"], item.get("pane"))] = item["indicator"]
    viewers = wanted if wanted is not None else {k[0] for k in ref} | {k[0] for k in got}
    wrong_viewers, wrong, left, again = set(), [], 0, 0
    for key in set(ref) | set(got):
        if key[0] not in viewers:
            continue
        if not on_screen(members, key):
            left += 1
            continue
        if entered_again(key, ref.get(key)):
            again += 1
            continue
        a, b = shown(ref.get(key), args.ignore_at), shown(got.get(key), args.ignore_at)
        if a != b:
            wrong_viewers.add(key[0])
            wrong.append((key, a, b))
    for key, a, b in wrong[:5]:
        print("  viewer {!r} conv {!r} thread {!r} view {!r} pane {!r}: one typingd ends on {}, the gateway on {}".format(
            *key, json.dumps(a, ensure_ascii=False), json.dumps(b, ensure_ascii=False)))
    showing = sum(1 for k, e in ref.items() if k[0] in viewers and shown(e, True))
    print("finals: {} viewers, {} screens ({} showing someone at the end, {} left without a render{}: not compared); "
          "{} viewers on a wrong final indicator ({} screens)".format(
              len(viewers), len({k for k in set(ref) | set(got) if k[0] in viewers}), showing, left,
              ", {} maybe entered again since their last indicator".format(again) if args.input else "",
              len(wrong_viewers), len(wrong)))
    sys.exit(1 if wrong else 0)


def cmd_announced(args):
    wanted = wanted_viewers(args.viewers)
    ref, members = last_indicators(args.reference, wanted)
    if members is None:
        sys.exit("announced: the reference has no final-snapshot")
    heard = {}
    with open(args.received, "rb") as file:
        for raw in file:
            line = raw.rstrip(b"\n").split(b"\t", 1)[1]
            if b'"announce"' in line:
                event = json.loads(line)
                if event.get("event") == "announce":
                    heard[key_of(event)] = event["text"]
    expected, wrong = 0, []
    for key, event in sorted(ref.items(), key=lambda item: str(item[0])):
        if not event.get("text") or not on_screen(members, key):
            continue
        m = members[(key[0], key[1])]
        if m.get("side_announced" if key[4] == "side" else "announced") != event["text"]:
            continue                         # typingd has not announced what the screen shows (yet)
        expected += 1
        if heard.get(key) != event["text"]:
            wrong.append((key, event["text"], heard.get(key)))
    for key, want, got in wrong[:5]:
        print("  viewer {!r} conv {!r} thread {!r} view {!r} pane {!r}: one typingd announced {!r}, the gateway "
              "heard {!r} last".format(*key, want, got))
    print("announced: {} screens show a sentence typingd announced to them; {} of them were announced another "
          "last at the gateway ({} announcements heard)".format(expected, len(wrong), len(heard)))
    sys.exit(1 if wrong or not expected else 0)


def input_lines(path):
    with open(path, "rb") as file:
        return [l.rstrip(b"\n") for l in file if l.strip()]


async def read_stream(servers):
    """Every message of the stream: (partition, headers, body), in stream order."""
    nc = await connect(servers, "faults", timeout=10)
    js = nc.jetstream()
    info = await js.stream_info(STREAM)
    got = []
    if info.state.messages:
        sub = await js.pull_subscribe("typingd.cmd.*", stream=STREAM)
        while len(got) < info.state.messages:
            for msg in await sub.fetch(min(500, info.state.messages - len(got)), timeout=10):
                got.append((int(msg.subject.rsplit(".", 1)[1]), msg.headers or {}, decode_body(msg.headers, msg.data)))
                await msg.ack()
        await sub.unsubscribe()
    await nc.close()
    return info.state.first_seq, got


def applied_lines(messages, partitions):
    """The shards' rule: per partition, the lines applied, in order; and per
    (router, partition) the lines dropped as re-sent."""
    applied = [[] for _ in range(partitions)]
    last = collections.defaultdict(int)
    dropped = collections.Counter()
    for p, headers, body in messages:
        lines = body.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        name = headers.get("Typingd-Router")
        if name is None:
            applied[p].extend((None, l) for l in lines)
            continue
        first = int(headers["Typingd-Lines"])
        skip = max(0, last[(name, p)] - first + 1)
        dropped[(name, p)] += min(skip, len(lines))
        applied[p].extend((name, l) for l in lines[skip:])
        last[(name, p)] = max(last[(name, p)], first + len(lines) - 1)
    return applied, dropped


def without_at(line):
    event = json.loads(line)
    event.pop("at", None)
    return json.dumps(event, sort_keys=True)


async def stats(servers):
    nc = await connect(servers, "faults", timeout=10)
    inbox = nc.new_inbox()
    got = []

    async def answer(msg):
        try:
            got.append(json.loads(msg.data))
        except ValueError:
            pass
    sub = await nc.subscribe(inbox, cb=answer)
    await nc.publish("typingd.stats", b"", reply=inbox)
    await asyncio.sleep(1.5)
    await sub.unsubscribe()
    await nc.close()
    return got


def cmd_applied(args):
    inputs = dict(item.split("=", 1) for item in args.input)
    expected = {}
    for name, path in inputs.items():
        per = [[] for _ in range(args.partitions)]
        lines = list(input_lines(path))
        for line, partitions in zip(lines, routes_of(lines, args.partitions)):
            for p in partitions:
                per[p].append(line)
        expected[name] = per
    failed = False
    owners = {s["partition"]: s for s in asyncio.run(stats(args.servers)) if s.get("role") == "owner"}
    notes = []
    for name in inputs:
        for p in range(args.partitions):
            last = owners.get(p, {}).get("routers", {}).get(name, 0 if p in owners else None)
            if last != len(expected[name][p]):
                failed = True
                notes.append("  router {}: partition {}: the owner applied through line {}, the input has {} "
                             "for it".format(name, p, last, len(expected[name][p])))
    dropped_total = sum(s.get("dropped_lines", 0) for s in owners.values())
    whole = ""
    if args.whole:
        first_seq, messages = asyncio.run(read_stream(args.servers))
        if first_seq > 1:
            failed = True
            notes.append("  the stream was purged (first seq {}): --whole cannot check it".format(first_seq))
        applied, dropped = applied_lines(messages, args.partitions)
        for name in inputs:
            for p in range(args.partitions):
                got = [l for n, l in applied[p] if n == name]
                want = expected[name][p]
                if args.stamped:
                    same = len(got) == len(want) and all(without_at(a) == without_at(b) for a, b in zip(got, want))
                else:
                    same = got == want
                if not same:
                    failed = True
                    i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                    notes.append("  router {}: partition {}: {} lines applied, {} in the input; first difference "
                                 "at line {}".format(name, p, len(got), len(want), i + 1))
        whole = "; the stream, by the shards' rule: {} lines applied exactly as routed, {} re-sent lines " \
                "dropped".format(sum(len(v) for n in expected for v in expected[n]), sum(dropped.values()))
    for note in notes[:10]:
        print(note)
    print("applied: per router and partition, owners applied through {} lines ({} re-sent lines dropped by "
          "dedup){}: {}".format(sum(len(v) for n in expected for v in expected[n]), dropped_total, whole,
                                "lost or doubled" if failed else "nothing lost or doubled"))
    sys.exit(1 if failed else 0)


def audit_events(paths):
    events = []
    for path in paths:
        with open(path, "rb") as file:
            for raw in file:
                seq, flag, line = raw.rstrip(b"\n").split(b"\t", 2)
                if flag != b"E":
                    events.append(line)
    return events


def unnumbered(line):
    """An event without what counts the shard's own marker lines: an error's line
    number; of a `stats` event, only the live counters."""
    event = json.loads(line)
    if event.get("event") == "error":
        event.pop("line", None)
    elif event.get("event") == "stats":
        event = {k: v for k, v in event.items() if k not in ("lines", "commands", "events")}
    return event


def run_typingd(binary, options, lines):
    proc = subprocess.run([binary, "--clock", "manual", "--no-drain", "--late-at", "clamp"] + options,
                          input=b"".join(l + b"\n" for l in lines), stdout=subprocess.PIPE, check=True, timeout=300)
    return [l for l in proc.stdout.split(b"\n") if l.strip()]


def cmd_replay(args):
    audits = collections.defaultdict(list)
    for item in args.audit:
        p, path = item.split("=", 1)
        audits[int(p)].append(path)
    first_seq, messages = asyncio.run(read_stream(args.servers))
    applied, _ = applied_lines(messages, args.partitions)
    failed = first_seq > 1
    errors = collections.Counter()
    total = 0
    out = open(args.out, "wb") if args.out else None
    for p in range(args.partitions):
        replayed = run_typingd(args.typingd, args.options, [l for _, l in applied[p]])
        if out:
            out.write(b"".join(l + b"\n" for l in replayed))
        want = [unnumbered(l) for l in replayed]
        got = [unnumbered(l) for l in audit_events(audits[p])]
        total += len(got)
        for event in got:
            if event.get("event") == "error":
                errors[event.get("code") or event.get("error")] += 1
        if want != got:
            failed = True
            i = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
            print("  partition {}: event {} of {} (replay) / {} (shard) differs:\n    replay: {}\n    shard:  {}".format(
                p, i + 1, len(want), len(got), json.dumps(want[i]) if i < len(want) else "(none)",
                json.dumps(got[i]) if i < len(got) else "(none)"))
    backwards = errors.get("time_backwards", 0)
    print("replay: {} partitions, {} lines applied, {} events; one typingd per partition fed the stored lines "
          "gives {}; errors: {}".format(args.partitions, sum(len(a) for a in applied), total,
                                       "the same events" if not failed else "OTHER events",
                                       dict(errors) or "none"))
    if backwards:
        print("  {} commands refused time_backwards".format(backwards))
    sys.exit(1 if failed or backwards else 0)


def cmd_stall_consumer(args):
    async def run():
        from nats.js import api
        from nats.js.errors import NotFoundError
        nc = await connect(args.servers, "faults", timeout=10)
        js = nc.jetstream()
        durable = "shard-{}".format(args.partition)
        try:
            await js.delete_consumer(STREAM, durable)
        except NotFoundError:
            pass
        nowhere = COMMAND_SUBJECT.format("stalled-{}".format(args.partition))   # in the stream, never routed to
        config = api.ConsumerConfig(durable_name=durable, filter_subject=nowhere,
                                    ack_policy=api.AckPolicy.ALL, deliver_policy=api.DeliverPolicy.NEW,
                                    num_replicas=1, mem_storage=True)
        info = await js.add_consumer(STREAM, config=config)
        print("consumer {} replaced by one that delivers nothing ({} pending)".format(durable, info.num_pending))
        await nc.close()
    asyncio.run(run())


def cmd_skip_lines(args):
    """Moves router NAME's checkpoint LINES lines on for one partition: its next
    run numbers that partition's lines from there, as if those lines had been lost
    between it and the stream."""
    async def run():
        nc = await connect(args.servers, "faults", timeout=10)
        kv = await nc.jetstream().key_value("typingd-routers")
        entry = await kv.get(args.name)
        checkpoint = json.loads(entry.value)
        before = checkpoint["lines"][args.partition]
        checkpoint["lines"][args.partition] = before + args.lines
        await kv.put(args.name, json.dumps(checkpoint, sort_keys=True).encode())
        print("router {}: partition {}'s lines numbered on from {}, not {}".format(
            args.name, args.partition, before + args.lines + 1, before + 1))
        await nc.close()
    asyncio.run(run())


def cmd_caught_up(args):
    async def ask():
        nc = await connect(args.servers, "faults", timeout=10)
        rows = await owners(nc, args.partitions)
        await nc.close()
        return rows
    rows = asyncio.run(ask())
    behind = []
    for p in range(args.partitions):
        row = rows.get(p, {})
        applied, last = row.get("applied_seq"), row.get("stream_last_seq")
        if not isinstance(applied, int) or not isinstance(last, int) or applied < last:
            behind.append("partition {}: applied {} of {}".format(p, applied, last) if row else
                          "partition {}: no owner answered".format(p))
    print("caught up: {}".format("; ".join(behind) if behind else "every owner applied its partition's last message"))
    sys.exit(1 if behind else 0)


def cmd_unstamp(args):
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        event = json.loads(line)
        if event.get("cmd") == "tick":
            continue
        event.pop("at", None)
        out.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")


def cmd_split(args):
    with open(args.a, "wb") as a, open(args.b, "wb") as b:
        for line in input_lines(args.input):
            conv = json.loads(line).get("conv")
            side = a if isinstance(conv, str) and zlib.crc32(conv.encode()) % 2 == 0 else b
            side.write(line + b"\n")


def cmd_typing(args):
    """Joins, then every conversation's members type in turns for --seconds (the
    router is paced to about that long); the input ends with keystrokes, so a
    streak is live in every conversation when the router stops."""
    rnd = random.Random(args.seed)
    out = []
    for c in range(args.convs):
        for u in range(3):
            out.append({"cmd": "join", "conv": "k{}".format(c), "user": "k{}u{}".format(c, u)})
    steps = int(args.seconds * 10)
    for step in range(steps):
        for c in range(args.convs):
            if rnd.random() < 0.5:
                u = rnd.randrange(3)
                if step < steps - 3 and rnd.random() < 0.1:
                    out.append({"cmd": "send", "conv": "k{}".format(c), "user": "k{}u{}".format(c, u)})
                else:
                    out.append({"cmd": "type", "conv": "k{}".format(c), "user": "k{}u{}".format(c, u)})
    for c in range(args.convs):   # the last lines: someone types in every conversation
        out.append({"cmd": "type", "conv": "k{}".format(c), "user": "k{}u0".format(c)})
    for item in out:
        print(json.dumps(item, separators=(",", ":")))


def cmd_big_state(args):
    """About --megabytes MB of state in partition --partition of --partitions:
    users with names of random base64 (they do not deflate away) joining
    1,000 conversations of that partition (about 200 members each), each user in one; then typing in a small
    conversation of the partition, so that the state after the snapshot changes. Prints the partition's
    join count on stderr (a snapshot every N messages is chosen from it)."""
    rnd = random.Random(args.seed)
    candidates = ["big{}".format(i) for i in range(8000)]
    lines = [json.dumps({"cmd": "query", "conv": c}).encode() for c in candidates]
    convs = [c for c, ps in zip(candidates, routes_of(lines, args.partitions)) if ps == [args.partition]][:1000]
    # Short names (a long one costs the engine about 2 ms a join), many members:
    # a member event of the snapshot is about 120 bytes.
    name_bytes = 12
    joins = args.megabytes * 1_000_000 // 120
    out = sys.stdout
    for u in range(joins):
        name = base64.b64encode(rnd.randbytes(name_bytes * 3 // 4)).decode()
        out.write('{"cmd":"join","conv":"%s","user":"b%d","name":"%s","at":%d}\n' % (convs[u % len(convs)], u, name, 1 + u // 1000))
    at = 1 + joins // 1000
    # Then, after the snapshot the first owner stores, life goes on in a small
    # conversation of the same partition (a big one would write each keystroke to
    # every one of its members).
    small = convs[-1] + "-small"
    while routes_of([json.dumps({"cmd": "query", "conv": small}).encode()], args.partitions)[0] != [args.partition]:
        small += "x"
    for u in range(3):
        out.write('{"cmd":"join","conv":"%s","user":"s%d","at":%d}\n' % (small, u, at))
    for step in range(3000):
        out.write('{"cmd":"type","conv":"%s","user":"s%d","at":%d}\n' % (small, rnd.randrange(3), at + step * 700))
    at += 3000 * 700
    out.write('{"cmd":"snapshot","id":"big-final","at":%d}\n' % at)
    out.write('{"cmd":"stats","id":"final-stats","at":%d}\n' % at)
    print("big-state: {} joins in {} conversations of partition {}".format(joins, len(convs), args.partition),
          file=sys.stderr)


def cmd_clears(args):
    """typingd writes a timeout's indicator with `at` = the deadline, whenever time
    reaches it: the gateway's clock when it received the indicator tells how late."""
    _, messages = asyncio.run(read_stream(args.servers))
    routed_until = 0
    for p, headers, body in messages:
        if headers.get("Typingd-Router"):
            for line in body.split(b"\n"):
                if line.strip():
                    routed_until = max(routed_until, json.loads(line).get("at", 0))
    before, late, announced = {}, [], []
    with open(args.received, "rb") as file:
        for raw in file:
            received, line = raw.rstrip(b"\n").split(b"\t", 1)
            event = json.loads(line)
            if event.get("event") == "announce":
                if event["at"] > routed_until:
                    announced.append(int(received) - event["at"])
                continue
            key = key_of(event)
            was, now = set(before.get(key, [])), set(event.get("typing", []))
            before[key] = event.get("typing", [])
            if event["at"] > routed_until and was - now:
                late.append(int(received) - event["at"])
    allowed = args.tick_ms + 400
    if not late:
        print("clears: no indicator cleared after the router stopped")
        sys.exit(1)
    late.sort()
    announced.sort()
    said = "; {} announcements due after the router stopped, received {} ms (median) / {} ms (worst) after they " \
        "were due".format(len(announced), announced[len(announced) // 2], announced[-1]) if announced else \
        "; no announcement due after the router stopped"
    print("clears: {} indicators cleared after the router stopped, received {} ms (median) / {} ms (worst) after "
          "their deadline{}; allowed {} ms".format(len(late), late[len(late) // 2], late[-1], said, allowed))
    sys.exit(1 if late[-1] > allowed or (announced and announced[-1] > allowed)
             or (args.announcements and not announced) else 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("viewers")
    p.add_argument("reference")
    p.add_argument("n", type=int)
    p = sub.add_parser("finals")
    p.add_argument("reference")
    p.add_argument("finals")
    p.add_argument("--viewers")
    p.add_argument("--ignore-at", action="store_true")
    p.add_argument("--input", help="the reference's commands, stamped: screens entered again are not compared")
    p = sub.add_parser("announced")
    p.add_argument("reference")
    p.add_argument("received")
    p.add_argument("--viewers")
    subparsers = {}
    for name in ("applied", "replay", "clears", "caught-up"):
        p = sub.add_parser(name)
        p.add_argument("--servers")
        conf_option(p, "--partitions", "PARTITIONS", "partitions")
        subparsers[name] = p
        if name == "applied":
            p.add_argument("--input", action="append", required=True)
            p.add_argument("--whole", action="store_true")
            p.add_argument("--stamped", action="store_true")
        elif name == "replay":
            p.add_argument("--audit", action="append", required=True)
            p.add_argument("--typingd", required=True)
            p.add_argument("--out", help="write the replays' events here (a reference for `finals`)")
            p.add_argument("options", nargs="*")
        if name == "clears":
            p.add_argument("--received", required=True, help="typingd-cluster gateway --received")
            conf_option(p, "--tick-ms", "TICK_MS", "the shards' tick")
            p.add_argument("--announcements", action="store_true",
                           help="the shards run with --announce-after-ms: some announcements must come")
    p = sub.add_parser("stall-consumer")
    p.add_argument("--servers")
    p.add_argument("--partition", type=int, required=True)
    subparsers["stall-consumer"] = p
    p = sub.add_parser("skip-lines")
    p.add_argument("--servers")
    p.add_argument("--name", required=True)
    p.add_argument("--partition", type=int, required=True)
    p.add_argument("--lines", type=int, required=True)
    subparsers["skip-lines"] = p
    sub.add_parser("unstamp")
    p = sub.add_parser("split")
    p.add_argument("input")
    p.add_argument("a")
    p.add_argument("b")
    p = sub.add_parser("big-state")
    p.add_argument("--megabytes", type=int, default=200)
    p.add_argument("--partition", type=int, default=1)
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--seed", type=int, default=20)
    p = sub.add_parser("typing")
    p.add_argument("--convs", type=int, default=40)
    p.add_argument("--seconds", type=float, default=4)
    p.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    if args.command in subparsers:
        resolve(subparsers[args.command], args)
        args.servers = args.servers or default_servers()
    globals()["cmd_" + args.command.replace("-", "_")](args)


if __name__ == "__main__":
    main()
