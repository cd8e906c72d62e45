"""OpenSpiel's Python MCTS as a Jericho player (``make_player("openspiel-mcts:sims=300")``).

The search is OpenSpiel's own ``open_spiel.python.algorithms.mcts.MCTSBot`` with its
``RandomRolloutEvaluator``, run on the ``python_jericho`` game
(:mod:`jericho_game.envs.openspiel_game`): an outside implementation to measure the
project's players against in the arena.  (OpenSpiel's C++ ``pyspiel.MCTSBot`` crashes on
Python-implemented games, so it is not used.)

Options: ``sims`` (simulations per move, default 300), ``rollouts`` (random rollouts
per leaf, default 1), ``uct_c`` (exploration constant, default 2.0), ``seed``,
``solve`` (MCTS-Solver backups, default true).  A :class:`~jericho_game.ai.Limit` with
``nodes`` sets the simulations for that move; with only ``time`` (``sims`` is then
ignored), the player runs as many simulations as fit, estimated from the speed it
measured on its previous searches (OpenSpiel's search has no clock of its own; the very
first search measures it with 10 simulations), so it stays close to the budget but may
overrun it slightly.  ``limit.seed`` reseeds the search.
"""

from __future__ import annotations

import time

from jericho_game.extras import missing_extra

try:
    import numpy as np
    from open_spiel.python.algorithms import mcts
except ImportError as exc:
    raise missing_extra("OpenSpiel's MCTS player", "rl", exc) from exc

from jericho_game.ai.base import Limit
from jericho_game.envs.encoding import default_encoding
from jericho_game.envs.openspiel_game import GAME_NAME, state_from_game
from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = ["OpenSpielMCTSPlayer"]


class OpenSpielMCTSPlayer:
    """A :class:`jericho_game.ai.Player` running OpenSpiel's Python MCTS with random rollouts."""

    def __init__(
        self,
        sims: int = 300,
        rollouts: int = 1,
        uct_c: float = 2.0,
        seed: int | None = None,
        solve: bool | int | str = True,
        name: str | None = None,
    ) -> None:
        import pyspiel

        if int(sims) < 1:
            raise ValueError(f"sims must be at least 1, got {sims!r}")
        if int(rollouts) < 1:
            raise ValueError(f"rollouts must be at least 1, got {rollouts!r}")
        if float(uct_c) <= 0:
            raise ValueError(f"uct_c must be positive, got {uct_c!r}")
        self.sims = int(sims)
        self.rollouts = int(rollouts)
        self.uct_c = float(uct_c)
        self.solve = solve not in (False, 0, "0", "false", "no")
        self.name = name or f"openspiel-mcts:sims={self.sims}"
        self._rng = np.random.RandomState(seed)
        self._game = pyspiel.load_game(GAME_NAME)
        self._seconds_per_sim: float | None = None
        self.last_sims = 0
        self.last_seconds = 0.0

    def _bot(self, sims: int) -> mcts.MCTSBot:
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=self.rollouts, random_state=self._rng)
        return mcts.MCTSBot(
            self._game,
            uct_c=self.uct_c,
            max_simulations=sims,
            evaluator=evaluator,
            solve=self.solve,
            random_state=self._rng,
        )

    def _search(self, state: object, sims: int) -> int:
        start = time.perf_counter()
        action = int(self._bot(sims).step(state))
        elapsed = time.perf_counter() - start
        self.last_sims += sims
        per_sim = elapsed / sims
        old = self._seconds_per_sim
        self._seconds_per_sim = per_sim if old is None else 0.5 * (old + per_sim)
        return action

    def choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        """OpenSpiel MCTS's move for ``game``'s side to move (``game`` is not modified)."""
        if game.is_over():
            raise ValueError("the game is over: there is no move to choose")
        moves = game.legal_moves()
        if len(moves) == 1:
            return moves[0]
        if limit is not None and limit.seed is not None:
            self._rng.seed(limit.seed)
        state = state_from_game(game)
        started = time.perf_counter()
        self.last_sims = 0
        if limit is not None and limit.nodes is not None:
            action = self._search(state, max(1, int(limit.nodes)))
        elif limit is not None and limit.time is not None:
            if self._seconds_per_sim is None:  # no speed measured yet: a small search first
                action = self._search(state, 10)
            left = limit.time - (time.perf_counter() - started)
            assert self._seconds_per_sim is not None
            sims = int(left / self._seconds_per_sim)
            if sims >= 10 or self.last_sims == 0:
                action = self._search(state, max(1, sims))
        else:
            action = self._search(state, self.sims)
        self.last_seconds = time.perf_counter() - started
        move = default_encoding().action_to_move(action)
        if not game.is_legal(move):  # pragma: no cover - OpenSpiel only returns legal actions
            raise RuntimeError(f"OpenSpiel MCTS returned an illegal move {move}: {game.why_illegal(move)}")
        return move
