"""Train the ``net`` player's policy/value network by imitation of a self-play dataset (PyTorch, CPU).

    pip install -e .[rl,train]          # torch: the CPU wheel is enough
    python examples/train_net.py --data /data/selfplay --out net_weights.npz --minutes 30

Reads a dataset made by ``examples/make_dataset.py`` (games.jgn and plies.npz, or its
finished shards), rebuilds every ply's observation in the canonical view (cached next to the
data as ``train_cache.npz``), and trains the network of :mod:`jericho_game.ai.net`:
policy by cross-entropy against the root's visit distribution (legal moves only), value by
squared error against the mean of the game's result and the search's value. Each batch is
mirrored left-right at random (the board's mirror symmetry, :mod:`jericho_game.envs.augment`).
The last 2% of the games are held out: the script prints their policy loss, top-1
agreement with the move played and value error. The weights are exported for NumPy
(``--out``), with the architecture, the training facts and reference outputs of PyTorch on
held-out positions, which ``tests/ai/test_net.py`` checks the NumPy forward against.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from jericho_game import Game, __version__
from jericho_game.ai.net import _action_gather
from jericho_game.envs.dataset import load_dataset
from jericho_game.envs.encoding import default_encoding
from jericho_game.envs.planar import default_planar
from jericho_game.record import read_records

ENC = default_encoding()
PLANAR = default_planar()
HALF_TURN = ENC.symmetry("half-turn")
MIRROR = ENC.symmetry("mirror")
MAX_CHILDREN = 96


class Net(nn.Module):
    """The network of :mod:`jericho_game.ai.net` (same layers, same names, same output)."""

    def __init__(self, width: int = 32, blocks: int = 3) -> None:
        super().__init__()
        channels = PLANAR.shape[0]
        self.stem = nn.Conv2d(channels, width, 1)
        self.convs = nn.ModuleList([nn.Conv2d(width, width, 3, padding=1) for _ in range(2 * blocks)])
        self.p1 = nn.Conv2d(width, 32, 1)
        self.p2 = nn.Conv2d(32, 25, 1)
        self.v1 = nn.Conv2d(width, 8, 1)
        self.v2 = nn.Linear(8 * PLANAR.height * PLANAR.width, 64)
        self.v3 = nn.Linear(64, 1)
        self.pas = nn.Linear(64, 1)
        self.register_buffer("gather", torch.as_tensor(_action_gather(ENC), dtype=torch.long), persistent=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = F.relu(self.stem(x))
        for i in range(0, len(self.convs), 2):
            h = F.relu(h + self.convs[i + 1](F.relu(self.convs[i](h))))
        p = self.p2(F.relu(self.p1(h))).flatten(1)[:, self.gather]
        v = F.relu(self.v2(F.relu(self.v1(h)).flatten(1)))
        return torch.cat([p, self.pas(v)], dim=1), torch.tanh(self.v3(v))[:, 0]


def prepare(data: Path) -> dict[str, np.ndarray]:
    """Canonical observations (bit-packed), masks, visit targets and values of every ply (cached)."""
    cache = data / "train_cache.npz"
    plies = data / "plies.npz"
    if cache.exists() and cache.stat().st_mtime >= plies.stat().st_mtime:
        with np.load(cache) as c:
            return {k: c[k] for k in c.files}
    start = time.perf_counter()
    d = load_dataset(data)
    n = len(d["game"])
    north = d["turn"] == 1
    obs_bits = np.zeros((n, (ENC.observation_size + 7) // 8), dtype=np.uint8)
    row = 0
    for record in read_records((data / "games.jgn").read_text(encoding="utf-8")):
        game = Game()
        for move in record.moves:
            flat = ENC.observe(game, game.state.turn)
            if game.state.turn == 1:
                flat = HALF_TURN.observations(flat)
            obs_bits[row] = np.packbits(flat.astype(np.uint8))
            game.play(move)
            row += 1
    assert row == n, (row, n)
    mask = d["mask"].astype(np.uint8)
    mask[north] = HALF_TURN.masks(mask[north])
    acts = np.zeros((n, MAX_CHILDREN), dtype=np.int16)
    probs = np.zeros((n, MAX_CHILDREN), dtype=np.float32)
    off = d["visit_offsets"]
    for i in range(n):
        a, c = d["visit_actions"][off[i] : off[i + 1]], d["visit_counts"][off[i] : off[i + 1]]
        if len(a) == 0:
            continue
        k = min(len(a), MAX_CHILDREN)
        top = np.argsort(-c, kind="stable")[:k]
        a, c = a[top], c[top].astype(np.float32)
        acts[i, :k] = HALF_TURN.actions(a) if north[i] else a
        probs[i, :k] = c / c.sum()
    q = d["search_value"].astype(np.float32)
    z = d["value"].astype(np.float32)
    target = np.where(np.isnan(q), z, 0.5 * z + 0.5 * (2 * q - 1)).astype(np.float32)
    out = {
        "obs_bits": obs_bits,
        "mask_bits": np.packbits(mask, axis=1),
        "acts": acts,
        "probs": probs,
        "searched": (probs.sum(1) > 0).astype(np.uint8),
        "value": target,
        "action": np.where(north, HALF_TURN.actions(d["action"].astype(np.int64)), d["action"]).astype(np.int16),
        "game": d["game"],
    }
    np.savez(cache, **out)
    print(f"prepared {n} plies in {time.perf_counter() - start:.0f} s", flush=True)
    return out


def batch(p: dict[str, np.ndarray], idx: np.ndarray, rng: np.random.Generator | None) -> tuple[torch.Tensor, ...]:
    """Planar inputs, masks, policy targets, values and played actions of rows ``idx`` (mirrored at random)."""
    flat = np.unpackbits(p["obs_bits"][idx], axis=1, count=ENC.observation_size).astype(np.float32)
    mask = np.unpackbits(p["mask_bits"][idx], axis=1, count=ENC.n_actions).astype(bool)
    pol = np.zeros((len(idx), ENC.n_actions), dtype=np.float32)
    np.add.at(pol, (np.arange(len(idx))[:, None], p["acts"][idx].astype(np.int64)), p["probs"][idx])
    action = p["action"][idx].astype(np.int64)
    if rng is not None:
        m = rng.random(len(idx)) < 0.5
        flat[m] = MIRROR.observations(flat[m])
        mask[m] = MIRROR.masks(mask[m])
        pol[m] = MIRROR.masks(pol[m])
        action[m] = MIRROR.actions(action[m])
    x = PLANAR.from_flat(flat)
    return (
        torch.from_numpy(np.ascontiguousarray(x)),
        torch.from_numpy(mask),
        torch.from_numpy(pol),
        torch.from_numpy(p["value"][idx]),
        torch.from_numpy(p["searched"][idx].astype(np.float32)),
        torch.from_numpy(action),
    )


def losses(net: Net, b: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Policy cross-entropy (searched plies), value squared error, top-1 agreement with the move played."""
    x, mask, pol, val, searched, action = b
    logits, v = net(x)
    logits = logits.masked_fill(~mask, -1e9)
    logp = F.log_softmax(logits, dim=1)
    ce = -(pol * logp).sum(1)
    p_loss = (ce * searched).sum() / searched.sum().clamp(min=1)
    v_loss = F.mse_loss(v, val)
    top1 = ((logits.argmax(1) == action).float() * searched).sum() / searched.sum().clamp(min=1)
    return p_loss, v_loss, top1


def evaluate(net: Net, p: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, float]:
    net.eval()
    tot = np.zeros(3)
    with torch.no_grad():
        for s in range(0, len(rows), 1024):
            idx = rows[s : s + 1024]
            pl, vl, t1 = losses(net, batch(p, idx, None))
            tot += np.array([pl.item(), vl.item(), t1.item()]) * len(idx)
    net.train()
    pl, vl, t1 = tot / len(rows)
    return {"policy_loss": round(float(pl), 4), "value_mse": round(float(vl), 4), "top1": round(float(t1), 4)}


def save_weights(net: Net, path: str | Path, facts: dict[str, object], ref: np.ndarray) -> None:
    """``net`` as a weights file of :mod:`jericho_game.ai.net`: its arrays, architecture and ``facts``,
    and PyTorch's outputs on the reference inputs ``ref`` (which the NumPy forward is checked against).

    Written to a temporary file first, so an interrupted run never leaves a half-written file.
    """
    net.eval()
    with torch.no_grad():
        logits, value = net(torch.from_numpy(ref.astype(np.float32)))
    arrays = {k: v.detach().numpy().astype(np.float32) for k, v in net.state_dict().items()}
    arch = {"width": net.stem.out_channels, "blocks": len(net.convs) // 2}
    meta = {"arch": arch, "training": facts}
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(
        tmp,
        _meta=np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
        _ref_input=ref.astype(np.float32),
        _ref_logits=logits.numpy().astype(np.float32),
        _ref_value=value.numpy().astype(np.float32),
        **arrays,
    )
    tmp.replace(path)


def export(net: Net, args: argparse.Namespace, facts: dict[str, object], ref: np.ndarray) -> None:
    save_weights(net, args.out, facts, ref)
    print(f"wrote {args.out} ({Path(args.out).stat().st_size} bytes)", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the dataset directory (examples/make_dataset.py --out)")
    parser.add_argument("--out", required=True, help="the weights file to write (.npz)")
    parser.add_argument("--minutes", type=float, default=30.0, help="training time, wall clock (default 30)")
    parser.add_argument("--epochs", type=float, default=20.0, help="at most this many passes (default 20)")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    data = Path(args.data)
    t0 = time.perf_counter()
    p = prepare(data)
    games = p["game"]
    cut = np.quantile(np.unique(games), 0.98)
    train_rows = np.flatnonzero(games < cut)
    held_rows = np.flatnonzero(games >= cut)
    net = Net(args.width, args.blocks)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    steps_per_epoch = len(train_rows) // args.batch
    max_steps = int(args.epochs * steps_per_epoch)
    deadline = time.perf_counter() + 60 * args.minutes
    params = sum(x.numel() for x in net.parameters())
    print(f"{len(train_rows)} training plies, {len(held_rows)} held out; {params} parameters")
    print("held out before:", evaluate(net, p, held_rows[:4096]), flush=True)
    step = 0
    start = time.perf_counter()
    # The learning rate follows a cosine from lr to 0 over the time budget (or the epochs).
    while step < max_steps and time.perf_counter() < deadline:
        order = rng.permutation(train_rows)
        for s in range(0, len(order) - args.batch + 1, args.batch):
            frac = max((time.perf_counter() - start) / (deadline - start), step / max_steps)
            if frac >= 1:
                break
            for g in opt.param_groups:
                g["lr"] = args.lr * 0.5 * (1 + math.cos(math.pi * frac))
            pl, vl, t1 = losses(net, batch(p, order[s : s + args.batch], rng))
            opt.zero_grad()
            (pl + vl).backward()
            opt.step()
            step += 1
            if step % 200 == 0:
                epochs = step * args.batch / len(train_rows)
                print(
                    f"step {step} ({epochs:.2f} epochs, {time.perf_counter() - start:.0f} s):"
                    f" policy {pl.item():.3f} value {vl.item():.3f} top1 {t1.item():.3f}",
                    flush=True,
                )
        else:
            continue
        break
    train_seconds = time.perf_counter() - start
    held = evaluate(net, p, held_rows)
    print("held out after:", held, flush=True)
    facts = {
        "dataset": str(data),
        "dataset_games": int(len(np.unique(games))),
        "training_plies": int(len(train_rows)),
        "held_out_plies": int(len(held_rows)),
        "steps": step,
        "batch": args.batch,
        "epochs": round(step * args.batch / len(train_rows), 2),
        "lr": args.lr,
        "seed": args.seed,
        "train_seconds": round(train_seconds, 1),
        "total_seconds": round(time.perf_counter() - t0, 1),
        "held_out": held,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "jericho_game": __version__,
        "python": platform.python_version(),
        "threads": args.threads,
    }
    ref_rows = held_rows[:: max(1, len(held_rows) // 4)][:4]
    ref = batch(p, ref_rows, None)[0].numpy()
    export(net, args, facts, ref)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
