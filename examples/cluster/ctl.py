#!/usr/bin/env python3
"""Small operations on the typingd stream, for check.sh and for people.

    ctl.py --servers URLS ready [--timeout S]      wait until JetStream answers
    ctl.py --servers URLS setup [--replicas N]     (re)create stream TYPINGD and the snapshot
                                                   store, empty: it deletes what they held
    ctl.py --servers URLS leader                   print the stream leader (n1, n2, n3)
    ctl.py --servers URLS idle --partitions N [--timeout S]
                                                   wait until every shard has acknowledged everything
    ctl.py --servers URLS info --partitions N      what the stream holds, where each shard is
"""
import argparse
import asyncio
import sys
import time

from nats.js import api
from nats.js.errors import NotFoundError

from common import COMMAND_SUBJECT, DEFAULT_SERVERS, SNAPSHOTS, STREAM, connect


async def ready(js, args):
    deadline = time.monotonic() + args.timeout
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
    for delete in (lambda: js.delete_stream(STREAM), lambda: js.delete_object_store(SNAPSHOTS)):
        try:
            await delete()
        except NotFoundError:
            pass
    await js.add_stream(api.StreamConfig(
        name=STREAM, subjects=[COMMAND_SUBJECT.format("*")], storage=api.StorageType.FILE,
        num_replicas=args.replicas, duplicate_window=120.0, retention=api.RetentionPolicy.LIMITS))
    await js.create_object_store(SNAPSHOTS, config=api.ObjectStoreConfig(bucket=SNAPSHOTS, replicas=args.replicas))
    # Both have a leader before anyone uses them.
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            await js.stream_info(STREAM)
            await js.stream_info("OBJ_" + SNAPSHOTS)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def leader(js, args):
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            info = await js.stream_info(STREAM)
            if info.cluster and info.cluster.leader:
                print(info.cluster.leader)
                return
        except Exception:
            pass
        if time.monotonic() > deadline:
            sys.exit("ctl: no stream leader")
        await asyncio.sleep(0.2)


async def idle(js, args):
    deadline = time.monotonic() + args.timeout
    quiet = 0
    while True:
        busy = []
        for p in range(args.partitions):
            try:
                info = await js.consumer_info(STREAM, "shard-{}".format(p))
                if info.num_pending or info.num_ack_pending:
                    busy.append(p)
            except Exception:
                busy.append(p)
        quiet = quiet + 1 if not busy else 0
        if quiet >= 3:
            return
        if time.monotonic() > deadline:
            sys.exit("ctl: partitions {} still busy after {} s".format(busy, args.timeout))
        await asyncio.sleep(0.3)


async def info(js, args):
    state = (await js.stream_info(STREAM)).state
    print("stream {}: {} messages stored (first seq {}, last seq {}); {} messages published in all".format(
        STREAM, state.messages, state.first_seq, state.last_seq, state.last_seq))
    for p in range(args.partitions):
        consumer = await js.consumer_info(STREAM, "shard-{}".format(p))
        print("partition {}: acknowledged up to seq {}, {} pending".format(
            p, consumer.ack_floor.stream_seq, consumer.num_pending + consumer.num_ack_pending))


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", default=DEFAULT_SERVERS,
                        help="comma-separated NATS URLs (default: cluster.sh's nodes)")
    parser.add_argument("action", choices=["ready", "setup", "leader", "idle", "info"])
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args()
    try:
        nc = await connect(args.servers, "ctl", timeout=args.timeout)
    except asyncio.TimeoutError:
        sys.exit("ctl: no NATS server answered at {} within {} s".format(args.servers, args.timeout))
    try:
        await {"ready": ready, "setup": setup, "leader": leader, "idle": idle, "info": info}[args.action](
            nc.jetstream(), args)
    finally:
        await nc.close()


if __name__ == "__main__":
    asyncio.run(main())
