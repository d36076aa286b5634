"""A small Python wrapper around a typingd subprocess.

    from typingd_client import Typingd

    with Typingd("typingd", "--timeout-ms", "3000") as td:
        td.join("dm", "alice", name="Alice")
        td.join("dm", "bob", name="Bob")
        td.type("dm", "alice")
        print(td.next_event(timeout=1))     # what bob sees: Alice is typing...
        print(td.query("dm"))               # {'event': 'state', 'members': [...], ...}

Every command is sent with an id ("py-1", "py-2", ...); the call waits for the
reply that carries it: ``ok`` (returned), ``state``/``stats`` (returned) or
``error`` (raised as TypingdError). All other events (indicator, typing) go to a
queue read with ``next_event``. A thread reads typingd's stdout all the time, so
typingd never blocks on a full pipe however many events it writes.

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

    REPLIES = ("ok", "error", "state", "stats")

    def __init__(self, binary="typingd", *options):
        self._process = subprocess.Popen(
            [binary, *options], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
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

    def join(self, conv, user, name=None):
        fields = {"conv": conv, "user": user}
        if name is not None:
            fields["name"] = name
        return self.request("join", **fields)

    def type(self, conv, user, empty=False):
        return self.request("type", conv=conv, user=user, empty=empty)

    def send(self, conv, user):
        return self.request("send", conv=conv, user=user)

    def leave(self, conv, user):
        return self.request("leave", conv=conv, user=user)

    def remove(self, conv, user, by=None):
        fields = {"conv": conv, "user": user}
        if by is not None:
            fields["by"] = by
        return self.request("remove", **fields)

    def offline(self, user):
        return self.request("offline", user=user)

    def query(self, conv):
        return self.request("query", conv=conv)

    def stats(self):
        return self.request("stats")

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
        return status

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read(self):
        for raw in self._process.stdout:
            event = json.loads(raw)
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
