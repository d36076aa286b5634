"""typingd's Python client: start a typingd process and drive it (protocol v4).

    from typingd import Typingd

    with Typingd(clock="manual") as td:           # $TYPINGD_BINARY, else typingd on PATH
        td.join("dm", "alice", name="Alice")
        td.join("dm", "bob", name="Bob")
        td.type("dm", "alice", at=0)
        print(td.next_event(timeout=1, viewer="bob")["text"])   # Alice is typing...

``Typingd`` is driven from threads, ``AsyncTypingd`` from an asyncio loop; both have
the API of clients/API.md, shared with the Node.js package. Standard library only.
"""
from ._async import AsyncTypingd
from ._common import Event, TypingdError, TypingdExited
from ._schema import ACTIVITIES
from ._threaded import Typingd

__all__ = ["Typingd", "AsyncTypingd", "TypingdError", "TypingdExited", "ACTIVITIES", "Event"]
__version__ = "4.0.0"
