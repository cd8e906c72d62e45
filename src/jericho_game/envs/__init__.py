"""Research adapters: tensor encodings, PettingZoo, Gymnasium and OpenSpiel (the ``rl`` extra).

Nothing here is imported by the engine; importing a submodule needs numpy (and
``pettingzoo`` / ``gymnasium`` / ``open_spiel`` for the matching adapter)::

    pip install 'jericho-game[rl]'

* :mod:`jericho_game.envs.encoding` — the fixed action space, legal-action masks and the
  observation tensor (documented in ``docs/interop.md``);
* :mod:`jericho_game.envs.pettingzoo_env` — a PettingZoo AEC environment (``env()``, ``raw_env``);
* :mod:`jericho_game.envs.gym_env` — a Gymnasium single-agent environment (``"Jericho-v0"``);
* :mod:`jericho_game.envs.openspiel_game` — Jericho as the OpenSpiel game ``"python_jericho"``;
* :mod:`jericho_game.envs.openspiel_bot` — OpenSpiel's Python MCTS as a Jericho player;
* :mod:`jericho_game.envs.jax_env` — the rules in JAX, a pgx-style functional environment
  (the ``jax`` extra: ``pip install 'jericho-game[jax]'``).
"""
