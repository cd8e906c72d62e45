"""``examples/tune_search.py``, the grid of exploration constants: a point is kept only when its
match was played whole, so a stopped run resumes at the point it stopped in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jericho_game import kernel
from tests.helpers import load_example

pytestmark = pytest.mark.skipif(kernel.C is None, reason="the grid's players are the C search")


def test_a_point_stopped_part_way_is_not_kept_and_a_resume_plays_it(tmp_path: Path, monkeypatch) -> None:
    tune = load_example("tune_search")
    argv = ["--out", str(tmp_path), "--games", "2", "--nodes", "20", "--c", "0.5", "--jobs", "1", "--seed", "7"]
    whole = tune.run_arena
    # Ctrl-C or kill during the point's match: the arena returns its finished games, interrupted
    monkeypatch.setattr(tune, "run_arena", lambda *a, **k: {**whole(*a, **k), "interrupted": True})
    assert tune.main(argv) == 130
    assert not list(tmp_path.glob("points/*.json"))  # a few games are not the point's 200
    monkeypatch.setattr(tune, "run_arena", whole)
    assert tune.main(argv) == 0
    (point,) = tmp_path.glob("points/*.json")
    kept = json.loads(point.read_text())
    assert kept["c"] == 0.5 and kept["games"] == 2 == kept["wins"] + kept["draws"] + kept["losses"]
