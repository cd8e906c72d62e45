"""Chat in online games: the players' chat and the spectators' chat (docs/web.md, "Chat").

Per game there are two rooms:

- ``players``: the two seated players write to each other; while the game is played only they
  read it; once it is over it is part of the game's record (the replay shows it to everyone).
- ``spectators``: the watchers (logged-in accounts) write to each other; while the game is played
  the players neither read nor write it, so no spectator ever writes to the players during a
  game; once it is over the players may read and write it too.

A message is at most :attr:`ChatPolicy.max_chars` characters of visible text on one line (NFC;
control characters, line separators and runs of combining marks refused: :func:`clean_text`).
How much an author may write is the ``chat.message`` budget of the one policy (issue 51,
:mod:`jericho_game.web.common.budget`): per author in one game (its "pair": a seat, or a watcher's
account), per account in all games together, and per address for anonymous authors (a logged-in
author is its own group, so people behind one NAT or proxy never share a budget), counted in the
ledger in the message's own transaction (so across every server process).  Why a ledger row per
message rather than counting ``chat_messages`` (a ``live`` count): a live budget has no window of
its own, and the chat's is 10 seconds, so the window would have had a second home; and why not a
per-process token bucket per connection: two tabs on two processes would each get the whole
budget.  Reports ask ``chat.report`` the same way.  A player may mute the
opponent's chat in one game, for themselves (``chat_mute``): the opponent is then hidden from
that player everywhere in the game (both rooms, live, in history, in the replay's chat).  Players
and logged-in watchers may report a message (``chat_report``, limited per reporter and per
address by ``chat.report``: stored for the admins, who page through the open reports grouped by message, ``GET
/api/admin/chat/reports``); an admin mutes an account site-wide with ``jericho user mute NAME``
(``unmute``).

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

from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table, Text, UniqueConstraint, inspect, text
from sqlalchemy.engine import Connection

from jericho_game.web.common.budget import BudgetPolicy, OverBudget, Who, free
from jericho_game.web.round.gameroom import SIDE_NAMES, ClientError, Room
from jericho_game.web.round.messages import Incoming
from jericho_game.web.storage.database import GAMES_CHANNEL, Storage

if TYPE_CHECKING:
    from jericho_game.web.common.conn import Conn
    from jericho_game.web.round.rooms import GameService

__all__ = [
    "CHAT_CHANGED",
    "Hidden",
    "MAX_MARKS",
    "hidden_for",
    "readable",
    "ROOMS",
    "TOURNAMENT_ROOM",
    "ChatPolicy",
    "ChatMessage",
    "ChatStore",
    "Chat",
    "clean_text",
    "invisible",
]

log = logging.getLogger("jericho_game.web")

#: The broker's version number for "a chat message was posted in this game" (-1 AI queue,
#: -2 review, -3 presence).
CHAT_CHANGED = -4
ROOMS = ("players", "spectators")
#: The room of a tournament's chat (web/tournaments/chat.py): its messages are keyed ``t:ID``.
TOURNAMENT_ROOM = "tournament"
PUBLIC_LATEST = 2000  # messages of a game that GET /api/games/{id}/chat returns at most (the latest)


@dataclass(frozen=True)
class ChatPolicy:
    """The chat's sizes; how much one may write or report are budgets (``chat.message``,
    ``chat.report``: web/common/budget.py)."""

    max_chars: int = 500  # characters of one message
    history: int = 200  # the latest messages sent to a page that (re)connects
    reports_page: int = 50  # reported messages per page of the admins' list (at most 200)


_metadata = MetaData()

chat_table = Table(
    "chat_messages",
    _metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", String(32), nullable=False),
    Column("seq", Integer, nullable=False),  # 1, 2, ... per game, in commit order (the game's row lock)
    Column("room", String(12), nullable=False),  # "players", "spectators" or "tournament" (game_id "t:ID")
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
    Column("reporter", String(80), nullable=False),  # "account:7" or "seat:south" (an anonymous player)
    Column("reason", Text, nullable=True),
    Column("address", String(64), nullable=True),  # the reporter's address (the per-address limit)
    Column("closed_at", Float, nullable=True),  # an admin dealt with it (None: open)
    UniqueConstraint("message_id", "reporter", name="chat_reports_once"),
)
# Indexes that tables made by older versions lack too: ChatStore creates them where missing.
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS chat_messages_account_at ON chat_messages (account, at)",
    "CREATE INDEX IF NOT EXISTS chat_messages_address_at ON chat_messages (address, at)",
    "CREATE INDEX IF NOT EXISTS chat_reports_reporter_at ON chat_reports (reporter, at)",
    "CREATE INDEX IF NOT EXISTS chat_reports_address_at ON chat_reports (address, at)",
    "CREATE INDEX IF NOT EXISTS chat_reports_open ON chat_reports (closed_at, message_id)",
)
_LOCK = text("SELECT pg_advisory_xact_lock(hashtext(:k))")

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


# Characters that show nothing by themselves (Unicode's Default_Ignorable_Code_Point, the Hangul
# fillers among them, and the blank braille pattern): a message made of these and spaces alone is
# blank (the audit posted U+3164 HANGUL FILLER).
_INVISIBLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_JOINERS = "\u200c\u200d"  # zero-width non-joiner and joiner: needed by emoji sequences and some scripts
MAX_MARKS = 4  # combining marks in a row (Vietnamese needs 2, Indic and Tibetan stacks 3 or 4)


def invisible(ch: str) -> bool:
    """Whether ``ch`` shows nothing by itself (a space, a format or default-ignorable character)."""
    cp = ord(ch)
    return ch.isspace() or unicodedata.category(ch) in ("Zs", "Cf") or any(a <= cp <= b for a, b in _INVISIBLE_RANGES)


def _refuse_text(what: str) -> ClientError:
    return ClientError("chat_text", f"a chat message is plain text on one line: {what}; nothing was sent")


def clean_text(raw: Any, max_chars: int) -> str:
    """A message's text as stored: NFC, one line, trimmed, with invisible format characters dropped
    (bidi overrides, zero-width spaces; the joiners ZWJ/ZWNJ kept).  Refused, saying why (issue 33):
    ``bad_message`` when blank or made only of invisible characters (U+3164 HANGUL FILLER, zero-width
    characters, ...), ``chat_text`` for a control character or a line or paragraph separator
    (U+2028, U+2029, a line break) or more than :data:`MAX_MARKS` combining marks in a row (the
    "Zalgo" text lichess refuses too), ``chat_too_long`` over the cap."""
    if not isinstance(raw, str):
        raise ClientError("bad_message", "a chat message needs 'text': the words to send")
    if len(raw) > 4 * max_chars:  # far over: refuse before normalizing a long string
        raise ClientError("chat_too_long", f"a chat message is at most {max_chars} characters")
    norm = unicodedata.normalize("NFC", raw)
    kept = []
    run = 0
    for ch in norm:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Zl", "Zp"):
            name = unicodedata.name(ch, "a control character")
            raise _refuse_text(f"U+{ord(ch):04X} ({name}) is not allowed")
        if cat == "Cs":  # a lone surrogate (JSON allows "\\ud800"): no character at all
            raise _refuse_text(f"U+{ord(ch):04X} is half of a character")
        if cat == "Cf" and ch not in _JOINERS:
            continue  # invisible formatting (bidi overrides, zero-width space, ...): dropped
        run = run + 1 if cat in ("Mn", "Me") else 0
        if run > MAX_MARKS:
            raise _refuse_text(f"at most {MAX_MARKS} combining marks in a row")
        kept.append(ch)
    out = "".join(kept).strip()
    if not out or all(invisible(ch) or unicodedata.category(ch).startswith("M") for ch in out):
        raise ClientError("bad_message", "a chat message needs 'text': visible words to send, not only blank space")
    if len(out) > max_chars:
        raise ClientError("chat_too_long", f"a chat message is at most {max_chars} characters, this one has {len(out)}")
    return out


def _too_many(exc: OverBudget, window: float) -> str:
    """The chat's own words for a refusal by its budgets (``window``: the budget's, in seconds)."""
    if exc.kind == "chat.message" and exc.scope in ("pair", "account", "group"):
        whose = {"pair": "", "account": " from your account", "group": " from your address"}[exc.scope]
        where = "" if exc.scope == "pair" else " in all games together"
        return f"too many chat messages{whose}: at most {exc.limit:g} in {window:g} seconds{where}; wait a moment"
    if exc.kind == "chat.report" and exc.scope in ("pair", "account", "group"):
        hours = f"{window / 3600:g} hour" + ("s" if window != 3600 else "")
        if exc.scope == "group":
            return (
                f"{exc.have:g} reports came from your address in the last {hours}, the most there may be: "
                "wait; nothing was sent"
            )
        return f"you have sent {exc.have:g} reports in the last {hours}, the most there may be: wait; nothing was sent"
    return exc.message


class ChatStore:
    """The chat tables in the game database (SQL only); :class:`Storage` lends its engines."""

    def __init__(self, storage: Storage, budget: BudgetPolicy | None = None) -> None:
        self.storage = storage
        self.postgres = storage.postgres
        self._budget = budget  # the one budget policy (Chat gives it its own; else one of the store's)
        storage.create_tables(_metadata)
        try:
            self._migrate()
        except Exception:  # noqa: BLE001 - another process migrated at the same moment: look again
            time.sleep(0.2)
            self._migrate()

    def _migrate(self) -> None:
        """Add what databases written by older versions lack (issue 33: the reports' address and state)."""
        have = {c["name"] for c in inspect(self.storage.engine).get_columns("chat_reports")}
        with self.storage.engine.begin() as conn:
            if "address" not in have:
                conn.exec_driver_sql("ALTER TABLE chat_reports ADD COLUMN address VARCHAR(64)")
            if "closed_at" not in have:
                conn.exec_driver_sql("ALTER TABLE chat_reports ADD COLUMN closed_at FLOAT")
            for sql in _INDEXES:
                conn.exec_driver_sql(sql)

    @property
    def budget(self) -> BudgetPolicy:
        """The budget policy the chat's messages and reports ask (web/common/budget.py)."""
        if self._budget is None:
            self._budget = BudgetPolicy(self.storage)
        return self._budget

    @budget.setter
    def budget(self, policy: BudgetPolicy) -> None:
        self._budget = policy

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
    ) -> ChatMessage:
        """Store a message (numbered after the game's last one, under the game's row lock) and
        announce it in the same transaction; ``rate_limited`` past the ``chat.message`` budget."""
        with self.storage.engine.begin() as conn:
            # the game's row lock orders the game's messages: commit order is seq order, so a
            # reader asking for "after seq N" never misses one committed later with a smaller seq
            # (SQLite: BEGIN IMMEDIATE already serializes every writer)
            if self.postgres and room == TOURNAMENT_ROOM:  # a tournament's room has no game row to lock
                conn.execute(_LOCK, {"k": f"jericho-chat:{game_id}"})
            elif self.postgres:
                conn.execute(text("SELECT id FROM games WHERE id = :g FOR UPDATE"), {"g": game_id})
            # issue 33: one account wrote 75 messages into 15 games in 0.2 s; as lichess's flood
            # guard counts a user's messages in every chat together, the budget counts an author in
            # one game (the pair: the seat, or the watcher, towards the game), an account in all
            # games, and anonymous authors by address.  A logged-in author is a group of its own,
            # so logged-in people behind one NAT or proxy never share a budget.
            who = Who(f"account:{account}", account) if account is not None else Who((address or "")[:64] or "?")
            try:
                self.budget.ask(conn, "chat.message", who, recipient=f"{game_id}/{side}" if side else game_id)
            except OverBudget as exc:
                exc.message = _too_many(exc, self.budget[exc.kind].window or 0.0)
                raise
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
            if self.postgres and room != TOURNAMENT_ROOM:  # a tournament page reads its room itself
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
        if not _storable_id(message_id):
            return None  # no message has it (and the database would refuse the number)
        cols = "id, game_id, seq, room, ply, at, side, account, author, text"
        with self.storage.reader.connect() as conn:
            row = conn.execute(text(f"SELECT {cols} FROM chat_messages WHERE id = :i"), {"i": message_id}).first()
        return None if row is None else _message(row)

    def report(
        self,
        message: ChatMessage,
        reporter: str,
        reason: str | None,
        now: float,
        *,
        address: str | None = None,
    ) -> bool:
        """Store a report of ``message`` by ``reporter`` (``account:N``, or ``seat:SIDE`` for an
        anonymous player of the message's game) from ``address``; False when that reporter had
        reported it already; ``rate_limited`` past the ``chat.report`` budget (issue 33: 300 reports
        from 60 addresses in 3 s): per account, per address, and an anonymous seat's in its game."""
        addr = (address or "")[:64] or None
        account = int(reporter[8:]) if reporter.startswith("account:") else None
        with self.storage.engine.begin() as conn:
            if self.postgres:  # one reporter's reports take turns: the same one twice is one report
                conn.execute(_LOCK, {"k": f"jericho-report-reporter:{reporter}"})
            seen = conn.execute(
                text("SELECT 1 FROM chat_reports WHERE message_id = :m AND reporter = :r"),
                {"m": message.id, "r": reporter},
            ).first()
            if seen is not None:
                return False
            try:
                # an anonymous player's seat is a reporter within its game (the pair); an account everywhere
                game = message.game_id if account is None else None
                self.budget.ask(conn, "chat.report", Who(addr or "?", account), recipient=game)
            except OverBudget as exc:
                exc.message = _too_many(exc, self.budget[exc.kind].window or 0.0)
                raise
            conn.execute(
                reports_table.insert().values(
                    message_id=message.id,
                    game_id=message.game_id,
                    at=now,
                    reporter=reporter[:80],
                    reason=reason,
                    address=addr,
                )
            )
        return True

    def reports(self, page: int = 1, per_page: int = 50) -> dict[str, Any]:
        """The open reports, one entry per reported message (how many reports, by whom, why), the
        longest waiting first, a page at a time: a flood of reports is one entry per message and
        cannot push another report out of reach (issue 33)."""
        per_page = max(1, min(200, per_page))
        page = max(1, page)
        with self.storage.reader.connect() as conn:
            total = conn.execute(
                text(
                    "SELECT COUNT(DISTINCT r.message_id) FROM chat_reports r "
                    "JOIN chat_messages m ON m.id = r.message_id WHERE r.closed_at IS NULL"
                )
            ).scalar_one()
            groups = conn.execute(
                text(
                    "SELECT r.message_id, COUNT(*) AS n, MIN(r.at) AS first_at, MAX(r.at) AS last_at "
                    "FROM chat_reports r JOIN chat_messages m ON m.id = r.message_id WHERE r.closed_at IS NULL "
                    "GROUP BY r.message_id ORDER BY MIN(r.at), r.message_id LIMIT :n OFFSET :o"
                ),
                {"n": per_page, "o": (page - 1) * per_page},
            ).all()
            out = []
            for g in groups:
                msg = conn.execute(
                    text("SELECT id, game_id, room, author, account, text, at, ply FROM chat_messages WHERE id = :i"),
                    {"i": g.message_id},
                ).first()
                if msg is None:
                    continue
                latest = conn.execute(
                    text(
                        "SELECT reporter, reason, at FROM chat_reports WHERE message_id = :m AND closed_at IS NULL "
                        "ORDER BY at, id LIMIT 10"
                    ),
                    {"m": g.message_id},
                ).all()
                out.append(
                    {
                        "message_id": msg.id,
                        "game_id": msg.game_id,
                        "room": msg.room,
                        "author": msg.author,
                        "account": msg.account,
                        "text": msg.text,
                        "written": msg.at,
                        "ply": msg.ply,
                        "reports": int(g.n),
                        "first_at": float(g.first_at),
                        "last_at": float(g.last_at),
                        "reporters": [r.reporter for r in latest],  # the first ten
                        "reasons": [r.reason for r in latest if r.reason],
                    }
                )
        pages = max(1, -(-int(total) // per_page))
        return {"reports": out, "total": int(total), "page": page, "pages": pages, "per_page": per_page}

    def close_reports(self, message_id: int, now: float) -> int:
        """Close the open reports of one message (an admin dealt with it); how many were open."""
        if not _storable_id(message_id):
            return 0  # no message has it (and the database would refuse the number)
        with self.storage.engine.begin() as conn:
            n = conn.execute(
                text("UPDATE chat_reports SET closed_at = :t WHERE message_id = :m AND closed_at IS NULL"),
                {"t": now, "m": message_id},
            ).rowcount
        return int(n or 0)


def _storable_id(value: int) -> bool:
    """Whether a client's number can be a row's id: ids are INTEGER columns, which end at 2**31 - 1 on
    PostgreSQL; past 2**63 SQLite cannot even be handed the number (an OverflowError, a 500: issue 51)."""
    return 1 <= value <= 2**31 - 1


@dataclass(frozen=True)
class Hidden:
    """Whose messages one reader does not see: the opponents they muted (by seat, and by account,
    so a muted opponent's messages are hidden in both rooms, written from the seat or as a watcher)."""

    sides: frozenset[str] = frozenset()
    accounts: frozenset[int] = frozenset()

    def hides(self, msg: ChatMessage) -> bool:
        return msg.side in self.sides or (msg.account is not None and msg.account in self.accounts)


NOBODY = Hidden()


def hidden_for(rec: Any, seats: frozenset[str], account: int | None, mutes: set[str]) -> Hidden:
    """What a reader holding ``seats`` and logged in as ``account`` (None: anonymous) does not see in
    the game ``rec`` whose muting seats are ``mutes`` (issue 33: a mute hides the person everywhere
    for the one who muted: both rooms, live, in history and in the replay's chat)."""
    mine = set(seats) | {s for s in SIDE_NAMES if account is not None and getattr(rec, f"{s}_account", None) == account}
    own_accounts = {getattr(rec, f"{s}_account", None) for s in mine} | {account}
    sides: set[str] = set()
    accounts: set[int] = set()
    for side in mine & mutes:
        other = "north" if side == "south" else "south"
        if other in mine:
            continue  # both seats are this reader's (hot-seat, or one account at both): nobody to hide
        sides.add(other)
        other_account = getattr(rec, f"{other}_account", None)
        if other_account is not None and other_account not in own_accounts:
            accounts.add(other_account)
    return Hidden(frozenset(sides), frozenset(accounts)) if sides else NOBODY


def readable(msg: ChatMessage, seats: frozenset[str], over: bool, hidden: Hidden = NOBODY) -> bool:
    """Whether a reader holding ``seats`` (none: a spectator) may read ``msg`` now, not counting the
    opponents it muted (``hidden``: :func:`hidden_for`)."""
    if hidden.hides(msg):
        return False
    if msg.room == "players":
        return bool(seats) or over  # the players' chat is theirs while they play; the game's record afterwards
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
        budget: BudgetPolicy | None = None,
    ) -> None:
        self.store = store
        self.service = service
        self.policy = policy or ChatPolicy()
        # issue 51: the one budget policy (web/common/budget.py), the room service's by default
        self.budget = budget if budget is not None else service.budget
        store.budget = self.budget
        # read when needed: create_app sets the service's account names after building it
        self.account_name = account_name or (lambda account: service.account_name(account))
        self.transport: Any = None  # set by install()
        self.sent: dict[str, int] = {}  # game -> the last seq sent to this process's clients
        self._dirty: set[str] = set()
        self._draining: asyncio.Task[None] | None = None
        # the accounts each of the given accounts blocked (web/people/people.py sets it): a blocked
        # player cannot write to the blocker in the players' chat, and neither reads the other's
        # lines anywhere (issue 51: :meth:`_apart`)
        self.blocks: Callable[[list[int]], dict[int, set[int]]] = lambda accounts: {}

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
        if side is not None and wanted == "players" and account is not None:
            other = getattr(rec, "north_account" if side == "south" else "south_account")
            if other is not None:
                blocked = await self.service.off_loop_read(self.blocks, [other])
                if account in blocked.get(other, set()):
                    raise ClientError("blocked", "your opponent does not take chat messages from you", 403)
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
        hidden = hidden_for(room.rec, m.seats, m.conn.account, mutes)
        apart = (await self.service.off_loop_read(self._apart, [m.conn.account], messages)).get(m.conn.account, set())
        shown = [x.as_json() for x in messages if readable(x, m.seats, over, hidden) and x.account not in apart]
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
        if m.conn.account is None and not m.seats:
            # issue 33: 60 addresses x 5 anonymous reports flooded the admins' list; as on lichess,
            # reports come from accounts (and here from the players of the game too)
            raise ClientError(
                "login_required", "log in to report a chat message (watchers need an account; players need none)", 403
            )
        reason = m.msg.get("reason")
        if reason is not None:
            reason = clean_text(reason, self.policy.max_chars)
        room = await self._online_room(m)
        found = await self.service.off_loop_read(self.store.message, message_id)
        over = self.service.status(room) == "over"
        # one can report what one may read, in this game (a report names no other game's message)
        if found is None or found.game_id != m.game_id or not readable(found, m.seats, over):
            raise ClientError("unknown_message", f"there is no chat message {message_id} that you can read here", 404)
        reporter = f"account:{m.conn.account}" if m.conn.account is not None else f"seat:{next(iter(m.seats))}"
        await self.service.off_loop(
            lambda: self.store.report(found, reporter, reason, self.service.now(), address=m.conn.address)
        )
        m.transport.send(m.conn, {"type": "chat_reported", "id": message_id, "ref": m.ref})

    def _apart(self, readers: list[int | None], messages: list[ChatMessage]) -> dict[int | None, set[int]]:
        """For each logged-in reader: the authors of ``messages`` it must not read, those it blocked
        and those that blocked it (issue 51: a block keeps both apart in every chat view; blocking)."""
        who = [r for r in readers if r is not None]
        authors = {x.account for x in messages if x.account is not None}
        if not who or not authors:
            return {}
        blocks = self.blocks(sorted(set(who) | authors))
        return {r: {a for a in authors if a in blocks.get(r, ()) or r in blocks.get(a, ())} for r in who}

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

        readers: list[int | None] = [c.account for c in self.transport.conns.get(game_id, set())]

        def read() -> tuple[list[ChatMessage], set[str], Room, dict[int | None, set[int]]]:
            # a game first heard of here: its latest messages (pages drop the ones they have)
            new = self.store.messages(game_id, after or 0, latest=None if after is not None else 20)
            return new, self.store.mutes(game_id), self.service.room(game_id), self._apart(readers, new)

        new, mutes, room, blocks = await self.service.off_loop_read(read)
        if not new:
            return
        self.sent[game_id] = max(self.sent.get(game_id, 0), new[-1].seq)
        over = self.service.status(room) == "over"
        conns: set[Conn] = self.transport.conns.get(game_id, set())
        for conn in list(conns):
            hidden = hidden_for(room.rec, conn.seats, conn.account, mutes)
            for msg in new:
                if after is not None and msg.seq <= after:
                    continue
                if msg.account is not None and msg.account in blocks.get(conn.account, ()):
                    continue  # a block between the reader and its author
                if readable(msg, conn.seats, over, hidden):
                    conn.put(json.dumps(msg.as_json()), "chat", self.transport.limits)

    # -- HTTP ------------------------------------------------------------------------------
    def routes(self, accounts: Any) -> list[Any]:
        """``GET /api/games/{id}/chat`` (what a spectator may read: the replay's chat, without the
        opponent a player muted: the player's session, or their seat's token in ``X-Seat-Token``),
        ``GET /api/admin/chat/reports?page=N`` and ``POST /api/admin/chat/reports/close`` (admins)."""
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        from jericho_game.web.common import jsonin
        from jericho_game.web.round.gameroom import same_secret

        @free("one game's chat, at most PUBLIC_LATEST messages", methods=("GET", "HEAD"))
        async def public(request: Request) -> Response:
            game_id = request.path_params["id"]
            room = await self.service.off_loop_read(self.service.room, game_id)  # unknown_game: 404
            over = self.service.status(room) == "over"
            if room.rec.mode != "online":
                return JSONResponse({"messages": [], "over": over, "enabled": False})
            sess = await self.service.off_loop_read(accounts.session_of, request)
            token = request.headers.get("x-seat-token")
            seats = frozenset(
                s for s in SIDE_NAMES if token and same_secret(token, getattr(room.rec, f"{s}_token", None))
            )

            def read() -> tuple[list[ChatMessage], set[str]]:
                return self.store.messages(game_id, 0, PUBLIC_LATEST), self.store.mutes(game_id)

            messages, mutes = await self.service.off_loop_read(read)
            reader = None if sess is None else sess.account.id
            hidden = hidden_for(room.rec, seats, reader, mutes)
            apart = (await self.service.off_loop_read(self._apart, [reader], messages)).get(reader, set())
            # the replay's chat is what a spectator reads: the seats only say whom this reader muted
            shown = [m.as_json() for m in messages if readable(m, frozenset(), over, hidden) and m.account not in apart]
            personal = hidden is not NOBODY or sess is not None  # a session's view may leave out whom it is apart from
            return JSONResponse(
                {"messages": shown, "over": over, "enabled": True},
                headers={"Cache-Control": "private, no-store"} if personal else {},
            )

        def admin(request: Request, change: bool = False) -> Any:
            sess = accounts.account_for_change(request) if change else accounts.session_of(request)
            if sess is None or not sess.account.admin:
                raise ClientError("not_admin", "only an admin may read the chat reports", 403)
            return sess

        @free("admins only: one page of the reports", methods=("GET", "HEAD"))
        async def reports(request: Request) -> Response:
            await self.service.off_loop_read(admin, request)
            raw = request.query_params.get("page", "1")
            if not raw.isdigit() or not 1 <= int(raw) <= 10**6:
                raise ClientError("bad_request", "page must be a whole number from 1")
            page = await self.service.off_loop_read(self.store.reports, int(raw), self.policy.reports_page)
            return JSONResponse(page, headers={"Cache-Control": "private, no-store"})

        @free("admins only: closes one message's reports", methods=("POST",))
        async def close(request: Request) -> Response:
            await self.service.off_loop_read(admin, request, True)
            body = await jsonin.read_object(request, 1024, ClientError)
            message_id = body.get("message")
            if not isinstance(message_id, int) or isinstance(message_id, bool):
                raise ClientError("bad_request", "send {'message': the number of the reported message}")
            n = await self.service.off_loop(self.store.close_reports, message_id, self.service.now())
            return JSONResponse({"closed": n})

        return [
            Route("/api/games/{id}/chat", public),
            Route("/api/admin/chat/reports", reports),
            Route("/api/admin/chat/reports/close", close, methods=["POST"]),
        ]
