"""What the threaded and the asyncio client share: options, errors, the matching of
replies to requests, and what each viewer sees. No I/O here."""
from __future__ import annotations

import collections
import json
import os
import signal
from typing import Any, Callable, Deque, Dict, Iterable, List, Optional, Sequence, Tuple, Union

#: Bytes the stdout reader asks for per read, and the size of the stdin buffer.
PIPE_BUFFER = 64 * 1024

#: How much of typingd's stderr a client keeps (the last bytes of it).
STDERR_LIMIT = 64 * 1024

#: The events that answer a request, and those written before the ``snapshot`` they belong to.
REPLIES = ("ok", "error", "state", "stats", "snapshot")
LISTED = ("member", "streak")

#: How many error events of lines without id are remembered for ``outcome``.
RECENT_ERRORS = 1024

Event = Dict[str, Any]
PathLike = Union[str, bytes, "os.PathLike[str]"]


class TypingdError(Exception):
    """typingd answered a command with an ``error`` event (kept in ``.event``), or
    (code ``timeout``) did not answer in time."""

    def __init__(self, event: Event) -> None:
        super().__init__(f"{event.get('code')}: {event.get('message')}")
        self.event = event
        self.code = event.get("code")


class TypingdExited(TypingdError):
    """typingd is not running: it could not be started, it exited (a bad option, say),
    or it was ended. ``.status`` is its exit status (128 + n for signal n; None if it
    never started) and ``.stderr`` the last 64 KiB it wrote on stderr."""

    def __init__(self, message: str, status: Optional[int], stderr: str) -> None:
        detail = message
        if status is not None:
            detail += f" (exit status {status})"
        if stderr.strip():
            detail += f"; stderr: {stderr.strip()}"
        super().__init__({"code": "gone", "message": detail})
        self.status = status
        self.stderr = stderr


def gone(what: str, status: Optional[int], stdin_closed: bool, stderr: str) -> TypingdExited:
    """The error for a request that cannot be answered: typingd exited (``status``),
    the client was closed, or typingd's output ended while it runs."""
    if status is not None:
        return TypingdExited(f"{what}: typingd has exited", status, stderr)
    if stdin_closed:
        return TypingdExited(f"{what}: the client was closed", None, stderr)
    return TypingdExited(f"{what}: typingd's output ended", None, stderr)


def binary_origin(binary: Optional[PathLike]) -> str:
    """Where the binary ``command_line`` picks comes from, for error messages."""
    if binary is not None:
        return "from binary="
    if os.environ.get("TYPINGD_BINARY"):
        return "from TYPINGD_BINARY"
    return "neither binary= nor TYPINGD_BINARY is set"


def not_started(tried: str, origin: str, error: OSError) -> TypingdExited:
    """The error for a binary that cannot be started: the path tried, where it came
    from (``binary_origin``), why, and how to give another."""
    where = os.path.abspath(tried) if "/" in tried else f"{tried!r} looked up on PATH"
    return TypingdExited(f"typingd could not be started ({where}, {origin}): {error.strerror or error}; "
                         "give typingd's path as binary= or in TYPINGD_BINARY", None, "")


def decode_line(raw: bytes) -> Optional[Event]:
    """The event of one output line, or None for a line that is not a JSON object
    (one cut short by a kill)."""
    try:
        event = json.loads(raw)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def exit_status(returncode: int) -> int:
    """A Popen return code as a shell shows it: 128 + n for a process ended by signal n."""
    return 128 - returncode if returncode < 0 else returncode


def signal_number(sig: Union[int, str]) -> int:
    """A signal given as a number or a name (``"SIGTERM"``, ``"TERM"``)."""
    if isinstance(sig, str):
        name = sig.upper() if sig.upper().startswith("SIG") else "SIG" + sig.upper()
        try:
            return int(signal.Signals[name])
        except KeyError:
            raise ValueError(f"unknown signal {sig!r}") from None
    return int(sig)


def option_value(arguments: Sequence[str], flag: str) -> Optional[str]:
    """The last value given for ``flag`` (``--flag value`` or ``--flag=value``)."""
    value = None
    for index, argument in enumerate(arguments):
        if argument == flag and index + 1 < len(arguments):
            value = arguments[index + 1]
        elif isinstance(argument, str) and argument.startswith(flag + "="):
            value = argument[len(flag) + 1:]
    return value


def command_line(binary: Optional[PathLike], options: Iterable[Any], *, audience: Optional[str] = None,
                 order: Optional[str] = None, max_listed: Optional[int] = None,
                 phrases: Union[None, PathLike, Sequence[PathLike]] = None,
                 default_locale: Optional[str] = None, list_style: Optional[str] = None,
                 clock: Optional[str] = None, timeout_ms: Optional[int] = None,
                 quiet_above: Optional[int] = None, several_after: Optional[int] = None,
                 announce_after_ms: Optional[int] = None) -> List[str]:
    """typingd's argv: the binary (default $TYPINGD_BINARY, else ``typingd`` on PATH),
    the options as given, then one flag per named option that is not None."""
    if binary is None:
        binary = os.environ.get("TYPINGD_BINARY") or "typingd"
    arguments = [os.fsdecode(binary), *(os.fsdecode(o) if isinstance(o, (bytes, os.PathLike)) else str(o)
                                        for o in options)]
    for flag, value in (("--audience", audience), ("--order", order), ("--max-listed", max_listed),
                        ("--default-locale", default_locale), ("--list-style", list_style),
                        ("--clock", clock), ("--timeout-ms", timeout_ms), ("--quiet-above", quiet_above),
                        ("--several-after", several_after), ("--announce-after-ms", announce_after_ms)):
        if value is not None:
            arguments += [flag, str(value)]
    if phrases is not None:
        for path in [phrases] if isinstance(phrases, (str, bytes, os.PathLike)) else phrases:
            arguments += ["--phrases", os.fsdecode(path)]
    if option_value(arguments[1:], "--format") == "text":
        raise ValueError("--format text is for people at a terminal: the client reads typingd's JSON lines")
    return arguments


def encode(cmd: str, request_id: Optional[str], fields: Dict[str, Any]) -> bytes:
    """One command line: ``cmd``, then ``id`` when given, then the fields that are not None."""
    body: Dict[str, Any] = {"cmd": cmd}
    if request_id is not None:
        body["id"] = request_id
    body.update((key, value) for key, value in fields.items() if value is not None)
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def given(at: Optional[float] = None, **fields: Any) -> Dict[str, Any]:
    """The fields that are not None, then ``at`` when given."""
    present = {key: value for key, value in fields.items() if value is not None}
    if at is not None:
        present["at"] = at
    return present


def count_lines(data: bytes) -> int:
    """Lines a raw write adds: its LFs, plus the one the client appends."""
    return data.count(b"\n") + 1


Screen = Tuple[Optional[str], str]


def screen(thread: Optional[str] = None, view: Optional[str] = None) -> Screen:
    """What one pane of a viewer shows in one conversation: (thread or None, "chat" or "list")."""
    return (thread, "list" if view == "list" else "chat")


MAIN_CHAT = screen()

#: The panes of a membership (protocol v4): the main screen, and a side pane showing a thread.
MAIN, SIDE = "main", "side"


def pane_of(pane: Optional[str]) -> str:
    """A pane as given (None, "main" or "side"; an indicator's ``pane`` key) -> "main" or "side"."""
    return SIDE if pane == SIDE else MAIN


# A request's effect on its user's screens, once applied: a list of (conv or None for
# every conversation, user, pane, the screen kept or None).
ScreenChanges = Optional[List[Tuple[Optional[str], str, str, Optional[Screen]]]]

#: The events that have per-viewer callbacks (``on_indicator``, ``on_announce``).
VIEWER_EVENTS = ("indicator", "announce")


class Slot:
    """A request waiting for its reply; ``done`` is the client's own waiting object."""
    __slots__ = ("request_id", "line", "screens", "reply", "listed", "done")

    def __init__(self, request_id: str, line: int, screens: ScreenChanges, done: Any) -> None:
        self.request_id = request_id
        self.line = line
        self.screens = screens
        self.reply: Optional[Event] = None
        self.listed: List[Event] = []
        self.done = done


class Dispatcher:
    """Matches typingd's events to requests and keeps what each viewer sees. Pure state:
    the clients call it under their own lock (threads) or on their loop (asyncio).

    ``feed(event)`` returns (the slot it answers, or None; the events for the queue).
    """

    def __init__(self, audience_open: bool) -> None:
        self.audience_open = audience_open
        self.lines = 0                       # lines written: typingd numbers the next one lines + 1
        self.processed_through = 0           # every line up to this one was applied or refused
        self.waiting: Dict[str, Slot] = {}   # id -> slot
        self.by_line: Dict[int, str] = {}    # line -> id of a request still waiting
        self.errors: Dict[int, Event] = {}   # line -> error event (the last RECENT_ERRORS)
        # viewer -> (conv, pane) -> the non-empty indicator on that screen
        self.shown: Dict[str, Dict[Tuple[str, str], Event]] = {}
        self.listeners: Dict[Tuple[str, str], List[Callable[[Event], Any]]] = {}   # (event, viewer) ->
        self._listed: List[Event] = []

    # Requests ---------------------------------------------------------------

    def add(self, request_id: str, cmd: str, fields: Dict[str, Any], done: Any) -> Slot:
        self.lines += 1
        slot = Slot(request_id, self.lines, self.screen_change(cmd, fields), done)
        self.waiting[request_id] = slot
        self.by_line[slot.line] = request_id
        return slot

    def drop(self, slot: Slot) -> None:
        """A request given up (timed out, or its write failed)."""
        self.waiting.pop(slot.request_id, None)
        self.by_line.pop(slot.line, None)

    def wrote(self, lines: int) -> int:
        """Lines written without id; returns the number of the first."""
        first = self.lines + 1
        self.lines += lines
        return first

    # Events -------------------------------------------------------------------

    def feed(self, event: Event) -> Tuple[Optional[Slot], List[Event]]:
        kind = event.get("event")
        if kind in LISTED:
            self._listed.append(event)
            return None, []
        if kind == "indicator":
            self.show(event)
        slot = None
        if kind in REPLIES:
            line = event.get("line")
            if isinstance(line, int):
                self.processed_through = max(self.processed_through, line)
                if kind == "error":
                    self.errors[line] = event
                    if len(self.errors) > RECENT_ERRORS:
                        del self.errors[next(iter(self.errors))]
            request_id = event.get("id")
            if request_id is None and kind == "error":
                request_id = self.by_line.get(line) if isinstance(line, int) else None
            if isinstance(request_id, str):
                slot = self.waiting.pop(request_id, None)
            if slot is not None:
                self.by_line.pop(slot.line, None)
                self.processed_through = max(self.processed_through, slot.line)
                if slot.screens and kind != "error":
                    self.forget(slot.screens)
        listed, self._listed = self._listed, []
        if slot is not None:
            slot.reply = event
            slot.listed = listed
            return slot, []
        return None, listed + [event]

    def end(self) -> Tuple[List[Event], List[Slot]]:
        """typingd's output ended: the member/streak events no snapshot event came for,
        and the requests still waiting (no reply will come), forgotten here."""
        listed, self._listed = self._listed, []
        slots = list(self.waiting.values())
        self.waiting.clear()
        self.by_line.clear()
        return listed, slots

    def listeners_of(self, event: Event) -> List[Callable[[Event], Any]]:
        kind, viewer = event.get("event"), event.get("viewer")
        if kind not in VIEWER_EVENTS or not isinstance(viewer, str):
            return []
        return list(self.listeners.get((kind, viewer), ()))

    def listen(self, viewer: str, callback: Callable[[Event], Any], kind: str = "indicator") -> Callable[[], None]:
        """Calls ``callback`` with each event of ``kind`` (one of VIEWER_EVENTS) for ``viewer``."""
        key = (kind, viewer)
        self.listeners.setdefault(key, []).append(callback)

        def unsubscribe() -> None:
            callbacks = self.listeners.get(key)
            if callbacks and callback in callbacks:
                callbacks.remove(callback)
                if not callbacks:
                    del self.listeners[key]
        return unsubscribe

    # What viewers see -----------------------------------------------------------

    def screen_change(self, cmd: str, fields: Dict[str, Any]) -> ScreenChanges:
        """What a command does, once applied, to its user's screens: the main screen, and
        the side pane (protocol v4), which only ``pane="side"``, ``offline``, ``leave``,
        ``remove`` and ``receive_typing`` False change."""
        user = fields.get("user")
        if not isinstance(user, str):
            return None
        conv = fields.get("conv")
        # After `close`, a viewer still sees the main timeline under --audience members;
        # under open they see nothing.
        closed = None if self.audience_open else MAIN_CHAT
        side = pane_of(fields.get("pane")) == SIDE
        if cmd == "open":
            if side:    # at another thread than it shows, the side pane starts from empty
                return [(conv, user, SIDE, screen(fields.get("thread")))]
            return [(conv, user, MAIN, screen(fields.get("thread"), fields.get("view")))]
        if cmd == "close":
            return [(conv, user, SIDE, None)] if side else [(conv, user, MAIN, closed)]
        if cmd == "offline":
            return [(None, user, MAIN, closed), (None, user, SIDE, None)]
        if cmd in ("leave", "remove"):
            return [(conv, user, MAIN, None), (conv, user, SIDE, None)]
        if cmd in ("join", "user") and fields.get("receive_typing") is False:
            return [(None, user, MAIN, None), (None, user, SIDE, None)]
        return None

    def forget(self, changes: List[Tuple[Optional[str], str, str, Optional[Screen]]]) -> None:
        for conv, user, pane, kept in changes:
            shown = self.shown.get(user, {})
            keys = [(conv, pane)] if conv is not None else [key for key in shown if key[1] == pane]
            for key in keys:
                event = shown.get(key)
                if event is None:
                    continue
                if kept is None or screen(event.get("thread"), event.get("view")) != kept:
                    del shown[key]
            if not shown:
                self.shown.pop(user, None)

    def show(self, event: Event) -> None:
        viewer, conv = event.get("viewer"), event.get("conv")
        if not isinstance(viewer, str) or not isinstance(conv, str):
            return
        key = (conv, pane_of(event.get("pane")))
        if event.get("typing") or event.get("more"):
            self.shown.setdefault(viewer, {})[key] = event
        elif key in self.shown.get(viewer, ()):
            del self.shown[viewer][key]
            if not self.shown[viewer]:
                del self.shown[viewer]

    def shown_at(self, viewer: str, conv: str, thread: Optional[str], view: Optional[str],
                 pane: Optional[str] = None) -> Optional[Event]:
        event = self.shown.get(viewer, {}).get((conv, pane_of(pane)))
        if event is None or screen(event.get("thread"), event.get("view")) != screen(thread, view):
            return None
        return event


class EventQueue:
    """The events no request waited for, in typingd's order, takeable in that order or
    by viewer, each in O(1): every entry is in the queue of all events and, when it has
    a viewer, in that viewer's queue; an entry taken from one is marked and skipped
    (and dropped) when the other reaches it."""

    def __init__(self) -> None:
        self._all: Deque[List[Any]] = collections.deque()           # [event, taken]
        self._by_viewer: Dict[str, Deque[List[Any]]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def extend(self, events: Iterable[Event]) -> None:
        for event in events:
            entry = [event, False]
            self._all.append(entry)
            viewer = event.get("viewer")
            if isinstance(viewer, str):
                self._by_viewer.setdefault(viewer, collections.deque()).append(entry)
            self._count += 1

    def take(self, viewer: Optional[str] = None) -> Optional[Event]:
        """Removes and returns the first event (``viewer``'s, when given), or None."""
        queue = self._all if viewer is None else self._by_viewer.get(viewer)
        while queue:
            entry = queue.popleft()
            if not entry[1]:
                entry[1] = True
                self._count -= 1
                self._trim(entry[0].get("viewer"))
                return entry[0]  # type: ignore[no-any-return]
        if viewer is not None:
            self._by_viewer.pop(viewer, None)
        return None

    def take_all(self, viewer: Optional[str] = None) -> List[Event]:
        """Removes and returns every event (``viewer``'s, when given)."""
        taken = []
        while True:
            event = self.take(viewer)
            if event is None:
                return taken
            taken.append(event)

    def _trim(self, viewer: Any) -> None:
        """Drops taken entries at the fronts (of all, and of ``viewer``'s), so memory
        follows the events left."""
        while self._all and self._all[0][1]:
            self._all.popleft()
        queue = self._by_viewer.get(viewer) if isinstance(viewer, str) else None
        if queue is not None:
            while queue and queue[0][1]:
                queue.popleft()
            if not queue:
                del self._by_viewer[viewer]


#: The steps of ``close``: until this share of the timeout typingd may drain; then
#: SIGTERM until the next share; then SIGKILL.
DRAIN_SHARE, TERM_SHARE = 0.5, 0.9
#: How long ``close`` waits for a process it sent SIGKILL (it cannot refuse).
KILL_WAIT = 1.0


