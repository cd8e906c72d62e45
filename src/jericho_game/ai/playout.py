"""The guided playout policy used by MCTS (the loop itself is the engine's).

:func:`guided_playout` is :func:`jericho_game.core.random_playout` with ``guided=k``: each
move is the best of ``k`` uniformly sampled legal moves by immediate effect on the
monolith margin (ties: the first sampled).  Such playouts look more like real games — a
side rarely hands over monoliths for nothing, and a seven-monolith threat is usually
broken when a breaking move is sampled — at a cost of roughly ``k`` times the sampling
work per move.  The rules are applied by the engine's playout loop of the state's own
kernel (C for a C state, :func:`jericho_game.core.random_playout` for a Python one).
"""

from __future__ import annotations

from collections.abc import Callable

from jericho_game.core import State
from jericho_game.kernel import playout

__all__ = ["guided_playout"]


def guided_playout(state: State, random: Callable[[], float], k: int = 3, moves: list[int] | None = None) -> int:
    """Play best-of-``k`` sampled moves from ``state`` (unchanged) to the end; return 0, 1 or 2.

    The move codes played are appended to ``moves`` when it is a list.
    """
    return playout(state, random, moves, guided=k)
