"""Self-play datasets (issue 13 point 8: the script and a small sample; the full set takes hours)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from jericho_game import Game
from jericho_game.envs.dataset import COLUMNS, load_dataset, observations
from jericho_game.envs.encoding import default_encoding
from jericho_game.envs.planar import default_planar
from jericho_game.record import read_records

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "data" / "sample"
ENC = default_encoding()


def _check(path: Path) -> dict[str, np.ndarray]:
    data = load_dataset(path)
    assert set(COLUMNS) <= set(data)
    records = read_records((path / "games.jgn").read_text(encoding="utf-8"))
    assert len(records) == len(data["game_outcome"]) == len(data["game_seed"])
    row = 0
    for g, record in enumerate(records):
        assert record.tags["Round"] == str(g) and record.tags["Seed"] == str(data["game_seed"][g])
        assert record.ended_by_rules
        outcome = {"south": 0, "north": 1, "draw": 2}[str(record.game.outcome())]
        assert data["game_outcome"][g] == outcome
        game = Game()
        for ply, move in enumerate(record.moves):
            assert (data["game"][row], data["ply"][row], data["turn"][row]) == (g, ply, game.state.turn)
            assert data["action"][row] == ENC.move_to_action(move)
            assert np.array_equal(data["mask"][row], ENC.legal_mask(game))
            lo, hi = data["visit_offsets"][row], data["visit_offsets"][row + 1]
            acts, counts = data["visit_actions"][lo:hi], data["visit_counts"][lo:hi]
            assert all(data["mask"][row][a] for a in acts)  # only legal moves were searched
            if len(game.legal_moves()) > 1:
                assert counts.sum() > 0 and data["action"][row] in acts
                assert 0.0 <= data["search_value"][row] <= 1.0
            else:
                assert np.isnan(data["search_value"][row])
            expected = 0 if outcome == 2 else (1 if outcome == game.state.turn else -1)
            assert data["value"][row] == expected
            game.play(move)
            row += 1
    assert row == len(data["game"]) == len(data["visit_offsets"]) - 1
    assert len(data["game_seconds"]) == len(data["game_cpu_seconds"]) == len(records)
    return data


def test_the_script_makes_a_consistent_dataset(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    script = ROOT / "examples" / "make_dataset.py"
    done = subprocess.run(
        [sys.executable, str(script), "--out", str(out), "--games", "3", "--sims", "12", "--seed", "7", "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    data = _check(out)
    # After the opening, the most visited move is played.
    late = np.flatnonzero(data["ply"] >= 6)
    for row in late[:20]:
        lo, hi = data["visit_offsets"][row], data["visit_offsets"][row + 1]
        if hi - lo > 1:
            assert (
                data["visit_counts"][lo:hi].max()
                == data["visit_counts"][lo:hi][list(data["visit_actions"][lo:hi]).index(data["action"][row])]
            )
    sheet = (out / "datasheet.md").read_text()
    assert "mcts:sims=12,playout=guided" in sheet and "SeedSequence(7)" in sheet and "numpy" in sheet
    # The same seed makes the same games.
    again = tmp_path / "again"
    subprocess.run(
        [sys.executable, str(script), "--out", str(again), "--games", "3", "--sims", "12", "--seed", "7"],
        capture_output=True,
        timeout=300,
        check=True,
    )
    assert (again / "games.jgn").read_text() == (out / "games.jgn").read_text()


def test_shards_resume_and_a_partial_set_says_so(tmp_path: Path) -> None:
    from jericho_game.envs.dataset import make_dataset

    out = tmp_path / "ds"
    whole = make_dataset(out, games=5, sims=10, seed=3, shard=2)
    assert whole["games"] == 5 and sorted(p.name for p in (out / "shards").glob("*.npz")) == [
        "shard-00000.npz",
        "shard-00001.npz",
        "shard-00002.npz",
    ]
    first = (out / "games.jgn").read_text()
    # A lost shard is played again, the same games; the others are kept.
    (out / "shards" / "shard-00001.npz").unlink()
    make_dataset(out, games=5, sims=10, seed=3, shard=2)
    assert (out / "games.jgn").read_text() == first
    _check(out)
    # Only the finished shards: a partial set, and the datasheet says so.
    (out / "shards" / "shard-00002.npz").unlink()
    part = make_dataset(out, games=5, sims=10, seed=3, shard=2, merge_only=True)
    assert part["games"] == 4 and part["games_planned"] == 5
    assert "PARTIAL" in (out / "datasheet.md").read_text()
    _check(out)


def test_defended_playouts_are_recorded_and_a_resume_must_match(tmp_path: Path) -> None:
    import pytest

    from jericho_game import kernel
    from jericho_game.envs.dataset import make_dataset

    out = tmp_path / "ds"
    if kernel.C is None:
        with pytest.raises(ValueError, match="C kernel"):
            make_dataset(out, games=2, sims=10, seed=5, k=10, defend=True)
        return
    facts = make_dataset(out, games=2, sims=10, seed=5, shard=1, k=10, defend=True)
    spec = "mcts:sims=10,playout=guided,k=10,defend=1"
    assert facts["player"] == spec and facts["k"] == 10 and facts["defend"] is True
    records = read_records((out / "games.jgn").read_text(encoding="utf-8"))
    assert {r.tags["Player"] for r in records} == {spec}
    sheet = (out / "datasheet.md").read_text()
    assert "--k 10 --defend" in sheet and "defended" in sheet
    _check(out)
    # Resuming with another search would mix two players under one datasheet: refused, and
    # the finished shards stay as they were.
    before = sorted((p.name, p.stat().st_size) for p in (out / "shards").iterdir())
    with pytest.raises(ValueError, match=r"k 10 -> 3, defend True -> False"):
        make_dataset(out, games=4, sims=10, seed=5, shard=1)
    assert sorted((p.name, p.stat().st_size) for p in (out / "shards").iterdir()) == before
    # The same search with more games extends the set: the first games are unchanged.
    more = make_dataset(out, games=3, sims=10, seed=5, shard=1, k=10, defend=True)
    assert more["games"] == 3
    again = read_records((out / "games.jgn").read_text(encoding="utf-8"))
    assert [r.moves for r in again[:2]] == [r.moves for r in records]


def test_the_shipped_sample_is_consistent_and_rebuilds_observations() -> None:
    data = _check(SAMPLE)
    assert len(data["game_outcome"]) >= 20
    obs = observations(SAMPLE)
    assert obs.shape == (len(data["game"]), ENC.observation_size)
    planes = observations(SAMPLE, observation="planar")
    assert np.array_equal(default_planar().to_flat(planes), obs)
    # The sample is the first games of the full set (same seed): its README says how both were made.
    readme = (SAMPLE / "README.md").read_text()
    facts = json.loads((SAMPLE / "facts.json").read_text())
    full = f"--games 10000 --sims {facts['sims']} --k {facts['k']} --defend --seed {facts['seed']}"
    assert full in readme and facts["defend"] is True
    seeds = np.random.SeedSequence(facts["seed"]).generate_state(10_000, dtype=np.uint32)
    assert data["game_seed"].tolist() == seeds[: len(data["game_seed"])].tolist()


def test_the_scripts_defaults_and_command_lines_are_the_documented_ones() -> None:
    """``--help`` once said ``--sims 800`` (default 1000) while the docs and datasheet said 400."""
    import re

    from jericho_game.envs.dataset import DEFAULT_SIMS

    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "make_dataset.py"), "--help"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    helptext = " ".join(done.stdout.split())  # argparse wraps the options' help
    assert f"MCTS simulations per move (default {DEFAULT_SIMS})" in helptext
    datasheet = (SAMPLE / "datasheet.md").read_text(encoding="utf-8")
    facts = json.loads((SAMPLE / "facts.json").read_text(encoding="utf-8"))
    documented = {int(s) for s in re.findall(r"--sims (\d+)", datasheet)} | {facts["sims"]}
    assert documented == {DEFAULT_SIMS}
    # Every command line the script prints is one the documents give, word for word.
    docs = (ROOT / "docs" / "interop.md").read_text(encoding="utf-8") + (SAMPLE / "README.md").read_text(
        encoding="utf-8"
    )
    docs = " ".join(docs.split())
    lines = [line for line in done.stdout.splitlines() if line.startswith("python examples/make_dataset.py")]
    assert len(lines) == 2
    for line in lines:
        assert " ".join(line.split("#")[0].split()) in docs, line
