"""Persistence of web games: the only module of the web app that talks to the database.

Games are kept with SQLAlchemy Core, in SQLite by default (a file under the user's data
directory) or in any database SQLAlchemy reaches by URL (``postgresql://...``).  A game is
stored as its start position plus the list of moves played; the server rebuilds the
:class:`jericho_game.Game` by replaying them, so the database never holds derived state that
could disagree with the engine.

Every write is one transaction, committed before the function returns: the server
acknowledges a move only after :meth:`Storage.append_move` has returned.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jericho_game.extras import missing_extra

try:
    from sqlalchemy import (
        Column,
        Float,
        ForeignKey,
        Integer,
        MetaData,
        String,
        Table,
        Text,
        create_engine,
        delete,
        event,
        func,
        insert,
        select,
        update,
    )
    from sqlalchemy.engine import Engine
except ImportError as exc:
    raise missing_extra("the web app's storage", "web", exc) from exc

__all__ = ["GameRecord", "Storage", "StorageError", "default_db_url", "resolve_db_url"]

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
)

moves_table = Table(
    "moves",
    metadata,
    Column("game_id", String(32), ForeignKey("games.id"), primary_key=True),
    Column("ply", Integer, primary_key=True),
    Column("move", String(16), nullable=False),
    Column("played_at", Float, nullable=False),
)


class StorageError(RuntimeError):
    """The database could not be opened or written."""


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
    moves: list[str] = field(default_factory=list)

    def copy(self) -> GameRecord:
        """An independent copy (the moves list and meta are copied too)."""
        return replace(self, moves=list(self.moves), meta=dict(self.meta))


_COLUMNS = [c.name for c in games_table.columns]


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


class Storage:
    """Games in a database reached by a SQLAlchemy URL; every method commits before returning."""

    def __init__(self, url: str) -> None:
        self.url = url
        try:
            if url.startswith("sqlite"):
                self.engine: Engine = create_engine(url, connect_args={"check_same_thread": False})
                event.listen(self.engine, "connect", _sqlite_pragmas)
            else:
                self.engine = create_engine(url, pool_pre_ping=True)
            metadata.create_all(self.engine)
        except Exception as exc:  # noqa: BLE001 - any driver error becomes one clear message
            raise StorageError(f"cannot open the game database {url!r}: {exc}") from exc

    def close(self) -> None:
        """Release the connection pool."""
        self.engine.dispose()

    # -- reading -------------------------------------------------------------------------
    def load(self, game_id: str) -> GameRecord | None:
        """The stored game ``game_id`` with its moves, or ``None`` when there is none."""
        with self.engine.connect() as conn:
            row = conn.execute(select(games_table).where(games_table.c.id == game_id)).mappings().first()
            if row is None:
                return None
            moves = (
                conn.execute(
                    select(moves_table.c.move).where(moves_table.c.game_id == game_id).order_by(moves_table.c.ply)
                )
                .scalars()
                .all()
            )
        data = dict(row)
        data["joined"] = bool(data["joined"])
        data["meta"] = json.loads(data["meta"] or "{}")
        return GameRecord(**data, moves=list(moves))

    def count(self) -> int:
        """How many games are stored."""
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(games_table)).scalar_one())

    # -- writing -------------------------------------------------------------------------
    def create(self, rec: GameRecord) -> None:
        """Insert a new game (with any moves it already has)."""
        with self.engine.begin() as conn:
            conn.execute(insert(games_table).values(**self._row(rec)))
            for ply, mv in enumerate(rec.moves):
                conn.execute(insert(moves_table).values(game_id=rec.id, ply=ply, move=mv, played_at=time.time()))

    def save(self, rec: GameRecord) -> None:
        """Write the game's settings, seats, clock and result (not its moves)."""
        rec.updated_at = time.time()
        row = self._row(rec)
        row.pop("id")
        with self.engine.begin() as conn:
            conn.execute(update(games_table).where(games_table.c.id == rec.id).values(**row))

    def append_move(self, rec: GameRecord, move: str) -> None:
        """Store ``move`` as the next ply and the game's new clock/result in one transaction."""
        ply = len(rec.moves)
        rec.updated_at = time.time()
        row = self._row(rec)
        row.pop("id")
        with self.engine.begin() as conn:
            conn.execute(insert(moves_table).values(game_id=rec.id, ply=ply, move=move, played_at=rec.updated_at))
            conn.execute(update(games_table).where(games_table.c.id == rec.id).values(**row))
        rec.moves.append(move)

    def truncate(self, rec: GameRecord, plies: int) -> None:
        """Take back moves so that ``plies`` remain (undo), with the game's new state, in one transaction."""
        rec.updated_at = time.time()
        row = self._row(rec)
        row.pop("id")
        with self.engine.begin() as conn:
            conn.execute(delete(moves_table).where(moves_table.c.game_id == rec.id, moves_table.c.ply >= plies))
            conn.execute(update(games_table).where(games_table.c.id == rec.id).values(**row))
        del rec.moves[plies:]

    @staticmethod
    def _row(rec: GameRecord) -> dict[str, Any]:
        row = {name: getattr(rec, name) for name in _COLUMNS}
        row["joined"] = int(rec.joined)
        row["meta"] = json.dumps(rec.meta)
        return row


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
