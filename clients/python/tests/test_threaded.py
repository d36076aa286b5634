"""Tests of the threaded client against the real binary.

    TYPINGD_BINARY=.build/debug/typingd python3 -m unittest discover -s clients/python/tests -t clients/python

(`swift test` runs these too.) Without TYPINGD_BINARY, .build/debug/typingd is used.
fixtures/de.json is a tiny German phrase table of these tests' own.
"""
import os
import re
import subprocess
import sys
import threading
import time
import unittest

from typingd import ACTIVITIES, Typingd, TypingdError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BINARY = os.environ.get("TYPINGD_BINARY", os.path.join(ROOT, ".build", "debug", "typingd"))
# A relative path means relative to where the tests were started (some tests run
# from other folders, the README example from this one).
if os.sep in BINARY:
    BINARY = os.path.abspath(BINARY)
GERMAN = os.path.join(HERE, "fixtures", "de.json")


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
                td.request("join", timeout=60, conv="g", user="ben", name="B" * 300)
            self.assertEqual((caught.exception.code, caught.exception.event["line"]), ("line_too_long", 2))
            self.assertLess(time.monotonic() - started, 30)    # the error, long before the timeout
            self.assertEqual(td.query("g")["members"], ["ana"])    # and the next line is 3

    def test_indicators_arrive_and_clear_after_the_timeout(self):
        with Typingd(BINARY, "--timeout-ms", "150") as td:
            td.join("dm", "alice", name="Alice")
            td.join("dm", "bob", name="Bob")
            started = time.monotonic()
            td.type("dm", "alice")
            shown = td.next_event(timeout=60)
            self.assertEqual((shown["viewer"], shown["text"]), ("bob", "Alice is typing..."))
            cleared = td.next_event(timeout=60)
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
        while (event := td.next_event(timeout=60)) is not None:   # None at the end of output
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


def indicator(at, viewer, typing, text, conv="g", more=None, thread=None, view=None, activities=None, pane=None):
    """An indicator event, its keys in typingd's order (the tests compare that too)."""
    event = {"event": "indicator", "at": at, "conv": conv}
    if thread is not None:
        event["thread"] = thread
    event["viewer"] = viewer
    if pane is not None:
        event["pane"] = pane
    if view is not None:
        event["view"] = view
    event["typing"] = typing
    if more is not None:
        event["more"] = more
    if activities is not None:
        event["activities"] = activities
    event["text"] = text
    return event


def typing(at, user, state, reason=None, conv="g", thread=None, activity=None, status=None):
    event = {"event": "typing", "at": at, "conv": conv}
    if thread is not None:
        event["thread"] = thread
    event.update(user=user, state=state)
    if activity is not None:
        event["activity"] = activity
    if status is not None:
        event["status"] = status
    if reason is not None:
        event["reason"] = reason
    return event


def in_order(events):
    """Events with their keys in order, so that assertEqual compares the order too."""
    return [list(event.items()) for event in events]


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


class ProtocolV3Tests(unittest.TestCase):
    """The v3 fields and options through the wrapper, on the manual clock: each
    assertion is the exact output typingd wrote, keys in order. Fields passed as
    None are left out (typingd refuses a null as bad_field), so calls with None
    succeeding show that too."""

    def test_activities_are_listed_and_phrased_per_activity(self):
        with Typingd(BINARY, *MANUAL, "--typing-events") as td:
            for user, name in (("ana", "Ana"), ("ben", "Ben"), ("cy", "Cy")):
                td.join("g", user, name=name)
            td.type("g", "ana", at=10, activity="recording_audio")
            td.type("g", "ben", at=20, activity=None, thread=None)    # None: not sent, so `typing`
            td.type("g", "ana", at=30, activity="sending_photo")      # same streak, new activity
            self.assertEqual(in_order(written(td)), in_order([
                typing(10, "ana", "started", activity="recording_audio"),
                indicator(10, "ben", ["ana"], "Ana is recording audio...", activities=["recording_audio"]),
                indicator(10, "cy", ["ana"], "Ana is recording audio...", activities=["recording_audio"]),
                typing(20, "ben", "started"),
                indicator(20, "ana", ["ben"], "Ben is typing..."),
                indicator(20, "cy", ["ana", "ben"], "Ana is recording audio; Ben is typing...",
                          activities=["recording_audio", "typing"]),
                typing(30, "ana", "changed", activity="sending_photo"),
                indicator(30, "ben", ["ana"], "Ana is sending a photo...", activities=["sending_photo"]),
                indicator(30, "cy", ["ana", "ben"], "Ana is sending a photo; Ben is typing...",
                          activities=["sending_photo", "typing"]),
            ]))
            state = td.query("g", at=35, thread=None)
            self.assertEqual((state["typing"], state["activities"]), (["ana", "ben"], ["sending_photo", "typing"]))
            td.type("g", "ana", at=40)                                # back to typing: no activities
            self.assertEqual(written(td), [typing(40, "ana", "changed", activity="typing"),
                                           indicator(40, "ben", ["ana"], "Ana is typing..."),
                                           indicator(40, "cy", ["ana", "ben"], "Ana and Ben are typing...")])
            self.assertNotIn("activities", td.query("g"))
            for activity in ACTIVITIES:                                # every one is accepted
                words = "is busy" if activity == "status" else None    # the one with words of its own
                self.assertEqual(td.type("g", "cy", activity=activity, status=words)["event"], "ok")
            with self.assertRaises(TypingdError) as caught:
                td.type("g", "cy", activity="singing")
            self.assertEqual(caught.exception.event["field"], "activity")

    def test_a_german_viewer_reads_the_indicator_in_german(self):
        with Typingd(BINARY, *MANUAL, phrases=GERMAN) as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", name="Ben", locale="de-AT")           # de-AT falls back to de
            td.join("g", "cy", name="Cy", locale=None, receive_typing=None)
            td.type("g", "ana", at=10)
            td.type("g", "cy", at=20, activity="recording_video")
            self.assertEqual(in_order(written(td)), in_order([
                indicator(10, "ben", ["ana"], "Ana tippt …"),
                indicator(10, "cy", ["ana"], "Ana is typing..."),
                indicator(20, "ana", ["cy"], "Cy is recording video...", activities=["recording_video"]),
                indicator(20, "ben", ["ana", "cy"], "Ana tippt; Cy filmt …", activities=["typing", "recording_video"]),
            ]))
            td.user("ben", locale="en", at=30)                        # re-rendered at once
            td.user("ben", locale=None, name=None, at=40)             # nothing given: nothing changes
            self.assertEqual(written(td), [indicator(30, "ben", ["ana", "cy"], "Ana is typing; Cy is recording video...",
                                                     activities=["typing", "recording_video"])])
            with self.assertRaises(TypingdError) as caught:
                td.user("ben", locale="de_DE")
            self.assertEqual(caught.exception.event["field"], "locale")
        # default_locale: users who give no locale read German; phrases may be a list.
        with Typingd(BINARY, *MANUAL, phrases=[GERMAN], default_locale="de") as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", locale="en")
            td.join("g", "cy")
            td.type("g", "ana", at=10)
            self.assertEqual(written(td), [indicator(10, "ben", ["ana"], "Ana is typing..."),
                                           indicator(10, "cy", ["ana"], "Ana tippt …")])

    def test_a_thread_shows_its_own_typers_to_whoever_has_it_open(self):
        with Typingd(BINARY, *MANUAL, "--typing-events") as td:
            for user, name in (("ana", "Ana"), ("ben", "Ben"), ("cy", "Cy"), ("dee", "Dee")):
                td.join("g", user, name=name)
            td.open_view("g", "cy", thread="t", at=10)               # cy reads thread t
            td.type("g", "ana", at=20)                                 # the main timeline
            td.type("g", "ben", thread="t", at=30)
            td.type("g", "ana", thread="t", at=40)                     # ana moves to the thread
            self.assertEqual(in_order(written(td)), in_order([
                typing(20, "ana", "started"),
                indicator(20, "ben", ["ana"], "Ana is typing..."),
                indicator(20, "dee", ["ana"], "Ana is typing..."),
                typing(30, "ben", "started", thread="t"),
                indicator(30, "cy", ["ben"], "Ben is typing...", thread="t"),
                typing(40, "ana", "stopped", "moved"),
                typing(40, "ana", "started", thread="t"),
                indicator(40, "ben", [], ""),
                indicator(40, "cy", ["ben", "ana"], "Ben and Ana are typing...", thread="t"),
                indicator(40, "dee", [], ""),
            ]))
            # What each viewer sees where: cy has the thread, the others the main timeline.
            self.assertEqual(td.shown("cy", "g", thread="t")["text"], "Ben and Ana are typing...")
            self.assertIsNone(td.shown("cy", "g"))
            self.assertIsNone(td.shown("dee", "g"))                   # nobody types in the main timeline
            self.assertIsNone(td.shown("dee", "g", thread="t"))       # dee has not opened it
            state = td.query("g", thread="t", at=50)
            self.assertEqual((state["thread"], state["typing"]), ("t", ["ben", "ana"]))
            self.assertEqual(td.query("g")["typing"], [])
            td.send("g", "ben", at=60)                                 # not where ben types: no change
            td.send("g", "ben", thread="t", at=70)
            self.assertEqual(written(td), [typing(70, "ben", "stopped", "send", thread="t"),
                                           indicator(70, "cy", ["ana"], "Ana is typing...", thread="t")])
            td.close_view("g", "cy", at=80)                            # back to the main timeline, silently
            self.assertEqual(written(td), [])
            self.assertIsNone(td.shown("cy", "g", thread="t"))
            td.open_view("g", "cy", thread="t", at=90)                # back: ana still types there
            self.assertEqual(written(td), [indicator(90, "cy", ["ana"], "Ana is typing...", thread="t")])
            self.assertEqual(td.shown("cy", "g", thread="t")["typing"], ["ana"])

    def test_protocol_v4_options_by_name(self):
        with Typingd(BINARY, *MANUAL, quiet_above=3, several_after=1, announce_after_ms=500) as td:
            for user in ("ana", "ben", "cy"):
                td.join("g", user, name=user.title())
            td.type("g", "ana", at=10)
            td.type("g", "ben", at=20)                                # two typers: several after 1
            self.assertEqual(td.shown("cy", "g")["text"], "Several people are typing...")
            td.tick(at=600)                                           # settled 500 ms: announced
            self.assertIn("Several people are typing...", [e["text"] for e in td.events("cy") if e["event"] == "announce"])
            td.join("g", "dan", name="Dan", at=700)                   # four members: above --quiet-above 3
            self.assertIsNone(td.shown("cy", "g"))                    # the empty indicator: nothing shown

    def test_a_chat_list_row_is_its_own_screen(self):
        with Typingd(BINARY, *MANUAL, audience="open", list_style="group") as td:
            for user, name in (("mom", "Mom"), ("dad", "Dad"), ("kid", "Kid"), ("gran", "Gran")):
                td.join("fam", user, name=name)
            td.open_view("fam", "kid", view="list", at=10)            # the row in kid's chat list
            td.open_view("fam", "gran", view=None, thread=None, at=20)   # the chat itself
            td.type("fam", "mom", at=100)
            td.type("fam", "dad", at=200)
            td.type("fam", "gran", at=300)
            self.assertEqual(in_order(written(td)), in_order([
                indicator(100, "kid", ["mom"], "Mom is typing...", conv="fam", view="list"),
                indicator(100, "gran", ["mom"], "Mom is typing...", conv="fam"),
                indicator(200, "kid", ["mom", "dad"], "Mom and Dad are typing...", conv="fam", view="list"),
                indicator(200, "gran", ["mom", "dad"], "Mom and Dad are typing...", conv="fam"),
                # --list-style group (the default is compact: "Mom and 2 others are typing...")
                indicator(300, "kid", ["mom", "dad", "gran"], "Mom, Dad, and Gran are typing...", conv="fam", view="list"),
            ]))
            self.assertEqual(td.shown("kid", "fam", view="list")["typing"], ["mom", "dad", "gran"])
            self.assertIsNone(td.shown("kid", "fam"))                 # kid's chat is not on screen
            td.open_view("fam", "kid", at=400)                         # kid opens the chat: a new screen
            self.assertEqual(written(td), [indicator(400, "kid", ["mom", "dad", "gran"],
                                                     "Mom, Dad, and Gran are typing...", conv="fam")])
            self.assertIsNone(td.shown("kid", "fam", view="list"))
            self.assertEqual(td.shown("kid", "fam", view="chat")["at"], 400)
            td.close_view("fam", "kid", at=500)                        # --audience open: nothing shown
            self.assertIsNone(td.shown("kid", "fam"))
            with self.assertRaises(TypingdError) as caught:
                td.open_view("fam", "kid", view="list", thread="t")
            self.assertEqual((caught.exception.code, caught.exception.event["field"]), ("bad_field", "view"))

    def test_receive_typing_false_sends_that_viewer_nothing(self):
        with Typingd(BINARY, *MANUAL) as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", name="Ben", receive_typing=False)
            td.join("g", "cy", name="Cy")
            td.type("g", "ana", at=10)
            self.assertEqual(written(td), [indicator(10, "cy", ["ana"], "Ana is typing...")])
            self.assertIsNone(td.shown("ben", "g"))
            td.user("ben", receive_typing=True, at=20)                 # sees current typing at once
            self.assertEqual(written(td), [indicator(20, "ben", ["ana"], "Ana is typing...")])
            self.assertEqual(td.shown("ben", "g")["text"], "Ana is typing...")
            td.user("cy", receive_typing=False, at=30)                 # forgotten without an event
            td.type("g", "ben", at=40)
            self.assertEqual(written(td), [indicator(40, "ana", ["ben"], "Ben is typing...")])
            self.assertIsNone(td.shown("cy", "g"))
            self.assertEqual(td.shown("ben", "g")["text"], "Ana is typing...")

    def test_snapshot_lists_the_v3_fields_as_received(self):
        with Typingd(BINARY, *MANUAL) as td:
            td.join("g", "ana", name="Ana", locale="de-AT")
            td.join("g", "ben", receive_typing=False)
            td.join("g", "cy", name="Cy")
            td.open_view("g", "cy", thread="t1", at=5)
            td.open_view("g", "ben", view="list", at=6)
            td.type("g", "ana", thread="t1", activity="recording_audio", at=10)
            self.assertEqual(written(td), [indicator(10, "cy", ["ana"], "Ana is recording audio...", thread="t1",
                                                     activities=["recording_audio"])])
            reply, members, streaks = td.snapshot(at=20)
            self.assertEqual((reply["members"], reply["typing"]), (3, 1))
            self.assertEqual(in_order(members), in_order([
                {"event": "member", "at": 20, "conv": "g", "user": "ana", "name": "Ana", "locale": "de-AT",
                 "send_typing": True, "open": False},
                {"event": "member", "at": 20, "conv": "g", "user": "ben", "send_typing": True,
                 "receive_typing": False, "open": True, "view": "list"},
                {"event": "member", "at": 20, "conv": "g", "user": "cy", "name": "Cy", "send_typing": True,
                 "open": True, "thread": "t1"},
            ]))
            self.assertEqual(in_order(streaks), in_order([
                {"event": "streak", "at": 20, "conv": "g", "thread": "t1", "user": "ana",
                 "activity": "recording_audio", "deadline": 3010, "keystroke": 1}]))
            td.offline("cy", at=30)                                    # cy's screen changed: forgotten
            _, members, _ = td.snapshot(at=40)
            self.assertEqual(members[2], {"event": "member", "at": 40, "conv": "g", "user": "cy", "name": "Cy",
                                          "send_typing": True, "open": False, "forgotten": True})
            self.assertEqual(written(td), [])                    # none of it leaks to next_event

    def test_stdout_is_read_in_blocks_not_byte_by_byte(self):
        # A 300-member room writes ~6,000 indicators (~600 KB). Read one byte per
        # read(2), as an unbuffered pipe's line iterator does, that is ~600,000 reads;
        # read through a buffer, a few hundred. Linux counts them in /proc/self/io.
        try:
            with open("/proc/self/io") as io:
                io.read()
        except OSError:
            self.skipTest("no /proc/self/io")

        def reads():
            with open("/proc/self/io") as io:
                return int(re.search(r"^syscr: (\d+)$", io.read(), re.M).group(1))

        with Typingd(BINARY, *MANUAL, "--no-drain") as td:
            for i in range(300):
                td.join("big", f"user-{i}", name=f"Member {i}")
            before = reads()
            for cycle in range(10):
                td.type("big", f"user-{cycle}", at=10 * cycle + 1)
                td.send("big", f"user-{cycle}", at=10 * cycle + 2)
            events = written(td)
            used = reads() - before
        self.assertEqual(len(events), 20 * 299)
        self.assertLess(used, len(events) // 4, f"{used} read calls for {len(events)} events")

    def test_a_write_that_blocks_does_not_stop_the_reader(self):
        # Six keystrokes in a 2,000-member room make ~1 MB of indicators while another
        # thread writes a 900 KB line, more than the pipe holds. typingd must keep
        # writing to finish the keystrokes before it reads the long line, so the
        # reader must keep reading while that write blocks: if it waited for the
        # writer (a lock held across the write), all three would wait forever.
        td = Typingd(BINARY, *MANUAL, "--no-drain")
        results = []

        def keystroke(user):
            results.append(td.request("type", timeout=20, conv="big", user=user)["event"])

        def long_line():
            with self.assertRaises(TypingdError) as caught:
                td.request("join", timeout=20, conv="big", user="zz", name="N" * 900_000)
            results.append(caught.exception.code)

        try:
            for i in range(2000):
                td.join("big", f"u{i}")
            threads = [threading.Thread(target=keystroke, args=(f"u{i}",), daemon=True) for i in range(6)]
            threads.append(threading.Thread(target=long_line, daemon=True))
            deadline = time.monotonic() + 30
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))
            self.assertEqual(sum(thread.is_alive() for thread in threads), 0, "requests still waiting after 30 s")
            self.assertEqual(sorted(results), ["bad_field"] + ["ok"] * 6)     # a name is at most 1024 bytes
            self.assertEqual(len(written(td)), 6 * 1999)                       # all but the typer, each time
        finally:
            if any(thread.is_alive() for thread in threads):
                td._process.kill()                                             # frees the stuck threads
            td.close()

    def test_the_readme_example_runs_as_written(self):
        package = os.path.dirname(HERE)
        with open(os.path.join(package, "README.md"), encoding="utf-8") as readme:
            code = re.search(r"```python\n(.*?)```", readme.read(), re.S).group(1)
        # As after `pip install ./clients/python`: the package importable, tables beside it.
        result = subprocess.run([sys.executable, "-c", code], cwd=HERE, capture_output=True, text=True,
                                timeout=60, env={**os.environ, "TYPINGD_BINARY": BINARY, "PYTHONPATH": package})
        self.assertEqual(result.returncode, 0, result.stderr)
        # Each print's expected output is its line's comment, after "# -> ".
        expected = [line.split("# -> ", 1)[1].strip() for line in code.splitlines()
                    if line.lstrip().startswith("print(") and "# -> " in line]
        self.assertEqual(result.stdout.splitlines(), expected)


class ProtocolV4Tests(unittest.TestCase):
    """The v4 fields through the wrapper, on the manual clock: side panes and status
    words. Each assertion is the exact output typingd wrote, keys in order."""

    def test_a_side_pane_has_its_own_indicators_and_its_own_shown(self):
        with Typingd(BINARY, *MANUAL, "--typing-events") as td:
            for user, name in (("ana", "Ana"), ("ben", "Ben"), ("cy", "Cy")):
                td.join("g", user, name=name)
            td.open_view("g", "ben", thread="t", pane="side", at=10)  # beside ben's main timeline
            td.type("g", "ana", at=20)
            td.type("g", "cy", thread="t", at=30)
            self.assertEqual(in_order(written(td)), in_order([
                typing(20, "ana", "started"),
                indicator(20, "ben", ["ana"], "Ana is typing..."),
                indicator(20, "cy", ["ana"], "Ana is typing..."),
                typing(30, "cy", "started", thread="t"),
                indicator(30, "ben", ["cy"], "Cy is typing...", thread="t", pane="side"),
            ]))
            # Two screens of one conversation, each with what it was last sent.
            self.assertEqual(td.shown("ben", "g")["text"], "Ana is typing...")
            self.assertEqual(td.shown("ben", "g", thread="t", pane="side")["at"], 30)
            self.assertIsNone(td.shown("ben", "g", thread="t"))       # not on the main screen
            self.assertIsNone(td.shown("ben", "g", pane="side"))      # the side pane shows t
            td.open_view("g", "ben", thread="t", pane="main", at=40)  # the main screen moves to t too
            self.assertEqual(written(td), [indicator(40, "ben", ["cy"], "Cy is typing...", thread="t")])
            self.assertIsNone(td.shown("ben", "g"))
            self.assertEqual(td.shown("ben", "g", thread="t")["at"], 40)
            self.assertEqual(td.shown("ben", "g", thread="t", pane="side")["at"], 30)   # left as it was
            td.close_view("g", "ben", pane="side", at=50)              # removed without an event
            self.assertEqual(written(td), [])
            self.assertIsNone(td.shown("ben", "g", thread="t", pane="side"))
            self.assertEqual(td.shown("ben", "g", thread="t")["at"], 40)
            td.open_view("g", "ben", thread="t", pane="side", at=60)  # back, compared from empty
            self.assertEqual(written(td), [indicator(60, "ben", ["cy"], "Cy is typing...", thread="t", pane="side")])
            _, members, _ = td.snapshot(at=65)
            self.assertEqual((members[1]["user"], members[1]["side"]), ("ben", "t"))
            td.offline("ben", at=70)                                   # both screens go
            self.assertIsNone(td.shown("ben", "g", thread="t", pane="side"))
            self.assertIsNone(td.shown("ben", "g", thread="t"))
            for fields in ({"pane": "side"}, {"pane": "side", "view": "list"}, {"pane": "top", "thread": "t"}):
                with self.assertRaises(TypingdError) as caught:
                    td.open_view("g", "ben", **fields)
                self.assertEqual((caught.exception.code, caught.exception.event["field"]), ("bad_field", "pane"))

    def test_status_words_are_sent_and_come_back_in_typing_events_and_streaks(self):
        with Typingd(BINARY, *MANUAL, "--typing-events") as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "claude", name="Claude")
            td.type("g", "claude", activity="status", status="is thinking", timeout_ms=60000, at=10)
            td.type("g", "ana", at=20)
            td.type("g", "claude", activity="status", status="is writing", timeout_ms=60000, at=30)
            self.assertEqual(in_order(written(td)), in_order([
                typing(10, "claude", "started", activity="status", status="is thinking"),
                indicator(10, "ana", ["claude"], "Claude is thinking...", activities=["status"]),
                typing(20, "ana", "started"),
                indicator(20, "claude", ["ana"], "Ana is typing..."),
                typing(30, "claude", "changed", activity="status", status="is writing"),
                indicator(30, "ana", ["claude"], "Claude is writing...", activities=["status"]),
            ]))
            self.assertEqual(td.query("g", at=40)["activities"], ["status", "typing"])
            _, _, streaks = td.snapshot(at=50)
            self.assertEqual(list(streaks[0].items())[4:6], [("activity", "status"), ("status", "is writing")])
            for fields, code in (({"activity": "status"}, "missing_field"), ({"status": "is here"}, "bad_field"),
                                 ({"activity": "status", "status": "is\x1b[31m red"}, "bad_field"),
                                 ({"activity": "status", "status": ""}, "bad_field")):
                with self.assertRaises(TypingdError) as caught:
                    td.type("g", "ana", **fields)
                self.assertEqual((caught.exception.code, caught.exception.event["field"]), (code, "status"), fields)


if __name__ == "__main__":
    unittest.main()
