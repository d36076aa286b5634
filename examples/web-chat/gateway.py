#!/usr/bin/env python3
"""web-chat gateway: a chat page, its WebSocket endpoint, and one typingd behind them.

    python gateway.py [--host 127.0.0.1] [--port 8080] [--typingd PATH]
                      [--timeout-ms 5000] [--max-listed N] [--style group|compact]
                      [--announce-after-ms 1000] [--bot-think-ms 2000]
                      [-- TYPINGD_OPTION ...]

One asyncio process (the `websockets` package) serves the page (/, /chat.js,
/chat.css) and a WebSocket endpoint (/ws?room=R&user=U&name=N; without room=, the
room DEFAULT_ROOM). It runs ONE typingd on the real clock through the Python client
(`typingd.AsyncTypingd`), with `--audience open` (only the people who have the room
open get indicators) and `--announce-after-ms` (a sentence that stays that long is
sent once more as an announcement, for the page's live region).

Each WebSocket connection is a person on a screen: the first connection of a user in a
room joins them (`join`, with their name) and opens their view (`open`); their last
connection closing makes them leave (`leave`). Several connections of one user (two
tabs) share the membership and all get its indicators. A member may also follow one
thread (a message's replies) in a side pane beside the channel: typingd's `open` and
`close` with "pane": "side"; the side pane has its own indicators.

A message that starts with "@bot" summons the bot (user BOT_USER, named BOT_NAME): it
joins the room in typingd, types with activity "status" and the words BOT_STATUS
("Bot is thinking..." in the others' indicator) for --bot-think-ms, then replies where
it was asked (the channel or the thread); its reply's `send` ends the status.

From the page (JSON text frames):
    {"op": "type"}                 a keystroke, the box not empty
    {"op": "type", "empty": true}  the box became empty
    {"op": "send", "text": "..."}  Enter: typingd's `send`, and the message goes to everyone
    "thread": ID in type and send: the same, in the thread of the message ID
    {"op": "open_thread", "thread": ID}   show that thread in the side pane
    {"op": "close_thread"}                close the side pane
To the page:
    {"op": "hello", "room", "user", "name", "members": [{user, name}], "history": [...],
     "timeout_ms", "side"}   side: the thread in the side pane, or null
    {"op": "indicator", "pane", "thread", "text", "typing", "more"}   exactly what typingd
        sent this viewer; pane "main" (the channel; thread null) or "side" (thread: ID)
    {"op": "announce", "pane", "thread", "text"}   typingd's announcement for that screen
    {"op": "side", "thread"}   the side pane now shows this thread (null: it is closed)
    {"op": "message", "id", "thread", "user", "name", "text", "time"}   thread: null in the
        channel, else the id of the message replied to; time: ms since the Unix epoch
    {"op": "joined" | "left", "user", "name"}
    {"op": "error", "code", "message"}   a bad frame or a refused command; the socket stays open
A connection whose parameters typingd refuses (no user, an id over 256 bytes, ...) gets
an error and is closed with code 4400.

Prints "web-chat: serving http://HOST:PORT/" on stdout once it listens (--port 0: a
free port). SIGINT/SIGTERM: closes every socket, ends typingd, exits 0. If typingd
exits on its own, the gateway says why (its status and stderr) and exits 1.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import http
import json
import os
import pathlib
import signal
import sys
import time
import urllib.parse
from typing import Any, Deque, Dict, List, Optional, Set, Tuple

from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from typingd import AsyncTypingd, TypingdError, TypingdExited

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/chat.js": ("chat.js", "text/javascript; charset=utf-8"),
    "/chat.css": ("chat.css", "text/css; charset=utf-8"),
}
#: The longest frame a page may send (websockets closes the socket with 1009 past it).
MAX_FRAME = 64 * 1024
#: The longest chat message, in characters.
MAX_MESSAGE = 4000
#: The room of a connection whose URL has no room= (the page sends none unless its own
#: URL has ?room=, and shows the room the hello names).
DEFAULT_ROOM = "general"
#: Messages a room keeps for people who arrive later.
HISTORY = 100
#: A socket whose unsent output passes this is too slow to follow: it is closed.
MAX_BUFFERED = 1024 * 1024
#: The bot: its user id (refused to people), its name, and its status words.
BOT_USER = "bot"
BOT_NAME = "Bot"
BOT_STATUS = "is thinking"
#: What summons the bot: a message starting with it.
BOT_CALL = "@bot"


def log(message: str) -> None:
    print(f"web-chat: {message}", file=sys.stderr, flush=True)


def short(text: str) -> str:
    """An id or name for a message: quoted, and cut after 40 characters."""
    return repr(text if len(text) <= 40 else text[:40] + "...")


class Member:
    __slots__ = ("user", "name", "sockets", "side")

    def __init__(self, user: str, name: str) -> None:
        self.user = user
        self.name = name
        self.sockets: Set[ServerConnection] = set()
        self.side: Optional[str] = None   # the thread in the side pane


class Room:
    def __init__(self, conv: str) -> None:
        self.conv = conv
        self.members: Dict[str, Member] = {}
        self.history: Deque[Dict[str, Any]] = collections.deque(maxlen=HISTORY)
        self.messages = 0    # messages said so far: the next id is m<messages + 1>
        self.bot = False     # the bot has joined the room in typingd

    def sockets(self) -> List[ServerConnection]:
        return [ws for member in self.members.values() for ws in member.sockets]


def push(sockets: Any, message: Dict[str, Any]) -> None:
    """Sends one message to sockets without waiting (in order, on the loop); a socket
    that cannot keep up is closed rather than buffered without end."""
    open_ones = []
    for ws in sockets:
        transport = ws.transport
        if transport is not None and transport.get_write_buffer_size() > MAX_BUFFERED:
            asyncio.ensure_future(ws.close(1008, "too slow"))
        else:
            open_ones.append(ws)
    if open_ones:
        broadcast(open_ones, json.dumps(message, ensure_ascii=False, separators=(",", ":")))


class Refused(Exception):
    """A connection the gateway will not take (bad parameters)."""


class Gateway:
    def __init__(self, td: AsyncTypingd, timeout_ms: int, bot_think_ms: int) -> None:
        self.td = td
        self.timeout_ms = timeout_ms
        self.bot_think_ms = bot_think_ms
        self.bot_tasks: Set["asyncio.Task[None]"] = set()
        self.rooms: Dict[str, Room] = {}
        self.listening: Dict[str, Any] = {}   # user -> unsubscribes, while they are in a room
        self.lock = asyncio.Lock()             # joins and leaves, one at a time
        self.failed = asyncio.Event()          # typingd is gone
        self.failure = ""

    # typingd's indicators --------------------------------------------------------

    def screen_of(self, user: str, event: Dict[str, Any]) -> Optional[Tuple[Member, str, Optional[str]]]:
        """The member an indicator or announce event is for, and its screen (pane, thread):
        the channel on the main screen, or a thread in the side pane. None for another."""
        room = self.rooms.get(event.get("conv", ""))
        member = room.members.get(user) if room else None
        if member is None:
            return None
        if event.get("pane") == "side":
            return member, "side", event.get("thread")
        if event.get("thread") is not None or event.get("view") is not None:
            return None   # the page's main screen is always the channel
        return member, "main", None

    @staticmethod
    def indicator_message(pane: str, thread: Optional[str], event: Dict[str, Any]) -> Dict[str, Any]:
        return {"op": "indicator", "pane": pane, "thread": thread, "text": event.get("text", ""),
                "typing": event.get("typing", []), "more": event.get("more", 0)}

    def indicator_listener(self, user: str) -> Any:
        def deliver(event: Dict[str, Any]) -> None:
            found = self.screen_of(user, event)
            if found is not None:
                member, pane, thread = found
                push(member.sockets, self.indicator_message(pane, thread, event))
        return deliver

    def announce_listener(self, user: str) -> Any:
        # Only these reach the page's live region: a sentence once it has settled.
        def deliver(event: Dict[str, Any]) -> None:
            found = self.screen_of(user, event)
            if found is not None:
                member, pane, thread = found
                push(member.sockets, {"op": "announce", "pane": pane, "thread": thread,
                                      "text": event.get("text", "")})
        return deliver

    async def watch(self) -> None:
        """Notices typingd exiting on its own."""
        while self.td.exit_status is None:
            await asyncio.sleep(0.25)
        self.fail(f"typingd exited (status {self.td.exit_status})"
                  + (f"; stderr: {self.td.stderr.strip()}" if self.td.stderr.strip() else ""))

    def fail(self, why: str) -> None:
        if not self.failed.is_set():
            self.failure = why
            self.failed.set()

    # Connections ------------------------------------------------------------------

    async def connect(self, ws: ServerConnection, conv: str, user: str, name: str) -> Room:
        async with self.lock:
            room = self.rooms.get(conv)
            if room is None:
                room = self.rooms[conv] = Room(conv)
            member = room.members.get(user)
            try:
                if member is None:
                    await self.td.join(conv, user, name=name)
                    try:
                        await self.td.open_view(conv, user)
                    except BaseException:
                        await self.td.leave(conv, user)
                        raise
                    member = room.members[user] = Member(user, name)
                    if user not in self.listening:
                        self.listening[user] = (self.td.on_indicator(user, self.indicator_listener(user)),
                                                self.td.on_announce(user, self.announce_listener(user)))
                    push(room.sockets(), {"op": "joined", "user": user, "name": name})
                elif name != member.name:
                    await self.td.user(user, name=name)   # a rename counts everywhere
                    for other in self.rooms.values():
                        if user in other.members:
                            other.members[user].name = name
            finally:
                if not room.members:
                    del self.rooms[conv]
            # From here to the socket's registration nothing awaits, so no indicator
            # can come in between: the page gets hello, then what it shows now, then
            # every change.
            push([ws], {"op": "hello", "room": conv, "user": user, "name": name,
                        "members": [{"user": m.user, "name": m.name} for m in room.members.values()],
                        "history": list(room.history), "timeout_ms": self.timeout_ms, "side": member.side})
            shown = self.td.shown(user, conv)
            if shown is not None:
                push([ws], self.indicator_message("main", None, shown))
            if member.side is not None:
                shown = self.td.shown(user, conv, thread=member.side, pane="side")
                if shown is not None:
                    push([ws], self.indicator_message("side", member.side, shown))
            member.sockets.add(ws)
            return room

    async def disconnect(self, ws: ServerConnection, room: Room, user: str) -> None:
        async with self.lock:
            member = room.members.get(user)
            if member is None:
                return
            member.sockets.discard(ws)
            if member.sockets:
                return
            del room.members[user]
            if not room.members:
                self.rooms.pop(room.conv, None)
            if not any(user in r.members for r in self.rooms.values()):
                for unsubscribe in self.listening.pop(user, ()):
                    unsubscribe()
            push(room.sockets(), {"op": "left", "user": user, "name": member.name})
            if not self.failed.is_set():
                try:
                    await self.td.leave(room.conv, user)
                except TypingdExited as error:
                    self.fail(str(error))
                except (TypingdError, TimeoutError) as error:
                    log(f"leave {short(user)} from {short(room.conv)}: {error}")
                if room.bot and not room.members:   # the last person left: the bot goes too
                    room.bot = False
                    try:
                        await self.td.leave(room.conv, BOT_USER)
                    except TypingdExited as error:
                        self.fail(str(error))
                    except (TypingdError, TimeoutError) as error:
                        log(f"leave the bot from {short(room.conv)}: {error}")

    # Messages and the bot ---------------------------------------------------------------

    def say(self, room: Room, user: str, name: str, text: str, thread: Optional[str]) -> None:
        """A message to everyone in the room, kept for people who arrive later."""
        room.messages += 1
        said = {"op": "message", "id": f"m{room.messages}", "thread": thread, "user": user, "name": name,
                "text": text, "time": int(time.time() * 1000)}
        room.history.append(said)
        push(room.sockets(), said)

    def summon_bot(self, room: Room, thread: Optional[str], asked: str) -> None:
        task = asyncio.ensure_future(self.bot_replies(room, thread, asked))
        self.bot_tasks.add(task)
        task.add_done_callback(self.bot_tasks.discard)

    async def bot_replies(self, room: Room, thread: Optional[str], asked: str) -> None:
        """The bot shows its status in its own words ("Bot is thinking..."), thinks, and
        replies; its `send` ends the status at once, as anyone's does."""
        conv = room.conv
        try:
            async with self.lock:
                if self.rooms.get(conv) is not room:
                    return
                if not room.bot:
                    await self.td.join(conv, BOT_USER, name=BOT_NAME)
                    room.bot = True
            # The status lasts past the thinking: only the reply ends it.
            await self.td.type(conv, BOT_USER, thread=thread, activity="status", status=BOT_STATUS,
                               timeout_ms=self.bot_think_ms + 10000)
            await asyncio.sleep(self.bot_think_ms / 1000)
            if self.rooms.get(conv) is not room or not room.bot:
                return
            await self.td.send(conv, BOT_USER, thread=thread)
            words = len(asked.split())
            self.say(room, BOT_USER, BOT_NAME,
                     f"I read {words} word{'' if words == 1 else 's'}: {asked}" if words else "You called?", thread)
        except TypingdExited as error:
            self.fail(str(error))
        except (TypingdError, TimeoutError) as error:
            log(f"the bot in {short(conv)}: {error}")

    # Frames from a page ---------------------------------------------------------------

    async def handle(self, ws: ServerConnection, room: Room, user: str, frame: Any) -> None:
        def refuse(code: str, message: str) -> None:
            push([ws], {"op": "error", "code": code, "message": message})

        if not isinstance(frame, str):
            return refuse("bad_frame", "binary frames are not understood: send JSON text")
        try:
            message = json.loads(frame)
        except ValueError as error:
            return refuse("bad_json", f"not JSON: {error}")
        if not isinstance(message, dict):
            return refuse("bad_json", "a frame must be a JSON object")
        op = message.get("op")
        thread = message.get("thread")
        if op in ("type", "send", "open_thread") and thread is not None and (not isinstance(thread, str) or not thread):
            return refuse("bad_field", '"thread" must be a non-empty string')
        try:
            member = room.members.get(user)
            if op == "type":
                empty = message.get("empty", False)
                if not isinstance(empty, bool):
                    return refuse("bad_field", '"empty" must be true or false')
                await self.td.type(room.conv, user, thread=thread, empty=empty or None)
            elif op == "send":
                text = message.get("text")
                if not isinstance(text, str) or not text.strip():
                    return refuse("bad_field", '"text" must be a non-empty string')
                if len(text) > MAX_MESSAGE:
                    return refuse("bad_field", f'"text" may have at most {MAX_MESSAGE} characters')
                await self.td.send(room.conv, user, thread=thread)
                self.say(room, user, member.name if member else user, text, thread)
                first, _, rest = text.strip().partition(" ")
                if first.lower() == BOT_CALL:
                    self.summon_bot(room, thread, rest.strip())
            elif op == "open_thread":
                if thread is None:
                    return refuse("bad_field", '"thread" must be a non-empty string')
                await self.td.open_view(room.conv, user, thread=thread, pane="side")
                if member is not None:
                    member.side = thread
                    # Nothing awaits from here: the pages get the pane, then what it shows.
                    push(member.sockets, {"op": "side", "thread": thread})
                    shown = self.td.shown(user, room.conv, thread=thread, pane="side")
                    if shown is not None:
                        push(member.sockets, self.indicator_message("side", thread, shown))
            elif op == "close_thread":
                await self.td.close_view(room.conv, user, pane="side")
                if member is not None:
                    member.side = None
                    push(member.sockets, {"op": "side", "thread": None})
            else:
                return refuse("bad_op", f'unknown "op" {op!r}: expected "type", "send", '
                                        '"open_thread" or "close_thread"')
        except TypingdExited as error:
            self.fail(str(error))
            refuse("gone", "typingd is not running")
        except TypingdError as error:
            refuse(str(error.code), str(error.event.get("message", error)))
        except TimeoutError as error:
            refuse("timeout", str(error))

    async def serve_socket(self, ws: ServerConnection) -> None:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(ws.request.path).query)
        conv = query.get("room", [DEFAULT_ROOM])[0]
        user = query.get("user", [""])[0]
        name = query.get("name", [user])[0]
        try:
            if not user:
                raise Refused("the URL needs ?user=ID (and &name=NAME, &room=ROOM)")
            if user == BOT_USER:
                raise Refused(f"the user id {BOT_USER!r} is the bot's")
            try:
                room = await self.connect(ws, conv, user, name)
            except TypingdExited as error:
                self.fail(str(error))
                raise Refused("typingd is not running") from None
            except (TypingdError, TimeoutError) as error:
                raise Refused(f"cannot join {short(conv)} as {short(user)}: {error}") from None
        except Refused as refused:
            push([ws], {"op": "error", "code": "refused", "message": str(refused)})
            await ws.close(4400, str(refused).encode()[:120].decode("utf-8", "ignore"))
            return
        log(f"{short(user)} ({short(name)}) connected to {short(conv)}")
        try:
            async for frame in ws:
                await self.handle(ws, room, user, frame)
        except ConnectionClosed:
            pass
        finally:
            await self.disconnect(ws, room, user)
            log(f"{short(user)} disconnected from {short(conv)}")


def static_files(connection: ServerConnection, request: Request) -> Optional[Response]:
    """Plain HTTP for everything but /ws: the page's three files, else 404."""
    path = urllib.parse.urlsplit(request.path).path
    if path == "/ws":
        return None
    if path not in STATIC:
        return connection.respond(http.HTTPStatus.NOT_FOUND, "not found\n")
    filename, content_type = STATIC[path]
    body = (HERE / filename).read_bytes()
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body))),
                       ("Cache-Control", "no-store")])
    return Response(200, "OK", headers, body)


async def main(args: argparse.Namespace) -> int:
    options = (["--style", args.style] if args.style else []) + list(args.typingd_options)
    try:
        options += ["--announce-after-ms", str(args.announce_after_ms)]
        td = AsyncTypingd(args.typingd, *options, audience="open", timeout_ms=args.timeout_ms,
                          max_listed=args.max_listed, request_timeout=5.0,
                          queue=False)   # events reach on_indicator only: nothing piles up
    except ValueError as error:   # --format text: the client reads JSON
        log(str(error))
        return 64
    try:
        await td.start()
        await td.sync()   # typingd runs and answers (a bad option shows here)
    except (TypingdError, TimeoutError) as error:
        log(f"typingd did not start: {error}")
        return 1
    gateway = Gateway(td, args.timeout_ms, args.bot_think_ms)
    tasks = [asyncio.ensure_future(gateway.watch())]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    status = 0
    try:
        async with serve(gateway.serve_socket, args.host, args.port, process_request=static_files,
                         max_size=MAX_FRAME, ping_interval=20, ping_timeout=20) as server:
            port = server.sockets[0].getsockname()[1]
            host = args.host if ":" not in args.host else f"[{args.host}]"
            print(f"web-chat: serving http://{host}:{port}/ (typingd pid {td.pid}, "
                  f"--timeout-ms {args.timeout_ms}, --announce-after-ms {args.announce_after_ms}, "
                  f"--audience open)", flush=True)
            stopped = asyncio.ensure_future(stop.wait())
            failed = asyncio.ensure_future(gateway.failed.wait())
            await asyncio.wait([stopped, failed], return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            failed.cancel()
            if gateway.failed.is_set():
                log(f"stopping: {gateway.failure}")
                status = 1
            server.close()   # closes every socket (1001): their users leave
            await server.wait_closed()
    except OSError as error:
        log(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}")
        status = 1
    finally:
        for task in tasks + list(gateway.bot_tasks):
            task.cancel()
        if td.exit_status is None:
            try:
                await td.close(timeout=3.0, drain=False)
            except TypingdError as error:
                log(f"closing typingd: {error}")
    return status


def parse(argv: List[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Serves the web-chat page and drives one typingd for it.",
        epilog="Options after -- go to typingd as they are (e.g. -- --order recent --phrases phrases/).")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: a free one)")
    parser.add_argument("--typingd", default=os.environ.get("TYPINGD_BINARY") or str(ROOT / ".build/release/typingd"),
                        help="the typingd binary (default $TYPINGD_BINARY, else .build/release/typingd)")
    parser.add_argument("--timeout-ms", type=int, default=5000,
                        help="typing stops this long after the last keystroke (default 5000)")
    parser.add_argument("--max-listed", type=int, default=None, help="typingd's --max-listed")
    parser.add_argument("--style", choices=("group", "compact"), default=None, help="typingd's --style")
    parser.add_argument("--announce-after-ms", type=int, default=1000,
                        help="typingd's --announce-after-ms: a sentence that stays this long is announced "
                             "to screen readers (default 1000)")
    parser.add_argument("--bot-think-ms", type=int, default=2000,
                        help="how long the bot shows \"Bot is thinking...\" before it replies (default 2000)")
    parser.add_argument("typingd_options", nargs="*", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
