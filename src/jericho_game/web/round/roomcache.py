"""The rooms one process has replayed, by game id: a cache that saves replaying moves, never trusted for a decision.

A room is used only when its version equals the stored one (the commit pipeline,
:mod:`jericho_game.web.round.commits`, checks it under the game's row lock); an older copy is reloaded,
or extended by the moves stored since.  The event loop owns the cache: a change committed on the
database thread hands its room back to the loop (:meth:`RoomCache.keep`).  Bounded: the least
recently used rooms without clients go first.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable

from jericho_game.errors import JerichoError
from jericho_game.game import Game
from jericho_game.web.round.gameroom import ClientError, Room
from jericho_game.web.storage.database import GameRecord, Tx

__all__ = ["RoomCache"]


class RoomCache:
    """At most ``max_rooms`` rooms (``busy(game_id)``: a room with clients, never evicted)."""

    def __init__(self, max_rooms: int, busy: Callable[[str], bool] = lambda gid: False) -> None:
        self.rooms: OrderedDict[str, Room] = OrderedDict()
        self.max_rooms = max_rooms
        self.busy = busy
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None

    def get(self, game_id: str) -> Room | None:
        """The cached room, if any (bookkeeping; never a decision)."""
        return self.rooms.get(game_id)

    def touch(self, game_id: str) -> None:
        """Note a use of the room (from the event loop only: the loop owns the order)."""
        if self.on_loop():
            self.rooms.move_to_end(game_id)

    def forget(self, game_id: str) -> None:
        """Drop the room of a game that is gone (from the event loop only)."""
        if self.on_loop():
            self.rooms.pop(game_id, None)

    def build(self, rec: GameRecord) -> Room:
        """A room for ``rec``, reusing the cached game when the stored moves only extend it (no caching:
        safe on the database thread)."""
        old = self.rooms.get(rec.id)
        if (
            old is not None
            and old.rec.start_position == rec.start_position
            and rec.moves[: len(old.rec.moves)] == old.rec.moves
        ):
            game = old.game.copy()
            moves = rec.moves[len(old.rec.moves) :]
        else:
            game = Game.from_position(rec.start_position) if rec.start_position else Game()
            moves = rec.moves
        try:
            for mv in moves:
                game.play(mv)
        except JerichoError as exc:
            raise ClientError("corrupt_game", f"stored game {rec.id!r} cannot be replayed: {exc}", 500) from exc
        room = Room(rec, game)
        if old is not None:
            room.present = old.present
            room.prior = old.rendered or old.prior
        return room

    def fresh(self, tx: Tx) -> Room:
        """The room at the version locked by ``tx``: the cached copy if it is that version, else reloaded
        (not cached: the committed room is, once the transaction is over)."""
        room = self.rooms.get(tx.game_id)
        if room is not None and room.version == tx.version:
            return room
        return self.build(tx.load())

    def bind(self) -> asyncio.AbstractEventLoop:
        """Note the event loop (the cache's owner) we are called on."""
        loop = asyncio.get_running_loop()
        self._loop, self._loop_thread = loop, threading.get_ident()
        return loop

    def on_loop(self) -> bool:
        """Whether this runs on the event loop that owns the cache (or none was noted yet)."""
        return self._loop_thread is None or threading.get_ident() == self._loop_thread

    def keep(self, room: Room) -> None:
        """Cache ``room``; from the database thread (see ``CommitPipeline.off_loop``) the event loop does it."""
        if not self.on_loop():
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self.keep, room)
            return
        old = self.rooms.get(room.rec.id)
        if old is not None and old.version > room.version:
            return  # a newer copy was cached meanwhile
        if old is not None:
            # Who is connected is not part of the committed game: the event loop keeps it on the
            # cached room, and may have re-read it after the database thread copied it into
            # ``room`` (a presence write landing during a commit).  The stale copy, cached, was
            # broadcast for good: a watcher count stuck at 2 with one watcher left (CI, under load).
            room.present = old.present
        self.rooms[room.rec.id] = room
        self.rooms.move_to_end(room.rec.id)
        self.evict()

    def evict(self) -> None:
        """Drop the least recently used rooms without clients while there are too many."""
        while len(self.rooms) > self.max_rooms:
            for gid in self.rooms:
                if not self.busy(gid):
                    del self.rooms[gid]
                    break
            else:
                return
