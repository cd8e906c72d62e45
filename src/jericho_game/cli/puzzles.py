"""``jericho puzzles``: make puzzles from games, and re-verify a puzzle file.

* ``jericho puzzles make GAMES.jgn... [--db URL] [--selfplay N --seed S] --out FILE.jsonl`` walks
  every game (records, with ``--db`` the finished games of a web server's database, with
  ``--selfplay`` N seeded self-play games: :func:`selfplay_games`) from its end backwards, as
  far as the endgame solver decides the positions, and appends each proved puzzle
  (:mod:`jericho_game.ai.puzzles`) to ``FILE.jsonl``.  It is resumable: the games already done
  are listed in ``FILE.jsonl.done`` and skipped on the next run, and puzzles already in the file
  are never written twice.
* ``jericho puzzles verify [FILE.jsonl]`` re-proves every puzzle (the shipped set by default) to
  the end of the game and exits 1 naming the puzzles that fail.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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

__all__ = [
    "add_arguments",
    "run",
    "make",
    "games_from_records",
    "jobs_of",
    "selfplay_game",
    "selfplay_games",
    "SELFPLAY_PLAYERS",
]

#: Plies within which the same solution found again in one game is the same puzzle.
SAME_LINE_PLIES = 6
#: The self-play games' players (``--selfplay``): two MCTS searches with greedy playouts and the
#: MCTS-solver, on simulation budgets only (so a seed gives the same games on any machine), which
#: fight to the end of the game; the weaker one leaves the stronger something to find.
SELFPLAY_PLAYERS = ("mcts:sims=400,greedy=1,solver=1,c=0.3", "mcts:sims=150,greedy=1,solver=1,c=0.3")
#: Random moves at the start of each self-play game (from the seed), so that games differ.
SELFPLAY_OPENING = 4


def add_arguments(parser: argparse.ArgumentParser, name: str = "puzzles") -> None:
    """Register ``make`` and ``verify``."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    mk = sub.add_parser("make", help="find and prove puzzles in games; appends to --out (resumable)")
    mk.add_argument("games", nargs="*", type=Path, metavar="GAMES.jgn", help="game records (several per file allowed)")
    mk.add_argument("--db", default=None, help="also read the finished games of a web app database (URL or path)")
    mk.add_argument("--selfplay", type=int, default=0, metavar="N", help="also play N seeded self-play games")
    mk.add_argument(
        "--deviations", type=int, default=0, metavar="K", help="also try K positions one other move away from each"
    )
    mk.add_argument("--jobs", type=int, default=1, help="worker processes (default 1; the file is the same)")
    mk.add_argument("--seed", type=int, default=0, help="the self-play games' seed (default 0)")
    mk.add_argument("--out", type=Path, required=True, help="puzzle file (JSON lines), appended to")
    mk.add_argument("--nodes", type=int, default=1_000_000, help="most solver nodes per position (default 1e6)")
    mk.add_argument("--seconds", type=float, default=None, help="most seconds per position (default: no limit)")
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


def selfplay_game(seed: int, i: int) -> tuple[str, Game, list[str]]:
    """Self-play game ``i`` of ``seed`` (key ``selfplay:SEED:I``), the same on any machine:
    :data:`SELFPLAY_OPENING` random moves, then :data:`SELFPLAY_PLAYERS` (the stronger one South in
    even games, North in odd ones), each on a simulation budget with a seed drawn from ``seed``."""
    from jericho_game.ai.base import Limit, make_player

    rng = random.Random(f"jericho-puzzles-selfplay:{seed}:{i}")
    game = Game()
    for _ in range(SELFPLAY_OPENING):
        game.play(rng.choice(list(game.legal_moves())))
    specs = SELFPLAY_PLAYERS if i % 2 == 0 else SELFPLAY_PLAYERS[::-1]
    players = {"south": make_player(specs[0]), "north": make_player(specs[1])}
    sims = {"south": _sims(specs[0]), "north": _sims(specs[1])}
    while not game.is_over():
        side = game.turn.value
        game.play(players[side].choose_move(game, Limit(nodes=sims[side], seed=rng.randrange(2**31))))
    return f"selfplay:{seed}:{i}", Game(), [str(m) for m in game.history]


def selfplay_games(count: int, seed: int) -> Iterator[tuple[str, Game, list[str]]]:
    """``count`` self-play games of ``seed`` (:func:`selfplay_game`)."""
    for i in range(count):
        yield selfplay_game(seed, i)


def _sims(spec: str) -> int:
    return int(spec.split("sims=")[1].split(",")[0])


def _solver_passes(p: Puzzle) -> bool:
    # the solver's moves are the even-numbered ones; a forced pass is no decision to find
    return any(m == "pass" for m in p.solution[::2])


#: One game to scan: its key, and what gives ``(key, start, moves)`` (run in a worker process).
Job = tuple[str, Callable[[], tuple[str, Game, list[str]]]]


def _given(key: str, start: str, moves: list[str]) -> tuple[str, Game, list[str]]:
    return key, Game.from_position(start), moves


def jobs_of(sources: Iterator[tuple[str, Game, list[str]]]) -> Iterator[Job]:
    """Games already in hand as :data:`Job`\\ s."""
    for key, start, moves in sources:
        yield key, functools.partial(_given, key, start.position(), moves)


def _scan(job: Job, nodes: int | None, seconds: float | None, deviations: int) -> tuple[str, int, list[Any]]:
    key, get = job
    _key, start, moves = get()
    found = list(puzzles_from_game(start, moves, Budget(nodes, seconds), f"{key} ", deviations))
    return key, len(moves), found


def make(
    sources: Iterator[Job],
    out: Path,
    budget: Budget,
    max_new: int | None = None,
    log: bool = True,
    deviations: int = 0,
    jobs: int = 1,
) -> tuple[int, int]:
    """Append the proved puzzles of ``sources`` to ``out``; returns (new puzzles, games done).

    ``jobs`` worker processes scan the games; the puzzles are written in the games' order, so
    the file does not depend on ``jobs``."""
    done_path = out.with_name(out.name + ".done")
    done = set(done_path.read_text(encoding="utf-8").split()) if done_path.exists() else set()
    known = {p.id for p in load_puzzles(out.read_text(encoding="utf-8"), str(out))} if out.exists() else set()
    new = games = 0
    t0 = time.perf_counter()
    todo = (job for job in sources if job[0] not in done)
    scan = functools.partial(_scan, nodes=budget.nodes, seconds=budget.seconds, deviations=deviations)
    pool = multiprocessing.get_context("spawn").Pool(jobs) if jobs > 1 else None
    try:
        results = pool.imap(scan, todo) if pool is not None else map(scan, todo)
        with out.open("a", encoding="utf-8") as f, done_path.open("a", encoding="utf-8") as d:
            for key, plies, found in results:
                recent: dict[tuple[str, ...], int] = {}
                limits = 0
                for ply, puzzle, why in found:
                    if why is not None:
                        limits += 1
                    if puzzle is None or puzzle.id in known or _solver_passes(puzzle):
                        continue
                    seen = recent.get(puzzle.solution)
                    recent[puzzle.solution] = ply
                    if seen is not None and abs(ply - seen) <= SAME_LINE_PLIES:
                        continue  # the same idea a move away, both sides having ignored it
                    known.add(puzzle.id)
                    f.write(_line(puzzle))
                    new += 1
                f.flush()
                d.write(key + "\n")
                d.flush()
                games += 1
                if log:
                    print(
                        f"{key}: {plies} plies, {new} puzzles so far, {limits} positions over budget,"
                        f" {time.perf_counter() - t0:.0f} s",
                        flush=True,
                    )
                if max_new is not None and new >= max_new:
                    break
    finally:
        if pool is not None:
            pool.terminate()
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
    sources: list[Iterator[Job]] = []
    try:
        for path in args.games:
            if not path.is_file():
                raise OSError(f"no such game record file: {path}")
        sources.append(jobs_of(games_from_records(list(args.games))))
        if args.db:
            from jericho_game.web.learn.puzzles import games_from_db

            sources.append(jobs_of(games_from_db(args.db)))
        if args.selfplay < 0:
            raise OSError(f"--selfplay must be a number of games >= 0, got {args.selfplay}")
        if args.selfplay:
            sources.append(
                (f"selfplay:{args.seed}:{i}", functools.partial(selfplay_game, args.seed, i))
                for i in range(args.selfplay)
            )
        if not args.games and not args.db and not args.selfplay:
            print("jericho puzzles make: give game records, --db or --selfplay N", file=sys.stderr)
            return 2

        def chain() -> Iterator[Job]:
            for s in sources:
                yield from s

        new, games = make(chain(), args.out, budget, args.max, not args.quiet, args.deviations, args.jobs)
    except (OSError, JerichoError, PuzzleError) as exc:
        print(f"jericho puzzles make: {exc}", file=sys.stderr)
        return 2
    print(f"{new} new puzzles from {games} games -> {args.out}")
    return 0
