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


if __name__ == "__main__":
    unittest.main()
