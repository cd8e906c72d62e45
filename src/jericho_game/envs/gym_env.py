"""Jericho as a Gymnasium single-agent environment: the agent plays one side against an AI.

>>> import gymnasium, jericho_game.envs.gym_env
>>> env = gymnasium.make("Jericho-v1", opponent="random", agent_side="south")
>>> obs, info = env.reset(seed=0)
>>> action = env.action_space.sample(obs["action_mask"])
>>> obs, reward, terminated, truncated, info = env.step(action)

* **Observation**: ``{"observation": float32 vector, "action_mask": int8 vector}``
  (:mod:`jericho_game.envs.encoding`, seen by the agent); the mask is also in
  ``info["action_mask"]`` and from :meth:`JerichoEnv.action_masks` (the name
  sb3-contrib's ``MaskablePPO`` looks for).
* **Observation options**: ``observation="planar"`` gives ``192 x 4 x 7`` planes on the
  board's grid (:mod:`jericho_game.envs.planar`) instead of the flat vector;
  ``view="canonical"`` shows the board as seen by the agent (North's observation, mask
  and actions turned by a half turn; :mod:`jericho_game.envs.views`).
* **Action**: ``Discrete(651)``, the engine's move code (pass = 650): an ``int`` or numpy
  integer; a float, a string or a ``bool`` raises ``TypeError`` (never silently truncated).
* **Opponent**: any ``jericho_game.ai.make_player`` spec (``"random"``,
  ``"mcts:sims=500"``, ``"expert"``, ``"external:cmd=..."``) or a player object; it moves
  within ``opponent_limit`` (a :class:`jericho_game.ai.Limit`).
* **Reproducibility**: every ``reset`` gives the opponent a fresh start — a spec is built
  anew with ``make_player(spec, seed=...)``, a player object is deep-copied from the one
  given — and each of its moves gets a seed; all seeds come from the env's RNG, so
  ``reset(seed=s)`` gives the same episode (for the same actions) whatever was played
  before.  A search with both a simulation budget and a clock (``expert``: 30,000
  simulations, at most 1 s, on the C kernel) plays by its budget alone, unless
  ``opponent_clock=True``;
  a ``time`` in ``opponent_limit`` is a clock and is not reproducible.
* **Side**: ``agent_side="south"``, ``"north"`` or ``"random"`` (drawn at each reset).
* **Reward**: +1 win, -1 loss, 0 draw at the end; with ``shaping=c`` also ``c`` times the
  change of the monolith margin (own − opponent's) over each agent step, a dense signal
  for small experiments (``shaping=0`` — the default — is the game's true objective).
* **Illegal actions**: with ``illegal_action="lose"`` (default) the episode ends with
  reward -1 and ``info["illegal_action"]`` set, so any learner can explore safely; with
  ``"raise"`` a ``ValueError`` names the move and the reason, and the game is unchanged.
"""

from __future__ import annotations

import copy
from typing import Any

from jericho_game.extras import missing_extra

try:
    import gymnasium
    import numpy as np
except ImportError as exc:
    raise missing_extra("the Gymnasium adapter", "rl", exc) from exc

from jericho_game.ai.base import Limit, Player, make_player
from jericho_game.envs import ENV_VERSION
from jericho_game.envs.encoding import Encoding, as_action, default_encoding
from jericho_game.envs.render import render_in_mode
from jericho_game.envs.views import View
from jericho_game.game import Game

__all__ = ["JerichoEnv", "ENV_ID", "ENV_IDS"]

#: The environment's id (docs/interop.md, "Datasheet: the environment Jericho-v1").
ENV_ID = f"Jericho-v{ENV_VERSION}"
#: Every id registered: ``Jericho-v0``, the name of the same environment before it was versioned,
#: still makes it (Gymnasium warns that ``v1`` exists), so code and results that name it still run.
ENV_IDS = ("Jericho-v0", ENV_ID)


class JerichoEnv(gymnasium.Env):
    """One side of a Jericho game against a Jericho player; see the module docstring."""

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        opponent: str | Player = "random",
        agent_side: str = "south",
        opponent_limit: Limit | None = None,
        illegal_action: str = "lose",
        shaping: float = 0.0,
        render_mode: str | None = None,
        encoding: Encoding | None = None,
        observation: str = "flat",
        view: str = "absolute",
        opponent_clock: bool = False,
    ) -> None:
        if agent_side not in ("south", "north", "random"):
            raise ValueError(f"bad agent_side {agent_side!r}: choose 'south', 'north' or 'random'")
        if illegal_action not in ("lose", "raise"):
            raise ValueError(f"bad illegal_action {illegal_action!r}: choose 'lose' or 'raise'")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}: choose from {self.metadata['render_modes']}")
        self.encoding = encoding or default_encoding()
        self.view = View(self.encoding, observation, view)
        self.opponent_clock = bool(opponent_clock)
        # The opponent as given (a spec, or a pristine copy of the object): each episode
        # starts from it, so what a search kept from earlier episodes cannot leak in.
        self._opponent_spec: str | None = opponent if isinstance(opponent, str) else None
        self._opponent_template: Player | None = None
        if isinstance(opponent, str):
            self.opponent: Player = make_player(opponent)  # refuses a bad spec now
        else:
            self._opponent_template = copy.deepcopy(opponent)
            self.opponent = opponent
        self.agent_side_option = agent_side
        self.opponent_limit = opponent_limit or Limit()
        self.illegal_action = illegal_action
        self.shaping = float(shaping)
        self.render_mode = render_mode
        n_act = self.encoding.n_actions
        self.observation_space = gymnasium.spaces.Dict(
            {
                "observation": self.view.observation_space(),
                "action_mask": gymnasium.spaces.Box(0, 1, (n_act,), dtype=np.int8),
            }
        )
        self.action_space = gymnasium.spaces.Discrete(n_act)
        self.game = Game(self.encoding.tables.topology)
        self.agent_side = 0 if agent_side != "north" else 1
        self._done = True

    # -- helpers -----------------------------------------------------------------------------
    def _obs(self) -> dict[str, np.ndarray]:
        mask = (
            self.encoding.legal_mask(self.game)
            if not self.game.is_over()
            else np.zeros(self.encoding.n_actions, dtype=np.int8)
        )
        return {
            "observation": self.view.observe(self.game, self.agent_side),
            "action_mask": self.view.mask(mask, self.agent_side),
        }

    def _margin(self) -> int:
        s = self.game.score()
        return s[self.agent_side] - s[1 - self.agent_side]

    def _fresh_opponent(self) -> None:
        """A new opponent for the episode, seeded from the env's RNG (see the module docstring)."""
        seed = int(self.np_random.integers(2**31))
        old = self.opponent
        if self._opponent_spec is not None:
            self.opponent = make_player(self._opponent_spec, seed=seed)
        elif self._opponent_template is not None:
            self.opponent = copy.deepcopy(self._opponent_template)
        if not self.opponent_clock and self.opponent is not old:
            # A search with a simulation budget *and* a clock (expert: 30,000 simulations,
            # at most 1 s) plays by its budget alone here, so that the episode depends
            # on the seed only, never on how loaded the machine is.
            if getattr(self.opponent, "sims", None) is not None and getattr(self.opponent, "time", None) is not None:
                self.opponent.time = None  # type: ignore[attr-defined]
        if old is not self.opponent:
            close = getattr(old, "close", None)
            if callable(close):
                close()

    def _opponent_moves(self) -> list[str]:
        played = []
        while not self.game.is_over() and self.game.state.turn != self.agent_side:
            seed = int(self.np_random.integers(2**31))
            lim = self.opponent_limit
            move = self.opponent.choose_move(self.game.copy(), Limit(time=lim.time, nodes=lim.nodes, seed=seed))
            self.game.play(move)
            played.append(str(move))
        return played

    def _info(self, obs: dict[str, np.ndarray], **extra: Any) -> dict[str, Any]:
        info: dict[str, Any] = {
            "action_mask": obs["action_mask"],
            "side": "south" if self.agent_side == 0 else "north",
            "score": self.game.score(),
        }
        outcome = self.game.outcome()
        if outcome is not None:
            info["outcome"] = outcome
        info.update(extra)
        return info

    def _final_reward(self) -> float:
        outcome = self.game.outcome()
        if outcome is None or outcome == "draw":
            return 0.0
        return 1.0 if outcome == ("south", "north")[self.agent_side] else -1.0

    # -- Gymnasium API ---------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a game; if the agent is North the opponent opens.

        ``options={"position": TEXT}`` starts from a position text (docs/notation.md) and
        ``options={"agent_side": "north"}`` overrides the side for this episode.
        """
        super().reset(seed=seed)
        options = options or {}
        side = options.get("agent_side", self.agent_side_option)
        if side not in ("south", "north", "random"):
            raise ValueError(f"bad agent_side {side!r}: choose 'south', 'north' or 'random'")
        topology = self.encoding.tables.topology
        position = options.get("position")
        # Built aside and checked first: a bad position leaves the env as it was.
        game = Game.from_position(position, topology) if position else Game(topology)
        if game.is_over():
            raise ValueError("cannot start an episode from a finished game")
        self.agent_side = int(self.np_random.integers(2)) if side == "random" else (0 if side == "south" else 1)
        self.game = game
        self._fresh_opponent()
        opening = self._opponent_moves()
        self._done = self.game.is_over()
        obs = self._obs()
        if self.render_mode == "human":
            self.render()
        return obs, self._info(obs, opponent_moves=opening)

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Play the agent's move, then the opponent's reply (and any forced passes)."""
        if self._done:
            raise RuntimeError("the episode is over: call reset() first")
        action = as_action(action)  # TypeError for a float, a string, a bool: not a move at all
        try:
            move = self.encoding.action_to_move(self.view.real_action(action, self.agent_side))
            reason = self.game.why_illegal(move)
        except ValueError as exc:
            move, reason = None, str(exc)
        if reason is not None:
            if self.illegal_action == "raise":
                raise ValueError(f"illegal action {action!r} ({move}): {reason}")
            self._done = True
            obs = self._obs()
            obs["action_mask"][:] = 0
            return obs, -1.0, True, False, self._info(obs, illegal_action=reason)
        before = self._margin()
        assert move is not None
        self.game.play(move)
        replies = self._opponent_moves()
        terminated = self.game.is_over()
        self._done = terminated
        reward = self._final_reward() + self.shaping * (self._margin() - before)
        obs = self._obs()
        if self.render_mode == "human":
            self.render()
        return obs, float(reward), terminated, False, self._info(obs, opponent_moves=replies)

    def action_masks(self) -> np.ndarray:
        """The legal-action mask now (for sb3-contrib's ``MaskablePPO``)."""
        return self._obs()["action_mask"]

    def render(self) -> Any:
        """``"ansi"``: the board as text; ``"human"``: print it; ``"rgb_array"``: a picture
        (``uint8``, 600 x 600 x 3, the web board's look); no mode: ``None``."""
        return render_in_mode(self.render_mode, self.game)

    def close(self) -> None:
        """Close the opponent if it holds resources (an external engine)."""
        close = getattr(self.opponent, "close", None)
        if callable(close):
            close()


for _id in ENV_IDS:
    if _id not in gymnasium.registry:
        gymnasium.register(
            id=_id,
            entry_point="jericho_game.envs.gym_env:JerichoEnv",
            # gymnasium.make_vec("Jericho-v1", num_envs=B): B games stepped at once with numpy.
            vector_entry_point="jericho_game.envs.vector:make_vec",
        )
