"""AI players.  Every player implements :class:`jericho_game.ai.base.Player`.

``make_player("random")``, ``make_player("mcts:sims=2000")`` or a level name
(``"easy"`` … ``"expert"``) builds one; :data:`REGISTRY` maps names to factories.
"""

from __future__ import annotations

from jericho_game.ai.base import Limit, Player, PlayerSpecError, make_player, register, registered_names

__all__ = ["Limit", "Player", "PlayerSpecError", "make_player", "register", "registered_names"]
