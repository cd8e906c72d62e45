"""Named levels for people: a player and a budget each (table in docs/ai.md).

=======  ===============================================  ==========================
level    player                                           typical time per move
=======  ===============================================  ==========================
easy     ``greedy`` (one ply, random among equals)         instant
medium   ``mcts``, guided playouts, 200 simulations        ~0.03 s
hard     ``mcts``, guided playouts, 800 simulations        ~0.15 s
expert   ``mcts``, guided playouts, 4000 simulations,      ~0.8 s (never over 2.5 s)
         capped at 2.5 s
=======  ===============================================  ==========================

A ``Limit`` passed to ``choose_move`` can only tighten a level's time budget.
"""

from __future__ import annotations

from jericho.players.base import Player
from jericho.players.greedy import GreedyPlayer
from jericho.players.mcts import MCTSPlayer

__all__ = ["easy", "medium", "hard", "expert", "LEVELS", "EXPERT_TIME"]

#: Seconds per move the expert level allows itself (the promise is 3 s).
EXPERT_TIME = 2.5
MEDIUM_SIMS = 200
HARD_SIMS = 800
EXPERT_SIMS = 4000


def _named(player: Player, name: str) -> Player:
    player.name = name
    return player


def easy(seed: int | None = None) -> Player:
    """Greedy one-ply play: takes monoliths, sees immediate wins and losses, nothing more."""
    return _named(GreedyPlayer(seed=seed), "easy")


def medium(seed: int | None = None) -> Player:
    """MCTS with a small simulation budget: sees simple tactics, misses deeper plans."""
    return _named(MCTSPlayer(sims=MEDIUM_SIMS, playout="guided", seed=seed), "medium")


def hard(seed: int | None = None) -> Player:
    """MCTS with a moderate simulation budget."""
    return _named(MCTSPlayer(sims=HARD_SIMS, playout="guided", seed=seed), "hard")


def expert(seed: int | None = None, time: float = EXPERT_TIME) -> Player:
    """The strongest level: MCTS with 4000 simulations, never more than ``time`` seconds (default 2.5 s).

    Simulation-bounded so that its games reproduce; the time cap keeps the 3 s promise
    on slow machines.
    """
    if time <= 0 or time > 3.0:
        raise ValueError(f"expert time must be in (0, 3] seconds, got {time}")
    return _named(MCTSPlayer(sims=EXPERT_SIMS, time=time, playout="guided", seed=seed), "expert")


LEVELS = {"easy": easy, "medium": medium, "hard": hard, "expert": expert}
