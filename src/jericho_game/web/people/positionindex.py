"""The index of the positions finished games passed through (issue 51, finding 3): a position search
is a query, not a replay of up to 1,000 games.

Two tables:

- ``game_positions (pkey, game_id)``: one row per distinct position a game passed through, keyed by
  :func:`position_hash` (the first 20 hex digits of the SHA-1 of :func:`position_key`: the board,
  both reserves and the side to move), the primary key ``(pkey, game_id)`` being the search's index;
- ``positions_indexed (game_id, plies)``: the games whose positions are all in ``game_positions``,
  written in the same transaction as their rows (a reader sees a game's rows complete or not at all).

Only games that are over are indexed: their moves never change again.  A game is indexed by
:class:`PositionIndexer`, a thread of each server process that walks the games by ``updated_at``
in bounded rounds: from the oldest at start (the backfill of the games finished before the index
existed, or by a process without an indexer: a ``jericho worker``'s AI move), then the games changed
since its last round (a game that just ended), the last :data:`MARGIN` seconds walked again (a
transaction that committed late).  Moves cost nothing more: a table written on every move would cost
every move of every game a write (issue 57 wants lighter moves).  Every process may index the same
game at the same time: each insertion skips a row already there (``ON CONFLICT DO NOTHING``, the
same text on SQLite and PostgreSQL), so the rows are the same whoever wrote them.

A game not indexed yet (playing, or ended within the last round) is replayed by the search
(:func:`jericho_game.web.people.gamesearch.passes_through`), so the answer never depends on how far
the indexer got: only its cost does.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, text

from jericho_game.errors import JerichoError
from jericho_game.game import Game

__all__ = [
    "MARGIN",
    "PositionIndexer",
    "index_games",
    "position_hash",
    "position_key",
    "positions_of",
]

log = logging.getLogger(__name__)

MARGIN = 60.0  # seconds of games.updated_at walked again each round (a change that committed late)
WALK = 200  # games looked at per round at most (a round of 200 to index: ~0.6 s of one core)
BATCH = 50  # games indexed per write transaction at most (SQLite's write lock is held that long)
EVERY = 5.0  # seconds between two rounds once every game is indexed
REST = 2.0  # while there is work, the rest after a round, as a multiple of its time (a third of one core)

index_metadata = MetaData()
positions_table = Table(
    "game_positions",
    index_metadata,
    Column("pkey", String(20), primary_key=True),
    Column("game_id", String(32), primary_key=True),
)
indexed_table = Table(
    "positions_indexed",
    index_metadata,
    Column("game_id", String(32), primary_key=True),
    Column("plies", Integer, nullable=False),  # the game's moves (the search's "moves" column)
    Column("at", Float, nullable=False),
)

_INSERT_POSITION = text("INSERT INTO game_positions (pkey, game_id) VALUES (:k, :g) ON CONFLICT DO NOTHING")
_INSERT_INDEXED = text(
    "INSERT INTO positions_indexed (game_id, plies, at) VALUES (:g, :plies, :at) ON CONFLICT DO NOTHING"
)
_TRY_TURN = text("SELECT pg_try_advisory_lock(hashtext('jericho-position-index'))")
_END_TURN = text("SELECT pg_advisory_unlock(hashtext('jericho-position-index'))")
# one round's walk: the next games by (updated_at, id), whether each is over and already indexed
_WALK = text(
    "SELECT w.id, w.updated_at, w.over, x.game_id FROM ("
    "SELECT id, updated_at, (CASE WHEN result IS NOT NULL OR reason IS NOT NULL THEN 1 ELSE 0 END) AS over "
    "FROM games WHERE updated_at >= :t AND (updated_at > :t OR id > :id) ORDER BY updated_at, id LIMIT :n"
    ") w LEFT JOIN positions_indexed x ON x.game_id = w.id ORDER BY w.updated_at, w.id"
)


def position_key(position: str) -> str:
    """What the position search compares: the board, both reserves and the side to move (the first four
    fields of the position text, as the engine writes them)."""
    return " ".join(position.split()[:4])


def position_hash(position: str) -> str:
    """The index's key of a position text: 20 hex digits of the SHA-1 of its :func:`position_key`
    (80 bits: two positions share one with a chance of 1 in 10^24, far below a bit flipped in memory)."""
    return hashlib.sha1(position_key(position).encode()).hexdigest()[:20]


def positions_of(start: str | None, moves: list[str]) -> set[str]:
    """The :func:`position_hash` of every position the game of ``start`` and ``moves`` passed through:
    the start and the position after each move, up to a stored move the engine refuses (as the
    replaying search stops there).  A start the engine cannot read gives none."""
    try:
        game = Game.from_position(start) if start else Game()
    except (JerichoError, ValueError):
        return set()
    keys = {position_hash(game.position())}
    for move in moves:
        try:
            game.play(move)
        except (JerichoError, ValueError):
            break
        keys.add(position_hash(game.position()))
    return keys


def _chunks(ids: list[str], size: int = 500) -> Iterable[tuple[str, dict[str, str]]]:
    for i in range(0, len(ids), size):
        chunk = ids[i : i + size]
        yield ", ".join(f":g{k}" for k in range(len(chunk))), {f"g{k}": g for k, g in enumerate(chunk)}


def index_games(storage: Any, game_ids: list[str]) -> int:
    """Index the games ``game_ids`` that are over and not indexed yet, :data:`BATCH` per transaction:
    read and replayed outside it, then one insertion of their rows and marks.  How many it indexed."""
    done = 0
    for i in range(0, len(game_ids), BATCH):
        chunk = game_ids[i : i + BATCH]
        starts: dict[str, str | None] = {}
        moves: dict[str, list[str]] = {}
        with storage.reader.connect() as conn:
            for names, params in _chunks(chunk):
                sql = (
                    f"SELECT g.id, g.start_position FROM games g LEFT JOIN positions_indexed x ON x.game_id = g.id "
                    f"WHERE g.id IN ({names}) AND (g.result IS NOT NULL OR g.reason IS NOT NULL) "
                    "AND x.game_id IS NULL"
                )
                for gid, start in conn.execute(text(sql), params):
                    starts[gid], moves[gid] = start, []
            for names, params in _chunks(list(starts)):
                sql = f"SELECT game_id, move FROM moves WHERE game_id IN ({names}) ORDER BY game_id, ply"
                for gid, move in conn.execute(text(sql), params):
                    moves[gid].append(move)
        if not starts:
            continue
        rows = [{"k": k, "g": gid} for gid in starts for k in sorted(positions_of(starts[gid], moves[gid]))]
        marks = [{"g": gid, "plies": len(moves[gid]), "at": time.time()} for gid in starts]
        with storage.engine.begin() as conn:
            if rows:
                conn.execute(_INSERT_POSITION, rows)
            conn.execute(_INSERT_INDEXED, marks)
        done += len(marks)
    return done


class PositionIndexer:
    """Indexes the games that are over (:func:`index_games`), walking ``games`` by ``updated_at`` in
    rounds of at most :data:`WALK` games, on a thread of its own (:meth:`start`, :meth:`stop`).

    While there is work (the backfill at start), it rests :data:`REST` times as long as each round
    took, so it takes at most a third of one core (the moves and pages keep the rest); once caught up,
    a round every :data:`EVERY` seconds."""

    def __init__(self, storage: Any, every: float = EVERY) -> None:
        self.storage = storage
        self.every = every
        self.cursor: tuple[float, str] = (0.0, "")  # the last game walked: (updated_at, id)
        self.caught_up = False  # every game changed before the last round's start was walked
        self.indexed = 0  # games indexed by this process
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        storage.create_tables(index_metadata)

    @contextmanager
    def _turn(self) -> Iterator[bool]:
        """Whether this process may index now: on PostgreSQL one process at a time (a session's
        advisory lock, tried, not waited for), so that the servers of one database do not each replay
        the same games; on SQLite always."""
        if not self.storage.postgres:
            yield True
            return
        with self.storage.engine.connect() as conn:
            mine = bool(conn.execute(_TRY_TURN).scalar())
            conn.commit()
            try:
                yield mine
            finally:
                if mine:
                    conn.execute(_END_TURN)
                    conn.commit()

    def round(self) -> bool:
        """One round: walk the next games, index those over and not indexed; whether more games are
        left to walk now (False: caught up, the next round walks the last :data:`MARGIN` s again; or
        another process's turn on PostgreSQL: this one tries again later, from where it was)."""
        with self._turn() as mine:
            return self._round() if mine else False

    def _round(self) -> bool:
        began = time.time()
        with self.storage.reader.connect() as conn:
            walked = conn.execute(_WALK, {"t": self.cursor[0], "id": self.cursor[1], "n": WALK}).all()
        todo = [str(gid) for gid, _at, over, indexed in walked if over and indexed is None]
        if todo:
            self.indexed += index_games(self.storage, todo)
        if walked:
            self.cursor = (float(walked[-1][1]), str(walked[-1][0]))
        if len(walked) < WALK:
            self.caught_up = True
            self.cursor = min(self.cursor, (began - MARGIN, ""))
            return False
        return True

    def run(self) -> None:
        """Rounds until :meth:`stop` (a failed round, e.g. the database away, is tried again later).

        The first waits up to one second: the processes of ``--workers N`` on one SQLite file,
        started together, would otherwise walk the same games side by side and each replay them (the
        rows are the same; the work is not); one ahead of the others leaves them games already
        indexed, which they skip.  On PostgreSQL they take turns (:meth:`_turn`)."""
        self._stop.wait(random.uniform(0.0, 1.0))
        while not self._stop.is_set():
            t0 = time.perf_counter()
            more = False
            try:
                more = self.round()
            except Exception:  # noqa: BLE001 - the database is away: the next round tries again
                log.exception("could not index game positions")
            self._stop.wait(max(0.05, REST * (time.perf_counter() - t0)) if more else self.every)

    def start(self) -> None:
        """Run the rounds on a thread of their own (not the shared pool: a search or a move never waits for it)."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self.run, name="position-index", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the thread, its round finished first (its connection back in the pool)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
