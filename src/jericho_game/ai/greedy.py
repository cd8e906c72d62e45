"""The ``greedy`` player: one ply, with the seven-monolith rule taken into account.

For each legal move it looks at the position right after it and scores it:

* a move that ends the game in its favour (or reaches 7 monoliths that no reply of the
  opponent can break — a certain win) scores highest;
* a move after which the game is lost (the opponent kept 7 monoliths, or a final pass
  with fewer monoliths) scores lowest;
* otherwise the score is own monoliths − opponent's monoliths.

Ties are broken uniformly at random with a seeded generator.
"""

from __future__ import annotations

import random

from jericho_game.ai._util import breaks_possible, game_state, move_deltas, resolve_seed, to_move
from jericho_game.ai.base import Limit
from jericho_game.core import DRAW, NO_OUTCOME, SEVEN
from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = ["GreedyPlayer"]

WIN = 1000


class GreedyPlayer:
    """Maximises the monolith margin one ply ahead; takes certain wins, avoids immediate losses."""

    def __init__(self, seed: int | None = None) -> None:
        self.name = "greedy"
        self.seed = seed
        self._rng = random.Random(seed)

    def choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        """The best move by one-ply margin (ties random); ``limit`` only reseeds."""
        seed = resolve_seed(None, limit)
        if seed is not None:
            self._rng.seed(seed)
        state = game_state(game)
        codes = state.legal_codes()
        if len(codes) == 1:
            return to_move(game, codes[0])
        me = state.turn
        opp = 1 - me
        base = state.score[me] - state.score[opp]
        deltas = move_deltas(state, codes)
        best = -WIN - 1
        best_codes: list[int] = []
        must_break = state.score[opp] >= SEVEN
        for code, d in zip(codes, deltas, strict=True):
            value = base + d
            if must_break or state.score[me] + 2 >= SEVEN:
                # Only then can this move end the game or reach seven: play it to be sure.
                state.push(code)
                if state.outcome != NO_OUTCOME:
                    value = 0 if state.outcome == DRAW else WIN if state.outcome == me else -WIN
                elif state.score[me] >= SEVEN and not breaks_possible(state, me):
                    value = WIN - 1
                state.pop()
            if value > best:
                best = value
                best_codes = [code]
            elif value == best:
                best_codes.append(code)
        return to_move(game, best_codes[self._rng.randrange(len(best_codes))])
