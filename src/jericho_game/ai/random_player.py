"""The ``random`` player: uniform over the legal moves."""

from __future__ import annotations

import random

from jericho_game.ai.base import Limit
from jericho_game.game import Game
from jericho_game.moves import Move


class RandomPlayer:
    """Picks a legal move uniformly at random (seeded for reproducibility)."""

    def __init__(self, seed: int | None = None) -> None:
        self.name = "random"
        self._rng = random.Random(seed)

    def choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        """A uniformly random legal move; ``limit.seed`` reseeds when given."""
        if limit is not None and limit.seed is not None:
            self._rng.seed(limit.seed)
        moves = game.legal_moves()
        if not moves:
            raise ValueError("the game is over: there is no move to choose")
        return moves[self._rng.randrange(len(moves))]
