"""Named levels for people: a player and a budget each (table and measurements in docs/ai.md).

* ``easy`` — ``greedy`` (one ply, random among equals); instant.
* ``casual`` — ``mcts`` with guided playouts, 60 simulations: the step between ``easy`` and
  ``medium`` (``medium`` beat ``easy`` 85–88%, issue 32 point 5); instant.
* ``medium`` — ``mcts`` with guided playouts, 200 simulations; instant on the C kernel.
* ``hard`` — ``mcts`` with guided playouts, 800 simulations.
* ``strong``, ``advanced``, ``skilled``, ``veteran``, ``challenger`` and ``elite`` — the search of
  the expert before its value network (``expert-v3``'s) with smaller budgets (``RUNG_SIMS``: 100,
  250, 800, 2,500, 8,000 and 30,000 simulations, at most 1 s): the rungs between ``hard`` and
  ``expert``, which beat ``hard`` 100-0 (issue 32 point 5); ``elite`` is ``expert-v3`` itself,
  the step the learned ``expert`` needed above ``challenger``.
* ``expert`` — the learned search on the C kernel: the strong search (greedy playouts, each
  move the best of all placements by immediate margin; the MCTS-solver, proven wins and
  losses; the endgame solver, ``endgame=1``: a position it settles within 30% of the move's
  budget is played exactly) with the value network (``evaluator=value``, ``ai/value.npz``)
  judging each new leaf together with its playout (``mix=0.65``) and ordering the moves a
  node of 200 visits widens to (``vorder=200``); 30,000 simulations, never more than 1 s per
  move (docs/ai.md, "The levels take the learned search").
  Without the C kernel: the pure-Python search, 4,000 simulations, at most 2.5 s.
* ``master`` — the expert's search with ``MASTER_SIMS`` simulations, never more than 3 s per move.
  Without the C kernel: the pure-Python search, 12,000 simulations, at most 3 s.
* ``expert-v1`` and ``master-v1`` — the levels before the strong search (best-of-10 sampled
  playouts, sevens defended, no solver; 30,000 and 100,000 simulations, 1 s and 3 s), frozen so
  that every change is measured against them (docs/ai.md, "Tuning log").
* ``expert-v2`` and ``master-v2`` — the expert and master before the endgame solver (issue 31):
  greedy playouts and the MCTS-solver, 30,000 and 100,000 simulations, 1 s and 3 s, frozen.
* ``expert-v3`` and ``master-v3`` — the expert and master before the value network: the v2
  search with the endgame solver (the rungs' search), 30,000 and 100,000 simulations, frozen.

Budgets are simulation counts, so a level plays the same on any machine (only slower or
faster) and arena results reproduce; the time caps keep the promises (expert 1 s, master
3 s) on slow machines.  A ``Limit`` passed to ``choose_move`` replaces them.
``mcts-py:sims=4000`` is the expert of the pure-Python era, kept to measure against.
"""

from __future__ import annotations

from dataclasses import dataclass

from jericho_game import kernel
from jericho_game.ai.base import Player
from jericho_game.ai.greedy import GreedyPlayer
from jericho_game.ai.mcts import mcts

__all__ = [
    "easy",
    "casual",
    "medium",
    "hard",
    "expert",
    "master",
    "expert_v1",
    "master_v1",
    "expert_v2",
    "master_v2",
    "expert_v3",
    "master_v3",
    "LEVELS",
    "LADDER",
    "Level",
    "ladder",
    "think_time",
    "strong",
    "advanced",
    "skilled",
    "veteran",
    "challenger",
    "elite",
    "EXPERT_TIME",
    "MASTER_TIME",
]

CASUAL_SIMS = 60
MEDIUM_SIMS = 200
HARD_SIMS = 800
#: The rungs between hard and expert (issue 32): the v3 expert's search with small budgets, each
#: 2.5-3.75 times the one below up to elite (the v3 expert itself), which the learned expert beats
#: as the v3 expert beat challenger (docs/ai.md, "The ladder"); without the kernel, the Python search.
RUNG_SIMS = {"strong": 100, "advanced": 250, "skilled": 800, "veteran": 2_500, "challenger": 8_000, "elite": 30_000}
RUNG_PY = {"strong": 1_000, "advanced": 1_500, "skilled": 2_000, "veteran": 3_000, "challenger": 3_500, "elite": 4_000}
RUNG_TIME = 1.0
#: Expert and master budgets on the C kernel: (simulations, seconds per move at most), the v1
#: levels' own: a greedy playout costs about what a v1 playout does (1.0-1.3x with its memo of
#: effects), so the same count takes about the same time (half the count lost to v1, docs/ai.md).
EXPERT_C = (30_000, 1.0)
MASTER_C = (100_000, 3.0)
#: The strong search's exploration constant and widening (the tuning run in docs/ai.md).
STRONG_C = 0.3
STRONG_WIDEN = 2.0
#: The learned search's settings (docs/ai.md, from "At 1 s a move, and the value mixed with the playouts"):
#: a network's value needs less exploration than a playout's alone (``c``), weighs 0.65 against
#: the playout (``mix``), gives no priors (``cprior=0``: the search's own order, which its value
#: re-orders once a node has ``LEARNED_VORDER`` visits).
LEARNED_C = 0.15
LEARNED_MIX = 0.65
LEARNED_VORDER = 200
#: The v1 levels (frozen): budgets, and their playouts: each move the best of 10 sampled moves
#: by margin (3 for the other levels), a side facing the opponent's seven breaking it (``defend``).
EXPERT_V1_C = (30_000, 1.0)
MASTER_V1_C = (100_000, 3.0)
STRONG_K = 10
#: The v2 levels (frozen before the endgame solver, issue 31): today's strong search without it.
EXPERT_V2_C = (30_000, 1.0)
MASTER_V2_C = (100_000, 3.0)
V2_C = 0.3
V2_WIDEN = 2.0
#: The v3 levels (frozen before the value network, issue 32): the strong search with the endgame solver.
EXPERT_V3_C = (30_000, 1.0)
MASTER_V3_C = (100_000, 3.0)
#: The same levels on the pure-Python core (the expert is the pre-kernel expert).
EXPERT_PY = (4_000, 2.5)
MASTER_PY = (12_000, 3.0)
EXPERT_SIMS, EXPERT_TIME = EXPERT_C if kernel.C is not None else EXPERT_PY
MASTER_SIMS, MASTER_TIME = MASTER_C if kernel.C is not None else MASTER_PY


def _learned(sims: int, time: float, seed: int | None) -> Player:
    """The expert's and master's search: the strong search with the value network on the C
    kernel, the pre-kernel search in Python."""
    if kernel.C is not None:
        return mcts(
            sims=sims,
            time=time,
            c=LEARNED_C,
            widen=STRONG_WIDEN,
            greedy=1,
            solver=1,
            endgame=1,
            evaluator="value",
            mix=LEARNED_MIX,
            cprior=0.0,
            vorder=LEARNED_VORDER,
            seed=seed,
        )
    return mcts(sims=sims, time=time, playout="guided", seed=seed)


def _strong(sims: int, time: float, seed: int | None) -> Player:
    """The rungs' search and the v3 levels' (frozen): greedy playouts, the MCTS-solver and the
    endgame solver on the C kernel, the pre-kernel search in Python."""
    if kernel.C is not None:
        return mcts(sims=sims, time=time, c=STRONG_C, widen=STRONG_WIDEN, greedy=1, solver=1, endgame=1, seed=seed)
    return mcts(sims=sims, time=time, playout="guided", seed=seed)


def _v2(sims: int, time: float, seed: int | None) -> Player:
    """The v2 expert's and master's search (frozen): greedy playouts and the MCTS-solver, no endgame solver."""
    if kernel.C is not None:
        return mcts(sims=sims, time=time, c=V2_C, widen=V2_WIDEN, greedy=1, solver=1, seed=seed)
    return mcts(sims=sims, time=time, playout="guided", seed=seed)


def _v1(sims: int, time: float, seed: int | None) -> Player:
    """The v1 expert's and master's search: best-of-10 defended playouts on the C kernel."""
    if kernel.C is not None:
        return mcts(sims=sims, time=time, playout="guided", k=STRONG_K, defend=1, seed=seed)
    return mcts(sims=sims, time=time, playout="guided", seed=seed)


def _named(player: Player, name: str) -> Player:
    player.name = name
    return player


def easy(seed: int | None = None) -> Player:
    """Greedy one-ply play: takes monoliths, sees immediate wins and losses, nothing more."""
    return _named(GreedyPlayer(seed=seed), "easy")


def casual(seed: int | None = None) -> Player:
    """MCTS with a very small simulation budget: a step up from easy, still short-sighted."""
    return _named(mcts(sims=CASUAL_SIMS, playout="guided", seed=seed), "casual")


def medium(seed: int | None = None) -> Player:
    """MCTS with a small simulation budget: sees simple tactics, misses deeper plans."""
    return _named(mcts(sims=MEDIUM_SIMS, playout="guided", seed=seed), "medium")


def hard(seed: int | None = None) -> Player:
    """MCTS with a moderate simulation budget."""
    return _named(mcts(sims=HARD_SIMS, playout="guided", seed=seed), "hard")


def _rung(name: str, seed: int | None) -> Player:
    if kernel.C is None:
        return _named(mcts(sims=RUNG_PY[name], time=RUNG_TIME, playout="guided", seed=seed), name)
    return _named(_strong(RUNG_SIMS[name], RUNG_TIME, seed), name)


def strong(seed: int | None = None) -> Player:
    """The expert's search (greedy playouts, the solver) with 100 simulations, at most 1 s."""
    return _rung("strong", seed)


def advanced(seed: int | None = None) -> Player:
    """The expert's search with 250 simulations, at most 1 s."""
    return _rung("advanced", seed)


def skilled(seed: int | None = None) -> Player:
    """The expert's search with 800 simulations, at most 1 s."""
    return _rung("skilled", seed)


def veteran(seed: int | None = None) -> Player:
    """The expert's search with 2,500 simulations, at most 1 s."""
    return _rung("veteran", seed)


def challenger(seed: int | None = None) -> Player:
    """The v3 expert's search with 8,000 simulations, at most 1 s."""
    return _rung("challenger", seed)


def elite(seed: int | None = None) -> Player:
    """The expert's search before its value network (``expert-v3``'s) with 30,000 simulations, at
    most 1 s: the step between ``challenger`` and the learned ``expert``."""
    return _rung("elite", seed)


def expert(seed: int | None = None, time: float = EXPERT_TIME) -> Player:
    """MCTS with ``EXPERT_SIMS`` simulations, never more than ``time`` seconds (default: the level's cap).

    Simulation-bounded so that its games reproduce; the time cap keeps the promise on
    slow machines.
    """
    if time <= 0 or time > 3.0:
        raise ValueError(f"expert time must be in (0, 3] seconds, got {time}")
    return _named(_learned(EXPERT_SIMS, time, seed), "expert")


def master(seed: int | None = None, time: float = MASTER_TIME) -> Player:
    """The strongest level: MCTS with ``MASTER_SIMS`` simulations, never more than ``time`` seconds (3 s)."""
    if time <= 0 or time > 3.0:
        raise ValueError(f"master time must be in (0, 3] seconds, got {time}")
    return _named(_learned(MASTER_SIMS, time, seed), "master")


def expert_v1(seed: int | None = None) -> Player:
    """The expert before the strong search (frozen to measure against): 30,000 simulations, <= 1 s."""
    sims, time = EXPERT_V1_C if kernel.C is not None else EXPERT_PY
    return _named(_v1(sims, time, seed), "expert-v1")


def master_v1(seed: int | None = None) -> Player:
    """The master before the strong search (frozen to measure against): 100,000 simulations, <= 3 s."""
    sims, time = MASTER_V1_C if kernel.C is not None else MASTER_PY
    return _named(_v1(sims, time, seed), "master-v1")


def expert_v2(seed: int | None = None) -> Player:
    """The expert before the endgame solver (frozen to measure against): 30,000 simulations, <= 1 s."""
    sims, time = EXPERT_V2_C if kernel.C is not None else EXPERT_PY
    return _named(_v2(sims, time, seed), "expert-v2")


def master_v2(seed: int | None = None) -> Player:
    """The master before the endgame solver (frozen to measure against): 100,000 simulations, <= 3 s."""
    sims, time = MASTER_V2_C if kernel.C is not None else MASTER_PY
    return _named(_v2(sims, time, seed), "master-v2")


def expert_v3(seed: int | None = None) -> Player:
    """The expert before the value network (frozen to measure against): 30,000 simulations, <= 1 s."""
    sims, time = EXPERT_V3_C if kernel.C is not None else EXPERT_PY
    return _named(_strong(sims, time, seed), "expert-v3")


def master_v3(seed: int | None = None, time: float | None = None) -> Player:
    """The master before the value network (frozen to measure against): 100,000 simulations, <= 3 s.

    Also the search of the review and the analysis board (``ai/analysis.py``: its calibration
    of root values to winning chances was fitted to this search), there with ``time``, a
    lower cap."""
    sims, cap = MASTER_V3_C if kernel.C is not None else MASTER_PY
    if time is not None:
        if time <= 0 or time > cap:
            raise ValueError(f"master-v3 time must be in (0, {cap:g}] seconds, got {time}")
        cap = time
    return _named(_strong(sims, cap, seed), "master-v3")


LEVELS = {
    "easy": easy,
    "casual": casual,
    "medium": medium,
    "hard": hard,
    "strong": strong,
    "advanced": advanced,
    "skilled": skilled,
    "veteran": veteran,
    "challenger": challenger,
    "elite": elite,
    "expert": expert,
    "master": master,
}


@dataclass(frozen=True)
class Level:
    """A rung of the ladder people climb.

    ``elo``: about where it stands (docs/ai.md, "The ladder": one scale, ``easy`` at 1,000),
    shown next to its name on the site; ``think``: the least seconds a move of it takes for a
    person (the web app waits out the rest, so no upper level answers at once); ``cap``: the
    most seconds its search takes on the C kernel."""

    name: str
    elo: int
    think: float
    cap: float


#: The ladder, weakest first: the one list the web app's picker, the engine protocol and the
#: arena (``jericho arena --ladder``) offer.  Every name is a registered player (ai/base.py).
#: Elo: one fit of the kept runs (100 games per adjacent pair): the round robin of 2026-12-04 in
#: docs/runs/ladder-3304, and the pairings of the learned expert and master and of elite played
#: on 2026-12-06 (docs/runs/ladder-top-2026-12-06, ladder-elite-2026-12-06; ``jericho arena
#: --rate`` on the three), shifted so that easy is 1,000 and rounded to tens;
#: tests/ai/test_ladder.py refits it.
LADDER: tuple[Level, ...] = (
    Level("easy", 1000, 0.5, 0.01),
    Level("casual", 1190, 0.5, 0.01),
    Level("medium", 1370, 0.6, 0.05),
    Level("hard", 1580, 0.8, 0.1),
    Level("strong", 1770, 1.0, RUNG_TIME),
    Level("advanced", 1980, 1.0, RUNG_TIME),
    Level("skilled", 2160, 1.0, RUNG_TIME),
    Level("veteran", 2400, 1.0, RUNG_TIME),
    Level("challenger", 2600, 1.0, RUNG_TIME),
    Level("elite", 2810, 1.0, RUNG_TIME),
    Level("expert", 2990, 1.0, EXPERT_C[1]),
    Level("master", 3130, 1.5, MASTER_C[1]),
)


def ladder() -> list[str]:
    """The ladder's level names, weakest first."""
    return [lv.name for lv in LADDER]


def think_time(name: str) -> float:
    """The least seconds a move of level ``name`` takes for a person (0 for any other player)."""
    return next((lv.think for lv in LADDER if lv.name == name), 0.0)
