"""Gumbel MuZero search (``mctx``) on the JAX environment: a few moves of self-play.

Needs the ``jax`` extra (``pip install 'jericho-game[jax]'``); runs on CPU in well under a
minute::

    python examples/jax_mctx.py                       # 4 games, 6 moves each, 32 simulations
    python examples/jax_mctx.py --value zero --simulations 64

The search sees the environment exactly as pgx's AlphaZero example does: the state is the
search tree's embedding, ``env.step`` is the dynamics, the reward of a step is the mover's
``state.rewards`` and the discount is -1 (the players alternate; 0 once the game is over).
There is no network: the prior is uniform over the legal moves and a leaf is valued by one
uniformly random playout to the end (``--value rollout``, the default) or by 0
(``--value zero``).  Replace ``root_and_prior`` and ``leaf_value`` with a network's policy
and value to get AlphaZero.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import mctx

from jericho_game.board import standard_topology
from jericho_game.core import tables_for
from jericho_game.envs.jax_env import Jericho, State, random_actions

env = Jericho(observation="flat")


def leaf_value(state: State, key: jax.Array, kind: str) -> jax.Array:
    """The value of ``state`` for its player to move: one random playout's result, or 0."""
    if kind == "zero":
        return jnp.float32(0.0)
    player = state.current_player

    def body(carry: tuple[State, jax.Array, jax.Array]) -> tuple[State, jax.Array, jax.Array]:
        s, k, total = carry
        k, k1 = jax.random.split(k)
        s = env.step(s, random_actions(k1, s.legal_action_mask))
        return s, k, total + s.rewards[player]

    _, _, total = jax.lax.while_loop(lambda c: ~c[0].terminated, body, (state, key, jnp.float32(0.0)))
    return total


def make_search(simulations: int, kind: str):  # type: ignore[no-untyped-def]
    def recurrent_fn(params: None, key: jax.Array, action: jax.Array, state: State):  # type: ignore[no-untyped-def]
        del params
        mover = state.current_player
        state = jax.vmap(env.step)(state, action)
        keys = jax.random.split(key, action.shape[0])
        value = jax.vmap(lambda s, k: leaf_value(s, k, kind))(state, keys)
        reward = jnp.take_along_axis(state.rewards, mover[:, None], axis=1)[:, 0]
        out = mctx.RecurrentFnOutput(
            reward=reward,
            discount=jnp.where(state.terminated, 0.0, -1.0),
            prior_logits=jnp.where(state.legal_action_mask, 0.0, -1e9),
            value=jnp.where(state.terminated, 0.0, value),
        )
        return out, state

    @jax.jit
    def search(state: State, key: jax.Array) -> mctx.PolicyOutput:
        k1, k2 = jax.random.split(key)
        root = mctx.RootFnOutput(
            prior_logits=jnp.where(state.legal_action_mask, 0.0, -1e9),
            value=jax.vmap(lambda s, k: leaf_value(s, k, kind))(state, jax.random.split(k1, state._turn.shape[0])),
            embedding=state,
        )
        return mctx.gumbel_muzero_policy(
            params=None,
            rng_key=k2,
            root=root,
            recurrent_fn=recurrent_fn,
            num_simulations=simulations,
            invalid_actions=~state.legal_action_mask,
            max_num_considered_actions=16,
        )

    return search


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4, help="games searched at once (default 4)")
    parser.add_argument("--moves", type=int, default=6, help="moves played in each game (default 6)")
    parser.add_argument("--simulations", type=int, default=32, help="simulations per move (default 32)")
    parser.add_argument("--value", choices=("rollout", "zero"), default="rollout", help="leaf value (default rollout)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for name in ("batch", "moves", "simulations"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    names = tables_for(standard_topology()).move_objects
    key = jax.random.PRNGKey(args.seed)
    key, k0 = jax.random.split(key)
    state = jax.vmap(env.init)(jax.random.split(k0, args.batch))
    search = make_search(args.simulations, args.value)
    step = jax.jit(jax.vmap(env.step))
    start = time.perf_counter()
    for move in range(1, args.moves + 1):
        key, k = jax.random.split(key)
        out = search(state, k)
        legal = [bool(state.legal_action_mask[g, a]) for g, a in enumerate(out.action.tolist())]
        visits = out.search_tree.summary().visit_counts.max(axis=1)
        sides = ["south" if int(t) == 0 else "north" for t in state._turn]
        for g, a in enumerate(out.action.tolist()):
            if not bool(state.terminated[g]):
                print(f"game {g} move {move}: {sides[g]} {names[a]} (most visits {int(visits[g])}, legal: {legal[g]})")
        state = step(state, out.action)
        score = [tuple(int(v) for v in s) for s in state._score]
        print(f"after move {move}: monoliths (south, north) {score}", flush=True)
    print(
        f"{args.moves} moves x {args.batch} games, {args.simulations} simulations each: "
        f"{time.perf_counter() - start:.1f} s (compilation included)"
    )


if __name__ == "__main__":
    main()
