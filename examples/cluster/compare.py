#!/usr/bin/env python3
"""Compare what the shards produced with what one typingd produced, conversation by conversation.

    compare.py REFERENCE AUDIT... [--label TEXT]

REFERENCE is one typingd's output for the whole workload. Each AUDIT file is a
shard's (shard.py --audit: SEQ<TAB>P|B<TAB>EVENT, then SEQ<TAB>E once a message's
events are all written), given in the order the shards started; a partition's
files are merged by sequence number, ignoring a message without its E line (the
shard was killed while writing it): a message applied by two shards (a takeover
redelivers what the dead one had not acknowledged) must have given the same
events both times, and the first complete copy counts.

Per conversation, the indicator events (every field, in order) must be equal, and
so must the final snapshot's member and streak events. The final stats' live
counters (conversations, members, typing) summed over the partitions must equal
the reference's. Prints one line per finding and a summary; exits 0 when
nothing differs.
"""
import argparse
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


def by_conversation(lines):
    """(indicators by conv, snapshot events by conv, final stats)."""
    indicators = collections.defaultdict(list)
    snapshot = collections.defaultdict(list)
    stats = []
    for line in lines:
        event = json.loads(line)
        kind = event["event"]
        if kind == "indicator":
            indicators[event["conv"]].append(line)
        elif kind in ("member", "streak"):
            snapshot[event["conv"]].append(line)
        elif kind == "stats" and event.get("id") == "final-stats":
            stats.append(event)
    return indicators, snapshot, stats


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference")
    parser.add_argument("audits", nargs="+")
    parser.add_argument("--label", default="cluster")
    args = parser.parse_args()

    with open(args.reference, "rb") as file:
        reference = [line.rstrip(b"\n") for line in file if line.strip()]

    merged = {}            # stream sequence -> lines (sequences are unique across partitions)
    backlog = 0
    cut_short = 0
    replayed_twice = mismatched_twice = 0
    for path in args.audits:
        mine = collections.defaultdict(list)
        complete = set()
        with open(path, "rb") as file:
            for raw in file:
                seq, flag, line = raw.rstrip(b"\n").split(b"\t", 2)
                if flag == b"E":
                    complete.add(int(seq))
                    continue
                mine[int(seq)].append(line)
                backlog += flag == b"B"
        for seq in complete:
            mine.setdefault(seq, [])
        for seq in [seq for seq in mine if seq not in complete]:
            cut_short += 1          # the shard died while writing this message's events
            del mine[seq]
        for seq, lines in mine.items():
            if seq in merged:
                replayed_twice += 1
                if unnumbered(merged[seq]) != unnumbered(lines):
                    mismatched_twice += 1
            else:
                merged[seq] = lines
    produced = [line for seq in sorted(merged) for line in merged[seq]]

    ref_ind, ref_snap, ref_stats = by_conversation(reference)
    got_ind, got_snap, got_stats = by_conversation(produced)
    findings = []
    conversations = sorted(set(ref_ind) | set(got_ind) | set(ref_snap) | set(got_snap))
    differing = 0
    for conv in conversations:
        a, b = ref_ind.get(conv, []), got_ind.get(conv, [])
        sa, sb = ref_snap.get(conv, []), got_snap.get(conv, [])
        if a == b and sa == sb:
            continue
        differing += 1
        if a != b:
            index = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            findings.append("conversation {!r}: indicator {} of {} (reference) / {} (cluster) differs:\n"
                            "  reference: {}\n  cluster:   {}".format(
                                conv, index + 1, len(a), len(b),
                                a[index].decode() if index < len(a) else "(none)",
                                b[index].decode() if index < len(b) else "(none)"))
        if sa != sb:
            findings.append("conversation {!r}: final members/streaks differ: reference {} events, cluster {}"
                            .format(conv, len(sa), len(sb)))
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
        findings.append("{} messages applied twice gave different events".format(mismatched_twice))
    for finding in findings[:20]:
        print("  " + finding)
    events = sum(len(v) for v in ref_ind.values())
    print("{}: {} conversations, {} indicator events; {} conversations differ; {} messages applied twice "
          "(identical: {}); {} events from a catch-up backlog; {} messages cut short by a kill".format(
              args.label, len(conversations), events, differing, replayed_twice,
              replayed_twice - mismatched_twice, backlog, cut_short))
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
