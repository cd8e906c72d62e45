"""``jericho backup`` and ``jericho restore``: the web app's database, copied while it serves.

``jericho backup --db URL OUT`` writes a consistent copy of the database (a SQLite file, or a
``pg_dump`` custom archive for PostgreSQL) while games go on; ``jericho restore --db URL IN
[--force]`` loads one into an empty database, or replaces a non-empty one with ``--force``.
The work is web/storage/backup.py's; docs/operations.md says how to run them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser, name: str = "backup") -> None:
    """Options of ``jericho backup`` and ``jericho restore``."""
    parser.add_argument("--db", default=None, help="SQLite file or database URL: the one `jericho serve` uses")
    if name == "backup":
        parser.add_argument("out", type=Path, help="the backup file to write (replaced once the copy is complete)")
    else:
        parser.add_argument("source", type=Path, help="the backup file made by `jericho backup`")
        parser.add_argument(
            "--force", action="store_true", help="replace a database that is not empty (every row in it goes)"
        )
    parser.add_argument(
        "--pg-bin", default=None, help="folder of pg_dump/pg_restore (default: the PATH, else the newest installed)"
    )


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def run(args: argparse.Namespace) -> int:
    """Run ``jericho backup`` or ``jericho restore``; 0 on success, 2 with the reason otherwise."""
    from jericho_game.web.storage.backup import BackupError, backup, restore
    from jericho_game.web.storage.database import resolve_db_url

    command = args._command
    url = resolve_db_url(args.db)
    try:
        if command == "backup":
            done = backup(url, args.out, pg_bin=args.pg_bin)
        else:
            done = restore(url, args.source, force=args.force, pg_bin=args.pg_bin)
    except BackupError as exc:
        print(f"jericho {command}: {exc}", file=sys.stderr)
        return 2
    counts = ", ".join(
        f"{n} {what}" for what, n in (("games", done.games), ("accounts", done.accounts)) if n is not None
    )
    counts = f", {counts}" if counts else ""
    if command == "backup":
        print(f"backup written to {done.where} ({done.kind}, {_size(done.size)}{counts})")
    else:
        print(f"restored into {done.where} ({done.kind}{counts}); start its servers again")
    return 0
