#!/usr/bin/env python3
"""Small operations on the typingd stream, for check.sh and for people.

    ctl.py --servers URLS ready [--timeout S]      wait until JetStream answers
    ctl.py --servers URLS setup [--replicas N] [--storage file|memory] [--lease-ttl S]
                                                   (re)create stream TYPINGD, the snapshot store
                                                   and the lease bucket, empty: it deletes what
                                                   they held
    ctl.py --servers URLS leader [--consumer P]    print the stream leader (n1, n2, n3), or the
                                                   node of partition P's consumer
    ctl.py --servers URLS idle --partitions N [--timeout S]
                                                   wait until every partition's consumer has
                                                   nothing pending and its owner has applied
                                                   the last message stored for it
    ctl.py --servers URLS info --partitions N      what the stream holds, where each shard is
    ctl.py --servers URLS stats [--partitions N] [--prometheus]
                                                   every shard's stats (owners and standbys)
"""
import argparse
import asyncio
import json
import sys
import time

from nats.js import api
from nats.errors import NoRespondersError, TimeoutError as NatsTimeout
from nats.js.errors import NotFoundError, ServiceUnavailableError

from common import (COMMAND_SUBJECT, SERVERS_HELP, SNAPSHOTS, STREAM, conf_option, connect, default_servers, owners,
                    resolve)

LEASES = "typingd-leases"   # shard.py's lease bucket


async def ready(js, args):
    deadline = args.deadline
    while True:
        try:
            await js.account_info()
            # A stream needs a meta leader: try a harmless stream lookup.
            try:
                await js.stream_info(STREAM)
            except NotFoundError:
                pass
            return
        except Exception as error:
            if time.monotonic() > deadline:
                sys.exit("ctl: JetStream not ready after {} s ({})".format(args.timeout, error))
            await asyncio.sleep(0.2)


async def setup(js, args):
    await ready(js, args)
    deadline = args.deadline   # one --timeout for the whole setup

    async def step(what, call, gone=()):
        """One call, again while the cluster does not answer (a node just started,
        a leader being elected) until --timeout. `gone`: an error that means it is
        done (a delete of what is not there). A create is the same request again
        (JetStream answers a create of what exists with the same configuration as
        a success), so a create whose reply was lost needs nothing more."""
        while True:
            try:
                return await asyncio.wait_for(call(), max(0.2, deadline - time.monotonic()))
            except gone:
                return None
            except (NatsTimeout, NoRespondersError, ServiceUnavailableError, asyncio.TimeoutError) as error:
                if time.monotonic() > deadline:
                    sys.exit("ctl: setup: {}: no answer within {} s ({})".format(
                        what, args.timeout, type(error).__name__))
                await asyncio.sleep(0.3)

    await step("deleting stream " + STREAM, lambda: js.delete_stream(STREAM), NotFoundError)
    await step("deleting object store " + SNAPSHOTS, lambda: js.delete_object_store(SNAPSHOTS), NotFoundError)
    await step("deleting bucket " + LEASES, lambda: js.delete_key_value(LEASES), NotFoundError)
    storage = api.StorageType.MEMORY if args.storage == "memory" else api.StorageType.FILE
    await step("making stream " + STREAM, lambda: js.add_stream(api.StreamConfig(
        name=STREAM, subjects=[COMMAND_SUBJECT.format("*")], storage=storage,
        num_replicas=args.replicas, duplicate_window=120.0, retention=api.RetentionPolicy.LIMITS)))
    # Snapshots stay on disk whatever the stream's storage: they are the state a
    # rebuild starts from once the stream behind them is purged.
    await step("making object store " + SNAPSHOTS, lambda: js.create_object_store(
        SNAPSHOTS, config=api.ObjectStoreConfig(bucket=SNAPSHOTS, replicas=args.replicas)))
    await step("making bucket " + LEASES, lambda: js.create_key_value(api.KeyValueConfig(
        bucket=LEASES, history=1, ttl=args.lease_ttl, replicas=args.replicas)))
    # All have a leader before anyone uses them.
    while True:
        try:
            await js.stream_info(STREAM)
            await js.stream_info("OBJ_" + SNAPSHOTS)
            await js.stream_info("KV_" + LEASES)
            print("ctl: made stream {} ({} storage), object store {} and lease bucket {} (TTL {} s), "
                  "{} replicas each".format(STREAM, args.storage, SNAPSHOTS, LEASES, args.lease_ttl, args.replicas))
            return
        except Exception as error:
            if time.monotonic() > deadline:
                sys.exit("ctl: setup: made, but without a leader after {} s ({})".format(args.timeout, error))
            await asyncio.sleep(0.2)


async def leader(js, args):
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            if args.consumer is None:
                info = await js.stream_info(STREAM)
            else:
                info = await js.consumer_info(STREAM, "shard-{}".format(args.consumer))
            if info.cluster and info.cluster.leader:
                print(info.cluster.leader)
                return
        except Exception:
            pass
        if time.monotonic() > deadline:
            sys.exit("ctl: no leader for " + ("the stream" if args.consumer is None else
                                              "partition {}'s consumer".format(args.consumer)))
        await asyncio.sleep(0.2)


async def idle(js, args):
    """Idle: every partition's consumer has nothing pending nor unacknowledged, and
    its owner has applied (and published) the partition's last message as it stood
    at the previous look (a tick of the owner's own may be on its way at any one
    look), three looks in a row. The consumer alone is not enough: one whose node
    came back reads that node's copy of the stream, still catching up, and says 0
    pending."""
    deadline = time.monotonic() + args.timeout
    quiet = 0
    stored = {}   # partition -> its last message at the previous look (the owner's word)
    while True:
        busy = []
        for p in range(args.partitions):
            try:
                info = await js.consumer_info(STREAM, "shard-{}".format(p))
                if info.num_pending or info.num_ack_pending:
                    busy.append(p)
            except Exception:
                busy.append(p)
        rows = await owners(js._nc, args.partitions)
        late = [p for p in range(args.partitions)
                if p not in rows or not isinstance(rows[p].get("applied_seq"), int)
                or not isinstance(stored.get(p), int) or rows[p]["applied_seq"] < stored[p]]
        stored = {p: row.get("stream_last_seq") for p, row in rows.items()}
        quiet = quiet + 1 if not busy and not late else 0
        if quiet >= 3:
            print("ctl: idle: {}".format("; ".join("partition {}: applied through seq {}".format(
                p, rows[p]["applied_seq"]) for p in sorted(rows))))
            return
        if time.monotonic() > deadline:
            sys.exit("ctl: partitions {} still busy after {} s{}".format(sorted(set(busy + late)), args.timeout,
                     "".join("; partition {}: {}".format(p, "no owner answered" if p not in rows else
                                                         "applied {} of {}".format(rows[p].get("applied_seq"),
                                                                                   rows[p].get("stream_last_seq")))
                             for p in late)))
        await asyncio.sleep(0.3)


async def info(js, args):
    state = (await js.stream_info(STREAM)).state
    print("stream {}: {} messages stored (first seq {}, last seq {}); {} messages published in all".format(
        STREAM, state.messages, state.first_seq, state.last_seq, state.last_seq))
    for p in range(args.partitions):
        consumer = await js.consumer_info(STREAM, "shard-{}".format(p))
        print("partition {}: acknowledged up to seq {}, {} pending".format(
            p, consumer.ack_floor.stream_seq, consumer.num_pending + consumer.num_ack_pending))


def merge_prometheus(answers):
    """The shards' answers as one exposition: each metric's # TYPE line once, then
    every shard's sample of it (the format wants a family's lines together)."""
    families = {}   # metric name -> [TYPE line, samples...], in the order first seen
    for answer in answers:
        for line in answer.decode("utf-8", "replace").splitlines():
            if line.startswith("# TYPE "):
                name = line.split()[2]
                families.setdefault(name, [line])
            elif line and not line.startswith("#"):
                name = line.split("{", 1)[0].split(" ", 1)[0]
                families.setdefault(name, []).append(line)
    return "".join(line + "\n" for lines in families.values() for line in lines)


async def stats(js, args):
    """Asks every shard (typingd.stats, owners and standbys) and prints each answer,
    waiting up to a second for them."""
    nc = js._nc
    inbox = nc.new_inbox()
    answers = []

    async def answer(msg):
        if msg.data:   # not the server's empty "no responders" status
            answers.append(msg.data)
    sub = await nc.subscribe(inbox, cb=answer)
    await nc.publish("typingd.stats", b"prometheus" if args.prometheus else b"", reply=inbox)
    await asyncio.sleep(1.0)
    await sub.unsubscribe()
    if not answers:
        sys.exit("ctl: no shard answered typingd.stats (is any shard.py running on {}?)".format(args.servers))
    if args.prometheus:
        sys.stdout.write(merge_prometheus(answers))
        return
    rows = []
    for body in answers:
        try:
            row = json.loads(body)
            p = row["partition"]
            if type(p) is not int:   # not a bool, a float or a string
                raise TypeError(p)
            rows.append((p, row.get("role") != "owner", row))
        except (ValueError, KeyError, TypeError):
            print("ctl: an answer that is not a shard's stats: {!r}".format(body[:200]), file=sys.stderr)
    rows.sort(key=lambda r: r[:2])
    for _, _, row in rows:
        print(json.dumps(row, sort_keys=True))
    owners = {p for p, standby, _ in rows if not standby}
    missing = [p for p in range(args.partitions) if p not in owners]
    if missing:
        sys.exit("ctl: no owner answered for partitions {}".format(missing))


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", help=SERVERS_HELP)
    parser.add_argument("action", choices=["ready", "setup", "leader", "idle", "info", "stats"])
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds to wait for the cluster, a leader, or idle partitions (default: %(default)s)")
    conf_option(parser, "--replicas", "REPLICAS", "replicas of the stream, snapshots and leases")
    conf_option(parser, "--storage", "STORAGE", "the stream's storage, file or memory (snapshots and leases stay on file)")
    conf_option(parser, "--lease-ttl", "LEASE_TTL", "the lease bucket's TTL, seconds")
    parser.add_argument("--prometheus", action="store_true", help="stats as Prometheus text")
    conf_option(parser, "--partitions", "PARTITIONS", "partitions")
    parser.add_argument("--consumer", type=int, metavar="P", help="leader: of partition P's consumer (shard-P)")
    args = parser.parse_args()
    if args.timeout <= 0:
        parser.error("--timeout must be above 0")
    # Only the settings this action uses: a bad one that it does not use is no reason to stop.
    resolve(parser, args, only={"setup": ("replicas", "storage", "lease_ttl"), "idle": ("partitions",),
                                "info": ("partitions",), "stats": ("partitions",)}.get(args.action, ()))
    args.servers = args.servers or default_servers()
    args.deadline = time.monotonic() + args.timeout
    try:
        nc = await connect(args.servers, "ctl", timeout=args.timeout)
    except asyncio.TimeoutError:
        sys.exit("ctl: no NATS server answered at {} within {} s".format(args.servers, args.timeout))
    try:
        await {"ready": ready, "setup": setup, "leader": leader, "idle": idle, "info": info, "stats": stats}[args.action](
            nc.jetstream(), args)
    except Exception as error:   # one line, not a traceback
        sys.exit("ctl: {} failed: {}: {}".format(args.action, type(error).__name__, error))
    finally:
        await nc.close()


if __name__ == "__main__":
    asyncio.run(main())
