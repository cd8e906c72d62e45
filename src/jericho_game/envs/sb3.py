"""The batched environment as a Stable-Baselines3 ``VecEnv``, with action masks for sb3-contrib's MaskablePPO.

>>> from sb3_contrib import MaskablePPO
>>> from jericho_game.envs.sb3 import JerichoSB3VecEnv
>>> env = JerichoSB3VecEnv(num_envs=64, opponent="random", agent_side="random")
>>> model = MaskablePPO("MlpPolicy", env, n_steps=64, seed=0).learn(100_000)

Stable-Baselines3 steps a ``VecEnv`` of its own kind (not Gymnasium's vector envs): it takes
actions ``(B,)`` and returns observations as one array, rewards, ``dones`` and a list of ``B``
info dicts, and a game that ends starts again in the same step, its last observation in
``infos[i]["terminal_observation"]``.  :class:`JerichoSB3VecEnv` is that protocol around
:class:`jericho_game.envs.vector.JerichoVectorEnv` in its ``SameStep`` autoreset mode, so the
games stay in the batch engine (C when built) and a step of all ``B`` games is one call:

* the observation is the vector env's ``"observation"`` (flat ``(B, 1239)`` or planar
  ``(B, 192, 4, 7)``, any view), its space a ``Box``; the legal moves come from
  :meth:`action_masks` (what MaskablePPO asks a ``VecEnv`` through
  ``env_method("action_masks")``);
* every keyword of the vector env is taken (``opponent``, ``agent_side``, ``observation``,
  ``view``, ``positions`` ...); ``info["position"]`` and the others come back per game.

Self-play (``opponent="self"``) works, with a caveat that SB3's algorithms do not know: the
rewards are the mover's and consecutive steps of one game alternate sides, while SB3's return
estimates assume one agent per game.  Train against a fixed opponent (a player spec) with SB3,
or handle the alternation yourself.

Needs ``stable-baselines3`` (and ``sb3-contrib`` for MaskablePPO), which need PyTorch: the
``sb3`` extra, ``pip install 'jericho-game[sb3]'``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from jericho_game.extras import missing_extra

try:
    import numpy as np
    from gymnasium.vector import AutoresetMode
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as exc:
    raise missing_extra("the Stable-Baselines3 adapter", "sb3", exc) from exc

from jericho_game.envs.vector import JerichoVectorEnv

__all__ = ["JerichoLeagueVecEnv", "JerichoSB3VecEnv"]


class JerichoSB3VecEnv(VecEnv):  # type: ignore[misc]
    """``num_envs`` Jericho games as a Stable-Baselines3 ``VecEnv`` (see the module docstring)."""

    def __init__(self, num_envs: int = 64, **kwargs: Any) -> None:
        if "autoreset_mode" in kwargs:
            raise ValueError("the SB3 adapter sets autoreset_mode itself (SB3 restarts a game in the step it ends)")
        self.venv = JerichoVectorEnv(num_envs=num_envs, autoreset_mode=AutoresetMode.SAME_STEP, **kwargs)
        super().__init__(
            self.venv.num_envs,
            self.venv.single_observation_space["observation"],
            self.venv.single_action_space,
        )
        self._masks = np.zeros((self.num_envs, self.venv.encoding.n_actions), dtype=bool)
        self._actions: np.ndarray | None = None

    # -- the VecEnv protocol ----------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        """Start every game; the seed given to :meth:`seed` (SB3 passes the model's) seeds the batch."""
        seed = self._seeds[0] if self._seeds else None
        options = self._options[0] if self._options else None
        obs, info = self.venv.reset(seed=seed, options=options or None)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = self._per_game(info)
        return self._keep(obs)

    def step_async(self, actions: np.ndarray) -> None:
        """Remember the actions (the step runs in :meth:`step_wait`)."""
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """One move in every game: observations, rewards (float32), dones, one info dict per game."""
        if self._actions is None:
            raise RuntimeError("step_async() must come before step_wait()")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, info = self.venv.step(actions.reshape(self.num_envs).astype(np.int64))
        dones = terminated | truncated
        infos = self._per_game(info)
        for i in np.flatnonzero(dones).tolist():
            infos[i]["terminal_observation"] = info["final_obs"][i]["observation"]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            infos[i]["final_info"] = info["final_info"][i]
        return self._keep(obs), rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """The legal actions of every game's current observation, ``(B, 651)`` booleans."""
        return self._masks.copy()

    def close(self) -> None:
        """Close the vector env."""
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """``attr_name`` of the games ``indices`` (one vector env: the same value for each)."""
        if attr_name == "action_masks":
            return [self.action_masks for _ in self._indices(indices)]
        if attr_name == "render_mode":  # asked by SB3's VecEnv; the games draw nothing
            return [getattr(self.venv, "render_mode", None) for _ in self._indices(indices)]
        value = getattr(self.venv, attr_name)  # AttributeError names it
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set ``attr_name`` on the vector env (all games share it)."""
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``action_masks`` per game (MaskablePPO's question); other methods of the vector env once per game."""
        picked = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in picked]
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result for _ in picked]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No game is wrapped by a Gymnasium wrapper (there are no single envs)."""
        return [False for _ in self._indices(indices)]

    # -- helpers --------------------------------------------------------------------------------------
    def _keep(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        self._masks = obs["action_mask"].astype(bool)
        observation: np.ndarray = obs["observation"]
        return observation

    def _indices(self, indices: Any) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices if isinstance(indices, Iterable) else [indices])

    def _per_game(self, info: dict[str, Any]) -> list[dict[str, Any]]:
        """The vector env's batched info as one dict per game (keys without their ``_`` masks)."""
        out: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for key, values in info.items():
            if key.startswith("_") or key in ("final_obs", "final_info"):
                continue
            present = info.get(f"_{key}")
            for i in range(self.num_envs):
                if present is None or present[i]:
                    value = values[i]
                    out[i][key] = value.item() if isinstance(value, np.generic) else value
        return out


class JerichoLeagueVecEnv(VecEnv):  # type: ignore[misc]
    """Several opponents in one Stable-Baselines3 ``VecEnv``: a league of the project's levels.

    >>> env = JerichoLeagueVecEnv({"easy": 64, "medium": 32}, agent_side="random", shaping=0.02)

    ``opponents`` maps each opponent (a player spec, or ``"random"``) to how many games of the
    batch it plays; each group is one :class:`JerichoSB3VecEnv` (the other keywords go to every
    group), and the games keep that order (the first ``opponents[first]`` games, then the next
    group's ...).  Training against a mix of levels keeps a policy from learning one opponent's
    habits; ``info["opponent"]`` names each game's opponent.  Self-play has no place here (its
    games alternate sides, which SB3's returns do not expect: see :class:`JerichoSB3VecEnv`).
    """

    def __init__(self, opponents: dict[str, int], **kwargs: Any) -> None:
        if not opponents:
            raise ValueError("the league needs at least one opponent")
        for name, games in opponents.items():
            if name == "self":
                raise ValueError("the league plays opponents, not self-play (its games alternate sides)")
            if not isinstance(games, int) or isinstance(games, bool) or games < 1:
                raise ValueError(f"each opponent plays at least one game, got {games!r} for {name!r}")
        if "opponent" in kwargs:
            raise ValueError("the league's opponents come from its opponents mapping, not opponent=")
        self.groups = [
            (name, JerichoSB3VecEnv(num_envs=games, opponent=name, **kwargs)) for name, games in opponents.items()
        ]
        first = self.groups[0][1]
        self._bounds = np.cumsum([0] + [env.num_envs for _, env in self.groups])
        super().__init__(sum(env.num_envs for _, env in self.groups), first.observation_space, first.action_space)

    def _tag(self, infos: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
        for info in infos:
            info["opponent"] = name
        return infos

    def reset(self) -> np.ndarray:
        """Start every game; a seed given to :meth:`seed` seeds each group (the group's index added)."""
        seed = self._seeds[0] if self._seeds else None
        self.reset_infos = []
        out = []
        for k, (name, env) in enumerate(self.groups):
            env.seed(None if seed is None else seed + k)
            out.append(env.reset())
            self.reset_infos += self._tag(env.reset_infos, name)
        self._reset_seeds()
        return np.concatenate(out)

    def step_async(self, actions: np.ndarray) -> None:
        """Hand each group its games' actions."""
        actions = np.asarray(actions).reshape(self.num_envs)
        for k, (_, env) in enumerate(self.groups):
            env.step_async(actions[self._bounds[k] : self._bounds[k + 1]])

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """One move in every game of every group, concatenated in the groups' order."""
        parts = [env.step_wait() for _, env in self.groups]
        infos: list[dict[str, Any]] = []
        for (name, _), part in zip(self.groups, parts, strict=True):
            infos += self._tag(part[3], name)
        return (
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
            infos,
        )

    def action_masks(self) -> np.ndarray:
        """The legal actions of every game, ``(B, 651)`` booleans."""
        return np.concatenate([env.action_masks() for _, env in self.groups])

    def close(self) -> None:
        """Close every group."""
        for _, env in self.groups:
            env.close()

    def _group_of(self, indices: Any) -> list[tuple[int, int]]:
        picked = range(self.num_envs) if indices is None else [indices] if isinstance(indices, int) else list(indices)
        return [(int(np.searchsorted(self._bounds, i, side="right")) - 1, i) for i in picked]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """``attr_name`` of the games ``indices`` (from each game's group)."""
        return [self.groups[k][1].get_attr(attr_name, i - self._bounds[k])[0] for k, i in self._group_of(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set ``attr_name`` on the groups of the games ``indices``."""
        for k in {k for k, _ in self._group_of(indices)}:
            self.groups[k][1].set_attr(attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``action_masks`` per game (MaskablePPO's question); other methods once per game, on its group."""
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for _, i in self._group_of(indices)]
        return [
            self.groups[k][1].env_method(method_name, *method_args, indices=i - self._bounds[k], **method_kwargs)[0]
            for k, i in self._group_of(indices)
        ]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No game is wrapped by a Gymnasium wrapper (there are no single envs)."""
        return [False for _ in self._group_of(indices)]
