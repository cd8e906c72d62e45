"""The player interface shared by every AI, the arena, the terminal and the web app.

A player is an object with ``name`` and ``choose_move(game, limit) -> Move``.  It
reads the position only through the engine's public interface (:class:`jericho_game.Game`
and, for speed, :mod:`jericho_game.core`), never changes the game it is given (it may
copy it), and always returns a legal move (``PASS`` when passing is forced).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = ["Limit", "Player", "PlayerSpecError", "make_player", "register", "registered_names"]


@dataclass(frozen=True)
class Limit:
    """What a player may spend on one move.

    ``time`` is wall-clock seconds (``None``: no time limit); ``nodes`` is a node or
    simulation budget (``None``: no budget).  With ``nodes`` set and ``time`` unset a
    player is deterministic for a given ``seed``.
    """

    time: float | None = None
    nodes: int | None = None
    seed: int | None = None


@runtime_checkable
class Player(Protocol):
    """Anything that can choose a move."""

    name: str

    def choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        """Return a legal move for ``game``'s side to move; never modifies ``game``."""
        ...


class PlayerSpecError(ValueError):
    """A player specification names no known player or has bad options."""


Factory = Callable[..., Player]
_REGISTRY: dict[str, tuple[str, str]] = {
    # name -> (module, factory attribute); modules are imported on first use.
    "random": ("jericho_game.players.random_player", "RandomPlayer"),
    "greedy": ("jericho_game.players.greedy", "GreedyPlayer"),
    "mcts": ("jericho_game.players.mcts", "mcts"),  # the C search when the kernel is built
    "mcts-py": ("jericho_game.players.mcts", "MCTSPlayer"),  # the pure-Python search (reference)
    "alphabeta": ("jericho_game.players.alphabeta", "AlphaBetaPlayer"),
    "alphabeta-py": ("jericho_game.players.alphabeta", "python_alphabeta"),
    "easy": ("jericho_game.players.levels", "easy"),
    "medium": ("jericho_game.players.levels", "medium"),
    "hard": ("jericho_game.players.levels", "hard"),
    "expert": ("jericho_game.players.levels", "expert"),
    "master": ("jericho_game.players.levels", "master"),
    "expert-v1": ("jericho_game.players.levels", "expert_v1"),  # frozen, to measure against
    "master-v1": ("jericho_game.players.levels", "master_v1"),
    # Outside programs: an engine speaking docs/protocol.md, and OpenSpiel's Python MCTS bot.
    "external": ("jericho_game.protocol_client", "ExternalEnginePlayer"),
    "openspiel-mcts": ("jericho_game.envs.openspiel_bot", "OpenSpielMCTSPlayer"),
    # The trained baseline (NumPy at play time): the policy's first choice, and PUCT guided by the net.
    "net": ("jericho_game.players.net", "net"),
    "net+mcts": ("jericho_game.players.net", "net_mcts"),
}


def register(name: str, module: str, attribute: str) -> None:
    """Register a player factory ``module.attribute`` under ``name``."""
    _REGISTRY[name] = (module, attribute)


def registered_names() -> list[str]:
    """Every registered player and level name."""
    return sorted(_REGISTRY)


def make_player(spec: str, seed: int | None = None) -> Player:
    """Build a player from ``NAME`` or ``NAME:key=value,key=value`` (values int/float/str).

    Raises :class:`PlayerSpecError` naming the unknown player or option.
    """
    name, _, opts = spec.strip().partition(":")
    name = name.lower()
    if name not in _REGISTRY:
        raise PlayerSpecError(f"unknown player {name!r}: choose from {', '.join(registered_names())}")
    kwargs: dict[str, object] = {}
    if opts:
        for item in opts.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise PlayerSpecError(f"bad option {item!r} in {spec!r}: expected key=value")
            kwargs[key.strip()] = _value(value.strip())
    if seed is not None and "seed" not in kwargs:
        kwargs["seed"] = seed
    module, attribute = _REGISTRY[name]
    try:
        factory = getattr(importlib.import_module(module), attribute)
    except ImportError as exc:  # an extra is missing: the message says which to install
        raise PlayerSpecError(f"player {name!r} is not available: {exc}") from None
    try:
        player: Player = factory(**kwargs)
    except TypeError as exc:
        raise PlayerSpecError(f"bad options for {name!r}: {exc}") from None
    return player


def _value(text: str) -> object:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text
