"""The game WebSocket's message kinds: one table, ``type`` -> handler (docs/web.md, "Design").

The transport (:mod:`jericho_game.web.server`) checks a message's size, rate and JSON, then
hands it to :meth:`MessageTable.dispatch`, which looks its ``"type"`` up here; a type that is not
in the table is refused with ``bad_message`` naming the known types.  A feature with messages of
its own adds them with :meth:`MessageTable.add` (one line where the app is put together) rather
than another branch in the transport.

A handler gets one :class:`Incoming` (the transport, the game, the connection, the message and
its ``ref``), turns it into calls of the game-room service and answers through the transport;
a refusal is a :class:`~jericho_game.web.round.rooms.ClientError`, which the transport turns into an
``error`` message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from jericho_game.web.common.conn import Conn
from jericho_game.web.round import endings
from jericho_game.web.round.rooms import Change, ClientError, GameService

__all__ = ["Incoming", "Handler", "MessageTable", "GameTransport", "game_messages"]


class GameTransport(Protocol):
    """What a handler may use of the transport (web/server.py's ``Transport``)."""

    service: GameService

    def send(self, conn: Conn, msg: dict[str, Any]) -> None:
        """Queue one message for one client."""

    def after(self, change: Change, conn: Conn | None = None, ref: Any = None) -> None:
        """A committed change: the ``ack``, then the state to everyone, then other processes."""

    def _done(self, change: Change, conn: Conn, ref: Any) -> None:
        """:meth:`after`, then the change's own refusal if it carries one (a flag fell first)."""

    def sync(self, game_id: str, conn: Conn) -> None:
        """Queue the last state, whole, for ``conn`` (protocol 2: it missed a delta)."""

    async def _hello(self, game_id: str, conn: Conn, msg: dict[str, Any]) -> None:
        """Take the seats a ``hello`` asks for and answer with ``welcome`` and the state."""


@dataclass(frozen=True)
class Incoming:
    """One message from a client of a game, with what a handler needs to answer it."""

    transport: GameTransport
    game_id: str
    conn: Conn
    msg: dict[str, Any]
    ref: Any  # echoed in the answer (``ack``, ``error``): a string or an integer, else None

    @property
    def service(self) -> GameService:
        """The game-room service (the one place that decides)."""
        return self.transport.service

    @property
    def seats(self) -> frozenset[str]:
        """The seats the connection holds (none: a spectator)."""
        return self.conn.seats

    def done(self, change: Change) -> None:
        """Acknowledge and broadcast a committed change (and raise its refusal, if any)."""
        self.transport._done(change, self.conn, self.ref)


Handler = Callable[[Incoming], Awaitable[None]]


class MessageTable:
    """Message kinds and their handlers, in the order the refusal of an unknown kind lists them."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def add(self, kind: str, handler: Handler) -> None:
        """Handle messages of type ``kind`` with ``handler``; a kind is handled by one handler only."""
        if kind in self._handlers:
            raise ValueError(f"the message type {kind!r} already has a handler")
        self._handlers[kind] = handler

    def kinds(self) -> list[str]:
        """The message types handled, in the order they were added."""
        return list(self._handlers)

    def __contains__(self, kind: object) -> bool:
        return isinstance(kind, str) and kind in self._handlers

    async def dispatch(self, incoming: Incoming) -> None:
        """Run the handler of the message's ``type``; ``bad_message`` when there is none."""
        kind = incoming.msg.get("type")
        handler = self._handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            known = ", ".join(self._handlers)
            raise ClientError("bad_message", f"unknown message type {str(kind)[:40]!r}: use {known}")
        await handler(incoming)


# -- the game's own kinds ----------------------------------------------------------------------


async def _sync(m: Incoming) -> None:
    # issue 57: a client of protocol 2 missed a delta: the whole state again, to it alone
    m.transport.sync(m.game_id, m.conn)


async def _ping(m: Incoming) -> None:
    m.transport.send(m.conn, {"type": "pong", "ref": m.msg.get("ref")})


async def _hello(m: Incoming) -> None:
    await m.transport._hello(m.game_id, m.conn, m.msg)


async def _move(m: Incoming) -> None:
    t, conn, ref = m.transport, m.conn, m.ref
    change = await m.service.move(
        m.game_id, m.seats, m.msg.get("move"), m.msg.get("ply"), on_commit=lambda ch: t.after(ch, conn, ref)
    )
    if change.error is not None:
        raise change.error


async def _undo(m: Incoming) -> None:
    m.done(await m.service.grouped("undo", m.game_id, m.seats))


async def _resign(m: Incoming) -> None:
    m.done(await m.service.grouped("resign", m.game_id, m.seats))


async def _rematch(m: Incoming) -> None:
    change = await m.service.grouped("rematch", m.game_id, m.seats)
    m.transport.send(m.conn, {"type": "rematch", "id": change.rematch_id})
    m.done(change)


# fair endings (web/round/endings.py), off the event loop as undo and resign


async def _offer(m: Incoming) -> None:
    svc = m.service
    m.done(await svc.off_loop(endings.offer, svc, m.game_id, m.seats, m.msg.get("what")))


async def _answer(m: Incoming) -> None:
    svc, accept = m.service, m.msg.get("type") == "accept"
    m.done(await svc.off_loop(endings.answer, svc, m.game_id, m.seats, m.msg.get("what"), accept))


async def _claim(m: Incoming) -> None:
    svc = m.service
    m.done(await svc.off_loop(endings.claim, svc, m.game_id, m.seats, m.msg.get("what")))


async def _abort(m: Incoming) -> None:
    svc = m.service
    m.done(await svc.off_loop(endings.abort, svc, m.game_id, m.seats))


def game_messages() -> MessageTable:
    """The table of a game's own message kinds (features add theirs with :meth:`MessageTable.add`)."""
    table = MessageTable()
    for kind, handler in (
        ("hello", _hello),
        ("move", _move),
        ("undo", _undo),
        ("resign", _resign),
        ("rematch", _rematch),
        ("offer", _offer),
        ("accept", _answer),
        ("decline", _answer),
        ("claim", _claim),
        ("abort", _abort),
        ("ping", _ping),
        ("sync", _sync),
    ):
        table.add(kind, handler)
    return table
