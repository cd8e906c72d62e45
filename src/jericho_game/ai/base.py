"""The player interface shared by every AI, the arena, the terminal and the web app.

A player is an object with ``name`` and ``choose_move(game, limit) -> Move``.  It
reads the position only through the engine's public interface (:class:`jericho_game.Game`
and, for speed, :mod:`jericho_game.core`), never changes the game it is given (it may
copy it), and always returns a legal move (``PASS`` when passing is forced).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = [
    "Limit",
    "OPTION_RULES",
    "Player",
    "PlayerSpecError",
    "check_option",
    "make_player",
    "needs_a_file",
    "register",
    "unregister",
    "registered_names",
    "split_spec",
]


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
    "random": ("jericho_game.ai.random_player", "RandomPlayer"),
    "greedy": ("jericho_game.ai.greedy", "GreedyPlayer"),
    "mcts": ("jericho_game.ai.mcts", "mcts"),  # the C search when the kernel is built
    "mcts-py": ("jericho_game.ai.mcts", "MCTSPlayer"),  # the pure-Python search (reference)
    "alphabeta": ("jericho_game.ai.alphabeta", "AlphaBetaPlayer"),
    "alphabeta-py": ("jericho_game.ai.alphabeta", "python_alphabeta"),
    "easy": ("jericho_game.ai.levels", "easy"),
    "casual": ("jericho_game.ai.levels", "casual"),
    "medium": ("jericho_game.ai.levels", "medium"),
    "hard": ("jericho_game.ai.levels", "hard"),
    "strong": ("jericho_game.ai.levels", "strong"),  # the ladder (ai/levels.py LADDER; a test keeps them equal)
    "advanced": ("jericho_game.ai.levels", "advanced"),
    "skilled": ("jericho_game.ai.levels", "skilled"),
    "veteran": ("jericho_game.ai.levels", "veteran"),
    "challenger": ("jericho_game.ai.levels", "challenger"),
    "elite": ("jericho_game.ai.levels", "elite"),
    "expert": ("jericho_game.ai.levels", "expert"),
    "master": ("jericho_game.ai.levels", "master"),
    "expert-v1": ("jericho_game.ai.levels", "expert_v1"),  # frozen, to measure against
    "master-v1": ("jericho_game.ai.levels", "master_v1"),
    "expert-v2": ("jericho_game.ai.levels", "expert_v2"),  # before the endgame solver (issue 31)
    "master-v2": ("jericho_game.ai.levels", "master_v2"),
    "expert-v3": ("jericho_game.ai.levels", "expert_v3"),  # before the value network (issue 32)
    "master-v3": ("jericho_game.ai.levels", "master_v3"),
    # Outside programs: an engine speaking docs/protocol.md, and OpenSpiel's Python MCTS bot.
    "external": ("jericho_game.cli.protocol_client", "ExternalEnginePlayer"),
    "openspiel-mcts": ("jericho_game.envs.openspiel_bot", "OpenSpielMCTSPlayer"),
    # The trained baseline (NumPy at play time): the policy's first choice, and PUCT guided by the net.
    "net": ("jericho_game.ai.net", "net"),
    "net+mcts": ("jericho_game.ai.net", "net_mcts"),
    # The AlphaZero baseline trained on the JAX env (the jax extra): `jax-az:PATH[,sims=N]`.
    "jax-az": ("jericho_game.envs.jax_az", "JaxAZPlayer"),
}
#: Players whose first option may be written bare, without ``key=``: ``jax-az:runs/ckpt.npz``
#: means ``jax-az:weights=runs/ckpt.npz`` (a file path is what these players cannot do without).
_BARE_FIRST: dict[str, str] = {"jax-az": "weights"}


def register(name: str, module: str, attribute: str) -> None:
    """Register a player factory ``module.attribute`` under ``name``."""
    _REGISTRY[name] = (module, attribute)


def unregister(name: str) -> None:
    """Forget the player registered under ``name`` (a test's own players, once its tests are done);
    nothing happens for a name not registered."""
    _REGISTRY.pop(name, None)


def registered_names() -> list[str]:
    """Every registered player and level name."""
    return sorted(_REGISTRY)


def needs_a_file(name: str) -> bool:
    """Whether player ``name`` cannot be built without a file option (``jax-az:PATH``).

    Such a player is never offered bare, and knowing it costs no import (``jax-az``'s module
    imports JAX, seconds of start-up)."""
    return name in _BARE_FIRST


#: How the options of player specs are read and checked, by option name (every player shares
#: these meanings): ``(kind, low, high)`` with kind ``int``, ``float`` (``low`` excluded when
#: it is 0 and the option is a positive quantity, see ``_POSITIVE``), ``choice`` (``low`` is
#: the tuple of allowed words) or ``text``.  Options of a factory not named here keep the
#: plain reading (a number when it parses as one, else text).
OPTION_RULES: dict[str, tuple[str, object, object]] = {
    "sims": ("int", 1, 1_000_000),
    "nodes": ("int", 1, 100_000_000),
    "time": ("float", 0.0, 600.0),
    "depth": ("int", 1, 64),
    "width": ("int", 1, 1000),
    "k": ("int", 1, 1000),
    "c": ("float", 0.0, 100.0),
    "widen": ("float", 0.0, 100.0),
    "c_puct": ("float", 0.0, 100.0),
    "seed": ("int", 0, 2**63 - 1),
    "reuse": ("int", 0, 1),
    "defend": ("int", 0, 1),
    "subtree": ("int", 0, 1),
    "transpose": ("int", 0, 1),
    "endgame": ("int", 0, 1),
    "solve_nodes": ("int", 0, 100_000_000),
    "solve_pieces": ("int", 0, 50),
    "solve_after": ("int", 0, 1_000_000),
    "symmetry": ("int", 0, 1),
    "python": ("int", 0, 1),
    "tt_size": ("int", 1024, 1 << 26),
    "timeout": ("float", 0.0, 3600.0),
    "startup": ("float", 0.0, 600.0),
    "playout": ("choice", ("guided", "random"), None),
    "final": ("choice", ("visits", "lcb"), None),
    "cmd": ("text", None, None),
    "weights": ("text", None, None),
    "evaluator": ("text", None, None),
    "mix": ("float", 0.0, 1.0),
    "cprior": ("float", 0.0, 100.0),
    "net_pieces": ("int", 0, 50),
    "trunc": ("int", 0, 100),
    "vorder": ("int", 0, 1_000_000),
    "imb": ("float", 0.0, 1.0),
    "name": ("text", None, None),
}
#: Float options that must be above their low bound (0 is not allowed).
_POSITIVE = {"time", "widen", "timeout", "startup"}
#: Longest echo of a spec's text inside an error message.
_ECHO = 40


def _echo(text: str) -> str:
    return repr(text if len(text) <= _ECHO else text[:_ECHO] + "...")


def split_spec(spec: str) -> tuple[str, list[tuple[str, str]]]:
    """``NAME[:key=value,...]`` split into the lower-cased name and its ``(key, value)`` texts.

    The grammar (the same wherever a spec is given: ``make_player``, ``jericho engine
    --player``, ``setoption player``, ``jericho arena``): options are separated by ``,``
    or ``;`` — except the value of ``cmd`` (an outside program's command line, which may
    hold a whole player spec written with ``;``), which runs to the next ``,``.  So
    ``external:cmd=jericho engine --player mcts:sims=500;seed=1,timeout=60`` gives the
    outer player ``cmd`` and ``timeout`` and the inner one ``sims`` and ``seed``.  A player
    named in ``_BARE_FIRST`` may give its first option's value alone: ``jax-az:PATH,sims=64``.
    Raises :class:`PlayerSpecError` for an item that is not ``key=value`` or a key given twice.
    """
    name, _, opts = spec.strip().partition(":")
    name = name.strip().lower()
    items: list[tuple[str, str]] = []
    if not opts.strip():
        return name, items
    i, n = 0, len(opts)
    while True:
        key = opts[i:].split("=", 1)[0].strip().lower()
        seps = "," if key == "cmd" else ",;"
        j = i
        while j < n and opts[j] not in seps:
            j += 1
        item = opts[i:j]
        k, eq, value = item.partition("=")
        if not items and name in _BARE_FIRST and (not eq or "/" in k or "." in k):
            k, eq, value = _BARE_FIRST[name], "=", item.strip()  # a bare first value (a path that may hold "=")
        if not eq or not k.strip():
            raise PlayerSpecError(f"bad option {_echo(item)} in player {_echo(name)}: expected key=value")
        k = k.strip().lower()
        if any(k == seen for seen, _ in items):
            raise PlayerSpecError(f"option {_echo(k)} given twice in player {_echo(name)}")
        items.append((k, value.strip()))
        if j >= n:
            break
        i = j + 1
    return name, items


def _number_range(low: object, high: object, positive: bool) -> str:
    lo = f"above {low:g}" if positive and isinstance(low, float) else f"from {low:_}"
    if positive:
        return f"{lo}, at most {high:g}" if isinstance(high, float) else f"{lo}, at most {high:_}"
    return f"{lo} to {high:_}" if isinstance(low, int) else f"from {low:g} to {high:g}"


def check_option(player: str, key: str, text: str) -> object:
    """The value of option ``key`` read from ``text``, checked against :data:`OPTION_RULES`.

    Raises :class:`PlayerSpecError` naming the option, the text and the allowed values.
    """
    rule = OPTION_RULES.get(key)
    if rule is None:
        return _value(text)
    kind, low, high = rule
    where = f"option {key}={_echo(text)} of player {_echo(player)}"
    if kind == "text":
        if not text:
            raise PlayerSpecError(f"{where}: expected a non-empty text")
        return text
    if kind == "choice":
        assert isinstance(low, tuple)
        word = text.lower()
        if word not in low:
            raise PlayerSpecError(f"{where}: expected one of {', '.join(low)}")
        return word
    positive = key in _POSITIVE
    if kind == "int":
        assert isinstance(low, int) and isinstance(high, int)
        allowed = f"a whole number {_number_range(low, high, False)}"
        try:
            number: float = int(text) if len(text) <= 30 else int("x")
        except ValueError:
            raise PlayerSpecError(f"{where}: expected {allowed}") from None
        if not low <= number <= high:
            raise PlayerSpecError(f"{where}: expected {allowed}")
        return number
    assert isinstance(low, float) and isinstance(high, float)
    allowed = f"a number {_number_range(low, high, positive)}"
    try:
        number = float(text) if len(text) <= 30 else float("x")
    except ValueError:
        raise PlayerSpecError(f"{where}: expected {allowed}") from None
    if not (low < number if positive else low <= number) or not number <= high:  # NaN fails both
        raise PlayerSpecError(f"{where}: expected {allowed}")
    return number


def make_player(spec: str, seed: int | None = None) -> Player:
    """Build a player from ``NAME`` or ``NAME:key=value,key=value`` (see :func:`split_spec`).

    Every option is checked now, by :data:`OPTION_RULES` and the factory's parameters.
    Raises :class:`PlayerSpecError` naming the unknown player or the bad option and what
    it allows.
    """
    name, items = split_spec(spec)
    if name not in _REGISTRY:
        raise PlayerSpecError(f"unknown player {_echo(name)}: choose from {', '.join(registered_names())}")
    module, attribute = _REGISTRY[name]
    try:
        factory = getattr(importlib.import_module(module), attribute)
    except ImportError as exc:  # an extra is missing: the message says which to install
        raise PlayerSpecError(f"player {name!r} is not available: {exc}") from None
    accepted = _parameters(factory)
    kwargs: dict[str, object] = {}
    for key, text in items:
        if accepted is not None and key not in accepted:
            options = ", ".join(sorted(accepted)) or "none"
            raise PlayerSpecError(f"unknown option {_echo(key)} for player {name!r}: its options are {options}")
        kwargs[key] = check_option(name, key, text)
    if seed is not None and "seed" not in kwargs:
        kwargs["seed"] = seed
    try:
        player: Player = factory(**kwargs)
    except (TypeError, ValueError) as exc:
        raise PlayerSpecError(f"bad options for player {name!r}: {exc}") from None
    return player


def _parameters(factory: Callable[..., object]) -> set[str] | None:
    """The keyword options ``factory`` takes (None when it takes any, or cannot be inspected)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name for p in params if p.kind in named}


def _value(text: str) -> object:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text
