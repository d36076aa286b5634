#!/usr/bin/env python3
"""What a gateway does: subscribe to one viewer's indicators, from every shard.

    watch.py --servers URLS --viewer ID [--seconds S]

Prints each `indicator` event for the viewer as it arrives, one JSON line each,
from subject typingd.view.<token> (common.token: the id itself when plain, else
'~' and its UTF-8 hex). Ends after --seconds (default: never) or on SIGTERM.
"""
import argparse
import asyncio
import signal
import sys

from common import DEFAULT_SERVERS, connect, token


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", default=DEFAULT_SERVERS, help="comma-separated NATS URLs (default: cluster.sh's nodes)")
    parser.add_argument("--viewer", required=True)
    parser.add_argument("--seconds", type=float, default=0)
    args = parser.parse_args()
    nc = await connect(args.servers, "watch")
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, done.set)
    if args.seconds:
        loop.call_later(args.seconds, done.set)

    async def show(msg):
        sys.stdout.buffer.write(msg.data + b"\n")
        sys.stdout.flush()

    await nc.subscribe("typingd.view." + token(args.viewer), cb=show)
    await nc.flush()
    print("watch: subscribed", file=sys.stderr, flush=True)
    await done.wait()
    await nc.drain()


if __name__ == "__main__":
    asyncio.run(main())
