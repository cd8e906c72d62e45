"""``jericho puzzles``: make puzzles from games, and re-verify a puzzle file.

* ``jericho puzzles make GAMES.jgn... [--db URL] --out FILE.jsonl`` walks every position of
  every game (records, and with ``--db`` the finished games of a web server's database) and
  appends each proved puzzle (:mod:`jericho_game.ai.puzzles`) to ``FILE.jsonl``.  It is
  resumable: the games already done are listed in ``FILE.jsonl.done`` and skipped on the next
  run, and puzzles already in the file are never written twice.
* ``jericho puzzles verify [FILE.jsonl]`` re-proves every puzzle (the shipped set by default)
  and exits 1 naming the first puzzles that fail.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from jericho_game.ai.puzzles import (
    Budget,
    Puzzle,
    PuzzleError,
    load_puzzles,
    puzzles_from_game,
    shipped_puzzles,
    verify,
)
from jericho_game.errors import JerichoError
from jericho_game.game import Game
from jericho_game.record import iter_records

__all__ = ["add_arguments", "run", "make", "games_from_records"]

#: Plies within which the same solution found again in one game is the same puzzle.
SAME_LINE_PLIES = 6


def add_arguments(parser: argparse.ArgumentParser, name: str = "puzzles") -> None:
    """Register ``make`` and ``verify``."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    mk = sub.add_parser("make", help="find and prove puzzles in games; appends to --out (resumable)")
    mk.add_argument("games", nargs="*", type=Path, metavar="GAMES.jgn", help="game records (several per file allowed)")
    mk.add_argument("--db", default=None, help="also read the finished games of a web app database (URL or path)")
    mk.add_argument("--out", type=Path, required=True, help="puzzle file (JSON lines), appended to")
    mk.add_argument("--nodes", type=int, default=2_000_000, help="most positions searched per position (default 2e6)")
    mk.add_argument("--seconds", type=float, default=10.0, help="most seconds per position (default 10)")
    mk.add_argument("--max", type=int, default=None, help="stop after this many new puzzles")
    mk.add_argument("--quiet", action="store_true", help="no progress lines")
    ve = sub.add_parser("verify", help="re-prove every puzzle of a file (default: the shipped set)")
    ve.add_argument("file", nargs="?", type=Path, default=None, help="puzzle file (JSON lines)")
    ve.add_argument("--sample", type=int, default=None, help="re-prove only this many, chosen by --seed")
    ve.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")


def games_from_records(paths: list[Path]) -> Iterator[tuple[str, Game, list[str]]]:
    """``(key, start, moves)`` for every game of the record files (key: ``path/file.jgn#index``, the
    path as given, so that two folders' ``game-1.jgn`` stay apart)."""
    for path in paths:
        text = path.read_text(encoding="utf-8")
        for i, rec in enumerate(iter_records(text)):
            start_text = rec.tags.get("Position")
            start = Game.from_position(start_text) if start_text else Game()
            yield f"{path}#{i}", start, [str(m) for m in rec.moves]


def _solver_passes(p: Puzzle) -> bool:
    # the solver's moves are the even-numbered ones; a forced pass is no decision to find
    return any(m == "pass" for m in p.solution[::2])


def make(
    sources: Iterator[tuple[str, Game, list[str]]],
    out: Path,
    budget: Budget,
    max_new: int | None = None,
    log: bool = True,
) -> tuple[int, int]:
    """Append the proved puzzles of ``sources`` to ``out``; returns (new puzzles, games done)."""
    done_path = out.with_name(out.name + ".done")
    done = set(done_path.read_text(encoding="utf-8").split()) if done_path.exists() else set()
    known = {p.id for p in load_puzzles(out.read_text(encoding="utf-8"), str(out))} if out.exists() else set()
    new = games = 0
    t0 = time.perf_counter()
    with out.open("a", encoding="utf-8") as f, done_path.open("a", encoding="utf-8") as d:
        for key, start, moves in sources:
            if key in done:
                continue
            recent: dict[tuple[str, ...], int] = {}
            limits = 0
            for ply, puzzle, why in puzzles_from_game(start, moves, budget, f"{key} "):
                if why is not None:
                    limits += 1
                if puzzle is None or puzzle.id in known or _solver_passes(puzzle):
                    continue
                seen = recent.get(puzzle.solution)
                recent[puzzle.solution] = ply
                if seen is not None and ply - seen <= SAME_LINE_PLIES:
                    continue  # the same idea a move later, both sides having ignored it
                known.add(puzzle.id)
                f.write(_line(puzzle))
                new += 1
            f.flush()
            d.write(key + "\n")
            d.flush()
            games += 1
            if log:
                print(
                    f"{key}: {len(moves)} plies, {new} puzzles so far, {limits} positions over budget,"
                    f" {time.perf_counter() - t0:.0f} s",
                    flush=True,
                )
            if max_new is not None and new >= max_new:
                break
    return new, games


def _line(p: Puzzle) -> str:
    return json.dumps(p.to_json(), sort_keys=True, separators=(",", ":")) + "\n"


def _verify(args: argparse.Namespace) -> int:
    try:
        puzzles = (
            load_puzzles(args.file.read_text(encoding="utf-8"), str(args.file)) if args.file else shipped_puzzles()
        )
    except (OSError, PuzzleError) as exc:
        print(f"jericho puzzles verify: {exc}", file=sys.stderr)
        return 2
    chosen = puzzles
    if args.sample is not None:
        chosen = random.Random(args.seed).sample(puzzles, min(args.sample, len(puzzles)))
    bad = 0
    t0 = time.perf_counter()
    for p in chosen:
        problems = verify(p)
        if problems:
            bad += 1
            print(f"{p.id} ({p.theme}): {'; '.join(problems)}")
    print(f"{len(chosen) - bad}/{len(chosen)} puzzles proved in {time.perf_counter() - t0:.1f} s")
    return 1 if bad else 0


def run(args: argparse.Namespace) -> int:
    """Run ``jericho puzzles ACTION``."""
    if args.action == "verify":
        return _verify(args)
    budget = Budget(nodes=args.nodes, seconds=args.seconds)
    sources: list[Iterator[tuple[str, Game, list[str]]]] = []
    try:
        for path in args.games:
            if not path.is_file():
                raise OSError(f"no such game record file: {path}")
        sources.append(games_from_records(list(args.games)))
        if args.db:
            from jericho_game.web.learn.puzzles import games_from_db

            sources.append(games_from_db(args.db))
        if not args.games and not args.db:
            print("jericho puzzles make: give game records, --db, or both", file=sys.stderr)
            return 2

        def chain() -> Iterator[tuple[str, Game, list[str]]]:
            for s in sources:
                yield from s

        new, games = make(chain(), args.out, budget, args.max, not args.quiet)
    except (OSError, JerichoError, PuzzleError) as exc:
        print(f"jericho puzzles make: {exc}", file=sys.stderr)
        return 2
    print(f"{new} new puzzles from {games} games -> {args.out}")
    return 0
