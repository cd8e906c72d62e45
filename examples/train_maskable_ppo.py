"""Train sb3-contrib's MaskablePPO on the batched env (jericho_game.envs.sb3) and report steps/s.

pip install -e '.[sb3]'      # stable-baselines3 + sb3-contrib (they need PyTorch; the CPU wheel is enough)
python examples/train_maskable_ppo.py --steps 262144 --opponent random --seed 0

All games run in one JerichoSB3VecEnv (the C batch engine when built), the agent on a random
side against --opponent (a player spec, e.g. random or greedy).  Prints one JSON object: the
training steps per second and per CPU second (environment and learning together, as SB3
counts them; one torch thread) and the agent's score over --eval-games games against the
opponent before and after training.  The defaults are tuned for throughput on a small CPU
(2048 games, short rollouts, large minibatches, one epoch, two hidden layers of 32): see
docs/interop.md for the figures and what each setting costs.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def score(model: object, opponent: str, games: int, seed: int) -> float:
    """The agent's mean score (win 1, draw 0.5, loss 0) over ``games`` games, masked greedy actions."""
    from jericho_game.envs.sb3 import JerichoSB3VecEnv

    # One game per sub-env, each counted once (the first to finish), so short games are not favoured.
    env = JerichoSB3VecEnv(num_envs=games, opponent=opponent, agent_side="random")
    env.seed(seed)
    obs = env.reset()
    results = np.full(games, np.nan)
    while np.isnan(results).any():
        actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)  # type: ignore[attr-defined]
        obs, rewards, dones, _ = env.step(actions)
        first = dones & np.isnan(results)
        results[first] = (rewards[first] + 1.0) / 2.0
    env.close()
    return float(results.mean())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, default=2048, help="games stepped at once (default 2048)")
    parser.add_argument("--steps", type=int, default=262_144, help="training steps, all games (default 262144)")
    parser.add_argument("--opponent", default="random", help="a player spec (default random)")
    parser.add_argument("--n-steps", type=int, default=16, help="PPO rollout length per game (default 16)")
    parser.add_argument("--epochs", type=int, default=1, help="PPO epochs per rollout (default 1; SB3's is 10)")
    parser.add_argument("--batch-size", type=int, default=4096, help="PPO minibatch size (default 4096)")
    parser.add_argument(
        "--net", default="32,32", help="hidden layer sizes of the policy and value networks (default 32,32)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--eval-games", type=int, default=200, help="games of each evaluation (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the env and the model (default 0)")
    args = parser.parse_args(argv)
    if min(args.envs, args.steps, args.eval_games, args.epochs, args.batch_size, args.threads) < 1 or args.n_steps < 2:
        parser.error(
            "--envs, --steps, --eval-games, --epochs, --batch-size and --threads must be at least 1, "
            "--n-steps at least 2"
        )
    try:
        net = [int(x) for x in args.net.split(",")]
    except ValueError:
        net = []
    if not net or min(net) < 1:
        parser.error(f"--net: hidden layer sizes separated by commas, e.g. 32,32 (got {args.net!r})")

    import torch
    from sb3_contrib import MaskablePPO

    from jericho_game.envs.sb3 import JerichoSB3VecEnv

    # Small networks: threads cost more than they give on a busy machine.
    torch.set_num_threads(args.threads)
    # Each forward pass builds two masked distributions over the 651 actions; torch's argument checks on
    # them cost about 5% of the training and can only fail on a bug (the masks come from the engine).
    torch.distributions.Distribution.set_default_validate_args(False)
    env = JerichoSB3VecEnv(num_envs=args.envs, opponent=args.opponent, agent_side="random")
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=args.n_steps,
        batch_size=min(args.batch_size, args.envs * args.n_steps),  # at most one rollout
        n_epochs=args.epochs,
        seed=args.seed,
        policy_kwargs={"net_arch": net},
    )
    # The environment's share of the training's CPU time (the rest is the policy and PPO's updates).
    env_cpu = [0.0]
    step_wait = env.step_wait

    def timed_step_wait() -> tuple[object, ...]:
        t = time.process_time()
        out = step_wait()
        env_cpu[0] += time.process_time() - t
        return out

    env.step_wait = timed_step_wait  # type: ignore[method-assign]
    before = score(model, args.opponent, args.eval_games, args.seed + 1)
    start, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=args.steps)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    after = score(model, args.opponent, args.eval_games, args.seed + 1)
    print(
        json.dumps(
            {
                "envs": args.envs,
                "steps": int(model.num_timesteps),
                "seconds": round(seconds, 1),
                "steps_per_second": round(model.num_timesteps / seconds, 1),
                # One thread: CPU time is what the training costs, whatever else runs on the machine.
                "cpu_seconds": round(cpu_seconds, 1),
                "steps_per_cpu_second": round(model.num_timesteps / cpu_seconds, 1),
                "env_cpu_share": round(env_cpu[0] / cpu_seconds, 3),
                "n_steps": args.n_steps,
                "batch_size": model.batch_size,
                "epochs": args.epochs,
                "net": net,
                "threads": args.threads,
                "opponent": args.opponent,
                "score_before": round(before, 3),
                "score_after": round(after, 3),
            }
        )
    )
    env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
