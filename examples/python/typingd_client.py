"""A small Python wrapper around a typingd subprocess.

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
with ``next_event``. A thread reads typingd's stdout all the time, so typingd
never blocks on a full pipe however many events it writes.

Protocol v2: ``open_view(conv, user)`` and ``close_view(conv, user)`` (the
``open`` and ``close`` commands; ``close()`` ends typingd's input), ``user`` (renames and
settings without a conversation), ``send_typing`` on ``join`` and ``user``,
``timeout_ms`` on ``type``, ``tick`` and ``snapshot``, and the options
``audience``, ``order`` and ``max_listed``. Every command takes ``at`` (the
manual clock's time; refused as ``clock_mode`` with the real clock). Optional
fields left as None are not sent.

    with Typingd("typingd", "--clock", "manual", audience="open", order="recent") as td:
        td.join("dm", "alice", name="Alice", send_typing=True)
        td.join("dm", "bob", name="Bob")
        td.open_view("dm", "bob", at=10)            # bob has the conversation on screen
        td.type("dm", "alice", at=20, timeout_ms=30000)
        td.close_view("dm", "bob", at=30)           # bob's screen went away

Standard library only; Python 3.8+.
"""
import itertools
import json
import queue
import subprocess
import threading

__all__ = ["Typingd", "TypingdError"]


class TypingdError(Exception):
    """typingd answered a command with an ``error`` event (kept in ``.event``)."""

    def __init__(self, event):
        super().__init__(f"{event.get('code')}: {event.get('message')}")
        self.event = event
        self.code = event.get("code")


class Typingd:
    """A running typingd; close it (or use ``with``) to end its input."""

    REPLIES = ("ok", "error", "state", "stats", "snapshot")
    LISTED = ("member", "streak")  # written before the ``snapshot`` event they belong to

    def __init__(self, binary="typingd", *options, audience=None, order=None, max_listed=None):
        """Starts ``binary`` with ``options`` (strings, as on its command line), and
        with these protocol v2 options when they are not None:

        - ``audience``: ``"members"`` (every member receives indicators, the
          default) or ``"open"`` (only members whose view is open; see ``open``);
          passed as ``--audience``.
        - ``order``: ``"start"`` (typers listed by when their streak began, the
          default), ``"recent"`` (most recent keystroke first) or ``"name"`` (by
          display name); passed as ``--order``.
        - ``max_listed``: the most user ids an indicator lists (the others are
          counted in its ``more``); passed as ``--max-listed``.
        """
        arguments = [binary, *options]
        for flag, value in (("--audience", audience), ("--order", order), ("--max-listed", max_listed)):
            if value is not None:
                arguments += [flag, str(value)]
        self._process = subprocess.Popen(
            arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting = {}  # id -> [threading.Event, reply, listed member/streak events, line]
        self._lines = 0     # lines written: the number typingd gives the next one is this + 1
        self._by_line = {}  # line number -> id of a request still waiting
        self._events = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="typingd-reader", daemon=True)
        self._reader.start()

    # Commands -----------------------------------------------------------

    def request(self, cmd, timeout=5.0, **fields):
        """Sends one command with a fresh id and returns its reply event."""
        return self._exchange(cmd, timeout, fields)[0]

    def _exchange(self, cmd, timeout, fields):
        """Sends one command; returns (reply, the member/streak events before it)."""
        request_id = f"py-{next(self._ids)}"
        line = json.dumps({"cmd": cmd, "id": request_id, **fields}, ensure_ascii=False,
                          separators=(",", ":"))
        with self._lock:
            # Numbered and written under the lock, so that line numbers follow the
            # order of the writes: an error for a line typingd could not read an id
            # from (line_too_long, say) is matched by its line number.
            self._lines += 1
            slot = [threading.Event(), None, [], self._lines]
            self._waiting[request_id] = slot
            self._by_line[self._lines] = request_id
            try:
                self._process.stdin.write(line.encode("utf-8") + b"\n")
            except BrokenPipeError:
                self._waiting.pop(request_id, None)
                self._by_line.pop(self._lines, None)
                raise TypingdError({"code": "gone", "message": "typingd has exited"}) from None
        if not slot[0].wait(timeout):
            with self._lock:
                self._waiting.pop(request_id, None)
                self._by_line.pop(slot[3], None)
            raise TimeoutError(f"no reply to {cmd} within {timeout} s")
        reply = slot[1]
        if reply is None:
            raise TypingdError({"code": "gone", "message": "typingd exited before replying"})
        if reply["event"] == "error":
            raise TypingdError(reply)
        return reply, slot[2]

    @staticmethod
    def _given(at=None, **fields):
        """The fields that are not None, then ``at`` when given."""
        present = {key: value for key, value in fields.items() if value is not None}
        if at is not None:
            present["at"] = at
        return present

    def join(self, conv, user, name=None, send_typing=None, at=None):
        """``user`` becomes a member of ``conv`` (view closed). ``name`` and
        ``send_typing`` (False: nobody sees this user type) set the user's settings
        in every conversation."""
        return self.request("join", **self._given(conv=conv, user=user, name=name,
                                                   send_typing=send_typing, at=at))

    def type(self, conv, user, empty=False, timeout_ms=None, at=None):
        """A keystroke (``empty=True``: the input box is now empty). ``timeout_ms``
        replaces --timeout-ms for this keystroke: the streak ends that many ms later
        unless another keystroke comes."""
        return self.request("type", **self._given(conv=conv, user=user, empty=empty,
                                                   timeout_ms=timeout_ms, at=at))

    def send(self, conv, user, at=None):
        return self.request("send", **self._given(conv=conv, user=user, at=at))

    def leave(self, conv, user, at=None):
        return self.request("leave", **self._given(conv=conv, user=user, at=at))

    def remove(self, conv, user, by=None, at=None):
        return self.request("remove", **self._given(conv=conv, user=user, by=by, at=at))

    def offline(self, user, at=None):
        return self.request("offline", **self._given(user=user, at=at))

    def open_view(self, conv, user, at=None):
        """The ``open`` command: ``user`` has ``conv`` on screen (their view opens).
        With ``audience="open"`` only such viewers receive indicators."""
        return self.request("open", **self._given(conv=conv, user=user, at=at))

    def close_view(self, conv, user, at=None):
        """The ``close`` command: ``user``'s view of ``conv`` closes and their typing
        there stops (reason ``closed``)."""
        return self.request("close", **self._given(conv=conv, user=user, at=at))

    def user(self, user, name=None, send_typing=None, at=None):
        """Sets ``user``'s display name and/or ``send_typing`` in every conversation
        they are in; only the fields given are sent. ``not_member`` when the user is
        a member nowhere."""
        return self.request("user", **self._given(user=user, name=name,
                                                   send_typing=send_typing, at=at))

    def tick(self, at):
        """Moves the manual clock to ``at``, firing the timeouts due by then."""
        return self.request("tick", at=at)

    def query(self, conv, at=None):
        return self.request("query", **self._given(conv=conv, at=at))

    def stats(self, at=None):
        return self.request("stats", **self._given(at=at))

    def snapshot(self, at=None):
        """Returns (the ``snapshot`` event, its ``member`` events, its ``streak``
        events), in the order typingd wrote them."""
        reply, listed = self._exchange("snapshot", 5.0, self._given(at=at))
        return (reply, [event for event in listed if event["event"] == "member"],
                [event for event in listed if event["event"] == "streak"])

    # Events -------------------------------------------------------------

    def next_event(self, timeout=None):
        """The next indicator or typing event; None if none comes within timeout."""
        try:
            return self._events.get(timeout=timeout)
        except queue.Empty:
            return None

    # Life cycle -----------------------------------------------------------

    def close(self, timeout=30.0):
        """Ends typingd's input; it drains (unless --no-drain) and exits. Returns
        the exit status. Events written meanwhile stay readable with next_event."""
        if self._process.stdin and not self._process.stdin.closed:
            self._process.stdin.close()
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
        for raw in self._process.stdout:
            event = json.loads(raw)
            if event.get("event") in self.LISTED:
                listed.append(event)
                continue
            request_id = event.get("id")
            slot = None
            if event.get("event") in self.REPLIES:
                with self._lock:
                    if request_id is None and event.get("event") == "error":
                        request_id = self._by_line.get(event.get("line"))
                    if isinstance(request_id, str):
                        slot = self._waiting.pop(request_id, None)
                    if slot is not None:
                        self._by_line.pop(slot[3], None)
            if slot is not None:
                slot[1] = event
                slot[2] = listed
            else:
                for item in listed:  # nobody waits for them (timed out): keep them
                    self._events.put(item)
                self._events.put(event)
            listed = []
            if slot is not None:
                slot[0].set()
        for item in listed:
            self._events.put(item)
        with self._lock:  # typingd is gone: wake everyone still waiting
            for slot in self._waiting.values():
                slot[0].set()
            self._waiting.clear()
