"""The review's accuracy calibrated along the ladder (issue 53 point 2).

Games of each ladder level against one fixed opponent, reviewed at the web review's budget
(``tests/fixtures/review/ladder.jsonl``, made by ``examples/accuracy_ladder.py``), give each level's
accuracies; :func:`fit` tries scales of the loss (the multiplier of a move's lost winning chance before
lichess's curve, :func:`jericho_game.ai.analysis.move_accuracy`) and :func:`choose` picks the one that
orders the levels' median accuracies with the widest margin (the smallest gap between neighbours on
the ladder at its largest), among those that put random play at :data:`RANDOM_MAX` or below and the
strongest level at :data:`TOP_MIN` or above.  :data:`jericho_game.ai.analysis.ACCURACY_SCALE` is its
answer on the kept games; a test checks that it still is."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from jericho_game.ai import analysis
from jericho_game.ai.analysis import PositionEval

__all__ = ["SCALES", "RANDOM_MAX", "TOP_MIN", "Fit", "side_accuracy", "kendall", "fit", "choose", "table"]

#: The scales :func:`fit` tries.
SCALES = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0)
#: Random play's median accuracy must be at most this ...
RANDOM_MAX = 50.0
#: ... and the strongest level's at least this.
TOP_MIN = 90.0


@dataclass(frozen=True)
class Fit:
    """One scale's figures: each level's median accuracy, whether they are strictly ordered along the
    ladder, the smallest gap between neighbours (negative when out of order), and Kendall's tau
    between the games' accuracies and their levels' ranks."""

    scale: float
    medians: dict[str, float]
    ordered: bool
    gap: float
    tau: float


def side_accuracy(row: dict[str, Any], scale: float | None = None) -> float:
    """The level's accuracy in a kept game (``row``: a line of the fixture), as the web review computes
    it: the moves up to the point the figures fixed the result, at ``scale`` (default the module's)."""
    evals = [
        PositionEval(i, south, turn, best, exact, 0, (), value, None, after)
        for i, (south, turn, exact, value, best, after) in enumerate(row["evals"])
    ]
    judged = analysis.judge(row["moves"], evals)
    moment = analysis.decisive(evals, len(row["moves"]))
    figure = analysis.accuracy(judged, evals, moment.ply if moment else None, scale)[row["side"]]
    if figure is None:
        raise ValueError(f"game {row['id']}: the level has no judged move")
    return figure


def kendall(pairs: list[tuple[float, float]]) -> float:
    """Kendall's tau-b of ``(x, y)`` pairs."""
    conc = disc = tx = ty = 0
    for i in range(len(pairs)):
        for j in range(i + 1, len(pairs)):
            dx, dy = pairs[i][0] - pairs[j][0], pairs[i][1] - pairs[j][1]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif (dx > 0) == (dy > 0):
                conc += 1
            else:
                disc += 1
    den = float((conc + disc + tx) * (conc + disc + ty)) ** 0.5
    return (conc - disc) / den if den else 0.0


def fit(rows: list[dict[str, Any]], ladder: list[str], scales: tuple[float, ...] = SCALES) -> list[Fit]:
    """Each scale's :class:`Fit` on ``rows`` (the fixture's games), ``ladder`` the levels weakest first."""
    out = []
    for scale in scales:
        figures = {level: [side_accuracy(r, scale) for r in rows if r["level"] == level] for level in ladder}
        if any(not f for f in figures.values()):
            raise ValueError(f"no games of {[level for level, f in figures.items() if not f]}")
        medians = {level: statistics.median(f) for level, f in figures.items()}
        gap = min(medians[b] - medians[a] for a, b in zip(ladder, ladder[1:], strict=False))
        tau = kendall([(float(rank), a) for rank, level in enumerate(ladder) for a in figures[level]])
        out.append(Fit(scale, medians, gap > 0, gap, tau))
    return out


def choose(fits: list[Fit], ladder: list[str]) -> Fit | None:
    """The fit with the widest ordering margin among those ordered, random play (the ladder's first)
    at most :data:`RANDOM_MAX` and its last at least :data:`TOP_MIN`; ``None`` when none is."""
    good = [f for f in fits if f.ordered and f.medians[ladder[0]] <= RANDOM_MAX and f.medians[ladder[-1]] >= TOP_MIN]
    return max(good, key=lambda f: (f.gap, f.tau), default=None)


def table(rows: list[dict[str, Any]], ladder: list[str]) -> str:
    """The calibration table as text: a line per scale, the games per level, the scale chosen."""
    fits = fit(rows, ladder)
    lines = ["scale  ordered  gap    tau    " + "  ".join(f"{level:>8}" for level in ladder)]
    for f in fits:
        cells = "  ".join(f"{f.medians[level]:8.1f}" for level in ladder)
        lines.append(f"{f.scale:5.2f}  {'yes' if f.ordered else 'no':7}  {f.gap:5.2f}  {f.tau:.3f}  {cells}")
    counts = "  ".join(f"{sum(r['level'] == level for r in rows):>8}" for level in ladder)
    lines.append("games                      " + counts)
    best = choose(fits, ladder)
    lines.append("chosen: " + ("none" if best is None else f"{best.scale:g}"))
    return "\n".join(lines)
