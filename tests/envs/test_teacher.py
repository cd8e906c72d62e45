"""Teacher data (jericho_game.envs.teacher): the strong search's positions in the flat observation,
labelled by its visits, its value and the game's result; shards that resume and refuse other settings.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from jericho_game import kernel
from jericho_game.ai import heldout
from jericho_game.envs.encoding import default_encoding
from jericho_game.envs.teacher import load_teacher_data, make_teacher_data, search_game, teacher_game

pytestmark = pytest.mark.skipif(kernel.C is None, reason="teacher data is made with the C search")


def test_a_game_is_labelled_by_the_search_and_its_result() -> None:
    enc = default_encoding()
    rec = teacher_game(5, sims=16, sample_plies=4, off_path=0.0)
    start = kernel.new_state(enc.tables, "python")
    assert np.array_equal(rec["obs"][0], enc.observe(start).astype(bool))
    # The first label is the search's own, for the same seed the game drew.
    import random

    value, children = heldout.search(kernel.new_state(enc.tables, "c"), random.Random(5).getrandbits(64), 16)
    assert rec["value"][0] == pytest.approx(value)
    visits = np.zeros(651)
    for code, n, _w, _p in children:
        visits[code] = n
    np.testing.assert_allclose(rec["policy"][0], visits / visits.sum(), atol=1e-3)
    legal = set(start.legal_codes())
    assert set(np.flatnonzero(rec["policy"][0])) <= legal
    for pol, v in zip(rec["policy"], rec["value"], strict=True):
        assert float(np.sum(pol, dtype=np.float64)) == pytest.approx(1.0, abs=2e-3) and -1.0 <= v <= 1.0
    results = rec["result"]
    assert all(r in (-1.0, 0.0, 1.0) for r in results) and not any(rec["off"])
    assert results[0] != 0.0 or all(r == 0.0 for r in results)
    # Each side to move owns its results: the observation's "turn" flags say who moved.
    north = enc.segments["turn"][0] + 1
    sides = [bool(o[north]) for o in rec["obs"]]
    for i in range(1, len(results)):
        if results[i] != 0.0:
            assert (results[i] == results[0]) == (sides[i] == sides[0])


def test_positions_off_the_path_have_no_result() -> None:
    rec = teacher_game(6, sims=8, sample_plies=2, off_path=1.0)
    off = np.array(rec["off"])
    assert off.any() and (~off).any()
    for is_off, r in zip(off, rec["result"], strict=True):
        assert math.isnan(r) == bool(is_off)


def test_a_phase_keeps_only_its_positions_and_the_same_game() -> None:
    """``phase=(lo, hi)``: only positions with lo..hi pieces left come out (their off-path
    siblings one move further); the moves outside it come from the cheaper search."""

    def left(state: object) -> int:
        return sum(bin(r).count("1") for r in state.reserve)  # type: ignore[attr-defined]

    seen = []
    for state, value, children, off in search_game(9, 24, sample_plies=4, off_path=0.5, phase=(10, 30), cheap_sims=8):
        n = left(state)
        assert (10 <= n <= 30) if not off else (9 <= n <= 30)
        assert -1.0 <= value <= 1.0 and children
        seen.append((off, n))
    on = [n for off, n in seen if not off]
    assert on and max(on) <= 30 and min(on) >= 10 and any(off for off, _ in seen)
    # the whole game without a phase goes through the same numbers of pieces and more
    everything = [left(s) for s, _v, _c, off in search_game(9, 24, sample_plies=4, off_path=0.5) if not off]
    assert max(everything) > 30


def test_shards_resume_and_refuse_other_settings(tmp_path: Path) -> None:
    out = tmp_path / "teacher"
    paths = make_teacher_data(out, 3, sims=8, seed=2, shard_games=2, off_path=0.5)
    assert [p.name for p in paths] == ["shard-000.npz", "shard-001.npz"]
    first = load_teacher_data(paths)
    assert first["obs"].shape == (len(first["value"]), 1239) and first["obs"].dtype == np.bool_
    assert first["policy"].shape == (len(first["value"]), 651)
    paths[1].unlink()  # as if killed before the last shard
    again = load_teacher_data(make_teacher_data(out, 3, sims=8, seed=2, shard_games=2, off_path=0.5))
    for k in first:
        np.testing.assert_array_equal(first[k], again[k])  # seeded: the same games again
    with pytest.raises(ValueError, match="sims: stored 8, given 9"):
        make_teacher_data(out, 3, sims=9, seed=2, shard_games=2, off_path=0.5)
    with pytest.raises(ValueError, match="off_path"):
        make_teacher_data(tmp_path / "x", 3, sims=8, off_path=1.5)
