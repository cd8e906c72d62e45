"""The store: the only module of the web app that talks to the database (SQL and nothing else).

Games are kept with SQLAlchemy, in SQLite by default (a file under the user's data directory)
or in PostgreSQL (``postgresql+psycopg://...``).  A game is stored as its start position plus
the list of moves played; the room service rebuilds the :class:`jericho_game.Game` by replaying
them, so the database never holds derived state that could disagree with the engine.

The database is the truth, across processes.  Every change of a game goes through
:meth:`Storage.write`: one transaction that locks the game's row (``SELECT ... FOR UPDATE`` on
PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite), hands the caller the stored version, and ends with a
compare-and-set (``UPDATE ... WHERE version = :old``) that bumps the version.  Two processes can
therefore never both apply a change to the same version of a game.  On PostgreSQL the same
transaction announces the change (``pg_notify``), so an announcement goes out exactly when the
change commits.

The ``ai_jobs`` table is the AI's job queue (one row per game waiting for an AI move); workers
claim rows with a lease (``FOR UPDATE SKIP LOCKED`` on PostgreSQL), so a worker killed while
thinking is replaced once its lease runs out.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jericho_game.extras import missing_extra

try:
    from sqlalchemy import (
        Column,
        Float,
        ForeignKey,
        Index,
        Integer,
        MetaData,
        String,
        Table,
        Text,
        create_engine,
        event,
        inspect,
        text,
    )
    from sqlalchemy.engine import Connection, Engine
except ImportError as exc:
    raise missing_extra("the web app's storage", "web", exc) from exc

__all__ = [
    "AIJob",
    "Conflict",
    "GameRecord",
    "Storage",
    "StorageError",
    "Tx",
    "default_db_url",
    "resolve_db_url",
    "GAMES_CHANNEL",
    "JOBS_CHANNEL",
    "LOBBY_ID",
    "PRESENCE_VERSION",
    "Presence",
    "QuotaFull",
    "human_account",
    "record_from_row",
]

GAMES_CHANNEL = "jericho_games"  # NOTIFY payload "game_id version": a game changed
LOBBY_ID = "~lobby"  # on GAMES_CHANNEL, "~lobby 0": a public seek appeared (no game id has a ~)
PRESENCE_VERSION = -3  # on GAMES_CHANNEL, "game_id -3" (-1: AI queue, -2: review): who is connected to the game changed
JOBS_CHANNEL = "jericho_jobs"  # NOTIFY payload "game_id": an AI job is waiting

metadata = MetaData()

games_table = Table(
    "games",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("mode", String(16), nullable=False),  # "ai", "hotseat" or "online"
    Column("start_position", Text, nullable=True),  # None: the standard start
    Column("south_token", String(64), nullable=True),
    Column("north_token", String(64), nullable=True),
    Column("invite", String(64), nullable=True),  # online: code that lets the opponent join
    Column("joined", Integer, nullable=False, default=0),  # online: the invited seat is taken
    Column("ai_side", String(8), nullable=True),
    Column("ai_level", String(200), nullable=True),
    Column("clock", Float, nullable=True),  # seconds per side, None: no clock
    Column("south_time", Float, nullable=True),  # seconds left when its turn last ended
    Column("north_time", Float, nullable=True),
    Column("turn_started", Float, nullable=True),  # wall time the running clock started
    Column("result", String(8), nullable=True),  # "south", "north", "draw"
    Column("reason", String(16), nullable=True),  # "seven", "exhaustion", "resign", "time"
    Column("rematch_of", String(32), nullable=True),
    Column("rematch_id", String(32), nullable=True),
    Column("meta", Text, nullable=False, default="{}"),
    # added for several processes on one database (older files get them by ALTER TABLE):
    Column("version", Integer, nullable=False, default=0, server_default="0"),  # bumped by every change
    Column("deadline", Float, nullable=True),  # wall time the running clock reaches zero
    # accounts and ratings (web/accounts/accounts.py, web/accounts/ratings.py): the account each seat is bound to
    Column("south_account", Integer, nullable=True),
    Column("north_account", Integer, nullable=True),
    Column("rated", Integer, nullable=False, default=0, server_default="0"),
    # the lobby (issue 12): an online game listed publicly (open seek, then playing now)
    Column("public", Integer, nullable=False, default=0, server_default="0"),
    # fair share (issue 22): the creator's client address, which the per-client quotas (AI jobs
    # waiting, open seeks) count by, together with the seats' accounts
    Column("address", String(64), nullable=True),
    # issue 23: a real-time clock's Fischer increment (seconds added after each of a side's moves),
    # and a correspondence game's days per move (web/round/correspondence.py; its clock is that many days)
    Column("increment", Float, nullable=True),
    Column("per_move_days", Integer, nullable=True),
)
Index("games_deadline", games_table.c.deadline)
Index("games_south_account", games_table.c.south_account)
Index("games_north_account", games_table.c.north_account)
Index("games_public", games_table.c.public, games_table.c.joined)

# Who is connected to which seat, as each server process sees its own connections (issue 12):
# a process writes its row when its count of a seat's connections changes and renews
# ``seen_at`` every heartbeat while it holds any.  A seat is present when some row has
# connections and was renewed within the presence TTL (a killed process's rows go stale); it has
# been away since the latest ``seen_at`` of its rows.  ``side`` is south, north or watchers.
presence_table = Table(
    "presence",
    metadata,
    Column("game_id", String(32), primary_key=True),
    Column("side", String(8), primary_key=True),
    Column("process", String(64), primary_key=True),
    Column("conns", Integer, nullable=False),
    Column("seen_at", Float, nullable=False),
)

moves_table = Table(
    "moves",
    metadata,
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("ply", Integer, primary_key=True),
    Column("move", String(16), nullable=False),
    Column("played_at", Float, nullable=False),
)

jobs_table = Table(
    "ai_jobs",
    metadata,
    Column("game_id", String(32), primary_key=True),  # at most one waiting AI move per game
    Column("version", Integer, nullable=False),  # the game version the move is for
    Column("level", String(200), nullable=False),
    Column("start_position", Text, nullable=True),
    Column("moves", Text, nullable=False),  # space-separated notation
    Column("created_at", Float, nullable=False),
    Column("claimed_by", String(64), nullable=True),
    Column("lease_until", Float, nullable=True),  # a claim is void after this wall time
    # fair share (issue 22): whose job it is (the game's creator address and the player's account):
    # the quotas count by them and the claim takes turns between addresses
    Column("address", String(64), nullable=True),
    Column("account", Integer, nullable=True),
    # issue 33: the job's lane (0 cheap levels, 1 expensive levels, 2 expensive ones of a game that came
    # back over budget, web/common/fairshare.py): claimed lane by lane, cheap ones also by a slot of their own
    Column("lane", Integer, nullable=False, default=1, server_default="1"),
)
Index("ai_jobs_created", jobs_table.c.created_at)
Index("ai_jobs_address", jobs_table.c.address)
Index("games_updated", games_table.c.updated_at)

#: The AI runners alive (issue 33): each renews its row every few seconds with its slots, so that the
#: admission of new AI games (web/common/fairshare.py, AIBudget) knows the capacity of every process
#: and ``jericho worker`` on the database; a killed runner's row goes stale and counts no more.
ai_runners_table = Table(
    "ai_runners",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("slots", Integer, nullable=False),  # slots for any job (expensive levels, reviews, analyses)
    Column("cheap_slots", Integer, nullable=False),  # slots kept for the cheap lane
    Column("seen_at", Float, nullable=False),
)
RUNNER_TTL = 10.0  # seconds a runner's row counts after its last renewal

#: The analysis board's running engine streams (web/learn/analysis_stream.py): one row per client, so a
#: new analysis of the same address or account replaces the old one on any process, and the AI
#: claims count them as work being thought about for their address (fair share).
analysis_runs_table = Table(
    "analysis_runs",
    metadata,
    Column("run", String(40), primary_key=True),
    Column("address", String(64), nullable=False),
    Column("account", Integer, nullable=True),
    Column("started_at", Float, nullable=False),
    Column("lease_until", Float, nullable=False),  # renewed while it streams; void after this wall time
)
Index("analysis_runs_address", analysis_runs_table.c.address)


class StorageError(RuntimeError):
    """The database could not be opened or written."""


class Conflict(RuntimeError):
    """The game changed under a write (another process won the compare-and-set)."""


@dataclass
class GameRecord:
    """One stored game: its settings, seats, clock and moves (notation, oldest first)."""

    id: str
    mode: str
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    start_position: str | None = None
    south_token: str | None = None
    north_token: str | None = None
    invite: str | None = None
    joined: bool = False
    ai_side: str | None = None
    ai_level: str | None = None
    clock: float | None = None
    south_time: float | None = None
    north_time: float | None = None
    turn_started: float | None = None
    result: str | None = None
    reason: str | None = None
    rematch_of: str | None = None
    rematch_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    version: int = 0
    deadline: float | None = None
    public: bool = False
    south_account: int | None = None  # the account the seat is bound to (web/accounts/accounts.py)
    north_account: int | None = None
    rated: bool = False  # both seats accounts, Glicko-2 update when it ends (web/accounts/ratings.py)
    address: str | None = None  # the creator's client address (fair share quotas, web/common/fairshare.py)
    increment: float | None = None  # seconds added to a side's clock after each of its moves (issue 23)
    per_move_days: int | None = None  # a correspondence game: days per move (web/round/correspondence.py)
    moves: list[str] = field(default_factory=list)

    def copy(self) -> GameRecord:
        """An independent copy (the moves list and meta are copied too)."""
        # through __dict__: dataclasses.replace re-runs __init__ with every field looked up by
        # name (10 us against 2.5, timeit), and every move of every game copies its record once
        new = object.__new__(GameRecord)
        new.__dict__.update(self.__dict__)
        new.moves = list(self.moves)
        new.meta = dict(self.meta)
        return new


@dataclass(frozen=True)
class AIJob:
    """A claimed AI job: the position (start + moves) to move in, for game version ``version``."""

    game_id: str
    version: int
    level: str
    start_position: str | None
    moves: list[str]


_COLUMNS = [c.name for c in games_table.columns]
_MUTABLE = [c for c in _COLUMNS if c not in ("id", "created_at", "mode", "start_position", "version")]

_SET = ", ".join(f"{c} = :{c}" for c in _MUTABLE)
_UPDATE = text(f"UPDATE games SET {_SET}, version = :new_version WHERE id = :id AND version = :old_version")
# on PostgreSQL the announcement rides on the update: one round trip, and only when a row changed
_UPDATE_NOTIFY = text(
    f"UPDATE games SET {_SET}, version = :new_version WHERE id = :id AND version = :old_version "
    f"RETURNING pg_notify('{GAMES_CHANNEL}', id || ' ' || version)"
)
_INSERT_GAME = text(f"INSERT INTO games ({', '.join(_COLUMNS)}) VALUES ({', '.join(':' + c for c in _COLUMNS)})")
_INSERT_MOVE = text("INSERT INTO moves (game_id, ply, move, played_at) VALUES (:game_id, :ply, :move, :played_at)")
_DELETE_MOVES = text("DELETE FROM moves WHERE game_id = :id AND ply >= :ply")
_SELECT_GAME = text(f"SELECT {', '.join(_COLUMNS)} FROM games WHERE id = :id")
_SELECT_MOVES = text("SELECT move FROM moves WHERE game_id = :id ORDER BY ply")
_SELECT_VERSION = text("SELECT version FROM games WHERE id = :id")
_SELECT_VERSION_LOCKED = text("SELECT version FROM games WHERE id = :id FOR UPDATE")
_NOTIFY = text("SELECT pg_notify(:channel, :payload)")
_DELETE_JOB = text("DELETE FROM ai_jobs WHERE game_id = :id")
_INSERT_JOB = text(
    "INSERT INTO ai_jobs (game_id, version, level, start_position, moves, created_at, claimed_by, lease_until, "
    "address, account, lane) VALUES (:game_id, :version, :level, :start_position, :moves, :created_at, NULL, NULL, "
    ":address, :account, :lane)"
)
# issue 33: the AI games being played (not over, changed since :since) per level, what the admission weighs
# An AI game being played (issue 51): not over, and either its player's turn began less than the
# first-move grace ago (:fresh), or its player has moved (ply 1 exists: whoever moved first, both
# sides have then played) and it changed within the budget's active window (:since).  A game whose
# player never moves therefore stops counting a minute after its turn began, and is aborted.
_AI_PLAYED = (
    "mode = 'ai' AND result IS NULL AND reason IS NULL AND (updated_at >= :fresh OR (updated_at >= :since "
    "AND EXISTS (SELECT 1 FROM moves m WHERE m.game_id = games.id AND m.ply = 1)))"
)
_AI_LOAD = text(f"SELECT ai_level, count(*) FROM games WHERE {_AI_PLAYED} AND id <> :id GROUP BY ai_level")
_AI_LOAD_OF = text(
    f"SELECT ai_level, count(*) FROM games WHERE {_AI_PLAYED} AND id <> :id AND (address = :address OR "
    "(CASE WHEN ai_side = 'south' THEN north_account ELSE south_account END) = :account) GROUP BY ai_level"
)
_AI_GAMES_OF = text(
    "SELECT COALESCE(SUM(CASE WHEN address = :address THEN 1 ELSE 0 END), 0), "
    "COALESCE(SUM(CASE WHEN (CASE WHEN ai_side = 'south' THEN north_account ELSE south_account END) = :account "
    f"THEN 1 ELSE 0 END), 0) FROM games WHERE {_AI_PLAYED} AND (address = :address OR south_account = :account "
    "OR north_account = :account)"
)
# AI games whose player has not made a move since its turn began over the grace ago (candidates; the
# abort checks each under the game's lock): no ply 1 yet and no AI move waiting
_AI_UNSTARTED = text(
    "SELECT id FROM games WHERE mode = 'ai' AND result IS NULL AND reason IS NULL AND updated_at < :cut "
    "AND NOT EXISTS (SELECT 1 FROM moves m WHERE m.game_id = games.id AND m.ply = 1) "
    "AND NOT EXISTS (SELECT 1 FROM ai_jobs j WHERE j.game_id = games.id) ORDER BY updated_at LIMIT :n"
)
_LANE_WAIT = text(
    "SELECT min(created_at) FROM ai_jobs WHERE lane = :lane AND (lease_until IS NULL OR lease_until < :now)"
)
_CAPACITY = text("SELECT sum(slots), sum(cheap_slots) FROM ai_runners WHERE seen_at >= :since")
# the AI jobs of one client (address or account), queued or being thought about, other games than this one
_CLIENT_JOBS = text("SELECT count(*) FROM ai_jobs WHERE game_id <> :id AND (address = :address OR account = :account)")
# the open seeks of one client (its address, or the account of the creator's seat)
_CLIENT_SEEKS = text(
    "SELECT count(*) FROM games WHERE public = 1 AND joined = 0 AND result IS NULL AND reason IS NULL "
    "AND mode = 'online' AND (address = :address OR south_account = :account OR north_account = :account)"
)
_CORR_SEEKS = text(  # open correspondence seeks: by accounts (the creator's seat has one), and in all
    "SELECT COALESCE(SUM(CASE WHEN (CASE WHEN south_token IS NOT NULL THEN south_account ELSE north_account END) "
    "IS NOT NULL THEN 1 ELSE 0 END), 0), COUNT(*) FROM games WHERE public = 1 AND joined = 0 AND result IS NULL "
    "AND reason IS NULL AND mode = 'online' AND per_move_days IS NOT NULL"
)
_CORR_GROUPS = text(  # accounts' open correspondence seeks: the most one address group holds, and :g's
    "SELECT COALESCE(MAX(n), 0), COALESCE(SUM(CASE WHEN grp = :g THEN n ELSE 0 END), 0) FROM (SELECT "
    "COALESCE(address, id) AS grp, COUNT(*) AS n FROM games WHERE public = 1 AND joined = 0 AND result IS NULL "
    "AND reason IS NULL AND mode = 'online' AND per_move_days IS NOT NULL AND (CASE WHEN south_token IS NOT NULL "
    "THEN south_account ELSE north_account END) IS NOT NULL GROUP BY COALESCE(address, id)) AS held"
)
_JOB_OF = text("SELECT version FROM ai_jobs WHERE game_id = :id AND version = :v")
_HOT = {
    "insert_move": _INSERT_MOVE,
    "update": _UPDATE,
    "update_notify": _UPDATE_NOTIFY,
    "select_game": _SELECT_GAME,
    "select_moves": _SELECT_MOVES,
    "version": _SELECT_VERSION,
}
_WAITING_JOBS = text("SELECT count(*) FROM ai_jobs WHERE lease_until IS NULL OR lease_until < :now")


def _driver_sql(stmt: Any, postgres: bool) -> str:
    """A ``text()`` statement's SQL in the driver's own parameter style (sqlite3 takes ``:name``,
    psycopg ``%(name)s``), for :meth:`Tx._run`."""
    sql = str(stmt.text)
    if postgres:
        sql = re.sub(r"(?<![:\w]):(\w+)", r"%(\1)s", sql.replace("%", "%%"))
    return sql


def default_db_url() -> str:
    """``sqlite:///`` URL of ``games.sqlite3`` under the user's data directory (created if needed)."""
    import platformdirs

    folder = Path(platformdirs.user_data_dir("jericho", appauthor=False))
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'games.sqlite3'}"


def resolve_db_url(db: str | None) -> str:
    """Turn ``--db`` (``None``, a file path, or a database URL) into a SQLAlchemy URL."""
    if not db:
        return default_db_url()
    if "://" in db:
        return db
    path = Path(db).expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def _record(row: Any, moves: list[str]) -> GameRecord:
    data = dict(row)
    data["joined"] = bool(data["joined"])
    data["public"] = bool(data.get("public") or 0)
    data["meta"] = json.loads(data["meta"] or "{}")
    data["version"] = int(data["version"] or 0)
    data["rated"] = bool(data["rated"])
    return GameRecord(**data, moves=moves)


def record_from_row(row: Any) -> GameRecord:
    """A game read by a feature's own query (``SELECT g.* FROM games g ...``, a mapping), without its moves."""
    return _record(row, [])


def _row(rec: GameRecord) -> dict[str, Any]:
    row = {name: getattr(rec, name) for name in _COLUMNS}
    row["joined"] = int(rec.joined)
    row["public"] = int(rec.public)
    row["rated"] = int(rec.rated)
    row["meta"] = json.dumps(rec.meta)
    return row


class Tx:
    """One write transaction on one game, its row locked; see :meth:`Storage.write`.

    ``version`` is the version stored when the lock was taken; :meth:`load` reads the whole
    game inside the transaction.  The caller's changes become visible to others only when the
    transaction commits; :meth:`save` must be the last write (it bumps the version)."""

    def __init__(self, store: Storage, conn: Connection, game_id: str, version: int) -> None:
        self.store = store
        self.conn = conn
        self.game_id = game_id
        self.version = version
        self.saved: int | None = None  # the new version once saved
        self.wrote = False  # whether this change wrote anything yet

    def _run(self, name: str, params: Any, many: bool = False) -> Any:
        """One of the hot statements (:data:`_HOT`: every move runs them) on the driver's connection
        directly, inside this transaction: SQLAlchemy's execution machinery cost more CPU than the
        statements themselves (~0.1 ms each)."""
        raw = self.conn.connection.dbapi_connection
        assert raw is not None
        sql = self.store.hot[name]
        if many:
            cur = raw.cursor()
            cur.executemany(sql, params)
            return cur
        return raw.execute(sql, params)

    def load(self) -> GameRecord:
        """The game as stored now (inside this transaction)."""
        rec = self.store._load(self.conn, self.game_id)
        assert rec is not None  # the row is locked: it cannot have vanished
        return rec

    def append_moves(self, first_ply: int, moves: list[str]) -> None:
        """Store ``moves`` as plies ``first_ply``, ``first_ply + 1``, ..."""
        self.wrote = True
        now = time.time()
        gid = self.game_id
        rows = [{"game_id": gid, "ply": first_ply + i, "move": m, "played_at": now} for i, m in enumerate(moves)]
        # one move (nearly always) as a plain statement: psycopg's executemany enters pipeline
        # mode: 125-130 us of CPU for one row against 52-54 for execute (psycopg 3.3.9, timed)
        if len(rows) == 1:
            self._run("insert_move", rows[0])
        else:
            self._run("insert_move", rows, many=True)

    def truncate(self, plies: int) -> None:
        """Take back moves so that ``plies`` remain (undo)."""
        self.wrote = True
        self.conn.execute(_DELETE_MOVES, {"id": self.game_id, "ply": plies})

    def put_job(self, rec: GameRecord, version: int, level: str, lane: int = 1) -> None:
        """Queue an AI move for ``rec`` at ``version`` (replacing any older job of the game) in ``lane``."""
        self.wrote = True
        self.conn.execute(_DELETE_JOB, {"id": self.game_id})
        self.conn.execute(
            _INSERT_JOB,
            {
                "game_id": self.game_id,
                "version": version,
                "level": level,
                "start_position": rec.start_position,
                "moves": " ".join(rec.moves),
                "created_at": time.time(),
                "address": rec.address,
                "account": human_account(rec),
                "lane": lane,
            },
        )
        self.store._notify(self.conn, JOBS_CHANNEL, self.game_id)

    def client_jobs(self, rec: GameRecord) -> int:
        """How many AI jobs of ``rec``'s client (its creator's address, or its player's account) are
        queued or being thought about for other games (fair share: the per-client AI quota)."""
        return self.store._client_jobs(self.conn, rec)

    def has_job(self, version: int) -> bool:
        """Whether an AI job for the game at ``version`` is queued or being thought about."""
        row = self.conn.execute(_JOB_OF, {"id": self.game_id, "v": version}).first()
        return row is not None

    def insert_game(
        self, rec: GameRecord, job_level: str | None = None, max_client_jobs: int | None = None, job_lane: int = 1
    ) -> None:
        """Insert another new game in this transaction (a rematch), with its AI job when ``job_level``
        (:class:`QuotaFull` when its client already has ``max_client_jobs`` AI jobs)."""
        self.store._insert(self.conn, rec, job_level, None, max_client_jobs, job_lane)

    def drop_job(self) -> None:
        """Forget the game's waiting AI move, if any."""
        self.wrote = True
        self.conn.execute(_DELETE_JOB, {"id": self.game_id})

    def waiting_jobs(self) -> int:
        """How many AI jobs wait for a worker (the queue's length)."""
        return int(self.conn.execute(_WAITING_JOBS, {"now": time.time()}).scalar_one())

    def save(self, rec: GameRecord) -> int:
        """Write the game's settings, seats, clock and result with the version bumped; the new version.

        A compare-and-set: raises :class:`Conflict` if the stored version is no longer ``version``."""
        self.wrote = True
        rec.updated_at = time.time()
        row = _row(rec)
        row["old_version"] = self.version
        row["new_version"] = self.version + 1
        if self.store.postgres:
            changed = len(self._run("update_notify", row).fetchall())
        else:
            changed = self._run("update", row).rowcount
        if changed != 1:
            raise Conflict(f"game {self.game_id} changed under this write")
        rec.version = self.saved = self.version + 1
        return rec.version


class Storage:
    """Games in a database reached by a SQLAlchemy URL; every write commits before returning."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.postgres = url.startswith("postgresql")
        hot = dict(_HOT, lock=_SELECT_VERSION_LOCKED if self.postgres else _SELECT_VERSION)
        self.hot = {name: _driver_sql(stmt, self.postgres) for name, stmt in hot.items()}
        try:
            if url.startswith("sqlite"):
                self.engine: Engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
                event.listen(self.engine, "connect", _sqlite_connect)
                # every transaction takes SQLite's write lock at once: a read followed by a write
                # in one transaction can then never interleave with another writer
                event.listen(self.engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN IMMEDIATE"))
                # reads go through their own pool with plain (deferred) transactions: in WAL mode
                # they never wait for a writer
                self.reader: Engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
                event.listen(self.reader, "connect", _sqlite_connect)
                event.listen(self.reader, "begin", lambda conn: conn.exec_driver_sql("BEGIN"))
            else:
                self.engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
                self.reader = self.engine
            metadata.create_all(self.engine)
            self._migrate()
        except Exception as exc:  # noqa: BLE001 - any driver error becomes one clear message
            raise StorageError(f"cannot open the game database {url!r}: {exc}") from exc

    def create_tables(self, tables: Any) -> None:
        """Create a feature's tables (a SQLAlchemy ``MetaData``) where they are missing.

        Two processes starting at once may both find a table missing; the second ``CREATE``
        then fails, so a failure is followed by one more look, which finds it there."""
        try:
            tables.create_all(self.engine)
        except Exception:  # noqa: BLE001 - another process created them at the same moment: look again
            time.sleep(0.2)
            tables.create_all(self.engine)

    def _migrate(self) -> None:
        """Add the columns that databases written by older versions lack."""
        have = {c["name"] for c in inspect(self.engine).get_columns("games")}
        if "lane" not in {c["name"] for c in inspect(self.engine).get_columns("ai_jobs")}:  # issue 33
            try:
                with self.engine.begin() as conn:
                    conn.exec_driver_sql("ALTER TABLE ai_jobs ADD COLUMN lane INTEGER NOT NULL DEFAULT 1")
            except Exception:  # noqa: BLE001 - another process added it at the same moment
                pass
        with self.engine.begin() as conn:
            if "version" not in have:
                conn.exec_driver_sql("ALTER TABLE games ADD COLUMN version INTEGER NOT NULL DEFAULT 0")
            if "deadline" not in have:
                conn.exec_driver_sql("ALTER TABLE games ADD COLUMN deadline FLOAT")
            if "public" not in have:
                conn.exec_driver_sql("ALTER TABLE games ADD COLUMN public INTEGER NOT NULL DEFAULT 0")
            for column in ("south_account", "north_account"):  # accounts and ratings
                if column not in have:
                    conn.exec_driver_sql(f"ALTER TABLE games ADD COLUMN {column} INTEGER")
            if "rated" not in have:
                conn.exec_driver_sql("ALTER TABLE games ADD COLUMN rated INTEGER NOT NULL DEFAULT 0")
            if "address" not in have:  # fair share (issue 22)
                conn.exec_driver_sql("ALTER TABLE games ADD COLUMN address VARCHAR(64)")
            if "increment" not in have:  # issue 23: increment and correspondence games
                conn.exec_driver_sql("ALTER TABLE games ADD COLUMN increment FLOAT")
            if "per_move_days" not in have:
                conn.exec_driver_sql("ALTER TABLE games ADD COLUMN per_move_days INTEGER")
            have_jobs = {c["name"] for c in inspect(conn).get_columns("ai_jobs")}
            if "address" not in have_jobs:
                conn.exec_driver_sql("ALTER TABLE ai_jobs ADD COLUMN address VARCHAR(64)")
                conn.exec_driver_sql("ALTER TABLE ai_jobs ADD COLUMN account INTEGER")
                conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ai_jobs_address ON ai_jobs (address)")
            for side in ("south", "north"):
                conn.exec_driver_sql(f"CREATE INDEX IF NOT EXISTS games_{side}_account ON games ({side}_account)")
            conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS games_updated ON games (updated_at)")

    def close(self) -> None:
        """Release the connection pool."""
        self.engine.dispose()
        self.reader.dispose()

    def ping(self) -> None:
        """Raise if the database cannot be reached (``/healthz``)."""
        with self.reader.connect() as conn:
            conn.execute(text("SELECT 1"))

    def _notify(self, conn: Connection, channel: str, payload: str) -> None:
        if self.postgres:
            conn.execute(_NOTIFY, {"channel": channel, "payload": payload})

    # -- reading -------------------------------------------------------------------------
    def _load(self, conn: Connection, game_id: str) -> GameRecord | None:
        # on the driver's cursor (see Tx._run): a game is reloaded at every change another process
        # announces, and SQLAlchemy's result machinery cost more than the two queries
        raw = conn.connection.dbapi_connection
        assert raw is not None
        row = raw.execute(self.hot["select_game"], {"id": game_id}).fetchone()
        if row is None:
            return None
        moves = [m for (m,) in raw.execute(self.hot["select_moves"], {"id": game_id}).fetchall()]
        return _record(dict(zip(_COLUMNS, row, strict=True)), moves)

    def load(self, game_id: str) -> GameRecord | None:
        """The stored game ``game_id`` with its moves, or ``None`` when there is none."""
        with self.reader.begin() as conn:  # begun at once: both reads in one transaction
            return self._load(conn, game_id)

    def version(self, game_id: str) -> int | None:
        """The stored version of ``game_id`` (``None``: no such game): a cheap freshness check."""
        with self.reader.connect() as conn:
            raw = conn.connection.dbapi_connection
            assert raw is not None
            row = raw.execute(self.hot["version"], {"id": game_id}).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def count(self) -> int:
        """How many games are stored."""
        with self.reader.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM games")).scalar_one())

    def due(self, now: float, limit: int = 50) -> list[str]:
        """Games whose running clock reached zero by ``now`` and that are not over yet."""
        with self.reader.connect() as conn:
            rows = conn.execute(
                text("SELECT id FROM games WHERE deadline <= :now AND result IS NULL ORDER BY deadline LIMIT :n"),
                {"now": now, "n": limit},
            )
            return [r[0] for r in rows]

    def job_place(self, game_id: str, version: int, conn: Connection | None = None) -> int | None:
        """Where the game's AI job stands: 0 = being thought about, k = k-th in the queue, None = no job.

        ``conn``: read in that connection's transaction (which may have just queued the job)."""
        if conn is not None:
            return self._job_place(conn, game_id, version)
        with self.reader.connect() as c:
            return self._job_place(c, game_id, version)

    def _job_place(self, conn: Connection, game_id: str, version: int) -> int | None:
        now = time.time()
        row = conn.execute(
            text("SELECT created_at, lease_until, lane FROM ai_jobs WHERE game_id = :id AND version = :v"),
            {"id": game_id, "v": version},
        ).first()
        if row is None:
            return None
        if row[1] is not None and row[1] >= now:
            return 0
        # the jobs claimed before it: those of an earlier lane, and the older ones of its own
        ahead = conn.execute(
            text(
                "SELECT count(*) FROM ai_jobs WHERE (lease_until IS NULL OR lease_until < :now) AND (lane < :lane "
                "OR (lane = :lane AND (created_at < :c OR (created_at = :c AND game_id < :id))))"
            ),
            {"now": now, "c": row[0], "id": game_id, "lane": row[2]},
        ).scalar_one()
        return int(ahead) + 1

    # -- writing -------------------------------------------------------------------------
    def create(
        self,
        rec: GameRecord,
        *,
        job_level: str | None = None,
        max_jobs: int | None = None,
        max_client_jobs: int | None = None,
        max_client_seeks: int | None = None,
        max_corr_seeks: int | None = None,
        job_lane: int = 1,
        admit: Callable[[Connection], None] | None = None,
    ) -> None:
        """Insert a new game (with any moves it already has); with ``job_level``, queue its AI move too.

        Raises :class:`QueueFull` (nothing stored) when ``max_jobs`` jobs already wait, and
        :class:`QuotaFull` when the game's client (``rec.address`` or the creator's account)
        already has ``max_client_jobs`` AI jobs or, for a public seek, ``max_client_seeks`` open seeks,
        or (``"lobby"``) a correspondence seek finds ``max_corr_seeks`` open ones: all of them for an
        anonymous creator; for an account's (``"lobby-shared"``), as many of accounts with no address
        group holding two more than the creator's (else it crowds one out: ``correspondence.crowded_out``).
        ``admit(conn)``: what the creation asks in its transaction (the budgets, and the AI's
        admission control, which takes :meth:`admission_lock` first): it raises to refuse, and
        nothing is stored."""
        with self.engine.begin() as conn:
            if self.postgres and rec.address and (max_client_jobs is not None or max_client_seeks is not None):
                # one client's creations on several processes take turns: the count below is then exact
                conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:a))"), {"a": "jericho-client:" + rec.address})
            if admit is not None:
                admit(conn)
            if max_client_seeks is not None and rec.public and not rec.joined:
                account = rec.south_account if rec.south_token else rec.north_account
                n = int(conn.execute(_CLIENT_SEEKS, {"address": rec.address, "account": account}).scalar_one())
                if n >= max_client_seeks:
                    raise QuotaFull("seeks", n, max_client_seeks)
            if max_corr_seeks is not None and rec.public and not rec.joined and rec.per_move_days is not None:
                if self.postgres:  # creations of correspondence seeks on every process take turns: exact count
                    conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('jericho-correspondence-seeks'))"))
                by_accounts, every = (int(x) for x in conn.execute(_CORR_SEEKS).one())
                creator = rec.south_account if rec.south_token else rec.north_account
                if creator is None and every >= max_corr_seeks:
                    raise QuotaFull("lobby", every, max_corr_seeks)
                if creator is not None and by_accounts >= max_corr_seeks:
                    # issue 51: an account's seek crowds out the oldest seek of the address group holding
                    # the most places (web/round/correspondence.py, crowded_out), when that group holds
                    # more than the creator's would
                    most, mine = (int(x) for x in conn.execute(_CORR_GROUPS, {"g": rec.address or rec.id}).one())
                    if most < mine + 2:
                        raise QuotaFull("lobby-shared", by_accounts, max_corr_seeks)
            self._insert(conn, rec, job_level, max_jobs, max_client_jobs, job_lane)

    # -- the AI's admission control (issue 33, web/common/fairshare.py) -------------------------------
    def admission_lock(self, conn: Connection) -> None:
        """Take the AI admission's turn in ``conn``'s transaction: admissions on every process run one
        after another (PostgreSQL's advisory lock; on SQLite every write transaction already does)."""
        if self.postgres:
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('jericho-ai-admission'))"))

    def ai_load(
        self,
        conn: Connection,
        game_id: str,
        since: float,
        fresh: float,
        address: str | None = None,
        account: int | None = None,
    ) -> dict[str, int]:
        """How many AI games (other than ``game_id``) of each level are being played: not over, and
        either their player's turn began after ``fresh`` or their player has moved and they changed
        after ``since``; with ``address``/``account``, only that client's (its address or account)."""
        params = {"since": since, "fresh": fresh, "id": game_id}
        if address is None and account is None:
            rows = conn.execute(_AI_LOAD, params).fetchall()
        else:
            rows = conn.execute(_AI_LOAD_OF, {**params, "address": address, "account": account}).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def ai_games_of(
        self, conn: Connection, address: str, account: int | None, since: float, fresh: float
    ) -> tuple[int, int]:
        """The AI games being played (see :meth:`ai_load`) of a client: (of its address, of its account)."""
        params = {"address": address, "account": account, "since": since, "fresh": fresh}
        row = conn.execute(_AI_GAMES_OF, params).first()
        return (int(row[0]), int(row[1])) if row is not None else (0, 0)

    def unstarted_ai_games(self, cut: float, limit: int = 50) -> list[str]:
        """AI games whose player has not moved although it has been their turn since before ``cut``
        (candidates for the abort; each is checked again under its lock)."""
        with self.reader.connect() as conn:
            return [r[0] for r in conn.execute(_AI_UNSTARTED, {"cut": cut, "n": limit})]

    def lane_wait(self, conn: Connection, lane: int, now: float) -> float:
        """How long the oldest job of ``lane`` nobody thinks about has waited (0: none waits)."""
        oldest = conn.execute(_LANE_WAIT, {"lane": lane, "now": now}).scalar_one()
        return 0.0 if oldest is None else max(0.0, now - float(oldest))

    def ai_capacity(self, conn: Connection, now: float) -> tuple[int, int]:
        """The slots of the AI runners alive on this database: (any job, cheap lane only)."""
        row = conn.execute(_CAPACITY, {"since": now - RUNNER_TTL}).first()
        return (int(row[0] or 0), int(row[1] or 0)) if row is not None else (0, 0)

    def runner_beat(self, name: str, slots: int, cheap_slots: int) -> None:
        """An AI runner is alive with these slots (renewed every few seconds)."""
        now = time.time()
        with self.engine.begin() as conn:
            n = conn.execute(
                text("UPDATE ai_runners SET slots = :s, cheap_slots = :c, seen_at = :t WHERE name = :n"),
                {"s": slots, "c": cheap_slots, "t": now, "n": name},
            ).rowcount
            if n == 0:
                conn.execute(
                    text("INSERT INTO ai_runners (name, slots, cheap_slots, seen_at) VALUES (:n, :s, :c, :t)"),
                    {"s": slots, "c": cheap_slots, "t": now, "n": name},
                )
            conn.execute(text("DELETE FROM ai_runners WHERE seen_at < :old"), {"old": now - 60 * RUNNER_TTL})

    def runner_gone(self, name: str) -> None:
        """An AI runner stopped: its slots count no more."""
        with self.engine.begin() as conn:
            conn.execute(text("DELETE FROM ai_runners WHERE name = :n"), {"n": name})

    def _client_jobs(self, conn: Connection, rec: GameRecord) -> int:
        params = {"id": rec.id, "address": rec.address, "account": human_account(rec)}
        return int(conn.execute(_CLIENT_JOBS, params).scalar_one())

    def _insert(
        self,
        conn: Connection,
        rec: GameRecord,
        job_level: str | None,
        max_jobs: int | None,
        max_client_jobs: int | None = None,
        job_lane: int = 1,
    ) -> None:
        if job_level is not None and max_client_jobs is not None:
            n = self._client_jobs(conn, rec)
            if n >= max_client_jobs:
                raise QuotaFull("ai", n, max_client_jobs)
        conn.execute(_INSERT_GAME, _row(rec))
        tx = Tx(self, conn, rec.id, rec.version)
        if rec.moves:
            tx.append_moves(0, rec.moves)
        if job_level is not None:
            if max_jobs is not None and tx.waiting_jobs() >= max_jobs:
                raise QueueFull(max_jobs)
            tx.put_job(rec, rec.version, job_level, job_lane)
        self._notify(conn, GAMES_CHANNEL, f"{rec.id} {rec.version}")
        if rec.public:
            self._notify(conn, GAMES_CHANNEL, f"{LOBBY_ID} 0")

    @contextmanager
    def write(self, game_id: str) -> Iterator[Tx]:
        """A transaction holding ``game_id``'s row lock; commits when the block ends without error.

        Raises :class:`KeyError` when there is no such game."""
        with self.engine.begin() as conn:
            yield self.lock(conn, game_id)

    @contextmanager
    def batch(self) -> Iterator[Connection]:
        """One transaction for several games' changes (group commit: one flush to disk for all);
        each change takes its game's row lock with :meth:`lock`."""
        with self.engine.begin() as conn:
            yield conn

    def lock(self, conn: Connection, game_id: str) -> Tx:
        """Lock ``game_id``'s row in ``conn``'s transaction (``KeyError``: no such game)."""
        tx = Tx(self, conn, game_id, 0)
        row = tx._run("lock", {"id": game_id}).fetchone()
        if row is None or row[0] is None:
            raise KeyError(game_id)
        tx.version = int(row[0])
        return tx

    # -- the AI job queue ----------------------------------------------------------------
    def claim_job(
        self, worker: str, lease: float, idle_clients_only: bool = False, lanes: tuple[int, ...] | None = None
    ) -> AIJob | None:
        """Claim an AI job nobody holds (or whose holder's lease ran out), for ``lease`` seconds.

        Lanes first (issue 33): a job of the cheap lane before any expensive one, the deferred lane
        last; ``lanes``: only jobs of these lanes (a runner's cheap slot takes lane 0 only).
        Fair share (issue 22): within a lane the addresses take turns.  The job claimed is the oldest of the
        addresses with the fewest jobs being thought about now (by any worker), so one client's
        burst never queues ahead of another client's reply; ``idle_clients_only``: only a job of an
        address with none being thought about (a runner's last free slot is kept for those)."""
        now = time.time()
        lock = " FOR UPDATE OF j SKIP LOCKED" if self.postgres else ""
        running = "SELECT {0} FROM ai_jobs k WHERE k.lease_until >= :now AND k.address = j.address"
        idle = f" AND NOT EXISTS ({running.format('1')})" if idle_clients_only else ""
        # an address's analysis streams count as work being thought about for it (web/learn/analysis_stream.py)
        analysing = "SELECT count(*) FROM analysis_runs r WHERE r.lease_until >= :now AND r.address = j.address"
        only = f" AND j.lane IN ({', '.join(str(int(n)) for n in lanes)})" if lanes else ""
        with self.engine.begin() as conn:
            row = conn.execute(
                text(
                    "SELECT j.game_id, j.version, j.level, j.start_position, j.moves FROM ai_jobs j "
                    f"WHERE (j.lease_until IS NULL OR j.lease_until < :now){idle}{only} "
                    f"ORDER BY j.lane, ({running.format('count(*)')}) + ({analysing}), j.created_at, j.game_id "
                    "LIMIT 1" + lock
                ),
                {"now": now},
            ).first()
            if row is None:
                return None
            conn.execute(
                text("UPDATE ai_jobs SET claimed_by = :w, lease_until = :until WHERE game_id = :id"),
                {"w": worker, "until": now + lease, "id": row[0]},
            )
            # the game's page now says "thinking" instead of a place in the queue
            self._notify(conn, GAMES_CHANNEL, f"{row[0]} -1")
        return AIJob(row[0], int(row[1]), row[2], row[3], row[4].split() if row[4] else [])

    def claimable_jobs(self, idle_clients_only: bool = False) -> int:
        """How many AI jobs :meth:`claim_job` could claim now with ``idle_clients_only`` (the runner
        asks before it takes a slot back from an analysis stream for them)."""
        running = "SELECT 1 FROM ai_jobs k WHERE k.lease_until >= :now AND k.address = j.address"
        idle = f" AND NOT EXISTS ({running})" if idle_clients_only else ""
        with self.reader.connect() as conn:
            sql = f"SELECT count(*) FROM ai_jobs j WHERE (j.lease_until IS NULL OR j.lease_until < :now){idle}"
            return int(conn.execute(text(sql), {"now": time.time()}).scalar_one())

    def renew_job(self, job: AIJob, worker: str, lease: float) -> bool:
        """Extend a claim; False when the job is gone (the game moved on) or another worker took it."""
        with self.engine.begin() as conn:
            n = conn.execute(
                text(
                    "UPDATE ai_jobs SET lease_until = :until WHERE game_id = :id AND version = :v AND claimed_by = :w"
                ),
                {"until": time.time() + lease, "id": job.game_id, "v": job.version, "w": worker},
            ).rowcount
        return bool(n == 1)

    def release_job(self, job: AIJob, worker: str) -> None:
        """Give a claimed job back to the queue (the worker is stopping)."""
        with self.engine.begin() as conn:
            conn.execute(
                text(
                    "UPDATE ai_jobs SET claimed_by = NULL, lease_until = NULL "
                    "WHERE game_id = :id AND version = :v AND claimed_by = :w"
                ),
                {"id": job.game_id, "v": job.version, "w": worker},
            )

    def waiting_jobs(self) -> int:
        """How many AI jobs wait for a worker."""
        with self.reader.connect() as conn:
            return int(conn.execute(_WAITING_JOBS, {"now": time.time()}).scalar_one())

    # -- presence, the lobby, a browser's games (issue 12) -------------------------------------
    def set_presence(self, game_id: str, process: str, counts: dict[str, int], now: float) -> None:
        """Store this process's connection counts of a game's seats (and watchers), announced to all."""
        with self.engine.begin() as conn:
            for side, n in counts.items():
                changed = conn.execute(
                    text(
                        "UPDATE presence SET conns = :n, seen_at = :now "
                        "WHERE game_id = :id AND side = :side AND process = :p"
                    ),
                    {"n": n, "now": now, "id": game_id, "side": side, "p": process},
                ).rowcount
                if not changed:
                    conn.execute(
                        text(
                            "INSERT INTO presence (game_id, side, process, conns, seen_at) "
                            "VALUES (:id, :side, :p, :n, :now)"
                        ),
                        {"n": n, "now": now, "id": game_id, "side": side, "p": process},
                    )
            self._notify(conn, GAMES_CHANNEL, f"{game_id} {PRESENCE_VERSION}")

    def beat(self, process: str, now: float) -> None:
        """Renew ``seen_at`` of every seat this process holds connections of (the heartbeat)."""
        with self.engine.begin() as conn:
            conn.execute(
                text("UPDATE presence SET seen_at = :now WHERE process = :p AND conns > 0"), {"now": now, "p": process}
            )

    def presence(self, game_id: str, now: float, ttl: float, conn: Connection | None = None) -> Presence:
        """Who is connected to ``game_id`` across every process (read in ``conn``'s transaction if given)."""
        sql = text("SELECT side, conns, seen_at FROM presence WHERE game_id = :id")
        if conn is not None:
            rows = conn.execute(sql, {"id": game_id}).all()
        else:
            with self.reader.connect() as c:
                rows = c.execute(sql, {"id": game_id}).all()
        return Presence.from_rows(rows, now, ttl)

    def presence_of(self, game_ids: list[str], now: float, ttl: float) -> dict[str, Presence]:
        """:meth:`presence` of several games at once."""
        out: dict[str, list[Any]] = {g: [] for g in game_ids}
        if not game_ids:
            return {}
        with self.reader.connect() as c:
            for i in range(0, len(game_ids), 500):
                chunk = game_ids[i : i + 500]
                names = ", ".join(f":g{k}" for k in range(len(chunk)))
                rows = c.execute(
                    text(f"SELECT game_id, side, conns, seen_at FROM presence WHERE game_id IN ({names})"),
                    {f"g{k}": g for k, g in enumerate(chunk)},
                )
                for r in rows:
                    out[r[0]].append(r[1:])
        return {g: Presence.from_rows(rows, now, ttl) for g, rows in out.items()}

    def forget_presence(self, before: float) -> None:
        """Drop presence rows nobody renewed since ``before`` (games long left)."""
        with self.engine.begin() as conn:
            conn.execute(text("DELETE FROM presence WHERE seen_at < :t"), {"t": before})

    def public_games(self, joined: bool, limit: int = 100) -> list[GameRecord]:
        """Public online games still going: open seeks (``joined`` False, oldest first) or games being
        played (newest change first); without their moves (``moves`` holds none)."""
        order = "created_at, id" if not joined else "updated_at DESC, id"
        with self.reader.connect() as conn:
            rows = conn.execute(
                text(
                    f"SELECT {', '.join(_COLUMNS)} FROM games WHERE public = 1 AND joined = :j "
                    f"AND result IS NULL AND reason IS NULL AND mode = 'online' ORDER BY {order} LIMIT :n"
                ),
                {"j": int(joined), "n": limit},
            ).mappings()
            return [_record(r, []) for r in rows]

    def account_game_ids(self, account: int, limit: int) -> list[str]:
        """The ids of the games with a seat bound to ``account``, newest change first (at most ``limit``)."""
        with self.reader.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT id FROM games WHERE south_account = :a OR north_account = :a "
                    "ORDER BY updated_at DESC, id LIMIT :n"
                ),
                {"a": account, "n": limit},
            ).all()
            return [str(r[0]) for r in rows]

    def summaries(self, game_ids: list[str]) -> list[tuple[GameRecord, int]]:
        """Games by id (unknown ids left out), each without its moves but with its number of plies."""
        out: list[tuple[GameRecord, int]] = []
        with self.reader.connect() as conn:
            for i in range(0, len(game_ids), 500):
                chunk = game_ids[i : i + 500]
                params = {f"g{k}": g for k, g in enumerate(chunk)}
                names = ", ".join(f":g{k}" for k in range(len(chunk)))
                plies = dict(
                    conn.execute(
                        text(f"SELECT game_id, count(*) FROM moves WHERE game_id IN ({names}) GROUP BY game_id"),
                        params,
                    ).all()
                )
                rows = conn.execute(
                    text(f"SELECT {', '.join(_COLUMNS)} FROM games WHERE id IN ({names})"), params
                ).mappings()
                out += [(_record(r, []), int(plies.get(r["id"], 0))) for r in rows]
        return out


@dataclass
class Presence:
    """Who is connected to a game, across processes: per seat whether it is present and since when
    it has been away (``None``: never seen), and how many watch."""

    present: dict[str, bool] = field(default_factory=lambda: {"south": False, "north": False})
    away_since: dict[str, float | None] = field(default_factory=lambda: {"south": None, "north": None})
    watchers: int = 0

    @classmethod
    def from_rows(cls, rows: Any, now: float, ttl: float) -> Presence:
        """From ``(side, conns, seen_at)`` rows: live rows count, stale ones (a killed process) do not."""
        p = cls()
        for side, conns, seen_at in rows:
            live = conns > 0 and seen_at >= now - ttl
            if side == "watchers":
                p.watchers += int(conns) if live else 0
                continue
            if side not in p.present:
                continue
            p.present[side] = p.present[side] or live
            last = p.away_since[side]
            p.away_since[side] = seen_at if last is None else max(last, seen_at)
        for side, here in p.present.items():
            if here:
                p.away_since[side] = None
        return p


def human_account(rec: GameRecord) -> int | None:
    """The account of the person an AI game's jobs answer (None: anonymous, or not an AI game)."""
    if rec.mode != "ai" or rec.ai_side is None:
        return None
    return rec.north_account if rec.ai_side == "south" else rec.south_account


class QuotaFull(RuntimeError):
    """One client (address or account) holds its quota of ``what`` ("ai": AI jobs waiting, "seeks":
    open seeks, "reviews": reviews waiting; "lobby": the correspondence list is full for an anonymous
    seek, "lobby-shared": for an account's, no group holding more places than the creator's would):
    the change that would add one is refused."""

    def __init__(self, what: str, have: int, limit: int) -> None:
        super().__init__(f"this client already has {have} {what} waiting (the quota is {limit})")
        self.what = what
        self.have = have
        self.limit = limit


class QueueFull(RuntimeError):
    """The AI job queue holds its maximum: the change that would add a job is refused."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the AI queue is full ({limit} moves waiting)")
        self.limit = limit


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # SQLAlchemy's "begin" event issues BEGIN IMMEDIATE itself
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
