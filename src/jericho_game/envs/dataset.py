"""Self-play datasets: games of the project's MCTS with per-ply masks, visit counts and outcomes.

:func:`make_dataset` plays ``games`` self-play games (both sides the same search, fresh and
seeded per game) and writes, in one directory:

* ``games.jgn`` — every game as a record (docs/notation.md), tags ``Round`` (the game's
  number), ``Seed`` and ``Player``;
* ``plies.npz`` — one row per ply, columnar NumPy arrays (see :data:`COLUMNS`): the game and
  ply, the side to move, the move played, the legal-action mask (``np.packbits`` of the
  651 actions), the search's visit counts (sparse: ``visit_offsets`` into
  ``visit_actions``/``visit_counts``) and the final result from the mover's side;
* ``datasheet.md`` — how the set was made: budget, seeds, opening rule, versions, timing.

Openings vary: for the first ``opening_plies`` plies the move is drawn in proportion to
the visit counts (AlphaZero's temperature 1), then the most visited move is played.
Observations are not stored: :func:`observations` rebuilds them (flat or planar, any
view) by replaying the records through the encoding.

The search is :class:`jericho_game.ai.mcts.MCTSPlayer` through its public
``search(state, root, sims, deadline)`` and :class:`~jericho_game.ai.mcts.Node`;
a ply with a single legal move (a forced pass) is played without searching (its visit
counts are empty).  ``examples/make_dataset.py`` is the command line.
"""

from __future__ import annotations

import json
import platform
import random
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from jericho_game.extras import missing_extra

try:
    import numpy as np
except ImportError as exc:
    raise missing_extra("datasets", "rl", exc) from exc

from jericho_game import __version__, kernel
from jericho_game.ai._util import Deadline
from jericho_game.ai.mcts import MCTSPlayer, Node
from jericho_game.envs.encoding import default_encoding
from jericho_game.game import Game
from jericho_game.record import read_records, result_token, write_record

__all__ = ["make_dataset", "play_game", "load_dataset", "observations", "COLUMNS", "DEFAULT_SIMS"]

#: The arrays of ``plies.npz`` (N plies, V visit entries, G games).
COLUMNS: dict[str, str] = {
    "game": "int32 (N,): the game's number (its Round tag in games.jgn)",
    "ply": "int16 (N,): 0 for the first move of the game",
    "turn": "int8 (N,): side to move, 0 South, 1 North",
    "action": "int16 (N,): the move played (action index, docs/interop.md)",
    "mask_bits": "uint8 (N, 82): np.packbits of the 651-action legal mask (np.unpackbits(..., count=651))",
    "visit_offsets": "int64 (N + 1,): ply i's visits are entries visit_offsets[i]:visit_offsets[i + 1]",
    "visit_actions": "int16 (V,): actions searched at the root",
    "visit_counts": "int32 (V,): their visit counts (sum = the simulations; none for a forced move)",
    "search_value": "float32 (N,): the root's mean simulation result for the side to move "
    "(win 1, draw 0.5, loss 0); NaN for a forced move",
    "value": "int8 (N,): the game's result for the side to move: 1 win, -1 loss, 0 draw",
    "game_outcome": "int8 (G,): 0 South won, 1 North won, 2 draw",
    "game_seed": "int64 (G,): the seed of each game",
    "game_seconds": "float32 (G,): seconds the game took to play, wall clock (one process)",
    "game_cpu_seconds": "float32 (G,): CPU seconds the game took (its process's time)",
}

#: The search's parameters (the ``mcts`` player's defaults: docs/ai.md).
C_UCT, WIDEN, GUIDED_K = 0.7, 2.0, 3
#: Simulations per searched ply when none are given: the budget of the documented set
#: (docs/interop.md, examples/data/sample/datasheet.md).
DEFAULT_SIMS = 400


def _root_visits(
    state: Any, sims: int, rng: random.Random, k: int = GUIDED_K, defend: bool = False
) -> list[tuple[int, int, float]]:
    """One search from ``state``: the root's children as ``(code, visits, wins)``.

    On the C kernel this is one ``_kernel.mcts`` call (the ``mcts`` player's search without
    its shortcuts: a certain win is found by the search, not played unsearched); on the
    Python core, :meth:`MCTSPlayer.search` (which has no defended playouts).  Both are
    seeded by ``rng``.
    """
    if kernel.C is not None and isinstance(state, kernel.C.State):
        _done, _secs, _nodes, children = kernel.C.mcts(
            state, rng.getrandbits(64), sims=sims, seconds=0.0, c=C_UCT, widen=WIDEN, k=k, defend=int(defend)
        )
        return [(int(c), int(n), float(w)) for c, n, w in children]
    if defend:
        raise ValueError("defended playouts (defend) need the C kernel; the Python search has none")
    player = MCTSPlayer(sims=sims, playout="guided", c=C_UCT, widen=WIDEN, k=k, seed=rng.getrandbits(32))
    root = Node(-1, 1 - state.turn)
    player.search(state, root, sims, Deadline(None))
    return [(ch.code, ch.n, ch.w) for ch in root.children]


def play_game(
    seed: int, sims: int, opening_plies: int = 6, k: int = GUIDED_K, defend: bool = False
) -> tuple[Game, dict[str, Any]]:
    """One self-play game and its per-ply data (lists; see :data:`COLUMNS`).

    Every ply with a choice is searched with ``sims`` simulations (guided playouts best of
    ``k``, defended when ``defend``: docs/ai.md); the first ``opening_plies``
    plies are drawn in proportion to the visit counts, later ones play the most visited move
    (ties: more wins, then the lower code).
    """
    rng = random.Random(seed)
    pick = random.Random(seed ^ 0x5EED)
    game = Game()
    enc = default_encoding()
    rows: dict[str, list[Any]] = {
        k: [] for k in ("turn", "action", "mask_bits", "visit_actions", "visit_counts", "search_value")
    }
    while not game.is_over():
        state = game.state.copy()
        codes = state.legal_codes()
        mask = np.zeros(enc.n_actions, dtype=np.uint8)
        mask[codes] = 1
        if len(codes) == 1:
            move, visits, value = codes[0], [], float("nan")
        else:
            visits = _root_visits(state, sims, rng, k, defend)
            total = sum(n for _, n, _ in visits)
            value = sum(w for _, _, w in visits) / total if total else float("nan")
            if len(game.history) < opening_plies:
                move = pick.choices([c for c, _, _ in visits], weights=[n for _, n, _ in visits])[0]
            else:
                move = max(visits, key=lambda ch: (ch[1], ch[2], -ch[0]))[0]
        rows["turn"].append(state.turn)
        rows["action"].append(move)
        rows["mask_bits"].append(np.packbits(mask))
        rows["visit_actions"].append([c for c, _, _ in visits])
        rows["visit_counts"].append([n for _, n, _ in visits])
        rows["search_value"].append(value)
        game.play(game.tables.move_objects[move])
    return game, rows


#: What :func:`_play` returns: index, seed, record, per-ply rows, wall and CPU seconds.
Played = tuple[int, int, str, dict[str, Any], float, float]


def _play(args: tuple[int, int, int, int, int, bool]) -> Played:
    index, seed, sims, opening, k, defend = args
    start, cpu = time.perf_counter(), time.process_time()
    game, rows = play_game(seed, sims, opening, k, defend)
    return index, seed, write_record(game, {}), rows, time.perf_counter() - start, time.process_time() - cpu


def _player_spec(sims: int, k: int = GUIDED_K, defend: bool = False) -> str:
    """The arena spec of the dataset's player (``make_player`` plays the same search)."""
    spec = f"mcts:sims={sims},playout=guided"
    if k != GUIDED_K:
        spec += f",k={k}"
    return spec + (",defend=1" if defend else "")


def _columns(results: list[Played], spec: str) -> tuple[list[str], dict[str, Any]]:
    """The records and arrays of some played games (a shard; visit offsets start at 0)."""
    records = []
    cols: dict[str, list[Any]] = {
        k: [] for k in ("game", "ply", "turn", "action", "mask_bits", "value", "search_value")
    }
    visit_actions: list[int] = []
    visit_counts: list[int] = []
    offsets = [0]
    outcomes, seeds, seconds, cpus = [], [], [], []
    for index, game_seed, text, rows, secs, cpu in results:
        game = read_records(text)[0].game
        outcome = {"south": 0, "north": 1, "draw": 2}[str(game.outcome())]
        outcomes.append(outcome)
        seeds.append(game_seed)
        seconds.append(secs)
        cpus.append(cpu)
        tags = {"Event": "jericho-game self-play dataset", "South": spec, "North": spec}
        tags.update({"Round": str(index), "Seed": str(game_seed), "Player": spec})
        tags["Result"] = result_token(str(game.outcome()))
        records.append(write_record(game, tags))
        for ply, (turn, action, bits, va, vc, sv) in enumerate(
            zip(
                rows["turn"],
                rows["action"],
                rows["mask_bits"],
                rows["visit_actions"],
                rows["visit_counts"],
                rows["search_value"],
                strict=True,
            )
        ):
            cols["game"].append(index)
            cols["ply"].append(ply)
            cols["turn"].append(turn)
            cols["action"].append(action)
            cols["mask_bits"].append(bits)
            cols["search_value"].append(sv)
            cols["value"].append(0 if outcome == 2 else (1 if outcome == turn else -1))
            visit_actions += va
            visit_counts += vc
            offsets.append(len(visit_actions))
    arrays = {
        "game": np.array(cols["game"], dtype=np.int32),
        "ply": np.array(cols["ply"], dtype=np.int16),
        "turn": np.array(cols["turn"], dtype=np.int8),
        "action": np.array(cols["action"], dtype=np.int16),
        "mask_bits": np.stack(cols["mask_bits"]).astype(np.uint8),
        "visit_offsets": np.array(offsets, dtype=np.int64),
        "visit_actions": np.array(visit_actions, dtype=np.int16),
        "visit_counts": np.array(visit_counts, dtype=np.int32),
        "search_value": np.array(cols["search_value"], dtype=np.float32),
        "value": np.array(cols["value"], dtype=np.int8),
        "game_outcome": np.array(outcomes, dtype=np.int8),
        "game_seed": np.array(seeds, dtype=np.int64),
        "game_seconds": np.array(seconds, dtype=np.float32),
        "game_cpu_seconds": np.array(cpus, dtype=np.float32),
    }
    return records, arrays


def _concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Shards' arrays joined into one set (visit offsets shifted)."""
    out = {k: np.concatenate([p[k] for p in parts]) for k in COLUMNS if k != "visit_offsets"}
    offsets = [np.zeros(1, dtype=np.int64)]
    base = 0
    for p in parts:
        offsets.append(p["visit_offsets"][1:] + base)
        base += int(p["visit_offsets"][-1])
    out["visit_offsets"] = np.concatenate(offsets)
    return out


def make_dataset(
    out: str | Path,
    games: int,
    sims: int = DEFAULT_SIMS,
    jobs: int = 1,
    seed: int = 0,
    opening_plies: int = 6,
    shard: int = 500,
    merge_only: bool = False,
    k: int = GUIDED_K,
    defend: bool = False,
) -> dict[str, Any]:
    """Play and write the dataset (see the module docstring); returns the datasheet's facts.

    Games are played in shards of ``shard`` games, each written to ``out/shards/`` when done;
    a shard already there is kept (an interrupted run resumes), and ``merge_only`` writes the
    set from the finished shards alone (a partial set, said so in the datasheet).  ``k`` and
    ``defend`` choose the playouts (``k=10, defend=True``: the expert's and master's).
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    defend = bool(defend)
    if defend and kernel.C is None:
        raise ValueError("defended playouts (defend) need the C kernel; the Python search has none")
    out = Path(out)
    spec = _player_spec(sims, k, defend)
    shard_dir = out / "shards"
    shard_dir.mkdir(parents=True, exist_ok=True)
    # Shards are resumed by number alone, so a rerun must play the same search the finished
    # shards did: a set of mixed budgets would be mislabelled by its datasheet.
    params = {"sims": sims, "seed": seed, "opening_plies": opening_plies, "shard": shard, "k": k, "defend": defend}
    made = shard_dir / "params.json"
    if made.exists():
        before = json.loads(made.read_text(encoding="utf-8"))
        if before != params:
            changed = ", ".join(
                f"{key} {before.get(key)} -> {params[key]}" for key in params if before.get(key) != params[key]
            )
            raise ValueError(f"{shard_dir} holds shards of another set ({changed}); use a new --out")
    else:
        made.write_text(json.dumps(params), encoding="utf-8")
    seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(games, dtype=np.uint32)]
    start = time.perf_counter()
    n_shards = (games + shard - 1) // shard
    pool = ProcessPoolExecutor(max_workers=jobs) if jobs > 1 and not merge_only else None
    try:
        for s in range(n_shards):
            path = shard_dir / f"shard-{s:05d}.npz"
            if path.exists() or merge_only:
                continue
            tasks = [
                (i, seeds[i], sims, opening_plies, k, defend) for i in range(s * shard, min(games, (s + 1) * shard))
            ]
            if pool is not None:
                results = list(pool.map(_play, tasks, chunksize=max(1, len(tasks) // (4 * jobs))))
            else:
                results = [_play(t) for t in tasks]
            records, arrays = _columns(results, spec)
            (shard_dir / f"shard-{s:05d}.jgn").write_text("\n".join(records), encoding="utf-8")
            tmp = shard_dir / f"shard-{s:05d}.tmp.npz"
            np.savez_compressed(tmp, **arrays)
            tmp.replace(path)  # a shard file is there whole or not at all
    finally:
        if pool is not None:
            pool.shutdown()
    wall = time.perf_counter() - start
    done = [s for s in range(n_shards) if (shard_dir / f"shard-{s:05d}.npz").exists()]
    parts = []
    for s in done:
        with np.load(shard_dir / f"shard-{s:05d}.npz") as data:
            parts.append({k: data[k] for k in data.files})
    arrays = _concat(parts)
    texts = [(shard_dir / f"shard-{s:05d}.jgn").read_text(encoding="utf-8") for s in done]
    (out / "games.jgn").write_text("\n".join(texts), encoding="utf-8")
    np.savez_compressed(out / "plies.npz", **arrays)
    outcomes = arrays["game_outcome"].tolist()
    wall_games = float(arrays["game_seconds"].sum())
    cpu = float(arrays["game_cpu_seconds"].sum())
    n_games = len(outcomes)
    facts: dict[str, Any] = {
        "games": n_games,
        "games_planned": games,
        "plies": int(len(arrays["game"])),
        "player": spec,
        "sims": sims,
        "k": k,
        "defend": defend,
        "opening_plies": opening_plies,
        "seed": seed,
        "jobs": jobs,
        "wall_seconds_this_run": round(wall, 1),
        "game_seconds_total": round(wall_games, 1),
        "seconds_per_game": round(wall_games / max(n_games, 1), 3),
        "cpu_seconds_total": round(cpu, 1),
        "cpu_seconds_per_game": round(cpu / max(n_games, 1), 3),
        "results": {"south": outcomes.count(0), "north": outcomes.count(1), "draw": outcomes.count(2)},
        "distinct_openings_6_plies": _distinct_openings(arrays, 6),
        "kernel": "C" if kernel.C is not None else "pure Python",
        "jericho_game": __version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {platform.system()} {platform.release()}",
    }
    (out / "datasheet.md").write_text(_datasheet(facts), encoding="utf-8")
    (out / "facts.json").write_text(json.dumps(facts, indent=2), encoding="utf-8")
    return facts


def _distinct_openings(arrays: dict[str, np.ndarray], plies: int) -> int:
    """How many different sequences of the first ``plies`` moves the games start with."""
    seqs: dict[int, list[int]] = {}
    for g, p, a in zip(arrays["game"].tolist(), arrays["ply"].tolist(), arrays["action"].tolist(), strict=True):
        if p < plies:
            seqs.setdefault(g, []).append(a)
    return len({tuple(v) for v in seqs.values()})


def _datasheet(f: dict[str, Any]) -> str:
    r = f["results"]
    cols = "\n".join(f"| `{k}` | {v} |" for k, v in COLUMNS.items())
    partial = ""
    if f["games"] < f["games_planned"]:
        partial = f"\n**PARTIAL**: {f['games']} of the {f['games_planned']} planned games (the finished shards).\n"
    defended = (
        " and defended (a side facing the opponent's seven breaks it when it can, as in the expert's playouts)"
        if f.get("defend")
        else ""
    )
    return f"""# Jericho self-play dataset — datasheet
{partial}
**What**: {f["games"]} games ({f["plies"]} plies) of self-play by the project's MCTS,
`{f["player"]}` on both sides ({f["kernel"]} kernel; a fresh search per move, seeded per
game). Results: South {r["south"]}, North {r["north"]}, draws {r["draw"]}.
{f["distinct_openings_6_plies"]} distinct 6-ply openings.

**How made**: `python examples/make_dataset.py --games {f["games_planned"]} --sims {f["sims"]} \\
--k {f.get("k", GUIDED_K)}{" --defend" if f.get("defend") else ""} --opening-plies {f["opening_plies"]} \\
--seed {f["seed"]} --jobs {f["jobs"]}`. Every ply with a
choice is searched with {f["sims"]} simulations (UCT c = {C_UCT}, progressive widening
{WIDEN}, guided playouts best of k = {f.get("k", GUIDED_K)}{defended}: the `mcts` player's search, without its shortcut
that plays a certain win unsearched). Openings vary: the first {f["opening_plies"]} plies are
drawn in proportion to the root's visit counts, later plies play the most visited move.
Game seeds come from `numpy.random.SeedSequence({f["seed"]})` (column `game_seed`, tag `Seed`);
the same seed makes the same games whatever `--jobs`.

**Cost**: {f["cpu_seconds_per_game"]} CPU seconds per game ({f["cpu_seconds_total"]} s in all,
{f["cpu_seconds_total"] / 3600:.2f} core-hours); wall clock {f["seconds_per_game"]} s per game in one
process ({f["game_seconds_total"]} s of games; the last run {f["wall_seconds_this_run"]} s with
{f["jobs"]} job(s)), which depends on what else the machine runs.

**Versions**: jericho-game {f["jericho_game"]}, numpy {f["numpy"]}, Python {f["python"]},
{f["machine"]}.

**Files**: `games.jgn` (records; tags `Round` = game number, `Seed`, `Player`),
`plies.npz` (columns below), `facts.json` (these facts), `shards/` (the same, by shard).

| column | meaning |
|---|---|
{cols}

**Limits**: the players are the project's MCTS at this budget, not perfect play; `value` is
the game's result, `search_value` the search's estimate; observations are rebuilt from the
records (`jericho_game.envs.dataset.observations`).
"""


def load_dataset(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of a dataset directory's ``plies.npz``, plus ``mask`` unpacked (N, 651)."""
    with np.load(Path(path) / "plies.npz") as data:
        arrays = {k: data[k] for k in data.files}
    arrays["mask"] = np.unpackbits(arrays["mask_bits"], axis=1, count=default_encoding().n_actions)
    return arrays


def observations(path: str | Path, observation: str = "flat", view: str = "absolute") -> np.ndarray:
    """Every ply's observation (seen by the side to move), rebuilt by replaying ``games.jgn``."""
    from jericho_game.envs.views import View

    v = View(default_encoding(), observation, view)
    out = []
    for record in read_records((Path(path) / "games.jgn").read_text(encoding="utf-8")):
        game = Game()
        for move in record.moves:
            out.append(v.observe(game, game.state.turn))
            game.play(move)
    return np.stack(out)
