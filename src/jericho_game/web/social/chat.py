"""Chat in online games: the players' chat and the spectators' chat (docs/web.md, "Chat").

Per game there are two rooms:

- ``players``: the two seated players write to each other; while the game is played only they
  read it; once it is over it is part of the game's record (the replay shows it to everyone).
- ``spectators``: the watchers (logged-in accounts) write to each other; while the game is played
  the players neither read nor write it, so no spectator ever writes to the players during a
  game; once it is over the players may read and write it too.

A message is at most :attr:`ChatPolicy.max_chars` characters (one line: control characters are
dropped), an author (a seat, or a spectator's account) may post at most :attr:`ChatPolicy.burst`
messages in :attr:`ChatPolicy.window` seconds per game, counted from the stored messages (so
across every server process).  A player may mute the opponent's chat in one game, for themselves
(``chat_mute``); any reader may report a message (``chat_report``: stored for the admins, see
``GET /api/admin/chat/reports``); an admin mutes an account site-wide with ``jericho user mute
NAME`` (``unmute``).

The database is the truth: messages, mutes and reports are rows of the game database (SQLite or
PostgreSQL).  A message is numbered per game (``seq``) in a transaction that holds the game's row
lock, so every process sees the messages of a game in one order with no gap; the insert
``NOTIFY``s ``"game_id -4"`` (:data:`CHAT_CHANGED`) on PostgreSQL, and each process sends the
messages it has not sent yet to its own clients of the game, each only what its reader may read.

Nothing a user writes is ever HTML: the server sends text, and the page puts it in ``textContent``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table, Text, UniqueConstraint, text
from sqlalchemy.engine import Connection

from jericho_game.web.round.gameroom import SIDE_NAMES, ClientError, Room
from jericho_game.web.round.messages import Incoming
from jericho_game.web.storage.database import GAMES_CHANNEL, Storage

if TYPE_CHECKING:
    from jericho_game.web.common.conn import Conn
    from jericho_game.web.round.rooms import GameService

__all__ = ["CHAT_CHANGED", "ROOMS", "ChatPolicy", "ChatMessage", "ChatStore", "Chat", "clean_text"]

log = logging.getLogger("jericho_game.web")

#: The broker's version number for "a chat message was posted in this game" (-1 AI queue,
#: -2 review, -3 presence).
CHAT_CHANGED = -4
ROOMS = ("players", "spectators")
PUBLIC_LATEST = 2000  # messages of a game that GET /api/games/{id}/chat returns at most (the latest)


@dataclass(frozen=True)
class ChatPolicy:
    """The chat's limits."""

    max_chars: int = 500  # characters of one message
    burst: int = 5  # messages one author may post in `window` seconds, per game
    window: float = 10.0
    history: int = 200  # the latest messages sent to a page that (re)connects


_metadata = MetaData()

chat_table = Table(
    "chat_messages",
    _metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", String(32), nullable=False),
    Column("seq", Integer, nullable=False),  # 1, 2, ... per game, in commit order (the game's row lock)
    Column("room", String(12), nullable=False),  # "players" or "spectators"
    Column("ply", Integer, nullable=False),  # moves played when it was written (the replay places it)
    Column("at", Float, nullable=False),
    Column("side", String(8), nullable=True),  # the author's seat; None: a spectator
    Column("account", Integer, nullable=True),
    Column("author", String(64), nullable=False),  # the name shown, as it was when written
    Column("address", String(64), nullable=True),
    Column("text", Text, nullable=False),
    UniqueConstraint("game_id", "seq", name="chat_messages_game_seq"),
)
Index("chat_messages_game_at", chat_table.c.game_id, chat_table.c.at)

mutes_table = Table(  # a player who muted the opponent's chat in one game
    "chat_mutes",
    _metadata,
    Column("game_id", String(32), primary_key=True),
    Column("side", String(8), primary_key=True),
    Column("at", Float, nullable=False),
)

site_mutes_table = Table(  # accounts an admin muted everywhere (`jericho user mute NAME`)
    "chat_site_mutes",
    _metadata,
    Column("account", Integer, primary_key=True),
    Column("at", Float, nullable=False),
)

reports_table = Table(
    "chat_reports",
    _metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("message_id", Integer, nullable=False),
    Column("game_id", String(32), nullable=False),
    Column("at", Float, nullable=False),
    Column("reporter", String(80), nullable=False),  # "account:7", "seat:south" or "address:1.2.3.4"
    Column("reason", Text, nullable=True),
    UniqueConstraint("message_id", "reporter", name="chat_reports_once"),
)

_NOTIFY = text("SELECT pg_notify(:channel, :payload)")


@dataclass(frozen=True)
class ChatMessage:
    """One stored message."""

    id: int
    game_id: str
    seq: int
    room: str
    ply: int
    at: float
    side: str | None
    account: int | None
    author: str
    text: str

    def as_json(self) -> dict[str, Any]:
        """The message as clients get it (``type`` ``chat``); never the author's address."""
        return {
            "type": "chat",
            "id": self.id,
            "seq": self.seq,
            "room": self.room,
            "author": self.author,
            "side": self.side,
            "text": self.text,
            "ply": self.ply,
            "at": self.at,
        }


def _message(row: Any) -> ChatMessage:
    return ChatMessage(
        id=row.id,
        game_id=row.game_id,
        seq=row.seq,
        room=row.room,
        ply=row.ply,
        at=row.at,
        side=row.side,
        account=row.account,
        author=row.author,
        text=row.text,
    )


def clean_text(raw: Any, max_chars: int) -> str:
    """A message's text as stored: NFC, one line (control and format characters dropped, runs of
    spaces kept as written), trimmed; ``bad_message`` when empty, ``chat_too_long`` over the cap."""
    if not isinstance(raw, str):
        raise ClientError("bad_message", "a chat message needs 'text': the words to send")
    if len(raw) > 4 * max_chars:  # far over: refuse before normalizing a long string
        raise ClientError("chat_too_long", f"a chat message is at most {max_chars} characters")
    norm = unicodedata.normalize("NFC", raw)
    kept = "".join(" " if ch in "\t\n\r" else ch for ch in norm if ch in "\t\n\r" or unicodedata.category(ch)[0] != "C")
    out = kept.strip()
    if not out:
        raise ClientError("bad_message", "a chat message needs 'text': the words to send")
    if len(out) > max_chars:
        raise ClientError("chat_too_long", f"a chat message is at most {max_chars} characters, this one has {len(out)}")
    return out


class ChatStore:
    """The chat tables in the game database (SQL only); :class:`Storage` lends its engines."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.postgres = storage.postgres
        storage.create_tables(_metadata)

    def post(
        self,
        game_id: str,
        room: str,
        *,
        side: str | None,
        account: int | None,
        author: str,
        address: str | None,
        body: str,
        ply: int,
        now: float,
        policy: ChatPolicy,
    ) -> ChatMessage:
        """Store a message (numbered after the game's last one, under the game's row lock) and
        announce it in the same transaction; ``rate_limited`` when its author posted too much."""
        with self.storage.engine.begin() as conn:
            # the game's row lock orders the game's messages: commit order is seq order, so a
            # reader asking for "after seq N" never misses one committed later with a smaller seq
            # (SQLite: BEGIN IMMEDIATE already serializes every writer)
            if self.postgres:
                conn.execute(text("SELECT id FROM games WHERE id = :g FOR UPDATE"), {"g": game_id})
            who = "side = :who" if side is not None else "side IS NULL AND account = :who"
            recent = conn.execute(
                text(f"SELECT COUNT(*) FROM chat_messages WHERE game_id = :g AND at > :since AND {who}"),
                {"g": game_id, "since": now - policy.window, "who": side if side is not None else account},
            ).scalar_one()
            if recent >= policy.burst:
                raise ClientError(
                    "rate_limited",
                    f"too many chat messages: at most {policy.burst} in {policy.window:g} seconds; wait a moment",
                    429,
                )
            last = conn.execute(
                text("SELECT COALESCE(MAX(seq), 0) FROM chat_messages WHERE game_id = :g"), {"g": game_id}
            ).scalar_one()
            seq = int(last) + 1
            row: dict[str, Any] = {
                "game_id": game_id,
                "seq": seq,
                "room": room,
                "ply": ply,
                "at": now,
                "side": side,
                "account": account,
                "author": author[:64],
                "address": (address or "")[:64] or None,
                "text": body,
            }
            key = conn.execute(chat_table.insert().values(**row)).inserted_primary_key
            assert key is not None
            new_id = key[0]
            if self.postgres:
                conn.execute(_NOTIFY, {"channel": GAMES_CHANNEL, "payload": f"{game_id} {CHAT_CHANGED}"})
        return ChatMessage(
            id=int(new_id),
            game_id=game_id,
            seq=seq,
            room=room,
            ply=ply,
            at=now,
            side=side,
            account=account,
            author=author[:64],
            text=body,
        )

    def messages(self, game_id: str, after: int = 0, latest: int | None = None) -> list[ChatMessage]:
        """The game's messages with ``seq`` > ``after``, oldest first (``latest``: only the last ones)."""
        with self.storage.reader.connect() as conn:
            return self._messages(conn, game_id, after, latest)

    @staticmethod
    def _messages(conn: Connection, game_id: str, after: int, latest: int | None) -> list[ChatMessage]:
        cols = "id, game_id, seq, room, ply, at, side, account, author, text"
        if latest is None:
            rows = conn.execute(
                text(f"SELECT {cols} FROM chat_messages WHERE game_id = :g AND seq > :a ORDER BY seq"),
                {"g": game_id, "a": after},
            ).all()
        else:
            rows = conn.execute(
                text(f"SELECT {cols} FROM chat_messages WHERE game_id = :g AND seq > :a ORDER BY seq DESC LIMIT :n"),
                {"g": game_id, "a": after, "n": latest},
            ).all()[::-1]
        return [_message(r) for r in rows]

    def mutes(self, game_id: str) -> set[str]:
        """The seats that muted their opponent's chat in this game."""
        with self.storage.reader.connect() as conn:
            rows = conn.execute(text("SELECT side FROM chat_mutes WHERE game_id = :g"), {"g": game_id}).all()
        return {r[0] for r in rows}

    def set_mute(self, game_id: str, side: str, muted: bool, now: float) -> None:
        """Mute (or hear again) the opponent of ``side`` in one game, for ``side`` only."""
        with self.storage.engine.begin() as conn:
            conn.execute(text("DELETE FROM chat_mutes WHERE game_id = :g AND side = :s"), {"g": game_id, "s": side})
            if muted:
                conn.execute(mutes_table.insert().values(game_id=game_id, side=side, at=now))

    def site_muted(self, account: int | None) -> bool:
        """Whether an admin muted this account everywhere (an anonymous player: never)."""
        if account is None:
            return False
        with self.storage.reader.connect() as conn:
            row = conn.execute(text("SELECT 1 FROM chat_site_mutes WHERE account = :a"), {"a": account}).first()
        return row is not None

    def set_site_mute(self, account: int, muted: bool, now: float | None = None) -> bool:
        """Mute an account everywhere (or unmute it); whether that changed anything."""
        with self.storage.engine.begin() as conn:
            had = conn.execute(text("SELECT 1 FROM chat_site_mutes WHERE account = :a"), {"a": account}).first()
            if muted and had is None:
                conn.execute(site_mutes_table.insert().values(account=account, at=now or time.time()))
            elif not muted and had is not None:
                conn.execute(text("DELETE FROM chat_site_mutes WHERE account = :a"), {"a": account})
        return (had is None) == muted

    def message(self, message_id: int) -> ChatMessage | None:
        """One message by its id."""
        cols = "id, game_id, seq, room, ply, at, side, account, author, text"
        with self.storage.reader.connect() as conn:
            row = conn.execute(text(f"SELECT {cols} FROM chat_messages WHERE id = :i"), {"i": message_id}).first()
        return None if row is None else _message(row)

    def report(self, message: ChatMessage, reporter: str, reason: str | None, now: float) -> bool:
        """Store a report of ``message`` by ``reporter``; False when that reporter had reported it already."""
        with self.storage.engine.begin() as conn:
            seen = conn.execute(
                text("SELECT 1 FROM chat_reports WHERE message_id = :m AND reporter = :r"),
                {"m": message.id, "r": reporter},
            ).first()
            if seen is not None:
                return False
            conn.execute(
                reports_table.insert().values(
                    message_id=message.id, game_id=message.game_id, at=now, reporter=reporter[:80], reason=reason
                )
            )
        return True

    def reports(self, limit: int = 200) -> list[dict[str, Any]]:
        """The latest reports, newest first, each with the message reported."""
        with self.storage.reader.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT r.id, r.at, r.reporter, r.reason, m.id AS message_id, m.game_id, m.room, m.author, "
                    "m.account, m.text, m.at AS written FROM chat_reports r "
                    "JOIN chat_messages m ON m.id = r.message_id ORDER BY r.id DESC LIMIT :n"
                ),
                {"n": limit},
            ).all()
        return [dict(r._mapping) for r in rows]


def readable(msg: ChatMessage, seats: frozenset[str], over: bool, mutes: set[str]) -> bool:
    """Whether a reader holding ``seats`` (none: a spectator) may read ``msg`` now."""
    if msg.room == "players":
        if not seats:
            return over  # the players' chat is theirs while they play; the game's record afterwards
        muted = any(s in mutes for s in seats) and msg.side is not None and msg.side not in seats
        return not muted
    return not seats or over  # spectators' chat: the players only once the game is over


class Chat:
    """The chat of the games of one process: its WebSocket messages, HTTP routes and fan-out."""

    def __init__(
        self,
        store: ChatStore,
        service: GameService,
        policy: ChatPolicy | None = None,
        *,
        account_name: Callable[[int], str | None] | None = None,
    ) -> None:
        self.store = store
        self.service = service
        self.policy = policy or ChatPolicy()
        # read when needed: create_app sets the service's account names after building it
        self.account_name = account_name or (lambda account: service.account_name(account))
        self.transport: Any = None  # set by install()
        self.sent: dict[str, int] = {}  # game -> the last seq sent to this process's clients
        self._dirty: set[str] = set()
        self._draining: asyncio.Task[None] | None = None

    def install(self, transport: Any) -> None:
        """Add the chat's message kinds to the transport's table and hear the chat's announcements."""
        self.transport = transport
        table = transport.messages
        table.add("chat", self._chat)
        table.add("chat_history", self._history)
        table.add("chat_mute", self._mute)
        table.add("chat_report", self._report)
        transport.version_hooks[CHAT_CHANGED] = self.changed

    # -- the WebSocket's messages ------------------------------------------------------------
    async def _online_room(self, m: Incoming) -> Room:
        room: Room = await self.service.off_loop_read(self.service.room, m.game_id)
        if room.rec.mode != "online":
            raise ClientError("not_online", "chat is only in online games")
        return room

    async def _chat(self, m: Incoming) -> None:
        body = clean_text(m.msg.get("text"), self.policy.max_chars)
        room = await self._online_room(m)
        over = self.service.status(room) == "over"
        seats = m.seats
        wanted = m.msg.get("room", "players" if seats else "spectators")
        if wanted not in ROOMS:
            raise ClientError("bad_message", "'room' must be 'players' or 'spectators'")
        rec = room.rec
        side: str | None = None
        if seats:
            side = next(iter(seats))
            seat_account = getattr(rec, f"{side}_account")
            # the site-wide mute holds for the seat's account, else for the browser's own session
            account = seat_account or m.conn.account
            if wanted == "spectators" and not over:
                raise ClientError(
                    "spectator_chat", "the spectators' chat opens to the players once the game is over", 403
                )
            # the name the page shows for the seat: its account's username, else the chosen name
            author = (self.account_name(seat_account) if seat_account is not None else None) or rec.meta.get(
                "names", {}
            ).get(side)
            author = author or SIDE_NAMES[side]
        else:
            if wanted == "players":
                raise ClientError("not_a_player", "spectators cannot write in the players' chat", 403)
            account = m.conn.account
            if account is None:
                raise ClientError("login_required", "log in to write in the spectators' chat", 403)
            author = self.account_name(account) or "?"
        if await self.service.off_loop_read(self.store.site_muted, account):
            raise ClientError("chat_muted", "an admin muted your chat on this site", 403)
        message = await self.service.off_loop(
            lambda: self.store.post(
                m.game_id,
                wanted,
                side=side,
                account=account,
                author=author,
                address=m.conn.address,
                body=body,
                ply=len(rec.moves),
                now=self.service.now(),
                policy=self.policy,
            )
        )
        self.service.broker.publish(m.game_id, CHAT_CHANGED)  # this process (others: the NOTIFY)
        m.transport.send(m.conn, {"type": "chat_sent", "id": message.id, "ref": m.ref})

    async def _history(self, m: Incoming) -> None:
        room = await self.service.off_loop_read(self.service.room, m.game_id)
        over = self.service.status(room) == "over"
        if room.rec.mode != "online":
            m.transport.send(m.conn, {"type": "chat_history", "messages": [], "muted": False, "enabled": False})
            return

        def read() -> tuple[list[ChatMessage], set[str]]:
            return self.store.messages(m.game_id, latest=self.policy.history), self.store.mutes(m.game_id)

        messages, mutes = await self.service.off_loop_read(read)
        shown = [x.as_json() for x in messages if readable(x, m.seats, over, mutes)]
        muted = any(s in mutes for s in m.seats)
        m.transport.send(m.conn, {"type": "chat_history", "messages": shown, "muted": muted, "enabled": True})

    async def _mute(self, m: Incoming) -> None:
        mute = m.msg.get("mute")
        if not isinstance(mute, bool):
            raise ClientError("bad_message", "chat_mute needs 'mute': true or false")
        if len(m.seats) != 1:
            raise ClientError("not_a_player", "only a player can mute the opponent's chat", 403)
        await self._online_room(m)
        side = next(iter(m.seats))
        await self.service.off_loop(self.store.set_mute, m.game_id, side, mute, self.service.now())
        m.transport.send(m.conn, {"type": "chat_mute", "mute": mute, "ref": m.ref})
        await self._history(m)  # the chat as this player now reads it

    async def _report(self, m: Incoming) -> None:
        message_id = m.msg.get("id")
        if not isinstance(message_id, int) or isinstance(message_id, bool):
            raise ClientError("bad_message", "chat_report needs 'id': the number of the message")
        reason = m.msg.get("reason")
        if reason is not None:
            reason = clean_text(reason, self.policy.max_chars)
        room = await self._online_room(m)
        found = await self.service.off_loop_read(self.store.message, message_id)
        over = self.service.status(room) == "over"
        # one can report what one may read, in this game (a report names no other game's message)
        if found is None or found.game_id != m.game_id or not readable(found, m.seats, over, set()):
            raise ClientError("unknown_message", f"there is no chat message {message_id} that you can read here", 404)
        if m.conn.account is not None:
            reporter = f"account:{m.conn.account}"
        elif m.seats:
            reporter = f"seat:{next(iter(m.seats))}"
        else:
            reporter = f"address:{m.conn.address}"
        await self.service.off_loop(self.store.report, found, reporter, reason, self.service.now())
        m.transport.send(m.conn, {"type": "chat_reported", "id": message_id, "ref": m.ref})

    # -- fan-out ---------------------------------------------------------------------------
    def changed(self, game_id: str) -> None:
        """A message was posted in ``game_id`` (here or on another process): send what is new to this
        process's clients of the game (read off the event loop, one game after the other)."""
        if not self.transport or not self.transport.conns.get(game_id):
            self.sent.pop(game_id, None)
            return
        self._dirty.add(game_id)
        if self._draining is None:
            self._draining = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        try:
            while self._dirty:
                game_id = self._dirty.pop()
                try:
                    await self._deliver(game_id)
                except Exception:  # noqa: BLE001 - the next message or a reconnect catches up
                    log.exception("could not send the chat of game %s", game_id)
        finally:
            self._draining = None

    async def _deliver(self, game_id: str) -> None:
        after = self.sent.get(game_id)

        def read() -> tuple[list[ChatMessage], set[str], Room]:
            # a game first heard of here: its latest messages (pages drop the ones they have)
            new = self.store.messages(game_id, after or 0, latest=None if after is not None else 20)
            return new, self.store.mutes(game_id), self.service.room(game_id)

        new, mutes, room = await self.service.off_loop_read(read)
        if not new:
            return
        self.sent[game_id] = max(self.sent.get(game_id, 0), new[-1].seq)
        over = self.service.status(room) == "over"
        conns: set[Conn] = self.transport.conns.get(game_id, set())
        for conn in list(conns):
            for msg in new:
                if after is not None and msg.seq <= after:
                    continue
                if readable(msg, conn.seats, over, mutes):
                    conn.put(json.dumps(msg.as_json()), "chat", self.transport.limits)

    # -- HTTP ------------------------------------------------------------------------------
    def routes(self, accounts: Any) -> list[Any]:
        """``GET /api/games/{id}/chat`` (what a spectator may read: the replay's chat) and
        ``GET /api/admin/chat/reports`` (admins)."""
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def public(request: Request) -> Response:
            game_id = request.path_params["id"]
            room = await self.service.off_loop_read(self.service.room, game_id)  # unknown_game: 404
            over = self.service.status(room) == "over"
            if room.rec.mode != "online":
                return JSONResponse({"messages": [], "over": over, "enabled": False})
            messages = await self.service.off_loop_read(self.store.messages, game_id, 0, PUBLIC_LATEST)
            shown = [m.as_json() for m in messages if readable(m, frozenset(), over, set())]
            return JSONResponse({"messages": shown, "over": over, "enabled": True})

        async def reports(request: Request) -> Response:
            sess = accounts.session_of(request)
            if sess is None or not sess.account.admin:
                raise ClientError("not_admin", "only an admin may read the chat reports", 403)
            rows = await self.service.off_loop_read(self.store.reports)
            return JSONResponse({"reports": rows})

        return [
            Route("/api/games/{id}/chat", public),
            Route("/api/admin/chat/reports", reports),
        ]
