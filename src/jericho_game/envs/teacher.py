"""Positions labelled by the strong search, in the flat observation: a network's first lessons.

AlphaGo learned from expert games before it played itself; a network started from random
weights on two CPU cores spends its first hour learning what the project's search already
knows (the jax-az baseline started from scratch levels off at ``easy``: docs/interop.md).
:func:`make_teacher_data` plays games of the strong search (greedy playouts and the
MCTS-solver, ``sims`` simulations a move; the first ``sample_plies`` moves drawn by the
visits, for variety) and keeps every position the search was asked about:

* ``obs``: the flat observation seen by the side to move (``bool (N, 1239)``, the JAX env's
  ``observation="flat"``, :meth:`Encoding.observe`);
* ``policy``: the search's root visits as a distribution over the 651 actions
  (``float16 (N, 651)``);
* ``value``: the search's value for the side to move in [-1, 1] (a proof when it finds one,
  else its most visited move's winning rate: :func:`jericho_game.ai.heldout.search`), the
  distillation target that examples/value_study.py found far less noisy than a game's result;
* ``result``: the game's result for the side to move (``float32``, ``nan`` for a position off
  the game's path).

With probability ``off_path`` a position after one uniformly random move is searched and kept
too (marked ``off``): a search's leaves are mostly positions after poor moves.  Games are
written in shards (``shard-NNN.npz``, a temporary name then a rename), so an interrupted run
resumes at the next missing shard.  Needs the C kernel and NumPy, not JAX (its workers are
spawned processes, which a process that has started JAX's threads must not fork).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from jericho_game import kernel
from jericho_game.ai import heldout, selfplay
from jericho_game.envs.encoding import N_ACTIONS, default_encoding

__all__ = ["make_teacher_data", "load_teacher_data", "search_game", "teacher_game"]

#: Arrays of a shard (and of :func:`load_teacher_data`), in order.
FIELDS = ("obs", "policy", "value", "result", "off")


def search_game(
    seed: int,
    sims: int,
    sample_plies: int = 12,
    off_path: float = 0.0,
    phase: tuple[int, int] | None = None,
    cheap_sims: int = 80,
    teacher: heldout.Teacher | None = None,
) -> Iterator[tuple[Any, float, list[tuple[int, int, float, int]], bool]]:
    """One game of the strong search at ``sims`` simulations a move (the first ``sample_plies``
    moves drawn by the visits, a proven win played at once, then the most visited move): yields
    ``(state, value, children, off)`` for every position the search was asked about
    (:func:`jericho_game.ai.heldout.search`'s value and root children).

    The game's own positions come as its one kernel state (``off`` False; read it before the
    next step: after the last, it holds the finished game); with probability ``off_path`` the
    position after one uniformly random move comes after it, as a copy (``off`` True).  A
    forced move (a pass) is played without asking the search.  Deterministic for a seed.

    ``phase=(lo, hi)``: only the positions with ``lo`` to ``hi`` pieces left in the two reserves
    are yielded (and only they may have an off-path sibling); the moves before and after them are
    chosen by a cheaper search of ``cheap_sims`` simulations (a game's data in one phase).

    ``teacher``: every search (labels and moves) is the strong search with that network mixed in
    (:class:`jericho_game.ai.heldout.Teacher`): a network's own search teaching the next one.
    """
    rng = random.Random(seed)
    state = kernel.new_state(default_encoding().tables, "c")
    ply = 0
    while state.outcome < 0:
        codes = state.legal_codes()
        if len(codes) == 1:
            state.push(codes[0])
            ply += 1
            continue
        kept = phase is None or phase[0] <= kernel.pieces_left(state) <= phase[1]
        value, children = heldout.search(state, rng.getrandbits(64), sims if kept else cheap_sims, teacher)
        if kept:
            yield state, value, children, False
        if kept and rng.random() < off_path:
            side = state.copy(with_history=True)
            side.push(rng.choice(codes))
            if side.outcome < 0 and len(side.legal_codes()) > 1:
                v2, ch2 = heldout.search(side, rng.getrandbits(64), sims, teacher)
                yield side, v2, ch2, True
        won = [ch for ch in children if ch[3] == 1]
        if won:
            move = won[0][0]
        elif ply < sample_plies:
            move = children[rng.choices(range(len(children)), weights=[ch[1] for ch in children])[0]][0]
        else:
            move = max(children, key=lambda ch: (ch[3] != 0, ch[1], ch[2]))[0]
        state.push(move)
        ply += 1


def teacher_game(seed: int, sims: int, sample_plies: int = 12, off_path: float = 0.0) -> dict[str, list[Any]]:
    """One game of :func:`search_game`, its positions labelled (the module's fields)."""
    enc = default_encoding()
    mirror = kernel.new_state(enc.tables, "python")  # the encoding observes the core's states
    rec: dict[str, list[Any]] = {k: [] for k in FIELDS}
    movers: list[int] = []  # the side to move of each position on the game's path (-1 off it)
    game = None
    for state, value, children, off in search_game(seed, sims, sample_plies, off_path):
        history = state.history_codes()
        if off:
            core = mirror.copy()
            core.push(history[-1])
        else:
            game = state
            for code in history[len(mirror.history_codes()) :]:
                mirror.push(code)
            core = mirror
        visits = np.zeros(N_ACTIONS, dtype=np.float32)
        for code, n, _w, _proof in children:
            visits[code] = n
        rec["obs"].append(enc.observe(core).astype(np.bool_))
        rec["policy"].append((visits / max(1.0, visits.sum())).astype(np.float16))
        rec["value"].append(value)
        rec["result"].append(np.nan)  # filled in below for the game's own positions
        rec["off"].append(off)
        movers.append(-1 if off else state.turn)
    outcome = game.outcome if game is not None else -1
    for i, mover in enumerate(movers):
        if mover >= 0:
            rec["result"][i] = 0.0 if outcome == 2 else (1.0 if outcome == mover else -1.0)
    return rec


def _worker(args: tuple[list[int], int, int, float]) -> dict[str, list[Any]]:
    seeds, sims, sample_plies, off_path = args
    out: dict[str, list[Any]] = {}
    for s in seeds:
        for key, values in teacher_game(s, sims, sample_plies, off_path).items():
            out.setdefault(key, []).extend(values)
    return out


def _shard_arrays(merged: dict[str, list[Any]]) -> dict[str, Any]:
    return {
        "obs": np.array(merged["obs"], dtype=np.bool_).reshape(-1, default_encoding().observation_size),
        "policy": np.array(merged["policy"], dtype=np.float16).reshape(-1, N_ACTIONS),
        "value": np.array(merged["value"], dtype=np.float32),
        "result": np.array(merged["result"], dtype=np.float32),
        "off": np.array(merged["off"], dtype=np.bool_),
    }


def make_teacher_data(
    out: str | Path,
    games: int,
    sims: int = 200,
    jobs: int = 1,
    seed: int = 0,
    sample_plies: int = 12,
    off_path: float = 0.3,
    shard_games: int = 100,
    log: Any = None,
) -> list[Path]:
    """Write ``games`` games' positions as shards under ``out`` (resuming); the shard paths.

    Refuses to resume a directory made with other settings (``teacher.json`` holds them).
    """
    if kernel.C is None:
        raise RuntimeError("teacher data is made with the C search (not built, or JERICHO_KERNEL=python)")
    if games < 1 or sims < 2 or jobs < 1 or shard_games < 1 or not 0.0 <= off_path <= 1.0:
        raise ValueError("need games >= 1, sims >= 2, jobs >= 1, shard_games >= 1 and off_path in [0, 1]")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    settings = {
        "sims": sims,
        "seed": seed,
        "sample_plies": sample_plies,
        "off_path": off_path,
        "shard_games": shard_games,
    }
    stored = out / "teacher.json"
    if stored.exists():
        old = json.loads(stored.read_text(encoding="utf-8"))
        changed = [f"{k}: stored {old.get(k)!r}, given {v!r}" for k, v in settings.items() if old.get(k) != v]
        if changed:
            raise ValueError(f"{out} holds teacher data made with other settings: " + "; ".join(changed))
    else:
        stored.write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
    paths = []
    for index in range((games + shard_games - 1) // shard_games):
        path = out / f"shard-{index:03d}.npz"
        paths.append(path)
        if path.exists():
            continue
        n = min(shard_games, games - index * shard_games)
        seeds = [seed * 1_000_003 + index * shard_games + i for i in range(n)]
        tasks = [(seeds[j::jobs], sims, sample_plies, off_path) for j in range(jobs) if seeds[j::jobs]]
        arrays = _shard_arrays(selfplay.run_merged(_worker, tasks, jobs))
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(tmp, **arrays)
        os.replace(tmp, path)
        if log is not None:
            log(f"{path.name}: {n} games, {len(arrays['value'])} positions")
    return paths


def load_teacher_data(paths: list[Path]) -> dict[str, np.ndarray]:
    """The shards' arrays, concatenated in order."""
    parts: dict[str, list[np.ndarray]] = {k: [] for k in FIELDS}
    for path in paths:
        with np.load(path, allow_pickle=False) as f:
            for k in FIELDS:
                parts[k].append(f[k])
    return {k: np.concatenate(v) for k, v in parts.items()}
