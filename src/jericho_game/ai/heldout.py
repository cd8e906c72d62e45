"""A held-out set of positions with trusted values, to see what a value head is worth.

Issue 32 point 2 asks why the learned evaluator's value loses to a playout.  The losses the
training reports (against the game's result) cannot say it: a game's result is itself a noisy
label.  This module builds a fixed set of positions and labels each with the best value there
is to hand:

* the exact value from the endgame solver (:mod:`jericho_game.ai.solver`) when it proves the
  position within ``solver_nodes`` nodes (late positions);
* elsewhere, the value of a deep search (the strongest search, ``sims`` simulations): the
  winning rate of its most visited move, or the proven result when the search proves one.

Positions come from games of the strong search at a small budget (the first plies drawn in
proportion to the visits, for variety), stopped at a random ply; half of them then take one
uniformly random legal move, because a search evaluates the positions after poor moves too.

:func:`report` scores predictors of the side to move's result against these labels (mean
squared error on the [-1, 1] scale, and the share of positions whose sign they get right): a
network's value, one greedy playout (what the search uses at a new leaf), and the mean of
several.  docs/ai.md, "Why the value head fails", has the figures.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jericho_game import kernel
from jericho_game.ai import evalnet
from jericho_game.core import DRAW, State
from jericho_game.envs.encoding import default_encoding

__all__ = ["HeldOut", "Teacher", "make", "load", "report", "playout_values", "net_values", "search", "search_value"]

#: How a position was labelled.
SOLVED, SEARCHED = 1, 0


@dataclass
class HeldOut:
    """Positions (their move histories) and their labels for the side to move, in [-1, 1]."""

    moves: list[list[int]]
    label: np.ndarray  # float32
    how: np.ndarray  # int8: SOLVED or SEARCHED
    ply: np.ndarray  # int16
    #: Whether the position came after one uniformly random move (else on the search's own path).
    random_last: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.moves)

    def states(self) -> list[State]:
        """The positions as C kernel states."""
        out = []
        for hist in self.moves:
            st = kernel.new_state(default_encoding().tables, "c")
            for code in hist:
                st.push(code)
            out.append(st)
        return out

    def save(self, path: str | Path) -> None:
        """Write the set (``.npz``, atomically)."""
        path = Path(path)
        lengths = np.array([len(m) for m in self.moves], dtype=np.int64)
        flat = np.array([c for m in self.moves for c in m], dtype=np.int16)
        tmp = path.with_name(path.name + ".tmp.npz")
        extra: dict[str, Any] = {} if self.random_last is None else {"random_last": self.random_last}
        np.savez_compressed(tmp, moves=flat, lengths=lengths, label=self.label, how=self.how, ply=self.ply, **extra)
        tmp.replace(path)


def load(path: str | Path) -> HeldOut:
    """Read a set written by :meth:`HeldOut.save`."""
    with np.load(Path(path)) as data:
        offsets = np.concatenate([[0], np.cumsum(data["lengths"])])
        flat = data["moves"].tolist()
        moves = [flat[offsets[i] : offsets[i + 1]] for i in range(len(data["lengths"]))]
        rand = data["random_last"].astype(bool) if "random_last" in data.files else None
        return HeldOut(moves, data["label"].astype(np.float32), data["how"].astype(np.int8), data["ply"], rand)


@dataclass(frozen=True)
class Teacher:
    """A search that labels positions with a network's value mixed into its playouts' (the
    value-playout mix of docs/ai.md, no priors): ``evaluator`` (a weights file), ``mix`` (the
    network's share of a leaf's value) and ``c`` (its exploration constant).  Without one, the
    strong search of playouts alone labels them.  A path, not a network, so that it travels to
    worker processes; each loads it once (:func:`evalnet.kernel_net` caches by path)."""

    evaluator: str
    mix: float = 0.5
    c: float = 0.15

    def options(self) -> dict[str, Any]:
        """The C search's keywords that make the strong search this teacher."""
        return {"net": evalnet.kernel_net(self.evaluator), "mix": self.mix, "cprior": 0.0, "c": self.c}


def _strong(state: State, seed: int, sims: int, teacher: Teacher | None = None) -> list[tuple[int, int, float, int]]:
    options: dict[str, Any] = {"c": 0.3, "widen": 2.0, "greedy": True, "solver": True, "proofs": True}
    if teacher is not None:
        options.update(teacher.options())
    children: list[tuple[int, int, float, int]] = kernel.C.mcts(state, seed, sims=sims, **options)[3]
    return children


def search(
    state: State, seed: int, sims: int, teacher: Teacher | None = None
) -> tuple[float, list[tuple[int, int, float, int]]]:
    """The strongest search's value of ``state`` (as :func:`search_value`) and its root's
    children ``(code, visits, wins, proof)``; with ``teacher``, that search with its network
    mixed in (:class:`Teacher`)."""
    children = _strong(state, seed, sims, teacher)
    if any(ch[3] == 1 for ch in children):
        return 1.0, children
    if children and all(ch[3] == 0 for ch in children) and len(children) == len(state.legal_codes()):
        return -1.0, children
    _code, n, w, _proof = max(children, key=lambda ch: (ch[1], ch[2]))
    return (2.0 * w / n - 1.0 if n else 0.0), children


def search_value(state: State, seed: int, sims: int) -> float:
    """The strongest search's value of ``state`` for its side to move, in [-1, 1]: a proven
    result when it proves one, else the winning rate of its most visited move."""
    return search(state, seed, sims)[0]


def _result(outcome: int, turn: int) -> float:
    return 0.0 if outcome == DRAW else (1.0 if outcome == turn else -1.0)


def make(
    positions: int,
    seed: int = 0,
    sims: int = 20_000,
    solver_nodes: int = 300_000,
    game_sims: int = 200,
    log: Any = None,
) -> HeldOut:
    """``positions`` labelled positions (see the module's description); deterministic for a seed."""
    from jericho_game.ai.solver import solve

    if kernel.C is None:
        raise RuntimeError("the held-out set is made with the C search (not built, or JERICHO_KERNEL=python)")
    rng = random.Random(f"jericho-heldout:{seed}")
    moves: list[list[int]] = []
    labels: list[float] = []
    how: list[int] = []
    plies: list[int] = []
    randoms: list[bool] = []
    while len(moves) < positions:
        state = kernel.new_state(default_encoding().tables, "c")
        stop = rng.randrange(4, 50)
        ply = 0
        while state.outcome < 0 and ply < stop:
            codes = state.legal_codes()
            if len(codes) == 1:
                move = codes[0]
            else:
                children = _strong(state, rng.getrandbits(64), game_sims)
                visits = [ch[1] for ch in children]
                if ply < 12:
                    move = children[rng.choices(range(len(children)), weights=visits)[0]][0]
                else:
                    move = max(children, key=lambda ch: (ch[3] == 1, ch[3] != 0, ch[1], ch[2]))[0]
            state.push(move)
            ply += 1
        if state.outcome >= 0:
            continue
        random_last = rng.random() < 0.5
        if random_last:  # a position after a poor move, as a search meets them
            state.push(rng.choice(state.legal_codes()))
            if state.outcome >= 0:
                continue
        sol = solve(state, nodes=solver_nodes, line=False)
        if sol.solved:
            assert sol.value is not None
            labels.append(float(sol.value))
            how.append(SOLVED)
        else:
            labels.append(search_value(state, rng.getrandbits(64), sims))
            how.append(SEARCHED)
        moves.append(list(state.history_codes()))
        plies.append(len(moves[-1]))
        randoms.append(random_last)
        if log is not None and len(moves) % 50 == 0:
            log(f"held-out set: {len(moves)}/{positions} positions labelled")
    return HeldOut(
        moves,
        np.array(labels, dtype=np.float32),
        np.array(how, dtype=np.int8),
        np.array(plies, dtype=np.int16),
        np.array(randoms, dtype=bool),
    )


def net_values(net: evalnet.EvalNet | str | Path, states: list[State]) -> np.ndarray:
    """The network's value of each position for its side to move (the C evaluation)."""
    knet = evalnet.kernel_net(net)
    return np.array([knet.evaluate(st)[0] for st in states], dtype=np.float32)


def playout_values(states: list[State], n: int, seed: int = 0) -> np.ndarray:
    """The mean result of ``n`` greedy playouts from each position (the search's leaf value)."""
    out = np.zeros(len(states), dtype=np.float32)
    for i, st in enumerate(states):
        results = [_result(kernel.C.playout(st, seed * 7919 + i * 131 + j, 0), st.turn) for j in range(n)]
        out[i] = sum(results) / n
    return out


def _figures(pred: np.ndarray, label: np.ndarray) -> dict[str, float]:
    if not len(label):
        return {"n": 0.0}
    decided = label != 0
    sign = float((np.sign(pred[decided]) == np.sign(label[decided])).mean()) if decided.any() else float("nan")
    return {"n": float(len(label)), "mse": float(((pred - label) ** 2).mean()), "sign": sign}


def report(held: HeldOut, predictors: dict[str, np.ndarray]) -> dict[str, dict[str, dict[str, float]]]:
    """Each predictor's figures on the whole set, the solved positions and the searched ones (and,
    when the set knows it, those after a random move and those on the search's path):
    ``{name: {"all" | "solved" | "searched" | "after_random" | "on_path": {"n", "mse", "sign"}}}``."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, pred in predictors.items():
        out[name] = {
            "all": _figures(pred, held.label),
            "solved": _figures(pred[held.how == SOLVED], held.label[held.how == SOLVED]),
            "searched": _figures(pred[held.how == SEARCHED], held.label[held.how == SEARCHED]),
        }
        if held.random_last is not None:
            r = held.random_last
            out[name]["after_random"] = _figures(pred[r], held.label[r])
            out[name]["on_path"] = _figures(pred[~r], held.label[~r])
    return out
