"""The scenarios of clients/API.md, run against both Python clients (the Node.js
package's tests run the same ones): start, replies by id, events by viewer, close()
bounded whatever is pending, errors that carry the exit status and stderr."""
import asyncio
import fcntl
import os
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import termios
import threading
import time
import unittest
import unittest.mock

from typingd import AsyncTypingd, Typingd, TypingdError, TypingdExited

from .test_threaded import BINARY


def gone(pid):
    """True when the process has ended: no process has this pid any more, or it is a
    zombie (an orphan's exit status waits for init, which this container may not run)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


#: Seconds a wait for something to happen may take: far more than it takes on a busy
#: machine, so that only a hang reaches it.
DEADLINE = 60


def wait_until(condition, what):
    """Waits for ``condition()``, looked at every millisecond, up to DEADLINE seconds."""
    end = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {DEADLINE} s")
        time.sleep(0.001)


async def wait_until_async(condition, what):
    """wait_until for a scenario on an asyncio loop: the loop runs while it waits."""
    end = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {DEADLINE} s")
        await asyncio.sleep(0.001)


#: What a typingd run with --announce-after-ms writes (protocol v4), as canned lines: an
#: indicator for ben's main screen and one for his side pane, then, once they have
#: settled, an announcement for each screen, and one for cy's chat-list row.
ANNOUNCING = [
    '{"event":"indicator","at":100,"conv":"g","viewer":"ben","typing":["ana"],"text":"Ana is typing..."}',
    '{"event":"indicator","at":100,"conv":"g","thread":"t","viewer":"ben","pane":"side","typing":["cy"],'
    '"text":"Cy is typing..."}',
    '{"event":"announce","at":1100,"conv":"g","viewer":"ben","text":"Ana is typing..."}',
    '{"event":"announce","at":1100,"conv":"g","thread":"t","viewer":"ben","pane":"side","text":"Cy is typing..."}',
    '{"event":"announce","at":1100,"conv":"g","viewer":"cy","view":"list","text":"Ana is typing..."}',
]


def canned_binary(test, lines):
    """A stand-in for typingd: once it has read a line, it writes ``lines``, then reads
    its input to the end and exits 0. The client parses its output as typingd's."""
    folder = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, folder, True)
    with open(os.path.join(folder, "out.jsonl"), "w", encoding="utf-8") as file:
        file.write("".join(line + "\n" for line in lines))
    script = os.path.join(folder, "typingd")
    with open(script, "w") as file:
        file.write('#!/bin/sh\nread -r line\ncat "$(dirname "$0")/out.jsonl"\nexec cat >/dev/null\n')
    os.chmod(script, 0o755)
    return script


def input_full(pid):
    """True when the pipe that is the process's stdin holds all it can (less PIPE_BUF,
    which a small write needs free at once): whoever writes it waits."""
    fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
    try:
        queued = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
        return queued >= fcntl.fcntl(fd, 1032) - select.PIPE_BUF   # 1032: F_GETPIPE_SZ
    finally:
        os.close(fd)


class Threaded:
    """The scenarios' view of the threaded client: every call returns its result."""
    make = Typingd

    def __init__(self, *args, binary=BINARY, **kwargs):
        self.td = Typingd(binary, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.td, name)

    def dispose(self):
        self.td._reader.join(5)


class Async:
    """The asyncio client driven from a private loop, so the scenarios read the same."""

    def __init__(self, *args, binary=BINARY, **kwargs):
        client = AsyncTypingd(binary, *args, **kwargs)   # ValueError before a loop exists
        self.loop = asyncio.new_event_loop()
        self.td = self.loop.run_until_complete(client.start())

    def __getattr__(self, name):
        attribute = getattr(self.td, name)
        if not callable(attribute) or name in ("events", "shown", "on_indicator", "on_announce"):
            return attribute

        def call(*args, **kwargs):
            result = attribute(*args, **kwargs)
            return self.loop.run_until_complete(result) if asyncio.iscoroutine(result) else result
        return call

    def dispose(self):
        if self.td.exit_status is None:
            self.loop.run_until_complete(self.td.kill(signal.SIGKILL))
        self.loop.close()


class Scenarios:
    """Mixed into one TestCase per client; ``self.client`` makes a started client."""
    client = None

    def start(self, *args, **kwargs):
        client = self.client(*args, **kwargs)
        self.addCleanup(client.dispose)
        return client

    def test_replies_are_matched_by_id(self):
        td = self.start(clock="manual")
        try:
            self.assertEqual(td.join("dm", "alice", name="Alice")["event"], "ok")
            self.assertEqual(td.join("dm", "bob", name="Bob")["id"], "py-2")
            self.assertEqual(td.query("dm")["members"], ["alice", "bob"])
            with self.assertRaises(TypingdError) as caught:
                td.type("dm", "mallory", at=0)
            self.assertEqual(caught.exception.code, "not_member")
        finally:
            td.close(5)

    def test_events_by_viewer(self):
        td = self.start(clock="manual")
        try:
            for user in ("ana", "ben", "cy"):
                td.join("g", user, name=user.title())
            td.type("g", "ana", at=0)
            td.sync()
            self.assertEqual(td.next_event(timeout=1, viewer="cy")["text"], "Ana is typing...")
            self.assertEqual([e["viewer"] for e in td.events()], ["ben"])     # cy's was taken
            td.type("g", "ben", at=10)
            self.assertEqual([e["text"] for e in td.events("ana")], ["Ben is typing..."])
            self.assertEqual([e["viewer"] for e in td.events()], ["cy"])
            self.assertIsNone(td.next_event(timeout=0.05, viewer="ana"))
            self.assertEqual(td.shown("cy", "g")["text"], "Ana and Ben are typing...")
        finally:
            td.close(5)

    def test_on_indicator_until_unsubscribed(self):
        td = self.start(clock="manual", queue=False)
        try:
            seen = []
            unsubscribe = td.on_indicator("ben", seen.append)
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", name="Ben")
            td.type("g", "ana", at=0)
            td.send("g", "ana", at=5)
            unsubscribe()
            td.type("g", "ana", at=10)
            td.sync()
            self.assertEqual([e["text"] for e in seen], ["Ana is typing...", ""])
            self.assertEqual(td.events(), [])                                  # queue=False keeps none
        finally:
            td.close(5)

    def test_announcements_are_events_of_their_viewer_apart_from_indicators(self):
        td = self.start(binary=canned_binary(self, ANNOUNCING))
        said, indicated = [], []
        td.on_announce("ben", said.append)
        td.on_indicator("ben", indicated.append)
        td.write_raw("{}")                                     # the stand-in answers it with ANNOUNCING
        first = td.next_event(timeout=DEADLINE, viewer="cy")
        self.assertEqual(list(first.items()), [("event", "announce"), ("at", 1100), ("conv", "g"), ("viewer", "cy"),
                                               ("view", "list"), ("text", "Ana is typing...")])
        self.assertEqual(td.close(DEADLINE), 0)                # every line read, every callback called
        self.assertEqual([e["event"] for e in td.events("ben")], ["indicator", "indicator", "announce", "announce"])
        self.assertEqual([(e["text"], e.get("pane")) for e in said], [("Ana is typing...", None),
                                                                      ("Cy is typing...", "side")])
        self.assertEqual([e["event"] for e in indicated], ["indicator", "indicator"])
        # What ben's screens show is the indicators', which an announcement does not change.
        self.assertEqual(td.shown("ben", "g")["at"], 100)
        self.assertEqual(td.shown("ben", "g", thread="t", pane="side")["text"], "Cy is typing...")
        self.assertIsNone(td.shown("ben", "g", thread="t"))

    def test_close_ends_a_pending_45_second_streak_within_its_timeout(self):
        td = self.start()                                                      # the real clock
        td.join("g", "ana", name="Ana")
        td.join("g", "ben", name="Ben")
        td.type("g", "ana", timeout_ms=45000)
        started = time.monotonic()
        status = td.close(2)
        took = time.monotonic() - started
        self.assertEqual(status, 0)                                            # SIGTERM: typingd exits 0
        self.assertGreaterEqual(took, 0.9)                                     # it drained for half the time
        self.assertLess(took, 2.5)
        self.assertTrue(gone(td.pid))
        self.assertEqual(td.exit_status, 0)

    def test_close_without_drain_is_prompt(self):
        td = self.start()
        td.join("g", "ana", name="Ana")
        td.join("g", "ben", name="Ben")
        td.type("g", "ana", timeout_ms=45000)
        started = time.monotonic()
        self.assertEqual(td.close(30, drain=False), 0)
        self.assertLess(time.monotonic() - started, 1.5)
        self.assertTrue(gone(td.pid))
        self.assertEqual([e["text"] for e in td.events("ben")], ["Ana is typing..."])

    def test_close_kills_what_ignores_sigterm(self):
        # A stand-in that neither reads its input nor ends on SIGTERM: close() must still
        # return within its timeout with the process gone (status 128 + 9).
        td = self.start()
        td.join("g", "ana")
        os.kill(td.pid, signal.SIGSTOP)                                        # stopped: deaf to SIGTERM
        started = time.monotonic()
        self.assertEqual(td.close(1), 128 + signal.SIGKILL)
        self.assertLess(time.monotonic() - started, 2.2)
        self.assertTrue(gone(td.pid))

    def test_a_bad_option_raises_with_the_exit_status_and_stderr(self):
        td = self.start("--no-such-option")
        with self.assertRaises(TypingdExited) as caught:
            td.join("g", "ana")
        self.assertEqual((caught.exception.code, caught.exception.status), ("gone", 64))
        self.assertIn("--no-such-option", caught.exception.stderr)
        self.assertIn("exit status 64", str(caught.exception))
        self.assertIn("--no-such-option", td.stderr)

    def test_format_text_is_refused(self):
        for options in (("--format", "text"), ("--format=text",)):
            with self.assertRaises(ValueError):
                self.start(*options)

    def test_lines_without_id_have_an_outcome(self):
        td = self.start(clock="manual")
        try:
            applied = td.write("join", conv="g", user="ana")
            refused = td.write_raw('{"cmd":"join","conv":"g"}')
            td.sync()
            self.assertIsNone(td.outcome(applied))
            with self.assertRaises(TypingdError) as caught:
                td.outcome(refused)
            self.assertEqual(caught.exception.code, "missing_field")
        finally:
            td.close(5)

    def test_requests_after_typingd_exited_raise_with_its_status(self):
        td = self.start()
        td.join("g", "ana")
        self.assertEqual(td.kill(signal.SIGTERM), 0)
        with self.assertRaises(TypingdExited) as caught:
            td.join("g", "ben")
        self.assertEqual(caught.exception.status, 0)


class ThreadedScenarios(Scenarios, unittest.TestCase):
    client = Threaded

    def test_a_missing_binary_raises_at_start(self):
        with self.assertRaises(TypingdExited) as caught:
            Typingd("/nonexistent/typingd")
        self.assertIsNone(caught.exception.status)

    def test_a_missing_binary_is_named_with_where_it_came_from(self):
        with self.assertRaises(TypingdExited) as caught:
            Typingd("/nonexistent/typingd")
        self.assertIn("(/nonexistent/typingd, from binary=): No such file", str(caught.exception))
        self.assertIn("TYPINGD_BINARY", str(caught.exception))
        with unittest.mock.patch.dict(os.environ, {"TYPINGD_BINARY": "no-such-dir/typingd"}):
            with self.assertRaises(TypingdExited) as caught:
                Typingd()
        self.assertIn(f"({os.path.abspath('no-such-dir/typingd')}, from TYPINGD_BINARY)", str(caught.exception))
        with tempfile.TemporaryDirectory() as empty, \
                unittest.mock.patch.dict(os.environ, {"TYPINGD_BINARY": "", "PATH": empty}):
            with self.assertRaises(TypingdExited) as caught:
                Typingd()
        self.assertIn("('typingd' looked up on PATH, neither binary= nor TYPINGD_BINARY is set)", str(caught.exception))

    def test_leaving_a_with_block_does_not_wait_for_streaks(self):
        started = time.monotonic()
        with Typingd(BINARY) as td:
            td.join("g", "ana")
            td.join("g", "ben")
            td.type("g", "ana", timeout_ms=45000)
        self.assertLess(time.monotonic() - started, 1.5)
        self.assertTrue(gone(td.pid))


    def test_close_is_bounded_while_a_write_is_blocked(self):
        # typingd stopped with its input pipe full: a writer blocks holding the write
        # lock, and close() must still end typingd within its timeout.
        td = Typingd(BINARY)
        td.join("g", "ana")
        os.kill(td.pid, signal.SIGSTOP)
        failures = []

        def flood():
            try:
                td.write_raw(b'{"cmd":"stats"}\n' * 200_000)
            except TypingdError as error:
                failures.append(error)
        writer = threading.Thread(target=flood, daemon=True)
        writer.start()
        wait_until(lambda: input_full(td.pid), "the flood fills typingd's input")
        self.assertTrue(writer.is_alive(), "the write should be blocked on the full pipe")
        started = time.monotonic()
        self.assertEqual(td.close(1), 128 + signal.SIGKILL)
        self.assertLess(time.monotonic() - started, 2.2)
        writer.join(2)
        self.assertFalse(writer.is_alive())
        self.assertTrue(gone(td.pid))


    def test_a_request_from_a_callback_is_refused_not_deadlocked(self):
        td = Typingd(BINARY, clock="manual", request_timeout=30)
        self.addCleanup(td.close, 5)
        refused = []

        def callback(event):
            try:
                td.query("g")
            except RuntimeError as error:
                refused.append(str(error))
        td.on_indicator("ben", callback)
        td.join("g", "ana", name="Ana")
        td.join("g", "ben", name="Ben")
        started = time.monotonic()
        td.type("g", "ana", at=0)
        td.sync()
        self.assertLess(time.monotonic() - started, 2)
        self.assertEqual(len(refused), 1)
        self.assertIn("on_indicator callback", refused[0])

    def test_close_ends_typingd_run_by_a_wrapper_script(self):
        # A script that runs typingd without exec: the signals reach typingd too.
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        script = os.path.join(folder, "wrapper.sh")
        with open(script, "w") as file:
            file.write(f'#!/bin/sh\n"{BINARY}" "$@"\necho "wrapper: typingd exited $?" >&2\n')
        os.chmod(script, 0o755)
        td = Typingd(script)
        td.join("g", "ana")
        td.join("g", "ben")
        td.type("g", "ana", timeout_ms=45000)
        children = subprocess.run(["pgrep", "-P", str(td.pid)], capture_output=True, text=True).stdout.split()
        self.assertEqual(len(children), 1, "the wrapper runs typingd as its child")
        started = time.monotonic()
        td.close(2)
        self.assertLess(time.monotonic() - started, 3.2)
        self.assertTrue(gone(td.pid))
        wait_until(lambda: gone(int(children[0])), "typingd outlived its wrapper")

    def test_events_taken_in_order_and_by_viewer_are_each_taken_once(self):
        from typingd._common import EventQueue
        queue = EventQueue()
        queue.extend([{"viewer": "a", "n": 1}, {"viewer": "b", "n": 2}, {"event": "typing", "n": 3},
                      {"viewer": "a", "n": 4}, {"viewer": "b", "n": 5}])
        self.assertEqual(queue.take("b")["n"], 2)
        self.assertEqual(queue.take()["n"], 1)
        self.assertEqual(queue.take()["n"], 3)
        self.assertEqual([e["n"] for e in queue.take_all("a")], [4])
        self.assertEqual(len(queue), 1)
        self.assertEqual([e["n"] for e in queue.take_all()], [5])
        self.assertIsNone(queue.take("b"))
        self.assertEqual((len(queue._all), queue._by_viewer), (0, {}))     # nothing taken is kept

    def test_kill_takes_a_signal_name(self):
        td = Typingd(BINARY)
        td.join("g", "ana")
        self.assertEqual(td.kill("SIGKILL"), 128 + signal.SIGKILL)


class AsyncScenarios(Scenarios, unittest.TestCase):
    client = Async

    def test_close_is_bounded_while_a_write_is_blocked(self):
        async def scenario():
            td = await AsyncTypingd(BINARY).start()
            await td.join("g", "ana")
            os.kill(td.pid, signal.SIGSTOP)
            writer = asyncio.ensure_future(td.write_raw(b'{"cmd":"stats"}\n' * 200_000))
            await wait_until_async(lambda: input_full(td.pid), "the flood fills typingd's input")
            self.assertFalse(writer.done(), "the write should wait on the full pipe")
            started = time.monotonic()
            status = await td.close(1)
            took = time.monotonic() - started
            try:
                await asyncio.wait_for(writer, 2)
            except TypingdError:
                pass
            return status, took, td.pid
        status, took, pid = asyncio.run(scenario())
        self.assertEqual(status, 128 + signal.SIGKILL)
        self.assertLess(took, 2.2)
        self.assertTrue(gone(pid))

    def test_a_missing_binary_raises_at_start(self):
        with self.assertRaises(TypingdExited) as caught:
            asyncio.run(AsyncTypingd("/nonexistent/typingd").start())
        self.assertIsNone(caught.exception.status)

    def test_a_missing_binary_is_named_with_where_it_came_from(self):
        with self.assertRaises(TypingdExited) as caught:
            asyncio.run(AsyncTypingd("/nonexistent/typingd").start())
        self.assertIn("(/nonexistent/typingd, from binary=): No such file", str(caught.exception))
        with unittest.mock.patch.dict(os.environ, {"TYPINGD_BINARY": "no-such-dir/typingd"}):
            with self.assertRaises(TypingdExited) as caught:
                asyncio.run(AsyncTypingd().start())
        self.assertIn(f"({os.path.abspath('no-such-dir/typingd')}, from TYPINGD_BINARY)", str(caught.exception))
        self.assertIn("give typingd's path as binary= or in TYPINGD_BINARY", str(caught.exception))

    def test_async_with_and_coroutine_listeners(self):
        async def scenario():
            seen = []

            async def listener(event):
                seen.append(event["text"])
            async with AsyncTypingd(BINARY, clock="manual") as td:
                td.on_indicator("bob", listener)
                await td.join("dm", "alice", name="Alice")
                await td.join("dm", "bob", name="Bob")
                await td.type("dm", "alice", at=0)
                await td.sync()
                await asyncio.sleep(0)
                snapshot, members, streaks = await td.snapshot()
                return list(seen), snapshot["event"], [m["user"] for m in members], [s["user"] for s in streaks], td.pid
        seen, snapshot, members, streaks, pid = asyncio.run(scenario())
        self.assertEqual((seen, snapshot, members, streaks), (["Alice is typing..."], "snapshot",
                                                               ["alice", "bob"], ["alice"]))
        self.assertTrue(gone(pid))



if __name__ == "__main__":
    unittest.main()
