"""Research adapters: tensor encodings, PettingZoo, Gymnasium and OpenSpiel (the ``rl`` extra).

Nothing here is imported by the engine; importing a submodule needs numpy (and
``pettingzoo`` / ``gymnasium`` / ``open_spiel`` for the matching adapter)::

    pip install 'jericho-game[rl]'

* :mod:`jericho_game.envs.encoding` — the fixed action space, legal-action masks and the
  observation tensor (documented in ``docs/interop.md``);
* :mod:`jericho_game.envs.pettingzoo_env` — a PettingZoo AEC environment (``env()``, ``raw_env``);
* :mod:`jericho_game.envs.gym_env` — a Gymnasium single-agent environment (``"Jericho-v1"``);
* :mod:`jericho_game.envs.openspiel_game` — Jericho as the OpenSpiel game ``"python_jericho"``;
* :mod:`jericho_game.envs.openspiel_bot` — OpenSpiel's Python MCTS as a Jericho player;
* :mod:`jericho_game.envs.jax_env` — the rules in JAX, a pgx-style functional environment
  (the ``jax`` extra: ``pip install 'jericho-game[jax]'``).

:data:`ENV_VERSION` is the environment's version, one for every adapter (Gymnasium's
``Jericho-v1``, PettingZoo's ``jericho_v1``, pgx's ``version``); docs/interop.md's datasheet
says what it fixes and what changes bump it.
"""

#: The environment's version (docs/interop.md, "Datasheet: the environment Jericho-v1").
ENV_VERSION = 1
