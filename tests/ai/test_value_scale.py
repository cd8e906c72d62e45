"""``examples/value_scale.py`` (issue 32 point 2): the distilled positions it makes, on the
search's path and one random move off it, are labelled as the held-out set is and train the
evaluator through the training run's own code."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from jericho_game import kernel
from jericho_game.ai import evalnet, heldout, selfplay
from jericho_game.envs.encoding import default_encoding
from tests.helpers import load_example

pytestmark = pytest.mark.skipif(kernel.C is None, reason="the positions are labelled by the C search")

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    return load_example("value_scale")


def replay(codes):
    state = kernel.new_state(default_encoding().tables, "c")
    for code in codes:
        state.push(code)
    return state


def test_a_label_is_the_held_out_sets_search_value_with_the_roots_children():
    state = replay([])
    for seed in (1, 2, 3):
        value, children = heldout.search(state, seed, 60)  # what the script labels with
        assert value == pytest.approx(heldout.search_value(state, seed, 60))
        assert -1.0 <= value <= 1.0 and children
        assert {ch[0] for ch in children} <= set(state.legal_codes())
        assert sum(ch[1] for ch in children) >= 60 - 1


def test_a_game_keeps_mirrored_pairs_on_and_off_the_path():
    vs = load_script()
    rec = vs._game(seed=11, sims=30, sample_plies=4, off_path=1.0)
    n = len(rec["q"])
    assert n % 2 == 0 and n >= 20
    for i in range(0, n, 2):  # each position twice: as it is and mirrored, with one label
        assert rec["q"][i] == rec["q"][i + 1] and rec["off"][i] == rec["off"][i + 1]
        assert sorted(rec["feat"][i].tolist()) != sorted(rec["feat"][i + 1].tolist()) or rec["ply"][i] == 0
        assert -1.0 <= rec["q"][i] <= 1.0
    off = np.array(rec["off"][::2])
    plies = np.array(rec["ply"][::2])
    assert off.any() and (~off).any()
    # an off-path position is one move after the on-path position kept just before it
    for j in np.flatnonzero(off):
        assert j > 0 and not off[j - 1] and plies[j] == plies[j - 1] + 1
    none_off = vs._game(seed=11, sims=30, sample_plies=4, off_path=0.0)
    assert not any(none_off["off"])


def test_a_shard_trains_the_evaluator_with_the_training_runs_code():
    vs = load_script()
    data = vs.make_shard(0, games=2, sims=30, sample_plies=4, off_path=0.5, jobs=1)
    assert len(data["q"]) == len(data["off"]) == len(data["feat_off"]) - 1
    assert np.array_equal(data["z"], data["q"])  # off-path positions have no game result: distilled only
    net = evalnet.EvalNet.random((16, 8), seed=1)
    before = net.arrays["w1"].copy()
    figs = selfplay.train(net, [data], selfplay.TrainConfig(hidden=(16, 8), epochs=1, result_share=0.0), seed=5)
    assert figs["positions"] > 0 and np.isfinite(figs["value_mse"])
    assert not np.array_equal(before, net.arrays["w1"])


def test_a_phase_shard_fine_tunes_a_kept_network(tmp_path, monkeypatch):
    """``--phase LO,HI`` shards hold only that phase's positions (games of their own seeds), and
    ``--train --init NET`` goes on from NET (its size, its weights) instead of a fresh network."""
    import shutil
    import sys

    vs = load_script()
    data = vs.make_shard(0, games=2, sims=30, sample_plies=4, off_path=0.5, jobs=1, phase=(8, 30), cheap_sims=8)
    plies = data["ply"][::2]
    assert len(plies) > 0 and plies.min() >= 20  # 50 pieces, at most 30 left: 20 placed (a pass is a ply too)
    np.savez_compressed(tmp_path / "shard-000.npz", **data)
    shutil.copy(KEPT / "heldout.npz", tmp_path / "heldout.npz")
    argv = ["value_scale.py", "--out", str(tmp_path), "--train", "--init", str(KEPT / "value.npz")]
    monkeypatch.setattr(sys, "argv", [*argv, "--lr", "0.0001", "--epochs", "1", "--sizes", "1", "--tag=-ft"])
    vs.main()
    tuned, kept = evalnet.load(tmp_path / "best-ft.npz"), evalnet.load(KEPT / "value.npz")
    assert tuned.hidden == kept.hidden
    change = np.abs(tuned.arrays["w1"] - kept.arrays["w1"]).max()
    assert 0 < change < 0.05  # went on from the kept weights, a little
    runs = json.loads((tmp_path / "results-ft.json").read_text(encoding="utf-8"))["runs"]
    assert "fine-tuned" in runs[0]["label"] and np.isfinite(runs[0]["heldout_mse"])


KEPT = ROOT / "docs" / "runs" / "value-scale-2026-12-04"


def test_the_kept_network_scores_what_its_results_and_the_docs_say():
    held = heldout.load(KEPT / "heldout.npz")
    results = json.loads((KEPT / "results.json").read_text(encoding="utf-8"))
    run = results["runs"][-1]
    values = heldout.net_values(KEPT / "value.npz", held.states())  # the C evaluation of the kept weights
    mse = float(((values - held.label) ** 2).mean())
    assert mse == pytest.approx(run["heldout_mse"], abs=1e-4)
    assert mse < results["report"]["the constant 0"]["all"]["mse"]  # it knows something
    arena = json.loads((KEPT / "arena-mix1.json").read_text(encoding="utf-8"))["pairings"][0]
    assert arena["games"] >= 200
    doc = (ROOT / "docs" / "ai.md").read_text(encoding="utf-8")
    assert f"{arena['wins']}-{arena['draws']}-{arena['losses']}" in doc
    assert f"{mse:.3f}" in doc


def test_the_rank_study_judges_each_predictors_one_ply_picks():
    vs = load_script()
    held = heldout.load(KEPT / "heldout.npz")
    few = heldout.HeldOut(held.moves[:4], held.label[:4], held.how[:4], held.ply[:4], held.random_last[:4])
    net = evalnet.kernel_net(KEPT / "value.npz")
    report = vs.rank_study(few, {"net": lambda st: net.evaluate(st)[0], "zero": lambda st: 0.0}, judge_sims=60)
    assert set(report) == {"the strong search", "net", "zero"}
    assert report["the strong search"]["same_move"] == 1.0  # the reference picks its own move
    for figures in report.values():
        assert figures["n"] == 4 and -1.0 <= figures["mean_value"] <= 1.0 and 0.0 <= figures["same_move"] <= 1.0


PHASE = ROOT / "docs" / "runs" / "value-phase-2026-12-05"


def test_the_phase_network_scores_what_its_results_and_the_docs_say():
    """The fine-tuned network re-scored on the kept held-out set gives its results file's error,
    below the network it started from, and docs/ai.md quotes it and the kept matches."""
    held = heldout.load(KEPT / "heldout.npz")
    run = json.loads((PHASE / "results.json").read_text(encoding="utf-8"))["runs"][-1]
    values = heldout.net_values(PHASE / "value.npz", held.states())
    mse = float(((values - held.label) ** 2).mean())
    assert mse == pytest.approx(run["heldout_mse"], abs=1e-4)
    before = heldout.net_values(KEPT / "value.npz", held.states())
    assert mse < float(((before - held.label) ** 2).mean())
    doc = (ROOT / "docs" / "ai.md").read_text(encoding="utf-8")
    assert f"| **{mse:.3f}** |" in doc
    rank = json.loads((PHASE / "rank.json").read_text(encoding="utf-8"))
    for name in ("docs/runs/value-phase-2026-12-05/value.npz, one ply", "the mean of 16 greedy playouts, one ply"):
        assert f"{rank[name]['mean_value']:.3f}".replace("-", "−") in doc
    for name in ("arena-phase-3702.json", "arena-imb0-3702.json", "arena-imb02-3702.json"):
        summary = json.loads((PHASE / name).read_text(encoding="utf-8"))
        pairing = summary["pairings"][0]
        assert summary["seed"] == 3702 and pairing["games"] == 200 and "games" not in summary
        assert f"{pairing['wins']}-{pairing['draws']}-{pairing['losses']}" in doc


PHASE_NET = str(ROOT / "docs" / "runs" / "value-phase-2026-12-05" / "value.npz")


def test_a_teacher_labels_with_its_networks_mix_not_the_playouts_alone():
    """``--teacher NET``: the labels and the games' moves come from the search with NET's value
    mixed into its playouts (the mix of the arena's ``evaluator=NET,mix=0.5,cprior=0``)."""
    import random

    vs = load_script()
    teacher = heldout.Teacher(PHASE_NET, mix=0.5, c=0.15)
    start = replay([])
    first_seed = random.Random(11).getrandbits(64)  # the game's first search draws this seed
    value, children = heldout.search(start, first_seed, 60, teacher)
    direct = kernel.C.mcts(
        start, first_seed, sims=60, c=0.15, widen=2.0, greedy=True, solver=True, proofs=True,
        net=evalnet.kernel_net(PHASE_NET), mix=0.5, cprior=0.0,
    )[3]  # fmt: skip
    assert children == direct
    plain_value, plain_children = heldout.search(start, first_seed, 60)
    assert children != plain_children  # the network's value steers the visits
    taught = vs._game(seed=11, sims=60, sample_plies=4, off_path=0.0, teacher_=teacher)
    assert taught["q"][0] == pytest.approx(value) and taught["q"][1] == pytest.approx(value)
    plain = vs._game(seed=11, sims=60, sample_plies=4, off_path=0.0)
    assert plain["q"][0] == pytest.approx(plain_value) and taught["q"] != plain["q"]


def test_a_folder_keeps_one_labeller(tmp_path, monkeypatch, capsys):
    """Shards made with one teacher and recipe are not continued with another (or with none)."""
    import shutil
    import sys

    vs = load_script()
    shutil.copy(KEPT / "heldout.npz", tmp_path / "heldout.npz")
    small = ["--shards", "1", "--games-per-shard", "1", "--sims", "8", "--sample-plies", "2", "--off-path", "0"]
    monkeypatch.setattr(sys, "argv", ["value_scale.py", "--out", str(tmp_path), *small, "--teacher", PHASE_NET])
    vs.main()
    said = json.loads((tmp_path / "labeller.json").read_text(encoding="utf-8"))
    assert said["teacher"] == {"evaluator": PHASE_NET, "mix": 0.5, "c": 0.15} and said["sims"] == 8
    assert said["games_per_shard"] == 1 and said["off_path"] == 0 and said["sample_plies"] == 2
    assert said["phase"] is None and said["siblings"] == 0
    assert (tmp_path / "shard-000.npz").exists()
    taught = ["--teacher", PHASE_NET]
    for other in (["--teacher", PHASE_NET, "--teacher-mix", "0.7"], [], [*taught, "--off-path", "0.3"]):
        monkeypatch.setattr(sys, "argv", ["value_scale.py", "--out", str(tmp_path), *small, "--shards", "2", *other])
        with pytest.raises(SystemExit, match="was made with"):
            vs.main()
    assert not (tmp_path / "shard-001.npz").exists()
    # a file from before the recipe was kept (teacher and sims only) goes on where those agree
    (tmp_path / "labeller.json").write_text(json.dumps({"teacher": said["teacher"], "sims": 8}))
    monkeypatch.setattr(sys, "argv", ["value_scale.py", "--out", str(tmp_path), *small, "--shards", "2", *taught])
    vs.main()
    assert (tmp_path / "shard-001.npz").exists()
    # shards with no labeller at all cannot be checked, and the run says so
    (tmp_path / "labeller.json").unlink()
    capsys.readouterr()
    vs.main()
    assert "no labeller.json: their settings cannot be checked" in capsys.readouterr().out
    assert not (tmp_path / "labeller.json").exists()  # nor does it pretend to know them


def test_training_takes_a_window_of_generations_folders(tmp_path, monkeypatch):
    """``--also DIR`` adds DIR's shards after ``--out``'s (expert iteration trains on the last few
    generations, each labelled in its own folder); with no shard anywhere it says so."""
    import shutil
    import sys

    vs = load_script()
    first, second, window = tmp_path / "g1", tmp_path / "g2", tmp_path / "window"
    for k, folder in enumerate((first, second, window)):
        folder.mkdir()
        if folder is not window:
            data = vs.make_shard(k, games=1, sims=20, sample_plies=3, off_path=0.5, jobs=1)
            np.savez_compressed(folder / "shard-000.npz", **data)
    shutil.copy(KEPT / "heldout.npz", window / "heldout.npz")
    both = sum(len(np.load(f / "shard-000.npz")["q"]) for f in (first, second))
    argv = ["value_scale.py", "--out", str(window), "--train", "--init", str(KEPT / "value.npz"), "--epochs", "1"]
    monkeypatch.setattr(sys, "argv", [*argv, "--sizes", "1", "--also", str(first), "--also", str(second)])
    vs.main()
    run = json.loads((window / "results.json").read_text(encoding="utf-8"))["runs"][0]
    assert run["shards"] == 2 and run["train"]["positions"] + run["train"]["held_out"] == both
    empty = tmp_path / "empty"
    empty.mkdir()
    shutil.copy(KEPT / "heldout.npz", empty / "heldout.npz")
    monkeypatch.setattr(sys, "argv", ["value_scale.py", "--out", str(empty), "--train", "--also", str(window)])
    with pytest.raises(SystemExit, match="no shards to train on"):
        vs.main()
