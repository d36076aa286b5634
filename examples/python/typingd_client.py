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

Protocol v2: ``open_view``/``close_view`` (the ``open`` and ``close`` commands:
``close()`` ends typingd), ``user`` (renames and settings without a
conversation), ``send_typing`` on ``join`` and ``user``, ``timeout_ms`` on
``type``, and the options ``audience``, ``order`` and ``max_listed``. Every
command takes ``at`` (the manual clock's time).

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

    def __init__(self, binary="typingd", *options, audience=None, order=None, max_listed=None):
        """Starts ``binary`` with ``options`` (strings, as on a command line), plus
        ``--audience members|open`` (who receives indicators: every member, or
        those with the conversation open), ``--order start|recent|name`` (how
        typers are listed) and ``--max-listed N`` (ids listed per indicator) when
        given."""
        arguments = [binary, *options]
        for flag, value in (("--audience", audience), ("--order", order), ("--max-listed", max_listed)):
            if value is not None:
                arguments += [flag, str(value)]
        self._process = subprocess.Popen(
            arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self._listed = []   # member and streak events waiting for their snapshot event
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting = {}  # id -> [threading.Event, reply]
        self._events = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="typingd-reader", daemon=True)
        self._reader.start()

    # Commands -----------------------------------------------------------

    def request(self, cmd, timeout=5.0, **fields):
        """Sends one command with a fresh id and returns its reply event."""
        request_id = f"py-{next(self._ids)}"
        slot = [threading.Event(), None]
        with self._lock:
            self._waiting[request_id] = slot
        line = json.dumps({"cmd": cmd, "id": request_id, **fields}, ensure_ascii=False,
                          separators=(",", ":"))
        try:
            self._process.stdin.write(line.encode("utf-8") + b"\n")
        except BrokenPipeError:
            raise TypingdError({"code": "gone", "message": "typingd has exited"}) from None
        if not slot[0].wait(timeout):
            with self._lock:
                self._waiting.pop(request_id, None)
            raise TimeoutError(f"no reply to {cmd} within {timeout} s")
        reply = slot[1]
        if reply is None:
            raise TypingdError({"code": "gone", "message": "typingd exited before replying"})
        if reply["event"] == "error":
            raise TypingdError(reply)
        return reply

    def _command(self, cmd, at=None, **fields):
        """Sends ``cmd`` with the fields that are not None (and ``at`` if given)."""
        present = {key: value for key, value in fields.items() if value is not None}
        if at is not None:
            present["at"] = at
        return self.request(cmd, **present)

    def join(self, conv, user, name=None, send_typing=None, at=None):
        """``user`` joins ``conv``; ``name`` and ``send_typing`` set their settings."""
        return self._command("join", conv=conv, user=user, name=name, send_typing=send_typing, at=at)

    def type(self, conv, user, empty=False, timeout_ms=None, at=None):
        """A keystroke; ``timeout_ms`` overrides --timeout-ms for this keystroke."""
        return self._command("type", conv=conv, user=user, empty=empty or None, timeout_ms=timeout_ms, at=at)

    def send(self, conv, user, at=None):
        return self._command("send", conv=conv, user=user, at=at)

    def leave(self, conv, user, at=None):
        return self._command("leave", conv=conv, user=user, at=at)

    def remove(self, conv, user, by=None, at=None):
        return self._command("remove", conv=conv, user=user, by=by, at=at)

    def offline(self, user, at=None):
        return self._command("offline", user=user, at=at)

    def open_view(self, conv, user, at=None):
        """The ``open`` command: ``user`` has ``conv`` on screen."""
        return self._command("open", conv=conv, user=user, at=at)

    def close_view(self, conv, user, at=None):
        """The ``close`` command: the view closes, and the user's own typing there stops."""
        return self._command("close", conv=conv, user=user, at=at)

    def user(self, user, name=None, send_typing=None, at=None):
        """Sets a user's name and/or whether others see them type, everywhere."""
        return self._command("user", user=user, name=name, send_typing=send_typing, at=at)

    def tick(self, at):
        """Moves the manual clock to ``at``, firing the timeouts due by then."""
        return self._command("tick", at=at)

    def query(self, conv, at=None):
        return self._command("query", conv=conv, at=at)

    def stats(self, at=None):
        return self._command("stats", at=at)

    def snapshot(self, at=None):
        """Returns (snapshot event, member events, streak events)."""
        reply = self._command("snapshot", at=at)
        listed = reply.pop("_listed", [])
        return (reply, [e for e in listed if e["event"] == "member"],
                [e for e in listed if e["event"] == "streak"])

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
        for raw in self._process.stdout:
            event = json.loads(raw)
            if event.get("event") in ("member", "streak"):
                self._listed.append(event)   # part of the snapshot reply that follows
                continue
            if event.get("event") == "snapshot":
                event["_listed"], self._listed = self._listed, []
            request_id = event.get("id")
            slot = None
            if event.get("event") in self.REPLIES and isinstance(request_id, str):
                with self._lock:
                    slot = self._waiting.pop(request_id, None)
            if slot is not None:
                slot[1] = event
                slot[0].set()
            else:
                self._events.put(event)
        with self._lock:  # typingd is gone: wake everyone still waiting
            for slot in self._waiting.values():
                slot[0].set()
            self._waiting.clear()
