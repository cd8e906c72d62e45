"""The value-playout mix's settings at 0.3 s a move and one step of expert iteration (issue 32
points 3 and 4; docs/ai.md "The mix's settings at 0.3 s, and one step of expert iteration"): the
figures the docs and the folder's README quote are the kept matches' and files' own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import flat_text, kept_match, match_score

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "docs/runs/mix-tune-2026-12-05"
PHASE = "docs/runs/value-phase-2026-12-05/value.npz"
TAIL = "greedy=1,solver=1,endgame=1,evaluator={net},mix={mix},cprior=0"


def _expected(setting: str) -> tuple[str, float]:
    """The spec a kept match's file name stands for, and its time a move."""
    if setting == "ei1":  # the fine-tuned network, where the README's commands made it
        return "mcts:sims=1000000,c=0.15," + TAIL.format(net="/work/runs/ei/best-ei1.npz", mix=0.5), 0.1
    c = int(setting[1:]) / 100 if setting[0] == "c" else 0.15
    mix = int(setting[1:]) / 100 if setting[0] == "m" else 0.5
    extra = ",net_pieces=16" if setting == "np16" else ""
    return f"mcts:sims=1000000,c={c:g}," + TAIL.format(net=PHASE, mix=f"{mix:g}") + extra, 0.3


def test_each_setting_is_its_kept_match_and_the_docs_say_so():
    doc, readme = flat_text(ROOT / "docs/ai.md", bold=False), flat_text(RUNS / "README.md", bold=False)
    names = sorted(p.stem.removeprefix("arena-") for p in RUNS.glob("arena-*.json"))
    assert {"c010-4004", "c020-4004", "m065-4004", "m080-4004", "np16-4004", "ei1-4002", "ei1-4003"} <= set(names)
    for name in names:
        pairing = kept_match(RUNS / f"arena-{name}.json")  # 200 games, finished, equal time, its seed
        spec, seconds = _expected(name.split("-")[0])
        assert pairing["a"] == spec and pairing["b"] == "expert-v2", name
        assert 0.7 * seconds < pairing["mean_time_a"] < seconds, name  # the arena's --time, as the tables say
        wins, draws, losses = pairing["wins"], pairing["draws"], pairing["losses"]
        score = match_score(wins, draws, losses)[0]
        tally = f"{wins}-{draws}-{losses}"
        assert f"{tally} ({score:.1%})" in readme, name
        assert f"| {name.rsplit('-', 1)[1]} | {tally} | {score:.1%} |" in doc, name


def test_the_expert_iteration_step_is_what_its_files_say():
    doc = flat_text(ROOT / "docs/ai.md", bold=False)
    said = json.loads((RUNS / "labeller-ei1.json").read_text(encoding="utf-8"))
    assert said == {"teacher": {"evaluator": PHASE, "mix": 0.5, "c": 0.15}, "sims": 200}
    run = json.loads((RUNS / "results-ei1.json").read_text(encoding="utf-8"))["runs"][-1]
    trained = int(run["train"]["positions"]) // 2  # each position kept mirrored: two rows
    made = trained + int(run["train"]["held_out"]) // 2
    assert f"{made:,} positions" in doc and f"fine-tuned on {trained:,} of them" in doc
    assert f"{trained} positions" in run["label"] and f"error is {run['train']['value_mse']:.3f}" in doc
    assert f"rose from 0.127 to {run['heldout_mse']:.3f}" in doc
    total = [0, 0, 0]
    for seed in (4002, 4003):
        pairing = kept_match(RUNS / f"arena-ei1-{seed}.json")
        total = [t + pairing[k] for t, k in zip(total, ("wins", "draws", "losses"), strict=True)]
    score = match_score(*total)[0]
    assert f"{total[0]}-{total[1]}-{total[2]} over the 400 games, {score:.1%}" in doc
    assert score == pytest.approx(0.645, abs=0.03)  # "the same strength" as the kept network's 64.5%
