"""``jericho arena``: a round robin between AI players, with Elo ratings.

    jericho arena greedy mcts:sims=2000 alphabeta:depth=2 --games 20 --jobs 2 --seed 1

Every pairing plays ``--games`` games (rounded up to an even number): ``games/2``
openings, each played twice with the sides swapped.  An opening is ``--opening``
uniformly random moves from the start, drawn from the seed and the opening's number,
so every pairing meets the same openings.  Games run in ``--jobs`` processes; each
finished game is written at once as a record in ``--out`` (as ``game-PAIRING-INDEX.jgn``, so Ctrl-C keeps them), then
the table is printed: wins/draws/losses per pairing with each side's mean and longest
time per move, an Elo rating per player with a 95% confidence interval, and its mean and
longest time per move; a warning names every pairing whose two sides' mean times per move
differ by more than 10% (:func:`time_warning`: such a match was not at equal time).  A player that raises or answers an
illegal move loses that game by forfeit (the game's ``error`` says why) and the round
robin goes on.

``--reach K`` pairs only players at most K places apart in the list (``--ladder --reach 1``: each
level meets the levels next to it, the ladder's round robin).  With ``--out`` every finished
game is also appended to ``results.jsonl`` there, so ``--resume`` finishes a run that was
stopped (Ctrl-C or ``kill``, which keep the finished games and print them; ``kill -9``, a reboot)
with the same settings, playing only the missing games;
``--rate DIR ...`` plays nothing and rates the games of several such folders in one fit (a
pairing a later folder plays replaces its games in the folders before).

Elo method (documented in docs/ai.md): Bradley–Terry maximum likelihood with draws as
half a win and half a loss, fitted by the minorisation–maximisation iteration of Hunter
(2004); one virtual draw per pairing keeps ratings finite when a player wins every
game.  Ratings are ``400·log10(strength)``, centred on mean 0.  The 95% interval is the
2.5–97.5 percentile range over parametric bootstrap samples: every pairing's games are
replayed from the fitted model and the ratings refitted (see :func:`elo_table`).

With simulation/node-bounded players (``--nodes`` or ``mcts:sims=…``) and a seed, the
whole table reproduces exactly.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jericho_game.ai.base import Limit, PlayerSpecError, make_player
from jericho_game.ai.stops import sigterm_stops, spawn_pool, stop_deferred
from jericho_game.extras import install_hint
from jericho_game.game import Game

__all__ = [
    "GameResult",
    "Task",
    "add_arguments",
    "run",
    "run_arena",
    "rate_runs",
    "play_game",
    "opening",
    "bradley_terry",
    "elo_table",
    "time_warning",
]


@dataclass(frozen=True)
class Task:
    """One game to play: the player specs for South and North, opening and budgets."""

    pairing: int
    index: int
    south: str
    north: str
    opening: tuple[str, ...]
    time: float | None
    nodes: int | None
    seed: int


@dataclass
class GameResult:
    """What one finished game returns (also one element of the JSON ``games`` list)."""

    pairing: int
    index: int
    south: str
    north: str
    result: str  # "south", "north" or "draw"
    moves: list[str]
    opening_plies: int
    score: tuple[int, int]
    time_south: float = 0.0
    time_north: float = 0.0
    moves_south: int = 0
    moves_north: int = 0
    max_south: float = 0.0
    max_north: float = 0.0
    record: str | None = None
    error: str | None = field(default=None)


def opening(seed: int, index: int, plies: int) -> tuple[str, ...]:
    """``plies`` uniformly random legal moves from the start, fixed by ``(seed, index)``."""
    rng = random.Random(f"jericho-arena-opening:{seed}:{index}")
    game = Game()
    out = []
    for _ in range(plies):
        moves = game.legal_moves()
        if not moves:
            break
        m = moves[rng.randrange(len(moves))]
        game.play(m)
        out.append(str(m))
    return tuple(out)


def play_game(task: Task) -> GameResult:
    """Play one game of the round robin (runs in a worker process)."""
    game = Game.from_moves(list(task.opening))
    players = [
        make_player(task.south, seed=task.seed * 2 + 1),
        make_player(task.north, seed=task.seed * 2 + 2),
    ]
    spent = [0.0, 0.0]
    longest = [0.0, 0.0]
    count = [0, 0]
    move_no = 0
    error: str | None = None
    forfeit = -1
    try:
        while not game.is_over():
            side = game.state.turn
            who = (task.south, task.north)[side]
            limit = Limit(time=task.time, nodes=task.nodes, seed=(task.seed * 1000 + move_no) & 0x7FFFFFFF)
            t0 = time.perf_counter()
            try:
                move = players[side].choose_move(game, limit)
            except Exception as exc:  # a crashed or hung engine, a player bug: it loses this game
                error = f"{who} failed: {type(exc).__name__}: {exc}"
            took = time.perf_counter() - t0
            spent[side] += took
            longest[side] = max(longest[side], took)
            count[side] += 1
            if error is None and not game.is_legal(move):
                error = f"{who} played an illegal move {move}: {game.why_illegal(move)}"
            if error is not None:
                forfeit = side
                break
            game.play(move)
            move_no += 1
    finally:
        for player in players:  # e.g. an external engine's process
            close = getattr(player, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:  # noqa: S110 - closing a failed engine may fail too
                    pass
    if error is not None:
        error = " | ".join(line.strip() for line in error.splitlines() if line.strip())
    return GameResult(
        pairing=task.pairing,
        index=task.index,
        south=task.south,
        north=task.north,
        result=("north", "south")[forfeit] if error is not None else game.outcome() or "draw",
        moves=[str(m) for m in game.history],
        opening_plies=len(task.opening),
        score=game.score(),
        time_south=spent[0],
        time_north=spent[1],
        moves_south=count[0],
        moves_north=count[1],
        max_south=longest[0],
        max_north=longest[1],
        error=error,
    )


def _write_record(result: GameResult, out: Path, tags: dict[str, str]) -> Path:
    """Write one game as a ``.jgn`` record (:func:`jericho_game.record.write_record`)."""
    game = Game.from_moves(" ".join(result.moves))
    try:
        from jericho_game.record import write_record
    except ImportError:  # pragma: no cover - only before the records module existed
        lines = [f'[{k} "{v}"]' for k, v in tags.items()]
        token = {"south": "1-0", "north": "0-1"}.get(result.result, "1/2-1/2")
        text = "\n".join([*lines, "", " ".join([*result.moves, token])]) + "\n"
    else:
        text = write_record(game, tags)
    path = out / f"game-{result.pairing:03d}-{result.index:04d}.jgn"
    path.write_text(text, encoding="utf-8")
    return path


# -- Elo ----------------------------------------------------------------------------------
def bradley_terry(n: int, results: list[tuple[int, int, float]], prior: float = 0.5, iters: int = 2000) -> list[float]:
    """Elo ratings (mean 0 over the players that played) from ``(i, j, score_of_i)`` games.

    Maximum likelihood of the Bradley–Terry model ``P(i beats j) = g_i / (g_i + g_j)``,
    draws counting half a win each way, fitted by Hunter's MM iteration.  ``prior`` adds
    that many virtual wins to each side of every pairing that played (one virtual draw
    for 0.5), so a perfect score gives a large finite rating.  A player with no game
    gets ``nan``.
    """
    wins = [[0.0] * n for _ in range(n)]
    for i, j, s in results:
        if not 0.0 <= s <= 1.0 or i == j:
            raise ValueError(f"bad game result {(i, j, s)}: need two players and a score in [0, 1]")
        wins[i][j] += s
        wins[j][i] += 1.0 - s
    played = [[wins[i][j] + wins[j][i] > 0 for j in range(n)] for i in range(n)]
    for i in range(n):
        for j in range(n):
            if played[i][j]:
                wins[i][j] += prior
    active = [i for i in range(n) if any(played[i])]
    games = [[wins[i][j] + wins[j][i] for j in range(n)] for i in range(n)]
    g = [1.0] * n
    for _ in range(iters):
        new = g[:]
        for i in active:
            w = sum(wins[i])
            den = sum(games[i][j] / (g[i] + g[j]) for j in active if j != i and games[i][j] > 0)
            new[i] = max(w / den, 1e-12)
        mean = sum(math.log(new[i]) for i in active) / len(active) if active else 0.0
        for i in active:
            new[i] = math.exp(math.log(new[i]) - mean)
        delta = max((abs(new[i] - g[i]) / max(new[i], g[i]) for i in active), default=0.0)
        g = new
        if delta < 1e-10:
            break
    return [400.0 * math.log10(g[i]) if i in active else math.nan for i in range(n)]


def elo_table(
    n: int, results: list[tuple[int, int, int, float]], samples: int = 200, seed: int = 0
) -> list[tuple[float, float, float]]:
    """``(elo, low, high)`` per player: the fit and a 95% parametric bootstrap interval.

    ``results`` are ``(pairing, i, j, score_of_i)``.  Each bootstrap sample replays every
    game between each two players from the *fitted* model (as the Ordo rating tool does): ``i``
    scores ``s = g_i / (g_i + g_j)`` on average, draws keep the pairing's observed rate
    (at most ``2·min(s, 1 - s)``), wins and losses make up the rest; the ratings are
    fitted again and the 2.5–97.5 percentiles taken (widened, if need be, to contain the
    estimate).  Resampling the observed games instead would give a zero-width interval
    whenever a pairing is a clean sweep (every resample is the same sweep); the fitted
    model, kept finite by the virtual draw, never predicts a certain result.
    """
    elo = bradley_terry(n, [(i, j, s) for _, i, j, s in results])
    by_pair: dict[tuple[int, int], list[float]] = {}
    for _, i, j, s in results:
        by_pair.setdefault((i, j), []).append(s)
    models: list[tuple[int, int, float, float, int]] = []  # i, j, P(i wins), P(draw), games
    for (i, j), scores in by_pair.items():
        expected = 1.0 / (1.0 + 10.0 ** ((elo[j] - elo[i]) / 400.0))
        draws = sum(1 for s in scores if s == 0.5) / len(scores)
        p_draw = min(draws, 2.0 * min(expected, 1.0 - expected))
        models.append((i, j, expected - p_draw / 2.0, p_draw, len(scores)))
    rng = random.Random(seed)
    boots: list[list[float]] = [[] for _ in range(n)]
    for _ in range(samples):
        sample: list[tuple[int, int, float]] = []
        for i, j, p_win, p_draw, count in models:
            for _ in range(count):
                u = rng.random()
                sample.append((i, j, 1.0 if u < p_win else 0.5 if u < p_win + p_draw else 0.0))
        for k, r in enumerate(bradley_terry(n, sample, iters=300)):
            boots[k].append(r)
    out = []
    for k in range(n):
        b = sorted(boots[k])
        if b and not math.isnan(elo[k]):
            lo = min(b[int(0.025 * (len(b) - 1))], elo[k])
            hi = max(b[int(math.ceil(0.975 * (len(b) - 1)))], elo[k])
        else:
            lo = hi = elo[k]
        out.append((elo[k], lo, hi))
    return out


# -- the round robin ----------------------------------------------------------------------
def build_tasks(
    specs: list[str],
    games: int,
    seed: int,
    plies: int,
    time_limit: float | None,
    nodes: int | None,
    reach: int | None = None,
) -> list[Task]:
    """Every game of the round robin, in a fixed order.

    ``reach`` keeps only the pairings of players at most that many places apart in ``specs``
    (1: each player meets its neighbours, as on a ladder); ``None`` pairs everyone.
    """
    per_pair = games + (games % 2)
    openings = [opening(seed, k, plies) for k in range(per_pair // 2)]
    tasks = []
    pairing = 0
    for a in range(len(specs)):
        for b in range(a + 1, len(specs)):
            if reach is not None and b - a > reach:
                continue
            for k in range(per_pair):
                south, north = (specs[a], specs[b]) if k % 2 == 0 else (specs[b], specs[a])
                tasks.append(
                    Task(
                        pairing=pairing,
                        index=k,
                        south=south,
                        north=north,
                        opening=openings[k // 2],
                        time=time_limit,
                        nodes=nodes,
                        seed=(seed * 1_000_003 + pairing * 10_007 + k) & 0x7FFFFFFF,
                    )
                )
            pairing += 1
    return tasks


def run_arena(
    specs: list[str],
    games: int = 10,
    jobs: int = 1,
    seed: int = 0,
    time_limit: float | None = None,
    nodes: int | None = None,
    out: Path | None = None,
    plies: int = 2,
    progress: bool = False,
    reach: int | None = None,
    resume: bool = False,
) -> dict[str, Any]:
    """Play the round robin and return the summary (the JSON document).

    With ``out``, every finished game is also appended to ``out/results.jsonl`` and the run's
    settings are kept in ``out/arena.json``, so ``resume=True`` with the same settings plays only
    the games still missing (after Ctrl-C, ``kill`` or a reboot) and summarises them all.  A new
    run refuses a folder that already holds a run's results; a resume refuses other settings.
    """
    if len(specs) < 2:
        raise ValueError("the arena needs at least two players")
    if games < 1:
        raise ValueError(f"--games must be at least 1, got {games}")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"--time must be a positive number of seconds, got {time_limit}")
    if nodes is not None and nodes < 1:
        raise ValueError(f"--nodes must be at least 1, got {nodes}")
    twice = sorted({s for s in specs if specs.count(s) > 1})
    if twice:
        raise ValueError(f"a player spec is given twice: {', '.join(twice)}")
    if reach is not None and reach < 1:
        raise ValueError(f"--reach must be at least 1, got {reach}")
    for s in specs:
        make_player(s)  # fail early with a clear message
    tasks = build_tasks(specs, games, seed, plies, time_limit, nodes, reach)
    finished: list[GameResult] = []
    journal: Path | None = None
    if out is not None:
        settings = {
            "players": specs,
            "games": games,
            "seed": seed,
            "time": time_limit,
            "nodes": nodes,
            "opening": plies,
            "reach": reach,
        }
        journal = out / JOURNAL
        finished = _open_journal(out, settings, resume)
        done_keys = {(r.pairing, r.index) for r in finished}
        tasks_left = [t for t in tasks if (t.pairing, t.index) not in done_keys]
    else:
        if resume:
            raise ValueError("--resume needs --out, the folder of the run to resume")
        tasks_left = tasks
    interrupted = False
    started = time.time()

    def done(r: GameResult) -> None:
        with stop_deferred():  # a game's record, journal line and count go together
            _done(r)

    def _done(r: GameResult) -> None:
        if out is not None:
            tags = {
                "Event": "jericho arena",
                "South": r.south,
                "North": r.north,
                "Round": f"{r.pairing + 1}.{r.index + 1}",
                "ArenaSeed": str(seed),
                "Opening": " ".join(r.moves[: r.opening_plies]) or "-",
            }
            if r.error is not None:  # forfeited: the game stopped before its end
                tags["Result"] = {"south": "1-0", "north": "0-1"}[r.result]
                tags["Termination"] = r.error
            r.record = str(_write_record(r, out, tags))
        if journal is not None:
            with journal.open("a", encoding="utf-8") as f:
                f.write(json.dumps(asdict(r)) + "\n")
        finished.append(r)
        if progress:
            print(
                f"  [{len(finished)}/{len(tasks)}] {r.south} vs {r.north}: {r.result} "
                f"({len(r.moves)} moves, {r.score[0]}-{r.score[1]})" + (f" by forfeit: {r.error}" if r.error else ""),
                file=sys.stderr,
                flush=True,
            )

    try:
        with sigterm_stops():
            _play(tasks_left, jobs, done)
    except KeyboardInterrupt:
        interrupted = True
    finished.sort(key=lambda r: (r.pairing, r.index))
    return summarise(specs, finished, seed, interrupted, time.time() - started, len(tasks))


def _play(tasks_left: list[Task], jobs: int, done: Callable[[GameResult], None]) -> None:
    """Play the games in ``jobs`` processes, each result to ``done`` as it finishes; a stop
    (KeyboardInterrupt) ends the workers before it goes on up."""
    if jobs <= 1:
        for task in tasks_left:
            done(play_game(task))
        return
    # Spawned, not forked: a caller's threads (JAX's, a web server's) do not survive a
    # fork, and a child forked while one of them held a lock could wait on it forever.
    with spawn_pool(jobs) as pool:
        try:
            for r in pool.imap_unordered(play_game, tasks_left):
                done(r)
        except KeyboardInterrupt:
            pool.terminate()
            raise


#: The file of a run's finished games in ``--out`` (one JSON object per line), and of its settings.
JOURNAL = "results.jsonl"
SETTINGS = "arena.json"


def _open_journal(out: Path, settings: dict[str, Any], resume: bool) -> list[GameResult]:
    """Prepare ``out`` for a run: its settings written (or checked on resume) and its finished games."""
    out.mkdir(parents=True, exist_ok=True)
    journal, kept = out / JOURNAL, out / SETTINGS
    if not resume:
        if journal.exists():
            raise ValueError(
                f"{out} already holds an arena run's results ({JOURNAL}): "
                "add --resume to finish it, or give another --out"
            )
        kept.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
        return []
    try:
        theirs = json.loads(kept.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{out} holds no arena run to resume ({SETTINGS} is missing)") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{out / SETTINGS} is not valid JSON ({exc}): not resuming") from None
    differ = [f"{k} {settings[k]!r} (the run's: {theirs.get(k)!r})" for k in settings if theirs.get(k) != settings[k]]
    if differ:
        raise ValueError(f"{out} is a run with other settings; resume it with its own: " + "; ".join(differ))
    finished = {(r.pairing, r.index): r for r in _read_journal(journal)} if journal.exists() else {}
    # Rewritten whole, so the games played now start on a line of their own after a cut line.
    tmp = journal.with_name(JOURNAL + ".tmp")
    tmp.write_text("".join(json.dumps(asdict(r)) + "\n" for r in finished.values()), encoding="utf-8")
    tmp.replace(journal)
    return list(finished.values())


def rate_runs(folders: list[Path], order: list[str] | None = None, seed: int = 0) -> dict[str, Any]:
    """The summary (as :func:`run_arena` returns it) of the games kept in several runs' ``--out``
    folders, rated together in one Bradley–Terry fit: e.g. a ladder's lower pairings from one run and
    its top pairing from another.  A pairing a later folder plays replaces the same pairing's games
    in the folders before it (a pairing measured again after a level changed: the old games were
    another player's under the same name).  Players come in ``order`` first (those that played),
    then in the order the games name them."""
    games: list[GameResult] = []
    for folder in folders:
        if not (folder / JOURNAL).exists():
            raise ValueError(f"{folder} holds no arena run ({JOURNAL} is missing)")
        newer = _read_journal(folder / JOURNAL)
        again = {frozenset((r.south, r.north)) for r in newer}
        games = [r for r in games if frozenset((r.south, r.north)) not in again] + newer
    if not games:
        raise ValueError("no finished game in " + ", ".join(str(f) for f in folders))
    seen = {name for r in games for name in (r.south, r.north)}
    specs = [p for p in (order or []) if p in seen]
    for r in games:
        for name in (r.south, r.north):
            if name not in specs:
                specs.append(name)
    summary = summarise(specs, games, seed, False, 0.0, len(games))
    summary["rated_from"] = [str(f) for f in folders]
    return summary


def _read_journal(journal: Path) -> list[GameResult]:
    """The games of a run's ``results.jsonl`` (a line cut by a kill is skipped, with a word on stderr)."""
    out = []
    for number, line in enumerate(journal.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            data["score"] = tuple(data["score"])
            out.append(GameResult(**data))
        except (json.JSONDecodeError, TypeError, KeyError) as exc:
            # A line cut by a kill in the middle of its write: the game is played again.
            print(f"jericho arena: {journal} line {number} skipped ({exc})", file=sys.stderr)
    return out


def summarise(
    specs: list[str], finished: list[GameResult], seed: int, interrupted: bool, seconds: float, planned: int
) -> dict[str, Any]:
    """The JSON summary of finished games: pairings, ratings, times."""
    index = {s: k for k, s in enumerate(specs)}
    pairs: dict[tuple[int, int], dict[str, Any]] = {}
    scored: list[tuple[int, int, int, float]] = []
    time_spent = [0.0] * len(specs)
    moves_made = [0] * len(specs)
    longest = [0.0] * len(specs)
    # Per pairing (a, b): [time of a, moves of a, max of a, time of b, moves of b, max of b].
    pair_times: dict[tuple[int, int], list[float]] = {}
    for r in finished:
        i, j = index[r.south], index[r.north]
        a, b = min(i, j), max(i, j)
        row = pairs.setdefault((a, b), {"a": specs[a], "b": specs[b], "wins": 0, "draws": 0, "losses": 0})
        winner = {"south": i, "north": j}.get(r.result)
        if winner is None:
            row["draws"] += 1
            s = 0.5
        elif winner == a:
            row["wins"] += 1
            s = 1.0
        else:
            row["losses"] += 1
            s = 0.0
        scored.append((r.pairing, a, b, s))
        time_spent[i] += r.time_south
        moves_made[i] += r.moves_south
        time_spent[j] += r.time_north
        moves_made[j] += r.moves_north
        longest[i] = max(longest[i], r.max_south)
        longest[j] = max(longest[j], r.max_north)
        pt = pair_times.setdefault((a, b), [0.0] * 6)
        for who, spent, count, most in (
            (i, r.time_south, r.moves_south, r.max_south),
            (j, r.time_north, r.moves_north, r.max_north),
        ):
            off = 0 if who == a else 3
            pt[off] += spent
            pt[off + 1] += count
            pt[off + 2] = max(pt[off + 2], most)
    ratings = elo_table(len(specs), scored, seed=seed) if scored else [(math.nan, math.nan, math.nan)] * len(specs)
    players = []
    for k, spec in enumerate(specs):
        elo, lo, hi = ratings[k]
        played = not math.isnan(elo)
        players.append(
            {
                "player": spec,
                "elo": round(elo, 1) if played else None,
                "elo_low": round(lo, 1) if played else None,
                "elo_high": round(hi, 1) if played else None,
                "mean_time_per_move": time_spent[k] / moves_made[k] if moves_made[k] else 0.0,
                "max_time_per_move": longest[k],
                "moves": moves_made[k],
            }
        )
    pairings = []
    times: list[dict[str, Any]] = []
    warnings = []
    for key, row in pairs.items():
        g = row["wins"] + row["draws"] + row["losses"]
        row["games"] = g
        row["score_a"] = round((row["wins"] + 0.5 * row["draws"]) / g, 4) if g else 0.0
        pairings.append(row)
        # Times apart from the results: the results reproduce with a seed, times never do.
        pt = pair_times[key]
        tr = {
            "a": row["a"],
            "b": row["b"],
            "mean_time_a": pt[0] / pt[1] if pt[1] else 0.0,
            "max_time_a": pt[2],
            "mean_time_b": pt[3] / pt[4] if pt[4] else 0.0,
            "max_time_b": pt[5],
        }
        times.append(tr)
        warning = time_warning(tr["a"], tr["mean_time_a"], tr["b"], tr["mean_time_b"])
        if warning is not None:
            warnings.append(warning)
    return {
        "seed": seed,
        "players": players,
        "pairings": pairings,
        "games": [asdict(r) for r in finished],
        "planned_games": planned,
        "finished_games": len(finished),
        "forfeits": sum(1 for r in finished if r.error is not None),
        "pairing_times": times,
        "time_warnings": warnings,
        "interrupted": interrupted,
        "seconds": round(seconds, 2),
        "machine": f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
    }


#: The arena warns when the two sides of a pairing spent mean times per move whose ratio is above this.
TIME_RATIO_WARNING = 1.10
#: ... unless both means are below this many seconds (instant players differ by noise alone).
TIME_WARNING_FLOOR = 0.01


def time_warning(a: str, mean_a: float, b: str, mean_b: float) -> str | None:
    """A warning when ``a`` and ``b`` did not play at equal time (mean s/move more than 10% apart)."""
    low, high = sorted((mean_a, mean_b))
    if high < TIME_WARNING_FLOOR or (low > 0 and high / low <= TIME_RATIO_WARNING):
        return None
    ratio = f"{100 * (high / low - 1):.0f}% more" if low > 0 else "all the time"
    return (
        f"warning: unequal time: {a} {mean_a:.3f} s/move vs {b} {mean_b:.3f} s/move "
        f"({ratio} for the slower side; the limit is 10%)"
    )


def format_table(summary: dict[str, Any]) -> str:
    """The printed table: pairings, then ratings."""
    lines = []
    w = max([len(p["a"]) for p in summary["pairings"]] + [len(p["b"]) for p in summary["pairings"]] + [6])
    head = f"{'player A':<{w}}  {'player B':<{w}}  {'W':>4} {'D':>4} {'L':>4}  {'A score':>7}"
    lines.append(f"{head}  {'A s/move (max)':>16}  {'B s/move (max)':>16}")
    times = summary.get("pairing_times") or [{}] * len(summary["pairings"])
    for p, t in zip(summary["pairings"], times, strict=True):
        wdl = f"{p['wins']:>4} {p['draws']:>4} {p['losses']:>4}"
        ta = f"{t.get('mean_time_a', 0.0):.3f} ({t.get('max_time_a', 0.0):.3f})"
        tb = f"{t.get('mean_time_b', 0.0):.3f} ({t.get('max_time_b', 0.0):.3f})"
        lines.append(f"{p['a']:<{w}}  {p['b']:<{w}}  {wdl}  {100 * p['score_a']:>6.1f}%  {ta:>16}  {tb:>16}")
    lines.append("")
    lines.append(f"{'player':<{w}}  {'Elo':>7}  {'95% CI':>17}  {'s/move':>8}  {'max s':>8}  {'moves':>6}")
    for p in sorted(summary["players"], key=lambda x: -(x["elo"] if x["elo"] is not None else -1e9)):
        if p["elo"] is None:
            lines.append(f"{p['player']:<{w}}  {'-':>7}  {'(no game)':>17}  {'-':>8}  {'-':>8}  {0:>6}")
            continue
        ci = f"[{p['elo_low']:.0f}, {p['elo_high']:.0f}]"
        mean, most = p["mean_time_per_move"], p.get("max_time_per_move", 0.0)
        lines.append(f"{p['player']:<{w}}  {p['elo']:>7.0f}  {ci:>17}  {mean:>8.3f}  {most:>8.3f}  {p['moves']:>6}")
    warnings = summary.get("time_warnings") or []
    if warnings:
        lines.append("")
        lines.extend(warnings)
    status = " (interrupted)" if summary["interrupted"] else ""
    if summary.get("forfeits"):
        status += f", {summary['forfeits']} lost by a failing player (see 'error' in the JSON)"
    if summary.get("rated_from"):  # --rate: nothing was played here, so no seed or time of a run
        lines.append(
            f"\n{summary['finished_games']} games rated from {', '.join(summary['rated_from'])} "
            f"(bootstrap seed {summary['seed']})"
        )
    else:
        lines.append(
            f"\n{summary['finished_games']}/{summary['planned_games']} games{status}, seed {summary['seed']}, "
            f"{summary['seconds']:.0f} s, {summary['machine']}"
        )
    return "\n".join(lines)


def write_png(summary: dict[str, Any], path: Path) -> bool:
    """A bar chart of the ratings with their intervals; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    players = sorted((p for p in summary["players"] if p["elo"] is not None), key=lambda x: x["elo"])
    if not players:
        return True
    names = [p["player"] for p in players]
    elo = [p["elo"] for p in players]
    err = [[max(0.0, p["elo"] - p["elo_low"]) for p in players], [max(0.0, p["elo_high"] - p["elo"]) for p in players]]
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(names) + 1.5))
    ax.barh(names, elo, xerr=err, color="#4c72b0", capsize=4)
    ax.set_xlabel("Elo (mean 0), 95% bootstrap interval")
    ax.set_title(f"jericho arena, {summary['finished_games']} games, seed {summary['seed']}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# -- command line ---------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser, name: str = "arena") -> None:
    """Options of ``jericho arena``."""
    parser.add_argument("players", nargs="*", metavar="PLAYER", help="player specs, e.g. greedy mcts:sims=2000")
    parser.add_argument(
        "--ladder",
        action="store_true",
        help="play the ladder of levels (ai/levels.py: easy ... master) besides PLAYERs",
    )
    parser.add_argument("--games", type=int, default=10, help="games per pairing (rounded up to even; default 10)")
    parser.add_argument("--jobs", type=int, default=1, help="parallel processes (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of openings and players (default 0)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--time", type=float, default=None, help="seconds per move for every player")
    budget.add_argument("--nodes", type=int, default=None, help="node/simulation budget per move for every player")
    parser.add_argument(
        "--reach",
        type=int,
        default=None,
        help="pair only players at most REACH places apart in the list (1: neighbours, as on a ladder)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="finish the run kept in --out (its results.jsonl), playing only the missing games",
    )
    parser.add_argument(
        "--rate",
        type=Path,
        nargs="+",
        metavar="DIR",
        default=None,
        help="play nothing: rate the games kept in these runs' --out folders together (one fit; "
        "a pairing a later folder plays replaces its games in the folders before)",
    )
    parser.add_argument("--opening", type=int, default=2, help="random opening moves per opening (default 2)")
    parser.add_argument("--out", type=Path, default=None, help="directory for the game records")
    parser.add_argument("--json", type=Path, default=None, help="write the summary as JSON")
    parser.add_argument("--png", type=Path, default=None, help="write a rating chart (needs matplotlib)")
    parser.add_argument("--quiet", action="store_true", help="no per-game progress lines")


def ladder_specs(args: argparse.Namespace) -> list[str]:
    """The players of the round robin: ``--ladder``'s levels (weakest first), then the others given."""
    from jericho_game.ai.levels import ladder

    specs = ladder() if getattr(args, "ladder", False) else []
    return specs + [p for p in args.players if p not in specs]


def run(args: argparse.Namespace) -> int:
    """Run ``jericho arena``."""
    args.players = ladder_specs(args)
    if getattr(args, "rate", None):
        try:
            summary = rate_runs(args.rate, args.players, args.seed)
        except ValueError as exc:
            print(f"jericho arena: {exc}", file=sys.stderr)
            return 2
        return _report(summary, args)
    if len(args.players) < 2:
        print("jericho arena: give at least two players", file=sys.stderr)
        return 2
    if args.games < 1 or args.jobs < 1:
        print("jericho arena: --games and --jobs must be at least 1", file=sys.stderr)
        return 2
    if args.time is not None and args.time <= 0:
        print("jericho arena: --time must be positive", file=sys.stderr)
        return 2
    if args.nodes is not None and args.nodes < 1:
        print("jericho arena: --nodes must be at least 1", file=sys.stderr)
        return 2
    if len(set(args.players)) != len(args.players):
        print("jericho arena: a player spec is given twice", file=sys.stderr)
        return 2
    try:
        summary = run_arena(
            args.players,
            games=args.games,
            jobs=args.jobs,
            seed=args.seed,
            time_limit=args.time,
            nodes=args.nodes,
            out=args.out,
            plies=args.opening,
            progress=not args.quiet,
            reach=args.reach,
            resume=args.resume,
        )
    except (PlayerSpecError, ValueError) as exc:
        print(f"jericho arena: {exc}", file=sys.stderr)
        return 2
    return _report(summary, args)


def _report(summary: dict[str, Any], args: argparse.Namespace) -> int:
    """Print the table, write the JSON and the chart asked for; the exit status."""
    print(format_table(summary))
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if args.png is not None and not write_png(summary, args.png):
        print(f"jericho arena: matplotlib is not installed ({install_hint('plot')}): no chart written", file=sys.stderr)
    return 130 if summary["interrupted"] else 0
