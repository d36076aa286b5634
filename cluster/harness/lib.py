"""What the cluster's test harness shares (faults.py, router_check.py, cost.py):
the settings file, reading the stream's bodies, nats-py connections, the owners'
stats, and each input line's route, asked of `typingd-cluster partition --lines`
(the router's own code: no copy of the rule here).

A test tool, not part of the product: the roles are typingd-cluster's.
"""
import asyncio
import json
import math
import os
import re
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
STREAM = "TYPINGD"
COMMAND_SUBJECT = "typingd.cmd.{}"
ENCODING = "Typingd-Encoding"
DEFLATE = "deflate"
BODY_LIMIT = 64 << 20          # NATS's largest max_payload


# cluster.conf's settings: each one's type and range, one place for every script.
# NAME: (kind, minimum, maximum, choices). PORT_BASE's nodes use it +0..2 for
# clients, +2000.. for routes and +4000.. for monitoring.
SETTINGS = {
    "PORT_BASE": (int, 1, 65535 - 4002, None),
    "PARTITIONS": (int, 1, 4096, None),
    "TYPINGD_OPTIONS": (str, None, None, None),
    "SNAPSHOT_EVERY": (int, 0, None, None),
    "LEASE_TTL": (float, 0.1, 86400, None),
    "TICK_MS": (int, 0, 86_400_000, None),
    "STORAGE": (str, None, None, ("file", "memory")),
    "REPLICAS": (int, 1, 5, None),
    "VIEWER_BUCKETS": (int, 1, 4096, None),
}
CONF_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cluster.conf")
_INT = re.compile(r"[ \t]*-?[0-9]+[ \t]*", re.ASCII)
_FLOAT = re.compile(r"[ \t]*-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*", re.ASCII)
_LINE = re.compile(r"(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.ASCII)


class ConfError(ValueError):
    pass


def conf_value(name, default):
    """NAME's text: the environment's when set and not empty, else cluster.conf's
    line NAME=VALUE (or export NAME=VALUE; VALUE in shell quoting; the last such
    line, as `.` in a shell keeps the last), else default. A file that cannot be
    decoded or bad quoting raises ConfError."""
    import shlex
    if os.environ.get(name):
        return os.environ[name]
    try:
        with open(CONF_PATH, encoding="utf-8") as file:
            lines = file.readlines()
    except OSError:
        return default
    except UnicodeDecodeError as error:
        raise ConfError("{} is not UTF-8 ({})".format(CONF_PATH, error)) from None
    found = default
    for line in lines:
        match = _LINE.fullmatch(line.strip())
        if match and match.group(1) == name:
            try:
                found = " ".join(shlex.split(match.group(2), comments=True))
            except ValueError as error:
                raise ConfError("{} in cluster.conf: {} ({})".format(name, match.group(2).strip(), error)) from None
    return found


def conf_source(name):
    """Where NAME's value comes from, for --help and messages."""
    return "{} from the environment".format(name) if os.environ.get(name) else "cluster.conf's " + name


def _wanted(name):
    kind, minimum, maximum, choices = SETTINGS[name]
    if choices:
        return "one of " + ", ".join(choices)
    want = {int: "a whole number", float: "a number"}.get(kind, "text")
    if minimum is not None and maximum is not None:
        return want + " from {} to {}".format(minimum, maximum)
    return want + (" of at least {}".format(minimum) if minimum is not None else "")


def check_setting(name, value):
    """VALUE (text, or an option's value) as NAME's kind, or ConfError. Numbers are
    ASCII digits in the usual forms (no 8_0, no other scripts' digits), the same
    for a setting and for an option."""
    kind, minimum, maximum, choices = SETTINGS[name]
    result = None
    if isinstance(value, kind) and not isinstance(value, (bool, str)):
        result = value
    elif isinstance(value, str):
        if kind is int and _INT.fullmatch(value):
            result = int(value)
        elif kind is float and _FLOAT.fullmatch(value):
            result = float(value)
        elif kind is str:
            result = value.strip() if choices else value
    if result is None or (kind is float and not math.isfinite(result)) \
            or (minimum is not None and result < minimum) or (maximum is not None and result > maximum) \
            or (choices and result not in choices):
        raise ConfError("{!r} is not {}".format(value, _wanted(name)))
    return result


def conf(name):
    """cluster.conf's NAME (the environment winning), checked against SETTINGS. A
    missing or malformed value stops the script with one line."""
    script = os.path.basename(sys.argv[0] or "cluster")
    try:
        value = conf_value(name, None)
        if value is None:
            raise ConfError("is in neither the environment nor " + CONF_PATH)
        return check_setting(name, value)
    except ConfError as error:
        sys.exit("{}: {} ({}): {}".format(script, name, conf_source(name), error))


def conf_help(name):
    """NAME's default for --help, without stopping on a bad one (which stops the
    script only if the option is left to it)."""
    try:
        value = conf_value(name, None)
    except ConfError:
        value = "(unreadable)"
    return "{}, {}".format(conf_source(name), value if value is not None else "(unset)")


def conf_option(parser, flag, name, help, **kwargs):
    """An option whose default is cluster.conf's NAME, resolved by resolve() once
    parsed: an option given needs no setting, and a bad setting stops the script
    only when it is used. A value given is parsed and checked as the setting is."""
    import argparse

    def parse(text):
        try:
            return check_setting(name, text)
        except ConfError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    parse.__name__ = name
    action = parser.add_argument(flag, type=parse, default=None, metavar=name,
                                 help="{} (default: {})".format(help, conf_help(name)).replace("%", "%%"), **kwargs)
    if not hasattr(parser, "conf_options"):
        parser.conf_options = []
    parser.conf_options.append((action.dest, name))
    return action


def resolve(parser, args, only=None):
    """Fills the conf_option()s left out (of `only`, destinations, when given: those
    this run uses) from cluster.conf."""
    for dest, name in getattr(parser, "conf_options", []):
        if getattr(args, dest) is None and (only is None or dest in only):
            setattr(args, dest, conf(name))
    return args


def default_servers():
    """cluster.sh's three nodes at PORT_BASE: every script's default --servers."""
    base = conf("PORT_BASE")
    return ",".join("nats://127.0.0.1:{}".format(base + i) for i in range(3))




def binary():
    """typingd-cluster: $TYPINGD_CLUSTER, else the release build, else the debug one."""
    found = os.environ.get("TYPINGD_CLUSTER")
    if found:
        return found
    for kind in ("release", "debug"):
        path = os.path.join(PACKAGE, ".build", kind, "typingd-cluster")
        if os.path.exists(path):
            return path
    sys.exit("no typingd-cluster: run `swift build -c release` in " + PACKAGE)


def routes_of(lines, partitions):
    """The partitions each line goes to, as the router decides (`partition
    --lines`): [p], every partition, or [] for a line it skips or refuses."""
    data = b"".join(line + b"\n" for line in lines)
    out = subprocess.run([binary(), "partition", "--of", str(partitions), "--lines"], input=data,
                         stdout=subprocess.PIPE, check=True).stdout.split(b"\n")
    result = []
    for answer in out[:len(lines)]:
        if answer == b"*":
            result.append(list(range(partitions)))
        elif answer in (b"-", b"x"):
            result.append([])
        else:
            result.append([int(answer)])
    if len(result) != len(lines):
        sys.exit("typingd-cluster partition --lines answered {} lines of {}".format(len(result), len(lines)))
    return result


def decode_body(headers, body: bytes, limit: int = BODY_LIMIT) -> bytes:
    """A stored message's lines. ValueError for an encoding this does not know, a
    body that does not inflate (or has bytes after its end), or one that inflates
    past `limit`: a shard gives the servers' max_payload, which a router's batch of
    lines never exceeds before it is deflated (so a small body cannot make a shard
    apply more lines than a raw message could carry)."""
    encoding = headers.get(ENCODING) if headers else None
    if encoding is None:
        return body
    if encoding != DEFLATE:
        raise ValueError("unknown {} {!r}".format(ENCODING, encoding[:40]))
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(body, limit)
    except zlib.error as error:
        raise ValueError("a deflated body that does not inflate ({})".format(error)) from None
    if inflater.unconsumed_tail:
        raise ValueError("a deflated body of more than {} bytes".format(limit))
    if not inflater.eof:
        raise ValueError("a deflated body cut short")
    if inflater.unused_data:
        raise ValueError("{} bytes after the end of a deflated body".format(len(inflater.unused_data)))
    return data

def servers(text: str):
    return [s.strip() for s in text.split(",") if s.strip()]


async def owners(nc, partitions):
    """Each partition's owner's stats, by partition (typingd.stats; the highest epoch
    when two answer), waiting up to 3 s for all of them."""
    inbox = nc.new_inbox()
    rows = {}
    answered = asyncio.Event()

    async def answer(msg):
        try:
            row = json.loads(msg.data)
            p, epoch = row["partition"], row.get("epoch")
            if row.get("role") != "owner" or type(p) is not int or type(epoch) is not int:
                return
        except (ValueError, TypeError, KeyError, AttributeError):
            return
        if p not in rows or rows[p]["epoch"] < epoch:
            rows[p] = row
        if len(rows) >= partitions:
            answered.set()
    sub = await nc.subscribe(inbox, cb=answer)
    await nc.publish("typingd.stats", b"", reply=inbox)
    try:
        await asyncio.wait_for(answered.wait(), 3.0)
    except asyncio.TimeoutError:
        pass
    await sub.unsubscribe()
    return rows


async def connect(urls: str, name: str, timeout=None):
    """A NATS connection that reconnects forever and reports a failed (re)connect
    in one line on stderr instead of a traceback. With `timeout`, the first
    connection must succeed within that many seconds (else TimeoutError)."""
    import asyncio
    import sys
    import nats

    said = {"text": None, "at": 0.0}

    async def quiet(error):
        # Servers that are down fail every 0.2 s each: a new kind of failure is
        # said at once, the same kind again at most every 5 s.
        kind = type(error).__name__
        now = time.monotonic()
        if kind != said["text"] or now - said["at"] >= 5:
            said["text"], said["at"] = kind, now
            print("{}: nats: {}".format(name, kind if not str(error) else error), file=sys.stderr, flush=True)

    connecting = nats.connect(servers=servers(urls), name=name, max_reconnect_attempts=-1,
                              reconnect_time_wait=0.2, connect_timeout=2, drain_timeout=5, error_cb=quiet)
    return await (asyncio.wait_for(connecting, timeout) if timeout else connecting)


