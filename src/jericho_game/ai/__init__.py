"""The AI: players, their search, the learned evaluator and its training, the arena, benchmarks,
game analysis and the puzzle search.  Every player implements :class:`jericho_game.ai.base.Player`.

``make_player("random")``, ``make_player("mcts:sims=2000")`` or a level name
(``"easy"`` … ``"master"``) builds one; :func:`registered_names` lists them.

May import: the rules library (talking to the engine through :mod:`jericho_game.core` and
:mod:`jericho_game.kernel`, docs/engine.md) and the encodings of :mod:`jericho_game.envs.encoding`
and :mod:`jericho_game.envs.planar` (the learned players read positions as numbers).  Never the
web app, the programs or the envs' adapters: they import the AI.  (``jericho_game.players`` is
this package's old name and still works.)
"""

from __future__ import annotations

from jericho_game.ai.base import Limit, Player, PlayerSpecError, make_player, register, registered_names

__all__ = ["Limit", "Player", "PlayerSpecError", "make_player", "register", "registered_names"]
