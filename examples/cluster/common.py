"""What the router, the shards and the checker share: routing, subjects, names.

Routing (Protocol.md, "Running several typingd processes"): a command that names a
conversation goes to that conversation's partition; user-level commands and the
questions about the whole process go to every partition. A partition is
FNV-1a (32 bits) of the conversation id's UTF-8 bytes, modulo the number of
partitions. Conversation ids never become subject tokens: commands travel on
typingd.cmd.<partition number>, so any UTF-8 id is routable.
"""
import asyncio
import ctypes
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
import zlib

STREAM = "TYPINGD"


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
CONF_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cluster.conf")
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


SERVERS_HELP = "comma-separated NATS URLs (default: cluster.sh's nodes at {})".format(
    conf_help("PORT_BASE")).replace("%", "%%")
SNAPSHOTS = "typingd-snapshots"   # the object store: one object per partition
COMMAND_SUBJECT = "typingd.cmd.{}"

# A message of the stream may carry its lines deflated (zlib, level 1): the
# router's choice when that is smaller. Every node stores and replicates each
# byte (R3: three copies through the stream's RAFT group), which was most of the
# nodes' CPU per line; a block of command lines deflates to about a seventh.
ENCODING = "Typingd-Encoding"
DEFLATE = "deflate"
DEFLATE_FROM = 512             # smaller bodies are sent as they are
BODY_LIMIT = 64 << 20          # NATS's largest max_payload: no router sends lines past it


def encode_body(body: bytes, headers: dict) -> bytes:
    """The body to store: deflated, with ENCODING in headers, when that is smaller."""
    if len(body) >= DEFLATE_FROM:
        packed = zlib.compress(body, 1)
        if len(packed) < len(body):
            headers[ENCODING] = DEFLATE
            return packed
    return body


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

# One source of truth for the routing rules. A thread lives in its conversation:
# `type`, `send`, `open` and `query` with a `thread` go by their `conv` like the
# others; `user` (names, settings, locale, receive_typing) goes everywhere.
CONVERSATION_COMMANDS = frozenset(
    ["join", "type", "send", "leave", "remove", "open", "close", "query", "forget"])
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
        try:
            return [partition_of(conv, partitions)]
        except UnicodeEncodeError:
            return [0]   # a lone surrogate ("\ud800"): not UTF-8, typingd refuses it
    return [0]


# The router's fast path: routes() without json.loads for ordinary lines. It
# applies to a line that is a flat JSON object whose first key is "cmd" (a string
# of a-z and _), with "conv" (a string) second or absent, no other "cmd" or "conv"
# key, and only strings without a backslash or a control character, JSON numbers,
# true, false and null as values (spaces and tabs allowed between tokens). On
# such a line the regular expression checks the whole JSON, and its two groups
# are what json.loads would give for "cmd" and "conv" (no escapes, so the bytes
# are the UTF-8 of the strings once the line is valid UTF-8). Any other line
# (escapes, nested values, other key orders, duplicate keys, invalid JSON or
# UTF-8) goes through routes(). `python3 common.py --self-test` checks both agree.
_W = rb"[ \t]*+"
_STR = rb'"[^"\\\x00-\x1f]*+"'
_NUM = rb"-?+(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+(?:[eE][+-]?+[0-9]++)?+"
# An integer of more digits than Python's int limit (4300 by default,
# PYTHONINTMAXSTRDIGITS) is refused by json.loads: a line that long leaves the
# fast path (a bounded repeat in _NUM made every line half as slow again).
_LONG_LINE = getattr(sys, "get_int_max_str_digits", lambda: 0)() or float("inf")


def _fast_expression(w: bytes) -> bytes:
    """The fast path's grammar, with `w` between tokens."""
    return (w + rb'\{' + w + rb'"cmd"' + w + rb':' + w + rb'"([a-z_]++)"'
            + rb'(?:' + w + rb',' + w + rb'"conv"' + w + rb':' + w + rb'"([^"\\\x00-\x1f]*+)")?+'
            + rb'(?:' + w + rb',' + w + rb'"(?!cmd"|conv")[^"\\\x00-\x1f]*+"' + w + rb':' + w
            + rb'(?:' + _STR + rb'|' + _NUM + rb'|true|false|null))*+' + w + rb'\}' + w)


_FAST = re.compile(_fast_expression(_W))
# The same without the whitespace, tried first: a quarter less time a line, for
# lines as programs write them (a subset of _FAST's lines, with the same groups).
_FAST_TIGHT = re.compile(_fast_expression(b""))
_CONVERSATION_B = frozenset(c.encode() for c in CONVERSATION_COMMANDS)
_EVERY_B = frozenset(c.encode() for c in EVERY_PARTITION)


def stamp(line: bytes, at: int) -> bytes:
    """A command line with "at": at when it is a JSON object without one (the
    object re-serialised), else the line as it is."""
    try:
        command = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return line
    if not isinstance(command, dict) or "at" in command:
        return line
    command["at"] = at
    return json.dumps(command, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


class Routing:
    """routes() for lists of lines, at a fraction of its cost: split(lines, out)
    appends every line to out[P] for each partition P routes() names. Blank
    lines (only whitespace) are dropped, as the router drops them. With `at`,
    a command without "at" gets "at": at, inserted as text on the fast path
    (the line is not re-serialised), through stamp() otherwise. The partition
    of a conversation id is computed once (cached)."""

    CACHE_LIMIT = 1 << 20

    def __init__(self, partitions: int, native=True):
        self.partitions = partitions
        self.cache = {}
        self.fast = 0   # lines routed by the fast path
        self.slow = 0   # lines routed through json.loads
        self.decided = 0   # lines route.c decided (fast or blank)
        # route.c's fast path, when it builds (native_why says why not)
        self.native, self.native_why = _route_c() if native and partitions < _ROUTE_BLANK else (None, "not asked")

    def split(self, lines, out, at=None, ascii=False):
        """`ascii`: the caller knows every line is ASCII (bytes.isascii() of the
        block they came from), which spares a UTF-8 check per non-ASCII line.

        With route.c (self.native), C decides the lines it can (lines of the
        whitespace-free fast grammar, their UTF-8 checked, and blank lines) and
        Python each other one, in order; Python then only hands every line to
        its partition."""
        if self.native is not None and lines:
            return self._split_native(lines, out, at, ascii)
        return self._split(lines, out, at, ascii)

    def _split_native(self, lines, out, at, ascii):
        joined = b"\n".join(lines)
        # One byte per piece between "\n"s: as many as lines unless a line holds a "\n".
        codes = ctypes.create_string_buffer(joined.count(b"\n") + 1)
        if self.native(joined, len(joined), self.partitions, _ROUTE_CONVERSATION, _ROUTE_EVERY,
                       min(_LONG_LINE, 1 << 62), codes) != len(lines):
            return self._split(lines, out, at, ascii)
        codes = codes.raw
        parts = out[:self.partitions]
        appends = [o.append for o in parts] + [None] * (256 - len(parts))
        appends[_ROUTE_BLANK] = _drop
        appends[_ROUTE_PYTHON] = lambda line: self._split([line], out, at, ascii)
        appends[_ROUTE_EVERY_CODE] = lambda line: [o.append(line) for o in parts]
        if at is None:
            for line, code in zip(lines, codes):
                appends[code](line)
        else:
            suffix = b',"at":%d}' % at
            for line, code in zip(lines, codes):
                if code < _ROUTE_BLANK or code == _ROUTE_EVERY_CODE:
                    line = stamp(line, at) if b'"at"' in line else line[:-1] + suffix
                appends[code](line)
        self.fast += len(codes) - codes.count(_ROUTE_PYTHON) - codes.count(_ROUTE_BLANK)
        self.decided += len(codes) - codes.count(_ROUTE_PYTHON)
        return out

    def _split(self, lines, out, at=None, ascii=False):
        match, tight = _FAST.fullmatch, _FAST_TIGHT.fullmatch
        long = _LONG_LINE
        cache = self.cache
        conversation, every = _CONVERSATION_B, _EVERY_B
        partitions = self.partitions
        everywhere = range(partitions)
        first = out[0]
        suffix = None if at is None else b',"at":%d}' % at
        fast = 0
        for line in lines:
            found = tight(line) or match(line)
            if found is not None and len(line) <= long and (ascii or line.isascii() or _utf8(line)):
                fast += 1
                cmd, conv = found.groups()
                if suffix is not None:
                    if b'"at"' in line:
                        line = stamp(line, at)   # "at" may be a value, not a key: ask json
                    else:
                        line = line[:line.rindex(b"}")] + suffix
                if conv is not None and cmd in conversation:
                    p = cache.get(conv)
                    if p is None:
                        if len(cache) >= self.CACHE_LIMIT:
                            cache.clear()
                        p = cache[conv] = fnv1a(conv) % partitions
                    out[p].append(line)
                elif cmd in every:
                    for p in everywhere:
                        out[p].append(line)
                else:
                    first.append(line)
            elif line.strip():
                self.slow += 1
                if suffix is not None:
                    line = stamp(line, at)
                for p in routes(line, partitions):
                    out[p].append(line)
        self.fast += fast
        return out


ROUTE_C = os.path.join(os.path.dirname(os.path.abspath(__file__)), "route.c")
_ROUTE_EVERY_CODE, _ROUTE_BLANK, _ROUTE_PYTHON = 254, 253, 255
_ROUTE_CONVERSATION = "".join(c + "\n" for c in sorted(CONVERSATION_COMMANDS)).encode()
_ROUTE_EVERY = "".join(c + "\n" for c in sorted(EVERY_PARTITION)).encode()


def _drop(line):
    pass


def _route_c():
    """(route.c's typingd_route as a ctypes function, None) once it is built
    (into .build/ beside this file, named by the source's hash, with $CC, cc,
    clang or gcc), else (None, why). TYPINGD_ROUTE_C=0: Python only."""
    if os.environ.get("TYPINGD_ROUTE_C", "1") == "0":
        return None, "TYPINGD_ROUTE_C=0"
    try:
        with open(ROUTE_C, "rb") as f:
            tag = hashlib.sha256(f.read()).hexdigest()[:16]
        build = os.path.join(os.path.dirname(ROUTE_C), ".build")
        library = os.path.join(build, "route-{}.so".format(tag))
        if not os.path.exists(library):
            compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("clang") or shutil.which("gcc")
            if not compiler:
                return None, "no C compiler (cc, clang, gcc or $CC)"
            os.makedirs(build, exist_ok=True)
            partial = "{}.{}.tmp".format(library, os.getpid())
            done = subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", partial, ROUTE_C],
                                  capture_output=True, timeout=120)
            if done.returncode != 0:
                return None, "{} failed: {}".format(compiler, done.stderr.decode(errors="replace").strip()[:300])
            os.replace(partial, library)   # several routers may build at once
        function = ctypes.CDLL(library).typingd_route
    except (OSError, subprocess.SubprocessError, AttributeError) as error:
        return None, "route.c: {}".format(error)
    function.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_char_p, ctypes.c_char_p,
                         ctypes.c_size_t, ctypes.c_char_p]
    function.restype = ctypes.c_size_t
    return function, None


def _utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


_PLAIN = re.compile(r"[A-Za-z0-9_-]{1,128}\Z")


def token(text: str) -> str:
    """A subject token for any id: itself when it is plain ([A-Za-z0-9_-], at most
    128 characters), else '~' and the hex of its UTF-8 bytes. Two ids never share
    a token, and a gateway computes the same."""
    if _PLAIN.match(text):
        return text
    return "~" + text.encode("utf-8").hex()


def viewer_subject(viewer: str, buckets: int) -> str:
    """Where a viewer's indicators go: typingd.viewers.B, B = FNV-1a of its UTF-8
    bytes modulo VIEWER_BUCKETS. One subject per bucket, not per viewer: a shard
    sends a fetch's indicators for a bucket as one message (a subject per viewer
    was a message per viewer touched, most of a shard's publishing), and a gateway
    subscribes to its viewers' buckets and keeps the lines of its viewers."""
    return "typingd.viewers.{}".format(fnv1a(viewer.encode("utf-8")) % buckets)


def event_subject(event: dict, partition: int, buckets: int, reply_id=None) -> str:
    """Where a shard publishes an event: indicators per viewer bucket
    (viewer_subject), typing events per conversation, replies per request id (a
    snapshot's member and streak events with the snapshot event after them;
    typingd.snapshot.P without id), errors without id per partition."""
    kind = event.get("event")
    if kind == "indicator":
        return viewer_subject(event["viewer"], buckets)
    if kind == "typing":
        return "typingd.typing." + token(event["conv"])
    ident = event.get("id", reply_id)
    if ident is None and kind == "snapshot":
        return "typingd.snapshot.{}".format(partition)   # a snapshot asked for without id
    if ident is not None:
        # An integer id 7 becomes "=7": never the token of a string id.
        return "typingd.reply." + (token(ident) if isinstance(ident, str) else "={}".format(ident))
    return "typingd.error.{}".format(partition)


# An indicator line's screen (from its "conv" to its "typing": conv, thread, viewer and
# view, as typingd writes them) and its viewer's bytes, for ids without a backslash
# (a JSON string's bytes are then its UTF-8); a line with one does not match. A
# JSON string cannot hold an unescaped '"', so no part can match inside an id, and
# no match crosses a line ([^\n]). Possessive repeats: a quarter faster than a lazy
# search for "viewer".
_SEEN = re.compile(rb'\{"event":"indicator","at":\d++,("conv":"[^"\\\n]*+"(?:,"thread":"[^"\\\n]*+")?+'
                   rb',"viewer":"([^"\\\n]*+)"(?:,"view":"[a-z]++")?+),"typing":')
_EMPTY = b'"typing":[]'


class _Memo(dict):
    """key -> make(key), computed once (cleared past `limit` keys):
    map(memo.__getitem__, keys) stays in C but for a miss."""

    def __init__(self, make, limit: int):
        super().__init__()
        self.make, self.limit = make, limit

    def __missing__(self, key):
        if len(self) >= self.limit:
            self.clear()
        value = self[key] = self.make(key)
        return value


class Shown:
    """A shard's indicators, for a gateway's resync: keep(lines) gives the subject of
    each indicator line (viewer_subject) and keeps the lines; of(viewer) is the
    viewer's last non-empty indicator on each of its screens (conversation,
    thread, view).

    Python does little per line: keep() runs one findall over the lines joined,
    maps viewer bytes to subjects through a dict, and appends the call's lists;
    fold(), on of() or after FOLD_EVERY lines, folds them into the table through a
    dict of the last line per screen (built in C), then Python per screen. A line
    the expression does not take (a viewer with an escape) is read by json, its
    screen as JSON: a viewer's lines are read the same way every time, so one
    screen never has two keys."""

    FOLD_EVERY = 20_000
    CACHE_LIMIT = 1 << 20

    def __init__(self, buckets: int):
        self.buckets = buckets
        self.table = {}      # viewer -> {screen: its last non-empty indicator line}
        self.unfolded = []   # (screens, viewers, lines) of each keep() since the last fold()
        self.unfolded_lines = 0
        # viewer bytes (a JSON string's, without escapes) -> its subject, its id
        self.subjects = _Memo(lambda viewer: viewer_subject(viewer.decode("utf-8"), buckets), self.CACHE_LIMIT)
        self.names = _Memo(lambda viewer: viewer.decode("utf-8"), self.CACHE_LIMIT)

    def keep(self, lines):
        if not lines:
            return []
        found = _SEEN.findall(b"\n".join(lines))
        if len(found) == len(lines):
            screens, viewers = zip(*found)
            subjects = list(map(self.subjects.__getitem__, viewers))
        else:
            screens, viewers, subjects = [], [], []
            match = _SEEN.match
            for line in lines:
                one = match(line)
                if one is not None:
                    screen, viewer = one.groups()
                    subject = self.subjects[viewer]
                else:
                    event = json.loads(line)
                    viewer = event["viewer"]
                    screen = json.dumps([event.get("conv"), event.get("thread"), viewer, event.get("view")]).encode()
                    subject = viewer_subject(viewer, self.buckets)
                screens.append(screen)
                viewers.append(viewer)
                subjects.append(subject)
        self.unfolded.append((screens, viewers, lines))
        self.unfolded_lines += len(lines)
        if self.unfolded_lines >= self.FOLD_EVERY:
            self.fold()
        return subjects

    def fold(self):
        latest = {}
        for screens, viewers, lines in self.unfolded:
            latest.update(zip(screens, zip(viewers, lines)))
        self.unfolded, self.unfolded_lines = [], 0
        table, names = self.table, self.names
        for screen, (viewer, line) in latest.items():
            if isinstance(viewer, bytes):
                viewer = names[viewer]
            shown = table.get(viewer)
            if _EMPTY in line:
                if shown is not None:
                    shown.pop(screen, None)
                    if not shown:
                        del table[viewer]
            else:
                if shown is None:
                    shown = table[viewer] = {}
                shown[screen] = line

    def of(self, viewer):
        if self.unfolded:
            self.fold()
        return list(self.table.get(viewer, {}).values())


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


def _self_test(count=20000, seed=20):
    """Routing.split against routes() (json.loads) on tricky lines and on
    random mutations of ordinary ones; FNV-1a against the README's vectors.
    Returns the number of failures (printed)."""
    import random
    failures = 0

    def fail(text):
        nonlocal failures
        failures += 1
        if failures <= 20:
            print("FAIL " + text)

    for conv, want, part in [("", 0x811C9DC5, 1), ("general", 0x24B9216B, 3),
                             ("dm:alice:bob", 0xE1474CF1, 1), ("é", 0x1E9DE8C1, 1)]:
        if fnv1a(conv.encode()) != want or partition_of(conv, 4) != part:
            fail("fnv1a({!r})".format(conv))

    tricky = [
        b'{"cmd":"type","conv":"c1","user":"u1","at":5}',
        b'{"cmd":"type","conv":"general","user":"u1"}',
        b'{"cmd":"join","conv":"\\u0067eneral","user":"u1"}',       # an escape: "general"
        b'{"cmd":"join","conv":"a\\"b","user":"u1"}',
        b'{"cmd":"join","conv":"c1","conv":"general","user":"u"}',  # duplicate conv: the last wins
        b'{"cmd":"join","conv":"c1","cmd":"offline","user":"u"}',   # duplicate cmd
        b'{"cmd":"join","conv":"c1","cmd":5}',
        b'{"cmd":"join","user":"u","conv":"general"}',              # conv not second
        b'{"conv":"general","cmd":"join","user":"u"}',              # cmd not first
        b'{"cmd":"join","conv":{"conv":"general"},"user":"u"}',     # nested object with conv inside
        b'{"cmd":"join","x":{"conv":"general"},"conv":"c1"}',
        b'{"cmd":"join","conv":["general"]}',
        b'{"cmd":"join","conv":5}',
        b'{"cmd":"join","conv":null}',
        b'{"cmd":"join","name":"conv","user":"conv"}',              # "conv" as a value
        b'{"cmd":"join","name":"\\"conv\\":\\"general\\""}',
        b'{"cmd":"type","conv":"c1",}',                             # invalid JSON
        b'{"cmd":"type","conv":"c1"',
        b'{"cmd":"type","conv":"c1"}}',
        b'{"cmd":"type","conv":"c1"} {"cmd":"tick"}',
        b'{"cmd":"type","conv":"c1","at":01}',
        b'{"cmd":"type","conv":"c1","at":1.}',
        b'{"cmd":"type","conv":"c1","at":-}',
        b'{"cmd":"type","conv":"c1","at":1e5}',
        b'{"cmd":"type","conv":"c1","at":NaN}',                     # json.loads accepts NaN
        b'{"cmd":"type","conv":"c1","ok":True}',
        b'{"cmd":"type","conv":"c1","ok":true,"n":null,"f":false}',
        b'{"cmd":"type","conv":"c\x01"}',                            # a control character
        b'{"cmd":"type","conv":"caf\xc3\xa9"}',                      # UTF-8
        b'{"cmd":"type","conv":"caf\xe9"}',                          # invalid UTF-8
        b'{"cmd":"type","conv":"\xed\xa0\x80"}',                     # an encoded surrogate
        b'{"cmd":"type","conv":"\\ud800"}',                         # an escaped lone surrogate
    ] + [   # UTF-8 at its edges (route.c checks it itself), as conv and as another string
        b'{"cmd":"type","conv":"%s","user":"u"}' % raw for raw in [
            b"\xc0\xaf", b"\xc1\xbf", b"\xc2\x80", b"\xdf\xbf", b"\xe0\x80\xaf", b"\xe0\xa0\x80",
            b"\xed\x9f\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xee\x80\x80", b"\xef\xbf\xbf",
            b"\xf0\x80\x80\xaf", b"\xf0\x90\x80\x80", b"\xf0\x9f\x98\x80", b"\xf4\x8f\xbf\xbf",
            b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff", b"\xe2\x9c", b"\xe2\x9c\x93\x93", b"\x7f", b"a\x80"]
    ] + [
        b'{"cmd":"type","conv":"c1","user":"%s"}' % raw for raw in [
            b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x9c", b"\xe2\x9c\x93", b"\xf0\x9f\x98"]
    ] + [
        b'{"cmd":"type","conv":"\\ud83d\\ude00"}',
        b'\xef\xbb\xbf{"cmd":"type","conv":"general"}',              # a UTF-8 BOM
        b'{\x00"\x00c\x00m\x00d\x00"\x00:\x00"\x00j\x00"\x00}\x00',
        b'  {"cmd" : "type" ,\t"conv" : "general" }  ',
        b'{"cmd":"type","conv":"general"}\r',
        b'{"cmd":"offline","user":"u1"}',
        b'{"cmd":"offline","conv":"c1","user":"u1"}',
        b'{"cmd":"user","user":"u1","name":"A [b]"}',
        b'{"cmd":"tick","at":100}',
        b'{"cmd":"stats","id":1}',
        b'{"cmd":"snapshot"}',
        b'{"cmd":"nonsense","conv":"general"}',
        b'{"cmd":"Join","conv":"general"}',
        b'{"cmd":"join"}',
        b'{"cmd":"query","conv":"c2","thread":"t","id":"q"}',
        b'[{"cmd":"join","conv":"general"}]',
        b'"cmd"', b'5', b'null', b'{}', b'{"cmd":null}', b'not json', b'{"cmd":"join","conv":"c1"',
        b'{"cmd":"join","conv":"' + b"x" * 300 + b'"}',
        b'{"cmd":"type","conv":"general","user":"u","at":' + b"1" * 5000 + b'}',   # past int's digits
        b'{"cmd":"tick","at":' + b"9" * 5000 + b'}',
        b'{"cmd":"type","conv":"general","user":"u","at":' + b"1" * 5000 + b'.5}',  # a float: no limit
    ]
    base = [l for l in tricky]
    random.seed(seed)
    pieces = [b'"', b'\\', b',', b':', b'{', b'}', b'[', b']', b' ', b'"conv"', b'"cmd"', b'"at"', b'0', b'-',
              b'.', b'e', b'\xc3', b'\xa9', b'\x00', b'\x1f', b'true', b'"general"', b'"join"']
    ordinary = [b'{"cmd":"type","conv":"c%d","user":"u%d","at":%d}' % (i, i * 7, i * 13) for i in range(50)] + [
        b'{"cmd":"join","conv":"c%d","user":"u%d","name":"User %d"}' % (i, i, i) for i in range(50)] + [
        b'{"cmd":"offline","user":"u%d"}' % i for i in range(5)]
    lines = list(base)
    for _ in range(count):
        line = bytearray(random.choice(ordinary + base))
        for _ in range(random.randint(1, 3)):
            i = random.randrange(len(line) + 1)
            what = random.random()
            if what < 0.4:
                line[i:i] = random.choice(pieces)
            elif what < 0.7 and i < len(line):
                del line[i:i + random.randint(1, 4)]
            elif i < len(line):
                line[i] = random.randrange(256)
        lines.append(bytes(line))
    tight = 0
    for line in lines:
        found = _FAST_TIGHT.fullmatch(line)
        if found is not None:
            tight += 1
            loose = _FAST.fullmatch(line)
            if loose is None or loose.groups() != found.groups():
                fail("{!r}: the tight expression gives {}, the whole one {}".format(
                    line, found.groups(), loose and loose.groups()))
    if tight < len(lines) // 20:
        fail("only {} of {} lines matched the tight expression".format(tight, len(lines)))
    fast_routed = decided = 0
    native = Routing(4).native is not None
    if not native:
        print("route.c not used: {}".format(Routing(4).native_why))
        if os.environ.get("CI") == "true":
            fail("route.c must build under CI=true")
    for partitions, c in [(p, c) for p in (1, 4, 7) for c in ((True, False) if native else (False,))]:
        routing = Routing(partitions, native=c)
        for line in lines:
            out = [[] for _ in range(partitions)]
            routing.split([line], out)
            got = [p for p in range(partitions) if out[p]]
            if not line.strip():
                if got:
                    fail("blank line {!r} routed to {}".format(line, got))
                continue
            want = routes(line, partitions)
            if got != want or any(len(o) > 1 for o in out):
                fail("{!r}: fast path {}, json.loads {} ({} partitions)".format(line, got, want, partitions))
            # Stamping: the same command as json's, with "at" when it had none.
            out = [[] for _ in range(partitions)]
            routing.split([line], out, at=1234)
            stamped = next((o[0] for o in out if o), None)
            if stamped is not None:
                slow = stamp(line, 1234)
                try:
                    same = json.loads(stamped) == json.loads(slow)
                except (ValueError, UnicodeDecodeError, RecursionError):
                    same = stamped == slow
                if not same:
                    fail("{!r} stamped {!r}, json {!r}".format(line, stamped, slow))
        fast_routed += routing.fast
        decided += routing.decided
    # The mutations must reach both paths (else the test proves nothing).
    runs = 6 if native else 3
    if fast_routed < runs * len(lines) // 12:
        fail("only {} of {} lines took the fast path".format(fast_routed, runs * len(lines)))
    if native and decided < 3 * len(lines) // 8:
        fail("route.c decided only {} of {} lines".format(decided, 3 * len(lines)))
    # Calls of many lines: route.c's and Python's the same lines, in the same
    # order, in the same partitions, stamped the same; most lines ordinary (C
    # decides them), some of any kind (Python decides them in between).
    calls = 0
    if native:   # a "line" holding "\n"s (the router never passes one): no write past the codes
        for _ in range(50):
            routing = Routing(4)
            if routing.split([b"\n" * 1000, b'{"cmd":"tick"}'], [[] for _ in range(4)]) != \
                    Routing(4, native=False).split([b"\n" * 1000, b'{"cmd":"tick"}'], [[] for _ in range(4)]):
                fail("lines holding newlines: route.c and Python differ")
    for partitions in ((1, 4, 7) if native else ()):
        c, python = Routing(partitions), Routing(partitions, native=False)
        for _ in range(300):
            call = random.choices(ordinary, k=random.randrange(1, 200))
            for _ in range(random.randrange(4)):
                call.insert(random.randrange(len(call) + 1), random.choice(lines))
            at = random.choice([None, 1234])
            got = c.split(call, [[] for _ in range(partitions)], at)
            want = python.split(call, [[] for _ in range(partitions)], at)
            if got != want:
                fail("a call of {} lines ({} partitions, at {}): route.c gives {}, Python {}".format(
                    len(call), partitions, at, [len(g) for g in got], [len(w) for w in want]))
            calls += 1
    # Bodies: what the router stores comes back as it was, deflated only when that
    # is smaller; a body that is not what it says is a ValueError, never held whole.
    bodies = [b"", b"x\n", b"\n".join(lines[:2000]) + b"\n", bytes(random.randrange(256) for _ in range(4096))]
    for body in bodies:
        headers = {}
        stored = encode_body(body, headers)
        if decode_body(headers, stored) != body or len(stored) > len(body) \
                or (ENCODING in headers) != (len(stored) < len(body)):
            fail("body of {} bytes: stored {} bytes, headers {}".format(len(body), len(stored), headers))
    commands = b"\n".join(ordinary * 20) + b"\n"
    if len(encode_body(commands, {})) * 4 > len(commands):
        fail("command lines deflate to less than a quarter: {} of {}".format(
            len(encode_body(commands, {})), len(commands)))
    packed = zlib.compress(b"\n".join(lines[:2000]), 1)
    for headers, body in [({ENCODING: "gzip"}, packed), ({ENCODING: DEFLATE}, b"not deflated"),
                          ({ENCODING: DEFLATE}, packed[:len(packed) // 2]),
                          ({ENCODING: DEFLATE}, zlib.compress(b"\n" * (BODY_LIMIT + 1), 9)),
                          ({ENCODING: DEFLATE}, packed + packed), ({ENCODING: DEFLATE}, packed + b"\n")]:
        try:
            decode_body(headers, body)
            fail("{} body of {} bytes decoded".format(headers, len(body)))
        except ValueError:
            pass
    try:   # a shard's limit: no more than a raw message could carry
        decode_body({ENCODING: DEFLATE}, zlib.compress(b"\n" * 1001), 1000)
        fail("a body inflating past the limit given was decoded")
    except ValueError:
        pass
    # A shard's resync table (Shown): the same subjects and the same last indicators
    # as json.loads line by line, whatever the calls' sizes and the folds' times.
    ids = ["a", "b", "plain-1", "\u00e9", "\U0001F600", 'q"x', "c\\d", "u\u2028v", "n\nn", "x" * 300, "\t", ""]
    shown, table, kept = Shown(16), {}, 0
    indicators, at = [], 0
    for _ in range(6000):
        at += random.randrange(1000)
        viewer = random.choice(ids if random.random() < 0.3 else ids[:4])
        event = {"event": "indicator", "at": at, "conv": random.choice(["g", "h", 'c"q', "k\\", "\u00e9"])}
        if random.random() < 0.2:
            event["thread"] = random.choice(["t", 't"2'])
        event["viewer"] = viewer
        if random.random() < 0.2:
            event["view"] = "list"
        event["typing"] = random.sample(ids, random.randrange(3))
        event["text"] = random.choice(["", '"typing":[]', "Someone is typing..."])
        # As typingd writes it: UTF-8, U+2028 escaped; the same id always the same bytes.
        indicators.append(json.dumps(event, ensure_ascii=False, separators=(",", ":"))
                          .replace("\u2028", "\\u2028").encode())
    while indicators:
        size = random.randrange(1, 200)
        call, indicators = indicators[:size], indicators[size:]
        subjects = shown.keep(call)
        for line, subject in zip(call, subjects):
            event = json.loads(line)
            screens = table.setdefault(event["viewer"], {})
            screen = (event["conv"], event.get("thread"), event.get("view"))
            if event["typing"]:
                screens[screen] = line
            else:
                screens.pop(screen, None)
            if subject != viewer_subject(event["viewer"], 16):
                fail("{!r}: subject {}, not {}".format(line, subject, viewer_subject(event["viewer"], 16)))
            kept += 1
        if random.random() < 0.3:
            for viewer in ids:
                if sorted(shown.of(viewer)) != sorted(table.get(viewer, {}).values()):
                    fail("viewer {!r}: resync gives {}, not {}".format(
                        viewer, shown.of(viewer), list(table.get(viewer, {}).values())))
    shown.fold()
    if set(shown.table) != {viewer for viewer, screens in table.items() if screens}:
        fail("resync table holds viewers {}, not {}".format(sorted(shown.table), sorted(table)))
    print("common.py self-test: {} lines x 3 partition counts x {} ({} on the fast path, {} decided by route.c), {} calls, {} bodies, "
          "{} indicators kept, {} failed".format(len(lines), "route.c and Python" if native else "Python only",
                                                 fast_routed, decided, calls, len(bodies) + 6, kept, failures))
    return failures


if __name__ == "__main__":
    if sys.argv[1:] != ["--self-test"]:
        print("usage: common.py --self-test   (the routing fast path against json.loads, FNV-1a vectors,\n"
              "                               stored bodies deflated and inflated)",
              file=sys.stderr)
        sys.exit(64)
    sys.exit(1 if _self_test() else 0)
