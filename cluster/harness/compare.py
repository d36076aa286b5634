#!/usr/bin/env python3
"""Compare what the shards produced with what one typingd produced, conversation by conversation.

    compare.py REFERENCE AUDIT... [--label TEXT]

REFERENCE is one typingd's output for the whole workload. Each AUDIT file is a
shard's (typingd-cluster shard --audit: SEQ<TAB>P|B<TAB>EVENT, then SEQ<TAB>E<TAB>FIRST:PARTITION:EPOCH
once the events of the partition's messages FIRST..SEQ, one fetch or one replayed
message, are all written; an older shard wrote SEQ<TAB>E<TAB> for one message, and
then the files must be given in the order the shards started). A partition's
records are taken in the order of their owners' lease epochs, and merged by
sequence number, ignoring one without its E line (the shard was killed while
writing it): messages applied by two shards (a replacement applies again every
message after its snapshot, one record each) must have given the same events both
times (compared wherever the copies cover exactly the records taken: a fetch's
record against the replayed messages of that fetch), and the first complete copy
counts.

Per conversation, the indicator and announce events (every field, in order: a
viewer's events for a thread carry its `thread`, those for the chat list `view`,
those for a side pane `pane`, so one viewer's events for several screens are
compared as one typingd wrote them, and an announcement where it falls among
them) must be equal, and so must the member and streak events of each snapshot
the workload asks for, but for the fields that rank across conversations
(`joined`, `started`, `keystroke`, `announce_rank`, `side_announce_rank`): each
typingd ranks only its own. Those are checked as orders instead: each
partition's order of a user's memberships, of the streaks' starts, of their last
keystrokes and of the pending announcements must be the reference's order
restricted to that partition's conversations. The final stats' live counters
(conversations, members, typing) summed over the partitions must equal the
reference's. Prints one line per finding and a summary; exits 0 when nothing
differs.
"""
import argparse
import bisect
import collections
import json
import sys


def unnumbered(lines):
    """Events without the line numbers of errors, which each process counts itself."""
    events = [json.loads(line) for line in lines]
    for event in events:
        if event.get("event") == "error":
            event.pop("line", None)
    return events


# Ranks over all of one typingd's conversations.
RANKS = ("joined", "started", "keystroke", "announce_rank", "side_announce_rank")
SCREEN_EVENTS = ("indicator", "announce")   # what a viewer's screens are sent, compared in order


def by_conversation(lines):
    """(indicators and announcements by conv, snapshot events by (snapshot id, conv), snapshots, final stats).
    A snapshot is the list of member and streak events one `snapshot` reply listed."""
    indicators = collections.defaultdict(list)
    snapshot = collections.defaultdict(list)
    snapshots = collections.defaultdict(list)    # snapshot id -> [events of one reply]
    stats = []
    listed = []
    for line in lines:
        event = json.loads(line)
        kind = event["event"]
        if kind in SCREEN_EVENTS:
            indicators[event["conv"]].append(line)
        elif kind in ("member", "streak"):
            listed.append(event)
        elif kind == "snapshot":
            ident = event.get("id")
            for item in listed:
                plain = {k: v for k, v in item.items() if k not in RANKS}
                snapshot[(ident, item["conv"])].append(json.dumps(plain, ensure_ascii=False))
            snapshots[ident].append(listed)
            listed = []
        elif kind == "stats" and event.get("id") == "final-stats":
            stats.append(event)
    return indicators, snapshot, snapshots, stats


def orders(listed):
    """A snapshot's orders: each user's memberships in join order; the streaks in
    the order they began; the streaks in the order of their last keystrokes; the
    screens' pending announcements in the order they fire."""
    members = [e for e in listed if e["event"] == "member"]
    streaks = [e for e in listed if e["event"] == "streak"]
    if any("joined" in m for m in members):
        members.sort(key=lambda m: m["joined"])
    if any("started" in s for s in streaks):
        streaks.sort(key=lambda s: s["started"])
    joined = collections.defaultdict(list)
    for m in members:
        joined[m["user"]].append(m["conv"])
    pending = sorted([(m[prefix + "announce_rank"], m["conv"], m["user"], prefix.rstrip("_") or "main")
                      for m in members for prefix in ("", "side_") if prefix + "announce_rank" in m])
    return {"memberships of " + user: convs for user, convs in joined.items()}, {
        "streak starts": [(s["conv"], s["user"]) for s in streaks],
        "last keystrokes": [(s["conv"], s["user"]) for s in sorted(streaks, key=lambda s: s["keystroke"])],
        "pending announcements": [item[1:] for item in pending]}


def order_findings(ident, reference, parts):
    """Each partition's orders are the reference's, restricted to its conversations."""
    findings = []
    ref_users, ref_streaks = orders(reference)
    for part in parts:
        users, streaks = orders(part)
        convs = {e["conv"] for e in part}
        for name, got in list(users.items()) + list(streaks.items()):
            whole = ref_users.get(name, []) if name.startswith("memberships") else ref_streaks[name]
            want = [item for item in whole
                    if (item if isinstance(item, str) else item[0]) in convs]
            if got != want:
                findings.append("snapshot {!r}: {} in a partition: {} where one typingd gives {}".format(
                    ident, name, got[:6], want[:6]))
    return findings


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference")
    parser.add_argument("audits", nargs="+")
    parser.add_argument("--label", default="cluster")
    args = parser.parse_args()

    with open(args.reference, "rb") as file:
        reference = [line.rstrip(b"\n") for line in file if line.strip()]

    # A record: the events of stream sequences FIRST..LAST of one partition (one
    # fetch, or one message), complete when its E line was written. Per partition,
    # the records taken never overlap; a record covering sequences already taken
    # (a replacement applies again every message after its snapshot, one record
    # each) is a copy: the copies of a file that together cover exactly the taken
    # records of a span are compared with them.
    taken = collections.defaultdict(list)   # partition -> [(first, last, lines)] in order
    backlog = 0
    cut_short = 0
    replayed_twice = mismatched_twice = uncompared = 0
    records = []   # (partition, epoch, file, first, last, lines)
    for index, path in enumerate(args.audits):
        lines_of = collections.defaultdict(list)
        with open(path, "rb") as file:
            for raw in file:
                seq, flag, line = raw.rstrip(b"\n").split(b"\t", 2)
                if flag == b"E":
                    first, part, epoch = (line.split(b":") + [b"", b""])[:3]
                    records.append((part or None, int(epoch or 0), index, int(first) if first else int(seq),
                                    int(seq), lines_of.pop(int(seq), [])))
                    continue
                lines_of[int(seq)].append(line)
                backlog += flag == b"B"
        cut_short += len(lines_of)      # the shard died while writing these events
    # In the order the owners held the partition (their epochs grow), each owner's in
    # the order written; files without epochs (older shards) in the order given.
    records.sort(key=lambda r: (str(r[0]), r[1], r[2]))
    runs = {}                           # partition -> (owner, the copies met since the last aligned span)
    for part, epoch, index, first, last, lines in records:
        mine = taken[part]
        end = mine[-1][1] if mine else 0
        owner = (epoch, index)
        if part in runs and runs[part][0] != owner:
            uncompared += len(runs.pop(part)[1])
        if first > end:
            if part in runs:
                uncompared += len(runs.pop(part)[1])
            mine.append((first, last, lines))
            continue
        replayed_twice += 1
        run = runs.setdefault(part, (owner, []))[1]
        run.append((first, last, lines))
        # Aligned: the run starts where a taken record starts and ends where one ends.
        i = bisect.bisect_left(mine, (run[0][0],))
        if i == len(mine) or mine[i][0] != run[0][0]:
            continue
        j = next((k for k in range(i, len(mine)) if mine[k][1] >= last), None)
        if j is None or mine[j][1] != last:
            continue
        if unnumbered([l for r in mine[i:j + 1] for l in r[2]]) != unnumbered([l for r in run for l in r[2]]):
            mismatched_twice += len(run)
        del runs[part]
    uncompared += sum(len(run) for _, run in runs.values())
    produced = [line for record in sorted((r for mine in taken.values() for r in mine), key=lambda r: r[1])
                for line in record[2]]

    ref_ind, ref_snap, ref_snapshots, ref_stats = by_conversation(reference)
    got_ind, got_snap, got_snapshots, got_stats = by_conversation(produced)
    findings = []
    for ident, replies in sorted(ref_snapshots.items(), key=lambda item: str(item[0])):
        if len(replies) != 1 or not got_snapshots.get(ident):
            findings.append("snapshot {!r}: {} replies in the reference, {} from the cluster".format(
                ident, len(replies), len(got_snapshots.get(ident, []))))
            continue
        findings += order_findings(ident, replies[0], got_snapshots[ident])
    snapshot_keys = sorted(set(ref_snap) | set(got_snap), key=lambda key: (str(key[0]), key[1]))
    conversations = sorted(set(ref_ind) | set(got_ind) | {conv for _, conv in snapshot_keys})
    differing = 0
    for conv in conversations:
        a, b = ref_ind.get(conv, []), got_ind.get(conv, [])
        sa = [ref_snap.get(key, []) for key in snapshot_keys if key[1] == conv]
        sb = [got_snap.get(key, []) for key in snapshot_keys if key[1] == conv]
        if a == b and sa == sb:
            continue
        differing += 1
        if a != b:
            index = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            findings.append("conversation {!r}: event {} of {} (reference) / {} (cluster) differs:\n"
                            "  reference: {}\n  cluster:   {}".format(
                                conv, index + 1, len(a), len(b),
                                a[index].decode() if index < len(a) else "(none)",
                                b[index].decode() if index < len(b) else "(none)"))
        for key in snapshot_keys:
            if key[1] == conv and ref_snap.get(key, []) != got_snap.get(key, []):
                x, y = ref_snap.get(key, []), got_snap.get(key, [])
                index = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
                findings.append("conversation {!r}: snapshot {!r}: member/streak {} of {} (reference) / {} "
                                "(cluster) differs:\n  reference: {}\n  cluster:   {}".format(
                                    conv, key[0], index + 1, len(x), len(y),
                                    x[index] if index < len(x) else "(none)",
                                    y[index] if index < len(y) else "(none)"))
    live = ("conversations", "members", "typing")
    if len(ref_stats) != 1 or not got_stats:
        findings.append("final stats missing (reference {}, cluster {})".format(len(ref_stats), len(got_stats)))
    else:
        for key in live:
            total = sum(s[key] for s in got_stats)
            if total != ref_stats[0][key]:
                findings.append("final stats: {} summed over {} partitions is {}, one typingd says {}".format(
                    key, len(got_stats), total, ref_stats[0][key]))
    if mismatched_twice:
        findings.append("{} records applied twice gave different events".format(mismatched_twice))
    for finding in findings[:20]:
        print("  " + finding)
    events = sum(len(v) for v in ref_ind.values())
    announced = sum(1 for v in ref_ind.values() for line in v if b'"event":"announce"' in line)
    print("{}: {} conversations, {} indicator and {} announce events; {} conversations differ; {} records applied twice "
          "(identical: {}, not comparable: {}); {} events from a catch-up backlog; {} records cut short by a "
          "kill".format(args.label, len(conversations), events - announced, announced, differing, replayed_twice,
                        replayed_twice - mismatched_twice - uncompared, uncompared, backlog, cut_short))
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
