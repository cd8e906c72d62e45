"""The Glicko-2 rating system, as published by Mark Glickman ("Example of the Glicko-2 system",
http://www.glicko.net/glicko/glicko2.pdf, steps 1 to 8), for the web app's rated games.

A rating is three numbers: ``rating`` (r, on the familiar 1500 scale), ``rd`` (the rating
deviation: how unsure the rating is) and ``volatility`` (sigma: how erratic the player's results
are).  :func:`update` takes a player's rating and the games of one *rating period* (opponent's
rating, score 1 / 0.5 / 0) and returns the rating after the period.  The web app makes each rated
game its own rating period for both players, as lichess does.

Pure arithmetic, no I/O: tested against the paper's worked example (tests/web/accounts/test_glicko2.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Rating", "update", "DEFAULT_TAU", "SCALE"]

SCALE = 173.7178  # the paper's factor between the Glicko scale and the Glicko-2 scale
DEFAULT_TAU = 0.5  # the system constant: how much the volatility may change (the paper's example uses 0.5)
_EPSILON = 0.000001  # convergence tolerance of step 5 (the paper's value)


@dataclass(frozen=True)
class Rating:
    """A Glicko-2 rating on the Glicko scale: rating (r), rating deviation (RD) and volatility (sigma)."""

    rating: float = 1500.0
    rd: float = 350.0
    volatility: float = 0.06


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _e(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def update(player: Rating, games: Sequence[tuple[Rating, float]], tau: float = DEFAULT_TAU) -> Rating:
    """The player's rating after one rating period in which they played ``games``.

    ``games``: (opponent's rating before the period, score: 1 win, 0.5 draw, 0 loss).  With no
    games only the deviation grows (step 6 of the paper), so an idle player's rating gets less sure.
    """
    # Step 2: to the Glicko-2 scale.
    mu = (player.rating - 1500.0) / SCALE
    phi = player.rd / SCALE
    sigma = player.volatility
    if not games:
        return Rating(player.rating, math.sqrt(phi * phi + sigma * sigma) * SCALE, sigma)
    for _, score in games:
        if score not in (0, 0.5, 1):
            raise ValueError(f"a game's score must be 1, 0.5 or 0, not {score!r}")
    opp = [((o.rating - 1500.0) / SCALE, o.rd / SCALE, float(s)) for o, s in games]
    # Step 3: the estimated variance of the rating from the game outcomes alone.
    v = 1.0 / sum(_g(pj) ** 2 * _e(mu, mj, pj) * (1.0 - _e(mu, mj, pj)) for mj, pj, _ in opp)
    # Step 4: the estimated improvement.
    delta = v * sum(_g(pj) * (s - _e(mu, mj, pj)) for mj, pj, s in opp)
    # Step 5: the new volatility, by the Illinois algorithm (the paper's iteration).
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > _EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a = f_a / 2.0
        big_b, f_b = big_c, f_c
    new_sigma = math.exp(big_a / 2.0)
    # Step 6: the pre-period deviation.
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)
    # Step 7: the new deviation and rating.
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * sum(_g(pj) * (s - _e(mu, mj, pj)) for mj, pj, s in opp)
    # Step 8: back to the Glicko scale.
    return Rating(SCALE * new_mu + 1500.0, SCALE * new_phi, new_sigma)
