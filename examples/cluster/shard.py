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
commands (Protocol.md, "Snapshots": members, names, locales, settings, screens
and typing), then replays the stream from the message after the snapshot. Those
messages are the backlog: the ones that arrived while no shard ran, and those
the previous shard may or may not have published (a shard stores a snapshot
only after publishing its message, and nothing later is proof: see rebuild).
Their replies and errors are published again; of their indicators, only each
viewer's last one, once caught up, and only while the viewer is still on the
screen it was for: a viewer never sees typing that ended before this shard
started. (Without any snapshot, the messages the consumer had acknowledged
write nothing.) Then the shard makes its durable consumer anew, starting right
after the last message it applied, and consumes it.

Retention. With --snapshot-every N, every N messages the shard asks its typingd
for a snapshot, stores it, and purges the partition's messages up to it. A
rebuild then costs the snapshot plus at most N messages.

Markers. After each message the shard writes
{"cmd":"query","conv":"typingd:marker","id":"typingd:seq:<seq>"}; its reply ends
that message's events (in the backlog, the same with id "typingd:line" after
each line). Ids starting with "typingd:" are reserved.

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

from common import (COMMAND_SUBJECT, DEFAULT_SERVERS, LINE_MARKER, MARKER_CONV, MARKER_PREFIX, SNAPSHOT_PREFIX, SNAPSHOTS,
                    STREAM, connect, event_subject)

PUBLISH, SUPPRESS, BACKLOG, SNAPSHOT = "publish", "suppress", "backlog", "snapshot"
FORGET_THREAD = "typingd:forget"   # the thread a rebuild opens to make a member's screen forgotten again
MAIN_CHAT = (None, "chat")          # a screen: (thread, view); a closed view counts as the main chat
LINE_END = None                     # in a message's events: where one line's events end (catching up)


class Entry:
    """Something written to typingd whose events are still to come."""
    __slots__ = ("seq", "msg", "mode", "items", "commands")

    def __init__(self, seq, msg, mode, commands=None):
        self.seq, self.msg, self.mode, self.items, self.commands = seq, msg, mode, [], commands


def parse_command(line):
    try:
        command = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return command if isinstance(command, dict) else None


def audience_open(options):
    """Whether typingd's options say --audience open (a closed view receives nothing)."""
    value = None
    for index, option in enumerate(options):
        if option == "--audience" and index + 1 < len(options):
            value = options[index + 1]
        elif option.startswith("--audience="):
            value = option.split("=", 1)[1]
    return value == "open"


def screen_of(indicator):
    """The screen an indicator is for: its thread (None: the main timeline) and view."""
    return indicator.get("thread"), indicator.get("view", "chat")


def log(text):
    print("shard: " + text, file=sys.stderr, flush=True)


def rebuild_lines(events):
    """Commands that rebuild a typingd from snapshot events (Protocol.md, "Snapshots";
    the same recipe as rebuild(from:into:) in Tests/TypingCoreTests/EngineSnapshotTests.swift),
    all at the snapshot's `at`:

    1. members in the order of `joined` when the snapshot gives it, else as listed:
       a `join` with the user's name, locale and settings, then an `open` (with its
       thread and view) when the view is open;
    2. streaks in the order of `started` when given, else as listed: a `type` with
       its thread, activity and the time left to its deadline; then the same again
       in the order of `keystroke`;
    3. members whose screen an offline or close changed without a render
       (`forgotten`): each opens a thread and then, after all have, closes it, so
       that the next render compares them from the empty indicator again."""
    members = [event for event in events if event["event"] == "member"]
    streaks = [event for event in events if event["event"] == "streak"]
    if any("joined" in m for m in members):
        members.sort(key=lambda m: m.get("joined", 0))
    if any("started" in s for s in streaks):
        streaks.sort(key=lambda s: s.get("started", 0))
    lines, forgotten = [], []
    for m in members:
        join = {"cmd": "join", "conv": m["conv"], "user": m["user"], "at": m["at"]}
        for key in ("name", "locale"):
            if key in m:
                join[key] = m[key]
        join["send_typing"] = m["send_typing"]
        join["receive_typing"] = m.get("receive_typing", True)
        lines.append(join)
        if m["open"]:
            view = {"cmd": "open", "conv": m["conv"], "user": m["user"], "at": m["at"]}
            for key in ("thread", "view"):
                if key in m:
                    view[key] = m[key]
            lines.append(view)
        if m.get("forgotten"):
            forgotten.append(m)
    for order in (streaks, sorted(streaks, key=lambda s: s["keystroke"])):
        for s in order:
            keystroke = {"cmd": "type", "conv": s["conv"], "user": s["user"], "at": s["at"]}
            for key in ("thread", "activity"):
                if key in s:
                    keystroke[key] = s[key]
            keystroke["timeout_ms"] = s["deadline"] - s["at"]
            lines.append(keystroke)
    for m in forgotten:
        lines.append({"cmd": "open", "conv": m["conv"], "user": m["user"], "thread": FORGET_THREAD, "at": m["at"]})
    for m in forgotten:
        lines.append({"cmd": "close", "conv": m["conv"], "user": m["user"], "at": m["at"]})
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
        self.gaps_filled = 0      # messages taken from the stream because their delivery was lost
        self.since_snapshot = 0
        self.backlog = {}         # (conv, viewer) -> (the last indicator line, its event) while catching up
        self.audience_open = audience_open(args.options)
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
        commands = None
        if mode == BACKLOG:
            # Each line's events marked off, so that the indicators kept for the end
            # of the catch-up can follow the screen changes between them.
            lines = payload[:-1].split(b"\n")
            commands = [parse_command(line) for line in lines]
            line_marker = '{{"cmd":"query","conv":"{}","id":"{}"}}\n'.format(MARKER_CONV, LINE_MARKER).encode()
            payload = b"".join(line + b"\n" + line_marker for line in lines)
        await self.write(payload + marker, Entry(seq, msg, mode, commands))
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
            if kind == "state" and ident == LINE_MARKER:
                events.append(LINE_END)
                continue
            events.append((line, event))

    async def deliver(self, entry, events):
        if entry.mode != SUPPRESS:
            flag = b"P\t" if entry.mode == PUBLISH else b"B\t"
            prefix = str(entry.seq).encode() + b"\t" + flag
            if self.audit:
                # One write per message, ending with an E line: a shard killed
                # mid-message leaves no E, and the checker ignores that copy.
                self.audit.write(b"".join(prefix + item[0] for item in events if item is not LINE_END)
                                 + str(entry.seq).encode() + b"\tE\t\n")
                # In the kernel before the ack: a shard killed after acknowledging
                # a message has its events in the audit file.
                self.audit.flush()
            if entry.mode == BACKLOG:
                await self.deliver_backlog(entry.commands, events)
            else:
                await self.publish_all(events)
        if entry.msg is not None:
            await entry.msg.ack()

    async def publish_all(self, events, keep_indicators=False):
        reply = []   # member and streak events: published with the snapshot event after them
        for line, event in events:
            kind = event["event"]
            if keep_indicators and kind == "indicator":
                self.backlog[(event["conv"], event["viewer"])] = (line, event)
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

    async def deliver_backlog(self, commands, events):
        """A backlog message: its replies and errors are published now; of its
        indicators, each viewer's last is kept for the end of the catch-up, unless
        the viewer's screen changes after it without an event (v3: a thread or the
        chat list opened or closed, offline, receive_typing turned off, leaving):
        their client shows the new screen empty, and the kept indicator would be
        typing that may have ended since."""
        groups, current = [], []
        for item in events:
            if item is LINE_END:
                groups.append(current)
                current = []
            else:
                current.append(item)
        for index, group in enumerate(groups):
            command = commands[index] if index < len(commands) else None
            applied = command is not None and not any(event["event"] == "error" for _, event in group)
            if applied:
                self.screen_changes(command, before=True)
            await self.publish_all(group, keep_indicators=True)
            if applied:
                self.screen_changes(command, before=False)
        if current:   # nothing comes after the last line's marker, but keep whatever did
            await self.publish_all(current, keep_indicators=True)

    def screen_changes(self, command, before):
        """Forgets a kept indicator whose viewer is no longer on its screen: before a
        command's own events for the commands that change a screen and then render
        (join, open, close, leave, remove), after them for those that render first
        (offline, a `user` or `join` turning receive_typing off)."""
        cmd, conv, user = command.get("cmd"), command.get("conv"), command.get("user")
        if before:
            if cmd in ("leave", "remove"):
                self.backlog.pop((conv, user), None)
            elif cmd == "open":
                self.moved((conv, user), (command.get("thread"), command.get("view", "chat")))
            elif cmd == "close":
                if self.audience_open:
                    self.backlog.pop((conv, user), None)   # a closed view receives nothing
                else:
                    self.moved((conv, user), MAIN_CHAT)
            elif cmd == "join":
                self.moved((conv, user), MAIN_CHAT)
            return
        if cmd == "offline" or (cmd in ("user", "join") and command.get("receive_typing") is False):
            for key in [key for key in self.backlog if key[1] == user]:
                if cmd == "offline" and not self.audience_open:
                    self.moved(key, MAIN_CHAT)
                else:
                    del self.backlog[key]

    def moved(self, key, screen):
        kept = self.backlog.get(key)
        if kept is not None and screen_of(kept[1]) != screen:
            del self.backlog[key]

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
        # How far the events are known to be published. The snapshot's message is:
        # a shard stores a snapshot only after publishing that message's events.
        # JetStream's acknowledgement floor is not proof once a snapshot has purged
        # the stream: nats-server before 2.9.15 drops every pending delivery on a
        # purge, and the next acknowledgement of a dropped one moves the floor to
        # the last message delivered, past messages the shard had not published yet.
        # Without a snapshot nothing was purged, and the floor is the shard's acks.
        published = base if snapshot is not None else await self.acknowledged()
        try:
            last = (await retry(lambda: self.js.get_last_msg(STREAM, self.subject), missing=True)).seq
        except NotFoundError:
            last = 0
        replayed = quiet = 0
        if last > self.written:
            replayed, quiet = await self.replay(last, published)
        while self.pending:
            self.progress.clear()
            await self.progress.wait()
        for line, event in self.backlog.values():
            await self.nc.publish(event_subject(event, self.p), line.rstrip(b"\n"))
        await self.start_consumer()
        log("partition {}: caught up in {:.0f} ms: snapshot after seq {} ({} events), {} messages replayed "
            "({} published before: no output), {} backlog indicators published; now at seq {}".format(
                self.p, (time.monotonic() - started) * 1000, base,
                len(snapshot["events"]) if snapshot else 0, replayed, quiet, len(self.backlog),
                self.written))
        self.backlog = {}

    async def acknowledged(self):
        try:
            info = await retry(lambda: self.js.consumer_info(STREAM, self.durable), missing=True)
        except NotFoundError:
            return 0
        return info.ack_floor.stream_seq or 0

    async def replay(self, last, published):
        """Applies the partition's messages after self.written, up to `last`, from an
        ephemeral consumer (made again from where it stopped if it goes quiet: its
        node may have died). Those up to `published` write nothing; the others are
        the backlog. Returns (messages applied, of them without output)."""
        replayed = quiet = 0
        while self.written < last:
            start = self.written + 1
            replay = await retry(lambda: self.js.pull_subscribe(
                self.subject, durable=None, stream=STREAM, config=api.ConsumerConfig(
                    deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=start,
                    ack_policy=api.AckPolicy.NONE, inactive_threshold=30.0)))
            idle = 0
            while self.written < last and idle < 5:
                try:
                    messages = await replay.fetch(batch=256, timeout=2)
                except (NatsTimeout, asyncio.TimeoutError):
                    idle += 1
                    continue
                except Exception:   # a reconnect, a leader election
                    idle += 1
                    await asyncio.sleep(0.2)
                    continue
                idle = 0
                for msg in messages:
                    seq = msg.metadata.sequence.stream
                    if seq <= self.written:
                        continue
                    await self.apply(seq, msg.data, None, SUPPRESS if seq <= published else BACKLOG)
                    replayed += 1
                    quiet += seq <= published
            try:
                await replay.unsubscribe()
            except Exception:
                pass
            if self.written < last:
                log("partition {}: replay quiet at seq {}; starting it again".format(self.p, self.written))
        return replayed, quiet

    async def start_consumer(self):
        """Makes the durable consumer start right after the last message applied.
        Made anew, it holds nothing for an earlier shard: no redelivery of what that
        one had fetched (replayed above), no pull request of a dead connection
        taking a message the replay did not see. Only this shard may use it."""
        try:
            await retry(lambda: self.js.delete_consumer(STREAM, self.durable), missing=True)
        except NotFoundError:
            pass
        config = api.ConsumerConfig(durable_name=self.durable, filter_subject=self.subject,
                                    ack_policy=api.AckPolicy.EXPLICIT,
                                    deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
                                    opt_start_seq=self.written + 1,
                                    ack_wait=self.args.ack_wait, max_ack_pending=self.args.max_ack_pending)
        await retry(lambda: self.js.add_consumer(STREAM, config=config))

    # Steady state.

    async def consume(self):
        subscription = await retry(lambda: self.js.pull_subscribe_bind(self.durable, STREAM))
        failing_since = None
        delivered = None   # the consumer sequence of the last delivery seen
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
                # Every delivery has the next consumer sequence. A jump means a
                # delivery went elsewhere (a pull request on a connection lost in a
                # failover): the message it carried may come again only after this
                # one, and would then look applied. Take the partition's messages in
                # between from the stream first, in order.
                jumped = delivered is None or msg.metadata.sequence.consumer != delivered + 1
                delivered = msg.metadata.sequence.consumer
                if seq > self.written and jumped:
                    await self.fill_gap(seq)
                if seq <= self.written:
                    # Delivered again (a delivery lost in a failover, or slow to be
                    # acknowledged). Already applied: acknowledge it, unless its
                    # events are still on their way (then their own ack will do).
                    if not any(entry.seq == seq for entry in self.pending):
                        await msg.ack()
                    continue
                await self.apply(seq, msg.data, msg, PUBLISH)

    async def fill_gap(self, seq):
        """Applies the partition's messages stored between the last one applied and
        `seq`, read from the stream; their late deliveries are then acknowledged as
        already applied."""
        while True:
            try:
                stored = await retry(lambda: self.js.get_msg(STREAM, seq=self.written + 1, subject=self.subject,
                                                             next=True), missing=True)
            except NotFoundError:
                return
            if stored is None or stored.seq >= seq:
                return
            log("partition {}: message {} was not delivered before {}: applied from the stream".format(
                self.p, stored.seq, seq))
            self.gaps_filled += 1
            await self.apply(stored.seq, stored.data, None, PUBLISH)

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
    log("partition {}: stopped at seq {}, {} events published, {} messages taken from the stream after a lost "
        "delivery".format(args.partition, shard.written, shard.published, shard.gaps_filled))


if __name__ == "__main__":
    asyncio.run(main())
