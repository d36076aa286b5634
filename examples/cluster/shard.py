#!/usr/bin/env python3
"""Run one partition of typingd on NATS JetStream: hold its lease, consume, apply, publish, acknowledge.

    shard.py --servers URLS --partition P [--typingd PATH] [--audit FILE]
             [--snapshot-every N] [--lease-ttl S] [--tick-ms MS] [-- TYPINGD OPTIONS ...]

The shard pipes its partition's commands (subject typingd.cmd.P of stream TYPINGD)
through its own typingd on the manual clock, publishes the events on the subjects
a gateway subscribes to (common.event_subject), and acknowledges its durable
consumer (shard-P) once a fetch's events are published.

Lease. Only the partition's owner consumes and publishes. The lease is key pP of
the KV bucket typingd-leases (history 1, TTL --lease-ttl; made if missing): the
shard takes it with create(), and its epoch is the revision that create returned
(it grows with every new owner). The owner renews it with update(last=revision)
every TTL/3. If it cannot renew within TTL of its last good renewal it stops
publishing at once and exits 75 (a supervisor starts it again; it comes back as a
standby). A second shard for a held partition is a standby: it says who holds the
lease and tries create() until the lease lapses, then rebuilds and takes over. A
shard ending on SIGTERM deletes its lease, so a standby takes over at once. Every
message the owner publishes carries the headers Typingd-Epoch, Typingd-Partition
and Typingd-Seq (the last stream sequence applied); a gateway drops a message whose
epoch is lower than one it has seen for that partition.

Start, and takeover. The owner starts its typingd and rebuilds: it loads the
partition's latest snapshot (object store typingd-snapshots), replays it as
commands (Protocol.md, "Snapshots"), then replays the stream from the message after
the snapshot: the backlog. Its replies and errors are published again; of its
indicators, only each viewer's last one, once caught up, and only while the viewer
is still on the screen it was for. Then the shard makes its durable consumer anew,
right after the last message applied, and consumes it.

Time. typingd runs on the manual clock and time comes from the log: commands carry
"at" and the owner publishes its own tick into its partition every --tick-ms (at =
the wall clock in ms, never going back; header Typingd-Tick: EPOCH). typingd runs
with --late-at clamp when it has that option: a command stamped earlier than the
partition's time is applied at that time, so a replay gives exactly what the first
run gave.

Routers. A message with headers Typingd-Router R and Typingd-Lines F (its first
line's number among the lines router R sent to this partition) is applied only for
the lines after the last one applied from R: a router restarted from an older
checkpoint never doubles a line. The numbers per router are kept in the snapshot.

Cost. The owner keeps pull requests for --fetch messages outstanding on its
consumer (each lives 10 s, with an idle heartbeat every second; a new one once half
is delivered) and takes what has arrived, up to --fetch messages, as one fetch:
written to typingd at once with one marker (a query with id "typingd:seq:<last
seq>" whose reply ends the fetch's events), one NATS message per subject per fetch
(the event lines joined with "\\n"), one acknowledgement (AckAll). Two seconds
without a delivery or a heartbeat while messages are owed (a reconnect, a node
gone) count as a failed pull: it is asked for again, with back-off. A consumer
that delivers nothing new while the stream's leader holds more of the partition,
at two looks 2 s apart (a consumer on a node that came back, reading its copy of
the stream still catching up), has stalled: the rest is applied from the stream;
after 3 stalls in a row the consumer is made anew.

Outages. No broker call ends the shard: each has a deadline and is retried with
back-off (at most 2 s between tries) until it succeeds or the shard is told to stop.
A snapshot that cannot be stored is skipped (logged, counted in stats).

Requests. typingd.stats.P and typingd.stats (owner and standbys): JSON, or
Prometheus text when the body is "prometheus". typingd.resync (owner, once caught
up), body {"viewer": ID}: the last non-empty indicator this partition published for
that viewer per (conv, thread, view), as {"partition","epoch","seq","indicators"}.

Retention. With --snapshot-every N, after about every N messages the shard asks its
typingd for a snapshot, stores it, and purges the partition's messages up to it.

SIGTERM or SIGINT: stop fetching, finish what was written, release the lease, exit
0. Exit 75: the lease was lost. With --lifetime S the shard (and its typingd) ends
after S seconds whatever happens (status 124).
"""
import argparse
import asyncio
import collections
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import zlib

from nats.errors import TimeoutError as NatsTimeout
from nats.js import api
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError, NotFoundError

from common import (BODY_LIMIT, COMMAND_SUBJECT, decode_body, SERVERS_HELP, LINE_MARKER, MARKER_CONV, MARKER_PREFIX, SNAPSHOT_PREFIX, SNAPSHOTS,
                    Shown, STREAM, conf, conf_option, connect, default_servers, event_subject, resolve)

LEASES = "typingd-leases"           # KV bucket: key p<P> is partition P's lease
EXIT_LEASE_LOST = 75
EPOCH, PARTITION, SEQ = "Typingd-Epoch", "Typingd-Partition", "Typingd-Seq"
ROUTER, LINES, TICK = "Typingd-Router", "Typingd-Lines", "Typingd-Tick"
BACKOFF_CAP = 2.0                   # seconds between two tries of a broker call, at most
SNAPSHOT_CONFIRMATIONS = 3          # "no snapshot" answers in a row believed after the cluster failed
REMAKE_AFTER = 4                    # seconds of failed pulls before asking whether the consumer answers
STALL_AFTER = 2                     # seconds without a new delivery between two looks at the stream (a stall)
STALLS_BEFORE_REMAKE = 3            # stalls in a row (nothing new delivered between them): the consumer is made anew
PULL_EXPIRES = 10                   # seconds a pull request lives (Puller)
PULL_HEARTBEAT = 1                  # seconds between idle heartbeats of a pull request
PULL_MAX_BYTES = 64 << 20           # bytes a pull request may deliver
STATUS, DESCRIPTION, PENDING_MESSAGES = "Status", "Description", "Nats-Pending-Messages"

PUBLISH, SUPPRESS, BACKLOG, SNAPSHOT = "publish", "suppress", "backlog", "snapshot"
MAIN_CHAT = (None, "chat")          # a screen: (thread, view); a closed view counts as the main chat
LINE_END = None                     # in a message's events: where one line's events end (catching up)
_NOT_INDICATOR = re.compile(rb'\n(?!\{"event":"indicator")')   # the "\n" before any other line
MEMBER, STREAK = b'{"event":"member"', b'{"event":"streak"'


class Puller:
    """The owner's pull on its durable consumer, on one subscription for its life.
    Requests of --fetch messages (expiring after PULL_EXPIRES, with an idle heartbeat
    every PULL_HEARTBEAT) are kept outstanding: a new one once less than half of what
    was asked is still owed, or once a request ends (its undelivered count is in
    Nats-Pending-Messages). Deliveries queue as they arrive; next() takes what is
    queued, waiting for the first. It raises, for the caller's back-off, when a
    request ended otherwise than by expiring (409, 503 no responders) with nothing
    delivered, and when nothing was heard, not even a heartbeat, for two heartbeats
    while messages are owed (a reconnect, the consumer's node gone).

    nats-py's fetch() made one or two requests per call, and a timer each: a paced
    shard spent more on them than on its messages."""

    def __init__(self, shard, subject):
        self.shard, self.nc, self.subject = shard, shard.nc, subject
        self.inbox = self.nc.new_inbox()
        self.queue = collections.deque()
        self.ready = asyncio.Event()
        self.owed = 0              # messages asked for, not yet delivered nor ended
        self.heard = time.monotonic()
        self.trouble = None        # a request ended otherwise than by expiring (409, 503...)
        self.sub = None

    async def start(self):
        if self.sub is None:
            self.sub = await self.nc.subscribe(self.inbox, cb=self.arrived, pending_msgs_limit=1 << 20,
                                               pending_bytes_limit=1 << 30)

    async def arrived(self, msg):
        self.heard = time.monotonic()
        headers = msg.headers
        status = headers.get(STATUS) if headers else None
        if status is None:
            if not (msg.reply or "").startswith("$JS.ACK."):   # an API error, not a delivery
                self.trouble = "an answer that is not a delivery: {!r}".format(msg.data[:200])
            else:
                self.owed -= 1
                self.queue.append(msg)
            self.ready.set()
        elif status != "100":   # a request ended; 100 is a heartbeat
            try:
                self.owed = max(self.owed - int(headers.get(PENDING_MESSAGES, "")), 0)
            except ValueError:
                self.owed = 0
            if status != "408":   # 408: it expired, the normal end of an idle request
                self.trouble = "{} {}".format(status, headers.get(DESCRIPTION, "")).strip()
            self.ready.set()

    async def ask(self, batch):
        if self.owed <= 0:
            self.heard = time.monotonic()   # silence is counted from the first request
        await self.nc.publish(self.subject, b'{"batch":%d,"expires":%d,"idle_heartbeat":%d,"max_bytes":%d}' % (
            batch, PULL_EXPIRES * 10**9, PULL_HEARTBEAT * 10**9, PULL_MAX_BYTES), reply=self.inbox)
        self.owed += batch

    async def next(self, batch):
        """At most `batch` delivered messages, in order; [] when woken for nothing."""
        if self.owed <= batch // 2:
            await self.ask(batch)
        if not self.queue:
            self.ready.clear()
            waiting_since = time.monotonic()
            try:
                await asyncio.wait_for(self.ready.wait(), 2 * PULL_HEARTBEAT)
            except asyncio.TimeoutError:
                pass
            if not self.queue:
                if self.trouble is not None:
                    # Asking again at once could go round without end (no responders
                    # for a consumer that is gone): the caller's back-off decides.
                    trouble, self.trouble = self.trouble, None
                    raise ConnectionError("the pull ended: " + trouble)
                if self.owed > 0 and self.heard < waiting_since and not self.shard.stopping:
                    self.owed = 0
                    raise ConnectionError("nothing from the consumer for {:.1f} s".format(
                        time.monotonic() - self.heard))
                return []   # woken by an answer (a request's end, a heartbeat) or a stop
        self.trouble = None   # messages came: whatever ended, pulling works
        queue = self.queue
        if len(queue) <= batch:
            taken = list(queue)
            queue.clear()
            return taken
        return [queue.popleft() for _ in range(batch)]


class Stopped(Exception):
    """The shard was told to stop while it waited for the cluster."""


class Entry:
    """Something written to typingd whose events are still to come: messages first..seq
    (one fetch, or one message while catching up), or a snapshot taken after seq."""
    __slots__ = ("first", "seq", "msg", "mode", "items", "commands", "routers")

    def __init__(self, first, seq, msg, mode, commands=None, routers=None):
        self.first, self.seq, self.msg, self.mode, self.items = first, seq, msg, mode, []
        self.commands, self.routers = commands, routers


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
    now = time.time()
    print("shard: {}.{:03d} {}".format(time.strftime("%H:%M:%S", time.localtime(now)), int(now % 1 * 1000), text),
          file=sys.stderr, flush=True)


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
    3. members whose screen an offline changed without a render (`forgotten`): a
       `forget` each, which renders nothing, so that the next render compares them
       from the empty indicator again (a `close` would tell them at once: every
       command naming a conversation renders it)."""
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
        lines.append({"cmd": "forget", "conv": m["conv"], "user": m["user"], "at": m["at"]})
    return [json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() for line in lines]



def late_at_option(binary, wanted):
    """typingd's --late-at option, when this typingd has it."""
    if wanted == "none":
        return []
    try:
        text = subprocess.run([binary, "--help"], capture_output=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError) as error:
        sys.exit("shard.py: cannot run typingd {} ({})".format(binary, error))
    if b"--late-at" in text:
        return ["--late-at", wanted]
    log("{} has no --late-at: a command stamped behind the partition's time is refused (time_backwards)".format(
        binary))
    return []


class Lease:
    """Partition P's lease: key pP of KV bucket typingd-leases. See the module's help."""

    def __init__(self, shard):
        self.shard = shard
        self.key = "p{}".format(shard.p)
        self.ttl = shard.args.lease_ttl
        self.kv = None
        self.epoch = 0            # the revision of our create: 0 while a standby
        self.revision = 0         # the revision of our last good renewal
        self.valid_until = 0.0    # monotonic: TTL after the last good renewal was sent
        self.released = False
        self.renewals = 0
        self.owner = "{}:{}:{}".format(socket.gethostname(), os.getpid(), os.urandom(4).hex())
        self.value = json.dumps({"owner": self.owner, "partition": shard.p}).encode()

    def held(self):
        return self.epoch > 0 and not self.released and time.monotonic() < self.valid_until

    async def bind(self):
        shard = self.shard

        async def bucket():
            try:
                return await shard.js.key_value(LEASES)
            except BucketNotFoundError:
                return await shard.js.create_key_value(api.KeyValueConfig(
                    bucket=LEASES, history=1, ttl=self.ttl, replicas=shard.args.replicas))
        self.kv = await shard.call(bucket, "binding lease bucket " + LEASES)
        info = await shard.call(lambda: shard.js.stream_info("KV_" + LEASES), "reading lease bucket " + LEASES)
        if info.config.max_age and info.config.max_age < self.ttl:
            # The bucket lets a lease lapse sooner than --lease-ttl says: trust the bucket.
            log("partition {}: bucket {} lets a lease lapse after {} s: using that, not {} s".format(
                shard.p, LEASES, info.config.max_age, self.ttl))
            self.ttl = info.config.max_age

    def took(self, revision, sent):
        self.epoch = self.revision = revision
        self.valid_until = sent + self.ttl
        log("partition {}: lease {} taken, epoch {}".format(self.shard.p, self.key, revision))

    async def acquire(self):
        """Waits (a standby) until the lease is ours."""
        shard = self.shard
        await self.bind()
        holder = None
        waiting_since = time.monotonic()
        while True:
            if shard.stopping:
                raise Stopped()
            sent = time.monotonic()
            try:
                revision = await asyncio.wait_for(self.kv.create(self.key, self.value), shard.args.call_timeout)
                return self.took(revision, sent)
            except KeyWrongLastSequenceError:
                try:
                    entry = await asyncio.wait_for(self.kv.get(self.key), shard.args.call_timeout)
                except Exception:   # lapsed meanwhile, or the cluster is away: try create again
                    entry = None
                if entry is not None and entry.value == self.value:
                    return self.took(entry.revision, sent)   # our create was stored, its reply lost
                if entry is not None and entry.value != holder:
                    holder = entry.value
                    log("partition {}: standby: lease {} held by {} (revision {}); waiting for it to lapse".format(
                        shard.p, self.key, entry.value.decode("utf-8", "replace"), entry.revision))
            except Exception as error:
                # Counted like any broker call's retry: a replacement that waited out an
                # outage here must not believe a first "no snapshot" (load_snapshot).
                shard.counts["retries"] += 1
                if time.monotonic() - waiting_since > 5:
                    waiting_since = time.monotonic()
                    log("partition {}: standby: cannot reach lease bucket ({}); retrying".format(
                        shard.p, type(error).__name__))
            await shard.sleep(min(0.5, self.ttl / 6))

    async def keep(self):
        """Renews every TTL/3; loses the lease (exit 75) once TTL has passed since the
        last good renewal was sent."""
        shard = self.shard
        interval = self.ttl / 3
        next_at = self.valid_until - self.ttl + interval
        failing_since = None
        while not self.released:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            if self.released:
                return
            sent = time.monotonic()
            left = self.valid_until - sent
            if left <= 0:
                self.lost("not renewed within {} s".format(self.ttl))
            try:
                self.revision = await asyncio.wait_for(
                    self.kv.update(self.key, self.value, last=self.revision), min(left, interval))
                self.valid_until = sent + self.ttl
                self.renewals += 1
                next_at = sent + interval
                if failing_since is not None:
                    log("partition {}: lease renewed again after {:.2f} s".format(
                        shard.p, time.monotonic() - failing_since))
                    failing_since = None
                continue
            except KeyWrongLastSequenceError:
                # A renewal whose reply was lost may have been stored: is the key still ours?
                try:
                    entry = await asyncio.wait_for(self.kv.get(self.key), max(0.05, min(left, 1.0)))
                except KeyNotFoundError:
                    self.lost("lease lapsed")
                except Exception:
                    entry = None
                if entry is not None:
                    if entry.value != self.value:
                        self.lost("lease taken by {} (epoch {})".format(
                            entry.value.decode("utf-8", "replace"), entry.revision))
                    self.revision = entry.revision
            except Exception as error:
                if failing_since is None:
                    failing_since = time.monotonic()
                    log("partition {}: lease renewal failed ({}); retrying".format(shard.p, type(error).__name__))
            next_at = time.monotonic() + 0.1

    async def watchdog(self):
        """Stops the shard at once when the lease's time is up, even while a renewal hangs.
        It sleeps until the lease's end as it stands: a renewal only moves the end later,
        so waking then and sleeping again misses nothing (it woke every 50 ms: a fifth of
        an idle shard's CPU)."""
        while not self.released:
            left = self.valid_until - time.monotonic()
            if left <= 0:
                self.lost("not renewed within {} s".format(self.ttl))
            await asyncio.sleep(left)

    def lost(self, why):
        self.shard.fence("lease {} lost ({}): stopped publishing; exiting {}".format(self.key, why, EXIT_LEASE_LOST))

    async def release(self):
        if self.epoch and not self.released:
            self.released = True
            try:
                await asyncio.wait_for(self.kv.delete(self.key, last=self.revision), 2)
                log("partition {}: lease {} released".format(self.shard.p, self.key))
            except Exception as error:
                log("partition {}: could not release lease {} ({}); it lapses in {} s".format(
                    self.shard.p, self.key, type(error).__name__, self.ttl))


class Shard:
    def __init__(self, args, nc):
        self.args, self.nc, self.js, self.proc = args, nc, nc.jetstream(), None
        self.p = args.partition
        self.subject = COMMAND_SUBJECT.format(self.p)
        self.durable = "shard-{}".format(self.p)
        self.lease = Lease(self)
        self.role = "standby"
        self.pending = collections.deque()
        self.progress = asyncio.Event()
        self.stop_event = asyncio.Event()
        self.written = 0          # the last stream sequence written to typingd
        self.applied = 0          # the last stream sequence whose events are published
        self.clock = 0            # typingd's time after the last entry applied (from its marker reply)
        self.gaps_filled = 0      # messages taken from the stream because their delivery was lost
        self.since_snapshot = 0
        self.backlog = {}         # (conv, viewer) -> (the last indicator line, its event) while catching up
        self.routers = {}         # router name -> the last of its line numbers applied
        self.seen = Shown(args.viewer_buckets)   # each viewer's last indicator per screen, for a resync
        self.buckets = args.viewer_buckets
        self.audience_open = audience_open(args.options)
        self.stopping = False
        self.audit = open(args.audit, "ab") if args.audit else None
        self.store = None
        self.snapshot_task = None
        self.started = time.monotonic()
        self.max_payload = 0
        self.counts = collections.Counter()   # events_published, messages_published, ...
        self.puller = None
        self.report_next = False   # log the next delivery (after a failed pull)

    # The cluster: every call with a deadline, retried with back-off.

    async def sleep(self, seconds):
        try:
            await asyncio.wait_for(self.stop_event.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    def stop(self):
        self.stopping = True
        self.stop_event.set()
        if self.puller is not None:
            self.puller.ready.set()

    async def call(self, make, what, timeout=None, missing=False):
        """Calls the cluster until it answers: each try has a deadline, tries are spaced
        by a back-off doubling up to 2 s; only a stop ends it (Stopped). With `missing`,
        a not-found answer is raised at once (it is an answer)."""
        delay, failing_since, logged = 0.05, None, 0.0
        while True:
            if self.stopping:
                raise Stopped()
            try:
                result = await asyncio.wait_for(make(), timeout or self.args.call_timeout)
                if failing_since is not None:
                    log("partition {}: {}: done after {:.1f} s of retries".format(
                        self.p, what, time.monotonic() - failing_since))
                return result
            except KeyWrongLastSequenceError:
                raise
            except NotFoundError as error:
                if missing:
                    raise
                problem = error
            except Exception as error:
                problem = error
            now = time.monotonic()
            self.counts["retries"] += 1
            if failing_since is None:
                failing_since = logged = now
                log("partition {}: {} failed ({}); retrying".format(self.p, what, type(problem).__name__))
            elif now - logged >= 5:
                logged = now
                log("partition {}: {}: waiting for the cluster for {:.0f} s ({})".format(
                    self.p, what, now - failing_since, type(problem).__name__))
            await self.sleep(delay)
            delay = min(delay * 2, BACKOFF_CAP)

    def fence(self, why):
        """Stops publishing at once: the process ends here."""
        log("partition {}: {}".format(self.p, why))
        if self.audit:
            self.audit.flush()
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
        os._exit(EXIT_LEASE_LOST)

    # Writing to typingd.

    async def write(self, data, entry):
        self.pending.append(entry)
        self.proc.stdin.write(data)
        while len(self.pending) > self.args.window:
            self.progress.clear()
            await self.progress.wait()
        await self.proc.stdin.drain()

    def admit(self, headers, data):
        """The lines of a message still to apply: all of them, but for a router's
        lines already applied (Typingd-Router, Typingd-Lines). A body that cannot be
        decoded (common.decode_body) is logged, counted and not applied."""
        try:
            data = decode_body(headers, data, self.nc.max_payload or BODY_LIMIT)
        except ValueError as error:
            self.counts["undecodable"] += 1
            log("partition {}: a message not applied: {}".format(self.p, error))
            return b""
        if data and not data.endswith(b"\n"):
            data += b"\n"
        if not headers:
            return data
        router, first = headers.get(ROUTER), headers.get(LINES)
        if router is None or first is None:
            return data
        try:
            first = int(first)
        except ValueError:
            return data
        count = data.count(b"\n")
        last = first + count - 1
        done = self.routers.get(router, 0)
        if first > done:
            self.routers[router] = last
            return data
        if last <= done:
            self.counts["dropped_lines"] += count
            return b""
        skip = done - first + 1
        index = 0
        for _ in range(skip):
            index = data.index(b"\n", index) + 1
        self.counts["dropped_lines"] += skip
        self.routers[router] = last
        return data[index:]

    def marker(self, seq):
        return '{{"cmd":"query","conv":"{}","id":"{}{}"}}\n'.format(MARKER_CONV, MARKER_PREFIX, seq).encode()

    async def apply(self, seq, payload, headers, mode):
        """One message, with its own marker (catching up, a lost delivery)."""
        payload = self.admit(headers, payload)
        commands = None
        if mode == BACKLOG:
            # Each line's events marked off, so that the indicators kept for the end
            # of the catch-up can follow the screen changes between them.
            lines = payload[:-1].split(b"\n") if payload else []
            commands = [parse_command(line) for line in lines]
            line_marker = '{{"cmd":"query","conv":"{}","id":"{}"}}\n'.format(MARKER_CONV, LINE_MARKER).encode()
            payload = b"".join(line + b"\n" + line_marker for line in lines)
        await self.write(payload + self.marker(seq), Entry(seq, seq, None, mode, commands))
        self.written = seq
        await self.counted(1, seq, mode)

    async def apply_fetch(self, parts, first, last, msg):
        """A fetch's messages, written at once with one marker."""
        if not parts:
            return
        await self.write(b"".join(parts) + self.marker(last), Entry(first, last, msg, PUBLISH))
        await self.counted(len(parts), last, PUBLISH)

    async def counted(self, messages, seq, mode):
        self.since_snapshot += messages
        if self.args.snapshot_every and self.since_snapshot >= self.args.snapshot_every and mode == PUBLISH:
            self.since_snapshot = 0
            command = '{{"cmd":"snapshot","id":"{}{}"}}\n'.format(SNAPSHOT_PREFIX, seq).encode()
            await self.write(command, Entry(seq, seq, None, SNAPSHOT, routers=dict(self.routers)))

    # Reading typingd's output: an indicator, a member or a streak is never parsed.

    async def read_output(self):
        """typingd's output, in blocks: a run of indicator lines is split from the
        block at once (one item, "indicators", in events); every other line is
        looked at alone."""
        events = []
        rest = b""
        pending = self.pending
        search = _NOT_INDICATOR.search
        while True:
            chunk = await self.proc.stdout.read(1 << 18)
            if not chunk:
                return
            data = rest + chunk if rest else chunk
            cut = data.rfind(b"\n")
            if cut < 0:
                rest = data
                continue
            block, rest = b"\n" + data[:cut], data[cut + 1:]   # each line after a "\n"
            end, pos = len(block), 0
            while pos < end:
                found = search(block, pos)
                start = found.start() if found is not None else end
                if start > pos:
                    events.append((block[pos + 1:start].split(b"\n"), "indicators", None))
                if found is None:
                    break
                pos = block.find(b"\n", start + 1)
                if pos < 0:
                    pos = end
                line = block[start + 1:pos]
                head = pending[0] if pending else None
                if line.startswith(MEMBER) or line.startswith(STREAK):
                    if head is not None and head.mode == SNAPSHOT:
                        head.items.append(line)
                    else:
                        events.append((line, "member", None))
                    continue
                event = json.loads(line)
                kind = event["event"]
                ident = event.get("id")
                if kind == "snapshot" and head is not None and head.mode == SNAPSHOT \
                        and ident == SNAPSHOT_PREFIX + str(head.seq):
                    pending.popleft()
                    self.progress.set()
                    self.store_snapshot(head, event["at"])
                    continue
                if kind == "snapshot" and head is not None and head.mode == SNAPSHOT:
                    # Not the shard's own: its member lines went to the shard's snapshot.
                    log("partition {}: snapshot reply {!r} while the shard's own (seq {}) was awaited: {} "
                        "member and streak lines taken for it".format(self.p, ident, head.seq, len(head.items)))
                if kind == "state" and isinstance(ident, str) and ident.startswith(MARKER_PREFIX):
                    self.clock = event["at"]   # the partition's time once the entry is applied
                    entry = pending.popleft()
                    self.progress.set()
                    await self.deliver(entry, events)
                    events = []
                    continue
                if kind == "state" and ident == LINE_MARKER:
                    events.append(LINE_END)
                    continue
                events.append((line, kind, event))

    async def deliver(self, entry, events):
        if entry.mode == SUPPRESS:
            # Published by an earlier owner: nothing to send; what it showed is kept
            # for a resync.
            indicators = []
            for item in events:
                if item is not LINE_END and item[1] == "indicators":
                    indicators.extend(item[0])
            if indicators:
                self.seen.keep(indicators)
        else:
            if not self.lease.held():
                self.lease.lost("its time ran out before seq {} was published".format(entry.seq))
            if self.audit:
                # One write per entry, ending with an E line (SEQ, E, FIRST:PARTITION:EPOCH): a
                # shard killed mid-entry leaves no E, and the checker ignores that copy.
                # In the kernel before the ack: a shard killed after acknowledging has
                # the events in its audit file.
                prefix = b"%d\t%s\t" % (entry.seq, b"P" if entry.mode == PUBLISH else b"B")
                self.audit.write(b"".join(prefix + (b"\n" + prefix).join(item[0]) + b"\n" if item[1] == "indicators"
                                          else prefix + item[0] + b"\n" for item in events if item is not LINE_END)
                                 + b"%d\tE\t%d:%d:%d\n" % (entry.seq, entry.first, self.p, self.lease.epoch))
                self.audit.flush()
            if entry.mode == BACKLOG:
                await self.deliver_backlog(entry.commands, events, entry.seq)
            else:
                await self.publish_all(events, entry.seq)
        self.applied = entry.seq
        if entry.msg is not None:
            try:
                await entry.msg.ack()   # AckAll: every message of the fetch, and before
            except Exception as error:  # delivered again later, acknowledged then
                log("partition {}: ack of seq {} failed ({})".format(self.p, entry.seq, type(error).__name__))

    async def publish_all(self, events, seq, keep_indicators=False):
        """One NATS message per subject: its events' lines joined with "\\n"."""
        groups = {}
        reply = []   # member and streak events: published with the snapshot event after them
        indicators = []
        for line, kind, event in events:
            if kind == "indicators":   # a run of indicator lines (read_output)
                if keep_indicators:
                    for one in line:
                        event = json.loads(one)
                        self.backlog[(event["conv"], event["viewer"])] = (one, event)
                else:
                    indicators.extend(line)
                continue
            if kind == "member":
                reply.append(line)
                continue
            subject = event_subject(event, self.p, self.buckets)
            group = groups.get(subject)
            if group is None:
                group = groups[subject] = []
            if reply:
                group.extend(reply)
                reply = []
            group.append(line)
        if reply:
            groups.setdefault("typingd.snapshot.{}".format(self.p), []).extend(reply)
        if indicators:
            get = groups.get
            for subject, line in zip(self.seen.keep(indicators), indicators):
                group = get(subject)
                if group is None:
                    group = groups[subject] = []
                group.append(line)
        if groups:
            await self.send(groups, seq)

    async def send(self, groups, seq):
        if not self.lease.held():
            self.lease.lost("its time ran out before seq {} was published".format(seq))
        headers = {EPOCH: str(self.lease.epoch), PARTITION: str(self.p), SEQ: str(seq)}
        limit = (self.max_payload or self.nc.max_payload or (1 << 20)) - 4096
        counts = self.counts
        for subject, lines in groups.items():
            counts["events_published"] += len(lines)
            chunk, size = [], 0
            for line in lines:
                if size + len(line) + 1 > limit and chunk:
                    await self.publish(subject, chunk, headers)
                    chunk, size = [], 0
                chunk.append(line)
                size += len(line) + 1
            await self.publish(subject, chunk, headers)

    async def publish(self, subject, lines, headers):
        try:
            await self.nc.publish(subject, b"\n".join(lines), headers=headers)
            self.counts["messages_published"] += 1
        except Exception as error:   # a full buffer while reconnecting, an event larger than max_payload
            self.counts["dropped_events"] += len(lines)
            log("partition {}: {} events for {} not published ({})".format(
                self.p, len(lines), subject, type(error).__name__))

    async def deliver_backlog(self, commands, events, seq):
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
            applied = command is not None and not any(kind == "error" for _, kind, _ in group)
            if applied:
                self.screen_changes(command, before=True)
            await self.publish_all(group, seq, keep_indicators=True)
            if applied:
                self.screen_changes(command, before=False)
        if current:   # nothing comes after the last line's marker, but keep whatever did
            await self.publish_all(current, seq, keep_indicators=True)

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
            self.store = await self.call(bind, "binding object store " + SNAPSHOTS)
        return self.store

    def store_snapshot(self, entry, at):
        """Stores the snapshot taken after message entry.seq in the background: one at
        a time; one taken while the last is still being stored is skipped."""
        if self.snapshot_task is not None and not self.snapshot_task.done():
            self.counts["snapshots_skipped"] += 1
            return
        body = b'{"seq":%d,"at":%d,"epoch":%d,"routers":%s,"events":[%s]}' % (
            entry.seq, at, self.lease.epoch, json.dumps(entry.routers or {}, ensure_ascii=False).encode(),
            b",".join(entry.items))
        self.snapshot_task = asyncio.create_task(self.save_snapshot(entry.seq, body, len(entry.items)))

    async def save_snapshot(self, seq, body, count):
        """Stores the snapshot, then purges the partition's messages up to it: a rebuild
        needs only the snapshot and what follows. A failure skips this snapshot."""
        started = time.monotonic()
        data = zlib.compress(body, 6)
        try:
            store = await self.objects()
            if not self.lease.held():
                return
            await asyncio.wait_for(store.put("partition-{}".format(self.p), data), self.args.snapshot_timeout)
        except Exception as error:
            self.counts["snapshots_failed"] += 1
            log("partition {}: snapshot after seq {} not stored ({}): skipped".format(
                self.p, seq, type(error).__name__ or error))
            return
        self.counts["snapshots_stored"] += 1
        purged = "older messages purged"
        try:
            if not self.lease.held():
                raise Stopped()
            await asyncio.wait_for(self.js.purge_stream(STREAM, subject=self.subject, seq=seq + 1),
                                   self.args.call_timeout)
        except Exception as error:
            self.counts["purges_failed"] += 1
            purged = "older messages not purged ({})".format(type(error).__name__)
        log("partition {}: snapshot after seq {} ({} events, {} KiB compressed) stored, {}, in {:.0f} ms".format(
            self.p, seq, count, len(data) // 1024, purged, (time.monotonic() - started) * 1000))

    async def load_snapshot(self):
        """The partition's latest snapshot, or None when it has none. A "not found"
        that comes just after the cluster failed to answer is not believed at once:
        in a fault run (two of three nodes stopped 15 s) a replacement got
        ServiceUnavailable and then "not found" for a snapshot that existed, rebuilt
        from the purged stream alone, and 239 conversations differed. It must then be
        the answer SNAPSHOT_CONFIRMATIONS times in a row, a second apart, without a
        failure in between."""
        store = await self.objects()
        confirmations = 0
        while True:
            before = self.counts["retries"]
            try:
                result = await self.call(lambda: store.get("partition-{}".format(self.p)), "fetching the snapshot",
                                         timeout=self.args.snapshot_timeout, missing=True)
                return json.loads(zlib.decompress(result.data))
            except NotFoundError:
                if self.counts["retries"] == 0:
                    return None   # the cluster has answered this shard every time
                confirmations = 1 if self.counts["retries"] != before else confirmations + 1
                if confirmations >= SNAPSHOT_CONFIRMATIONS:
                    return None
                log("partition {}: no snapshot, after the cluster failed to answer; asking again".format(self.p))
                await self.sleep(1.0)

    # Start: rebuild, catch up.

    async def rebuild(self):
        started = time.monotonic()
        snapshot = await self.load_snapshot()
        base = 0
        if snapshot is not None:
            base = snapshot["seq"]
            self.routers = dict(snapshot.get("routers") or {})
            lines = rebuild_lines(snapshot["events"])
            await self.write(b"".join(line + b"\n" for line in lines) + self.marker(base),
                             Entry(base, base, None, SUPPRESS))
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
            last = (await self.call(lambda: self.js.get_last_msg(STREAM, self.subject),
                                    "reading the partition's last message", missing=True)).seq
        except NotFoundError:
            last = 0
        replayed = quiet = 0
        if last > self.written:
            replayed, quiet = await self.replay(last, published)
        while self.pending:
            self.progress.clear()
            await self.progress.wait()
        kept = len(self.backlog)
        if self.backlog:
            await self.publish_all([([line for line, _ in self.backlog.values()], "indicators", None)], self.written)
        self.backlog = {}
        await self.start_consumer()
        log("partition {}: caught up in {:.0f} ms: snapshot after seq {} ({} events), {} messages replayed "
            "({} published before: no output), {} backlog indicators published; now at seq {}, epoch {}".format(
                self.p, (time.monotonic() - started) * 1000, base,
                len(snapshot["events"]) if snapshot else 0, replayed, quiet, kept, self.written, self.lease.epoch))
        try:   # for gateways: who owns the partition now, and how it sends indicators
            await self.nc.publish("typingd.owner.{}".format(self.p), b'{"partition":%d,"epoch":%d,"viewer_buckets":%d}'
                                  % (self.p, self.lease.epoch, self.buckets))
        except Exception:
            pass

    async def consumer_answers(self):
        try:
            await asyncio.wait_for(self.js.consumer_info(STREAM, self.durable), self.args.call_timeout)
            return True
        except Exception:
            return False

    async def acknowledged(self):
        try:
            info = await self.call(lambda: self.js.consumer_info(STREAM, self.durable), "reading the consumer",
                                   missing=True)
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
            replay = await self.call(lambda: self.js.pull_subscribe(
                self.subject, durable=None, stream=STREAM, config=api.ConsumerConfig(
                    deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=start,
                    ack_policy=api.AckPolicy.NONE, inactive_threshold=30.0)), "making the replay consumer")
            idle = 0
            while self.written < last and idle < 5:
                if self.stopping:
                    raise Stopped()
                try:
                    messages = await replay.fetch(batch=256, timeout=2)
                except (NatsTimeout, asyncio.TimeoutError):
                    idle += 1
                    continue
                except Exception:   # a reconnect, a leader election
                    idle += 1
                    await self.sleep(0.2)
                    continue
                idle = 0
                for msg in messages:
                    seq = msg.metadata.sequence.stream
                    if seq <= self.written:
                        continue
                    await self.apply(seq, msg.data, msg.headers, SUPPRESS if seq <= published else BACKLOG)
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
        taking a message the replay did not see. Only the lease holder uses it."""
        try:
            await self.call(lambda: self.js.delete_consumer(STREAM, self.durable), "deleting the old consumer",
                            missing=True)
        except NotFoundError:
            pass
        config = api.ConsumerConfig(durable_name=self.durable, filter_subject=self.subject,
                                    ack_policy=api.AckPolicy.ALL,
                                    deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
                                    opt_start_seq=self.written + 1,
                                    ack_wait=self.args.ack_wait, max_ack_pending=self.args.max_ack_pending,
                                    num_replicas=self.args.consumer_replicas, mem_storage=True)
        await self.call(lambda: self.js.add_consumer(STREAM, config=config), "making the consumer")

    async def remake_consumer(self, why="the consumer does not answer"):
        """The consumer did not answer (or stalled): made anew once what was written is applied
        (its ack floor then starts at the last message published, as at a takeover).
        With one replica (--consumer-replicas 1) this is how the owner outlives the
        consumer's node; with more, after a long outage it does no harm."""
        while self.pending and self.proc.returncode is None and not self.stopping:
            self.progress.clear()
            await self.progress.wait()
        log("partition {}: {}: making it anew after seq {}".format(self.p, why, self.written))
        await self.start_consumer()
        self.counts["consumers_remade"] += 1
        self.report_next = True

    # Steady state.

    def covering(self, seq):
        """The pending entry that applies message `seq` (not a snapshot's), or None."""
        return next((entry for entry in self.pending if entry.first <= seq <= entry.seq and entry.mode != SNAPSHOT),
                    None)

    async def new_puller(self):
        """A Puller on an inbox of its own (the last one's unsubscribed): after the
        consumer is made anew, what the old one still sends is never applied, and
        no ack of the old one's reaches the new one (acks name only the durable,
        and an AckAll of a higher delivery sequence would make the new one's
        ignored)."""
        if self.puller is not None and self.puller.sub is not None:
            try:
                await self.puller.sub.unsubscribe()
            except Exception:
                pass
        puller = Puller(self, "$JS.API.CONSUMER.MSG.NEXT.{}.{}".format(STREAM, self.durable))
        await self.call(puller.start, "subscribing to the consumer's deliveries")
        self.puller = puller
        return puller

    async def consume(self):
        puller = await self.new_puller()
        failing_since = None
        delay = 0.05
        delivered = None   # the consumer sequence of the last delivery seen
        # A stall: two looks at the stream, STALL_AFTER apart, without a new delivery
        # before or between them, each finding the partition's last message past
        # what was applied (one look alone could meet a delivery on its way).
        progress_at, progress_seq = time.monotonic(), self.written   # the last new delivery
        ahead = False   # the last look found the stream ahead
        stalls = 0      # stalls in a row, no new delivery between them
        while not self.stopping:
            now = time.monotonic()
            if self.written != progress_seq:
                progress_at, progress_seq, ahead, stalls = now, self.written, False, 0
            elif now - progress_at >= STALL_AFTER and failing_since is None:
                progress_at = now
                ahead, filled = await self.stalled(ahead)
                if filled:
                    progress_seq = self.written   # the stream's doing, not the consumer's
                    stalls += 1
                    if stalls >= STALLS_BEFORE_REMAKE:
                        await self.remake_consumer("the consumer stalled {} times in a row".format(stalls))
                        puller, delivered, stalls = await self.new_puller(), None, 0
                        progress_at = time.monotonic()
                    continue
            try:
                messages = await puller.next(self.args.fetch)
            except Exception as error:   # a reconnect, no answer: ask again
                now = time.monotonic()
                if failing_since is None:
                    failing_since = logged = now
                    log("partition {}: pull failed ({}); retrying".format(self.p, error))
                    self.report_next = True
                elif now - logged >= 5:
                    logged = now
                    log("partition {}: pull: waiting for the cluster for {:.0f} s".format(self.p, now - failing_since))
                if now - failing_since >= REMAKE_AFTER and not await self.consumer_answers():
                    await self.remake_consumer()
                    puller, delivered, stalls = await self.new_puller(), None, 0
                    failing_since, delay = None, 0.05
                    progress_at, ahead = time.monotonic(), False   # the new consumer's 2 s start now
                    continue
                await self.sleep(delay)
                delay = min(delay * 2, BACKOFF_CAP)
                continue
            if failing_since is not None:   # an answer, if only a request's end: the consumer is there
                log("partition {}: pulling again after {:.2f} s".format(self.p, time.monotonic() - failing_since))
                failing_since, delay = None, 0.05
                progress_at, ahead = time.monotonic(), False
            if not messages:
                continue
            if self.report_next:   # where the consumer resumed after trouble, for the log
                self.report_next = False
                head, tail = messages[0].metadata.sequence, messages[-1].metadata.sequence
                log("partition {}: delivering again: seq {}..{} (consumer seq {}..{}); applied through {}".format(
                    self.p, head.stream, tail.stream, head.consumer, tail.consumer, self.written))
            parts, first, last_msg = [], 0, None
            for msg in messages:
                metadata = msg.metadata
                seq = metadata.sequence.stream
                # Every delivery has the next consumer sequence. A jump means a
                # delivery went elsewhere (a pull request on a connection lost in a
                # failover): the message it carried may come again only after this
                # one, and would then look applied. Take the partition's messages in
                # between from the stream first, in order.
                jumped = delivered is None or metadata.sequence.consumer != delivered + 1
                delivered = metadata.sequence.consumer
                if seq > self.written and jumped:
                    await self.apply_fetch(parts, first, self.written, last_msg)
                    parts, first, last_msg = [], 0, None
                    await self.fill_gap(seq)
                if seq <= self.written:
                    # Delivered again (a delivery lost in a failover, or slow to be
                    # acknowledged), or after it was applied from the stream.
                    # Acknowledged now, or with its events when they are still on
                    # their way: by an ack to come (AckAll), or by this one, taken
                    # by the entry when none is to come (it was read from the
                    # stream). Not when a later entry has one: this one's higher
                    # delivery sequence would make the server ignore that ack.
                    entry = self.covering(seq)
                    if entry is None:
                        try:
                            await msg.ack()
                        except Exception:
                            pass
                    elif entry.msg is None and not any(later.msg is not None for later in self.pending
                                                       if later.first > entry.seq):
                        entry.msg = msg
                    continue
                parts.append(self.admit(msg.headers, msg.data))
                first = first or seq
                self.written = seq
                last_msg = msg
            await self.apply_fetch(parts, first, self.written, last_msg)

    async def stalled(self, ahead):
        """A look at the stream, nothing new having been delivered for STALL_AFTER
        seconds: whether its leader holds more of the partition's messages than were
        applied. If so at this look and the last one (`ahead`), they are applied
        from the stream. Returns (ahead now, applied). A consumer can say it has
        nothing pending while it does: one whose node came back reads that node's
        copy of the stream, which may still be catching up (nats-server 2.9: its
        num_pending and ack pending are 0 then, and it may not deliver until a new
        message comes)."""
        try:
            last = (await asyncio.wait_for(self.js.get_last_msg(STREAM, self.subject), self.args.call_timeout)).seq
        except Exception:   # nothing stored (NotFound), or no answer: the pull's own back-off deals with that
            return False, False
        if last <= self.written:
            return False, False
        if not ahead:
            return True, False
        self.counts["consumer_stalls"] += 1
        await self.fill_gap(last + 1, why="the consumer delivered nothing new for {} s while the stream held up to "
                                          "seq {}".format(2 * STALL_AFTER, last))
        return False, True

    async def fill_gap(self, seq, why=None):
        """Applies the partition's messages stored between the last one applied and
        `seq`, read from the stream; a late delivery of one is acknowledged once its
        events are published (consume()). Logs them once, as not delivered before
        `seq` (or `why`)."""
        taken = []
        try:
            while True:
                try:
                    stored = await self.call(lambda: self.js.get_msg(STREAM, seq=self.written + 1,
                                                                     subject=self.subject, next=True),
                                             "reading a message", missing=True)
                except NotFoundError:
                    return
                if stored is None or stored.seq >= seq:
                    return
                taken.append(stored.seq)
                self.gaps_filled += 1
                await self.apply(stored.seq, stored.data, stored.headers, PUBLISH)
        finally:
            if taken:
                log("partition {}: {}: {} applied from the stream".format(
                    self.p, why or "a delivery was lost before seq {}".format(seq),
                    "message {}".format(taken[0]) if len(taken) == 1
                    else "messages {}..{} ({})".format(taken[0], taken[-1], len(taken))))

    async def ticker(self):
        """The partition's time: a tick into the partition every --tick-ms while the
        lease is held and the partition's clock is that far behind the wall clock (at:
        the wall clock in ms, never going back). While stamped commands flow, their
        own `at` moves the clock and no tick is needed: each tick is a stored,
        replicated message, and at 10 a second per partition they would outnumber a
        paced router's messages."""
        interval = self.args.tick_ms / 1000
        last = 0
        while not self.stopping:
            await self.sleep(interval)
            if self.stopping or not self.lease.held():
                continue
            wall = int(time.time() * 1000)
            if wall - self.clock < self.args.tick_ms:
                self.counts["ticks_skipped"] += 1
                continue
            last = max(wall, last)
            epoch = str(self.lease.epoch)
            try:
                await self.js.publish(self.subject, b'{"cmd":"tick","at":%d}\n' % last, stream=STREAM,
                                      timeout=max(interval * 5, 1.0),
                                      headers={TICK: epoch, "Nats-Msg-Id": "tick:{}:{}:{}".format(self.p, epoch, last)})
                self.counts["ticks"] += 1
            except Exception:
                self.counts["ticks_failed"] += 1

    async def finish(self):
        while self.pending and self.proc.returncode is None:
            self.progress.clear()
            try:
                await asyncio.wait_for(self.progress.wait(), 5)
            except asyncio.TimeoutError:
                break
        if self.snapshot_task is not None:
            try:
                await asyncio.wait_for(self.snapshot_task, self.args.snapshot_timeout)
            except Exception:
                pass
        if self.audit:
            self.audit.flush()

    # Requests: stats (owner and standbys), resync (the owner, once caught up).

    async def stats(self):
        last = lag = None
        try:
            last = (await asyncio.wait_for(self.js.get_last_msg(STREAM, self.subject), 1.0)).seq
        except NotFoundError:
            last = 0
        except Exception:
            pass
        if self.role == "owner":
            try:
                info = await asyncio.wait_for(self.js.consumer_info(STREAM, self.durable), 1.0)
                lag = info.num_pending + info.num_ack_pending
            except Exception:
                pass
        counts = self.counts
        return {"partition": self.p, "role": self.role, "epoch": self.lease.epoch, "applied_seq": self.applied,
                "stream_last_seq": last, "lag": lag, "events_published": counts["events_published"],
                "messages_published": counts["messages_published"],
                "dropped": counts["dropped_lines"] + counts["dropped_events"] + counts["snapshots_skipped"]
                + counts["undecodable"],
                "dropped_lines": counts["dropped_lines"], "dropped_events": counts["dropped_events"],
                "undecodable": counts["undecodable"],
                "snapshots_stored": counts["snapshots_stored"], "snapshots_failed": counts["snapshots_failed"],
                "snapshots_skipped": counts["snapshots_skipped"], "ticks": counts["ticks"],
                "ticks_skipped": counts["ticks_skipped"], "consumers_remade": counts["consumers_remade"],
                "retries": counts["retries"], "lease_renewals": self.lease.renewals,
                "gaps_filled": self.gaps_filled, "consumer_stalls": counts["consumer_stalls"],
                "routers": self.routers, "pid": os.getpid(),
                "viewer_buckets": self.buckets,
                "lease_owner": self.lease.owner,
                "uptime_s": round(time.monotonic() - self.started, 3)}

    async def on_stats(self, msg):
        if not msg.reply:
            return
        stats = await self.stats()
        if msg.data.strip() == b"prometheus":
            labels = '{{partition="{}",role="{}",pid="{}"}}'.format(self.p, self.role, os.getpid())
            lines = []
            for name, value in stats.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) and name not in ("partition", "pid"):
                    metric = "typingd_shard_" + name + ("_total" if name in COUNTERS else "")
                    lines.append("# TYPE {} {}".format(metric, "counter" if name in COUNTERS else "gauge"))
                    lines.append("{}{} {}".format(metric, labels, value))
            body = ("\n".join(lines) + "\n").encode()
        else:
            body = json.dumps(stats).encode()
        try:
            await self.nc.publish(msg.reply, body)
        except Exception:
            pass

    async def on_resync(self, msg):
        if not msg.reply:
            return
        try:
            shown = self.seen.of(json.loads(msg.data)["viewer"])
        except (ValueError, KeyError, TypeError):
            shown = []
        body = b'{"partition":%d,"epoch":%d,"seq":%d,"viewer_buckets":%d,"indicators":[%s]}' % (
            self.p, self.lease.epoch, self.applied, self.buckets, b",".join(shown))
        try:
            await self.nc.publish(msg.reply, body, headers={EPOCH: str(self.lease.epoch), PARTITION: str(self.p),
                                                            SEQ: str(self.applied)})
        except Exception:
            pass


COUNTERS = frozenset(["events_published", "messages_published", "dropped", "dropped_lines", "dropped_events",
                      "snapshots_stored", "snapshots_failed", "snapshots_skipped", "ticks", "retries",
                      "lease_renewals", "gaps_filled", "consumer_stalls", "ticks_skipped", "consumers_remade",
                      "undecodable"])


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", help=SERVERS_HELP)
    parser.add_argument("--partition", type=int, required=True,
                        help="the partition this shard owns or stands by for: 0..--partitions minus 1")
    conf_option(parser, "--partitions", "PARTITIONS", "partitions of the stream (for the check of --partition)")
    conf_option(parser, "--viewer-buckets", "VIEWER_BUCKETS", "indicators go to typingd.viewers.B, B of 0..this minus "
                                                              "1 by viewer (the same for every shard and gateway)")
    parser.add_argument("--typingd", default=os.environ.get("TYPINGD_BINARY", "typingd"),
                        help="the typingd binary (default: $TYPINGD_BINARY, else typingd on PATH: %(default)s)")
    parser.add_argument("--audit", help="append every event produced, as SEQ<TAB>P|B<TAB>EVENT, and "
                                        "SEQ<TAB>E<TAB>FIRST:PARTITION:EPOCH at the end of each fetch's (or replayed "
                                        "message's) events, to this file")
    conf_option(parser, "--snapshot-every", "SNAPSHOT_EVERY", "messages between snapshots (0: never)")
    conf_option(parser, "--replicas", "REPLICAS", "replicas of the snapshot store and lease bucket when the shard "
                                                  "makes them")
    conf_option(parser, "--lease-ttl", "LEASE_TTL", "seconds a lease lives without renewal (renewed every third of it)")
    conf_option(parser, "--tick-ms", "TICK_MS", "the owner's tick into its partition every this many ms (0: none, "
                                                "when the commands carry their own time and ticks)")
    parser.add_argument("--late-at", default="clamp", choices=["clamp", "none"],
                        help="typingd's --late-at (default clamp, when this typingd has the option)")
    parser.add_argument("--call-timeout", type=float, default=2.0, help="deadline of one broker call, seconds")
    parser.add_argument("--snapshot-timeout", type=float, default=10.0,
                        help="deadline to store or fetch a snapshot, seconds")
    parser.add_argument("--ack-wait", type=float, default=5.0,
                        help="seconds before JetStream delivers an unacknowledged message again: after a "
                             "failover, a delivery that was lost comes again this much later")
    parser.add_argument("--max-ack-pending", type=int, default=4096)
    parser.add_argument("--consumer-replicas", type=int, default=1,
                        help="replicas of the durable consumer's state, kept in memory (default 1: see the README's "
                             "\"Stream configuration\"; a consumer that stops answering is made anew after the last message "
                             "applied)")
    parser.add_argument("--fetch", type=int, default=256, help="messages per fetch (one marker, one message per "
                                                               "subject, one ack each)")
    parser.add_argument("--window", type=int, default=64, help="entries (fetches) written ahead of the events read")
    parser.add_argument("--lifetime", type=float, default=0,
                        help="exit (status 124) after this many seconds, whatever happens (0: never)")
    parser.add_argument("options", nargs="*", help="typingd options (after --; without any: cluster.conf's "
                                                   "TYPINGD_OPTIONS, run from the repository's root)")
    args = resolve(parser, parser.parse_args())
    args.servers = args.servers or default_servers()
    if not 0 <= args.partition < args.partitions:
        parser.error("--partition {} is not one of 0..{} (--partitions {})".format(
            args.partition, args.partitions - 1, args.partitions))
    # Before any lease is taken: a shard that cannot start typingd must not hold one.
    found = shutil.which(args.typingd)
    if found is None:
        parser.error("no typingd at {!r}: not found{} or not executable (--typingd PATH, or TYPINGD_BINARY)".format(
            args.typingd, "" if os.sep in args.typingd else " on PATH"))
    args.typingd = os.path.abspath(found)
    try:
        version = subprocess.run([args.typingd, "--version"], capture_output=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError) as error:
        parser.error("typingd {} does not run: {}".format(args.typingd, error))
    if not version.startswith(b"typingd "):
        parser.error("{} is not typingd: its --version wrote {!r}".format(args.typingd, version[:80]))
    args.late = late_at_option(args.typingd, args.late_at)
    args.typingd_cwd = None
    if not args.options:   # cluster.conf's, whose paths are the repository's
        try:
            args.options = shlex.split(conf("TYPINGD_OPTIONS"))
        except ValueError as error:
            parser.error("TYPINGD_OPTIONS: {}".format(error))
        args.typingd_cwd = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # typingd with these options, on no input: a bad option or phrase table stops it
    # at once (exit 64), and that is said here, before any lease is taken.
    try:
        trial = subprocess.run([args.typingd, "--clock", "manual", "--no-drain", *args.late, *args.options],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=30, cwd=args.typingd_cwd)
    except (OSError, subprocess.SubprocessError) as error:
        parser.error("typingd {} does not run: {}".format(args.typingd, error))
    if trial.returncode != 0:
        said = trial.stderr.decode("utf-8", "replace").strip().splitlines()
        parser.error("typingd does not start with options {} (exit {}): {}".format(
            " ".join(args.options), trial.returncode, said[0] if said else "no message"))
    if trial.stdout:   # on no input a session writes nothing: --version, --help or `help` is no session
        parser.error("typingd with options {} is not a session: on no input it wrote {!r}".format(
            " ".join(args.options), trial.stdout[:80]))

    nc = await connect(args.servers, "shard {}".format(args.partition))
    shard = Shard(args, nc)
    loop = asyncio.get_running_loop()

    def lifetime_over():
        if shard.proc is not None and shard.proc.returncode is None:
            shard.proc.kill()
        os._exit(124)
    if args.lifetime > 0:
        loop.call_later(args.lifetime, lifetime_over)
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, shard.stop)
    await nc.subscribe("typingd.stats.{}".format(args.partition), cb=shard.on_stats)
    await nc.subscribe("typingd.stats", cb=shard.on_stats)
    try:
        await shard.lease.acquire()
    except Stopped:
        await nc.close()
        log("partition {}: standby stopped".format(args.partition))
        return
    shard.role = "owner"
    keeper = asyncio.create_task(shard.lease.keep())
    watchdog = asyncio.create_task(shard.lease.watchdog())

    # Its own session: a Ctrl-C for the shard must not end typingd before the
    # shard has finished what it wrote. Lines up to 256 MiB: a state reply lists
    # every member of a room.
    proc = shard.proc = await asyncio.create_subprocess_exec(
        args.typingd, "--clock", "manual", "--no-drain", *args.late, *args.options,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 28, start_new_session=True,
        cwd=args.typingd_cwd)
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
    log("partition {}: typingd pid {}{}, starting".format(args.partition, proc.pid, " " + " ".join(args.late) if args.late else ""))
    ticker = None
    try:
        await shard.rebuild()
        await nc.subscribe("typingd.resync", cb=shard.on_resync)
        if args.tick_ms > 0:
            ticker = asyncio.create_task(shard.ticker())
        await shard.consume()
    except Stopped:
        pass
    await shard.finish()
    shard.stop()
    if ticker is not None:
        await ticker
    proc.stdin.close()
    await proc.wait()
    await reader
    try:
        await nc.flush(timeout=2)
    except Exception:
        pass
    await shard.lease.release()
    keeper.cancel()
    watchdog.cancel()
    await nc.close()   # everything was flushed above
    counts = shard.counts
    log("partition {}: stopped at seq {}, {} events in {} messages published, {} lines deduplicated, "
        "{} snapshots stored ({} failed, {} skipped), {} messages taken from the stream (a lost delivery, a stall), "
        "{} ticks ({} not needed: stamped commands had moved the clock)".format(
            args.partition, shard.written, counts["events_published"], counts["messages_published"],
            counts["dropped_lines"], counts["snapshots_stored"], counts["snapshots_failed"],
            counts["snapshots_skipped"], shard.gaps_filled, counts["ticks"], counts["ticks_skipped"]))


if __name__ == "__main__":
    asyncio.run(main())
