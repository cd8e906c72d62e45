"""The observation options the adapters share: ``observation="flat" | "planar"`` and
``view="absolute" | "canonical"``.

* ``observation="flat"`` (default): the 1239-vector of :mod:`jericho_game.envs.encoding`;
  ``"planar"``: the ``192 x 4 x 7`` planes of :mod:`jericho_game.envs.planar`.
* ``view="absolute"`` (default): cells and actions are the engine's whoever observes;
  ``"canonical"``: the board as seen by the observer — North's observation, mask *and
  actions* are turned by a half turn (:meth:`Encoding.canonical`), so every observer
  looks like South, and an action chosen in that view is turned back before it is
  played.  Move texts (``info["opponent_moves"]``) stay real.
"""

from __future__ import annotations

from typing import Any

from jericho_game.extras import missing_extra

try:
    import gymnasium
    import numpy as np
except ImportError as exc:
    raise missing_extra("the environments", "rl", exc) from exc

from jericho_game.core import State
from jericho_game.envs.encoding import Encoding, default_encoding
from jericho_game.envs.planar import Planar, default_planar
from jericho_game.game import Game

__all__ = ["View", "OBSERVATIONS", "VIEWS"]

OBSERVATIONS = ("flat", "planar")
VIEWS = ("absolute", "canonical")


class View:
    """How one adapter shows positions and reads actions (see the module docstring)."""

    def __init__(self, encoding: Encoding, observation: str = "flat", view: str = "absolute") -> None:
        if observation not in OBSERVATIONS:
            raise ValueError(f"bad observation {observation!r}: choose 'flat' or 'planar'")
        if view not in VIEWS:
            raise ValueError(f"bad view {view!r}: choose 'absolute' or 'canonical'")
        self.encoding = encoding
        self.observation = observation
        self.view = view
        self.planar: Planar | None = None
        if observation == "planar":
            self.planar = default_planar() if encoding is default_encoding() else Planar(encoding)
        self.shape: tuple[int, ...] = self.planar.shape if self.planar else (encoding.observation_size,)
        self._half_turn = encoding.symmetry("half-turn") if view == "canonical" else None

    def observation_space(self, dtype: Any = np.float32) -> gymnasium.spaces.Box:
        """The space of one observation array (float32, or a compact ``uint8`` / ``bool``: the same 0/1 values)."""
        return gymnasium.spaces.Box(0, 1, self.shape, dtype=dtype)

    def turned(self, side: int) -> bool:
        """Whether ``side``'s observations and actions are turned (canonical view, North)."""
        return self._half_turn is not None and side == 1

    def observe(self, game: Game | State, side: int) -> np.ndarray:
        """The observation array of ``game`` seen by ``side``."""
        flat = self.encoding.observe(game, side)
        if self._half_turn is not None and side == 1:
            flat = self._half_turn.observations(flat)
        return self.planar.from_flat(flat) if self.planar is not None else flat

    def observations(self, flat: np.ndarray, masks: np.ndarray, sides: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A batch's flat observations ``(B, n_obs)`` and masks ``(B, n_actions)`` seen by ``sides``
        (0/1 per row), in this view: North's turned when canonical, then laid out as planes when planar.
        The NumPy reference of the C kernel's ``batch_views`` (the vector env without the kernel)."""
        north = np.asarray(sides) == 1
        if self._half_turn is not None and north.any():
            flat = np.where(north[:, None], self._half_turn.observations(flat), flat)
            masks = np.where(north[:, None], self._half_turn.masks(masks), masks)
        return (self.planar.from_flat(flat) if self.planar is not None else flat), masks

    def mask(self, mask: np.ndarray, side: int) -> np.ndarray:
        """A legal-action mask of ``side`` in this view."""
        return self._half_turn.masks(mask) if self._half_turn is not None and side == 1 else mask

    def real_action(self, action: int, side: int) -> int:
        """The engine's action for ``action`` chosen by ``side`` in this view."""
        return self._half_turn.action(action) if self._half_turn is not None and side == 1 else action
