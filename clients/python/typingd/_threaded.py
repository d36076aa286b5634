"""The threaded client: a typingd subprocess, a thread reading its stdout and one its stderr."""
from __future__ import annotations

import itertools
import os
import signal as signals
import subprocess
import threading
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ._common import (DRAIN_SHARE, KILL_WAIT, PIPE_BUFFER, STDERR_LIMIT, TERM_SHARE, Dispatcher, Event,
                      PathLike, TypingdError, TypingdExited, command_line, count_lines, encode, exit_status,
                      EventQueue, binary_origin, decode_line, given, gone, not_started, option_value,
                      signal_number)


class Typingd:
    """A running typingd, driven from threads. Close it (or leave a ``with`` block).

    Every command is sent with an id ("py-1", "py-2", ...) and the call waits for the
    reply that carries it: ``ok``, ``state``, ``stats`` or ``snapshot`` (returned), or
    ``error`` (raised as TypingdError). All other events (indicators, ``typing``) are
    kept, in typingd's order, for ``next_event``/``events``, and given as they arrive to
    the callbacks of ``on_indicator``. A thread reads typingd's stdout all the time, so
    typingd never blocks on a full pipe however many events it writes.
    """

    def __init__(self, binary: Optional[PathLike] = None, *options: Any, audience: Optional[str] = None,
                 order: Optional[str] = None, max_listed: Optional[int] = None,
                 phrases: Union[None, PathLike, Sequence[PathLike]] = None, default_locale: Optional[str] = None,
                 list_style: Optional[str] = None, clock: Optional[str] = None, timeout_ms: Optional[int] = None,
                 quiet_above: Optional[int] = None, several_after: Optional[int] = None,
                 announce_after_ms: Optional[int] = None, request_timeout: Optional[float] = 5.0, queue: bool = True) -> None:
        """Starts typingd: ``binary`` (default $TYPINGD_BINARY, else ``typingd`` on PATH)
        with ``options`` as on its command line, then one flag per named option given
        (``--audience``, ``--order``, ``--max-listed``, ``--phrases`` per table,
        ``--default-locale``, ``--list-style``, ``--clock``, ``--timeout-ms``, and protocol
        v4's ``--quiet-above``, ``--several-after``, ``--announce-after-ms``).

        ``request_timeout``: seconds a command waits for its reply (None: no limit).
        ``queue=False``: events are only given to ``on_indicator`` callbacks, not kept
        (for a long-running gateway). Raises ValueError for ``--format text`` and
        TypingdExited (status None) when the binary cannot be started.
        """
        arguments = command_line(binary, options, audience=audience, order=order, max_listed=max_listed,
                                 phrases=phrases, default_locale=default_locale, list_style=list_style,
                                 clock=clock, timeout_ms=timeout_ms, quiet_above=quiet_above,
                                 several_after=several_after, announce_after_ms=announce_after_ms)
        self.request_timeout = request_timeout
        self._queue_events = queue
        self._state = Dispatcher(option_value(arguments[1:], "--audience") == "open")
        self._ids = itertools.count(1)
        # Two locks: _write_lock keeps lines, their numbers and the writes in one order;
        # _lock guards the state the reader thread shares. A write that blocks (typingd's
        # stdin full) holds only _write_lock, which the reader never takes, so the reader
        # keeps emptying stdout and typingd can get back to reading its input.
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)   # an event queued, a line settled, or the end
        self._events = EventQueue()
        self._stderr = bytearray()
        self._finished = False
        self._stdin_closed = False
        try:
            self._process = subprocess.Popen(arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, bufsize=PIPE_BUFFER, start_new_session=True)
        except OSError as error:
            raise not_started(arguments[0], binary_origin(binary), error) from None
        self.pid = self._process.pid
        self._stderr_reader = threading.Thread(target=self._read_stderr, name="typingd-stderr", daemon=True)
        self._stderr_reader.start()
        self._reader = threading.Thread(target=self._read, name="typingd-reader", daemon=True)
        self._reader.start()

    # Commands -------------------------------------------------------------------

    def request(self, cmd: str, timeout: Optional[float] = None, **fields: Any) -> Event:
        """Sends any command with a fresh id and returns its reply event. Fields that
        are None are not sent. ``timeout`` defaults to ``request_timeout``."""
        return self._exchange(cmd, timeout, fields)[0]

    def _exchange(self, cmd: str, timeout: Optional[float], fields: Dict[str, Any]) -> Tuple[Event, List[Event]]:
        self._not_on_reader(cmd)
        request_id = f"py-{next(self._ids)}"
        data = encode(cmd, request_id, fields)
        done = threading.Event()
        with self._write_lock:
            # Numbered and written in one order, so that line numbers follow the order of
            # the writes: an error for a line typingd could not read an id from
            # (line_too_long, say) is matched by its line number.
            with self._lock:
                self._raise_if_gone(f"cannot send {cmd}")
                slot = self._state.add(request_id, cmd, fields, done)
            try:
                stdin = self._process.stdin
                assert stdin is not None
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError):  # ValueError: stdin already closed
                with self._lock:
                    self._state.drop(slot)
                self._wait_finished(1.0)
                raise self._gone(f"cannot send {cmd}") from None
        if not done.wait(self.request_timeout if timeout is None else timeout):
            with self._lock:
                self._state.drop(slot)
            raise TimeoutError(f"no reply to {cmd} within {self.request_timeout if timeout is None else timeout} s")
        reply = slot.reply
        if reply is None:
            self._wait_finished(1.0)
            raise self._gone(f"no reply to {cmd}")
        if reply.get("event") == "error":
            raise TypingdError(reply)
        return reply, slot.listed

    def join(self, conv: str, user: str, *, name: Optional[str] = None, send_typing: Optional[bool] = None,
             receive_typing: Optional[bool] = None, locale: Optional[str] = None,
             at: Optional[float] = None) -> Event:
        """``user`` becomes a member of ``conv``. ``name``, ``send_typing`` (False:
        nobody sees this user type), ``locale`` (the phrase table their indicators use)
        and ``receive_typing`` (False: they receive no indicators) are the user's
        settings in every conversation."""
        return self.request("join", **given(conv=conv, user=user, name=name, send_typing=send_typing,
                                            locale=locale, receive_typing=receive_typing, at=at))

    def type(self, conv: str, user: str, *, thread: Optional[str] = None, empty: Optional[bool] = None,
             activity: Optional[str] = None, status: Optional[str] = None, timeout_ms: Optional[int] = None,
             at: Optional[float] = None) -> Event:
        """A keystroke (``empty=True``: the input box is now empty). ``timeout_ms``
        replaces --timeout-ms for this keystroke; ``activity`` is one of ACTIVITIES;
        with ``activity="status"``, ``status`` is the words others see after the
        typer's name (``"is thinking"``); ``thread`` types in a thread of ``conv``
        (default: the main timeline)."""
        return self.request("type", **given(conv=conv, user=user, thread=thread, empty=empty or None,
                                            activity=activity, status=status, timeout_ms=timeout_ms, at=at))

    def send(self, conv: str, user: str, *, thread: Optional[str] = None, at: Optional[float] = None) -> Event:
        """A message sent: stops the user's streak at ``thread`` (default: the main timeline)."""
        return self.request("send", **given(conv=conv, user=user, thread=thread, at=at))

    def leave(self, conv: str, user: str, *, at: Optional[float] = None) -> Event:
        return self.request("leave", **given(conv=conv, user=user, at=at))

    def remove(self, conv: str, user: str, *, by: Optional[str] = None, at: Optional[float] = None) -> Event:
        return self.request("remove", **given(conv=conv, user=user, by=by, at=at))

    def offline(self, user: str, *, at: Optional[float] = None) -> Event:
        return self.request("offline", **given(user=user, at=at))

    def open_view(self, conv: str, user: str, *, thread: Optional[str] = None, view: Optional[str] = None,
                  pane: Optional[str] = None, at: Optional[float] = None) -> Event:
        """The ``open`` command: ``user`` has ``conv`` on screen, at ``thread``, as a
        chat or (``view="list"``) as a row of their chat list. ``pane="side"``: the
        user's side pane shows ``thread`` instead, beside the main screen."""
        return self.request("open", **given(conv=conv, user=user, thread=thread, view=view, pane=pane, at=at))

    def close_view(self, conv: str, user: str, *, pane: Optional[str] = None, at: Optional[float] = None) -> Event:
        """The ``close`` command: ``user``'s view of ``conv`` closes; their typing there
        stops. ``pane="side"``: the side pane is removed instead."""
        return self.request("close", **given(conv=conv, user=user, pane=pane, at=at))

    def user(self, user: str, *, name: Optional[str] = None, send_typing: Optional[bool] = None,
             receive_typing: Optional[bool] = None, locale: Optional[str] = None,
             at: Optional[float] = None) -> Event:
        """Sets ``user``'s settings in every conversation they are in (only those given)."""
        return self.request("user", **given(user=user, name=name, send_typing=send_typing,
                                            locale=locale, receive_typing=receive_typing, at=at))

    def tick(self, at: float) -> Event:
        """Moves the manual clock to ``at``, firing the timeouts due by then."""
        return self.request("tick", at=at)

    def query(self, conv: str, *, thread: Optional[str] = None, at: Optional[float] = None) -> Event:
        """The ``state`` of ``conv`` (its typers at ``thread`` when given)."""
        return self.request("query", **given(conv=conv, thread=thread, at=at))

    def stats(self, *, at: Optional[float] = None) -> Event:
        return self.request("stats", **given(at=at))

    def snapshot(self, *, at: Optional[float] = None) -> Tuple[Event, List[Event], List[Event]]:
        """(the ``snapshot`` event, its ``member`` events, its ``streak`` events), as written."""
        reply, listed = self._exchange("snapshot", None, given(at=at))
        return (reply, [event for event in listed if event.get("event") == "member"],
                [event for event in listed if event.get("event") == "streak"])

    def sync(self) -> None:
        """Returns once every line written before it has been applied and its events
        read (it sends a ``stats``, which counts as a command)."""
        self.stats()

    # Lines without id ---------------------------------------------------------------

    def write(self, cmd: str, **fields: Any) -> int:
        """Writes a command without id (no reply comes); returns its line number."""
        return self.write_raw(encode(cmd, None, fields)[:-1])

    def write_raw(self, data: Union[str, bytes]) -> int:
        """Writes ``data`` as is, then LF; returns the number of its first line (LFs
        inside count as line breaks, as typingd counts them)."""
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        with self._write_lock:
            with self._lock:
                self._raise_if_gone("cannot write")
                first = self._state.wrote(count_lines(raw))
            try:
                stdin = self._process.stdin
                assert stdin is not None
                stdin.write(raw + b"\n")
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                self._wait_finished(1.0)
                raise self._gone("cannot write") from None
        return first

    @property
    def lines_written(self) -> int:
        """typingd's number of the last line written."""
        with self._lock:
            return self._state.lines

    def outcome(self, line: int, timeout: Optional[float] = None) -> None:
        """What became of line ``line``: raises TypingdError if typingd refused it;
        returns once a later answer (or typingd's normal exit) shows it was applied.
        An id-less line that succeeds writes nothing: call it after ``sync()``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._arrived:
            while True:
                error = self._state.errors.get(line)
                if error is not None:
                    raise TypingdError(error)
                if line <= self._state.processed_through:
                    return None
                if self._finished:
                    if self._process.returncode == 0:
                        return None
                    raise self._gone(f"line {line} has no known outcome")
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"line {line} has no known outcome within {timeout} s")
                self._arrived.wait(left)

    # Events --------------------------------------------------------------------------

    def next_event(self, timeout: Optional[float] = None, viewer: Optional[str] = None) -> Optional[Event]:
        """The next event that answers no request (indicator, ``typing``), in typingd's
        order; only ``viewer``'s when given. None if none comes within ``timeout``
        seconds (None: wait until typingd's output ends)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._arrived:
            while True:
                event = self._events.take(viewer)
                if event is not None or self._finished:
                    return event
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._arrived.wait(left)

    def events(self, viewer: Optional[str] = None) -> List[Event]:
        """Every such event already read (``viewer``'s when given), without waiting."""
        with self._lock:
            return self._events.take_all(viewer)

    def on_indicator(self, viewer: str, callback: Callable[[Event], Any]) -> Callable[[], None]:
        """Calls ``callback(event)`` with each indicator for ``viewer`` as it is read (on
        the reader thread: keep it short). Returns a function that unsubscribes."""
        return self._listen(viewer, callback, "indicator")

    def on_announce(self, viewer: str, callback: Callable[[Event], Any]) -> Callable[[], None]:
        """Calls ``callback(event)`` with each ``announce`` for ``viewer`` (typingd's
        --announce-after-ms: a settled indicator's sentence, said once for a screen
        reader), as ``on_indicator`` does. Returns a function that unsubscribes."""
        return self._listen(viewer, callback, "announce")

    def _listen(self, viewer: str, callback: Callable[[Event], Any], kind: str) -> Callable[[], None]:
        with self._lock:
            unsubscribe = self._state.listen(viewer, callback, kind)

        def locked() -> None:
            with self._lock:
                unsubscribe()
        return locked

    def shown(self, viewer: str, conv: str, thread: Optional[str] = None,
              view: Optional[str] = None, pane: Optional[str] = None) -> Optional[Event]:
        """What ``viewer`` sees of ``conv`` at the main timeline or ``thread``, as a chat
        or (``view="list"``) as a chat-list row, on their main screen or (``pane="side"``)
        in their side pane: the last non-empty indicator typingd sent for that screen,
        or None. Follows the screen changes of commands sent through this object
        (``open``, ``close``, ``offline``, ``leave``, ``remove``, ``receive_typing``
        False) when their reply arrives."""
        with self._lock:
            return self._state.shown_at(viewer, conv, thread, view, pane)

    # Life cycle ------------------------------------------------------------------------

    @property
    def stderr(self) -> str:
        """What typingd wrote on stderr so far (the last 64 KiB)."""
        with self._lock:
            return self._stderr.decode("utf-8", "replace")

    @property
    def exit_status(self) -> Optional[int]:
        """typingd's exit status once it has exited (128 + n for signal n), else None."""
        code = self._process.poll()
        return None if code is None else exit_status(code)

    def close(self, timeout: float = 30.0, drain: bool = True) -> int:
        """Ends typingd's input and returns its exit status once it has exited and all
        its output was read. With ``drain``, typingd may drain (due streaks time out and
        their events are written) until half of ``timeout``; then it gets SIGTERM (it
        writes what it has and exits 0) until nine tenths; then SIGKILL. Without
        ``drain``, SIGTERM at once. Events stay readable with ``next_event``."""
        self._not_on_reader("close()")
        started = time.monotonic()
        if not drain:
            # SIGTERM before the end of input: typingd must not read the end first and
            # drain (under --clock manual that fires every pending timeout at once).
            self._signal(signals.SIGTERM)
        # A write blocked on a full pipe holds the write lock: wait for it only while
        # typingd may drain; the signals below end typingd, which frees the writer, and
        # the reader closes stdin at the end.
        self._stdin_closed = True
        if self._write_lock.acquire(timeout=max(0.0, (DRAIN_SHARE if drain else 0.0) * timeout)):
            try:
                stdin = self._process.stdin
                if stdin is not None and not stdin.closed:
                    try:
                        stdin.close()
                    except OSError:  # typingd is gone; what was left to write too
                        pass
            finally:
                self._write_lock.release()
        steps = [(DRAIN_SHARE, signals.SIGTERM)] if drain else []   # without drain SIGTERM was sent
        for share, next_signal in steps + [(TERM_SHARE, signals.SIGKILL)]:
            if self._wait_exit(started + share * timeout - time.monotonic()):
                break
            self._signal(next_signal)
        else:
            self._wait_exit(started + timeout - time.monotonic() + KILL_WAIT)
        self._reader.join(max(0.1, started + timeout + KILL_WAIT - time.monotonic()))
        self._stderr_reader.join(0.5)
        code = self._process.poll()
        if code is None:
            raise TypingdError({"code": "timeout", "message": f"typingd (pid {self.pid}) did not exit"})
        return exit_status(code)

    def kill(self, signal: Union[int, str] = "SIGTERM", timeout: float = 30.0) -> int:
        """Sends ``signal`` (a number or a name: ``"SIGKILL"``); returns the exit status once typingd has exited. typingd catches
        SIGTERM, SIGINT and SIGHUP: it writes what it has and exits 0."""
        self._not_on_reader("kill()")
        self._signal(signal)
        if not self._wait_exit(timeout):
            raise TypingdError({"code": "timeout", "message": f"typingd (pid {self.pid}) has not exited"})
        self._reader.join(timeout)
        code = self._process.poll()
        assert code is not None
        return exit_status(code)

    def _not_on_reader(self, what: str) -> None:
        """A reply is read by the reader thread: a request made on it (from an
        ``on_indicator`` callback) would wait for itself."""
        if threading.current_thread() is self._reader:
            raise RuntimeError(f"{what} from an on_indicator callback: callbacks run on the reader thread, "
                               "which reads the reply; hand the work to another thread")

    def _signal(self, sig: Union[int, str]) -> None:
        # To typingd's process group (it leads its own session): a wrapper script that
        # runs typingd without exec is ended with it.
        if self._process.poll() is None:
            try:
                os.killpg(self._process.pid, signal_number(sig))
            except ProcessLookupError:
                pass

    def _wait_exit(self, seconds: float) -> bool:
        try:
            self._process.wait(max(0.0, seconds))
            return True
        except subprocess.TimeoutExpired:
            return False

    def _wait_finished(self, seconds: float) -> None:
        """Gives the reader a moment to see the end, so that a TypingdExited knows the status."""
        self._wait_exit(seconds)
        self._stderr_reader.join(seconds)

    def _raise_if_gone(self, what: str) -> None:
        if self._finished or self._stdin_closed:
            raise self._gone(what)

    def _gone(self, what: str) -> TypingdExited:
        code = self._process.poll()
        stderr = bytes(self._stderr).decode("utf-8", "replace")  # no lock: callers may hold it
        return gone(what, None if code is None else exit_status(code), self._stdin_closed, stderr)

    def __enter__(self) -> "Typingd":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close(drain=False)

    def _read_stderr(self) -> None:
        stream = self._process.stderr
        assert stream is not None
        while True:
            chunk = stream.read1(PIPE_BUFFER) if hasattr(stream, "read1") else stream.read(PIPE_BUFFER)
            if not chunk:
                break
            with self._lock:
                self._stderr += chunk
                if len(self._stderr) > STDERR_LIMIT:
                    del self._stderr[:len(self._stderr) - STDERR_LIMIT]
        stream.close()

    def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        # A BufferedReader's lines: each readline() takes a line from the buffer, and
        # reads (up to 64 KiB, whatever has arrived) only when no whole line is left.
        for raw in stdout:
            event = decode_line(raw)
            if event is None:
                continue
            with self._lock:
                slot, queued = self._state.feed(event)
                callbacks = self._state.listeners_of(event)
                if queued and self._queue_events:
                    self._events.extend(queued)
                self._arrived.notify_all()
            for callback in callbacks:
                try:
                    callback(event)
                except Exception:  # a listener's bug must not stop the reader
                    traceback.print_exc()
            if slot is not None:
                slot.done.set()
        # typingd's output ended: wait for its exit, so that whoever wakes knows the status.
        self._process.wait()
        self._stderr_reader.join(1.0)  # a grandchild may hold stderr open
        with self._lock:
            leftovers, slots = self._state.end()
            if self._queue_events:
                self._events.extend(leftovers)
            self._finished = True
            self._arrived.notify_all()
        for slot in slots:
            slot.done.set()
        stdout.close()
        with self._write_lock:  # a write to a process that is gone fails at once: the lock is free soon
            stdin = self._process.stdin
            if stdin is not None and not stdin.closed:
                try:
                    stdin.close()
                except OSError:
                    pass
