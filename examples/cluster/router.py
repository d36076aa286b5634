#!/usr/bin/env python3
"""Route typingd commands into a NATS JetStream stream, one subject per partition.

    router.py --servers nats://127.0.0.1:4222 --partitions 4 [--stamp] < commands.jsonl

Each input line goes to the partitions the routing rules name (common.routes):
its conversation's partition, or every partition for offline, user, tick, stats
and snapshot. Lines travel in batches: while a partition's last batch waits for
JetStream's acknowledgement, the next lines gather, so an idle router sends each
line at once and a busy one sends hundreds per message. A partition has one batch
in flight at a time, so its lines are stored in input order; each batch carries a
deduplication id (Nats-Msg-Id), so a batch retried after a leader failover is
stored once. Retries go on for --retry-for seconds, then the router exits 1.

With --stamp (live use: shards run typingd's manual clock), every command without
an "at" gets the router's clock (ms since the Unix epoch, never going back), and a
tick goes to every partition each --tick-ms so timeouts fire in idle partitions.
Without it, lines pass unchanged (a workload that carries its own "at").

Exits 0 when every line is stored; prints a summary on stderr.
"""
import argparse
import asyncio
import json
import os
import sys
import time

from common import DEFAULT_SERVERS, COMMAND_SUBJECT, RESERVED, STREAM, connect, reserved_id, routes


class Partition:
    def __init__(self, index, limit):
        self.index = index
        self.lines = []          # waiting for the next batch
        self.bytes = 0
        self.limit = limit       # lines held before the reader waits
        self.ready = asyncio.Event()
        self.room = asyncio.Event()
        self.room.set()
        self.batches = 0
        self.sent_lines = 0

    def add(self, line):
        self.lines.append(line)
        self.bytes += len(line) + 1
        self.ready.set()
        if len(self.lines) >= self.limit:
            self.room.clear()


class Router:
    def __init__(self, args, js):
        self.args = args
        self.js = js
        self.parts = [Partition(p, args.queue_lines) for p in range(args.partitions)]
        self.done = False
        self.retries = 0
        self.errors = {}
        self.refused = 0
        self.longest = 0.0       # the longest a batch waited to be stored, retries included
        self.failure = None
        self.last_at = 0
        self.prefix = "{}-{}-".format(args.name, os.getpid()) if args.name == "router" else args.name + "-"

    def now(self):
        self.last_at = max(self.last_at, int(time.time() * 1000))
        return self.last_at

    async def route(self, line):
        if reserved_id(line):
            self.refused += 1
            print("router: refused a command whose id starts with {!r} (reserved for shards): {}".format(
                RESERVED, line[:200].decode("utf-8", "replace")), file=sys.stderr, flush=True)
            return
        if self.args.stamp:
            try:
                command = json.loads(line)
            except (ValueError, UnicodeDecodeError):
                command = None
            if isinstance(command, dict) and "at" not in command:
                command["at"] = self.now()
                line = json.dumps(command, ensure_ascii=False, separators=(",", ":")).encode()
        for p in routes(line, self.args.partitions):
            part = self.parts[p]
            await part.room.wait()
            if self.failure:
                raise self.failure
            part.add(line)

    async def publish(self, part, payload, headers):
        """Publishes one batch until JetStream stores it (or the time is up)."""
        started = time.monotonic()
        deadline = started + self.args.retry_for
        while True:
            try:
                await self.js.publish(COMMAND_SUBJECT.format(part.index), payload,
                                      timeout=self.args.ack_timeout, stream=STREAM, headers=headers)
                self.longest = max(self.longest, time.monotonic() - started)
                return
            except Exception as error:   # a timeout, no responders, a reconnect, a full buffer
                self.retries += 1
                self.errors[type(error).__name__] = self.errors.get(type(error).__name__, 0) + 1
                if time.monotonic() > deadline:
                    # os._exit: the thread reading stdin may be blocked in read.
                    print("router: partition {}: not stored after {} s ({}); giving up".format(
                        part.index, self.args.retry_for, type(error).__name__), file=sys.stderr, flush=True)
                    os._exit(1)
                await asyncio.sleep(0.1)

    async def sender(self, part):
        try:
            await self.send(part)
        except BaseException as error:
            # Unblock the reader, which stops at the next line.
            self.failure = self.failure or error
            for other in self.parts:
                other.room.set()
            raise

    async def send(self, part):
        while True:
            await part.ready.wait()
            if not part.lines:
                part.ready.clear()
                if self.done:
                    return
                continue
            take, size = 0, 0
            while take < len(part.lines) and take < self.args.batch_lines and size < self.args.batch_bytes:
                size += len(part.lines[take]) + 1
                take += 1
            batch, part.lines = part.lines[:take], part.lines[take:]
            part.bytes -= size
            if len(part.lines) < part.limit:
                part.room.set()
            part.batches += 1
            headers = {"Nats-Msg-Id": "{}{}-{}".format(self.prefix, part.index, part.batches)}
            await self.publish(part, b"\n".join(batch) + b"\n", headers)
            part.sent_lines += len(batch)

    async def ticker(self):
        while not self.done:
            await asyncio.sleep(self.args.tick_ms / 1000)
            if not self.done:
                await self.route(json.dumps({"cmd": "tick", "at": self.now()}).encode())

    def finish(self):
        self.done = True
        for part in self.parts:
            part.ready.set()


async def read_lines(router):
    """Reads stdin in a thread, in large chunks, and routes whole lines."""
    loop = asyncio.get_running_loop()
    stdin = sys.stdin.buffer
    rest = b""
    count = 0
    rate = router.args.rate
    started = time.monotonic()
    while True:
        chunk = await loop.run_in_executor(None, stdin.read1, 1 << 16)
        if not chunk:
            break
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if line.strip():
                await router.route(line)
                count += 1
                if rate and count % 100 == 0:
                    ahead = count / rate - (time.monotonic() - started)
                    if ahead > 0:
                        await asyncio.sleep(ahead)
    if rest.strip():
        await router.route(rest)
        count += 1
    return count


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", default=DEFAULT_SERVERS, help="comma-separated NATS URLs (default: cluster.sh's nodes)")
    parser.add_argument("--partitions", type=int, required=True)
    parser.add_argument("--stamp", action="store_true", help="stamp 'at' and send ticks (live use)")
    parser.add_argument("--tick-ms", type=int, default=100)
    parser.add_argument("--batch-lines", type=int, default=1000)
    parser.add_argument("--batch-bytes", type=int, default=256 * 1024)
    parser.add_argument("--queue-lines", type=int, default=20000, help="lines held per partition")
    parser.add_argument("--ack-timeout", type=float, default=2.0)
    parser.add_argument("--retry-for", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=0, help="at most this many lines a second (0: no limit)")
    parser.add_argument("--name", default="router",
                        help="deduplication id prefix (default: router-PID). Ids protect the retries "
                             "of one router run; run one router per name at a time")
    args = parser.parse_args()
    if args.partitions < 1:
        parser.error("--partitions must be at least 1")

    nc = await connect(args.servers, "router")
    js = nc.jetstream()
    router = Router(args, js)
    started = time.monotonic()
    senders = [asyncio.create_task(router.sender(part)) for part in router.parts]
    ticker = asyncio.create_task(router.ticker()) if args.stamp and args.tick_ms > 0 else None
    count = await read_lines(router)
    router.finish()
    if ticker:
        ticker.cancel()
    await asyncio.gather(*senders)
    seconds = time.monotonic() - started
    await nc.drain()
    batches = sum(p.batches for p in router.parts)
    retried = ", ".join("{} {}".format(n, name) for name, n in sorted(router.errors.items()))
    print("router: {} lines in {:.2f} s ({:.0f} lines/s), {} messages, {} retries{}; "
          "longest wait for a batch to be stored {:.2f} s{}".format(
              count, seconds, count / seconds if seconds else 0, batches, router.retries,
              " ({})".format(retried) if retried else "", router.longest,
              "; {} lines refused".format(router.refused) if router.refused else ""), file=sys.stderr)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(130)
