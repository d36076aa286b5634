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



def drain(td):
    """(at, viewer, text) of every indicator written so far (manual clock: at once)."""
    seen = []
    while (event := td.next_event(timeout=0.2)) is not None:
        if event["event"] == "indicator":
            seen.append((event["at"], event["viewer"], event["text"]))
    return seen


class ProtocolV2Tests(unittest.TestCase):
    """The v2 commands and options through the wrapper, on the manual clock."""

    def test_views_decide_who_sees_typing(self):
        with Typingd(BINARY, "--clock", "manual", "--no-drain", audience="open") as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", name="Ben")
            td.type("g", "ana", at=100)
            self.assertEqual(drain(td), [])                      # ben's view is closed
            td.open_view("g", "ben", at=200)
            self.assertEqual(drain(td), [(200, "ben", "Ana is typing...")])
            td.open_view("g", "ana", at=300)
            td.type("g", "ben", at=400)
            self.assertEqual(drain(td), [(400, "ana", "Ben is typing...")])  # ben's own view: unchanged
            td.close_view("g", "ana", at=500)                    # stops ana's own typing
            self.assertEqual(drain(td), [(500, "ben", "")])
            self.assertEqual(td.query("g")["open"], ["ben"])

    def test_user_renames_and_hides_typing_everywhere(self):
        with Typingd(BINARY, "--clock", "manual", "--no-drain") as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", name="Ben")
            td.join("h", "ana")
            td.join("h", "cy", name="Cy", send_typing=False)
            td.type("g", "ana", at=10)
            td.user("ana", name="Anna", at=20)
            td.type("h", "cy", at=30)                            # cy does not send typing
            self.assertEqual(drain(td), [(10, "ben", "Ana is typing..."), (20, "ben", "Anna is typing...")])
            td.user("ana", send_typing=False, at=40)             # stops her streak: reason hidden
            self.assertEqual(drain(td), [(40, "ben", "")])
            with self.assertRaises(TypingdError) as caught:
                td.user("nobody", name="X")
            self.assertEqual(caught.exception.code, "not_member")

    def test_timeout_ms_per_keystroke_and_recent_order(self):
        with Typingd(BINARY, "--clock", "manual", "--no-drain", "--timeout-ms", "3000", order="recent") as td:
            for user, name in (("ana", "Ana"), ("ben", "Ben"), ("cy", "Cy")):
                td.join("g", user, name=name)
            td.type("g", "ana", at=100, timeout_ms=30000)        # a Matrix-like client
            td.type("g", "ben", at=200)
            td.type("g", "ana", at=300, timeout_ms=30000)        # most recent first again
            td.tick(at=3200)                                     # ben's default timeout
            td.tick(at=30300)                                    # ana's 30 s timeout
            self.assertEqual([entry for entry in drain(td) if entry[1] == "cy"], [
                (100, "cy", "Ana is typing..."), (200, "cy", "Ben and Ana are typing..."),
                (300, "cy", "Ana and Ben are typing..."), (3200, "cy", "Ana is typing..."),
                (30300, "cy", ""),
            ])

    def test_snapshot_lists_members_and_streaks(self):
        with Typingd(BINARY, "--clock", "manual", "--no-drain", max_listed=1) as td:
            td.join("g", "ana", name="Ana")
            td.join("g", "ben", send_typing=False)
            td.open_view("g", "ben")
            td.type("g", "ana", at=50, timeout_ms=1000)
            reply, members, streaks = td.snapshot(at=60)
            self.assertEqual((reply["conversations"], reply["members"], reply["typing"]), (1, 2, 1))
            self.assertEqual([(m["user"], m.get("name"), m["send_typing"], m["open"]) for m in members],
                             [("ana", "Ana", True, False), ("ben", None, False, True)])
            self.assertEqual([(s["user"], s["deadline"], s["keystroke"]) for s in streaks], [("ana", 1050, 1)])


if __name__ == "__main__":
    unittest.main()
