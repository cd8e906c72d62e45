"""``jericho show FILE`` and ``jericho check FILE``: read game records (docs/notation.md).

``show`` prints each game's final position as the terminal board, with its result and
score; ``check`` validates the file and prints ``ok: N moves, result R`` (one line per
game in a multi-game file), or the first error as ``FILE:LINE:COLUMN: message`` and
exits with status 1.  Missing, unreadable and non-UTF-8 files get a one-line message,
never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from jericho_game.cli.terminal import colour_wanted, render_board, render_status
from jericho_game.errors import RecordError
from jericho_game.record import Record, load_file, read_records

__all__ = ["add_arguments", "load_file", "run"]


def _located(path: str, exc: RecordError) -> str:
    if exc.line:
        return f"{path}:{exc.line}:{exc.column}: {exc.reason}"
    return exc.reason if exc.reason.startswith("cannot read") else f"{path}: {exc.reason}"


def add_arguments(parser: argparse.ArgumentParser, name: str = "show") -> None:
    """Options of ``jericho show`` / ``jericho check``."""
    parser.add_argument("file", metavar="FILE", help="a game record (one or more games), see docs/notation.md")
    if name == "show":
        parser.add_argument("--no-color", action="store_true", help="plain text, no ANSI colour")


def _summary(record: Record) -> str:
    return f"ok: {len(record.moves)} moves, result {record.result}"


def run(args: argparse.Namespace) -> int:
    """Run ``show`` or ``check`` (``args._command``) on ``args.file``; returns the exit status."""
    command = getattr(args, "_command", "check")
    path: str = args.file
    try:
        records = read_records(load_file(path))
    except RecordError as exc:
        print(f"jericho {command}: {_located(path, exc)}", file=sys.stderr)
        return 1
    if command == "check":
        if len(records) == 1:
            print(_summary(records[0]))
        else:
            for i, record in enumerate(records, 1):
                print(f"game {i}: {_summary(record)}")
            print(f"ok: {len(records)} games")
        return 0
    colour = colour_wanted(sys.stdout, getattr(args, "no_color", False))
    for i, record in enumerate(records, 1):
        if len(records) > 1:
            print(f"== game {i} of {len(records)} ==")
        south, north = record.tags.get("South", "?"), record.tags.get("North", "?")
        event = record.tags.get("Event", "?")
        print(f"{event}, {record.tags.get('Date', '?')}: South {south} - North {north}")
        print(render_board(record.game, colour))
        print(render_status(record.game, colour, record.result))
        s, n = record.game.score()
        print(f"Result: {record.result}   Score: South {s} - North {n}   Moves: {len(record.moves)}")
        if i < len(records):
            print()
    return 0
