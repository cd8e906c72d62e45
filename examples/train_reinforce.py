"""Train a tiny agent for Jericho with the Gymnasium env: linear softmax policy, REINFORCE.

Pure numpy, one CPU core, a few minutes at the default settings::

    pip install 'jericho-game[rl]'
    python examples/train_reinforce.py                      # ~5000 agent steps
    python examples/train_reinforce.py --steps 20000 --opponent greedy

The policy scores every action with a linear function of the observation
(``logits = W @ obs + b``), masks the illegal ones, and samples.  After each episode,
REINFORCE moves the log-probability of every action taken in proportion to the
return that followed it (minus a running baseline).  It prints the agent's score
against the opponent before and after training, measured on fresh seeds with the
greedy (argmax) policy.  This is a demonstration of the environment, not a strong
player: expect it to beat ``random`` more often than not after a few thousand steps.
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np

import jericho_game.envs.gym_env  # noqa: F401  (registers "Jericho-v1")


class LinearPolicy:
    """Masked softmax over ``W @ obs + b``."""

    def __init__(self, n_obs: int, n_actions: int, rng: np.random.Generator) -> None:
        self.W = np.zeros((n_actions, n_obs), dtype=np.float64)
        self.b = np.zeros(n_actions, dtype=np.float64)
        self.rng = rng

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        logits = self.W @ obs + self.b
        logits = np.where(mask.astype(bool), logits, -np.inf)
        logits -= logits.max()
        p = np.exp(logits)
        return p / p.sum()

    def act(self, obs: dict[str, np.ndarray], greedy: bool = False) -> tuple[int, np.ndarray]:
        p = self.probabilities(obs["observation"], obs["action_mask"])
        if greedy:
            best = np.flatnonzero(p == p.max())
            return int(self.rng.choice(best)), p
        return int(self.rng.choice(len(p), p=p)), p


def play_episode(env: gymnasium.Env, policy: LinearPolicy, seed: int, greedy: bool = False):  # noqa: ANN201
    obs, _ = env.reset(seed=seed)
    trajectory = []
    total = 0.0
    done = False
    info: dict = {}
    while not done:
        action, p = policy.act(obs, greedy)
        nxt, reward, terminated, truncated, info = env.step(action)
        trajectory.append((obs["observation"], action, p, reward))
        total += reward
        obs = nxt
        done = terminated or truncated
    return trajectory, total, info


def evaluate(env: gymnasium.Env, policy: LinearPolicy, games: int, seed: int) -> float:
    """Score in [0, 1] (win 1, draw 1/2) over ``games`` games with the greedy policy."""
    points = 0.0
    for i in range(games):
        _, _, info = play_episode(env, policy, seed + i, greedy=True)
        outcome = info.get("outcome")
        points += 1.0 if outcome == info["side"] else 0.5 if outcome == "draw" else 0.0
    return points / games


def train(steps: int, opponent: str, lr: float, eval_games: int, seed: int, shaping: float) -> tuple[float, float]:
    """Train for about ``steps`` agent steps; return the evaluation score before and after."""
    env = gymnasium.make("Jericho-v1", opponent=opponent, agent_side="random", shaping=shaping)
    eval_env = gymnasium.make("Jericho-v1", opponent=opponent, agent_side="random")
    rng = np.random.default_rng(seed)
    space = env.observation_space["observation"]
    policy = LinearPolicy(space.shape[0], env.action_space.n, rng)
    before = evaluate(eval_env, policy, eval_games, seed=10_000)
    print(f"before training: score {before:.2f} against {opponent} over {eval_games} games")
    baseline = 0.0
    done_steps = episodes = 0
    started = time.perf_counter()
    while done_steps < steps:
        trajectory, total, info = play_episode(env, policy, seed=int(rng.integers(2**31)))
        episodes += 1
        done_steps += len(trajectory)
        # Returns-to-go (undiscounted: the game is short and the win is what counts).
        g = 0.0
        returns = []
        for _, _, _, r in reversed(trajectory):
            g += r
            returns.append(g)
        returns.reverse()
        for (obs, action, p, _), ret in zip(trajectory, returns, strict=True):
            advantage = ret - baseline
            grad = -p  # d log pi(a) / d logits = onehot(a) - p
            grad[action] += 1.0
            active = np.flatnonzero(obs)  # observations are sparse 0/1 vectors
            policy.W[:, active] += (lr * advantage) * grad[:, None]
            policy.b += lr * advantage * grad
        baseline += 0.05 * (total - baseline)
        if episodes % 50 == 0:
            rate = done_steps / (time.perf_counter() - started)
            print(f"  {done_steps} steps, {episodes} episodes, baseline return {baseline:+.2f}, {rate:.0f} steps/s")
    after = evaluate(eval_env, policy, eval_games, seed=10_000)
    print(f"after {done_steps} steps ({episodes} episodes): score {after:.2f} against {opponent}")
    return before, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5000, help="agent steps to train (default 5000)")
    parser.add_argument("--opponent", default="random", help="a make_player spec (default random)")
    parser.add_argument("--lr", type=float, default=0.01, help="learning rate (default 0.01)")
    parser.add_argument("--shaping", type=float, default=0.1, help="reward per monolith of margin gained")
    parser.add_argument("--eval-games", type=int, default=200, help="games to measure the score (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train(args.steps, args.opponent, args.lr, args.eval_games, args.seed, args.shaping)


if __name__ == "__main__":
    main()
