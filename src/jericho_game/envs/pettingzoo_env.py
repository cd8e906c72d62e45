"""Jericho as a PettingZoo AEC environment (two agents, ``"south"`` and ``"north"``).

>>> from jericho_game.envs.pettingzoo_env import env
>>> e = env()
>>> e.reset(seed=1)
>>> for agent in e.agent_iter():
...     obs, reward, terminated, truncated, info = e.last()
...     action = None if terminated or truncated else e.action_space(agent).sample(obs["action_mask"])
...     e.step(action)

Observations are dicts ``{"observation": float32 vector, "action_mask": int8 vector}``
as described in :mod:`jericho_game.envs.encoding` (the observation is seen by the agent
observed; the mask is all zeros for the agent not to move).  Rewards are +1 for a win,
-1 for a loss and 0 for a draw, given when the game ends.  An illegal action raises
``ValueError`` naming the move and the reason, and leaves the game unchanged (wrap the
env with PettingZoo's ``TerminateIllegalWrapper`` if you prefer a penalty).  The game
always ends by the rules, within :data:`MAX_GAME_LENGTH` turns, so nothing is truncated.

``render_mode="ansi"`` returns the board as text; ``"human"`` prints it; ``"rgb_array"``
returns a picture of the board (:mod:`jericho_game.envs.picture`), so ``RecordVideo`` works.
``observation="planar"`` gives ``192 x 4 x 7`` planes instead of the flat vector and
``view="canonical"`` the board as seen by each agent (North's observations, masks and
actions turned by a half turn); see :mod:`jericho_game.envs.views`.  :meth:`raw_env.state`
is always the flat, absolute observation seen by South.
"""

from __future__ import annotations

from typing import Any

from jericho_game.extras import missing_extra

try:
    import gymnasium
    import numpy as np
    from pettingzoo import AECEnv
    from pettingzoo.utils import AgentSelector, wrappers
except ImportError as exc:
    raise missing_extra("the PettingZoo adapter", "rl", exc) from exc

from jericho_game.envs import ENV_VERSION
from jericho_game.envs.encoding import Encoding, as_action, default_encoding
from jericho_game.envs.render import render_in_mode
from jericho_game.envs.views import View
from jericho_game.game import Game

__all__ = ["env", "raw_env", "MAX_GAME_LENGTH", "AGENTS"]

AGENTS: tuple[str, str] = ("south", "north")
# 50 placements; passes never follow each other except the final two.
MAX_GAME_LENGTH = 101


def env(render_mode: str | None = None, **kwargs: Any) -> AECEnv:
    """The environment wrapped in PettingZoo's order-enforcing and bounds-checking wrappers."""
    e: AECEnv = raw_env(render_mode=render_mode, **kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention
    """The unwrapped AEC environment; see the module docstring."""

    metadata: dict[str, Any] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": f"jericho_v{ENV_VERSION}",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        encoding: Encoding | None = None,
        observation: str = "flat",
        view: str = "absolute",
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}: choose from {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self.encoding = encoding or default_encoding()
        self.view = View(self.encoding, observation, view)
        self.possible_agents = list(AGENTS)
        self.agents = self.possible_agents[:]
        n_obs = self.encoding.observation_size
        n_act = self.encoding.n_actions
        # One cached space object per agent (PettingZoo seeds them through these objects).
        self.observation_spaces = {
            a: gymnasium.spaces.Dict(
                {
                    "observation": self.view.observation_space(),
                    "action_mask": gymnasium.spaces.Box(0, 1, (n_act,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: gymnasium.spaces.Discrete(n_act) for a in self.possible_agents}
        #: The global state's space (:meth:`state`: the observation seen by South).
        self.state_space = gymnasium.spaces.Box(0.0, 1.0, (n_obs,), dtype=np.float32)
        self.game = Game(self.encoding.tables.topology)
        self._reset_bookkeeping()

    # -- spaces ------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        """The (cached) observation space of ``agent``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        """The (cached) action space of ``agent``."""
        return self.action_spaces[agent]

    # -- AEC API --------------------------------------------------------------------------
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation: the encoded position seen by it and its action mask."""
        side = self.possible_agents.index(agent)
        obs = self.view.observe(self.game, side)
        if agent == self.agent_selection and not self.game.is_over():
            mask = self.view.mask(self.encoding.legal_mask(self.game), side)
        else:
            mask = np.zeros(self.encoding.n_actions, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game from the standard start.

        The game has no randomness, so ``seed`` changes nothing (seed the action spaces
        to make sampled actions reproducible).  ``options={"position": TEXT}`` starts from
        a position text instead (see docs/notation.md); ``options={"moves": [...]}`` then
        plays those moves.
        """
        del seed
        options = options or {}
        position = options.get("position")
        topology = self.encoding.tables.topology
        # Built aside and checked first: a bad position or move leaves the env as it was.
        game = Game.from_position(position, topology) if position else Game(topology)
        for m in options.get("moves", ()):
            game.play(m)
        if game.is_over():
            raise ValueError("cannot start an episode from a finished game")
        self.game = game
        self.agents = self.possible_agents[:]
        self._reset_bookkeeping()
        self.agent_selection = self.possible_agents[self.game.state.turn]

    def _reset_bookkeeping(self) -> None:
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._agent_selector = AgentSelector(self.agents)
        self.agent_selection = self.possible_agents[self.game.state.turn]

    def step(self, action: int | None) -> None:
        """Play ``action`` for the agent to move (``None`` for an agent already done)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} must act: the game is not over (action None is for finished agents)")
        action = as_action(action)  # TypeError for a float, a string, a bool
        move = self.encoding.action_to_move(self.view.real_action(action, self.game.state.turn))
        if not self.game.is_legal(move):
            raise ValueError(f"illegal action {action} ({move}) for {agent}: {self.game.why_illegal(move)}")
        self._cumulative_rewards[agent] = 0.0
        self.game.play(move)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        outcome = self.game.outcome()
        if outcome is not None:
            for a in self.agents:
                self.rewards[a] = 0.0 if outcome == "draw" else 1.0 if a == outcome else -1.0
                self.infos[a] = {"outcome": outcome, "score": self.game.score()}
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = self.possible_agents[self.game.state.turn]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> Any:
        """``"ansi"``: the board as text; ``"human"``: print it; ``"rgb_array"``: a picture
        (``uint8``, 600 x 600 x 3, the web board's look); no mode: warn and return ``None``."""
        return render_in_mode(self.render_mode, self.game)

    def close(self) -> None:
        """Nothing to release."""

    def state(self) -> np.ndarray:
        """The global state: the observation from South's point of view (in :attr:`state_space`)."""
        return self.encoding.observe(self.game, 0)

    def __str__(self) -> str:
        return str(self.metadata["name"])
