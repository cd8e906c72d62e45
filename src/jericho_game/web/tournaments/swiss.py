"""Swiss pairing: the core of FIDE's Dutch system (C.04.3), written here, and the tie-breaks.

No maintained Swiss pairing library for Python fits (the reference engines, bbPairings and
JaVaFo, are C++ and Java programs; the Python packages on PyPI are unmaintained applications),
so this module implements the Dutch system's core rules:

1. players are ranked by score, then rating, then account (the pairing numbers);
2. with an odd number of players the lowest-ranked player who has not had a bye gets it (a win:
   1 point, no colour);
3. score groups are paired from the top: within a group (with any players who floated down from
   the group above) the top half meets the bottom half in order (1 v n/2+1, 2 v n/2+2, ...),
   changing the order of the bottom half (then exchanging between the halves, then floating the
   lowest players down to the next group) only when a pairing would repeat;
4. no two players meet twice; a search with backtracking finds a pairing whenever one exists;
5. colours: the player whose colour difference (Norths minus Souths) is larger gets South; on a
   tie, the one who had North in the last round where their colours differed; else the higher
   ranked gets the other side than their last; in the first round the top board's higher ranked
   gets South, and the boards alternate.

Simplified against the full rules: no absolute colour criteria (a player may get one colour three
times in a row when that avoids a repeat), floats are chosen by the backtracking order above rather
than by the Dutch system's full optimisation of float counts (C.04.3 A.4, B.5-B.6), and the bye goes
to the lowest-ranked eligible player without checking that the rest can still be paired first
(the search then tries the next one).

Tie-breaks, in order: Buchholz (the sum of the opponents' scores), then Sonneborn-Berger (the
scores of the opponents beaten, plus half those of the opponents drawn).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Entrant", "Pairing", "pair_round", "tie_breaks"]


@dataclass
class Entrant:
    """A player of a Swiss tournament as the pairing sees them: ``colours`` is the list of sides
    played (``"S"``, ``"N"``, or ``"-"`` for a bye), ``opponents`` the accounts met."""

    account: int
    score: float
    rating: float
    opponents: set[int] = field(default_factory=set)
    colours: list[str] = field(default_factory=list)
    had_bye: bool = False

    def difference(self) -> int:
        return self.colours.count("N") - self.colours.count("S")


@dataclass(frozen=True)
class Pairing:
    """A round's pairing: ``games`` (south, north) and the ``bye`` (None: none)."""

    games: list[tuple[int, int]]
    bye: int | None


def _ranked(players: Sequence[Entrant]) -> list[Entrant]:
    return sorted(players, key=lambda p: (-p.score, -p.rating, p.account))


def _candidates(p: Entrant, unpaired: list[Entrant]) -> list[Entrant]:
    """Opponents for ``p`` (the highest unpaired player) in the Dutch order: first the bottom half
    of p's score group from p's mirror onwards, then the rest of the group, then lower groups."""
    group = [q for q in unpaired if q.score == p.score]
    others = [q for q in unpaired if q.score != p.score and q is not p]
    half = len(group) // 2
    i = group.index(p)
    bottom = group[half:] if i < half else []
    mirror = i + half if i < half else len(group)
    ordered = [q for q in bottom if group.index(q) >= mirror] + [q for q in bottom if group.index(q) < mirror]
    ordered += [q for q in group if q not in ordered and q is not p]
    return [q for q in ordered + others if q.account not in p.opponents]


def _search(unpaired: list[Entrant], budget: list[int]) -> list[tuple[Entrant, Entrant]] | None:
    if not unpaired:
        return []
    budget[0] -= 1
    if budget[0] < 0:
        return None
    p = unpaired[0]
    for q in _candidates(p, unpaired):
        rest = [x for x in unpaired if x is not p and x is not q]
        found = _search(rest, budget)
        if found is not None:
            return [(p, q), *found]
    return None


def _colours(a: Entrant, b: Entrant, board: int) -> tuple[int, int]:
    """``(south, north)`` of a pair on ``board`` (0, 1, ...), ``a`` the higher ranked."""
    da, db = a.difference(), b.difference()
    if da != db:
        return (a.account, b.account) if da > db else (b.account, a.account)
    mine, theirs = [c for c in a.colours if c != "-"], [c for c in b.colours if c != "-"]
    for ca, cb in zip(reversed(mine), reversed(theirs), strict=False):
        if ca != cb:  # the one who had North then gets South now
            return (a.account, b.account) if ca == "N" else (b.account, a.account)
    played = [c for c in a.colours if c != "-"]
    if played:  # the same wishes: the higher ranked gets theirs (the other side than last time)
        return (a.account, b.account) if played[-1] == "N" else (b.account, a.account)
    return (a.account, b.account) if board % 2 == 0 else (b.account, a.account)


def pair_round(players: Sequence[Entrant], round_no: int) -> Pairing:
    """The pairing of round ``round_no`` (1, 2, ...); :class:`ValueError` when no pairing without a
    repeat exists (the tournament then ends early)."""
    ranked = _ranked(players)
    byes: list[Entrant | None] = [None]
    if len(ranked) % 2:
        byes = [p for p in reversed(ranked) if not p.had_bye] or list(reversed(ranked))
    for bye in byes:
        rest = [p for p in ranked if p is not bye]
        found = _search(rest, [20000])
        if found is not None:
            games = [_colours(a, b, board) for board, (a, b) in enumerate(found)]
            return Pairing(games, bye.account if bye is not None else None)
    raise ValueError("no pairing without a repeated game exists")


def tie_breaks(scores: dict[int, float], games: Sequence[tuple[int, int, float]]) -> dict[int, tuple[float, float]]:
    """``(Buchholz, Sonneborn-Berger)`` per player from the games ``(player, opponent, points)``
    (each game listed once per player: 1 a win, 0.5 a draw, 0 a loss; a bye has no opponent)."""
    out: dict[int, tuple[float, float]] = {}
    for player in scores:
        buchholz = sum(scores.get(o, 0.0) for p, o, _ in games if p == player)
        sb = sum(scores.get(o, 0.0) * pts for p, o, pts in games if p == player)
        out[player] = (buchholz, sb)
    return out
