"""The review's accuracy orders the ladder (issue 53 point 2), on the kept games of
``tests/fixtures/review/ladder.jsonl``: each level of the ladder against ``hard``, reviewed at the web
review's budget (simulations, no time limit), made by ``examples/accuracy_ladder.py`` (docs/web.md,
"Game review").  The figures are recomputed here from the kept positions with the review's own code."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jericho_game.ai import analysis, calibration
from jericho_game.web.learn import review

FIXTURE = Path(__file__).parents[1] / "fixtures" / "review" / "ladder.jsonl"
LADDER = ["random", "easy", "medium", "hard", "strong", "expert", "master"]


@cache
def rows() -> list[dict[str, Any]]:
    """The kept games."""
    return [json.loads(x) for x in FIXTURE.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_the_kept_games_are_each_level_against_hard_at_the_reviews_budget() -> None:
    games = rows()
    assert len({r["id"] for r in games}) == len(games)
    assert {r["level"] for r in games} == set(LADDER) and {r["opponent"] for r in games} == {"hard"}
    assert {r["sims"] for r in games} == {review.DEFAULT_SIMS} and review.DEFAULT_SECONDS is None
    for level in LADDER:
        mine = [r for r in games if r["level"] == level]
        assert len(mine) >= 6 and {r["side"] for r in mine} == {"south", "north"}, level
    for r in games:
        assert len(r["evals"]) == len(r["moves"]) + 1


def test_the_median_accuracy_is_strictly_ordered_along_the_ladder() -> None:
    """With the review's own scale: random play far below (at most 50), ``master`` high (at least 90),
    and every level's median above the one below it."""
    medians = {}
    for level in LADDER:
        figures = sorted(calibration.side_accuracy(r) for r in rows() if r["level"] == level)
        medians[level] = (figures[(len(figures) - 1) // 2] + figures[len(figures) // 2]) / 2
    assert medians["random"] <= calibration.RANDOM_MAX and medians["master"] >= calibration.TOP_MIN, medians
    assert all(medians[a] < medians[b] for a, b in zip(LADDER, LADDER[1:], strict=False)), medians


def test_the_reviews_scale_is_the_fits_choice_and_a_wrong_one_breaks_the_order() -> None:
    fits = calibration.fit(rows(), LADDER)
    best = calibration.choose(fits, LADDER)
    assert best is not None and best.scale == analysis.ACCURACY_SCALE, [(f.scale, f.gap) for f in fits]
    # the check can fail: a scale that flatters random play, or one that leaves master under 90
    flat = next(f for f in fits if f.scale == 0.5)
    harsh = next(f for f in fits if f.scale == 3.0)
    assert flat.medians["random"] > calibration.RANDOM_MAX and harsh.medians["master"] < calibration.TOP_MIN
    assert calibration.choose([flat, harsh], LADDER) is None


def test_kendalls_tau_on_small_cases() -> None:
    assert calibration.kendall([(0, 1), (1, 2), (2, 3)]) == 1.0
    assert calibration.kendall([(0, 3), (1, 2), (2, 1)]) == -1.0
    assert abs(calibration.kendall([(0, 1), (1, 3), (2, 2)]) - 1 / 3) < 1e-12
