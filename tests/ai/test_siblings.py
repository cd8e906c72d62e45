"""Teaching the value to rank siblings (``jericho_game.ai.siblings``, issue 32 point 2): the
sibling data of ``examples/value_scale.py --siblings`` holds each position's searched children
with the search's values of them, and the trainer's three losses have the gradients it follows
and teach the order they are meant to teach."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jericho_game import kernel
from jericho_game.ai import evalnet, heldout, siblings
from jericho_game.envs.encoding import default_encoding
from tests.helpers import load_example

ROOT = Path(__file__).resolve().parents[2]

needs_c = pytest.mark.skipif(kernel.C is None, reason="the positions are labelled by the C search")


def load_script():
    return load_example("value_scale")


def synthetic(n_rows: int = 40, nf: int = 30, seed: int = 0) -> dict[str, np.ndarray]:
    """Rows with 0 to 4 children, each with 5 of the first ``nf`` features; every target a fixed
    function of the features (learnable)."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0, 0.4, nf)

    def make(n):
        feats = [np.sort(rng.choice(nf, size=5, replace=False)).astype(np.int16) for _ in range(n)]
        q = np.array([np.tanh(truth[f].sum()) for f in feats], dtype=np.float32)
        off = np.concatenate([[0], np.cumsum([len(f) for f in feats])])
        return np.concatenate(feats), off, q

    feat, feat_off, q = make(n_rows)
    kids = rng.integers(0, 5, n_rows).astype(np.int16)
    kid_feat, kid_feat_off, kid_q = make(int(kids.sum()))
    return {
        "feat": feat,
        "feat_off": feat_off,
        "q": q,
        "kids": kids,
        "kid_q": kid_q,
        "kid_feat": kid_feat,
        "kid_feat_off": kid_feat_off,
    }


def small_net() -> evalnet.EvalNet:
    return evalnet.EvalNet.random((16, 8), seed=3)


def test_concat_lays_out_each_rows_children_and_refuses_a_plain_shard():
    a, b = synthetic(10, seed=1), synthetic(6, seed=2)
    data = siblings.concat([a, b])
    assert len(data["q"]) == 16 and data["kid_base"][-1] == len(data["kid_q"]) == a["kids"].sum() + b["kids"].sum()
    # the second shard's first row's children are its own, after all of the first shard's
    first = int(data["kid_base"][10])
    assert first == a["kids"].sum()
    if b["kids"][0]:
        lo, hi = data["kid_feat_off"][first], data["kid_feat_off"][first + 1]
        assert data["kid_feat"][lo:hi].tolist() == b["kid_feat"][: b["kid_feat_off"][1]].tolist()
    plain = {k: v for k, v in a.items() if not k.startswith("kid")}
    with pytest.raises(ValueError, match="kids"):
        siblings.concat([plain])


def test_the_gradients_are_those_of_the_losses():
    data = siblings.concat([synthetic(12)])
    net = small_net()
    cfg = siblings.SiblingConfig(kid_weight=0.7, rank_weight=1.3, tau=0.2, l2=0.0)
    rows = np.arange(12)
    x, target, counts = siblings._batch(data, rows, evalnet.n_features())
    p = {k: v.astype(np.float64) for k, v in net.arrays.items()}

    def loss(params):
        v, _ = siblings._values(params, x)
        figs, _ = siblings._losses(v, target, counts, cfg)
        return figs["value_mse"] + cfg.kid_weight * figs["kid_mse"] + cfg.rank_weight * figs["rank_loss"]

    v, acts = siblings._values(p, x)
    _figs, dv = siblings._losses(v, target, counts, cfg)
    grads = siblings._grads(p, x, v, acts, dv, 0.0)
    rng = np.random.default_rng(0)
    for name in ("wv", "w2", "w1", "b1"):
        for _ in range(4):
            idx = tuple(rng.integers(0, s) for s in p[name].shape)
            eps = 1e-5
            up = {k: v.copy() for k, v in p.items()}
            up[name][idx] += eps
            down = {k: v.copy() for k, v in p.items()}
            down[name][idx] -= eps
            numeric = (loss(up) - loss(down)) / (2 * eps)
            assert grads[name][idx] == pytest.approx(numeric, rel=1e-3, abs=1e-6), name


def test_pick_figures_judge_the_pick_by_the_search():
    # two rows: the network picks the search's best in the first, not in the second; a lone
    # child (third row) is no choice and is not counted
    v = np.array([0.5, -0.2, 0.1, -0.9, 0.3, 0.0])
    q = np.array([0.4, -0.5, 0.0, 0.2, -0.1, 0.7])
    figs = siblings.pick_figures(v, q, np.array([3, 2, 1]))
    assert figs["best_pick"] == pytest.approx(0.5)
    assert figs["regret"] == pytest.approx((0.0 + 0.3) / 2)


def test_training_teaches_the_order_of_siblings():
    data = siblings.concat([synthetic(400, seed=5)])
    net = small_net()
    cfg = siblings.SiblingConfig(epochs=30, batch=32, lr=3e-3, holdout=0.2)
    figs = siblings.train(net, data, cfg, seed=1)
    assert figs["rank_loss"] < figs["before_rank_loss"]
    assert figs["kid_mse"] < figs["before_kid_mse"] and figs["value_mse"] < figs["before_value_mse"]
    assert figs["regret"] < figs["before_regret"]
    # the policy head is not trained
    assert np.array_equal(net.arrays["wp"], small_net().arrays["wp"])


@needs_c
def test_sibling_data_holds_the_searched_children_with_the_searchs_values():
    vs = load_script()
    rec = vs._game(seed=11, sims=120, sample_plies=4, off_path=0.0, siblings=3)
    n = len(rec["q"])
    assert n == len(rec["kids"]) == len(rec["moves"]) and sum(rec["kids"]) == len(rec["kid_q"]) == len(rec["kid_feat"])
    assert max(rec["kids"]) <= 3 and sum(rec["kids"]) > 0
    base = np.concatenate([[0], np.cumsum(rec["kids"])])
    checked = 0
    for i in range(0, n, 2):
        assert rec["kids"][i] == rec["kids"][i + 1]  # a mirrored pair keeps the same children
        state = kernel.new_state(default_encoding().tables, "c")
        for code in rec["moves"][i]:
            state.push(int(code))
        for k in range(base[i], base[i + 1]):
            child = state.copy(with_history=True)
            child.push(int(rec["kid_code"][k]))
            assert child.outcome < 0  # a finished child needs no network and is not kept
            assert sorted(rec["kid_feat"][k].tolist()) == sorted(evalnet.features(child))
            assert -1.0 <= rec["kid_q"][k] <= 1.0
            checked += 1
        # the children of the mirrored row are the same children, mirrored
        for k in range(base[i + 1], base[i + 2]):
            child = state.copy(with_history=True)
            child.push(int(rec["kid_code"][k]))
            assert sorted(rec["kid_feat"][k].tolist()) == sorted(evalnet.features(child, mirror=True))
    assert checked > 10
    # the search's value of a position is its most visited child's, the first kept (when open)
    same = [
        rec["q"][i] == pytest.approx(-rec["kid_q"][base[i]])
        for i in range(0, n, 2)
        if rec["kids"][i] and abs(rec["q"][i]) < 1.0
    ]
    assert len(same) > 5 and np.mean(same) >= 0.8


@needs_c
def test_a_sibling_shard_trains_a_network():
    vs = load_script()
    shard = vs.make_shard(0, games=2, sims=60, sample_plies=4, off_path=0.3, jobs=1, siblings=4)
    assert {"kids", "kid_q", "kid_code", "kid_feat", "kid_feat_off", "moves", "moves_off"} <= set(shard)
    data = siblings.concat([shard])
    net = evalnet.EvalNet.random((16, 8), seed=1)
    figs = siblings.train(net, data, siblings.SiblingConfig(epochs=2, batch=16, lr=1e-3, holdout=0.2), seed=0)
    assert figs["positions"] + figs["held_out"] == len(shard["q"])
    assert 0.0 <= figs["best_pick"] <= 1.0 and figs["regret"] >= 0.0


@needs_c
def test_train_siblings_fine_tunes_a_kept_network_and_judges_it_beside_playouts(tmp_path, monkeypatch):
    """``value_scale.py --train-siblings --init NET [--widen N]``: NET's value, widened, goes on
    learning from the sibling shards; the results hold the picks before and after on the same
    held-out rows as 16 playouts', and the kept held-out set's error."""
    import json
    import shutil
    import sys

    kept = ROOT / "docs" / "runs" / "value-scale-2026-12-04"
    vs = load_script()
    shard = vs.make_shard(0, games=3, sims=60, sample_plies=4, off_path=0.3, jobs=1, siblings=4)
    np.savez_compressed(tmp_path / "shard-000.npz", **shard)
    shutil.copy(kept / "heldout.npz", tmp_path / "heldout.npz")
    argv = ["value_scale.py", "--out", str(tmp_path), "--train-siblings", "--init", str(kept / "value.npz")]
    monkeypatch.setattr(sys, "argv", [*argv, "--epochs", "1", "--widen", "136", "--tag=-t"])
    vs.main()
    net = evalnet.load(tmp_path / "best-siblings-t.npz")
    assert net.hidden == (136, 64)
    old = evalnet.load(kept / "value.npz")
    assert np.array_equal(net.arrays["wp"], old.arrays["wp"])  # the policy is not trained
    assert 0 < np.abs(net.arrays["w1"][:, :128] - old.arrays["w1"]).max() < 0.05  # it went on from NET
    res = json.loads((tmp_path / "results-siblings-t.json").read_text(encoding="utf-8"))
    figs = res["siblings"]
    for key in ("playouts16_regret", "same600_before_regret", "same600_regret", "before_regret", "regret"):
        assert figs[key] >= 0.0
    assert res["config"]["rank_weight"] == 1.0 and len(res["report"]) == 3


SIB = ROOT / "docs" / "runs" / "value-siblings-2026-12-05"


def test_the_kept_sibling_runs_are_what_the_docs_say():
    """docs/ai.md quotes the kept runs' figures and matches, and the runs say what it concludes:
    the ranking loss lowers the regret, squared error on the children alone does not, the
    training rows fit no better than the held-out ones, and in play none beats its start."""
    import json

    doc = (ROOT / "docs" / "ai.md").read_text(encoding="utf-8")
    runs = {
        r: json.loads((SIB / f"results-siblings-rw{r}.json").read_text(encoding="utf-8"))["siblings"] for r in (0, 1, 3)
    }
    for figs in runs.values():
        assert f"{figs['same600_regret']:.3f}" in doc and f"{figs['same600_best_pick']:.1%}" in doc
        assert f"{figs['regret']:.3f} / {figs['fit_regret']:.3f}" in doc
        assert abs(figs["fit_regret"] - figs["regret"]) < 0.01  # underfitting, not overfitting
    assert runs[3]["same600_regret"] < runs[1]["same600_regret"] < runs[3]["same600_before_regret"]
    assert runs[0]["same600_regret"] >= runs[0]["same600_before_regret"]
    assert runs[0]["kid_mse"] < runs[0]["before_kid_mse"] / 2
    assert runs[3]["playouts16_regret"] < runs[3]["same600_regret"]  # still behind 16 playouts
    threats = json.loads((SIB / "results-threats-rw3-20.json").read_text(encoding="utf-8"))
    for name in ("without", "with threats"):
        assert f"**{threats[name]['regret']:.3f}**" in doc
    assert abs(threats["with threats"]["regret"] - threats["without"]["regret"]) < 0.005  # no help
    for r in (0, 1):  # the playouts' own targets, judged by the search's values like the others
        pt = json.loads((SIB / f"results-siblings-pt16-rw{r}.json").read_text(encoding="utf-8"))["siblings"]
        row = f"| {pt['same600_best_pick']:.1%} | {pt['same600_regret']:.3f} | "
        assert row + f"{pt['regret']:.3f} / {pt['fit_regret']:.3f} |" in doc
        assert pt["same600_regret"] > pt["playouts16_regret"] + 0.01  # still behind the playouts' own picks
    start = json.loads((ROOT / "docs/runs/value-phase-2026-12-05/arena-phase-3702.json").read_text(encoding="utf-8"))
    for r in ("rw0", "rw1", "rw3", "pt16-rw0"):
        summary = json.loads((SIB / f"arena-{r}-3702.json").read_text(encoding="utf-8"))
        pairing = summary["pairings"][0]
        assert summary["seed"] == 3702 and pairing["games"] == 200 and "games" not in summary
        assert f"best-siblings-{r}.npz" in pairing["a"] and "mix=1,cprior=0" in pairing["a"]
        assert f"{pairing['wins']}-{pairing['draws']}-{pairing['losses']}" in doc
        assert pairing["score_a"] < start["pairings"][0]["score_a"]


@needs_c
def test_threat_features_describe_the_next_placement_and_the_study_runs(tmp_path, monkeypatch):
    """``--threats``: each position and child gets the mover's best immediate gain (as the
    kernel's ``margin_deltas`` gives it), how many moves gain and how many reach the best, after
    the network's own features; the study trains without and with them from the same network."""
    import json
    import shutil
    import sys

    vs = load_script()
    shard = vs.make_shard(0, games=2, sims=60, sample_plies=4, off_path=0.3, jobs=1, siblings=3)
    nf = evalnet.n_features()
    more = vs.add_threats(shard, nf)
    for row in range(len(shard["q"])):
        extra = [int(f) - nf for f in more["feat"][more["feat_off"][row] : more["feat_off"][row + 1]] if f >= nf]
        state = vs._state_of(shard["moves"][shard["moves_off"][row] : shard["moves_off"][row + 1]])
        assert extra == vs.threat_features(state) and 3 <= len(extra) <= 5
        best = max(state.margin_deltas(state.legal_codes()))
        assert extra[0] == min(max(best, 0), len(vs.THREAT_BEST) - 1)
        assert all(0 <= f < vs.N_THREATS for f in extra)
    assert len(more["kid_feat_off"]) == len(shard["kid_feat_off"])
    assert len(more["kid_feat"]) > len(shard["kid_feat"])
    kept = ROOT / "docs" / "runs" / "value-scale-2026-12-04"
    np.savez_compressed(tmp_path / "shard-000.npz", **shard)
    shutil.copy(kept / "heldout.npz", tmp_path / "heldout.npz")
    argv = ["value_scale.py", "--out", str(tmp_path), "--threats", "--shards", "1", "--init", str(kept / "value.npz")]
    monkeypatch.setattr(sys, "argv", [*argv, "--epochs", "1", "--tag=-t"])
    vs.main()
    res = json.loads((tmp_path / "results-threats-t.json").read_text(encoding="utf-8"))
    assert res["shards"] == 1 and res["without"]["before_regret"] == res["with threats"]["before_regret"]


@needs_c
def test_playout_targets_are_the_mean_of_greedy_playouts_of_each_position_and_child():
    vs = load_script()
    shard = vs.make_shard(0, games=1, sims=40, sample_plies=4, off_path=0.0, jobs=1, siblings=2)
    taught = vs.playout_targets(shard, 400)
    assert taught["q"].shape == shard["q"].shape and taught["kid_q"].shape == shard["kid_q"].shape
    assert np.array_equal(taught["q"][::2], taught["q"][1::2])  # a mirrored pair: one position
    assert np.array_equal(taught["feat"], shard["feat"]) and np.abs(taught["kid_q"]).max() <= 1.0
    base = np.concatenate([[0], np.cumsum(shard["kids"])])
    for row in (0, len(shard["q"]) // 2 & ~1):
        state = vs._state_of(shard["moves"][shard["moves_off"][row] : shard["moves_off"][row + 1]])
        assert taught["q"][row] == pytest.approx(heldout.playout_values([state], 400, seed=9)[0], abs=0.3)
        k = int(shard["kids"][row])
        assert np.array_equal(
            taught["kid_q"][base[row] : base[row] + k], taught["kid_q"][base[row + 1] : base[row + 1] + k]
        )
        for j in range(k):
            child = state.copy(with_history=True)
            child.push(int(shard["kid_code"][base[row] + j]))
            assert taught["kid_q"][base[row] + j] == pytest.approx(
                heldout.playout_values([child], 400, seed=9)[0], abs=0.3
            )
