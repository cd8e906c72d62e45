"""The game room's commit pipeline: how a decided change is written, committed, cached and announced.

The path of every change (docs/web.md, "The path of one move"): :meth:`CommitPipeline.write`
(or, for moves and the changes that arrive with them, :meth:`CommitPipeline.write_grouped`)
locks the game's row and hands the room at the stored version to the service's decision; the
decision refuses before writing anything, or calls :meth:`CommitPipeline.commit` with the room
it decided on; the transaction commits; only then is the room cached (:meth:`publish`) and the
change announced (:meth:`announce`: this process now, the others through the broker).

Nothing here decides: the decisions are the game-room service's (:mod:`jericho_game.web.round.rooms`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from jericho_game.game import Game
from jericho_game.web.round import gameroom
from jericho_game.web.round.gameroom import Change, ClientError, Room, RoomService, quota_error
from jericho_game.web.round.roomcache import RoomCache
from jericho_game.web.storage.database import Conflict, GameRecord, QueueFull, QuotaFull, Tx

__all__ = ["CommitPipeline"]

log = logging.getLogger("jericho_game.web")


class CommitPipeline:
    """The write path of ``service``: locked, versioned transactions, group commit, cache, announcement."""

    def __init__(self, service: RoomService, cache: RoomCache) -> None:
        self.svc = service
        self.storage = service.storage
        self.cache = cache
        self._group: list[Any] = []  # (game id, decide, future, on_commit) waiting for the next group
        self._in_flight = False  # a group is being committed on the database thread
        self.committing: set[str] = set()  # the games of that group
        self._db_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jericho-db")
        self._read_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jericho-read")

    async def off_loop(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a synchronous change (create, join, undo, resign, rematch, ...) on the database thread.

        The event loop then never waits for a disk flush, nor for the write lock that this
        process's own group of moves holds while it commits (on SQLite, a change made on the loop
        waited for both: ~30 ms with the loop stopped).  The database thread runs one thing at a
        time, so the change runs between two groups; its cache updates are handed back to the
        event loop and happen before this returns."""
        loop = self.cache.bind()
        return await loop.run_in_executor(self._db_thread, lambda: fn(*args))

    async def off_loop_read(self, fn: Callable[..., Any], *args: Any) -> Any:
        """:meth:`off_loop` for reads (reloading games that other processes changed): on a thread
        of their own, so that they never wait behind a group's commit."""
        loop = self.cache.bind()
        return await loop.run_in_executor(self._read_thread, lambda: fn(*args))

    def commit(
        self,
        tx: Tx,
        room: Room,
        rec: GameRecord,
        game: Game,
        new_moves: list[str] | None = None,
        plies: int | None = None,
    ) -> Room:
        """Write ``rec``/``game`` (the room after the change) in ``tx``: moves, AI job, deadline, version.

        Every refusal comes before the first write (a group of changes relies on it: see
        :meth:`_run_group`)."""
        rec.moves = list(room.rec.moves[: plies if plies is not None else None]) + list(new_moves or [])
        offer = rec.meta.get("offer")
        if offer and (new_moves or plies is not None):
            # a move answers every takeback request and the opponent's draw offer (the offerer's
            # own move leaves a draw offer standing)
            mover = room.game.turn.value
            if offer.get("what") != "draw" or offer.get("by") != mover or plies is not None:
                rec.meta = {k: v for k, v in rec.meta.items() if k != "offer"}
        result, reason = gameroom.outcome(rec, game)
        if result is not None and rec.result is None:
            rec.result, rec.reason, rec.turn_started = result, reason, None
        rec.deadline = self.deadline(rec, game)
        ai_next = rec.mode == "ai" and gameroom.status(rec, game) == "playing" and game.turn.value == rec.ai_side
        if ai_next and self.svc.ai_per_client is not None:
            waiting = tx.client_jobs(rec)
            if waiting >= self.svc.ai_per_client:
                raise quota_error(QuotaFull("ai", waiting, self.svc.ai_per_client), self.svc.budget)
        if ai_next and tx.waiting_jobs() >= self.svc.max_ai_jobs:
            raise ClientError(
                "busy",
                f"the server is busy: {self.svc.max_ai_jobs} AI moves are waiting; nothing was changed, try again soon",
                503,
            )
        if rec.result is not None and room.rec.result is None:  # this change ends the game
            for hook in self.svc.on_finish:
                hook(tx, rec)
        if plies is not None:
            tx.truncate(plies)
        if new_moves:
            tx.append_moves(len(room.rec.moves), new_moves)
        if ai_next:
            tx.put_job(rec, tx.version + 1, rec.ai_level or "random", self.svc.job_lane(tx, room))
        elif rec.mode == "ai":
            tx.drop_job()
        tx.save(rec)
        new = Room(rec, game)
        new.present = room.present
        new.prior = room.rendered or room.prior
        return new

    def deadline(self, rec: GameRecord, game: Game) -> float | None:
        """When the side to move of ``rec`` (after its moves: ``game``) must have moved, stored as
        ``deadline`` for every process's sweep: when its running clock reaches zero, or, in an
        online game whose side to move has not moved yet, when the game is aborted (issue 52)."""
        side = gameroom.clock_side(rec, game)
        if side is not None and rec.turn_started is not None:
            return rec.turn_started + float(getattr(rec, f"{side}_time") or 0.0)
        return self.svc.first_move_due(rec, game)

    def publish(self, room: Room) -> Room:
        """Cache the committed room (the transaction is over)."""
        room.ai_place = self.svc.job_place(room)
        self.cache.keep(room)
        return room

    def announce(self, room: Room) -> None:
        """Tell every listener (this process now, the others through the broker) that the game changed."""
        self.svc.broker.publish(room.rec.id, room.version)
        if self.svc.ai_to_move(room):
            self.svc.broker.job_queued(room.rec.id)

    def write(self, game_id: str, decide: Callable[[Tx, Room], Change]) -> Change:
        """Run ``decide`` on the fresh room inside a locked transaction; cache the result once committed."""
        self.svc.check_id(game_id)
        try:
            with self.storage.write(game_id) as tx:
                change = decide(tx, self.cache.fresh(tx))
                change.committed = tx.saved is not None
        except Exception as exc:  # noqa: BLE001 - translated, or raised as it is
            raise self.refusal(game_id, exc) from None
        self.publish(change.room)
        return change

    def refusal(self, game_id: str, exc: Exception) -> Exception:
        """The error a client hears for ``exc`` raised by a change (the change was rolled back)."""
        if isinstance(exc, KeyError):
            return self.svc.unknown_game(game_id)
        if isinstance(exc, Conflict):
            room = self.svc.room(game_id)
            return ClientError(
                "moved_on", "the game moved on meanwhile: nothing was played", 409, self.svc.public_state(room)
            )
        if isinstance(exc, QueueFull):
            return ClientError("busy", f"the server is busy: {exc}; try again soon", 503)
        if isinstance(exc, QuotaFull):
            return quota_error(exc, self.svc.budget)
        return exc

    async def write_grouped(
        self,
        game_id: str,
        decide: Callable[[Tx, Room], Change],
        on_commit: Callable[[Change], None] | None = None,
    ) -> Change:
        """:meth:`write`, with the changes that arrive together committed together (group commit).

        The changes requested while the previous group was being committed run in one
        transaction, on the database thread (the event loop goes on reading messages while the
        disk flushes), in the order of their games' ids (so two processes' groups always lock rows
        in the same order and never deadlock); the whole group commits once, then every request
        is answered.  A refused change has written nothing (see :meth:`_run_group`); a failed
        commit fails them all (nothing was acknowledged).  ``on_commit`` runs as soon as the change is
        committed, before anything else on the event loop (the mover's ``ack`` goes out before
        any broadcast of the new state)."""
        self.svc.check_id(game_id)
        loop = self.cache.bind()
        fut: asyncio.Future[Change] = loop.create_future()
        self._group.append((game_id, decide, fut, on_commit))
        if len(self._group) == 1 and not self._in_flight:
            loop.call_soon(self._start_group)
        return await fut

    def _start_group(self) -> None:
        if self._in_flight or not self._group:
            return
        group, self._group = self._group, []
        group.sort(key=lambda item: item[0])  # stable: one game's changes keep their order
        self._in_flight = True
        self.committing = {item[0] for item in group}
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._db_thread, self._run_group, [(g, d) for g, d, *_ in group])
        work.add_done_callback(lambda done: self._end_group(group, done))

    def _run_group(self, items: list[tuple[str, Callable[[Tx, Room], Change]]]) -> list[Change | Exception]:
        """The group's transaction (on the database thread): the changes one after the other, one commit.

        A change refused before it wrote anything (every :class:`ClientError` is: see
        :meth:`commit`) is simply left out; anything failing after a write aborts the whole
        group, so a half-made change is never committed (no savepoints: they would cost two round
        trips per change)."""
        outcomes: list[Change | Exception] = []
        with self.storage.batch() as conn:
            latest: dict[str, Room] = {}  # rooms changed earlier in this group
            for game_id, decide in items:
                tx: Tx | None = None
                try:
                    tx = self.storage.lock(conn, game_id)
                    room = latest.get(game_id)
                    if room is None or room.version != tx.version:
                        room = self.cache.fresh(tx)
                    change = decide(tx, room)
                    change.committed = tx.saved is not None
                    latest[game_id] = change.room
                    outcomes.append(change)
                except Exception as exc:  # noqa: BLE001 - this change is refused, the others go on
                    if tx is not None and tx.wrote:
                        raise  # a half-made change: nothing of the group may be committed
                    outcomes.append(exc)
            # the AI's place in the queue, read here rather than on the event loop (and before the
            # commit: once it commits, an AI runner may already be answering)
            for outcome in outcomes:
                if isinstance(outcome, Change):
                    outcome.room.ai_place = self.svc.job_place(outcome.room, conn)
        return outcomes

    def _end_group(self, group: list[Any], done: asyncio.Future[list[Change | Exception]]) -> None:
        """Back on the event loop: cache the committed rooms and answer every request of the group."""
        self._in_flight = False
        self.committing = set()
        try:
            outcomes = done.result()
        except Exception as exc:  # noqa: BLE001 - the commit failed: nothing of the group was stored
            for _, _, fut, _ in group:
                if not fut.done():
                    fut.set_exception(exc)
            outcomes = None
        for i, (game_id, _, fut, on_commit) in enumerate(group if outcomes is not None else []):
            outcome = outcomes[i]  # type: ignore[index]
            if isinstance(outcome, Change):
                self.cache.keep(outcome.room)  # its AI place was read on the database thread
                if on_commit is not None:
                    try:
                        on_commit(outcome)
                    except Exception:  # noqa: BLE001 - the change is stored; its announcement failed
                        log.exception("could not announce a change of game %s", game_id)
                if not fut.done():
                    fut.set_result(outcome)
            elif not fut.done():
                try:
                    fut.set_exception(self.refusal(game_id, outcome))
                except Exception as exc:  # noqa: BLE001 - e.g. the database went away meanwhile
                    fut.set_exception(exc)
        self._start_group()  # the changes that arrived meanwhile

    def close(self) -> None:
        """Stop the database threads: queued work is dropped, the statement running finishes.

        Waited for, so that the storage's pool is disposed with every connection back in it: a
        connection still checked out (e.g. by the clocks' sweep) outlived the pool and was
        closed by the garbage collector, a ResourceWarning in some later test.
        """
        self._db_thread.shutdown(wait=True, cancel_futures=True)
        self._read_thread.shutdown(wait=True, cancel_futures=True)
