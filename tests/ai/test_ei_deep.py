"""Expert iteration with deeper labels, two generations (issue 32 point 4; docs/ai.md "Expert
iteration with deeper labels"): the figures the docs and the folder's README quote are the kept
gates' and training runs' own, and the verdict ("the same strength") is the one their scores give."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import flat_text, kept_match, match_score

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "docs/runs/ei-deep-2026-12-06"
PHASE = "docs/runs/value-phase-2026-12-05/value.npz"
#: Each generation: its teacher, and where the README's commands made its network.
GENERATIONS = {
    "d1k": (PHASE, "/work/runs/ei1000/best-d1k.npz"),
    "d1k2": ("/work/runs/ei1000/best-d1k.npz", "/work/runs/ei-g2train/best-d1k2.npz"),
}
KEPT = kept_match(ROOT / "docs/runs/mix-tune-2026-12-05/arena-m065-4004.json")  # the network before


def _spec(net: str) -> str:
    return f"mcts:sims=1000000,c=0.15,greedy=1,solver=1,endgame=1,evaluator={net},mix=0.65,cprior=0"


def test_each_gate_is_its_kept_match_and_the_docs_say_so():
    doc, readme = flat_text(ROOT / "docs/ai.md"), flat_text(RUNS / "README.md")
    assert KEPT["a"] == _spec(PHASE)
    kept_score = match_score(KEPT["wins"], KEPT["draws"], KEPT["losses"])[0]
    for tag, (_, net) in GENERATIONS.items():
        gate = kept_match(RUNS / f"arena-{tag}-4004.json")  # 200 games, finished, equal time, its seed
        assert gate["a"] == _spec(net) and gate["b"] == "expert-v2", tag
        assert 0.7 * 0.3 < gate["mean_time_a"] < 0.3, tag  # the arena's --time 0.3
        score = match_score(gate["wins"], gate["draws"], gate["losses"])[0]
        tally = f"{gate['wins']}-{gate['draws']}-{gate['losses']}"
        assert f"| 4004 | {tally} | {score:.1%} |" in doc, tag
        assert f"Gate: {tally} ({score:.1%})" in readme, tag
        # "the same strength": within a few games of the kept network on the same openings
        assert abs(score - kept_score) < 0.03, tag
    assert "**The same strength, three times**" in doc and "**The same strength, three times**" in readme


def test_each_generation_is_what_its_files_say():
    doc, readme = flat_text(ROOT / "docs/ai.md"), flat_text(RUNS / "README.md")
    made = 0
    for tag, (teacher, _) in GENERATIONS.items():
        said = json.loads((RUNS / f"labeller-{tag}.json").read_text(encoding="utf-8"))
        assert said["teacher"] == {"evaluator": teacher, "mix": 0.65, "c": 0.15} and said["sims"] == 1000, tag
        run = json.loads((RUNS / f"results-{tag}.json").read_text(encoding="utf-8"))["runs"][-1]
        trained = int(run["train"]["positions"]) // 2  # each position kept mirrored: two rows
        total = trained + int(run["train"]["held_out"]) // 2  # all the window's positions
        assert f"fine-tuned on {trained} positions" in run["label"], tag
        assert f"| {total:,} | {run['heldout_mse']:.3f} | 4004 |" in doc, tag
        assert f"{run['heldout_mse']:.3f}" in readme and f"{run['train']['value_mse']:.3f}" in readme, tag
        assert f"{trained:,}" in readme, tag
        made = total
    first = json.loads((RUNS / "results-d1k.json").read_text(encoding="utf-8"))["runs"][-1]
    first_made = int(first["train"]["positions"]) // 2 + int(first["train"]["held_out"]) // 2
    assert f"Generation 1: {first_made:,} positions" in readme
    assert f"{made - first_made:,} more positions labelled by generation 1" in readme


def test_the_folder_keeps_no_network_and_no_game_records():
    assert sorted(p.name for p in RUNS.iterdir()) == [
        "README.md",
        "arena-d1k-4004.json",
        "arena-d1k2-4004.json",
        "labeller-d1k.json",
        "labeller-d1k2.json",
        "results-d1k.json",
        "results-d1k2.json",
        "train-d1k.log",
        "train-d1k2.log",
    ]
