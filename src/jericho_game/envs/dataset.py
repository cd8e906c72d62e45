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

The search is :class:`jericho_game.players.mcts.MCTSPlayer` through its public
``search(state, root, sims, deadline)`` and :class:`~jericho_game.players.mcts.Node`;
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

from jericho_game import __version__
from jericho_game.envs.encoding import default_encoding
from jericho_game.game import Game
from jericho_game.players._util import Deadline
from jericho_game.players.mcts import MCTSPlayer, Node
from jericho_game.record import read_records, result_token, write_record

__all__ = ["make_dataset", "play_game", "load_dataset", "observations", "COLUMNS"]

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
    "value": "int8 (N,): the game's result for the side to move: 1 win, -1 loss, 0 draw",
    "game_outcome": "int8 (G,): 0 South won, 1 North won, 2 draw",
    "game_seed": "int64 (G,): the seed of each game",
}


def play_game(seed: int, sims: int, opening_plies: int = 6) -> tuple[Game, dict[str, Any]]:
    """One self-play game and its per-ply data (lists; see :data:`COLUMNS`)."""
    player = MCTSPlayer(sims=sims, playout="guided", seed=seed)
    rng = random.Random(seed ^ 0x5EED)
    game = Game()
    enc = default_encoding()
    rows: dict[str, list[Any]] = {k: [] for k in ("turn", "action", "mask_bits", "visit_actions", "visit_counts")}
    while not game.is_over():
        state = game.state.copy()
        codes = state.legal_codes()
        mask = np.zeros(enc.n_actions, dtype=np.uint8)
        mask[codes] = 1
        if len(codes) == 1:
            move, visits = codes[0], []
        else:
            root = Node(-1, 1 - state.turn)
            player.search(state, root, sims, Deadline(None))
            visits = [(ch.code, ch.n) for ch in root.children]
            if len(game.history) < opening_plies:
                move = rng.choices([c for c, _ in visits], weights=[n for _, n in visits])[0]
            else:
                move = max(root.children, key=lambda ch: (ch.n, ch.w)).code
        rows["turn"].append(state.turn)
        rows["action"].append(move)
        rows["mask_bits"].append(np.packbits(mask))
        rows["visit_actions"].append([c for c, _ in visits])
        rows["visit_counts"].append([n for _, n in visits])
        game.play(game.tables.move_objects[move])
    return game, rows


def _play(args: tuple[int, int, int, int]) -> tuple[int, int, str, dict[str, Any], float]:
    index, seed, sims, opening = args
    start = time.perf_counter()
    game, rows = play_game(seed, sims, opening)
    return index, seed, write_record(game, {}), rows, time.perf_counter() - start


def make_dataset(
    out: str | Path, games: int, sims: int = 200, jobs: int = 1, seed: int = 0, opening_plies: int = 6
) -> dict[str, Any]:
    """Play and write the dataset (see the module docstring); returns the datasheet's facts."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(games, dtype=np.uint32)]
    tasks = [(i, seeds[i], sims, opening_plies) for i in range(games)]
    start = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_play, tasks, chunksize=max(1, games // (8 * jobs))))
    else:
        results = [_play(t) for t in tasks]
    wall = time.perf_counter() - start
    results.sort(key=lambda r: r[0])
    records = []
    cols: dict[str, list[Any]] = {k: [] for k in ("game", "ply", "turn", "action", "mask_bits", "value")}
    visit_actions: list[int] = []
    visit_counts: list[int] = []
    offsets = [0]
    outcomes = []
    player_spec = f"mcts:sims={sims},playout=guided"
    for index, game_seed, text, rows, _ in results:
        game = read_records(text)[0].game
        outcome = {"south": 0, "north": 1, "draw": 2}[str(game.outcome())]
        outcomes.append(outcome)
        tags = {"Event": "jericho-game self-play dataset", "South": player_spec, "North": player_spec}
        tags.update({"Round": str(index), "Seed": str(game_seed), "Player": player_spec})
        tags["Result"] = result_token(str(game.outcome()))
        records.append(write_record(game, tags))
        for ply, (turn, action, bits, va, vc) in enumerate(
            zip(
                rows["turn"],
                rows["action"],
                rows["mask_bits"],
                rows["visit_actions"],
                rows["visit_counts"],
                strict=True,
            )
        ):
            cols["game"].append(index)
            cols["ply"].append(ply)
            cols["turn"].append(turn)
            cols["action"].append(action)
            cols["mask_bits"].append(bits)
            cols["value"].append(0 if outcome == 2 else (1 if outcome == turn else -1))
            visit_actions += va
            visit_counts += vc
            offsets.append(len(visit_actions))
    (out / "games.jgn").write_text("\n".join(records), encoding="utf-8")
    np.savez_compressed(
        out / "plies.npz",
        game=np.array(cols["game"], dtype=np.int32),
        ply=np.array(cols["ply"], dtype=np.int16),
        turn=np.array(cols["turn"], dtype=np.int8),
        action=np.array(cols["action"], dtype=np.int16),
        mask_bits=np.stack(cols["mask_bits"]).astype(np.uint8),
        visit_offsets=np.array(offsets, dtype=np.int64),
        visit_actions=np.array(visit_actions, dtype=np.int16),
        visit_counts=np.array(visit_counts, dtype=np.int32),
        value=np.array(cols["value"], dtype=np.int8),
        game_outcome=np.array(outcomes, dtype=np.int8),
        game_seed=np.array(seeds, dtype=np.int64),
    )
    cpu = sum(r[4] for r in results)
    facts: dict[str, Any] = {
        "games": games,
        "plies": len(cols["game"]),
        "player": player_spec,
        "sims": sims,
        "opening_plies": opening_plies,
        "seed": seed,
        "jobs": jobs,
        "wall_seconds": round(wall, 1),
        "game_seconds_total": round(cpu, 1),
        "seconds_per_game": round(cpu / max(games, 1), 2),
        "results": {"south": outcomes.count(0), "north": outcomes.count(1), "draw": outcomes.count(2)},
        "jericho_game": __version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {platform.system()} {platform.release()}",
    }
    (out / "datasheet.md").write_text(_datasheet(facts), encoding="utf-8")
    (out / "facts.json").write_text(json.dumps(facts, indent=2), encoding="utf-8")
    return facts


def _datasheet(f: dict[str, Any]) -> str:
    r = f["results"]
    cols = "\n".join(f"| `{k}` | {v} |" for k, v in COLUMNS.items())
    return f"""# Jericho self-play dataset — datasheet

**What**: {f["games"]} games ({f["plies"]} plies) of self-play by the project's MCTS,
`{f["player"]}` on both sides (a fresh search per move, seeded per game). Results:
South {r["south"]}, North {r["north"]}, draws {r["draw"]}.

**How made**: `python examples/make_dataset.py --games {f["games"]} --sims {f["sims"]} \\
--opening-plies {f["opening_plies"]} --seed {f["seed"]} --jobs {f["jobs"]}`. Openings vary:
the first {f["opening_plies"]} plies are drawn in proportion to the root's visit counts,
later plies play the most visited move. Game seeds come from
`numpy.random.SeedSequence({f["seed"]})` (column `game_seed`, tag `Seed`).

**Cost**: {f["wall_seconds"]} s wall with {f["jobs"]} job(s); {f["seconds_per_game"]} s per
game on one core ({f["game_seconds_total"]} s of games in all).

**Versions**: jericho-game {f["jericho_game"]}, numpy {f["numpy"]}, Python {f["python"]},
{f["machine"]}.

**Files**: `games.jgn` (records; tags `Round` = game number, `Seed`, `Player`),
`plies.npz` (columns below), `facts.json` (these facts).

| column | meaning |
|---|---|
{cols}

**Limits**: the players are the project's MCTS at this budget, not perfect play; the
values are game results, not search values; observations are rebuilt from the records
(`jericho_game.envs.dataset.observations`).
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
