"""Named levels for people: a player and a budget each (table and measurements in docs/ai.md).

* ``easy`` — ``greedy`` (one ply, random among equals); instant.
* ``medium`` — ``mcts`` with guided playouts, 200 simulations; about 0.05 s per move.
* ``hard`` — ``mcts`` with guided playouts, 800 simulations; about 0.2 s per move.
* ``expert`` — ``mcts`` with guided playouts, 4000 simulations, never more than 2.5 s
  per move (the promise is 3 s); about 0.95 s per move on the 2-core test container.

Budgets are simulation counts, so a level plays the same on any machine (only slower
or faster) and arena results reproduce; the expert's time cap keeps the promise on slow
machines.  A ``Limit`` passed to ``choose_move`` can tighten the time further.
"""

from __future__ import annotations

from jericho_game.players.base import Player
from jericho_game.players.greedy import GreedyPlayer
from jericho_game.players.mcts import MCTSPlayer

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
