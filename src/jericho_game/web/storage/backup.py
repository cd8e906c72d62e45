"""Backups of the game database while it serves, and their restore (``jericho backup`` / ``restore``).

SQLite: SQLite's online backup API (:meth:`sqlite3.Connection.backup`) copies every page in one
step, inside one read transaction: the copy is the database as it was when that transaction
began, every committed move in it and nothing half-written; in WAL mode (the store's) the
servers' writers never wait for it.  The copy is written beside ``OUT`` and renamed onto it once
checked, so a backup cut short never looks like a finished one.

PostgreSQL: ``pg_dump --format=custom``, which reads everything in one ``REPEATABLE READ``
transaction (one snapshot: the same guarantee) without blocking the servers' writes; see
:data:`PG_DUMP_FLAGS`.  ``pg_restore`` loads it in one transaction.

Restore refuses a target that holds any row unless told to replace it (``force``): the
operator's live database is never overwritten by a slip of the URL.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BackupError",
    "Written",
    "PG_DUMP_FLAGS",
    "PG_RESTORE_FLAGS",
    "backup",
    "restore",
    "sqlite_path",
]

#: ``pg_dump``'s flags, and why each:
#: ``--format=custom``: one compressed file that ``pg_restore`` reads (table by table, in any order,
#: ``--list`` to inspect it); ``--no-owner`` / ``--no-privileges``: the archive names no role, so it
#: restores into a database owned by whichever role the target server uses (the source's roles need
#: not exist there); ``--lock-wait-timeout``: pg_dump takes a share lock on each table at the start;
#: were a schema change holding one (an ``ALTER TABLE`` on start), it gives up after 60 s with a
#: message instead of waiting behind it while the servers' queries queue up behind pg_dump.
#: pg_dump's one ``REPEATABLE READ`` transaction is the consistent snapshot (``--serializable-deferrable``
#: is not needed: the app's writes are decided under row locks, so a snapshot holds no anomaly a
#: serializable one would avoid, and it may wait for a quiet moment that a busy site never has).
PG_DUMP_FLAGS = ("--format=custom", "--no-owner", "--no-privileges", "--lock-wait-timeout=60000")
#: ``pg_restore``'s flags: ``--single-transaction`` (all of it or nothing), ``--exit-on-error``
#: (the first error stops it, rather than a partial database with a list of errors), and no owner or
#: privileges from the archive, as above.
PG_RESTORE_FLAGS = ("--single-transaction", "--exit-on-error", "--no-owner", "--no-privileges")

_SQLITE_MAGIC = b"SQLite format 3\x00"
_PG_MAGIC = b"PGDMP"


class BackupError(RuntimeError):
    """A backup or restore that could not be done; the message says why, and nothing was changed."""


@dataclass(frozen=True)
class Written:
    """What a backup or restore wrote: the file or database, its kind, size and counts."""

    where: str
    kind: str  # "SQLite database" or "PostgreSQL custom archive"
    size: int  # bytes of the backup file
    games: int | None  # games in it (None: not counted)
    accounts: int | None


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///`` URL (``None`` for any other database)."""
    if not url.startswith("sqlite"):
        return None
    from sqlalchemy.engine import make_url

    database = make_url(url).database
    if not database or database == ":memory:":
        raise BackupError(f"{url!r} is not a database file: only a SQLite file can be backed up")
    return Path(database)


def _count(conn: sqlite3.Connection, table: str) -> int | None:
    try:
        return int(conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])
    except sqlite3.Error:
        return None


def _sqlite_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    return sorted(name for (name,) in rows)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def backup(url: str, out: Path, pg_bin: str | None = None) -> Written:
    """Write a consistent copy of the database at ``url`` to ``out`` while it is in use.

    Replaces ``out`` only once the copy is complete and checked (a previous backup of that name
    stays whole until then).  Raises :class:`BackupError` with the reason otherwise."""
    out = Path(out)
    if out.is_dir():
        raise BackupError(f"{out} is a folder: give the backup file's name")
    if not out.parent.is_dir():
        raise BackupError(f"the folder {out.parent} does not exist")
    part = out.with_name(out.name + ".part")
    try:
        path = sqlite_path(url)
        written = _backup_sqlite(path, part) if path is not None else _backup_pg(url, part, pg_bin)
        os.replace(part, out)
    finally:
        part.unlink(missing_ok=True)
    return Written(str(out), written.kind, out.stat().st_size, written.games, written.accounts)


def _backup_sqlite(path: Path, part: Path) -> Written:
    if not path.is_file():
        raise BackupError(f"there is no database file {path}")
    part.unlink(missing_ok=True)
    try:
        # mode=rw: a missing file is an error, never a new empty database
        src = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=30)
    except sqlite3.Error as exc:
        raise BackupError(f"cannot open {path}: {exc}") from exc
    try:
        dst = sqlite3.connect(part)
        try:
            # pages=-1: every page in one step, so in one read transaction of the source: a snapshot
            # (copied in several steps, a write by a server between two would restart the copy)
            src.backup(dst, pages=-1)
            # the copy stands alone: no WAL beside it (the store turns WAL on again when it opens it)
            dst.execute("PRAGMA journal_mode=DELETE")
            check = dst.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise BackupError(f"the copy of {path} failed its check: {check}")
            games, accounts = _count(dst, "games"), _count(dst, "accounts")
        finally:
            dst.close()
    except sqlite3.Error as exc:
        raise BackupError(f"cannot back up {path}: {exc}") from exc
    finally:
        src.close()
    _fsync(part)
    return Written(str(part), "SQLite database", part.stat().st_size, games, accounts)


def _pg_tool(name: str, pg_bin: str | None) -> str:
    """The path of PostgreSQL's ``name`` (``pg_dump``, ``pg_restore``): in ``pg_bin`` when given,
    else on the PATH, else the newest of Debian's ``/usr/lib/postgresql/*/bin``."""
    if pg_bin:
        found = Path(pg_bin) / name
        if not found.is_file():
            raise BackupError(f"there is no {name} in {pg_bin}")
        return str(found)
    which = shutil.which(name)
    if which:
        return which
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(Path(p).parts[-3]))
    if versions:
        return versions[-1]
    raise BackupError(f"PostgreSQL's {name} is missing: install the PostgreSQL client (apt install postgresql-client)")


def _libpq(url: str) -> tuple[str, dict[str, str]]:
    """A SQLAlchemy PostgreSQL URL as a libpq connection string for ``--dbname``, and the
    environment that carries its password (``PGPASSWORD``: an argument would show in ``ps``)."""
    from sqlalchemy.engine import make_url

    u = make_url(url)
    params: dict[str, str] = {}
    if u.host:
        params["host"] = u.host
    if u.port:
        params["port"] = str(u.port)
    if u.username:
        params["user"] = u.username
    if u.database:
        params["dbname"] = u.database
    for key, value in u.query.items():  # host=/run/postgresql, port=, sslmode=...
        params[key] = value if isinstance(value, str) else value[-1]
    env = dict(os.environ)
    if u.password:
        env["PGPASSWORD"] = str(u.password)

    def quote(v: str) -> str:
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"

    return " ".join(f"{k}={quote(v)}" for k, v in params.items()), env


def _shown(url: str) -> str:
    """The URL as messages print it: without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _run_tool(cmd: list[str], env: dict[str, str], what: str) -> str:
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise BackupError(f"{what}: cannot run {cmd[0]}: {exc}") from exc
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        raise BackupError(f"{what}: {Path(cmd[0]).name} failed: " + " / ".join(lines[-3:] or ["no message"]))
    return done.stdout


def _backup_pg(url: str, part: Path, pg_bin: str | None) -> Written:
    conninfo, env = _libpq(url)
    _run_tool([_pg_tool("pg_dump", pg_bin), *PG_DUMP_FLAGS, f"--file={part}", f"--dbname={conninfo}"], env, "backup")
    _fsync(part)
    return Written(str(part), "PostgreSQL custom archive", part.stat().st_size, None, None)


# -- restore ---------------------------------------------------------------------------------------


def _kind_of(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as exc:
        raise BackupError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if head.startswith(_SQLITE_MAGIC):
        return "sqlite"
    if head.startswith(_PG_MAGIC):
        return "postgresql"
    raise BackupError(f"{path} is not a backup made by `jericho backup` (neither a SQLite file nor a pg_dump archive)")


def _refuse_unless_forced(where: str, held: dict[str, int], force: bool) -> None:
    if held and not force:
        listed = ", ".join(f"{t}: {n}" for t, n in sorted(held.items(), key=lambda kv: -kv[1])[:5])
        raise BackupError(
            f"{where} is not empty ({listed}{', ...' if len(held) > 5 else ''}): nothing was changed; "
            "restoring would replace all of it: add --force to do so (stop its servers first)"
        )


def restore(url: str, source: Path, force: bool = False, pg_bin: str | None = None) -> Written:
    """Load the backup ``source`` into the database at ``url``, which must be empty unless ``force``.

    A SQLite backup restores into a SQLite file, a PostgreSQL archive into a PostgreSQL database
    (which must exist: ``createdb``).  The servers of the target should be stopped: they hold
    games in memory that the restore replaces.  Raises :class:`BackupError`, having changed
    nothing, when the backup is not one or the target holds rows and ``force`` is not given."""
    source = Path(source)
    if not source.is_file():
        raise BackupError(f"there is no backup file {source}")
    kind = _kind_of(source)
    path = sqlite_path(url)
    if (kind == "sqlite") != (path is not None):
        made = "SQLite" if kind == "sqlite" else "PostgreSQL"
        raise BackupError(
            f"{source} is a {made} backup and {_shown(url)} is not a {made} database: restore it into a {made} one "
            "(moving between the two is not supported)"
        )
    if path is not None:
        return _restore_sqlite(path, source, force)
    return _restore_pg(url, source, force, pg_bin)


def _restore_sqlite(path: Path, source: Path, force: bool) -> Written:
    try:
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BackupError(f"cannot open the backup {source}: {exc}") from exc
    try:
        try:
            if "games" not in _sqlite_tables(src):
                raise BackupError(f"{source} is a SQLite file but not a game database (it has no games table)")
            check = src.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.Error as exc:
            raise BackupError(f"cannot read the backup {source}: {exc}") from exc
        if check != "ok":
            raise BackupError(f"the backup {source} is damaged: {check}")
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            dst = sqlite3.connect(path, timeout=5)
        except sqlite3.Error as exc:
            raise BackupError(f"cannot open {path}: {exc}") from exc
        try:
            held = {t: n for t in _sqlite_tables(dst) if (n := _count(dst, t) or 0)}
            _refuse_unless_forced(str(path), held, force)
            # the page-by-page copy replaces the whole target through its own connection (WAL
            # included), in one step; then WAL again, as the store keeps it
            src.backup(dst, pages=-1)
            dst.execute("PRAGMA journal_mode=WAL")
            games, accounts = _count(dst, "games"), _count(dst, "accounts")
        except sqlite3.OperationalError as exc:
            raise BackupError(f"cannot write {path} ({exc}): is a server still using it? stop it first") from exc
        finally:
            dst.close()
    finally:
        src.close()
    return Written(str(path), "SQLite database", source.stat().st_size, games, accounts)


def _restore_pg(url: str, source: Path, force: bool, pg_bin: str | None) -> Written:
    from sqlalchemy import create_engine, inspect, text

    conninfo, env = _libpq(url)
    listing = _run_tool([_pg_tool("pg_restore", pg_bin), "--list", str(source)], env, "restore")
    if not re.search(r"^\d+; \d+ \d+ TABLE \S+ games ", listing, re.M):
        raise BackupError(f"{source} is a pg_dump archive but not of a game database (it has no games table)")
    engine = create_engine(url)
    try:
        try:
            with engine.begin() as conn:
                names = inspect(conn).get_table_names()
                held = {}
                for name in names:
                    n = conn.execute(text(f'SELECT count(*) FROM (SELECT 1 FROM "{name}" LIMIT 1) AS x')).scalar_one()
                    if n:
                        held[name] = int(conn.execute(text(f'SELECT count(*) FROM "{name}"')).scalar_one())
                _refuse_unless_forced(_shown(url), held, force)
                # replaced: every table of the target goes (those of features the backup predates too),
                # so the restored database is the backup's and nothing else
                for name in names:
                    conn.execute(text(f'DROP TABLE IF EXISTS "{name}" CASCADE'))
        except BackupError:
            raise
        except Exception as exc:  # noqa: BLE001 - the driver's error, said once
            raise BackupError(f"cannot open the database {_shown(url)} (create it first: createdb): {exc}") from exc
        _run_tool(
            [_pg_tool("pg_restore", pg_bin), *PG_RESTORE_FLAGS, f"--dbname={conninfo}", str(source)], env, "restore"
        )
        with engine.connect() as conn:
            games = int(conn.execute(text("SELECT count(*) FROM games")).scalar_one())
            has_accounts = "accounts" in inspect(conn).get_table_names()
            accounts = int(conn.execute(text("SELECT count(*) FROM accounts")).scalar_one()) if has_accounts else None
    finally:
        engine.dispose()
    return Written(_shown(url), "PostgreSQL custom archive", source.stat().st_size, games, accounts)
