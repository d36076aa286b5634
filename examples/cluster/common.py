"""What the router, the shards and the checker share: routing, subjects, names.

Routing (Protocol.md, "Running several typingd processes"): a command that names a
conversation goes to that conversation's partition; user-level commands and the
questions about the whole process go to every partition. A partition is
FNV-1a (32 bits) of the conversation id's UTF-8 bytes, modulo the number of
partitions. Conversation ids never become subject tokens: commands travel on
typingd.cmd.<partition number>, so any UTF-8 id is routable.
"""
import json
import re

STREAM = "TYPINGD"
# cluster.sh's three nodes (PORT_BASE 14222): every script's default --servers.
DEFAULT_SERVERS = "nats://127.0.0.1:14222,nats://127.0.0.1:14223,nats://127.0.0.1:14224"
SNAPSHOTS = "typingd-snapshots"   # the object store: one object per partition
COMMAND_SUBJECT = "typingd.cmd.{}"

# One source of truth for the routing rules. A thread lives in its conversation:
# `type`, `send`, `open` and `query` with a `thread` go by their `conv` like the
# others; `user` (names, settings, locale, receive_typing) goes everywhere.
CONVERSATION_COMMANDS = frozenset(
    ["join", "type", "send", "leave", "remove", "open", "close", "query"])
EVERY_PARTITION = frozenset(["offline", "user", "tick", "stats", "snapshot"])

# The shard's own marker after every message: a query for a conversation nobody
# uses, whose reply (a `state` event with this id) marks where the message's
# events end. While catching up, a shard also marks the end of each line's
# events (LINE_MARKER). Ids starting with RESERVED are the shards': the router
# refuses commands that carry one.
RESERVED = "typingd:"
MARKER_PREFIX = "typingd:seq:"
LINE_MARKER = "typingd:line"
SNAPSHOT_PREFIX = "typingd:snap:"
MARKER_CONV = "typingd:marker"


def fnv1a(data: bytes) -> int:
    """FNV-1a, 32 bits: '' -> 0x811C9DC5, 'general' -> 0x24B9216B."""
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def partition_of(conv: str, partitions: int) -> int:
    return fnv1a(conv.encode("utf-8")) % partitions


def routes(line: bytes, partitions: int):
    """The partitions a raw input line goes to. A line that is not a routable
    command (bad JSON, no cmd, a conversation command without a string conv)
    goes to partition 0, whose typingd answers it with its error."""
    try:
        command = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return [0]
    if not isinstance(command, dict):
        return [0]
    cmd = command.get("cmd")
    if not isinstance(cmd, str):
        return [0]
    if cmd in EVERY_PARTITION:
        return list(range(partitions))
    conv = command.get("conv")
    if cmd in CONVERSATION_COMMANDS and isinstance(conv, str):
        return [partition_of(conv, partitions)]
    return [0]


_PLAIN = re.compile(r"[A-Za-z0-9_-]{1,128}\Z")


def token(text: str) -> str:
    """A subject token for any id: itself when it is plain ([A-Za-z0-9_-], at most
    128 characters), else '~' and the hex of its UTF-8 bytes. Two ids never share
    a token, and a gateway computes the same."""
    if _PLAIN.match(text):
        return text
    return "~" + text.encode("utf-8").hex()


def event_subject(event: dict, partition: int, reply_id=None) -> str:
    """Where a shard publishes an event: indicators per viewer, typing events per
    conversation, replies per request id (a snapshot's member and streak events
    with the snapshot event after them; typingd.snapshot.P without id), errors
    without id per partition."""
    kind = event.get("event")
    if kind == "indicator":
        return "typingd.view." + token(event["viewer"])
    if kind == "typing":
        return "typingd.typing." + token(event["conv"])
    ident = event.get("id", reply_id)
    if ident is None and kind == "snapshot":
        return "typingd.snapshot.{}".format(partition)   # a snapshot asked for without id
    if ident is not None:
        # An integer id 7 becomes "=7": never the token of a string id.
        return "typingd.reply." + (token(ident) if isinstance(ident, str) else "={}".format(ident))
    return "typingd.error.{}".format(partition)


def servers(text: str):
    return [s.strip() for s in text.split(",") if s.strip()]


async def connect(urls: str, name: str, timeout=None):
    """A NATS connection that reconnects forever and reports a failed (re)connect
    in one line on stderr instead of a traceback. With `timeout`, the first
    connection must succeed within that many seconds (else TimeoutError)."""
    import asyncio
    import sys
    import nats

    async def quiet(error):
        print("{}: nats: {}".format(name, type(error).__name__ if not str(error) else error),
              file=sys.stderr, flush=True)

    connecting = nats.connect(servers=servers(urls), name=name, max_reconnect_attempts=-1,
                              reconnect_time_wait=0.2, connect_timeout=2, drain_timeout=5, error_cb=quiet)
    return await (asyncio.wait_for(connecting, timeout) if timeout else connecting)


def reserved_id(line: bytes) -> bool:
    """Whether a line is a command whose string id starts with RESERVED."""
    if b'"typingd:' not in line:
        return False
    try:
        command = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    ident = command.get("id") if isinstance(command, dict) else None
    return isinstance(ident, str) and ident.startswith(RESERVED)
