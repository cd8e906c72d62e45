"""The examples in examples/ run (short versions)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_example(name: str, *args: str) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_reinforce_example_trains_and_reports() -> None:
    out = run_example("train_reinforce.py", "--steps", "400", "--eval-games", "4", "--seed", "3")
    assert "before training: score" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("after ") and "steps" in last and "against random" in last
    steps = int(last.split()[1])
    assert steps >= 400


def test_openspiel_example_plays_games() -> None:
    out = run_example("openspiel_vs_expert.py", "--opponent", "random", "--games", "2", "--sims", "20")
    assert out.count("game ") == 2
    assert "OpenSpiel MCTS (sims=20) scored" in out


def test_transposition_count_example_counts_the_tree() -> None:
    out = run_example("count_transpositions.py", "--sims", "300", "--plies", "0,40")
    lines = out.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("after 0 plies: 300 nodes")
    for line in lines:
        nodes = int(line.split(": ")[1].split()[0])
        positions = int(line.split(", ")[1].split()[0])
        assert 0 < positions <= nodes <= 300  # a simulation that ends at a decided node adds none


def test_review_calibration_example_plays_fits_and_refits(tmp_path: Path) -> None:
    data = tmp_path / "calib.json"
    out = run_example("calibrate_review.py", "--games", "2", "--sims", "60", "--seed", "3", "--out", str(data))
    lines = out.strip().splitlines()
    count = int(lines[0].split()[0])
    assert count > 0 and lines[1].startswith("mean: a = ") and any(x.startswith("top: a = ") for x in lines)
    again = run_example("calibrate_review.py", "--data", str(data))
    assert again == out  # the fit is a function of the saved positions


def test_review_accuracy_example_reviews_and_sums_up(tmp_path: Path) -> None:
    out = run_example("review_accuracy.py", "--games", "1", "--sims", "60", "--nodes", "60", "--save", str(tmp_path))
    assert out.startswith("seed 100: north in ") and "south (random): accuracy min" in out
    assert len(list(tmp_path.glob("random-expert-100.json"))) == 1
