#!/usr/bin/env python3
"""A gateway for a set of viewers: their indicators from every shard, kept right through gaps.

    watch.py [--servers URLS] --viewer ID [--viewer ID ...] [--all-viewers]
             [--partitions N] [--finals FILE] [--seconds S] [--slow-ms N]

Subscribes to typingd.viewers.<B> of each viewer's bucket (common.viewer_subject:
FNV-1a of the id modulo --viewer-buckets), or once to typingd.viewers.* with
--all-viewers (the viewers given, and every other it hears of). A message's body
is one or more event lines (a shard sends the events of one fetch for one bucket
as one message); each indicator line of one of its viewers is printed on stdout
as it is applied (the other viewers' lines of the bucket are skipped), and kept
as the viewer's current indicator for its screen (conv, thread, view). Those a
resync answer sets are applied, not printed: stdout is what the shards sent.

Every message carries Typingd-Epoch, Typingd-Partition and Typingd-Seq. The
gateway keeps the highest epoch seen per partition and drops a message with a
lower one (a deposed owner's late events). It RESYNCS after a slow-consumer
error (messages were dropped), a reconnect (messages may have been lost), or a
new epoch for a partition (a takeover: its catch-up sends only each viewer's
last indicator): for each viewer, a request on typingd.resync with body
{"viewer": ID}; each partition's owner answers {"partition", "epoch", "seq",
"indicators"} (the last non-empty indicator per screen it published for that
viewer). The gateway takes one answer per partition (the highest epoch, and
not lower than one it has seen), replaces the viewer's screens of that
partition with it (a screen not listed is empty), but for a screen a later
message already set (the answer and the messages come on two subscriptions,
taken in either order), and drops the messages still queued that the answer
covers (Typingd-Seq at or below its "seq").
Partitions that did not answer are asked again (back-off up to 2 s) until they
do; another trigger during a resync starts one more after it.

At the end (--seconds, SIGTERM or SIGINT) it finishes what is queued (at most
--drain-s seconds), then writes every viewer's final indicator per screen, one
JSON line each: {"viewer", "conv", "thread", "view", "indicator"} (the last
indicator event applied, or null), to --finals (default: stderr's summary only),
and a summary on stderr. --slow-ms N blocks the gateway N ms per message (a busy
gateway: it reproduces a slow consumer), --pending-limit its queue in messages.
A shard whose resync answer or owner announcement (typingd.owner.P, sent once
it is caught up) names another number of viewer buckets than --viewer-buckets
(without --all-viewers) ends the gateway with exit status 2: its viewers'
indicators would go to subjects it does not subscribe to.
Defaults for --servers, --partitions and --viewer-buckets come from cluster.conf
(PORT_BASE, PARTITIONS, VIEWER_BUCKETS).
"""
import argparse
import asyncio
import json
import signal
import sys
import time

import nats
from nats.errors import SlowConsumerError

from common import SERVERS_HELP, conf_option, default_servers, partition_of, resolve, servers, viewer_subject

EPOCH, PARTITION, SEQ = "Typingd-Epoch", "Typingd-Partition", "Typingd-Seq"


def log(text):
    print("watch: " + text, file=sys.stderr, flush=True)


class Gateway:
    def __init__(self, args, nc):
        self.args, self.nc = args, nc
        self.partitions = args.partitions
        self.all = args.all_viewers
        self.viewers = set(args.viewer)
        # viewer -> {(conv, thread, view): (line, partition)}
        self.screens = {v: {} for v in self.viewers}
        self.epoch = {}            # partition -> highest epoch seen
        self.floor = {}            # (viewer, partition) -> (epoch, seq) a resync covered
        self.counts = dict(messages=0, indicators=0, stale_epoch=0, covered=0, slow_consumer=0,
                           reconnects=0, new_epochs=0, resyncs=0, resync_requests=0, resync_retries=0)
        self.wanted = asyncio.Event()   # a resync is due
        self.resyncing = False
        self.slow = args.slow_ms / 1000
        self.received = open(args.received, "wb") if args.received else None
        self.mismatch = None   # a shard that sends by another number of viewer buckets
        self.stop = asyncio.Event()   # main's: set to end at once

    # Messages.
    async def on_message(self, msg):
        if self.slow:
            time.sleep(self.slow)   # blocking on purpose: a gateway busy for that long
        self.counts["messages"] += 1
        headers = msg.headers or {}
        try:
            epoch, p, seq = int(headers[EPOCH]), int(headers[PARTITION]), int(headers[SEQ])
        except (KeyError, ValueError):
            epoch = p = seq = None
        if p is not None:
            known = self.epoch.get(p)
            if known is not None and epoch < known:
                self.counts["stale_epoch"] += 1
                return
            if known is None or epoch > known:
                self.epoch[p] = epoch
                if known is not None:
                    self.counts["new_epochs"] += 1
                    log("partition {}: new epoch {} (was {}): resync".format(p, epoch, known))
                    self.want_resync()
        for line in msg.data.split(b"\n"):
            if not line.strip():
                continue
            event = json.loads(line)
            if event.get("event") != "indicator":
                continue
            viewer = event["viewer"]
            if viewer not in self.viewers:
                if not self.all:
                    continue
                self.viewers.add(viewer)
                self.screens[viewer] = {}
            if p is not None:
                floor = self.floor.get((viewer, p))
                if floor is not None and (epoch, seq) <= floor:
                    self.counts["covered"] += 1   # a resync already gave this or later
                    continue
            self.apply(viewer, event, line, p, (epoch, seq) if p is not None else None)

    def apply(self, viewer, event, line, p, stamp=None, show=True):
        key = (event["conv"], event.get("thread"), event.get("view"))
        if p is None:
            p = partition_of(event["conv"], self.partitions)
        self.screens[viewer][key] = (line, p, stamp or (0, 0))
        if show:   # received as an event (a resync's answer is not printed)
            self.counts["indicators"] += 1
            sys.stdout.buffer.write(line + b"\n")
            if self.received:
                self.received.write(b"%d\t%s\n" % (int(time.time() * 1000), line))

    def check_buckets(self, p, buckets):
        """Ends the gateway when a shard sends indicators by another number of viewer
        buckets: its viewers' indicators go to subjects this gateway does not
        subscribe to."""
        if type(buckets) is int and buckets != self.args.viewer_buckets and not self.all \
                and self.mismatch is None:
            self.mismatch = "partition {}'s shard sends indicators in {} viewer buckets, this gateway " \
                            "subscribes by {} (--viewer-buckets, VIEWER_BUCKETS): give both the same".format(
                                p, buckets, self.args.viewer_buckets)
            self.stop.set()

    async def on_owner(self, msg):
        """typingd.owner.P: a shard that has just become its partition's owner."""
        try:
            body = json.loads(msg.data)
            self.check_buckets(int(body["partition"]), body.get("viewer_buckets"))
        except (ValueError, KeyError, TypeError, OverflowError):
            pass

    # Resync.
    def want_resync(self):
        self.wanted.set()

    async def on_error(self, error):
        if isinstance(error, SlowConsumerError):
            self.counts["slow_consumer"] += 1
            if self.counts["slow_consumer"] in (1, 10, 100, 1000, 10000):
                log("slow consumer: messages dropped ({} so far): resync".format(self.counts["slow_consumer"]))
            self.want_resync()
        else:
            log("nats: {}".format(error or type(error).__name__))

    async def on_reconnect(self):
        self.counts["reconnects"] += 1
        log("reconnected to {}: resync".format(self.nc.connected_url.netloc if self.nc.connected_url else "?"))
        self.want_resync()

    async def resync_loop(self):
        while True:
            await self.wanted.wait()
            self.wanted.clear()
            self.resyncing = True
            try:
                await self.resync()
            except Exception as error:   # never let the loop die
                log("resync failed: {!r}".format(error))
                self.wanted.set()
                await asyncio.sleep(0.5)
            finally:
                self.resyncing = False

    async def resync(self, patience=None):
        """Every viewer's screens from one answer per partition, asked until each answered."""
        self.counts["resyncs"] += 1
        started = time.monotonic()
        missing = {v: set(range(self.partitions)) for v in sorted(self.viewers)}
        delay = 0.2
        while missing:
            viewers = list(missing)
            answers = await asyncio.gather(*(self.ask(v, missing[v]) for v in viewers))
            for viewer, answered in zip(viewers, answers):
                missing[viewer] -= answered
                if not missing[viewer]:
                    del missing[viewer]
            if not missing:
                break
            if patience is not None and time.monotonic() - started > patience:
                log("resync: {} viewers without an answer from every partition after {:.1f} s; left".format(
                    len(missing), patience))
                return
            self.counts["resync_retries"] += 1
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)
        log("resync {} done in {:.2f} s for {} viewers".format(
            self.counts["resyncs"], time.monotonic() - started, len(self.viewers)))

    async def ask(self, viewer, partitions, timeout=1.0):
        """One request; the partitions whose answer was taken."""
        inbox = self.nc.new_inbox()
        best = {}
        done = asyncio.Event()

        async def answer(msg):
            try:
                body = json.loads(msg.data)
                p, epoch, seq = int(body["partition"]), int(body["epoch"]), int(body["seq"])
            except (ValueError, KeyError, TypeError, OverflowError):
                return
            self.check_buckets(p, body.get("viewer_buckets"))
            if p in partitions and (p not in best or epoch > best[p][0]):
                best[p] = (epoch, seq, body["indicators"])
            if len(best) == len(partitions):
                done.set()

        sub = await self.nc.subscribe(inbox, cb=answer)
        self.counts["resync_requests"] += 1
        try:
            await self.nc.publish("typingd.resync", json.dumps({"viewer": viewer}).encode(), reply=inbox)
            try:
                await asyncio.wait_for(done.wait(), timeout)
            except asyncio.TimeoutError:
                pass
        finally:
            await sub.unsubscribe()
        taken = set()
        for p, (epoch, seq, indicators) in best.items():
            known = self.epoch.get(p)
            if known is not None and epoch < known:
                continue   # a deposed owner answered: ask again
            self.epoch[p] = epoch
            stamp = (epoch, seq)
            screens = self.screens.setdefault(viewer, {})
            # The answer is the state at `stamp`; a screen set by a message after it
            # (queued apart from the answer, and taken first) keeps that newer state.
            listed = {}
            for event in indicators:
                listed[(event["conv"], event.get("thread"), event.get("view"))] = event
            for key in [k for k, (_, q, _) in screens.items() if q == p and k not in listed]:
                if screens[key][2] <= stamp:
                    del screens[key]   # not listed: nothing shown now
            for key, event in listed.items():
                if key not in screens or screens[key][2] <= stamp:
                    line = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
                    self.apply(viewer, event, line, p, stamp, show=False)
            self.floor[(viewer, p)] = max(stamp, self.floor.get((viewer, p), (0, 0)))
            taken.add(p)
        return taken

    def finals(self):
        for viewer in sorted(self.viewers):
            for key, (line, _, _) in sorted(self.screens.get(viewer, {}).items(), key=lambda kv: json.dumps(kv[0])):
                event = json.loads(line)
                yield {"viewer": viewer, "conv": key[0], "thread": key[1], "view": key[2],
                       "indicator": event if event.get("typing") else None}


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", help=SERVERS_HELP)
    parser.add_argument("--viewer", action="append", default=[], help="a viewer id (repeat for more)")
    parser.add_argument("--viewers-file", help="viewer ids, one a line")
    parser.add_argument("--all-viewers", action="store_true", help="one subscription, typingd.viewers.*: the viewers "
                                                                   "given and every other it hears of")
    conf_option(parser, "--partitions", "PARTITIONS", "partitions")
    conf_option(parser, "--viewer-buckets", "VIEWER_BUCKETS", "viewer buckets (the shards' --viewer-buckets)")
    parser.add_argument("--finals", help="write each viewer's final indicator per screen here at the end")
    parser.add_argument("--received", help="also write each indicator applied here, after the wall clock (ms) "
                                           "and a tab")
    parser.add_argument("--seconds", type=float, default=0, help="end after this many seconds (default: never)")
    parser.add_argument("--slow-ms", type=float, default=0, help="block this many ms per message")
    parser.add_argument("--pending-limit", type=int, default=65536, help="messages queued per subscription before "
                                                                        "the client drops (slow consumer)")
    parser.add_argument("--drain-s", type=float, default=60, help="at the end, finish the queue for at most this long")
    parser.add_argument("--no-resync", action="store_true", help="never resync (to see what it costs)")
    args = resolve(parser, parser.parse_args())
    args.servers = args.servers or default_servers()
    if args.viewers_file:
        with open(args.viewers_file) as file:
            args.viewer += [line.rstrip("\n") for line in file if line.strip()]
    if not args.viewer and not args.all_viewers:
        parser.error("give --viewer, --viewers-file or --all-viewers")

    gateway = None

    async def error_cb(error):
        if gateway is not None:
            await gateway.on_error(error)

    async def reconnected_cb():
        if gateway is not None:
            await gateway.on_reconnect()

    async def disconnected_cb():
        log("disconnected")

    nc = await nats.connect(servers=servers(args.servers), name="watch", max_reconnect_attempts=-1,
                            reconnect_time_wait=0.2, connect_timeout=2, error_cb=error_cb,
                            reconnected_cb=reconnected_cb, disconnected_cb=disconnected_cb)
    gateway = Gateway(args, nc)
    if args.no_resync:
        gateway.want_resync = lambda: None
    done = gateway.stop
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, done.set)
    if args.seconds:
        loop.call_later(args.seconds, done.set)

    subs = []
    if args.all_viewers:
        subs.append(await nc.subscribe("typingd.viewers.*", cb=gateway.on_message,
                                       pending_msgs_limit=args.pending_limit))
    else:
        for subject in sorted(set(viewer_subject(viewer, args.viewer_buckets) for viewer in args.viewer)):
            subs.append(await nc.subscribe(subject, cb=gateway.on_message, pending_msgs_limit=args.pending_limit))
    await nc.subscribe("typingd.owner.*", cb=gateway.on_owner)
    await nc.flush()
    resyncer = asyncio.create_task(gateway.resync_loop())
    log("subscribed: {} viewers{}".format(len(gateway.viewers), " and every other" if args.all_viewers else ""))
    if gateway.viewers and not args.no_resync:
        # Whatever was shown before it started: the owners up now (no retries).
        await gateway.resync(patience=0)
    await done.wait()
    if gateway.mismatch is not None:
        log(gateway.mismatch)
        await nc.close()
        sys.exit(2)

    # Finish what the server has sent (a flush: its answer comes after every
    # message sent before it), what is queued and any resync due; then the finals.
    deadline = time.monotonic() + args.drain_s
    while time.monotonic() < deadline:
        try:
            await nc.flush(timeout=max(1, deadline - time.monotonic()))
        except Exception:
            pass
        while time.monotonic() < deadline and (any(s.pending_msgs for s in subs) or gateway.resyncing
                                               or gateway.wanted.is_set()):
            await asyncio.sleep(0.05)
        before = gateway.counts["messages"]
        try:
            await nc.flush(timeout=max(1, deadline - time.monotonic()))
        except Exception:
            pass
        await asyncio.sleep(0.05)
        if gateway.counts["messages"] == before and not any(s.pending_msgs for s in subs) \
                and not gateway.resyncing and not gateway.wanted.is_set():
            break
    resyncer.cancel()
    sys.stdout.flush()
    if gateway.received:
        gateway.received.close()
    finals = list(gateway.finals())
    if args.finals:
        with open(args.finals, "w") as file:
            for item in finals:
                file.write(json.dumps(item, ensure_ascii=False) + "\n")
    c = gateway.counts
    log("{} viewers, {} screens ({} showing someone): {} messages, {} indicators applied; dropped: {} of a lower "
        "epoch, {} covered by a resync, {} slow-consumer errors; {} reconnects, {} new epochs, {} resyncs "
        "({} requests, {} retries)".format(
            len(gateway.viewers), len(finals), sum(1 for f in finals if f["indicator"]), c["messages"],
            c["indicators"], c["stale_epoch"], c["covered"], c["slow_consumer"], c["reconnects"], c["new_epochs"],
            c["resyncs"], c["resync_requests"], c["resync_retries"]))
    try:
        await asyncio.wait_for(nc.close(), 5)
    except Exception:
        pass


if __name__ == "__main__":
    asyncio.run(main())
