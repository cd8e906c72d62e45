"""Teaching the learned value to rank siblings (issue 32 point 2).

A search asks its value one question above all: of the children of one node, which is best?
The kept value's error on whole positions fell below the mean of 16 playouts', yet its picks
among siblings stayed behind theirs and alone in the search it kept losing (docs/ai.md, "A lower
error, the same play").  The training here adds the siblings to the lesson: each position of a
shard made with ``examples/value_scale.py --siblings K`` comes with up to ``K`` of its most
visited children and the search's value of each (``kids``, ``kid_q``, ``kid_feat``), and the
value learns

* the position's own value, as before (squared error against the search's value, ``q``);
* each child's value (squared error against the search's value of it, weight ``kid_weight``);
* their order: a listwise ranking loss (ListNet: the cross-entropy between the softmax of the
  search's values of the children and the softmax of the network's, both at temperature
  ``tau``, from the parent's side; weight ``rank_weight``), which spends the gradient on the
  differences between siblings that a squared error on each of them barely sees.

Only the value is trained; the policy head's weights are left as they are (the shared layers
move, so use such a network with ``cprior=0``).  NumPy only, as :func:`selfplay.train`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from jericho_game.ai import evalnet, selfplay

__all__ = ["SiblingConfig", "concat", "pick_figures", "train"]

#: The arrays a sibling shard adds to a value shard (``examples/value_scale.py --siblings``).
SIBLING_FIELDS = ("kids", "kid_q", "kid_feat", "kid_feat_off")


@dataclass
class SiblingConfig:
    """How :func:`train` weighs its three lessons, and the optimiser's settings."""

    epochs: int = 2
    batch: int = 256
    lr: float = 3e-4
    l2: float = 1e-5
    kid_weight: float = 1.0
    rank_weight: float = 1.0
    tau: float = 0.1
    holdout: float = 0.05


def concat(shards: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Sibling shards as one: ``feat``/``feat_off``, ``q``, and each row's children as
    ``kid_base`` (the first child's index, one more entry than rows), ``kid_q``,
    ``kid_feat``/``kid_feat_off``."""
    missing = [k for s in shards for k in SIBLING_FIELDS if k not in s]
    if missing:
        raise ValueError(f"not a sibling shard (made without --siblings): no {missing[0]!r}")
    out: dict[str, np.ndarray] = {}
    for key in ("feat", "kid_feat"):
        out[key], out[key + "_off"] = selfplay.concat_ragged(shards, key)
    out["q"] = np.concatenate([s["q"] for s in shards]).astype(np.float32)
    out["kid_q"] = np.concatenate([s["kid_q"] for s in shards]).astype(np.float32)
    kids = np.concatenate([s["kids"] for s in shards]).astype(np.int64)
    out["kid_base"] = np.concatenate([[0], np.cumsum(kids)])
    if out["kid_base"][-1] != len(out["kid_q"]) or len(out["kid_feat_off"]) != len(out["kid_q"]) + 1:
        raise ValueError("a sibling shard's children do not add up (kids, kid_q and kid_feat differ)")
    return out


def _rows_x(flat: np.ndarray, off: np.ndarray, rows: np.ndarray, nf: int) -> np.ndarray:
    x = np.zeros((len(rows), nf), dtype=np.float32)
    for i, r in enumerate(rows):
        x[i, flat[off[r] : off[r + 1]]] = 1.0
    return x


def _batch(data: dict[str, np.ndarray], rows: np.ndarray, nf: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The features of ``rows`` then of all their children, the targets, and each row's number
    of children."""
    base = data["kid_base"]
    kid_rows = np.concatenate([np.arange(base[r], base[r + 1]) for r in rows]) if len(rows) else np.zeros(0, int)
    x = np.concatenate(
        [
            _rows_x(data["feat"], data["feat_off"], rows, nf),
            _rows_x(data["kid_feat"], data["kid_feat_off"], kid_rows, nf),
        ]
    )
    target = np.concatenate([data["q"][rows], data["kid_q"][kid_rows]]).astype(np.float32)
    counts = (base[rows + 1] - base[rows]).astype(np.int64)
    return x, target, counts


def _values(p: dict[str, np.ndarray], x: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    a1 = x @ p["w1"] + p["b1"]
    h1 = np.maximum(a1, 0.0)
    a2 = h1 @ p["w2"].T + p["b2"]
    h2 = np.maximum(a2, 0.0)
    v = np.tanh(h2 @ p["wv"] + p["bv"][0])
    return v, (a1, h1, a2, h2)


def _groups(counts: np.ndarray) -> np.ndarray:
    """Each child's group (the index of its row) for children laid out row after row."""
    return np.repeat(np.arange(len(counts)), counts)


def _losses(
    v: np.ndarray, target: np.ndarray, counts: np.ndarray, cfg: SiblingConfig
) -> tuple[dict[str, float], np.ndarray]:
    """The three losses and their gradient with respect to each row's value ``v``."""
    n = len(counts)
    vp, vk = v[:n], v[n:]
    tp, tk = target[:n], target[n:]
    dv = np.zeros_like(v)
    figs = {"value_mse": float(((vp - tp) ** 2).mean()) if n else 0.0}
    dv[:n] = 2.0 * (vp - tp) / max(1, n)
    if len(vk):
        figs["kid_mse"] = float(((vk - tk) ** 2).mean())
        dv[n:] += cfg.kid_weight * 2.0 * (vk - tk) / len(vk)
        # ListNet over each row's children, from the parent's side (minus the child's value).
        group = _groups(counts)
        many = counts[group] >= 2
        s_net, s_tgt = -vk / cfg.tau, -tk / cfg.tau
        q = _group_softmax(s_net, group, len(counts))
        p = _group_softmax(s_tgt, group, len(counts))
        n_groups = max(1, int((counts >= 2).sum()))
        figs["rank_loss"] = float(-(p * np.log(q + 1e-12))[many].sum() / n_groups)
        # d(-sum p log q)/d s_net = q - p; s_net = -v / tau.
        dv[n:] += cfg.rank_weight * np.where(many, -(q - p) / cfg.tau, 0.0) / n_groups
    return figs, dv


def _group_softmax(s: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    top = np.full(n_groups, -np.inf)
    np.maximum.at(top, group, s)
    e = np.exp(s - top[group])
    total = np.zeros(n_groups)
    np.add.at(total, group, e)
    out: np.ndarray = e / total[group]
    return out


def _grads(
    p: dict[str, np.ndarray], x: np.ndarray, v: np.ndarray, acts: tuple[np.ndarray, ...], dv: np.ndarray, l2: float
) -> dict[str, np.ndarray]:
    a1, h1, a2, h2 = acts
    dpre = (dv * (1.0 - v * v)).astype(np.float32)
    grads = {"wv": h2.T @ dpre + l2 * p["wv"], "bv": np.array([dpre.sum()], dtype=np.float32)}
    dh2 = np.outer(dpre, p["wv"]) * (a2 > 0)
    grads["w2"] = dh2.T @ h1 + l2 * p["w2"]
    grads["b2"] = dh2.sum(axis=0)
    dh1 = (dh2 @ p["w2"]) * (a1 > 0)
    grads["w1"] = x.T @ dh1 + l2 * p["w1"]
    grads["b1"] = dh1.sum(axis=0)
    return grads


def pick_figures(v_kids: np.ndarray, kid_q: np.ndarray, counts: np.ndarray) -> dict[str, float]:
    """How well child values ``v_kids`` pick among siblings, judged by the search's ``kid_q``
    (both for the child's side to move; rows with two children or more): how often the pick is
    the search's best, and the mean value lost to it (``regret``, on the parent's scale)."""
    base = np.concatenate([[0], np.cumsum(counts)])
    hits, regrets = [], []
    for r in range(len(counts)):
        if counts[r] < 2:
            continue
        vk, tk = v_kids[base[r] : base[r + 1]], kid_q[base[r] : base[r + 1]]
        pick = int(np.argmin(vk))  # the child worst for the opponent
        hits.append(float(tk[pick] == tk.min()))
        regrets.append(float(tk[pick] - tk.min()))
    return {"best_pick": float(np.mean(hits)) if hits else 0.0, "regret": float(np.mean(regrets)) if regrets else 0.0}


def split(n_rows: int, holdout: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Training and held-out rows as :func:`selfplay.split_pairs` draws them, the held-out ones
    in order."""
    fit, hold = selfplay.split_pairs(n_rows, holdout, np.random.default_rng(seed))
    return fit, np.sort(hold)


def evaluate(
    net: evalnet.EvalNet, data: dict[str, np.ndarray], rows: np.ndarray, cfg: SiblingConfig
) -> dict[str, float]:
    """The losses and the sibling picks of ``net`` on ``rows`` (no training)."""
    nf = net.arrays["w1"].shape[0]
    x, target, counts = _batch(data, rows, nf)
    v, _acts = _values(net.arrays, x)
    figs, _dv = _losses(v, target, counts, cfg)
    figs.update(pick_figures(v[len(rows) :], target[len(rows) :], counts))
    return figs


def train(
    net: evalnet.EvalNet, data: dict[str, np.ndarray], cfg: SiblingConfig, seed: int, log: Any = None
) -> dict[str, float]:
    """Train ``net``'s value in place on :func:`concat`'s ``data``; the held-out figures before
    (``before_*``) and after, and after on as many of the training rows (``fit_*``: their gap to
    the held-out ones tells overfitting from what the network cannot learn)."""
    fit, hold = split(len(data["q"]), cfg.holdout, seed)
    hold = hold[:4096]
    figures: dict[str, float] = {"positions": float(len(fit)), "held_out": float(len(hold))}
    if len(hold):
        figures.update({f"before_{k}": v for k, v in evaluate(net, data, hold, cfg).items()})
    params = net.arrays
    opt = selfplay._Adam(params, cfg.lr)
    nf = params["w1"].shape[0]
    rng = np.random.default_rng(seed + 1)
    for epoch in range(cfg.epochs):
        order = rng.permutation(fit)
        for i in range(0, len(order), cfg.batch):
            rows = order[i : i + cfg.batch]
            x, target, counts = _batch(data, rows, nf)
            v, acts = _values(params, x)
            _figs, dv = _losses(v, target, counts, cfg)
            opt.step(params, _grads(params, x, v, acts, dv, cfg.l2))
        if log and len(hold):
            log(f"epoch {epoch + 1}: " + ", ".join(f"{k} {v:.4f}" for k, v in evaluate(net, data, hold, cfg).items()))
    for key in params:
        params[key] = params[key].astype(np.float32)
    if len(hold):
        figures.update(evaluate(net, data, hold, cfg))
        figures.update({f"fit_{k}": v for k, v in evaluate(net, data, np.sort(fit[: len(hold)]), cfg).items()})
    return figures
