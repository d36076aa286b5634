"""The asyncio client: the same API as Typingd, its methods coroutines."""
from __future__ import annotations

import asyncio
import inspect
import itertools
import os
import signal as signals
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ._common import (DRAIN_SHARE, KILL_WAIT, PIPE_BUFFER, STDERR_LIMIT, TERM_SHARE, Dispatcher, Event,
                      PathLike, TypingdError, TypingdExited, command_line, count_lines, encode, exit_status,
                      EventQueue, binary_origin, decode_line, given, gone, not_started, option_value,
                      signal_number)

#: The longest line the reader accepts from typingd (a snapshot's lines are short; an
#: indicator lists at most --max-listed typers).
LINE_LIMIT = 16 * 1024 * 1024


class AsyncTypingd:
    """A running typingd, driven from an asyncio loop.

        async with AsyncTypingd(clock="manual") as td:
            await td.join("dm", "alice", name="Alice")
            ...

    or ``td = await AsyncTypingd(...).start()`` and ``await td.close()``. The arguments
    are those of Typingd; every command method is a coroutine that returns its reply;
    ``on_indicator`` callbacks run on the loop (a coroutine they return is scheduled).
    """

    def __init__(self, binary: Optional[PathLike] = None, *options: Any, audience: Optional[str] = None,
                 order: Optional[str] = None, max_listed: Optional[int] = None,
                 phrases: Union[None, PathLike, Sequence[PathLike]] = None, default_locale: Optional[str] = None,
                 list_style: Optional[str] = None, clock: Optional[str] = None, timeout_ms: Optional[int] = None,
                 quiet_above: Optional[int] = None, several_after: Optional[int] = None,
                 announce_after_ms: Optional[int] = None, request_timeout: Optional[float] = 5.0, queue: bool = True) -> None:
        """Checks the options (ValueError for ``--format text``); ``start()`` starts typingd."""
        self._arguments = command_line(binary, options, audience=audience, order=order, max_listed=max_listed,
                                       phrases=phrases, default_locale=default_locale, list_style=list_style,
                                       clock=clock, timeout_ms=timeout_ms, quiet_above=quiet_above,
                                 several_after=several_after, announce_after_ms=announce_after_ms)
        self._binary_origin = binary_origin(binary)
        self.request_timeout = request_timeout
        self._queue_events = queue
        self._state = Dispatcher(option_value(self._arguments[1:], "--audience") == "open")
        self._ids = itertools.count(1)
        self._events = EventQueue()
        self._stderr = bytearray()
        self._finished = False
        self._stdin_closed = False
        self._process: Optional[asyncio.subprocess.Process] = None
        self.pid: Optional[int] = None

    async def start(self) -> "AsyncTypingd":
        """Starts typingd; TypingdExited (status None) if the binary cannot be started."""
        if self._process is not None:
            return self
        self._arrived = asyncio.Condition()
        self._write_lock = asyncio.Lock()
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self._arguments, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, limit=LINE_LIMIT, start_new_session=True)
        except OSError as error:
            raise not_started(self._arguments[0], self._binary_origin, error) from None
        self.pid = self._process.pid
        self._stderr_task = asyncio.ensure_future(self._read_stderr())
        self._reader_task = asyncio.ensure_future(self._read())
        return self

    async def __aenter__(self) -> "AsyncTypingd":
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close(drain=False)

    # Commands -------------------------------------------------------------------

    async def request(self, cmd: str, timeout: Optional[float] = None, **fields: Any) -> Event:
        """Sends any command with a fresh id and returns its reply event."""
        return (await self._exchange(cmd, timeout, fields))[0]

    async def _exchange(self, cmd: str, timeout: Optional[float],
                        fields: Dict[str, Any]) -> Tuple[Event, List[Event]]:
        process = self._running(f"cannot send {cmd}")
        request_id = f"py-{next(self._ids)}"
        data = encode(cmd, request_id, fields)
        done = asyncio.get_running_loop().create_future()
        async with self._write_lock:
            self._raise_if_gone(f"cannot send {cmd}")
            slot = self._state.add(request_id, cmd, fields, done)
            try:
                assert process.stdin is not None
                process.stdin.write(data)
                await process.stdin.drain()
            except (BrokenPipeError, ConnectionResetError, RuntimeError, OSError):
                self._state.drop(slot)
                await self._wait_finished(1.0)
                raise self._gone(f"cannot send {cmd}") from None
        limit = self.request_timeout if timeout is None else timeout
        try:
            await asyncio.wait_for(asyncio.shield(done), limit)
        except asyncio.TimeoutError:
            self._state.drop(slot)
            raise TimeoutError(f"no reply to {cmd} within {limit} s") from None
        reply = slot.reply
        if reply is None:
            await self._wait_finished(1.0)
            raise self._gone(f"no reply to {cmd}")
        if reply.get("event") == "error":
            raise TypingdError(reply)
        return reply, slot.listed

    async def join(self, conv: str, user: str, *, name: Optional[str] = None, send_typing: Optional[bool] = None,
                   receive_typing: Optional[bool] = None, locale: Optional[str] = None,
                   at: Optional[float] = None) -> Event:
        return await self.request("join", **given(conv=conv, user=user, name=name, send_typing=send_typing,
                                                  locale=locale, receive_typing=receive_typing, at=at))

    async def type(self, conv: str, user: str, *, thread: Optional[str] = None, empty: Optional[bool] = None,
                   activity: Optional[str] = None, status: Optional[str] = None, timeout_ms: Optional[int] = None,
                   at: Optional[float] = None) -> Event:
        return await self.request("type", **given(conv=conv, user=user, thread=thread, empty=empty or None,
                                                  activity=activity, status=status, timeout_ms=timeout_ms, at=at))

    async def send(self, conv: str, user: str, *, thread: Optional[str] = None,
                   at: Optional[float] = None) -> Event:
        return await self.request("send", **given(conv=conv, user=user, thread=thread, at=at))

    async def leave(self, conv: str, user: str, *, at: Optional[float] = None) -> Event:
        return await self.request("leave", **given(conv=conv, user=user, at=at))

    async def remove(self, conv: str, user: str, *, by: Optional[str] = None, at: Optional[float] = None) -> Event:
        return await self.request("remove", **given(conv=conv, user=user, by=by, at=at))

    async def offline(self, user: str, *, at: Optional[float] = None) -> Event:
        return await self.request("offline", **given(user=user, at=at))

    async def open_view(self, conv: str, user: str, *, thread: Optional[str] = None, view: Optional[str] = None,
                        pane: Optional[str] = None, at: Optional[float] = None) -> Event:
        return await self.request("open", **given(conv=conv, user=user, thread=thread, view=view, pane=pane, at=at))

    async def close_view(self, conv: str, user: str, *, pane: Optional[str] = None,
                         at: Optional[float] = None) -> Event:
        return await self.request("close", **given(conv=conv, user=user, pane=pane, at=at))

    async def user(self, user: str, *, name: Optional[str] = None, send_typing: Optional[bool] = None,
                   receive_typing: Optional[bool] = None, locale: Optional[str] = None,
                   at: Optional[float] = None) -> Event:
        return await self.request("user", **given(user=user, name=name, send_typing=send_typing,
                                                  locale=locale, receive_typing=receive_typing, at=at))

    async def tick(self, at: float) -> Event:
        return await self.request("tick", at=at)

    async def query(self, conv: str, *, thread: Optional[str] = None, at: Optional[float] = None) -> Event:
        return await self.request("query", **given(conv=conv, thread=thread, at=at))

    async def stats(self, *, at: Optional[float] = None) -> Event:
        return await self.request("stats", **given(at=at))

    async def snapshot(self, *, at: Optional[float] = None) -> Tuple[Event, List[Event], List[Event]]:
        reply, listed = await self._exchange("snapshot", None, given(at=at))
        return (reply, [event for event in listed if event.get("event") == "member"],
                [event for event in listed if event.get("event") == "streak"])

    async def sync(self) -> None:
        await self.stats()

    # Lines without id ---------------------------------------------------------------

    async def write(self, cmd: str, **fields: Any) -> int:
        return await self.write_raw(encode(cmd, None, fields)[:-1])

    async def write_raw(self, data: Union[str, bytes]) -> int:
        process = self._running("cannot write")
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        async with self._write_lock:
            self._raise_if_gone("cannot write")
            first = self._state.wrote(count_lines(raw))
            try:
                assert process.stdin is not None
                process.stdin.write(raw + b"\n")
                await process.stdin.drain()
            except (BrokenPipeError, ConnectionResetError, RuntimeError, OSError):
                await self._wait_finished(1.0)
                raise self._gone("cannot write") from None
        return first

    @property
    def lines_written(self) -> int:
        return self._state.lines

    async def outcome(self, line: int, timeout: Optional[float] = None) -> None:
        def settled() -> bool:
            return line in self._state.errors or line <= self._state.processed_through or self._finished
        async with self._arrived:
            try:
                await asyncio.wait_for(self._arrived.wait_for(settled), timeout)
            except asyncio.TimeoutError:
                raise TimeoutError(f"line {line} has no known outcome within {timeout} s") from None
        error = self._state.errors.get(line)
        if error is not None:
            raise TypingdError(error)
        if line <= self._state.processed_through or self.exit_status == 0:
            return None
        raise self._gone(f"line {line} has no known outcome")

    # Events --------------------------------------------------------------------------

    async def next_event(self, timeout: Optional[float] = None, viewer: Optional[str] = None) -> Optional[Event]:
        self._running("next_event")
        found: List[Event] = []

        def ready() -> bool:
            event = self._events.take(viewer)
            if event is not None:
                found.append(event)
            return event is not None or self._finished

        async with self._arrived:
            try:
                await asyncio.wait_for(self._arrived.wait_for(ready), timeout)
            except asyncio.TimeoutError:
                return None
        return found[0] if found else None

    def events(self, viewer: Optional[str] = None) -> List[Event]:
        return self._events.take_all(viewer)

    def on_indicator(self, viewer: str, callback: Callable[[Event], Any]) -> Callable[[], None]:
        return self._state.listen(viewer, callback, "indicator")

    def on_announce(self, viewer: str, callback: Callable[[Event], Any]) -> Callable[[], None]:
        return self._state.listen(viewer, callback, "announce")

    def shown(self, viewer: str, conv: str, thread: Optional[str] = None,
              view: Optional[str] = None, pane: Optional[str] = None) -> Optional[Event]:
        return self._state.shown_at(viewer, conv, thread, view, pane)

    # Life cycle ------------------------------------------------------------------------

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    @property
    def exit_status(self) -> Optional[int]:
        code = None if self._process is None else self._process.returncode
        return None if code is None else exit_status(code)

    async def close(self, timeout: float = 30.0, drain: bool = True) -> int:
        """As Typingd.close: drain until half of ``timeout``, SIGTERM until nine
        tenths, then SIGKILL; returns the exit status."""
        process = self._running("cannot close")
        started = time.monotonic()
        if not drain:
            self._signal(signals.SIGTERM)  # before the end of input: see Typingd.close
        # A write waiting on a full pipe holds the write lock: the end of input need not
        # wait for it (the transport closes once what is buffered is written).
        self._stdin_closed = True
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        steps = [(DRAIN_SHARE, signals.SIGTERM)] if drain else []   # without drain SIGTERM was sent
        for share, next_signal in steps + [(TERM_SHARE, signals.SIGKILL)]:
            if await self._wait_exit(started + share * timeout - time.monotonic()):
                break
            self._signal(next_signal)
        else:
            await self._wait_exit(started + timeout - time.monotonic() + KILL_WAIT)
        try:
            await asyncio.wait_for(asyncio.shield(self._reader_task),
                                   max(0.1, started + timeout + KILL_WAIT - time.monotonic()))
        except asyncio.TimeoutError:
            pass
        if process.returncode is None:
            raise TypingdError({"code": "timeout", "message": f"typingd (pid {self.pid}) did not exit"})
        return exit_status(process.returncode)

    async def kill(self, signal: Union[int, str] = "SIGTERM", timeout: float = 30.0) -> int:
        process = self._running("cannot kill")
        self._signal(signal)
        if not await self._wait_exit(timeout):
            raise TypingdError({"code": "timeout", "message": f"typingd (pid {self.pid}) has not exited"})
        await asyncio.wait_for(asyncio.shield(self._reader_task), timeout)
        assert process.returncode is not None
        return exit_status(process.returncode)

    def _running(self, what: str) -> asyncio.subprocess.Process:
        if self._process is None:
            raise RuntimeError(f"{what}: typingd is not started (use `async with` or `await start()`)")
        return self._process

    def _signal(self, sig: Union[int, str]) -> None:
        # os.kill, not Process.send_signal: on Python 3.11 that polls the child first and
        # can reap it before asyncio's watcher does, which then reports status 255.
        if self._process is not None and self._process.returncode is None:
            try:
                os.killpg(self._process.pid, signal_number(sig))  # its group: see Typingd._signal
            except ProcessLookupError:
                pass

    async def _wait_exit(self, seconds: float) -> bool:
        assert self._process is not None
        try:
            await asyncio.wait_for(asyncio.shield(self._process.wait()), max(0.0, seconds))
            return True
        except asyncio.TimeoutError:
            return False

    async def _wait_finished(self, seconds: float) -> None:
        await self._wait_exit(seconds)
        try:
            await asyncio.wait_for(asyncio.shield(self._stderr_task), seconds)
        except asyncio.TimeoutError:
            pass

    def _raise_if_gone(self, what: str) -> None:
        if self._finished or self._stdin_closed:
            raise self._gone(what)

    def _gone(self, what: str) -> TypingdExited:
        return gone(what, self.exit_status, self._stdin_closed, self.stderr)

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        while True:
            chunk = await self._process.stderr.read(PIPE_BUFFER)
            if not chunk:
                return
            self._stderr += chunk
            if len(self._stderr) > STDERR_LIMIT:
                del self._stderr[:len(self._stderr) - STDERR_LIMIT]

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        while True:
            try:
                raw = await stdout.readline()
            except ValueError:  # a line over LINE_LIMIT: skip it
                continue
            if not raw:
                break
            event = decode_line(raw)
            if event is None:
                continue
            slot, queued = self._state.feed(event)
            if queued and self._queue_events:
                self._events.extend(queued)
            for callback in self._state.listeners_of(event):
                try:
                    result = callback(event)
                    if inspect.isawaitable(result):
                        asyncio.ensure_future(result)
                except Exception:  # a listener's bug must not stop the reader
                    traceback.print_exc()
            if slot is not None and not slot.done.done():
                slot.done.set_result(None)
            if queued or slot is not None:
                async with self._arrived:
                    self._arrived.notify_all()
        await self._process.wait()
        try:
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)  # a grandchild may hold stderr
        except asyncio.TimeoutError:
            pass
        leftovers, slots = self._state.end()
        if self._queue_events:
            self._events.extend(leftovers)
        self._finished = True
        for slot in slots:
            if not slot.done.done():
                slot.done.set_result(None)
        async with self._arrived:
            self._arrived.notify_all()
