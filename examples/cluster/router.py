#!/usr/bin/env python3
"""Route typingd commands into the NATS JetStream stream TYPINGD, one subject per partition, and never lose or double a line.

    router.py --partitions 4 [--name NAME] [--stamp] [--rate N] < commands.jsonl

Routing. Each input line goes to the partitions common.routes names: its
conversation's partition (FNV-1a of the conv id), or every partition for
offline, user, tick, stats and snapshot; a line that is not a routable command
goes to partition 0, whose typingd answers it with its error. Ordinary lines are
routed without json.loads (common.Routing: one regular expression checks the
line and finds cmd and conv), most of them in C: route.c, built on first use
with the system's C compiler into .build/ beside it (TYPINGD_ROUTE_C=0, or no
compiler: Python alone; the router says which when it starts reading).
`common.py --self-test` shows all three ways agree.
Blank lines are skipped; a command whose id starts with "typingd:" (the shards'
own) or longer than the cluster's largest message is refused, on stderr.

Batches. A partition sends at most one message every --linger-ms: a line
that comes later than that after the partition's last message goes at once; one
that comes sooner waits for the rest of the period, and every line that arrives
meanwhile (up to --batch-lines / --batch-bytes) goes in the same message on
typingd.cmd.<P>. So a quiet partition adds no delay, and a busy one costs
1000/linger messages a second however many lines it gets (CPU follows messages,
in the nats-servers and the shards most: see README, "Cost"). A partition has
one message in flight at a time, so its lines are stored in input order. Each
message carries
    Nats-Msg-Id:     NAME:P:FIRST:COUNT
    Typingd-Router:  NAME
    Typingd-Lines:   FIRST
    Typingd-Encoding: deflate   (when the lines are stored deflated: smaller)
where FIRST is the number (from 1) of the message's first line among the lines
NAME ever sent to partition P, and COUNT the lines in the message. The numbers
are positions in the input, not counters of this run, so a message re-sent
after a restart has the same id as before (JetStream drops it within its
deduplication window), and a shard drops any line it already applied from NAME
(Typingd-Lines), whatever the batching. Run one router per name at a time;
one name is one input.

Restarts. The router checkpoints, in the key NAME of the KV bucket
typingd-routers (created when missing, min(3, cluster size) replicas), the
input position that is STORED, not the one it read: {"offset": X, "lines":
[c0, c1, ...], ...}: every input line that ends before byte X is in the stream,
and c_P of them went to partition P. It writes it every --checkpoint-ms (a
write is a replicated message too) and at the end. On start it resumes at byte X: a regular file on stdin is seeked, a
pipe has X bytes skipped (or give --input-offset N when stdin already starts at
byte N of the input). --from-start ignores the checkpoint (then shards drop the
lines they already applied from NAME: give a new name to send an input anew). A
checkpoint from before the stream was made anew (ctl.py setup) is ignored.

SIGTERM or SIGINT: stop reading, wait until every line read is stored, write
the checkpoint, print "stored through byte X (N lines); a restart with --name
NAME resumes there" on stderr, exit 0. A second signal exits at once (status
1): the checkpoint then lags what is stored, and a restart re-sends lines that
the dedup ids and the shards drop.

Outages. No deadline ends the router: each publish has a deadline
(--ack-timeout) and is retried with back-off (up to 2 s between tries) with the
same id, for as long as it takes; every 5 s it logs "waiting for the cluster:
partition P not stored for N s". Meanwhile it reads on until --queue-lines are
waiting for a partition, then stops reading.

Time. With --stamp (live use: shards run typingd's manual clock), a command
without "at" gets the router's clock (ms since the Unix epoch, never going
back), inserted as text. Ticks are not the router's: the shard that owns a
partition ticks it. Without --stamp lines pass unchanged (a workload carrying
its own "at", like check.sh's).

Stats. A request on typingd.stats.router.NAME is answered with JSON (lines
read, stored offset, lines per partition, messages, retries, blocked_s, ...),
or Prometheus text when the request's body is "prometheus".

Examples:
    router.py --partitions 4 --stamp --name web1 < /var/log/typing.fifo
    router.py --partitions 4 --name replay --from-start < commands.jsonl

Exit status: 0 when every line read is stored (at the end of the input or after
SIGTERM/SIGINT), 1 after a second signal or a broken input (stdin shorter than
the checkpoint), 64 for a bad option or a checkpoint that does not fit them.
"""
import argparse
import asyncio
import collections
import json
import os
import re
import signal
import stat
import sys
import threading
import time

from common import (COMMAND_SUBJECT, RESERVED, encode_body, SERVERS_HELP, STREAM, Routing, conf_option, connect, default_servers,
                    reserved_id, resolve)

CHECKPOINTS = "typingd-routers"
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
CHUNK = 1 << 17          # bytes read from stdin at a time
READ_AHEAD = 4           # chunks read ahead of the routing
BACKOFF_CAP = 2.0
LOG_EVERY = 5.0


def log(text):
    print("router: " + text, file=sys.stderr, flush=True)


class Partition:
    __slots__ = ("index", "subject", "pending", "sent_at", "routed", "stored", "messages", "ready", "room")

    def __init__(self, index, base):
        self.index = index
        self.subject = COMMAND_SUBJECT.format(index)
        self.pending = []        # lines routed here, not yet in a message
        self.sent_at = 0.0       # when the last message was sent (monotonic)
        self.routed = base       # lines NAME has routed here since its input began
        self.stored = base       # of which stored
        self.messages = 0
        self.ready = asyncio.Event()
        self.room = asyncio.Event()
        self.room.set()


class Router:
    def __init__(self, args, nc, js):
        self.args = args
        self.nc, self.js = nc, js
        self.kv = None
        self.name = args.name
        self.started = time.monotonic()
        self.state = "starting"
        self.routing = Routing(args.partitions)
        self.parts = []
        self.segments = collections.deque()   # (end offset, input lines, routed per partition): in input order
        self.read_offset = self.stored_offset = self.checkpointed = 0
        self.read_lines = self.stored_lines = 0
        self.refused = 0
        self.stopping = False
        self.reading_done = False
        self.queue = None
        self.retries = 0
        self.errors = collections.Counter()
        self.blocked = 0             # partitions waiting for the cluster now
        self.blocked_since = 0.0
        self.blocked_total = 0.0
        self.checkpoints = 0
        self.checkpoint_failures = 0
        self.stream_created = None
        self.save_lock = asyncio.Lock()
        self.last_at = 0
        self.max_line = max(1024, nc.max_payload - 4096)   # room for the headers
        self.batch_bytes = min(args.batch_bytes, self.max_line)

    # -- position ---------------------------------------------------------------

    def begin(self, offset, lines, counts):
        self.read_offset = self.stored_offset = self.checkpointed = offset
        self.read_lines = self.stored_lines = lines
        self.stored_counts = list(counts)
        self.parts = [Partition(p, counts[p]) for p in range(self.args.partitions)]

    def advance(self):
        """Moves the stored position past every read block whose lines are all stored."""
        segments = self.segments
        if not segments:
            return
        stored = [part.stored for part in self.parts]
        while segments and all(s >= c for s, c in zip(stored, segments[0][2])):
            self.stored_offset, self.stored_lines, self.stored_counts = segments.popleft()

    def checkpoint_value(self):
        # Called right after advance(): stored_offset matches the routed counts
        # of its segment, which are the per-partition line numbers reached there.
        return json.dumps({"offset": self.stored_offset, "lines": self.stored_counts,
                           "partitions": self.args.partitions, "input_lines": self.stored_lines,
                           "stream_created": self.stream_created}).encode()

    async def save(self, final=False):
        """Writes the checkpoint: once (a periodic one), or until it is stored (the final one)."""
        async with self.save_lock:
            self.advance()
            offset = self.stored_offset
            if offset == self.checkpointed and not final:
                return
            value = self.checkpoint_value()
            delay, since, logged = 0.05, time.monotonic(), time.monotonic()
            while True:
                try:
                    await asyncio.wait_for(self.kv.put(self.name, value), self.args.ack_timeout)
                    self.checkpoints += 1
                    self.checkpointed = offset
                    return
                except Exception as error:   # a timeout, no leader, a reconnect
                    self.checkpoint_failures += 1
                    if not final:
                        return               # the next period tries again
                    now = time.monotonic()
                    if now - logged >= LOG_EVERY:
                        log("waiting for the cluster: checkpoint not stored for {:.0f} s ({})".format(
                            now - since, describe(error)))
                        logged = now
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, BACKOFF_CAP)

    # -- reading ----------------------------------------------------------------

    def stop(self, signame):
        if self.stopping:
            self.advance()
            log("second {}: exiting before everything read is stored: stored through byte {}, "
                "checkpointed through byte {}; a restart with --name {} resumes at the checkpoint and re-sends "
                "lines the dedup ids and the shards then drop".format(
                    signame, self.stored_offset, self.checkpointed, self.name))
            os._exit(1)
        self.stopping = True
        self.stop_signal = signame
        log("{}: stopped reading at byte {}; waiting until all of it is stored".format(signame, self.read_offset))
        if self.queue is not None:
            self.queue.put_nowait(None)
        for part in self.parts:
            part.ready.set()
            part.room.set()

    def now(self):
        self.last_at = max(self.last_at, int(time.time() * 1000))
        return self.last_at

    def route(self, lines, size, ascii, reserved):
        """Routes a block of whole input lines, `size` bytes with their line ends.
        `ascii`, `reserved`: whether the block is ASCII, holds '"typingd:'."""
        count = len(lines)
        if reserved:
            lines = self.refuse_reserved(lines)
        if size > self.max_line:
            lines = self.refuse_long(lines)   # a line may be longer than a message can be
        out = [[] for _ in self.parts]
        self.routing.split(lines, out, self.now() if self.args.stamp else None, ascii)
        for part, got in zip(self.parts, out):
            if got:
                part.pending += got
                part.routed += len(got)
                part.ready.set()
                if len(part.pending) >= self.args.queue_lines:
                    part.room.clear()
        self.read_offset += size
        self.read_lines += count
        self.segments.append((self.read_offset, self.read_lines, [part.routed for part in self.parts]))

    def refuse_reserved(self, lines):
        kept = []
        for line in lines:
            if b'"typingd:' in line and reserved_id(line):
                self.refused += 1
                log("refused a command whose id starts with {!r} (reserved for shards): {}".format(
                    RESERVED, line[:200].decode("utf-8", "replace")))
            else:
                kept.append(line)
        return kept

    def refuse_long(self, lines):
        kept = []
        for line in lines:
            if len(line) > self.max_line:
                self.refused += 1
                log("refused a line of {} bytes (the cluster takes messages up to {}): {}...".format(
                    len(line), self.nc.max_payload, line[:100].decode("utf-8", "replace")))
            else:
                kept.append(line)
        return kept

    async def read_input(self, skip, flags):
        """Reads stdin (in a thread: a read may block) and routes whole lines."""
        loop = asyncio.get_running_loop()
        self.queue = asyncio.Queue()
        permits = threading.Semaphore(READ_AHEAD)
        thread = threading.Thread(target=read_stdin, args=(loop, self.queue, permits, skip, flags), daemon=True)
        thread.start()
        self.state = "reading"
        rate = self.args.rate
        paced_from, paced_lines = time.monotonic(), 0
        rest = b""
        while not self.stopping:
            chunk = await self.queue.get()
            permits.release()
            if chunk is None or self.stopping:
                break
            if isinstance(chunk, Exception):
                raise chunk
            if chunk == b"":
                if rest:   # a last line without its line end
                    line = rest[:-1] if rest.endswith(b"\r") else rest
                    self.route([line], len(rest), rest.isascii(), b'"typingd:' in rest)
                return
            data = rest + chunk if rest else chunk
            if flags["tail"]:
                # The end of the line stored last: its bytes, but no line of its own.
                end = 2 if data.startswith(b"\r\n") else 1 if data.startswith(b"\n") else 0
                if end or data != b"\r":
                    flags["tail"] = False
                    self.route([], end, True, False)
                    data = data[end:]
                if not data or data == b"\r":
                    rest = data
                    continue
            cut = data.rfind(b"\n")
            if cut < 0:
                rest = data
                continue
            block, rest = data[:cut], data[cut + 1:]
            raw = block.split(b"\n")
            lines = [line[:-1] if line.endswith(b"\r") else line for line in raw] if b"\r" in block else raw
            ascii, reserved = block.isascii(), b'"typingd:' in block
            if not rate:
                self.route(lines, cut + 1, ascii, reserved)
            else:
                # Paced: slices of 10 ms worth of lines, each routed at its time.
                step = max(1, int(rate / 100))
                for i in range(0, len(lines), step):
                    if self.stopping:
                        return   # the rest of the block is not read: the position stays here
                    piece = raw[i:i + step]
                    self.route(lines[i:i + step], sum(map(len, piece)) + len(piece), ascii, reserved)
                    paced_lines += len(piece)
                    ahead = paced_lines / rate - (time.monotonic() - paced_from)
                    if ahead > 0:
                        await asyncio.sleep(ahead)
            for part in self.parts:
                if not part.room.is_set() and not self.stopping:
                    await part.room.wait()

    # -- sending ----------------------------------------------------------------

    async def send(self, part):
        args = self.args
        linger = args.linger_ms / 1000
        while True:
            if not part.pending:
                if self.reading_done:
                    return
                part.ready.clear()
                await part.ready.wait()
                continue
            if linger and not (self.reading_done or self.stopping) and len(part.pending) < args.batch_lines:
                wait = part.sent_at + linger - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
            batch = part.pending[:args.batch_lines]
            size = sum(map(len, batch)) + len(batch)
            while size > self.batch_bytes and len(batch) > 1:
                batch = batch[:len(batch) // 2]
                size = sum(map(len, batch)) + len(batch)
            del part.pending[:len(batch)]
            part.sent_at = time.monotonic()
            if len(part.pending) < args.queue_lines:
                part.room.set()
            first = part.stored + 1
            headers = {"Nats-Msg-Id": "{}:{}:{}:{}".format(self.name, part.index, first, len(batch)),
                       "Typingd-Router": self.name, "Typingd-Lines": str(first)}
            body = encode_body(b"\n".join(batch) + b"\n", headers)
            await self.publish(part, body, headers)
            part.stored += len(batch)
            part.messages += 1

    async def publish(self, part, payload, headers):
        """Publishes one message until JetStream stores it: no deadline but the call's."""
        delay, since, logged = 0.05, None, None
        while True:
            try:
                await self.js.publish(part.subject, payload, timeout=self.args.ack_timeout, stream=STREAM,
                                      headers=headers)
                if since is not None:
                    self.unblock()
                    log("partition {}: stored after {:.1f} s of waiting".format(part.index, time.monotonic() - since))
                return
            except Exception as error:   # a timeout, no responders, a reconnect, no leader
                self.retries += 1
                self.errors[type(error).__name__] += 1
                now = time.monotonic()
                if since is None:
                    since = logged = now
                    self.block()
                elif now - logged >= LOG_EVERY:
                    log("waiting for the cluster: partition {} not stored for {:.0f} s ({})".format(
                        part.index, now - since, describe(error)))
                    logged = now
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_CAP)

    def block(self):
        if self.blocked == 0:
            self.blocked_since = time.monotonic()
        self.blocked += 1

    def unblock(self):
        self.blocked -= 1
        if self.blocked == 0:
            self.blocked_total += time.monotonic() - self.blocked_since

    async def checkpointer(self):
        while True:
            await asyncio.sleep(self.args.checkpoint_ms / 1000)
            await self.save()

    # -- stats ------------------------------------------------------------------

    def stats(self):
        self.advance()
        blocked = self.blocked_total + (time.monotonic() - self.blocked_since if self.blocked else 0)
        return {
            "router": self.name, "state": self.state, "partitions": self.args.partitions,
            "read_offset": self.read_offset, "lines_read": self.read_lines,
            "stored_offset": self.stored_offset, "lines_stored": self.stored_lines,
            "checkpoint_offset": self.checkpointed,
            "partition_lines_routed": [p.routed for p in self.parts],
            "partition_lines_stored": [p.stored for p in self.parts],
            "lines_pending": sum(len(p.pending) for p in self.parts),
            "lines_refused": self.refused,
            "lines_fast_path": self.routing.fast, "lines_json": self.routing.slow,
            "lines_route_c": self.routing.decided,
            "messages_published": sum(p.messages for p in self.parts),
            "retries": self.retries, "blocked_partitions": self.blocked, "blocked_s": round(blocked, 3),
            "checkpoints_written": self.checkpoints, "checkpoint_failures": self.checkpoint_failures,
            "uptime_s": round(time.monotonic() - self.started, 3),
        }

    async def on_stats(self, msg):
        stats = self.stats()
        if msg.data.strip() == b"prometheus":
            body = prometheus(stats).encode()
        else:
            body = json.dumps(stats).encode()
        if msg.reply:
            await msg.respond(body)


def prometheus(stats):
    label = 'router="{}"'.format(stats["router"])
    counters = {"lines_read", "lines_stored", "lines_refused", "lines_fast_path", "lines_json", "lines_route_c",
                "messages_published", "retries", "blocked_s", "checkpoints_written", "checkpoint_failures"}
    out = []
    for key, value in stats.items():
        if key in ("router", "state"):
            continue
        metric = "typingd_router_" + key + ("_total" if key in counters else "")
        kind = "counter" if key in counters else "gauge"
        out.append("# TYPE {} {}".format(metric, kind))
        if isinstance(value, list):
            for p, v in enumerate(value):
                out.append('{}{{{},partition="{}"}} {}'.format(metric, label, p, v))
        else:
            out.append("{}{{{}}} {}".format(metric, label, value))
    out.append("# TYPE typingd_router_state gauge")
    out.append('typingd_router_state{{{},state="{}"}} 1'.format(label, stats["state"]))
    return "\n".join(out) + "\n"


def describe(error):
    return "{}: {}".format(type(error).__name__, error) if str(error) else type(error).__name__


NOT_A_LINE_START = ("the checkpoint's byte is not the start of a line of stdin, so this is not the input this "
                    "--name read: give a new input a new --name (or --from-start to send this one whole)")


def read_stdin(loop, queue, permits, skip, flags):
    """The reading thread: skips `skip` bytes, then hands chunks to the loop
    (b"" at the end, an exception if reading fails), READ_AHEAD at most ahead.
    flags["tail"]: the first chunk starts with the line end that the last line
    stored lacked (set before that chunk is handed over)."""
    try:
        last = b"\n"
        while skip > 0:
            data = os.read(0, min(skip, 1 << 20))
            if not data:
                raise EOFError("stdin ended {} bytes before the checkpoint's position".format(skip))
            skip -= len(data)
            last = data[-1:]
        if last != b"\n":
            # Right after a line only, or after a last line that had no line end
            # (stored through its end): then nothing follows, or the LF or CRLF it
            # lacked.
            permits.acquire()
            data = os.read(0, CHUNK)
            if data == b"\r":
                data += os.read(0, CHUNK)
            if data and not (data.startswith(b"\n") or data.startswith(b"\r\n")):
                raise EOFError(NOT_A_LINE_START)
            flags["tail"] = bool(data)
            loop.call_soon_threadsafe(queue.put_nowait, data)
            if not data:
                return
        while True:
            permits.acquire()
            data = os.read(0, CHUNK)
            loop.call_soon_threadsafe(queue.put_nowait, data)
            if not data:
                return
    except Exception as error:
        loop.call_soon_threadsafe(queue.put_nowait, error)


async def until_done(router, what, call, timeout):
    """Calls `call()` until it succeeds: each try within `timeout`, back-off between
    tries, a log line every 5 s. None when the router is told to stop meanwhile."""
    delay, since, logged = 0.05, time.monotonic(), time.monotonic()
    while not router.stopping:
        try:
            return await asyncio.wait_for(call(), timeout)
        except Exception as error:
            now = time.monotonic()
            if now - logged >= LOG_EVERY:
                log("waiting for the cluster: {} for {:.0f} s ({})".format(what, now - since, describe(error)))
                logged = now
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_CAP)
    return None


async def checkpoint_bucket(js, timeout):
    """The KV bucket typingd-routers, made when missing with min(3, cluster size) replicas."""
    from nats.js.errors import APIError, BucketNotFoundError
    try:
        return await js.key_value(CHECKPOINTS)
    except BucketNotFoundError:
        pass
    for replicas in (3, 2, 1):
        try:
            return await js.create_key_value(bucket=CHECKPOINTS, history=1, replicas=replicas,
                                             description="typingd routers' stored input positions")
        except APIError as error:
            # Fewer nodes than replicas: "insufficient resources", or "replicas > 1
            # not supported in non-clustered mode".
            text = str(error).lower()
            if replicas == 1 or ("replica" not in text and "resources" not in text):
                raise
    raise AssertionError("unreachable")


async def load_checkpoint(router, args):
    """(offset, input lines, lines per partition) to resume at, from the checkpoint."""
    from nats.js.errors import KeyNotFoundError
    zero = (args.input_offset, 0, [0] * args.partitions)

    async def get():
        try:
            return await router.kv.get(args.name)
        except KeyNotFoundError:
            return False
    entry = await until_done(router, "reading the checkpoint", get, args.ack_timeout)
    if not entry:
        return zero
    try:
        saved = json.loads(entry.value)
        offset, counts = int(saved["offset"]), [int(c) for c in saved["lines"]]
    except (ValueError, KeyError, TypeError):
        log("checkpoint {!r} of bucket {} is not one (ignored): {!r}".format(args.name, CHECKPOINTS, entry.value[:200]))
        return zero
    if saved.get("stream_created") != router.stream_created:
        log("checkpoint of {} (byte {}) is from an earlier stream {}, made anew since: starting from the input's "
            "beginning".format(args.name, offset, STREAM))
        return zero
    if len(counts) != args.partitions:
        log("the checkpoint of {} is for {} partitions, not {}: its line numbers would not fit. Give the same "
            "--partitions, or a new --name (a new input)".format(args.name, len(counts), args.partitions))
        sys.exit(64)
    if offset < args.input_offset:
        log("the checkpoint of {} is at byte {}, before stdin's start (--input-offset {}): the lines in between "
            "were never stored. Give stdin from byte {} (or --from-start)".format(
                args.name, offset, args.input_offset, offset))
        sys.exit(1)
    return offset, int(saved.get("input_lines", 0)), counts


async def main(args):
    loop = asyncio.get_running_loop()
    holder = {}

    def on_signal(signame):
        router = holder.get("router")
        if router is None:
            log("{} before connecting: nothing read, exiting".format(signame))
            os._exit(0)
        router.stop(signame)
    for signum, signame in ((signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")):
        loop.add_signal_handler(signum, on_signal, signame)

    since, logged = time.monotonic(), time.monotonic()
    while True:
        try:
            nc = await connect(args.servers, "router " + args.name, timeout=5)
            break
        except Exception as error:
            if time.monotonic() - logged >= LOG_EVERY:
                log("waiting for the cluster: no server at {} for {:.0f} s ({})".format(
                    args.servers, time.monotonic() - since, describe(error)))
                logged = time.monotonic()
            await asyncio.sleep(1)
    js = nc.jetstream()
    router = Router(args, nc, js)
    holder["router"] = router

    info = await until_done(router, "stream {} (made by ctl.py setup)".format(STREAM),
                            lambda: js.stream_info(STREAM), args.ack_timeout)
    if info is None:
        return 0
    router.stream_created = info.created.isoformat() if info.created else None
    router.kv = await until_done(router, "bucket " + CHECKPOINTS, lambda: checkpoint_bucket(js, args.ack_timeout),
                                 args.ack_timeout * 3)
    if router.kv is None:
        return 0
    if args.from_start:
        offset, lines, counts = args.input_offset, 0, [0] * args.partitions
    else:
        offset, lines, counts = await load_checkpoint(router, args)
    router.begin(offset, lines, counts)
    skip = offset - args.input_offset
    flags = {"tail": False}
    if skip:
        mode = os.fstat(0).st_mode
        if stat.S_ISREG(mode):
            position = os.lseek(0, skip, os.SEEK_CUR)
            if position > os.fstat(0).st_size:
                log("stdin (a file of {} bytes) ends before the checkpoint's byte {}: is it the same input?".format(
                    os.fstat(0).st_size, offset))
                return 1
            if position < os.fstat(0).st_size and os.pread(0, 1, position - 1) != b"\n":
                if os.pread(0, 1, position) != b"\n" and os.pread(0, 2, position) != b"\r\n":
                    log("{}: {}".format(args.name, NOT_A_LINE_START))
                    return 1
                flags["tail"] = True   # the line end the last line stored lacked
            skip = 0
    await nc.subscribe("typingd.stats.router." + args.name, cb=router.on_stats)
    await nc.flush()
    log("{}: reading at byte {} (input line {}){}; routing {}".format(
        args.name, offset, lines + 1, ", from its checkpoint (--from-start ignores it)" if skip or lines else "",
        "with route.c" if router.routing.native else "in Python only ({})".format(router.routing.native_why)))
    senders = [asyncio.create_task(router.send(part)) for part in router.parts]
    checkpointer = asyncio.create_task(router.checkpointer())
    status = 0
    try:
        await router.read_input(skip, flags)
    except EOFError as error:
        log("{}: {}".format(args.name, error) if str(error) == NOT_A_LINE_START else
            "{}: is it the same input?".format(error))
        status = 1
    router.reading_done = True
    router.state = "draining"
    for part in router.parts:
        part.ready.set()
    for sender in senders:
        await sender
    checkpointer.cancel()
    await router.save(final=True)
    router.state = "stopped"
    seconds = time.monotonic() - router.started
    stats = router.stats()
    retried = ", ".join("{} {}".format(n, name) for name, n in sorted(router.errors.items()))
    log("{} lines in {:.2f} s ({:.0f} lines/s), {} messages ({} fast-path, {} json lines), {} retries{}{}".format(
        stats["lines_read"] - lines, seconds, (stats["lines_read"] - lines) / seconds if seconds else 0,
        stats["messages_published"], stats["lines_fast_path"], stats["lines_json"], router.retries,
        " ({})".format(retried) if retried else "",
        "; {} lines refused".format(router.refused) if router.refused else ""))
    ending = "{} ".format(router.stop_signal) if router.stopping else "end of input: "
    log("{}stored through byte {} ({} lines); a restart with --name {} resumes there".format(
        ending, router.stored_offset, router.stored_lines, args.name))
    try:
        await asyncio.wait_for(nc.close(), 5)
    except Exception:
        pass
    return status


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(64, "router.py: {}\n(router.py --help explains every option)\n".format(message))


def parse(argv):
    doc = __doc__
    parser = Parser(prog="router.py", description=doc.split("\n\n")[0], epilog=doc.split("\n\n", 2)[2],
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", help=SERVERS_HELP)
    conf_option(parser, "--partitions", "PARTITIONS", "number of partitions: the same for every router and shard "
                                                      "of a stream")
    parser.add_argument("--name", default="router",
                        help="this input's name: dedup ids, headers, checkpoint key (default: %(default)s); "
                             "letters, digits, _ and -")
    parser.add_argument("--stamp", action="store_true", help="stamp \"at\" (ms since the epoch) on commands that have none")
    parser.add_argument("--linger-ms", type=float, default=100.0,
                        help="a partition's messages are at least this far apart; lines arriving meanwhile share "
                             "the next one (default: %(default)s; 0: send as soon as the previous one is stored)")
    parser.add_argument("--batch-lines", type=int, default=4000, help="lines per message at most (default: %(default)s)")
    parser.add_argument("--batch-bytes", type=int, default=512 * 1024,
                        help="bytes of lines per message at most, before they are deflated (default: %(default)s; "
                             "at most the servers' max_payload)")
    parser.add_argument("--queue-lines", type=int, default=20000,
                        help="lines waiting for one partition before the router stops reading (default: %(default)s)")
    parser.add_argument("--ack-timeout", type=float, default=2.0,
                        help="deadline of one publish or checkpoint write, retried after it (default: %(default)s s)")
    parser.add_argument("--checkpoint-ms", type=float, default=1000.0,
                        help="how often the stored position is checkpointed (default: %(default)s)")
    parser.add_argument("--rate", type=float, default=0, help="at most this many lines a second (default: no limit)")
    parser.add_argument("--input-offset", type=int, default=0, metavar="N",
                        help="stdin starts at byte N of the input (the checkpoint's positions count from the input's "
                             "first byte)")
    parser.add_argument("--from-start", action="store_true", help="ignore the checkpoint: start at stdin's first byte")
    parser.add_argument("--retry-for", help=argparse.SUPPRESS)
    parser.add_argument("--tick-ms", help=argparse.SUPPRESS)
    args = resolve(parser, parser.parse_args(argv))
    args.servers = args.servers or default_servers()
    if args.retry_for is not None:
        parser.error("--retry-for is gone: the router waits for the cluster as long as it takes, and says so "
                     "every 5 s; stop it with SIGTERM (it then drains and checkpoints)")
    if args.tick_ms is not None:
        parser.error("--tick-ms is gone: the shard that owns a partition ticks it (shard.py --tick-ms)")
    if args.partitions < 1:
        parser.error("--partitions must be at least 1, not {}".format(args.partitions))
    if not NAME.match(args.name):
        parser.error("--name {!r}: use 1 to 64 letters, digits, _ or - (it is a header, a subject token "
                     "and a key)".format(args.name))
    for option in ("linger_ms", "rate", "input_offset"):
        if getattr(args, option) < 0:
            parser.error("--{} must not be negative".format(option.replace("_", "-")))
    for option in ("batch_lines", "batch_bytes", "queue_lines", "ack_timeout", "checkpoint_ms"):
        if getattr(args, option) <= 0:
            parser.error("--{} must be positive".format(option.replace("_", "-")))
    if args.from_start and args.input_offset:
        parser.error("--from-start reads stdin from its first byte: it does not go with --input-offset")
    return args


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
