"""Issue 32 point 2, the study's next step: the learned value trained on far more distilled
positions, on the search's path and off it.

    python examples/value_scale.py --out scale --shards 200 --jobs 2     # the data (resumable)
    python examples/value_scale.py --out scale --train                   # the networks
    python examples/value_scale.py --out scale --train --hidden 256,64 --sizes 1 --tag -256
    python examples/value_scale.py --out scale --rank                    # how they rank moves
    python examples/value_scale.py --out late --shards 300 --games-per-shard 40 --jobs 2 \
        --phase 6,34 --sims 400 --sample-plies 14                          # one phase's positions
    python examples/value_scale.py --out late --train --init NET --lr 0.0003 --epochs 2 --sizes 1 --tag=-ft
                                                                         # fine-tune NET on them
    python examples/value_scale.py --out sib --shards 60 --games-per-shard 50 --sims 1000 \
        --off-path 0.5 --siblings 8 --jobs 2                             # positions with their children
    python examples/value_scale.py --out sib --train-siblings --init NET --epochs 2 --lr 0.0003 \
        --rank-weight 3 --tag=-rw3                                       # teach NET's value their order
    python examples/value_scale.py --out ei --shards 100 --games-per-shard 40 --sims 400 --jobs 2 \
        --teacher NET                                  # NET's value-playout mix labels (expert iteration)
    python examples/value_scale.py --out g2 --train --init NET --also ei --also ei2 --lr 0.0003 \
        --epochs 2 --sizes 1 --tag=-g2        # train on two generations' folders (g2: its heldout.npz)

``examples/value_study.py`` found that the value's first fault was its target (the game's result
is one noisy sample; the search's value averages hundreds of playouts) and that 27,000 positions,
all on the search's own path, were too few.  This script makes the data that study asked for:

1. ``heldout.npz``: a held-out set made as the study made its own (120 positions, seed 32; the
   searches that label it do not repeat exactly, so its baselines differ a little from the
   study's table: compare predictors within one set).
2. ``shard-NNN.npz``: ``--games-per-shard`` games of the strong search at ``--sims`` simulations
   a move (the first ``--sample-plies`` moves drawn by the visits, for variety).  Every position
   of a game is kept with the search's value (the label: a proof when the search proves one,
   else its most visited move's winning rate) and visit distribution; and, with probability
   ``--off-path``, the position after one uniformly random move from it is labelled by a search
   of its own and kept too (marked ``off``): most of a search's leaves come after a poor move,
   and a value trained only on good play has never seen them.  Each position is also kept
   mirrored left-right (the training code's pairs).  Shards are written whole (a temporary
   name, then a rename), so a run killed at any moment resumes at the next missing shard.
3. With ``--train``: networks trained from scratch on the search's value (distillation) with
   1/16, 1/4 and all of the shards (``--sizes``), each scored on the held-out set; the best is
   saved as ``best.npz`` (for the arena: ``evaluator=OUT/best.npz,mix=1``) and the figures go to
   ``results.json`` (``--tag`` names another variant's files).
4. With ``--rank``: what the search needs of a value, to rank one position's moves
   (:func:`rank_study`: each predictor's one-ply picks on the held-out positions, judged by the
   strong search), for every ``best*.npz`` in ``OUT``, the shipped network and playouts;
   ``rank.json``.
5. With ``--siblings K`` (making shards): each position also keeps up to ``K`` of its most
   visited children with the search's values of them; with ``--train-siblings --init NET``:
   NET's value learns them and their order (:mod:`jericho_game.ai.siblings`; ``--widen N`` first
   widens its first layer), judged by its picks among held-out siblings beside 16 playouts'
   (``best-siblings{tag}.npz``, ``results-siblings{tag}.json``; docs/ai.md, "Teaching the order
   of siblings"); ``--playout-targets N`` teaches the means of ``N`` greedy playouts instead of
   the search's values; ``--threats`` compares the same fine-tuning without and with the next
   placement's threats as extra inputs (NumPy only).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from jericho_game import kernel
from jericho_game.ai import evalnet, heldout, selfplay, siblings
from jericho_game.envs import teacher
from jericho_game.envs.encoding import default_encoding


def _keep(
    rec: dict[str, list[Any]],
    state: Any,
    value: float,
    children: list[Any],
    off: bool,
    siblings: int = 0,
    min_visits: int = 8,
) -> None:
    codes = state.legal_codes()
    visits = np.array([ch[1] for ch in children], dtype=np.float64)
    # The siblings: the most visited open children (a finished child needs no network), each with
    # the search's value of it for the side that moves next, i.e. minus its winning rate here.
    kids = []
    for code, n, w, proof in sorted(children, key=lambda ch: -ch[1])[:siblings]:
        if n < min_visits and proof == -1:
            continue
        child = state.copy(with_history=True)
        child.push(code)
        if child.outcome >= 0:
            continue
        here = {1: 1.0, 0: -1.0, 2: 0.0}.get(proof, 2.0 * w / n - 1.0)
        kids.append((child, -here, code))
    for mirror in (False, True):
        amap = evalnet.action_map(state.turn, mirror)
        rec["feat"].append(np.array(evalnet.features(state, mirror), dtype=np.int16))
        rec["legal"].append(amap[np.array(codes)].astype(np.int16))
        rec["pol_a"].append(amap[np.array([ch[0] for ch in children])].astype(np.int16))
        rec["pol_p"].append((visits / max(1.0, visits.sum())).astype(np.float32))
        rec["q"].append(value)
        rec["off"].append(off)
        rec["ply"].append(len(state.history_codes()))
        if siblings:
            rec["kids"].append(len(kids))
            rec["kid_q"].extend(q for _child, q, _code in kids)
            rec["kid_code"].extend(code for _child, _q, code in kids)
            rec["kid_feat"].extend(np.array(evalnet.features(child, mirror), dtype=np.int16) for child, _q, _c in kids)
            rec["moves"].append(np.array(state.history_codes(), dtype=np.int16))


def _game(
    seed: int,
    sims: int,
    sample_plies: int,
    off_path: float,
    phase: tuple[int, int] | None = None,
    cheap_sims: int = 80,
    siblings: int = 0,
    teacher_: heldout.Teacher | None = None,
) -> dict[str, list[Any]]:
    keys = ("feat", "legal", "pol_a", "pol_p", "q", "off", "ply") + (
        ("kids", "kid_q", "kid_code", "kid_feat", "moves") if siblings else ()
    )
    rec: dict[str, list[Any]] = {k: [] for k in keys}
    for state, value, children, off in teacher.search_game(
        seed, sims, sample_plies, off_path, phase, cheap_sims, teacher_
    ):
        _keep(rec, state, value, children, off, siblings)
    return rec


def _worker(
    args: tuple[list[int], int, int, float, tuple[int, int] | None, int, int, heldout.Teacher | None],
) -> dict[str, list[Any]]:
    seeds, sims, sample_plies, off_path, phase, cheap_sims, siblings, teacher_ = args
    out: dict[str, list[Any]] = {}
    for s in seeds:
        for key, values in _game(s, sims, sample_plies, off_path, phase, cheap_sims, siblings, teacher_).items():
            out.setdefault(key, []).extend(values)
    return out


def make_shard(
    index: int,
    games: int,
    sims: int,
    sample_plies: int,
    off_path: float,
    jobs: int,
    phase: tuple[int, int] | None = None,
    cheap_sims: int = 80,
    siblings: int = 0,
    teacher_: heldout.Teacher | None = None,
) -> dict[str, np.ndarray]:
    """One shard's positions as flat arrays (the format of :func:`selfplay.play_games`); with
    ``phase``, only that phase's positions (other games: their seeds are apart from the others').

    With ``siblings=K``, each position also keeps up to ``K`` of its most visited open children
    (8 visits or more, or proven): ``kids`` (how many, per row), ``kid_q`` (the search's value of
    each for its side to move), ``kid_code`` (the move to it), ``kid_feat``/``kid_feat_off`` (its
    features, in the row's mirror) and the position's moves from the start (``moves``/``moves_off``,
    to rebuild it), the targets of :mod:`jericho_game.ai.siblings`.  Its games are apart from the others'.

    With ``teacher_``, every search of its games is that network's mix (:class:`heldout.Teacher`:
    expert iteration, a network's own search labelling the next one's data); its games' seeds
    are apart from the others' too."""
    base = 7_000_003 if phase is None else 9_100_019
    if siblings:
        base += 1_234_567
    if teacher_ is not None:
        base += 2_345_671
    seeds = [base * (index + 1) + i for i in range(games)]
    tasks = [
        (seeds[j::jobs], sims, sample_plies, off_path, phase, cheap_sims, siblings, teacher_)
        for j in range(jobs)
        if seeds[j::jobs]
    ]
    merged = selfplay.run_merged(_worker, tasks, jobs)
    out: dict[str, np.ndarray] = {}
    for key in ("feat", "legal", "pol_a", "pol_p"):
        out[key], out[key + "_off"] = selfplay._ragged(merged[key])
    out["q"] = np.array(merged["q"], dtype=np.float32)
    out["z"] = out["q"]  # no game result for an off-path position: the label is the search's value
    out["off"] = np.array(merged["off"], dtype=bool)
    out["ply"] = np.array(merged["ply"], dtype=np.int16)
    if siblings:
        out["kids"] = np.array(merged["kids"], dtype=np.int16)
        out["kid_q"] = np.array(merged["kid_q"], dtype=np.float32)
        out["kid_code"] = np.array(merged["kid_code"], dtype=np.int16)
        out["kid_feat"], out["kid_feat_off"] = selfplay._ragged(merged["kid_feat"])
        out["moves"], out["moves_off"] = selfplay._ragged(merged["moves"])
    return out


def _child_value(child: Any, predictor: Any, mover: int) -> float:
    """A predictor's value of ``child`` for the player who moved into it (exact when it is over)."""
    if child.outcome >= 0:
        return heldout._result(child.outcome, mover)
    return -float(predictor(child))


def rank_study(held: heldout.HeldOut, predictors: dict[str, Any], judge_sims: int, seed: int = 0) -> dict[str, Any]:
    """What the search needs of a value: to rank the moves of one position.  For each held-out
    position every predictor picks the move whose child it values best (one ply, no search);
    the pick is judged by the strong search's value of that child at ``judge_sims`` simulations,
    and compared with the strong search's own pick at the same budget.  Returns each
    predictor's mean judged value of its picks (the side to move's, in [-1, 1]) and how often it
    picked the search's move."""
    states = held.states()
    judged: dict[tuple[int, int], float] = {}

    def judge(i: int, code: int) -> float:
        if (i, code) not in judged:
            child = states[i].copy(with_history=True)
            child.push(code)
            mover = states[i].turn
            judged[(i, code)] = (
                heldout._result(child.outcome, mover)
                if child.outcome >= 0
                else -heldout.search_value(child, seed * 1_000_003 + i * 7919 + code, judge_sims)
            )
        return judged[(i, code)]

    picks: dict[str, list[int]] = {name: [] for name in ("the strong search", *predictors)}
    for i, state in enumerate(states):
        codes = state.legal_codes()
        children = []
        for code in codes:
            child = state.copy(with_history=True)
            child.push(code)
            children.append(child)
        value, tree = heldout.search(state, seed * 1_000_003 + i, judge_sims)
        picks["the strong search"].append(max(tree, key=lambda ch: (ch[3] == 1, ch[3] != 0, ch[1], ch[2]))[0])
        for name, predictor in predictors.items():
            values = [_child_value(ch, predictor, state.turn) for ch in children]
            picks[name].append(codes[int(np.argmax(values))])
    out: dict[str, Any] = {}
    for name, codes in picks.items():
        vals = [judge(i, code) for i, code in enumerate(codes)]
        same = [code == picks["the strong search"][i] for i, code in enumerate(codes)]
        out[name] = {"mean_value": float(np.mean(vals)), "same_move": float(np.mean(same)), "n": len(codes)}
    return out


def load_shards(out: Path, limit: int | None = None) -> list[dict[str, np.ndarray]]:
    """The shards in ``out`` (the first ``limit``), each as a dict of arrays."""
    shards = []
    for path in sorted(out.glob("shard-*.npz"))[:limit]:
        with np.load(path) as d:
            shards.append({key: d[key] for key in d.files})
    return shards


def _sibling_config(args: argparse.Namespace) -> siblings.SiblingConfig:
    return siblings.SiblingConfig(
        epochs=args.epochs,
        lr=args.lr,
        l2=args.l2,
        kid_weight=args.kid_weight,
        rank_weight=args.rank_weight,
        tau=args.tau,
    )


def _state_of(moves: np.ndarray) -> Any:
    state = kernel.new_state(default_encoding().tables, "c")
    for code in moves:
        state.push(int(code))
    return state


def sibling_playout_picks(shard_rows: list[tuple[dict[str, np.ndarray], int]], n_playouts: int) -> dict[str, float]:
    """The mean of ``n_playouts`` greedy playouts of each kept child as a predictor of the
    siblings' order (:func:`siblings.pick_figures`, judged by the data's search), for scale."""
    vals, qs, counts = [], [], []
    for shard, row in shard_rows:
        lo, hi = shard["moves_off"][row], shard["moves_off"][row + 1]
        state = _state_of(shard["moves"][lo:hi])
        first = int(shard["kids"][:row].sum())
        k = int(shard["kids"][row])
        kids = []
        for code in shard["kid_code"][first : first + k]:
            child = state.copy(with_history=True)
            child.push(int(code))
            kids.append(child)
        vals.extend(heldout.playout_values(kids, n_playouts, seed=row) if kids else [])
        qs.extend(shard["kid_q"][first : first + k])
        counts.append(k)
    return siblings.pick_figures(np.array(vals), np.array(qs), np.array(counts))


def playout_targets(shard: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """``shard`` with its targets (``q``, ``kid_q``) replaced by the mean result of ``n`` greedy
    playouts of each position and child (the side to move's, as :func:`heldout.playout_values`):
    the value the playout search's leaves estimate, noise averaged away."""
    q = np.zeros(len(shard["q"]), dtype=np.float32)
    kid_q = np.zeros(len(shard["kid_q"]), dtype=np.float32)

    def mean(state: Any, seed: int) -> float:
        south, north, _draws = kernel.C.playouts(state, n, seed, guided=0)
        return float((south - north) if state.turn == 0 else (north - south)) / n

    kid = 0
    for row in range(0, len(q), 2):  # a mirrored pair is one position with the same children
        state = _state_of(shard["moves"][shard["moves_off"][row] : shard["moves_off"][row + 1]])
        q[row] = q[row + 1] = mean(state, row)
        k = int(shard["kids"][row])
        for j in range(k):
            child = state.copy(with_history=True)
            child.push(int(shard["kid_code"][kid + j]))
            kid_q[kid + j] = kid_q[kid + k + j] = mean(child, row * 64 + j + 1)
        kid += 2 * k
    return {**shard, "q": q, "kid_q": kid_q}


def train_siblings(out: Path, held: heldout.HeldOut, args: argparse.Namespace) -> None:
    """``--train-siblings``: fine-tune ``--init`` on the sibling shards in ``out`` (value only);
    the held-out set's error before and after, the siblings' picks before and after and those
    of 16 playouts; ``best-siblings{tag}.npz`` and ``results-siblings{tag}.json``."""
    if not args.init:
        raise SystemExit("--train-siblings needs --init NET (the network whose value it teaches)")
    t0 = time.monotonic()
    shards = load_shards(out)
    data = siblings.concat(shards)
    cfg = _sibling_config(args)
    net = evalnet.load(args.init)
    states = held.states()
    preds = {f"{args.init} (before)": heldout.net_values(net, states)}
    if args.widen:
        net = net.widened(args.widen, seed=7)
    # 16 playouts are judged on 600 of the held-out rows (one of each mirrored pair; playouts
    # are slow), and so is the network, before and after, for a comparison on the same rows
    fit, hold = siblings.split(len(data["q"]), cfg.holdout, seed=5)
    same = hold[:4096][::2][:600]
    before = siblings.evaluate(net, data, same, cfg)
    if args.playout_targets:
        # learn what the playouts would say, judged as every other run by the search's values
        judged_before = siblings.evaluate(net, data, hold[:4096], cfg)
        taught = siblings.concat([playout_targets(s, args.playout_targets) for s in shards])
        print(f"playout targets: {time.monotonic() - t0:.0f} s", flush=True)
        figs = siblings.train(net, taught, cfg, seed=5, log=lambda m: print(m, flush=True))
        figs = {f"target_{k}": v for k, v in figs.items()}
        figs.update({f"before_{k}": v for k, v in judged_before.items()})
        figs.update(siblings.evaluate(net, data, hold[:4096], cfg))
        figs.update({f"fit_{k}": v for k, v in siblings.evaluate(net, data, np.sort(fit[:4096]), cfg).items()})
    else:
        figs = siblings.train(net, data, cfg, seed=5, log=lambda m: print(m, flush=True))
    figs.update({f"same600_before_{k}": v for k, v in before.items()})
    figs.update({f"same600_{k}": v for k, v in siblings.evaluate(net, data, same, cfg).items()})
    label = f"{args.init}{f' widened to {args.widen}' if args.widen else ''} taught the siblings ({cfg})"
    preds[label] = heldout.net_values(net, states)
    preds["mean of 16 playouts"] = heldout.playout_values(states, 16)
    starts = np.concatenate([[0], np.cumsum([len(s["q"]) for s in shards])])
    rows = []
    for r in same:
        k = int(np.searchsorted(starts, r, side="right") - 1)
        rows.append((shards[k], int(r - starts[k])))
    figs.update({f"playouts16_{k}": v for k, v in sibling_playout_picks(rows, 16).items()})
    net.meta.update(study=label)
    net.save(out / f"best-siblings{args.tag}.npz")
    rep = heldout.report(held, preds)
    result = {"config": vars(cfg), "siblings": figs, "report": rep, "seconds": time.monotonic() - t0}
    (out / f"results-siblings{args.tag}.json").write_text(json.dumps(result, indent=1))
    for k in ("value_mse", "kid_mse", "rank_loss", "best_pick", "regret"):
        print(f"{k:10} before {figs[f'before_{k}']:.4f}  after {figs[k]:.4f}  (training rows {figs[f'fit_{k}']:.4f})")
    print(
        f"on {len(rows)} of the held-out rows: 16 playouts pick the best {figs['playouts16_best_pick']:.3f}, "
        f"regret {figs['playouts16_regret']:.4f}; the network before {figs['same600_before_best_pick']:.3f}, "
        f"{figs['same600_before_regret']:.4f}; after {figs['same600_best_pick']:.3f}, {figs['same600_regret']:.4f}"
    )
    for name, r in rep.items():
        print(f"{name[:70]:70} held-out MSE {r['all']['mse']:.3f}, solved {r['solved'].get('mse', float('nan')):.3f}")


#: ``--threats``: what the side to move can take with its next placement, from the kernel's own
#: move ordering (``margin_deltas``: each move's immediate change of the monolith margin).
THREAT_BEST = (0, 1, 2, 3, 4)  # its best move's gain: <= 0, 1, 2, 3, >= 4 (the most seen: 4)
THREAT_COUNT = (0, 1, 3, 6, 12, 24, 48)  # how many moves gain: 0, 1-2, 3-5, ..., 48+
THREAT_WAYS = (1, 2, 4, 8)  # how many moves reach the best gain: 1, 2-3, 4-7, 8+
N_THREATS = len(THREAT_BEST) + len(THREAT_COUNT) + len(THREAT_WAYS) + 2


def _bucket(value: int, edges: tuple[int, ...]) -> int:
    return sum(1 for edge in edges[1:] if value >= edge)


def threat_features(state: Any) -> list[int]:
    """The ``--threats`` features of ``state``, numbered from 0 (the same in both mirrors): the
    mover's best immediate margin gain, how many moves gain and how many reach the best, whether
    the opponent holds seven and whether the mover can break it."""
    deltas = state.margin_deltas(state.legal_codes())
    best = max(deltas) if deltas else 0
    out = [_bucket(best, THREAT_BEST)]
    base = len(THREAT_BEST)
    out.append(base + _bucket(sum(1 for d in deltas if d > 0), THREAT_COUNT))
    base += len(THREAT_COUNT)
    out.append(base + _bucket(sum(1 for d in deltas if d == best), THREAT_WAYS))
    base += len(THREAT_WAYS)
    opponent = 1 - state.turn
    if state.score[opponent] >= 7:
        out.append(base)
        if state.breaks_possible(opponent):
            out.append(base + 1)
    return out


def add_threats(shard: dict[str, np.ndarray], offset: int) -> dict[str, np.ndarray]:
    """``shard`` with each position's and child's threat features appended (numbered from
    ``offset``, after the network's own)."""
    feats, kid_feats = [], []
    kid = 0
    for row in range(len(shard["q"])):
        state = _state_of(shard["moves"][shard["moves_off"][row] : shard["moves_off"][row + 1]])
        own = shard["feat"][shard["feat_off"][row] : shard["feat_off"][row + 1]]
        feats.append(np.concatenate([own, np.array(threat_features(state), dtype=np.int16) + offset]))
        for _ in range(int(shard["kids"][row])):
            child = state.copy(with_history=True)
            child.push(int(shard["kid_code"][kid]))
            own = shard["kid_feat"][shard["kid_feat_off"][kid] : shard["kid_feat_off"][kid + 1]]
            kid_feats.append(np.concatenate([own, np.array(threat_features(child), dtype=np.int16) + offset]))
            kid += 1
    out = dict(shard)
    out["feat"], out["feat_off"] = selfplay._ragged(feats)
    out["kid_feat"], out["kid_feat_off"] = selfplay._ragged(kid_feats)
    return out


class _Arrays:
    """Weights with more inputs than the C evaluator reads (``--threats``: NumPy only)."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays


def threat_study(out: Path, args: argparse.Namespace) -> None:
    """``--threats``: does the value rank siblings better when it is told what each position's
    next placement can take?  The same fine-tuning (``--init`` NET, ``--rank-weight`` ...) on the
    first ``--shards`` sibling shards, without and with :func:`threat_features` (NET's first layer
    given zero rows for them, so both start from NET's values); NumPy only, no match (the C
    evaluator reads only its own features).  ``results-threats{tag}.json``."""
    t0 = time.monotonic()
    shards = load_shards(out, args.shards)
    cfg = _sibling_config(args)
    nf = evalnet.n_features()
    report: dict[str, Any] = {"config": vars(cfg), "shards": len(shards)}
    for name in ("without", "with threats"):
        data = siblings.concat([add_threats(s, nf) for s in shards] if name != "without" else shards)
        arrays = dict(evalnet.load(args.init).arrays)
        if name != "without":
            arrays["w1"] = np.concatenate([arrays["w1"], np.zeros((N_THREATS, arrays["w1"].shape[1]), np.float32)])
        figs = siblings.train(_Arrays(arrays), data, cfg, seed=5)  # type: ignore[arg-type]
        report[name] = figs
        print(
            f"{name:13} regret {figs['before_regret']:.4f} -> {figs['regret']:.4f} "
            f"(training rows {figs['fit_regret']:.4f}), "
            f"best pick {figs['before_best_pick']:.3f} -> {figs['best_pick']:.3f}, value MSE {figs['value_mse']:.4f}, "
            f"children {figs['kid_mse']:.4f} ({time.monotonic() - t0:.0f} s)",
            flush=True,
        )
    (out / f"results-threats{args.tag}.json").write_text(json.dumps(report, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--shards", type=int, default=40)
    ap.add_argument("--games-per-shard", type=int, default=100)
    ap.add_argument("--sims", type=int, default=200)
    ap.add_argument("--sample-plies", type=int, default=12)
    ap.add_argument("--off-path", type=float, default=0.5)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--phase", help="LO,HI: keep only positions with LO..HI pieces left (the rest: --cheap-sims)")
    ap.add_argument("--cheap-sims", type=int, default=80, help="with --phase: the search outside the phase")
    ap.add_argument("--teacher", help="label with this network's value-playout mix (expert iteration)")
    ap.add_argument("--teacher-mix", type=float, default=0.5, help="with --teacher: the network's share of a leaf")
    ap.add_argument("--teacher-c", type=float, default=0.15, help="with --teacher: its exploration constant")
    ap.add_argument("--init", help="with --train: fine-tune this network instead of training from scratch")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--positions", type=int, default=120, help="held-out positions (the study's set: 120)")
    ap.add_argument("--train", action="store_true", help="train and score networks on the shards made so far")
    ap.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="DIR",
        help="with --train: DIR's shards too, after --out's (a window of generations; repeatable)",
    )
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--hidden", default="128,64")
    ap.add_argument("--l2", type=float, default=1e-5)
    ap.add_argument("--tag", default="", help="suffix of results-TAG.json and best-TAG.npz (another variant)")
    ap.add_argument("--sizes", default="16,4,1", help="train on 1/K of the shards for each K (a learning curve)")
    ap.add_argument("--rank", action="store_true", help="judge how the kept networks rank a position's moves")
    ap.add_argument("--judge-sims", type=int, default=2000)
    ap.add_argument("--siblings", type=int, default=0, help="keep up to K searched children of each position")
    ap.add_argument(
        "--train-siblings", action="store_true", help="with --init: teach NET's value the siblings of --siblings shards"
    )
    ap.add_argument("--kid-weight", type=float, default=1.0, help="with --train-siblings: the children's squared error")
    ap.add_argument("--rank-weight", type=float, default=1.0, help="with --train-siblings: the ranking loss")
    ap.add_argument("--tau", type=float, default=0.1, help="with --train-siblings: the ranking's temperature")
    ap.add_argument(
        "--threats", action="store_true", help="with --init: the sibling fine-tuning without and with threat features"
    )
    ap.add_argument(
        "--playout-targets", type=int, default=0, help="with --train-siblings: learn N greedy playouts' means instead"
    )
    ap.add_argument("--widen", type=int, default=0, help="with --train-siblings: first widen NET's first layer to N")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()

    path = out / "heldout.npz"
    if not path.exists():
        heldout.make(args.positions, seed=32, sims=8000, log=print).save(path)
    held = heldout.load(path)

    if args.rank:
        nets = {p.stem: evalnet.kernel_net(p) for p in sorted(out.glob("best*.npz"))}
        nets["shipped network"] = evalnet.kernel_net(evalnet.SHIPPED)
        predictors: dict[str, Any] = {
            f"{name}, one ply": (lambda st, k=k: k.evaluate(st)[0]) for name, k in nets.items()
        }
        for n_play in (1, 16):
            predictors[f"the mean of {n_play} greedy playouts, one ply"] = lambda st, n=n_play: float(
                heldout.playout_values([st], n)[0]
            )
        report = rank_study(held, predictors, args.judge_sims)
        (out / "rank.json").write_text(json.dumps(report, indent=1))
        print(f"{'picks the move whose child it values best':64} {'judged':>7} {'search':>7}")
        for name, r in report.items():
            print(f"{name:64} {r['mean_value']:7.3f} {r['same_move']:7.1%}")
        return

    if args.threats:
        threat_study(out, args)
        return
    if args.train_siblings:
        train_siblings(out, held, args)
        return

    phase = None
    if args.phase:
        lo, hi = (int(x) for x in args.phase.split(","))
        phase = (lo, hi)
    if not args.train:
        teacher_ = heldout.Teacher(args.teacher, args.teacher_mix, args.teacher_c) if args.teacher else None
        # the shards of one folder come from one labeller and one recipe: a resumed run with
        # another teacher or other settings of what goes into a shard is refused
        said = {
            "teacher": None if teacher_ is None else dataclasses.asdict(teacher_),
            "sims": args.sims,
            "games_per_shard": args.games_per_shard,
            "sample_plies": args.sample_plies,
            "off_path": args.off_path,
            "phase": list(phase) if phase else None,  # as the file keeps it
            "cheap_sims": args.cheap_sims if phase else None,
            "siblings": args.siblings,
        }
        kept = out / "labeller.json"
        if kept.exists():
            before = json.loads(kept.read_text())
            # a file from before the recipe was kept names the teacher and sims only: those are compared
            if before != {key: said[key] for key in before}:
                raise SystemExit(f"{out} was made with {kept.read_text().strip()}, not {json.dumps(said)}")
        elif any(out.glob("shard-*.npz")):
            print(f"warning: {out} has shards but no labeller.json: their settings cannot be checked", flush=True)
        else:
            kept.write_text(json.dumps(said) + "\n")
        for k in range(args.shards):
            shard = out / f"shard-{k:03d}.npz"
            if shard.exists():
                continue
            data = make_shard(
                k,
                args.games_per_shard,
                args.sims,
                args.sample_plies,
                args.off_path,
                args.jobs,
                phase,
                args.cheap_sims,
                args.siblings,
                teacher_,
            )
            tmp = shard.with_name(shard.name + ".tmp.npz")
            np.savez_compressed(tmp, **data)
            tmp.replace(shard)
            n = len(data["q"]) // 2
            print(
                f"shard {k}: {n} positions ({int(data['off'].sum()) // 2} off the path), {time.monotonic() - t0:.0f} s",
                flush=True,
            )
        return

    # expert iteration trains on a window of recent generations, each labelled in its own folder
    shards = load_shards(out) + [shard for folder in args.also for shard in load_shards(Path(folder))]
    if not shards:
        raise SystemExit(f"no shards to train on in {out}" + "".join(f" or {folder}" for folder in args.also))
    states = held.states()
    preds = {
        "mean of 16 playouts": heldout.playout_values(states, 16),
        "shipped network": heldout.net_values(evalnet.SHIPPED, states),
        "the constant 0": np.zeros(len(held), dtype=np.float32),
    }
    hidden = tuple(int(h) for h in args.hidden.split(","))
    n = len(shards)
    best = (9.0, "")
    results = []
    for size in sorted({max(1, n // int(k)) for k in args.sizes.split(",")}):
        net = evalnet.load(args.init) if args.init else evalnet.EvalNet.random((hidden[0], hidden[1]), seed=1)
        if args.init:
            hidden = net.hidden
            preds.setdefault(f"{args.init} (before)", heldout.net_values(net, states))
        cfg = selfplay.TrainConfig(
            hidden=(hidden[0], hidden[1]), epochs=args.epochs, result_share=0.0, l2=args.l2, lr=args.lr
        )
        figs = selfplay.train(net, shards[:size], cfg, seed=5)
        label = f"distilled, {int(figs['positions']) // 2} positions ({size} shards), {hidden[0]}x{hidden[1]}"
        if args.init:
            label = f"{args.init} fine-tuned on {int(figs['positions']) // 2} positions ({size} shards), lr {args.lr:g}"
        preds[label] = heldout.net_values(net, states)
        mse = float(((preds[label] - held.label) ** 2).mean())
        results.append({"label": label, "shards": size, "train": figs, "heldout_mse": mse})
        if mse < best[0]:
            best = (mse, label)
            net.meta.update(study=label)
            net.save(out / f"best{args.tag}.npz")
        print(
            f"{label}: held-out MSE {mse:.3f}, its own held-out {figs.get('value_mse', float('nan')):.3f} "
            f"({time.monotonic() - t0:.0f} s)",
            flush=True,
        )
    rep = heldout.report(held, preds)
    (out / f"results{args.tag}.json").write_text(json.dumps({"report": rep, "runs": results}, indent=1))
    print(f"\n{'predictor':64} {'MSE all':>8} {'sign':>6} {'solved':>7} {'off':>6} {'on':>6}")
    nan = {"mse": float("nan")}
    for name, r in rep.items():
        print(
            f"{name:64} {r['all']['mse']:8.3f} {r['all']['sign']:6.1%} {r['solved'].get('mse', nan['mse']):7.3f} "
            f"{r.get('after_random', nan)['mse']:6.3f} {r.get('on_path', nan)['mse']:6.3f}"
        )
    print(f"best: {best[1]} (saved as {out / f'best{args.tag}.npz'})")


if __name__ == "__main__":
    main()
