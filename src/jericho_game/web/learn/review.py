"""Game review: the AI workers evaluate every position of a finished game; everyone sees the result.

The parts, in the web app's design (docs/web.md, "Game review"):

- :class:`ReviewStore` — SQL only, two tables beside the games: ``reviews`` (one row per game:
  the primary key makes a review queued once, whichever process is asked, however often) and
  ``review_positions`` (one row per evaluated position, primary key ``(game_id, ply)``).
- :class:`ReviewJobs` — the review's *job kind* for the AI queue (:class:`jericho_game.web.airunner.aiqueue.AIRunner`,
  so both the server's local pool and ``jericho worker`` run it).  One claim evaluates one
  position (:func:`jericho_game.ai.analysis.evaluate_ply`, in a worker process) under a lease, stores
  it with a compare-and-set on the review's next ply, and lets go; AI moves of games being played
  are always claimed first, and reviews leave one slot of a runner to them.  A worker killed
  mid-position leaves its lease to run out; another worker redoes that one position.  The last
  position's claim also walks the game back from its end with the endgame solver
  (:func:`jericho_game.ai.analysis.solve_back`, a budget in nodes) and stores the walk with it.
- :class:`ReviewService` — decides: only a finished game is reviewed, the queue is bounded
  (``busy`` beyond it), and it builds what the page shows (:meth:`ReviewService.view`: the
  positions' winning chances, the moves' losses and marks by :func:`jericho_game.ai.analysis.judge`,
  and the move that decided the game by :func:`jericho_game.ai.analysis.deciding_move`: exact where
  the stored walk knows it, else probable).

Every stored step is announced as version :data:`REVIEW_CHANGED` of the game on the broker (the
``NOTIFY`` rides in the storing transaction on PostgreSQL), so the players and spectators of the
game, on any server process, receive a ``review`` message as the review advances.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import unicodedata
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table, Text, text
from sqlalchemy.engine import Connection

from jericho_game.ai.analysis import (
    DECIDED,
    DECIDING_LOSS,
    THRESHOLDS,
    PositionEval,
    SolvedEnd,
    accuracy,
    counted,
    deciding_move,
    decisive,
    evaluate_ply,
    judge,
    replay,
    solve_back,
    turning_points,
)
from jericho_game.record import move_label
from jericho_game.web import i18n
from jericho_game.web.common.budget import costs, free
from jericho_game.web.round.records import write_game_record
from jericho_game.web.round.rooms import ClientError, GameService
from jericho_game.web.storage.broker import Broker
from jericho_game.web.storage.database import GAMES_CHANNEL, JOBS_CHANNEL, QuotaFull, Storage

__all__ = [
    "DEFAULT_SECONDS",
    "DEFAULT_SIMS",
    "REVIEW_CHANGED",
    "ReviewJob",
    "ReviewJobs",
    "ReviewService",
    "ReviewStore",
]

log = logging.getLogger("jericho_game.web")

#: The broker's version number for "this game's review changed" (-1 is "its AI queue place changed").
REVIEW_CHANGED = -2
#: The default budget per position: the review's search with 5,000 simulations and **no time limit**
#: (issue 53 point 2), so a game's figures are the same at any server load: the accuracy is
#: calibrated on this budget (``analysis.ACCURACY_SCALE``, docs/web.md "Game review").  The old
#: budget, 20,000 simulations cut at 1 s, gave 746-1,542 simulations a position under load, and
#: such flatter figures read random play as 76-79 % accurate.
DEFAULT_SIMS = 5_000
DEFAULT_SECONDS: float | None = None
#: Reviews waiting or running, across the whole database, before new requests are refused (``busy``).
DEFAULT_QUEUE = 16
#: Failures of one position (an exception, not a lost worker) before the review is marked failed.
MAX_ATTEMPTS = 3
LEASE = 6.0  # seconds a claim holds without renewal (as AI moves)

_metadata = MetaData()

reviews_table = Table(
    "reviews",
    _metadata,
    Column("game_id", String(32), primary_key=True),  # one review per game: queued once, DB-enforced
    Column("status", String(8), nullable=False),  # "queued", "running", "done", "failed"
    Column("sims", Integer, nullable=False),  # the budget per position (the requester's server decides)
    Column("seconds", Float, nullable=True),
    Column("start_position", Text, nullable=True),
    Column("moves", Text, nullable=False),  # space-separated notation: a finished game's moves never change
    Column("total", Integer, nullable=False),  # positions to evaluate: moves + 1
    Column("next_ply", Integer, nullable=False),  # positions 0 .. next_ply - 1 are stored
    Column("attempts", Integer, nullable=False),  # failures of the position next_ply
    Column("error", Text, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("claimed_by", String(64), nullable=True),
    Column("lease_until", Float, nullable=True),
    # fair share (issue 22): who asked (client address, account): the per-client quota counts by them
    # and the claims take turns between addresses
    Column("address", String(64), nullable=True),
    Column("account", Integer, nullable=True),
    # the endgame solver's walk back from the end (issue 53): JSON of analysis.SolvedEnd, versioned;
    # NULL in a review stored before it (its deciding move is then read from its exact positions)
    Column("solved_end", Text, nullable=True),
)

Index("reviews_waiting", reviews_table.c.status, reviews_table.c.created_at)

positions_table = Table(
    "review_positions",
    _metadata,
    Column("game_id", String(32), primary_key=True),
    Column("ply", Integer, primary_key=True),
    Column("south", Float, nullable=False),  # South's winning chance, 0..1
    Column("turn", String(8), nullable=False),
    Column("best", String(16), nullable=True),
    Column("exact", Integer, nullable=False),
    Column("sims", Integer, nullable=False),
    Column("line", Text, nullable=True),  # the preferred move and the best play after it, space-separated
    # the endgame solver's verdict (issue 31): the side to move's value (1, 0, -1) and plies to the end
    Column("value", Integer, nullable=True),
    Column("plies", Integer, nullable=True),
    # South's chance after the preferred move: the yardstick of a move's loss (issue 31)
    Column("best_after", Float, nullable=True),
)

_UNFINISHED = "status IN ('queued', 'running')"
_NOTIFY = text("SELECT pg_notify(:channel, :payload)")


@dataclass(frozen=True)
class ReviewJob:
    """A claimed review step: evaluate position ``ply`` of the game ``start_position`` + ``moves``."""

    game_id: str
    ply: int
    total: int
    start_position: str | None
    moves: list[str]
    sims: int
    seconds: float | None
    changed: tuple[str, ...] = ()  # games whose view the claim changed (announced by the runner)


@dataclass
class ReviewRecord:
    """A stored review and the positions evaluated so far (oldest first)."""

    game_id: str
    status: str
    sims: int
    seconds: float | None
    moves: list[str]
    total: int
    next_ply: int
    error: str | None
    created_at: float
    positions: list[PositionEval]
    start_position: str | None = None
    #: what the endgame solver knows of the game's end (``None``: a review stored before it, or not done)
    solved: SolvedEnd | None = None


class ReviewStore:
    """The review tables in the game database (SQL only); :class:`Storage` lends its engines."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.postgres = storage.postgres
        storage.create_tables(_metadata)
        self._migrate()

    def _migrate(self) -> None:
        """Add the columns newer versions need to tables written by an older version: the
        ``line`` of ``review_positions`` (issue 21) and the fair-share ``address``/``account`` of
        ``reviews`` (issue 22), the solver's ``value``/``plies`` and the ``best_after`` yardstick
        (issue 31), the solver's walk ``solved_end`` (issue 53).  Another process may add them at the
        same moment: look again."""
        self._add_columns(
            "review_positions", {"line": "TEXT", "value": "INTEGER", "plies": "INTEGER", "best_after": "FLOAT"}
        )
        self._add_columns("reviews", {"address": "VARCHAR(64)", "account": "INTEGER", "solved_end": "TEXT"})

    def _add_columns(self, table: str, wanted: dict[str, str]) -> None:
        from sqlalchemy import inspect

        for attempt in range(2):
            have = {c["name"] for c in inspect(self.storage.engine).get_columns(table)}
            missing = [name for name in wanted if name not in have]
            if not missing:
                return
            try:
                with self.storage.engine.begin() as conn:
                    for name in missing:
                        conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {name} {wanted[name]}")
                return
            except Exception:  # noqa: BLE001 - another process added them at the same moment: look again
                if attempt:
                    raise
                time.sleep(0.2)

    def _notify(self, conn: Connection, channel: str, payload: str) -> None:
        if self.postgres:
            conn.execute(_NOTIFY, {"channel": channel, "payload": payload})

    def _queued_ids(self, conn: Connection) -> list[str]:
        rows = conn.execute(text("SELECT game_id FROM reviews WHERE status = 'queued'"))
        return [r[0] for r in rows]

    def _changed(self, conn: Connection, ids: list[str]) -> list[str]:
        """Announce that these games' reviews changed (in the transaction); the ids, for local fan-out."""
        for gid in ids:
            self._notify(conn, GAMES_CHANNEL, f"{gid} {REVIEW_CHANGED}")
        return ids

    # -- requests ----------------------------------------------------------------------------
    def insert(
        self,
        game_id: str,
        start_position: str | None,
        moves: list[str],
        sims: int,
        seconds: float | None,
        max_queue: int,
        address: str | None = None,
        account: int | None = None,
        per_client: int | None = None,
    ) -> tuple[bool, list[str]]:
        """Queue the review of a finished game unless it has one: (queued now, games whose view changed).

        A failed review is queued again.  Raises :class:`ReviewQueueFull` (nothing stored) when
        ``max_queue`` reviews wait or run, and :class:`QuotaFull` when the requester (``address``,
        ``account``) already has ``per_client`` reviews waiting or running."""
        now = time.time()
        with self.storage.engine.begin() as conn:
            row = conn.execute(text("SELECT status FROM reviews WHERE game_id = :id"), {"id": game_id}).first()
            if row is not None and row[0] != "failed":
                return False, []
            if per_client is not None and (address is not None or account is not None):
                mine = conn.execute(
                    text(f"SELECT count(*) FROM reviews WHERE {_UNFINISHED} AND (address = :a OR account = :acc)"),
                    {"a": address, "acc": account},
                ).scalar_one()
                if int(mine) >= per_client:
                    raise QuotaFull("reviews", int(mine), per_client)
            waiting = conn.execute(text(f"SELECT count(*) FROM reviews WHERE {_UNFINISHED}")).scalar_one()
            if int(waiting) >= max_queue:
                raise ReviewQueueFull(max_queue)
            values = {
                "address": address,
                "account": account,
                "id": game_id,
                "sims": sims,
                "seconds": seconds,
                "start": start_position,
                "moves": " ".join(moves),
                "total": len(moves) + 1,
                "now": now,
            }
            if row is not None:  # failed before: start again from the first position
                n = conn.execute(
                    text(
                        "UPDATE reviews SET status = 'queued', sims = :sims, seconds = :seconds, next_ply = 0, "
                        "attempts = 0, error = NULL, created_at = :now, updated_at = :now, claimed_by = NULL, "
                        "lease_until = NULL, address = :address, account = :account, solved_end = NULL "
                        "WHERE game_id = :id AND status = 'failed'"
                    ),
                    values,
                ).rowcount
                if n == 1:  # only the request that requeued it (a racer's delete could hit new rows)
                    conn.execute(text("DELETE FROM review_positions WHERE game_id = :id"), {"id": game_id})
            else:
                # two processes asked at once: the primary key lets exactly one insert through
                n = conn.execute(
                    text(
                        "INSERT INTO reviews (game_id, status, sims, seconds, start_position, moves, total, next_ply, "
                        "attempts, error, created_at, updated_at, claimed_by, lease_until, address, account) "
                        "VALUES (:id, 'queued', :sims, :seconds, :start, :moves, :total, 0, 0, NULL, :now, :now, "
                        "NULL, NULL, :address, :account) "
                        "ON CONFLICT (game_id) DO NOTHING"
                    ),
                    values,
                ).rowcount
            if n != 1:
                return False, []
            self._notify(conn, JOBS_CHANNEL, game_id)  # wake the AI workers
            return True, self._changed(conn, [game_id])

    def load(self, game_id: str) -> ReviewRecord | None:
        """The review of ``game_id`` with its evaluated positions, or ``None``."""
        with self.storage.reader.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT status, sims, seconds, moves, total, next_ply, error, created_at, start_position, "
                    "solved_end FROM reviews WHERE game_id = :id"
                ),
                {"id": game_id},
            ).first()
            if row is None:
                return None
            rows = conn.execute(
                text(
                    "SELECT ply, south, turn, best, exact, sims, line, value, plies, best_after FROM review_positions "
                    "WHERE game_id = :id ORDER BY ply"
                ),
                {"id": game_id},
            )
            positions = [
                PositionEval(
                    int(p),
                    float(s),
                    t,
                    b,
                    bool(e),
                    int(n),
                    tuple(line.split()) if line else (),
                    value,
                    plies,
                    None if after is None else float(after),
                )
                for p, s, t, b, e, n, line, value, plies, after in rows
            ]
        return ReviewRecord(
            game_id,
            row[0],
            int(row[1]),
            row[2],
            row[3].split() if row[3] else [],
            int(row[4]),
            int(row[5]),
            row[6],
            float(row[7]),
            positions,
            row[8],
            _solved_end(row[9]),
        )

    def ahead(self, game_id: str, created_at: float) -> int:
        """How many unfinished reviews were asked for before this one."""
        with self.storage.reader.connect() as conn:
            n = conn.execute(
                text(
                    f"SELECT count(*) FROM reviews WHERE {_UNFINISHED} "
                    "AND (created_at < :c OR (created_at = :c AND game_id < :id))"
                ),
                {"c": created_at, "id": game_id},
            ).scalar_one()
        return int(n)

    # -- the job queue ---------------------------------------------------------------------------
    def claim(self, worker: str, lease: float) -> ReviewJob | None:
        """Claim the next position of an unfinished review nobody holds (``job.changed``: the games
        whose view the claim changed): the oldest of the requesters' addresses with the fewest
        positions being evaluated now (fair share: the addresses take turns)."""
        now = time.time()
        lock = " FOR UPDATE OF r SKIP LOCKED" if self.postgres else ""
        running = "SELECT count(*) FROM reviews k WHERE k.lease_until >= :now AND k.address = r.address"
        with self.storage.engine.begin() as conn:
            row = conn.execute(
                text(
                    "SELECT r.game_id, r.status, r.next_ply, r.total, r.start_position, r.moves, r.sims, r.seconds "
                    f"FROM reviews r WHERE r.{_UNFINISHED} AND (r.lease_until IS NULL OR r.lease_until < :now) "
                    f"ORDER BY ({running}), r.created_at, r.game_id LIMIT 1" + lock
                ),
                {"now": now},
            ).first()
            if row is None:
                return None
            gid = row[0]
            conn.execute(
                text(
                    "UPDATE reviews SET status = 'running', claimed_by = :w, lease_until = :until WHERE game_id = :id"
                ),
                {"w": worker, "until": now + lease, "id": gid},
            )
            # the first claim: "queued" becomes "running", and the reviews behind it move up
            changed = self._changed(conn, [gid, *self._queued_ids(conn)]) if row[1] == "queued" else []
        moves = row[5].split() if row[5] else []
        return ReviewJob(gid, int(row[2]), int(row[3]), row[4], moves, int(row[6]), row[7], tuple(changed))

    def renew(self, job: ReviewJob, worker: str, lease: float) -> bool:
        """Extend a claim; False when another worker holds the review now."""
        with self.storage.engine.begin() as conn:
            n = conn.execute(
                text(
                    "UPDATE reviews SET lease_until = :until "
                    "WHERE game_id = :id AND claimed_by = :w AND next_ply = :ply"
                ),
                {"until": time.time() + lease, "id": job.game_id, "w": worker, "ply": job.ply},
            ).rowcount
        return bool(n == 1)

    def release(self, job: ReviewJob, worker: str) -> None:
        """Give a claimed review back (the worker is stopping)."""
        with self.storage.engine.begin() as conn:
            conn.execute(
                text(
                    "UPDATE reviews SET claimed_by = NULL, lease_until = NULL WHERE game_id = :id AND claimed_by = :w"
                ),
                {"id": job.game_id, "w": worker},
            )

    def store(self, job: ReviewJob, worker: str, ev: PositionEval, solved: SolvedEnd | None = None) -> list[str] | None:
        """Store the evaluation of ``job``'s position (with the last one, ``solved``: the solver's walk
        back from the end) and let the review go: the changed views, or ``None`` when the claim was
        lost meanwhile (another worker stores that position)."""
        done = job.ply + 1 >= job.total
        walk = "" if solved is None else ", solved_end = :solved"
        with self.storage.engine.begin() as conn:
            n = conn.execute(
                text(
                    "UPDATE reviews SET next_ply = :next, status = :status, attempts = 0, updated_at = :now, "
                    f"claimed_by = NULL, lease_until = NULL{walk} "
                    "WHERE game_id = :id AND claimed_by = :w AND next_ply = :ply AND status = 'running'"
                ),
                {
                    "next": job.ply + 1,
                    "status": "done" if done else "running",
                    "now": time.time(),
                    "id": job.game_id,
                    "w": worker,
                    "ply": job.ply,
                    "solved": None if solved is None else json.dumps(solved.to_dict(), separators=(",", ":")),
                },
            ).rowcount
            if n != 1:
                return None
            conn.execute(
                text(
                    "INSERT INTO review_positions "
                    "(game_id, ply, south, turn, best, exact, sims, line, value, plies, best_after) "
                    "VALUES (:id, :ply, :south, :turn, :best, :exact, :sims, :line, :value, :plies, :best_after)"
                ),
                {
                    "id": job.game_id,
                    "ply": ev.ply,
                    "south": ev.south,
                    "turn": ev.turn,
                    "best": ev.best,
                    "exact": int(ev.exact),
                    "sims": ev.sims,
                    "line": " ".join(ev.line) or None,
                    "value": ev.value,
                    "plies": ev.plies,
                    "best_after": ev.best_after,
                },
            )
            return self._changed(conn, [job.game_id, *(self._queued_ids(conn) if done else [])])

    def fail(self, job: ReviewJob, worker: str, why: str) -> list[str]:
        """Count a failure of ``job``'s position; the review fails after :data:`MAX_ATTEMPTS` of them."""
        with self.storage.engine.begin() as conn:
            n = conn.execute(
                text(
                    "UPDATE reviews SET attempts = attempts + 1, claimed_by = NULL, lease_until = NULL, "
                    "updated_at = :now WHERE game_id = :id AND claimed_by = :w AND next_ply = :ply"
                ),
                {"now": time.time(), "id": job.game_id, "w": worker, "ply": job.ply},
            ).rowcount
            if n != 1:
                return []
            n = conn.execute(
                text("UPDATE reviews SET status = 'failed', error = :why WHERE game_id = :id AND attempts >= :max"),
                {"why": _printable(why)[:500], "id": job.game_id, "max": MAX_ATTEMPTS},
            ).rowcount
            return self._changed(conn, [job.game_id, *self._queued_ids(conn)]) if n else []

    def unfinished(self) -> int:
        """Reviews waiting or running."""
        with self.storage.reader.connect() as conn:
            return int(conn.execute(text(f"SELECT count(*) FROM reviews WHERE {_UNFINISHED}")).scalar_one())


def _solved_end(raw: str | None) -> SolvedEnd | None:
    """The stored walk of the solver (``reviews.solved_end``), or ``None``: none stored (a review made
    before it), or one this version does not read."""
    if not raw:
        return None
    try:
        return SolvedEnd.from_dict(json.loads(raw))
    except ValueError:
        return None


def _printable(text: str) -> str:
    """``text`` with control and format characters (bidi overrides, zero-width ones) written as escapes:
    an error message is shown to people, and must not turn the text around it."""
    return "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch)[0] == "C" else ch for ch in text)


class ReviewQueueFull(RuntimeError):
    """As many reviews wait as the queue holds: a new one is refused."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} game reviews are waiting")
        self.limit = limit


class ReviewJobs:
    """The review job kind of :class:`~jericho_game.web.airunner.aiqueue.AIRunner`: claim one position, think
    in the runner's pool, store, announce."""

    name = "review"

    def __init__(self, store: ReviewStore, broker: Broker) -> None:
        self.store = store
        self.broker = broker

    def publish(self, game_ids: list[str]) -> None:
        """Tell this process's listeners; other processes hear the ``NOTIFY`` (PostgreSQL), and so does
        this one then, so locally only where there is no ``NOTIFY`` (SQLite)."""
        if not self.store.postgres:
            for gid in game_ids:
                self.broker.publish(gid, REVIEW_CHANGED)

    def claim(self, worker: str, lease: float) -> ReviewJob | None:
        """The next review step, if any (the runner calls it on a thread: it is a database call)."""
        return self.store.claim(worker, lease)

    async def run(self, job: ReviewJob, pool: Any, worker: str) -> None:
        """Evaluate the job's position in ``pool`` (renewing the lease meanwhile) and store it; with the
        last position, the endgame solver's walk back from the end (the deciding move's)."""
        loop = asyncio.get_running_loop()
        self.publish(list(job.changed))  # "queued" became "running": said on the event loop

        async def held(fn: Any, *args: Any) -> tuple[bool, Any]:
            """``fn(*args)`` in the pool, renewing the lease meanwhile: (still ours, its result)."""
            fut = loop.run_in_executor(pool, fn, *args)
            while True:
                try:
                    return True, await asyncio.wait_for(asyncio.shield(fut), LEASE / 3)
                except TimeoutError:
                    if not await loop.run_in_executor(None, self.store.renew, job, worker, LEASE):
                        return False, None  # another worker took it over: its result will be stored

        try:
            mine, ev = await held(evaluate_ply, job.start_position, job.moves, job.ply, job.sims, job.seconds)
            solved = None
            if mine and job.ply + 1 >= job.total:
                mine, solved = await held(solve_back, job.start_position, job.moves)
            if not mine:
                return
            changed = await loop.run_in_executor(None, self.store.store, job, worker, ev, solved)
        except asyncio.CancelledError:
            try:
                self.store.release(job, worker)
            except Exception:  # noqa: BLE001 - the lease runs out anyway
                pass
            raise
        except Exception as exc:  # noqa: BLE001 - counted; the review fails after a few
            log.exception("review of game %s failed at ply %d", job.game_id, job.ply)
            changed = await loop.run_in_executor(None, self.store.fail, job, worker, f"{type(exc).__name__}: {exc}")
        if changed:
            self.publish(changed)


class ReviewService:
    """Requests and views of reviews; decides what may be reviewed and what the page is shown."""

    def __init__(
        self,
        games: GameService,
        store: ReviewStore,
        jobs: ReviewJobs,
        *,
        sims: int = DEFAULT_SIMS,
        seconds: float | None = DEFAULT_SECONDS,
        max_queue: int = DEFAULT_QUEUE,
        per_client: int | None = None,
    ) -> None:
        if sims < 1:
            raise ValueError(f"review sims must be at least 1, got {sims}")
        if seconds is not None and seconds <= 0:
            raise ValueError(f"review seconds must be positive, got {seconds}")
        self.games = games
        self.store = store
        self.jobs = jobs
        self.sims = sims
        self.seconds = seconds
        self.max_queue = max_queue
        self.per_client = per_client  # fair share: reviews one address or account may have waiting
        self.account_of: Any = lambda request: None  # the requester's account (create_app: its session)

    def request(
        self, game_id: str, address: str | None = None, account: int | None = None
    ) -> tuple[bool, dict[str, Any]]:
        """Ask for the review of a finished game: (queued by this request, the review's view);
        ``address``, ``account``: the requester, whose quota it counts in.

        Refused with ``unknown_game`` (404), ``not_over`` (409), ``review_quota`` (429) or ``busy`` (503)."""
        room = self.games.room(game_id)  # unknown_game
        status = self.games.status(room)
        if status != "over":
            why = "the invited player has not even joined" if status == "waiting" else "it is still being played"
            raise ClientError("not_over", f"only a finished game can be reviewed: {why}", 409)
        rec = room.rec
        try:
            queued, changed = self.store.insert(
                rec.id,
                rec.start_position,
                list(rec.moves),
                self.sims,
                self.seconds,
                self.max_queue,
                address,
                account,
                self.per_client,
            )
        except QuotaFull as exc:
            from jericho_game.web.round.rooms import quota_error

            raise quota_error(exc, getattr(self.games, "budget", None)) from None
        except ReviewQueueFull as exc:
            raise ClientError("busy", f"the server is busy: {exc}; try again in a minute", 503) from None
        self.jobs.publish(changed)
        if queued:
            self.games.broker.job_queued(rec.id)  # wake this process's AI runner
        return queued, self.view(rec.id)

    def view(self, game_id: str) -> dict[str, Any]:
        """What the page shows of a game's review (``status`` "none" when nobody asked for one)."""
        rec = self.store.load(game_id)
        marks = {name: {"loss": least, "sign": sign} for name, least, sign in THRESHOLDS}
        rule = {"chance": DECIDED, "least_loss": DECIDING_LOSS}
        if rec is None:
            return {"game": game_id, "status": "none", "thresholds": marks, "decided": rule}
        moves = judge(rec.moves, rec.positions) if rec.positions else []
        first = rec.positions[0].turn if rec.positions else "south"  # the side of the game's first move
        label = {m.ply: move_label(m.ply, first) for m in moves}
        # the figures' fixing point: the accuracy counts the moves up to it (as the player's statistics do)
        moment = decisive(rec.positions, len(rec.moves)) if rec.positions else None
        # the move that decided the game: the last that changed its value, exact where the solver knows it
        deciding = deciding_move(rec.moves, rec.positions, rec.solved) if rec.positions else None
        judged = []
        for m in moves:
            # the number as every page writes it ("16..."), and the line the AI preferred there
            judged.append(
                {
                    **m.to_dict(),
                    "label": label[m.ply],
                    "line": list(rec.positions[m.ply - 1].line),
                    "decisive": deciding is not None and m.ply == deciding.ply,
                }
            )
        decided_game = None
        if deciding is not None:
            decided_game = {**deciding.to_dict(), "label": move_label(deciding.ply, first) if deciding.ply else None}
        turning = {
            side: [{**t.to_dict(), "label": label[t.ply]} for t in points]
            for side, points in turning_points(moves).items()
        }
        slide = {side: round(sum(m.loss for m in moves if m.side == side), 4) for side in ("south", "north")}
        return {
            "game": game_id,
            "status": rec.status,
            "requested": rec.created_at,  # orders views that cross: a request again starts a newer review
            "done": len(rec.positions),
            "total": rec.total,
            "ahead": self.store.ahead(game_id, rec.created_at) if rec.status == "queued" else 0,
            "budget": {"sims": rec.sims, "seconds": rec.seconds},
            "positions": [{k: v for k, v in p.to_dict().items()} for p in rec.positions],
            "moves": judged,
            "first": first,
            # what explains the result (jericho_game.ai.analysis): accuracy, and the costliest moves;
            # the moves after the figures fixed the result (analysis.decisive) do not count in the accuracy
            "accuracy": accuracy(moves, rec.positions, moment.ply if moment else None),
            "counted": counted(moves, moment.ply if moment else None),  # the moves the accuracy counts
            "decisive": decided_game,
            "slide": slide,  # each side's winning chance lost by its own moves, summed (0-1)
            "turning": turning,
            "error": rec.error,
            "thresholds": marks,
            "decided": rule,
        }

    def line(self, game_id: str, ply: int) -> dict[str, Any]:
        """The AI's line in position ``ply`` of a reviewed game, as frames to show on the board: the
        position, then the position after each move of the line.  ``no_line`` (404) when that position
        has no evaluated line (not reviewed yet, or the game is over there)."""
        room = self.games.room(game_id)  # unknown_game
        rec = self.store.load(room.rec.id)
        positions = rec.positions if rec else []
        if not 0 <= ply < len(positions) or not positions[ply].line:
            raise ClientError("no_line", f"position {ply} of this game has no reviewed line", 404)
        line = list(positions[ply].line)
        assert rec is not None
        game = replay(rec.start_position, rec.moves[:ply])
        frames = [_frame(game, None)]
        for mv in line:
            game.play(mv)
            frames.append(_frame(game, mv))
        first = positions[0].turn
        return {
            "game": room.rec.id,
            "ply": ply,
            "labels": [move_label(ply + 1 + i, first) for i in range(len(line))],
            "line": line,
            "frames": frames,
        }

    def message(self, game_id: str) -> str | None:
        """The ``review`` WebSocket message of a game, as JSON text (``None``: the game has no review)."""
        view = self.view(game_id)
        if view["status"] == "none":
            return None
        return json.dumps({"type": "review", "review": view}, separators=(",", ":"))


def _frame(game: Any, move: str | None) -> dict[str, Any]:
    """A position as the replay's frames show it (``GameService.replay_frames``)."""
    return {
        "ply": len(game.history),
        "move": move,
        "towers": {c: [str(p) for p in t] for c, t in game.towers().items() if t},
        "leaders": {k: (str(v) if v is not None else None) for k, v in game.leaders().items()},
        "score": list(game.score()),
        "turn": game.turn.value,
    }


def annotate(record: str, view: dict[str, Any]) -> str:
    """The game record ``record`` with the review's figures as ``{comments}`` after each move (South's
    winning chance after it, the mark with the AI's preferred move, and on the deciding move how it is
    known) and an ``Annotator`` tag.

    Comments are skipped by every record reader, so the moves read back unchanged."""
    head, _, body = record.partition("\n\n")
    notes: dict[int, str] = {}
    positions = view["positions"]
    for m in view["moves"]:
        note = f"South {round(positions[m['ply']]['south'] * 100)}%"
        if m["mark"]:
            sign = view["thresholds"][m["mark"]]["sign"]
            side = m["side"].capitalize()
            note += (
                f"; {sign} {m['mark']}: {side} {round(m['before'] * 100)}% to {round(m['after'] * 100)}%"
                + (" (decided)" if m.get("decided") else "")
                + f", the AI preferred {m['best']}"
                + (f" ({' '.join(m['line'])})" if len(m.get("line") or []) > 1 else "")
            )
        if m.get("decisive"):
            note += "; " + _deciding_note(view["decisive"])
        notes[m["ply"]] = "{" + note + "}"
    tokens = body.split()
    out: list[str] = []
    ply = 0
    for i, tok in enumerate(tokens):
        out.append(tok)
        if tok.endswith(".") or i == len(tokens) - 1:  # a move number, or the result
            continue
        ply += 1
        if ply in notes:
            out.append(notes[ply])
    lines: list[str] = []
    line = ""
    for tok in out:  # wrapped as the record module wraps (a comment is one piece)
        if line and len(line) + 1 + len(tok) > 79:
            lines.append(line)
            line = tok
        else:
            line = f"{line} {tok}" if line else tok
    budget = view["budget"]
    tag = f'[Annotator "Jericho review: master search, {budget["sims"]} simulations per position"]'
    return f"{head}\n{tag}\n\n" + "\n".join([*lines, line]) + "\n"


def _deciding_note(d: dict[str, Any]) -> str:
    """The deciding move's comment in the annotated record: what it made of the game, and how it is known
    (the solver, or the search's figures for its mover)."""
    after = "a draw" if d["result"] == "draw" else f"won for {d['result'].capitalize()}"
    if d["exact"]:
        return f"the deciding move (exact, the endgame solver): the game is {after} from here"
    side = d["side"].capitalize()
    return (
        f"probably the deciding move (the search: {side} {round(d['before'] * 100)}% to "
        f"{round(d['after'] * 100)}%): the game is {after} from here"
    )


def routes(reviews: ReviewService) -> list[Any]:
    """``GET`` / ``POST /api/games/{id}/review``: read a game's review, or ask for it;
    ``GET /api/games/{id}/review/record``: the game record annotated with it;
    ``GET /api/games/{id}/review/line/{ply}``: the AI's line in position ``ply``, as board frames."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, Response
    from starlette.routing import Route

    @costs("review", methods=("POST",))
    @free("a stored review, read", methods=("GET", "HEAD"))
    async def review(request: Request) -> Response:
        game_id = request.path_params["id"]
        if request.method in ("GET", "HEAD"):  # HEAD is a GET without its body, never a change
            reviews.games.room(game_id)  # unknown_game (404) for an id that names no game
            return JSONResponse(reviews.view(game_id))
        from jericho_game.web.common.fairshare import address_of

        queued, view = reviews.request(game_id, address_of(request), reviews.account_of(request))
        if queued:
            return JSONResponse({"queued": True, "review": view}, status_code=202)
        message = f"this game's review was already asked for: it is {view['status']}"
        if view["status"] != "queued":
            message += f" ({view['done']} of {view['total']} positions evaluated)"
        message = i18n.error_text("review_exists", message, i18n.request_language(request))
        return JSONResponse({"error": "review_exists", "message": message, "review": view}, status_code=409)

    @free("one game's record with its stored review: bounded by the game's length")
    async def record(request: Request) -> Response:
        games = reviews.games
        room = games.room(request.path_params["id"])
        view = reviews.view(room.rec.id)
        if view["status"] != "done":
            why = "nobody asked for it yet" if view["status"] == "none" else f"it is {view['status']}"
            raise ClientError("review_not_done", f"this game's review is not done: {why}", 409)
        text = annotate(write_game_record(room.game, games.record_tags(room)), view)
        name = f"jericho-{room.rec.id}-review.jgn"
        return PlainTextResponse(text, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @free("one stored line of the review, replayed: bounded by the line's length")
    async def line(request: Request) -> Response:
        raw = request.path_params["ply"]
        if not re.fullmatch(r"[0-9]{1,6}", raw):
            raise ClientError("bad_request", f"ply must be a position number (0, 1, 2, ...), not {raw[:12]!r}")
        return JSONResponse(reviews.line(request.path_params["id"], int(raw)))

    return [
        Route("/api/games/{id}/review", review, methods=["GET", "POST"]),
        Route("/api/games/{id}/review/record", record),
        Route("/api/games/{id}/review/line/{ply}", line),
    ]
