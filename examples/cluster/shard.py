#!/usr/bin/env python3
"""Run one partition of typingd on NATS JetStream: consume, apply, publish, acknowledge.

    shard.py --servers URLS --partition P [--typingd PATH] [--audit FILE]
             [--snapshot-every N] [-- TYPINGD OPTIONS ...]

The shard pipes its partition's commands (subject typingd.cmd.P of stream TYPINGD)
through its own typingd on the manual clock, publishes every event on the subject
a gateway subscribes to (common.event_subject), and acknowledges each message on
its durable consumer (shard-P) once that message's events are published.

Clock. Shards run typingd's manual clock, and time comes from the log: the
router stamps "at" on every command and sends ticks. So replaying a partition
gives exactly what the first run gave, and every partition agrees on the time.

Start, and takeover. A shard always starts by rebuilding: it loads the
partition's latest snapshot (object store typingd-snapshots), replays it as
commands (Protocol.md, "Snapshots": members, names, settings, views and typing),
then replays the stream from the message after the snapshot, writing nothing
for the messages the consumer had acknowledged (their events were published).
The messages after those (the backlog that arrived while no shard ran) are
applied too, but of their indicators only each viewer's last one is published,
once caught up: a viewer never sees typing that ended before this shard started.
Then it consumes the durable consumer, skipping what it already applied.

Retention. With --snapshot-every N, every N messages the shard asks its typingd
for a snapshot, stores it, and purges the partition's messages up to it. A
rebuild then costs the snapshot plus at most N messages.

Markers. After each message the shard writes
{"cmd":"query","conv":"typingd:marker","id":"typingd:seq:<seq>"}; its reply ends
that message's events. Ids starting with "typingd:" are reserved.

SIGTERM or SIGINT: stop fetching, finish what was written, exit 0. With
--lifetime S the shard (and its typingd) ends after S seconds whatever happens.
"""
import argparse
import asyncio
import collections
import json
import os
import signal
import sys
import time
import zlib

from nats.errors import TimeoutError as NatsTimeout
from nats.js import api
from nats.js.errors import NotFoundError, ObjectNotFoundError

from common import (COMMAND_SUBJECT, DEFAULT_SERVERS, MARKER_CONV, MARKER_PREFIX, SNAPSHOT_PREFIX, SNAPSHOTS, STREAM, connect,
                    event_subject)

PUBLISH, SUPPRESS, BACKLOG, SNAPSHOT = "publish", "suppress", "backlog", "snapshot"


class Entry:
    """Something written to typingd whose events are still to come."""
    __slots__ = ("seq", "msg", "mode", "items")

    def __init__(self, seq, msg, mode):
        self.seq, self.msg, self.mode, self.items = seq, msg, mode, []


def log(text):
    print("shard: " + text, file=sys.stderr, flush=True)


def rebuild_lines(events):
    """Commands that rebuild a typingd from snapshot events (Protocol.md, "Snapshots")."""
    lines, streaks = [], []
    for event in events:
        if event["event"] == "member":
            join = {"cmd": "join", "conv": event["conv"], "user": event["user"], "at": event["at"],
                    "send_typing": event["send_typing"]}
            if "name" in event:
                join["name"] = event["name"]
            lines.append(join)
            if event["open"]:
                lines.append({"cmd": "open", "conv": event["conv"], "user": event["user"], "at": event["at"]})
        elif event["event"] == "streak":
            streaks.append(event)
    for order in (streaks, sorted(streaks, key=lambda s: s["keystroke"])):
        for s in order:
            lines.append({"cmd": "type", "conv": s["conv"], "user": s["user"], "at": s["at"],
                          "timeout_ms": s["deadline"] - s["at"]})
    return [json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() for line in lines]


class Shard:
    def __init__(self, args, nc, js, proc):
        self.args, self.nc, self.js, self.proc = args, nc, js, proc
        self.p = args.partition
        self.subject = COMMAND_SUBJECT.format(self.p)
        self.durable = "shard-{}".format(self.p)
        self.pending = collections.deque()
        self.progress = asyncio.Event()
        self.written = 0          # the last stream sequence written to typingd
        self.since_snapshot = 0
        self.backlog = {}         # (conv, viewer) -> the last indicator line
        self.stopping = False
        self.audit = open(args.audit, "ab") if args.audit else None
        self.published = 0
        self.store = None

    # Writing to typingd.

    async def write(self, data, entry):
        self.pending.append(entry)
        self.proc.stdin.write(data)
        while len(self.pending) > self.args.window:
            self.progress.clear()
            await self.progress.wait()
        await self.proc.stdin.drain()

    async def apply(self, seq, payload, msg, mode):
        if not payload.endswith(b"\n"):
            payload += b"\n"
        marker = '{{"cmd":"query","conv":"{}","id":"{}{}"}}\n'.format(MARKER_CONV, MARKER_PREFIX, seq).encode()
        await self.write(payload + marker, Entry(seq, msg, mode))
        self.written = seq
        self.since_snapshot += 1
        if self.args.snapshot_every and self.since_snapshot >= self.args.snapshot_every and mode == PUBLISH:
            self.since_snapshot = 0
            command = '{{"cmd":"snapshot","id":"{}{}"}}\n'.format(SNAPSHOT_PREFIX, seq).encode()
            await self.write(command, Entry(seq, None, SNAPSHOT))

    # Reading typingd's output.

    async def read_output(self):
        events = []
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                return
            event = json.loads(line)
            kind = event["event"]
            head = self.pending[0] if self.pending else None
            if head is not None and head.mode == SNAPSHOT:
                if kind in ("member", "streak"):
                    head.items.append(event)
                    continue
                if kind == "snapshot" and event.get("id") == SNAPSHOT_PREFIX + str(head.seq):
                    self.pending.popleft()
                    self.progress.set()
                    await self.save_snapshot(head.seq, event["at"], head.items)
                    continue
            ident = event.get("id")
            if kind == "state" and isinstance(ident, str) and ident.startswith(MARKER_PREFIX):
                entry = self.pending.popleft()
                self.progress.set()
                await self.deliver(entry, events)
                events = []
                continue
            events.append((line, event))

    async def deliver(self, entry, events):
        if entry.mode != SUPPRESS:
            flag = b"P\t" if entry.mode == PUBLISH else b"B\t"
            prefix = str(entry.seq).encode() + b"\t" + flag
            if self.audit:
                # One write per message, ending with an E line: a shard killed
                # mid-message leaves no E, and the checker ignores that copy.
                self.audit.write(b"".join(prefix + line for line, _ in events)
                                 + str(entry.seq).encode() + b"\tE\t\n")
                # In the kernel before the ack: a shard killed after acknowledging
                # a message has its events in the audit file.
                self.audit.flush()
            reply = []   # member and streak events: published with the snapshot event after them
            for line, event in events:
                kind = event["event"]
                if entry.mode == BACKLOG and kind == "indicator":
                    self.backlog[(event["conv"], event["viewer"])] = line
                    continue
                if kind in ("member", "streak"):
                    reply.append(line)
                    continue
                subject = event_subject(event, self.p)
                for earlier in reply:
                    await self.nc.publish(subject, earlier.rstrip(b"\n"))
                reply = []
                await self.nc.publish(subject, line.rstrip(b"\n"))
                self.published += 1
        if entry.msg is not None:
            await entry.msg.ack()

    # Snapshots and retention.

    async def objects(self):
        if self.store is None:
            async def bind():
                try:
                    return await self.js.object_store(SNAPSHOTS)
                except NotFoundError:
                    return await self.js.create_object_store(SNAPSHOTS, config=api.ObjectStoreConfig(
                        bucket=SNAPSHOTS, replicas=self.args.replicas))
            self.store = await retry(bind)
        return self.store

    async def save_snapshot(self, seq, at, events):
        """Stores the snapshot taken after message `seq`, then purges the partition's
        messages up to it: a rebuild needs only the snapshot and what follows."""
        started = time.monotonic()
        body = json.dumps({"seq": seq, "at": at, "events": events}, ensure_ascii=False).encode()
        store = await self.objects()
        await retry(lambda: store.put("partition-{}".format(self.p), zlib.compress(body, 6)))
        await retry(lambda: self.js.purge_stream(STREAM, subject=self.subject, seq=seq + 1))
        log("partition {}: snapshot after seq {} ({} events, {} KiB compressed) stored, older messages purged, "
            "in {:.0f} ms".format(self.p, seq, len(events), len(zlib.compress(body, 6)) // 1024,
                                  (time.monotonic() - started) * 1000))

    async def load_snapshot(self):
        store = await self.objects()
        try:
            result = await retry(lambda: store.get("partition-{}".format(self.p)), missing=True)
        except (ObjectNotFoundError, NotFoundError):
            return None
        return json.loads(zlib.decompress(result.data))

    # Start: rebuild, catch up.

    async def rebuild(self):
        started = time.monotonic()
        snapshot = await self.load_snapshot()
        base = 0
        if snapshot is not None:
            base = snapshot["seq"]
            lines = rebuild_lines(snapshot["events"])
            await self.write(b"".join(line + b"\n" for line in lines), Entry(base, None, SUPPRESS))
            marker = '{{"cmd":"query","conv":"{}","id":"{}{}"}}\n'.format(MARKER_CONV, MARKER_PREFIX, base).encode()
            self.proc.stdin.write(marker)
            self.written = base
        config = api.ConsumerConfig(durable_name=self.durable, filter_subject=self.subject,
                                    ack_policy=api.AckPolicy.EXPLICIT, deliver_policy=api.DeliverPolicy.ALL,
                                    ack_wait=self.args.ack_wait, max_ack_pending=self.args.max_ack_pending)
        await retry(lambda: self.js.add_consumer(STREAM, config=config))
        info = await retry(lambda: self.js.consumer_info(STREAM, self.durable))
        acknowledged = info.ack_floor.stream_seq or 0
        try:
            last = (await retry(lambda: self.js.get_last_msg(STREAM, self.subject), missing=True)).seq
        except NotFoundError:
            last = 0
        replayed = 0
        if last > self.written:
            replay = await retry(lambda: self.js.pull_subscribe(
                self.subject, durable=None, stream=STREAM, config=api.ConsumerConfig(
                    deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=self.written + 1,
                    ack_policy=api.AckPolicy.NONE, inactive_threshold=30.0)))
            while self.written < last:
                try:
                    messages = await replay.fetch(batch=256, timeout=2)
                except (NatsTimeout, asyncio.TimeoutError):
                    continue
                for msg in messages:
                    seq = msg.metadata.sequence.stream
                    if seq <= self.written:
                        continue
                    await self.apply(seq, msg.data, None, SUPPRESS if seq <= acknowledged else BACKLOG)
                    replayed += 1
            await replay.unsubscribe()
        while self.pending:
            self.progress.clear()
            await self.progress.wait()
        for line in self.backlog.values():
            event = json.loads(line)
            await self.nc.publish(event_subject(event, self.p), line.rstrip(b"\n"))
        log("partition {}: caught up in {:.0f} ms: snapshot after seq {} ({} events), {} messages replayed "
            "({} acknowledged before), {} backlog indicators published; now at seq {}".format(
                self.p, (time.monotonic() - started) * 1000, base,
                len(snapshot["events"]) if snapshot else 0, replayed, acknowledged, len(self.backlog),
                self.written))
        self.backlog = {}

    # Steady state.

    async def consume(self):
        subscription = await retry(lambda: self.js.pull_subscribe_bind(self.durable, STREAM))
        failing_since = None
        while not self.stopping:
            try:
                messages = await subscription.fetch(batch=self.args.fetch, timeout=1)
            except (NatsTimeout, asyncio.TimeoutError):
                continue
            except Exception as error:   # a leader election, a reconnect: try again
                if failing_since is None:
                    failing_since = time.monotonic()
                    log("partition {}: fetch failed ({}); retrying".format(self.p, type(error).__name__))
                await asyncio.sleep(0.2)
                continue
            if failing_since is not None:
                log("partition {}: fetching again after {:.2f} s".format(self.p, time.monotonic() - failing_since))
                failing_since = None
            for msg in messages:
                seq = msg.metadata.sequence.stream
                if seq <= self.written:
                    # Delivered again (a delivery lost in a failover, or slow to be
                    # acknowledged). Already applied: acknowledge it, unless its
                    # events are still on their way (then their own ack will do).
                    if not any(entry.seq == seq for entry in self.pending):
                        await msg.ack()
                    continue
                await self.apply(seq, msg.data, msg, PUBLISH)

    async def finish(self):
        while self.pending and self.proc.returncode is None:
            self.progress.clear()
            try:
                await asyncio.wait_for(self.progress.wait(), 5)
            except asyncio.TimeoutError:
                break
        if self.audit:
            self.audit.flush()


async def retry(call, missing=False, seconds=30.0):
    """Calls a JetStream API until it answers (a leader election takes seconds)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return await call()
        except (NotFoundError, ObjectNotFoundError):
            if missing:
                raise
            if time.monotonic() > deadline:
                raise
        except Exception:
            if time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.2)


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", default=DEFAULT_SERVERS, help="comma-separated NATS URLs (default: cluster.sh's nodes)")
    parser.add_argument("--partition", type=int, required=True)
    parser.add_argument("--typingd", default=os.environ.get("TYPINGD_BINARY", "typingd"))
    parser.add_argument("--audit", help="append every event produced, as SEQ<TAB>P|B<TAB>EVENT, and SEQ<TAB>E "
                                        "at the end of each message's events, to this file")
    parser.add_argument("--snapshot-every", type=int, default=0, help="messages between snapshots (0: never)")
    parser.add_argument("--replicas", type=int, default=3, help="replicas of the snapshot store")
    parser.add_argument("--ack-wait", type=float, default=5.0,
                        help="seconds before JetStream delivers an unacknowledged message again: after a "
                             "failover, a delivery that was lost comes again this much later")
    parser.add_argument("--max-ack-pending", type=int, default=1000)
    parser.add_argument("--fetch", type=int, default=64, help="messages per fetch")
    parser.add_argument("--window", type=int, default=256, help="messages written ahead of the events read")
    parser.add_argument("--lifetime", type=float, default=0,
                        help="exit (status 124) after this many seconds, whatever happens (0: never)")
    parser.add_argument("options", nargs="*", help="typingd options (after --)")
    args = parser.parse_args()

    # Its own session: a Ctrl-C for the shard must not end typingd before the
    # shard has finished what it wrote. Lines up to 256 MiB: a state reply lists
    # every member of a room.
    proc = await asyncio.create_subprocess_exec(args.typingd, "--clock", "manual", "--no-drain", *args.options,
                                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                limit=1 << 28, start_new_session=True)
    nc = await connect(args.servers, "shard {}".format(args.partition))
    shard = Shard(args, nc, nc.jetstream(), proc)
    loop = asyncio.get_running_loop()
    if args.lifetime > 0:
        loop.call_later(args.lifetime, lambda: (proc.kill(), os._exit(124)))
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, lambda: setattr(shard, "stopping", True))
    reader = asyncio.create_task(shard.read_output())

    def reader_ended(task):
        # Without its reader the shard would wait for events forever: end it, so
        # that a supervisor starts a replacement (which rebuilds).
        if shard.stopping and not task.cancelled() and task.exception() is None:
            return   # the shard is ending: typingd's output ends with it
        problem = "typingd's output ended" if task.cancelled() or task.exception() is None else \
            "reading typingd's output failed: {!r}".format(task.exception())
        log("partition {}: {}; exiting".format(args.partition, problem))
        if shard.audit:
            shard.audit.flush()
        proc.kill() if proc.returncode is None else None
        os._exit(1)

    reader.add_done_callback(reader_ended)
    log("partition {}: typingd pid {}, starting".format(args.partition, proc.pid))
    await shard.rebuild()
    await shard.consume()
    await shard.finish()
    shard.stopping = True
    proc.stdin.close()
    await proc.wait()
    await reader
    try:
        await nc.drain()
    except Exception as error:   # the cluster went first: nothing left to send
        log("partition {}: could not drain the connection ({})".format(args.partition, type(error).__name__))
    log("partition {}: stopped at seq {}, {} events published".format(args.partition, shard.written,
                                                                      shard.published))


if __name__ == "__main__":
    asyncio.run(main())
