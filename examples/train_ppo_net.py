"""A PPO recipe that beats a search level: the ``net`` player's network fine-tuned by MaskablePPO.

    pip install -e '.[sb3]'           # stable-baselines3, sb3-contrib, PyTorch (the CPU wheel is enough)
    python examples/train_ppo_net.py --out ppo                      # resumable: run it again to go on
    jericho arena net:weights=ppo/net.npz easy medium hard --games 200 --jobs 2

PPO from scratch on this game learns slowly (docs/interop.md: the MLP recipe of
``train_maskable_ppo.py`` beats ``random`` but scores 1% against ``greedy``).  This recipe
starts where imitation ends, as AlphaStar and OpenAI Five's successors did: the policy and
value are the shipped ``net`` player's residual network (:mod:`jericho_game.ai.net`, learned
from the search's moves), which already beats ``easy`` more often than not, and
sb3-contrib's MaskablePPO improves it by playing a league of the project's levels
(:class:`jericho_game.envs.sb3.JerichoLeagueVecEnv`; by default 3/4 of the games against
``easy``, 1/4 against ``medium``), on the planar canonical observation the network reads,
with a small monolith-margin shaping of the reward.

The policy is the network itself, not SB3's MLP: its per-cell policy logits (and the pass's
logit from the value head's hidden layer) are the action logits, its ``tanh`` value the
critic, so the fine-tuned weights export back to the ``net`` format and play with NumPy
alone (``net:weights=PATH``), in the arena, the web app and the engine protocol.

Every ``--save-every`` steps the run writes ``OUT/model.zip`` (SB3's checkpoint: weights,
optimiser, step count), ``OUT/net.npz`` (the ``net`` weights) and a line of ``OUT/log.jsonl``
(steps, seconds, the rollouts' mean reward and game results per opponent); ``OUT/config.json``
keeps the settings, and a resumed run refuses different ones.  The defaults are the recipe
measured in docs/interop.md; ``--sharpen`` scales the initial policy's logits so that sampling
it (as PPO does) plays close to its argmax (see :func:`sharpen`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

#: The settings a resumed run must share with the run it continues.
FIXED = (
    "league", "envs", "n_steps", "batch_size", "epochs", "lr", "clip", "ent_coef", "gamma", "gae_lambda", "shaping",
    "init", "sharpen",
)  # fmt: skip


def parse_league(text: str, envs: int) -> dict[str, int]:
    """``"easy:3,medium:1"`` with ``envs`` games: each opponent's share of the games (at least one each)."""
    shares: dict[str, float] = {}
    for part in text.split(","):
        name, _, weight = part.strip().rpartition(":")
        if not name:
            name, weight = weight, "1"
        try:
            w = float(weight)
        except ValueError:
            raise ValueError(f"--league: {part!r} is not OPPONENT:WEIGHT") from None
        if not name or not w > 0:
            raise ValueError(f"--league: {part!r} needs an opponent and a positive weight")
        shares[name] = shares.get(name, 0.0) + w
    total = sum(shares.values())
    games = {name: max(1, round(envs * w / total)) for name, w in shares.items()}
    return games


def train_net() -> Any:
    """examples/train_net.py, the script that trained the shipped weights: its network and weights writer.

    Registered as the module ``train_net`` so that SB3's checkpoint refers to the network by name
    instead of pickling it.
    """
    if "train_net" not in sys.modules:
        spec = importlib.util.spec_from_file_location("train_net", Path(__file__).resolve().with_name("train_net.py"))
        assert spec is not None and spec.loader is not None
        sys.modules["train_net"] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules["train_net"]


def make_policy_class() -> type:
    """MaskablePPO's policy with the ``net`` network as its actor and critic (built lazily: needs torch)."""
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from torch import nn

    from jericho_game.envs.planar import default_planar

    shape = default_planar().shape
    Net = train_net().Net

    class Heads(nn.Module):
        """The whole network behind SB3's interface: flat observations in, (logits, value) out."""

        latent_dim_pi = 651
        latent_dim_vf = 1

        def __init__(self) -> None:
            super().__init__()
            self.net = Net()

        def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            logits, value = self.net(features.reshape(-1, *shape))
            return logits, value[:, None]

        def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
            return self.forward(features)[0]

        def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
            return self.forward(features)[1]

    class NetPolicy(MaskableActorCriticPolicy):  # type: ignore[misc]
        """The ``net`` network as MaskablePPO's policy (SB3's linear output layers become identities)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["ortho_init"] = False  # the weights come from the network, not from SB3's initialiser
            kwargs["normalize_images"] = False
            super().__init__(*args, **kwargs)

        def _build_mlp_extractor(self) -> None:
            self.mlp_extractor = Heads()

        def _build(self, lr_schedule: Any) -> None:
            super()._build(lr_schedule)
            self.action_net = nn.Identity()
            self.value_net = nn.Identity()
            self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    return NetPolicy


def load_net(policy: Any, path: str | None) -> None:
    """Copy a ``net`` weights file (default: the shipped one) into the policy's network."""
    import torch

    from jericho_game.ai.net import load_weights

    weights = load_weights(path)
    state = {k: torch.as_tensor(v) for k, v in weights.arrays.items()}
    policy.mlp_extractor.net.load_state_dict(state)


def make_watch(league: dict[str, int]) -> Any:
    """An SB3 callback that keeps the rollouts' rewards and each finished game's result per opponent."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Watch(BaseCallback):  # type: ignore[misc]
        """Results +1 win, 0 draw, -1 loss: a finished game's last reward, rounded (the shaping adds hundredths)."""

        def __init__(self) -> None:
            super().__init__()
            self.results: dict[str, list[float]] = {name: [] for name in league}
            self.rewards: list[float] = []

        def _on_step(self) -> bool:
            last = zip(self.locals["dones"], self.locals["infos"], self.locals["rewards"], strict=True)
            for done, info, reward in last:
                if done:
                    self.results[info["opponent"]].append(float(round(float(reward))))
            self.rewards.extend(np.asarray(self.locals["rewards"]).tolist())
            return True

    return Watch()


def sharpen(policy: Any, factor: float) -> None:
    """Multiply the policy's logits by ``factor`` (its output layers' weights and biases).

    The imitation network spreads its probability (its favourite is the search's move 16% of the
    time), so *sampling* it, as PPO does, plays far worse than its argmax: against ``easy`` 11%
    sampled against 61% argmax (100 games each), 47% with the logits times 6, 57% times 10.
    Sharpening keeps the argmax (what ``net`` plays) and starts PPO from a policy close to it.
    """
    import torch

    net = policy.mlp_extractor.net
    with torch.no_grad():
        for layer in (net.p2, net.pas):
            layer.weight.mul_(factor)
            layer.bias.mul_(factor)


def export(policy: Any, path: Path, facts: dict[str, Any]) -> None:
    """The policy's network as a ``net`` weights file (with PyTorch's outputs on the shipped reference inputs)."""
    from jericho_game.ai.net import load_weights

    net = policy.mlp_extractor.net
    train_net().save_weights(net, path, facts, load_weights().meta["reference"]["input"])
    net.train()  # save_weights evaluates in eval mode; PPO goes on training


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="the run's folder (made, or resumed when it holds a run)")
    parser.add_argument("--steps", type=int, default=1_000_000, help="agent steps in all, resumed ones included")
    parser.add_argument("--league", default="easy:3,medium:1", help="opponents and weights (default easy:3,medium:1)")
    parser.add_argument("--envs", type=int, default=128, help="games stepped at once (default 128)")
    parser.add_argument("--n-steps", type=int, default=32, help="rollout length per game (default 32)")
    parser.add_argument("--batch-size", type=int, default=512, help="PPO minibatch (default 512)")
    parser.add_argument("--epochs", type=int, default=4, help="PPO epochs per rollout (default 4)")
    parser.add_argument("--lr", type=float, default=5e-5, help="Adam's learning rate (default 5e-5: fine-tuning)")
    parser.add_argument("--clip", type=float, default=0.1, help="PPO's clip range (default 0.1)")
    parser.add_argument("--ent-coef", type=float, default=0.003, help="entropy bonus (default 0.003)")
    parser.add_argument("--gamma", type=float, default=0.995, help="discount (default 0.995)")
    parser.add_argument("--gae-lambda", type=float, default=0.95, help="GAE's lambda (default 0.95)")
    parser.add_argument("--shaping", type=float, default=0.02, help="reward a monolith of margin gained (default 0.02)")
    parser.add_argument("--init", default="shipped", help="'shipped' (the net player's weights), 'none', or a net .npz")
    parser.add_argument(
        "--sharpen", type=float, default=8.0, help="the initial policy's logits times this (default 8; see below)"
    )
    parser.add_argument("--save-every", type=int, default=65_536, help="steps between checkpoints (default 65536)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the games and the model (default 0)")
    args = parser.parse_args(argv)
    if min(args.steps, args.envs, args.batch_size, args.epochs, args.save_every, args.threads) < 1 or args.n_steps < 2:
        parser.error("--steps, --envs, --batch-size, --epochs, --save-every and --threads must be >= 1, --n-steps >= 2")
    try:
        league = parse_league(args.league, args.envs)
    except ValueError as exc:
        parser.error(str(exc))

    import torch
    from sb3_contrib import MaskablePPO

    from jericho_game.envs.sb3 import JerichoLeagueVecEnv

    torch.set_num_threads(args.threads)
    torch.distributions.Distribution.set_default_validate_args(False)  # masks come from the engine
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config = {k: getattr(args, k) for k in FIXED}
    config["league"] = league
    config_path, checkpoint = out / "config.json", out / "model.zip"
    if checkpoint.exists():
        kept = json.loads(config_path.read_text())
        differ = {k: (kept.get(k), v) for k, v in config.items() if kept.get(k) != v}
        if differ:
            names = ", ".join(f"{k} (run: {a!r}, now: {b!r})" for k, (a, b) in differ.items())
            parser.error(f"{out} holds a run with other settings: {names}")
    else:
        config_path.write_text(json.dumps(config, indent=1) + "\n")

    env = JerichoLeagueVecEnv(league, agent_side="random", observation="planar", view="canonical", shaping=args.shaping)
    if checkpoint.exists():
        custom = {"policy_class": make_policy_class()}
        model = MaskablePPO.load(checkpoint, env=env, device="cpu", custom_objects=custom)
        print(f"resumed {out} at {model.num_timesteps} steps", flush=True)
    else:
        model = MaskablePPO(
            make_policy_class(),
            env,
            learning_rate=args.lr,
            n_steps=args.n_steps,
            batch_size=args.batch_size,
            n_epochs=args.epochs,
            gamma=args.gamma,
            gae_lambda=args.gae_lambda,
            clip_range=args.clip,
            ent_coef=args.ent_coef,
            seed=args.seed,
            device="cpu",
        )
        if args.init != "none":
            load_net(model.policy, None if args.init == "shipped" else args.init)
        sharpen(model.policy, args.sharpen)
        model.num_timesteps = 0

    log = out / "log.jsonl"
    while model.num_timesteps < args.steps:
        start, before = time.perf_counter(), model.num_timesteps
        watch = make_watch(league)
        chunk = min(args.save_every, args.steps - before)
        model.learn(total_timesteps=chunk, reset_num_timesteps=False, callback=watch)
        model.save(checkpoint)
        facts = {"recipe": "examples/train_ppo_net.py", "steps": int(model.num_timesteps), **config}
        export(model.policy, out / "net.npz", facts)
        seconds = time.perf_counter() - start
        record = {
            "steps": int(model.num_timesteps),
            "seconds": round(seconds, 1),
            "steps_per_second": round((model.num_timesteps - before) / seconds, 1),
            "mean_reward": round(float(np.mean(watch.rewards)), 4) if watch.rewards else None,
            "score": {k: round((float(np.mean(v)) + 1) / 2, 3) if v else None for k, v in watch.results.items()},
            "games": {k: len(v) for k, v in watch.results.items()},
        }
        with log.open("a") as f:
            f.write(json.dumps(record) + "\n")
        print(json.dumps(record), flush=True)
    env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
