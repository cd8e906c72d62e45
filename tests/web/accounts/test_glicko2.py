"""Glicko-2 against the worked example of Glickman's paper, and its basic properties."""

from __future__ import annotations

import pytest

from jericho_game.web.accounts.glicko2 import Rating, update


def test_the_papers_worked_example() -> None:
    # "Example of the Glicko-2 system", section "Example calculation": tau = 0.5
    player = Rating(1500, 200, 0.06)
    games = [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)]
    after = update(player, games, tau=0.5)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)


def test_winning_raises_losing_lowers_and_a_draw_between_equals_changes_nothing() -> None:
    a, b = Rating(1500, 350, 0.06), Rating(1500, 350, 0.06)
    win, loss = update(a, [(b, 1.0)]), update(b, [(a, 0.0)])
    assert win.rating > 1500 > loss.rating
    assert win.rating - 1500 == pytest.approx(1500 - loss.rating)
    assert win.rd < 350 and loss.rd < 350  # a game makes the rating surer
    draw = update(a, [(b, 0.5)])
    assert draw.rating == pytest.approx(1500.0)


def test_an_idle_period_only_widens_the_deviation() -> None:
    after = update(Rating(1600, 100, 0.06), [])
    assert after.rating == 1600 and after.rd > 100 and after.volatility == 0.06


def test_a_score_that_is_not_a_result_is_refused() -> None:
    with pytest.raises(ValueError, match="score"):
        update(Rating(), [(Rating(), 2.0)])
