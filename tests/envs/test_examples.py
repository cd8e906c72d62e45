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
