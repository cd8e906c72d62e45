"""Jericho as an OpenSpiel Python game, registered as ``"python_jericho"``.

>>> import pyspiel
>>> import jericho_game.envs.openspiel_game  # registers the game
>>> game = pyspiel.load_game("python_jericho")
>>> state = game.new_initial_state()
>>> state.apply_action(state.legal_actions()[0])

* Players: 0 = South (moves first), 1 = North.
* Actions: the engine's move codes, ``0..650`` (:mod:`jericho_game.envs.encoding`), 650 = pass.
* Returns: +1 / -1 for a win / loss, 0 each for a draw, at the end only (zero-sum,
  terminal rewards).
* Observation tensor: :meth:`jericho_game.envs.encoding.Encoding.observe` seen by the player
  asked about (shape ``[1239]``); observation string: the board as text and the observer.
* Parameter ``observation``: ``flat`` (default) or ``planar`` (the ``[192, 4, 7]`` planes
  of :mod:`jericho_game.envs.planar`, for OpenSpiel's convolutional AlphaZero models).
* Parameter ``position``: start from a position text (commas written ``;``); see
  :func:`state_from_game` to get a state at any :class:`jericho_game.Game`'s position.
* Serialization: OpenSpiel's own (game string, action history and a compact
  description of the position), so ``pyspiel.serialize_game_and_state`` and ``pickle``
  both work.

OpenSpiel's C++ ``pyspiel.MCTSBot`` crashes on Python-implemented games; use the Python
``open_spiel.python.algorithms.mcts.MCTSBot`` (see :mod:`jericho_game.envs.openspiel_bot`).
"""

from __future__ import annotations

from typing import Any

from jericho_game.extras import missing_extra

try:
    import numpy as np
    import pyspiel
    from open_spiel.python.observation import IIGObserverForPublicInfoGame
except ImportError as exc:
    raise missing_extra("the OpenSpiel adapter", "rl", exc) from exc

from jericho_game.envs.encoding import Encoding, default_encoding
from jericho_game.envs.pettingzoo_env import MAX_GAME_LENGTH
from jericho_game.envs.planar import default_planar
from jericho_game.envs.render import render_text
from jericho_game.game import Game

__all__ = ["JerichoGame", "JerichoState", "state_from_game", "GAME_NAME"]

GAME_NAME = "python_jericho"
_ENC: Encoding = default_encoding()

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Jericho",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"position": "", "observation": "flat"},
)
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=_ENC.n_actions,
    max_chance_outcomes=0,
    num_players=2,
    min_utility=-1.0,
    max_utility=1.0,
    utility_sum=0.0,
    max_game_length=MAX_GAME_LENGTH,
)


class _Position:
    """The jericho :class:`Game` inside a state: cheap to deep-copy, compact to pickle."""

    __slots__ = ("game",)

    def __init__(self, game: Game) -> None:
        self.game = game

    def __deepcopy__(self, memo: dict[int, Any]) -> _Position:
        return _Position(self.game.copy())

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_rebuild, (self.game.start_position, [str(m) for m in self.game.history]))


def _rebuild(start: str | None, moves: list[str]) -> _Position:
    game = Game.from_position(start) if start else Game()
    for m in moves:
        game.play(m)
    return _Position(game)


class JerichoGame(pyspiel.Game):
    """The OpenSpiel game object (load it with ``pyspiel.load_game("python_jericho")``).

    Parameter ``position``: start from a position text (docs/notation.md) instead of the
    standard start; write its commas as ``;`` in a game string, e.g.
    ``python_jericho(position=d2:5R;d3:1G 1RYGBW... north - 0 *)`` (a dict may use either).
    """

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        self.observation = str(params.get("observation", "flat") or "flat")
        if self.observation not in ("flat", "planar"):
            raise ValueError(f"bad observation parameter {self.observation!r}: choose 'flat' or 'planar'")
        text = str(params.get("position", "") or "").replace(";", ",").strip()
        self._start: Game | None = None
        if text:
            try:
                self._start = Game.from_position(text)
            except Exception as exc:  # PositionError: name the bad field
                raise ValueError(f"bad position parameter {text!r}: {exc}") from None
            if self._start.is_over():
                raise ValueError(f"bad position parameter {text!r}: the game is over")
            params["position"] = self._start.position().replace(",", ";")
        super().__init__(_GAME_TYPE, _GAME_INFO, params)

    def new_initial_state(self) -> JerichoState:
        """The start of a game (or the ``position`` parameter)."""
        return JerichoState(self, self._start.copy() if self._start is not None else None)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        """The observer of the game (OpenSpiel calls this for tensors and strings)."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return JerichoObserver(params, self.observation)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class JerichoState(pyspiel.State):
    """A Jericho position inside OpenSpiel; wraps a :class:`jericho_game.Game` (``state.jericho_game``)."""

    def __init__(self, game: JerichoGame, position: Game | None = None) -> None:
        super().__init__(game)
        self._pos = _Position(position if position is not None else Game())

    @property
    def jericho_game(self) -> Game:
        """The underlying engine game (do not modify it: apply actions to the state)."""
        return self._pos.game

    # -- OpenSpiel API ------------------------------------------------------------------------
    def current_player(self) -> int:
        """0 (South) or 1 (North) to move, or ``pyspiel.PlayerId.TERMINAL``."""
        g = self._pos.game
        return pyspiel.PlayerId.TERMINAL if g.is_over() else g.state.turn

    def _legal_actions(self, player: int) -> list[int]:
        """Legal move codes, ascending (the engine generates them in code order)."""
        g = self._pos.game
        if g.is_over() or player != g.state.turn:
            return []
        return g.state.legal_codes()

    def _apply_action(self, action: int) -> None:
        self._pos.game.play(_ENC.action_to_move(action))

    def _action_to_string(self, player: int, action: int) -> str:
        return str(_ENC.action_to_move(action))

    def is_terminal(self) -> bool:
        """True once the game has ended."""
        return self._pos.game.is_over()

    def returns(self) -> list[float]:
        """``[south, north]``: +1/-1 for a win/loss, 0 for a draw or an unfinished game."""
        outcome = self._pos.game.outcome()
        if outcome is None or outcome == "draw":
            return [0.0, 0.0]
        return [1.0, -1.0] if outcome == "south" else [-1.0, 1.0]

    def __str__(self) -> str:
        return self._pos.game.position()


class JerichoObserver:
    """OpenSpiel observer: the encoding's observation vector, seen by the given player."""

    def __init__(self, params: Any, observation: str = "flat") -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params!r}")
        self.planar = default_planar() if observation == "planar" else None
        shape = self.planar.shape if self.planar is not None else (_ENC.observation_size,)
        # OpenSpiel reads the flat buffer `tensor`; `dict` gives it its shape.
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: JerichoState, player: int) -> None:
        """Fill :attr:`tensor` with ``state`` seen by ``player``."""
        if self.planar is None:
            _ENC.observe(state.jericho_game, player, out=self.tensor)
        else:
            self.tensor[:] = self.planar.observe(state.jericho_game, player).reshape(-1)

    def string_from(self, state: JerichoState, player: int) -> str:
        """The board as text, seen by ``player``."""
        side = ("south", "north")[player]
        return f"observer {side}\n{render_text(state.jericho_game)}"


def state_from_game(game: Game, observation: str = "flat") -> JerichoState:
    """An OpenSpiel state at ``game``'s position (``observation``: the game's parameter).

    At the standard start with no moves it is ``load_game("python_jericho")``'s initial
    state; otherwise the initial state of the game loaded with the ``position``
    parameter, so that OpenSpiel's history, serialization and pickling stay exact.
    """
    if game.start_position is None and not game.history:
        return pyspiel.load_game(GAME_NAME, {"observation": observation}).new_initial_state()  # type: ignore[no-any-return]
    if game.is_over():
        raise ValueError("the game is over: OpenSpiel states start from a game in progress")
    params = {"position": game.position().replace(",", ";"), "observation": observation}
    spiel_game = pyspiel.load_game(GAME_NAME, params)
    return spiel_game.new_initial_state()  # type: ignore[no-any-return]


pyspiel.register_game(_GAME_TYPE, JerichoGame)
