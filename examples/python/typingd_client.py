"""A small Python wrapper around a typingd subprocess (protocol v3).

    from typingd_client import Typingd

    with Typingd("typingd", "--timeout-ms", "3000") as td:
        td.join("dm", "alice", name="Alice")
        td.join("dm", "bob", name="Bob")
        td.type("dm", "alice")
        print(td.next_event(timeout=1))     # what bob sees: Alice is typing...
        print(td.query("dm"))               # {'event': 'state', 'members': [...], ...}

Every command is sent with an id ("py-1", "py-2", ...); the call waits for the
reply that carries it: ``ok`` (returned), ``state``/``stats`` (returned),
``snapshot`` (returned with its ``member`` and ``streak`` events) or ``error``
(raised as TypingdError). All other events (indicator, typing) go to a queue read
with ``next_event``, as typingd wrote them. A thread reads typingd's stdout all the
time, through a buffered reader (one read(2) brings up to 64 KiB), so typingd never
blocks on a full pipe however many events it writes, and each event is queued as
soon as its line is complete.

Protocol v2: ``open_view`` / ``close_view`` (the ``open`` and ``close`` commands;
``close()`` ends typingd's input), ``user``, ``send_typing``, ``timeout_ms``,
``tick``, ``snapshot``, and the options ``audience``, ``order``, ``max_listed``.

Protocol v3: ``activity`` and ``thread`` on ``type``; ``thread`` on ``send``,
``open_view`` and ``query``; ``view`` ("chat" or "list") on ``open_view``;
``locale`` and ``receive_typing`` on ``join`` and ``user``; the options
``phrases`` (one path or several), ``default_locale`` and ``list_style``.
Indicators keep every key typingd wrote (``thread``, ``view``, ``activities``,
``more``); ``shown(viewer, conv, thread=..., view=...)`` answers "what does this
viewer see there now".

Every command takes ``at`` (the manual clock's time; refused as ``clock_mode`` with
the real clock). Optional fields left as None are not sent.

    with Typingd("typingd", "--clock", "manual", audience="open", phrases="fixtures/de.json") as td:
        td.join("dev", "ana", name="Ana")
        td.join("dev", "ben", name="Ben", locale="de")
        td.open_view("dev", "ben", thread="release-42", at=10)
        td.type("dev", "ana", thread="release-42", activity="recording_audio", at=20)
        td.shown("ben", "dev", thread="release-42")["text"]   # 'Ana nimmt Audio auf …'

Standard library only; Python 3.8+. See README.md beside this file.
"""
import itertools
import json
import os
import queue
import subprocess
import threading

__all__ = ["Typingd", "TypingdError", "ACTIVITIES"]

#: The values of ``type``'s ``activity`` (protocol v3 §A); ``typing`` is the default.
ACTIVITIES = ("typing", "recording_audio", "recording_video", "sending_photo",
              "sending_video", "sending_file", "sharing_location")

#: Bytes the stdout reader asks for per read(2), and the size of the stdin buffer.
PIPE_BUFFER = 64 * 1024


class TypingdError(Exception):
    """typingd answered a command with an ``error`` event (kept in ``.event``)."""

    def __init__(self, event):
        super().__init__(f"{event.get('code')}: {event.get('message')}")
        self.event = event
        self.code = event.get("code")


class _Slot:
    """A request waiting for its reply."""
    __slots__ = ("done", "reply", "listed", "line", "screens")

    def __init__(self, line, screens):
        self.done = threading.Event()
        self.reply = None
        self.listed = []
        self.line = line
        self.screens = screens  # what the command does to the viewers' screens, or None


def _screen(thread=None, view=None):
    """A viewer's screen in one conversation: (thread or None, "chat" or "list")."""
    return (thread, "list" if view == "list" else "chat")


_MAIN_CHAT = _screen()


class Typingd:
    """A running typingd; close it (or use ``with``) to end its input."""

    REPLIES = ("ok", "error", "state", "stats", "snapshot")
    LISTED = ("member", "streak")  # written before the ``snapshot`` event they belong to

    def __init__(self, binary="typingd", *options, audience=None, order=None, max_listed=None,
                 phrases=None, default_locale=None, list_style=None):
        """Starts ``binary`` with ``options`` (strings, as on its command line), and
        with these options when they are not None:

        - ``audience``: ``"members"`` (every member receives indicators, the
          default) or ``"open"`` (only members whose view is open; see ``open``);
          passed as ``--audience``.
        - ``order``: ``"start"`` (typers listed by when their streak began, the
          default), ``"recent"`` (most recent keystroke first) or ``"name"`` (by
          display name); passed as ``--order``.
        - ``max_listed``: the most user ids an indicator lists (the others are
          counted in its ``more``); passed as ``--max-listed``.
        - ``phrases``: a phrase table (a JSON file, or a folder of them), or a list
          of those; one ``--phrases`` each, in order (a later table for the same
          locale replaces an earlier one).
        - ``default_locale``: the locale of users who give none; ``--default-locale``.
        - ``list_style``: ``"group"`` or ``"compact"`` (the default), the phrasing of
          chat-list rows (views opened with ``view="list"``); ``--list-style``.
        """
        arguments = [binary, *options]
        for flag, value in (("--audience", audience), ("--order", order), ("--max-listed", max_listed),
                            ("--default-locale", default_locale), ("--list-style", list_style)):
            if value is not None:
                arguments += [flag, str(value)]
        if phrases is not None:
            for path in [phrases] if isinstance(phrases, (str, bytes, os.PathLike)) else phrases:
                arguments += ["--phrases", os.fsdecode(path)]
        # The audience decides what `close` does to what a viewer sees (see shown()).
        self._audience_open = self._option(arguments[1:], "--audience") == "open"
        # Buffered both ways: stdout is read through a 64 KiB buffer (not one read(2)
        # per byte, as an unbuffered pipe's line iterator does), and each command is
        # flushed as soon as it is written.
        self._process = subprocess.Popen(
            arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=PIPE_BUFFER)
        self._ids = itertools.count(1)
        # Two locks: _write_lock keeps lines, their numbers and the writes in one order;
        # _lock guards the tables the reader thread shares. A write that blocks (typingd's
        # stdin full) holds only _write_lock, which the reader never takes, so the reader
        # keeps emptying stdout and typingd can get back to reading its input.
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._waiting = {}  # id -> _Slot
        self._lines = 0     # lines written: the number typingd gives the next one is this + 1
        self._by_line = {}  # line number -> id of a request still waiting
        self._shown = {}    # viewer -> {conv: the indicator on their screen, when not empty}
        self._events = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="typingd-reader", daemon=True)
        self._reader.start()

    @staticmethod
    def _option(arguments, flag):
        """The last value given for ``flag`` (``--flag value`` or ``--flag=value``)."""
        value = None
        for index, argument in enumerate(arguments):
            if argument == flag and index + 1 < len(arguments):
                value = arguments[index + 1]
            elif isinstance(argument, str) and argument.startswith(flag + "="):
                value = argument[len(flag) + 1:]
        return value

    # Commands -----------------------------------------------------------

    def request(self, cmd, timeout=5.0, **fields):
        """Sends one command with a fresh id and returns its reply event."""
        return self._exchange(cmd, timeout, fields)[0]

    def _exchange(self, cmd, timeout, fields):
        """Sends one command; returns (reply, the member/streak events before it)."""
        request_id = f"py-{next(self._ids)}"
        data = json.dumps({"cmd": cmd, "id": request_id, **fields}, ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8") + b"\n"
        with self._write_lock:
            # Numbered and written in one order, so that line numbers follow the
            # order of the writes: an error for a line typingd could not read an id
            # from (line_too_long, say) is matched by its line number.
            with self._lock:
                self._lines += 1
                slot = _Slot(self._lines, self._screen_change(cmd, fields))
                self._waiting[request_id] = slot
                self._by_line[slot.line] = request_id
            try:
                self._process.stdin.write(data)
                self._process.stdin.flush()
            except (BrokenPipeError, ValueError):  # ValueError: stdin already closed
                with self._lock:
                    self._waiting.pop(request_id, None)
                    self._by_line.pop(slot.line, None)
                raise TypingdError({"code": "gone", "message": "typingd has exited"}) from None
        if not slot.done.wait(timeout):
            with self._lock:
                self._waiting.pop(request_id, None)
                self._by_line.pop(slot.line, None)
            raise TimeoutError(f"no reply to {cmd} within {timeout} s")
        reply = slot.reply
        if reply is None:
            raise TypingdError({"code": "gone", "message": "typingd exited before replying"})
        if reply["event"] == "error":
            raise TypingdError(reply)
        return reply, slot.listed

    @staticmethod
    def _given(at=None, **fields):
        """The fields that are not None, then ``at`` when given."""
        present = {key: value for key, value in fields.items() if value is not None}
        if at is not None:
            present["at"] = at
        return present

    def join(self, conv, user, name=None, send_typing=None, at=None, *, locale=None, receive_typing=None):
        """``user`` becomes a member of ``conv`` (view closed, main timeline).
        ``name``, ``send_typing`` (False: nobody sees this user type), ``locale`` (a
        language tag: the phrase table their indicators use) and ``receive_typing``
        (False: they receive no indicators) set the user's settings in every
        conversation."""
        return self.request("join", **self._given(conv=conv, user=user, name=name, send_typing=send_typing,
                                                   locale=locale, receive_typing=receive_typing, at=at))

    def type(self, conv, user, empty=False, timeout_ms=None, at=None, *, activity=None, thread=None):
        """A keystroke (``empty=True``: the input box is now empty). ``timeout_ms``
        replaces --timeout-ms for this keystroke: the streak ends that many ms later
        unless another keystroke comes. ``activity`` is one of ACTIVITIES (typingd's
        default: ``typing``); ``thread`` types in a thread of ``conv`` (default: the
        main timeline; typing somewhere else stops the streak with reason ``moved``)."""
        return self.request("type", **self._given(conv=conv, user=user, thread=thread, empty=empty,
                                                   activity=activity, timeout_ms=timeout_ms, at=at))

    def send(self, conv, user, at=None, *, thread=None):
        """A message sent: stops the user's streak when it is at ``thread`` (default:
        the main timeline)."""
        return self.request("send", **self._given(conv=conv, user=user, thread=thread, at=at))

    def leave(self, conv, user, at=None):
        return self.request("leave", **self._given(conv=conv, user=user, at=at))

    def remove(self, conv, user, by=None, at=None):
        return self.request("remove", **self._given(conv=conv, user=user, by=by, at=at))

    def offline(self, user, at=None):
        return self.request("offline", **self._given(user=user, at=at))

    def open_view(self, conv, user, at=None, *, thread=None, view=None):
        """The ``open`` command: ``user`` has ``conv`` on screen (their view opens),
        at ``thread`` (default: the main timeline), as a chat (``view="chat"``, the
        default) or as a row of their chat list (``view="list"``, never with a
        thread). With ``audience="open"`` only such viewers receive indicators."""
        return self.request("open", **self._given(conv=conv, user=user, thread=thread, view=view, at=at))

    def close_view(self, conv, user, at=None):
        """The ``close`` command: ``user``'s view of ``conv`` closes (back to the
        main timeline) and their typing there stops (reason ``closed``)."""
        return self.request("close", **self._given(conv=conv, user=user, at=at))

    def user(self, user, name=None, send_typing=None, at=None, *, locale=None, receive_typing=None):
        """Sets ``user``'s display name, ``send_typing``, ``locale`` and/or
        ``receive_typing`` in every conversation they are in; only the fields given
        are sent. ``not_member`` when the user is a member nowhere."""
        return self.request("user", **self._given(user=user, name=name, send_typing=send_typing,
                                                   locale=locale, receive_typing=receive_typing, at=at))

    def tick(self, at):
        """Moves the manual clock to ``at``, firing the timeouts due by then."""
        return self.request("tick", at=at)

    def query(self, conv, at=None, *, thread=None):
        """The ``state`` of ``conv``; its ``typing`` (and ``activities``) are those of
        ``thread`` when given, else of the main timeline."""
        return self.request("query", **self._given(conv=conv, thread=thread, at=at))

    def stats(self, at=None):
        return self.request("stats", **self._given(at=at))

    def snapshot(self, at=None):
        """Returns (the ``snapshot`` event, its ``member`` events, its ``streak``
        events), in the order typingd wrote them and with every key it wrote
        (v3: a member's ``locale``, ``receive_typing``, ``thread``, ``view``,
        ``forgotten``; a streak's ``thread`` and ``activity``)."""
        reply, listed = self._exchange("snapshot", 5.0, self._given(at=at))
        return (reply, [event for event in listed if event["event"] == "member"],
                [event for event in listed if event["event"] == "streak"])

    # Events -------------------------------------------------------------

    def next_event(self, timeout=None):
        """The next indicator or typing event, as typingd wrote it (an indicator
        keeps its ``thread``, ``view``, ``activities`` and ``more``); None if none
        comes within timeout."""
        try:
            return self._events.get(timeout=timeout)
        except queue.Empty:
            return None

    def shown(self, viewer, conv, thread=None, view=None):
        """What ``viewer`` sees of ``conv`` at a location: the main timeline, or
        ``thread``; as a chat, or with ``view="list"`` as a chat-list row.

        Returns the last ``indicator`` typingd sent that viewer for that screen, as
        received (its ``text``, ``typing``, ``activities``, ...), or None when it
        shows nothing: nobody types there, or it is not the viewer's screen (a
        viewer has one screen per conversation, and typingd sends a thread's
        indicator only to those who have that thread open).

        Indicators count from the moment the reader reads them, whether or not
        ``next_event`` has returned them yet. typingd forgets silently what a
        viewer was sent when their screen changes (``open`` at another thread or
        view, ``close``, ``offline``, ``leave``, ``remove``, ``receive_typing``
        False); this follows it for the commands sent through this object, when
        their reply arrives. Only non-empty indicators are kept, so the memory
        follows the number of viewers who see someone typing."""
        with self._lock:
            event = self._shown.get(viewer, {}).get(conv)
        if event is None or _screen(event.get("thread"), event.get("view")) != _screen(thread, view):
            return None
        return event

    def _screen_change(self, cmd, fields):
        """What a command does, once applied, to its user's screens: a list of
        (conv or None for every conversation, user, the screen kept or None)."""
        user = fields.get("user")
        if not isinstance(user, str):
            return None
        conv = fields.get("conv")
        # After `close`, a viewer still sees the main timeline under --audience members;
        # under open they see nothing.
        closed = None if self._audience_open else _MAIN_CHAT
        if cmd == "open":
            return [(conv, user, _screen(fields.get("thread"), fields.get("view")))]
        if cmd == "close":
            return [(conv, user, closed)]
        if cmd == "offline":
            return [(None, user, closed)]
        if cmd in ("leave", "remove"):
            return [(conv, user, None)]
        if cmd in ("join", "user") and fields.get("receive_typing") is False:
            return [(None, user, None)]
        return None

    def _forget(self, changes):
        """Drops what viewers no longer see after a command (under self._lock)."""
        for conv, user, kept in changes:
            shown = self._shown.get(user, {})
            for key in [conv] if conv is not None else list(shown):
                event = shown.get(key)
                if event is not None and (kept is None or _screen(event.get("thread"), event.get("view")) != kept):
                    del shown[key]
            if not shown:
                self._shown.pop(user, None)

    def _show(self, event):
        """An indicator arrived: it is what its viewer now sees (under self._lock)."""
        viewer, conv = event.get("viewer"), event.get("conv")
        if event.get("typing") or event.get("more"):
            self._shown.setdefault(viewer, {})[conv] = event
        elif conv in self._shown.get(viewer, ()):
            del self._shown[viewer][conv]
            if not self._shown[viewer]:
                del self._shown[viewer]

    # Life cycle -----------------------------------------------------------

    def close(self, timeout=30.0):
        """Ends typingd's input; it drains (unless --no-drain) and exits. Returns
        the exit status. Events written meanwhile stay readable with next_event."""
        with self._write_lock:
            if self._process.stdin and not self._process.stdin.closed:
                try:
                    self._process.stdin.close()
                except BrokenPipeError:  # typingd is gone; what was left to write too
                    pass
        status = self._process.wait(timeout)
        self._reader.join(timeout)
        if not self._reader.is_alive():
            self._process.stdout.close()
        return status

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read(self):
        listed = []  # member/streak events waiting for the snapshot event that ends them
        # A BufferedReader's lines: each readline() takes a line from the buffer, and
        # reads (up to 64 KiB, whatever has arrived) only when no whole line is left.
        for raw in self._process.stdout:
            event = json.loads(raw)
            kind = event.get("event")
            if kind in self.LISTED:
                listed.append(event)
                continue
            if kind == "indicator":
                with self._lock:
                    self._show(event)
            request_id = event.get("id")
            slot = None
            if kind in self.REPLIES:
                with self._lock:
                    if request_id is None and kind == "error":
                        request_id = self._by_line.get(event.get("line"))
                    if isinstance(request_id, str):
                        slot = self._waiting.pop(request_id, None)
                    if slot is not None:
                        self._by_line.pop(slot.line, None)
                        if slot.screens and kind != "error":
                            self._forget(slot.screens)
            if slot is not None:
                slot.reply = event
                slot.listed = listed
            else:
                for item in listed:  # nobody waits for them (timed out): keep them
                    self._events.put(item)
                self._events.put(event)
            listed = []
            if slot is not None:
                slot.done.set()
        for item in listed:
            self._events.put(item)
        with self._lock:  # typingd is gone: wake everyone still waiting
            for slot in self._waiting.values():
                slot.done.set()
            self._waiting.clear()
