"""Tests of the Python wrapper against the real binary.

    TYPINGD_BINARY=.build/debug/typingd python3 -m unittest discover -s examples/python

(`swift test` runs these too.) Without TYPINGD_BINARY, .build/debug/typingd is used.
"""
import os
import time
import unittest

from typingd_client import Typingd, TypingdError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("TYPINGD_BINARY", os.path.join(ROOT, ".build", "debug", "typingd"))


class WrapperTests(unittest.TestCase):
    def test_replies_match_their_requests(self):
        with Typingd(BINARY) as td:
            self.assertEqual(td.join("dm", "alice", name="Alice")["event"], "ok")
            td.join("dm", "bob", name="Bob")
            state = td.query("dm")
            self.assertEqual(state["members"], ["alice", "bob"])
            self.assertEqual(td.stats()["members"], 2)

    def test_errors_raise_with_their_code(self):
        with Typingd(BINARY) as td:
            with self.assertRaises(TypingdError) as caught:
                td.type("dm", "mallory")
            self.assertEqual(caught.exception.code, "not_member")
            with self.assertRaises(TypingdError) as caught:
                td.join("", "alice")
            self.assertEqual(caught.exception.code, "bad_field")

    def test_an_error_without_id_is_matched_by_its_line(self):
        # A line too long for typingd is refused before its id is read: the error
        # carries only the line number, and the request must not wait for its timeout.
        with Typingd(BINARY, "--max-line-bytes", "200") as td:
            td.join("g", "ana")
            started = time.monotonic()
            with self.assertRaises(TypingdError) as caught:
                td.request("join", timeout=3, conv="g", user="ben", name="B" * 300)
            self.assertEqual((caught.exception.code, caught.exception.event["line"]), ("line_too_long", 2))
            self.assertLess(time.monotonic() - started, 1.0)
            self.assertEqual(td.query("g")["members"], ["ana"])    # and the next line is 3

    def test_indicators_arrive_and_clear_after_the_timeout(self):
        with Typingd(BINARY, "--timeout-ms", "150") as td:
            td.join("dm", "alice", name="Alice")
            td.join("dm", "bob", name="Bob")
            started = time.monotonic()
            td.type("dm", "alice")
            shown = td.next_event(timeout=2)
            self.assertEqual((shown["viewer"], shown["text"]), ("bob", "Alice is typing..."))
            cleared = td.next_event(timeout=2)
            self.assertEqual((cleared["viewer"], cleared["text"]), ("bob", ""))
            self.assertGreaterEqual(time.monotonic() - started, 0.14)
            self.assertEqual(cleared["at"] - shown["at"], 150)

    def test_close_drains_and_exits_zero(self):
        td = Typingd(BINARY, "--timeout-ms", "100")
        td.join("g", "a", name="A")
        td.join("g", "b", name="B")
        td.type("g", "a")
        self.assertEqual(td.close(), 0)
        texts = []
        while (event := td.next_event(timeout=0.5)) is not None:
            texts.append(event["text"])
        self.assertEqual(texts, ["A is typing...", ""])


def written(td):
    """Every event queued so far, without waiting. A reply is always its command's
    last event and the reader queues events in order, so once a call has returned,
    everything that command (and the timeouts before it) wrote is already here."""
    events = []
    while (event := td.next_event(timeout=0)) is not None:
        events.append(event)
    return events


def indicator(at, viewer, typing, text, conv="g", more=None):
    event = {"event": "indicator", "at": at, "conv": conv, "viewer": viewer, "typing": typing}
    if more is not None:
        event["more"] = more
    event["text"] = text
    return event


def typing(at, user, state, reason=None, conv="g"):
    event = {"event": "typing", "at": at, "conv": conv, "user": user, "state": state}
    if reason is not None:
        event["reason"] = reason
    return event


MANUAL = ("--clock", "manual", "--no-drain")


class ProtocolV2Tests(unittest.TestCase):
    """The v2 commands and options through the wrapper, on the manual clock: each
    assertion is the exact output typingd wrote."""

    def test_open_and_close_views_under_audience_open(self):
        with Typingd(BINARY, *MANUAL, "--typing-events", audience="open") as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", name="Ben")
            td.type("g", "ana", at=100)
            self.assertEqual(written(td), [typing(100, "ana", "started")])  # ben has not opened g
            self.assertEqual(td.open_view("g", "ben", at=200)["event"], "ok")
            self.assertEqual(written(td), [indicator(200, "ben", ["ana"], "Ana is typing...")])
            td.open_view("g", "ana", at=300)
            td.type("g", "ben", at=400)
            self.assertEqual(written(td), [typing(400, "ben", "started"),
                                           indicator(400, "ana", ["ben"], "Ben is typing...")])
            td.close_view("g", "ana", at=500)                         # clears ana's own typing
            self.assertEqual(written(td), [typing(500, "ana", "stopped", "closed"),
                                           indicator(500, "ben", [], "")])
            state = td.query("g")
            self.assertEqual(state.pop("id")[:3], "py-")
            self.assertEqual(state, {"event": "state", "at": 500, "conv": "g", "members": ["ana", "ben"],
                                     "open": ["ben"], "typing": ["ben"]})
            td.tick(at=3400)                                     # ana's view is closed: no indicator
            self.assertEqual(written(td), [typing(3400, "ben", "stopped", "timeout")])
            with self.assertRaises(TypingdError) as caught:
                td.open_view("g", "zed")
            self.assertEqual(caught.exception.code, "not_member")

    def test_close_with_a_timeout_ends_typingd(self):
        td = Typingd(BINARY, *MANUAL)
        td.join("g", "ana")
        self.assertEqual(td.close(5.0), 0)

    def test_user_rename_is_seen_by_others(self):
        with Typingd(BINARY, *MANUAL) as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", name="Ben")
            td.type("g", "ana", at=10)
            self.assertEqual(td.user("ana", name="Anna", at=20)["event"], "ok")
            self.assertEqual(written(td), [
                indicator(10, "ben", ["ana"], "Ana is typing..."),
                indicator(20, "ben", ["ana"], "Anna is typing..."),
            ])
            self.assertEqual(td.user("ana")["event"], "ok")      # no field given: nothing changes
            self.assertEqual(written(td), [])
            with self.assertRaises(TypingdError) as caught:
                td.user("nobody", name="X")
            self.assertEqual(caught.exception.code, "not_member")

    def test_send_typing_false_is_not_shown(self):
        with Typingd(BINARY, *MANUAL, "--typing-events") as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", name="Ben", send_typing=False)
            self.assertEqual(td.type("g", "ben", at=10)["event"], "ok")  # succeeds, starts nothing
            self.assertEqual(written(td), [])
            self.assertEqual(td.query("g")["typing"], [])
            td.type("g", "ana", at=20)
            td.user("ana", send_typing=False, at=30)             # hides her live streak at once
            self.assertEqual(written(td), [
                typing(20, "ana", "started"),
                indicator(20, "ben", ["ana"], "Ana is typing..."),
                typing(30, "ana", "stopped", "hidden"),
                indicator(30, "ben", [], ""),
            ])
            td.user("ben", send_typing=True, at=40)
            td.type("g", "ben", at=50)
            self.assertEqual(written(td), [typing(50, "ben", "started"),
                                           indicator(50, "ana", ["ben"], "Ben is typing...")])

    def test_timeout_ms_overrides_the_default_timeout(self):
        with Typingd(BINARY, *MANUAL, "--timeout-ms", "3000") as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", name="Ben")
            td.type("g", "ana", at=100, timeout_ms=500)          # deadline 600
            td.type("g", "ana", at=200, timeout_ms=50)           # brought forward to 250
            td.tick(at=249)
            self.assertEqual(written(td), [indicator(100, "ben", ["ana"], "Ana is typing...")])
            td.tick(at=250)
            self.assertEqual(written(td), [indicator(250, "ben", [], "")])
            td.type("g", "ana", at=300, timeout_ms=10000)        # longer than --timeout-ms
            td.tick(at=10299)
            self.assertEqual(written(td), [indicator(300, "ben", ["ana"], "Ana is typing...")])
            td.tick(at=20000)                                    # cleared at its deadline, not at 20000
            self.assertEqual(written(td), [indicator(10300, "ben", [], "")])
            with self.assertRaises(TypingdError) as caught:
                td.type("g", "ana", timeout_ms=0)
            self.assertEqual(caught.exception.code, "bad_field")

    def test_order_recent_lists_the_latest_keystroke_first(self):
        with Typingd(BINARY, *MANUAL, order="recent", max_listed=2) as td:
            for user, name in (("v", "Vic"), ("ana", "Ana"), ("ben", "Ben"), ("cy", "Cy")):
                td.join("g", user, name=name)
            td.type("g", "ana", at=100)
            td.type("g", "ben", at=200)
            td.type("g", "cy", at=300)
            td.type("g", "ana", at=400)                          # back to the front
            self.assertEqual([event for event in written(td) if event["viewer"] == "v"], [
                indicator(100, "v", ["ana"], "Ana is typing..."),
                indicator(200, "v", ["ben", "ana"], "Ben and Ana are typing..."),
                indicator(300, "v", ["cy", "ben"], "Cy, Ben, and Ana are typing...", more=1),
                indicator(400, "v", ["ana", "cy"], "Ana, Cy, and Ben are typing...", more=1),
            ])
            self.assertEqual(td.query("g")["typing"], ["ana", "cy", "ben"])  # state is not capped

    def test_snapshot_returns_member_and_streak_events(self):
        with Typingd(BINARY, *MANUAL) as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", send_typing=False)
            td.join("h", "ana")
            td.open_view("g", "ben", at=10)
            td.type("g", "ana", at=20)
            written(td)
            reply, members, streaks = td.snapshot(at=30)
            self.assertEqual((reply["event"], reply["at"], reply["conversations"], reply["members"], reply["typing"]),
                             ("snapshot", 30, 2, 3, 1))
            self.assertEqual(streaks, [{"event": "streak", "at": 30, "conv": "g", "user": "ana", "deadline": 3020,
                                        "keystroke": 1}])
            self.assertEqual(members, [
                {"event": "member", "at": 30, "conv": "g", "user": "ana", "name": "Ana",
                 "send_typing": True, "open": False},
                {"event": "member", "at": 30, "conv": "g", "user": "ben", "send_typing": False,
                 "open": True},
                {"event": "member", "at": 30, "conv": "h", "user": "ana", "name": "Ana",
                 "send_typing": True, "open": False},
            ])
            self.assertEqual(written(td), [])                    # none of it leaks to next_event
            self.assertEqual(td.stats()["members"], 3)


if __name__ == "__main__":
    unittest.main()
