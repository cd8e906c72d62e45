"""Swiss pairing: FIDE's Dutch system (C.04.3) as a maximum-weight matching, and the tie-breaks.

A round's pairing is a maximum-weight perfect matching of the players (a graph whose edges are the
pairs that may meet), found by Edmonds' blossom algorithm: networkx's ``max_weight_matching`` with
``maxcardinality=True``, the well-kept implementation for Python.  Encoding the Dutch system's
criteria as edge weights is how the reference Swiss programs work too (bbpPairings and JaVaFo pair
by weighted matching): the matching's size says whether a pairing exists at all, and its weight
chooses among the pairings the one the rules prefer.  A search with backtracking (this module's
first way) could only try orders until a budget ran out, and then could not tell "none exists"
from "not found yet": 200 players who all drew were left unpaired at round 9.

1. Players are ranked by score, then rating, then account (the pairing numbers).
2. Two players who have met have no edge: no pair meets twice.  The round is unpairable (a
   :class:`ValueError`) only when no perfect matching of the remaining players exists, the bye
   included.
3. With an odd number of players a "bye" node joins the graph, joined to every player who has not
   had a bye (to everyone when all have): it goes to the lowest-ranked player it can (a win: 1
   point, no colour).
4. Each edge's weight is a list of costs compared in order (each one outweighs every total of the
   ones after it: the weights are exact integers), lowest first:

   a. a block: one of the two blocked the other (they meet only when no other pairing exists);
   b. both players need the same colour absolutely (a colour difference of 2, or the same colour
      in their last two games);
   c. the score difference, squared (pairing within score groups, floats as few and as small as
      possible);
   d. the Dutch order within a score group: the top half meets the bottom half in order (1 v
      n/2+1, 2 v n/2+2...), a change of the bottom half costing by how far it moves a player, an
      exchange between the halves costing more than any change of the bottom half; a float
      downward prefers the lowest of the group above and the highest of the group below;
   e. both players would like the same colour.

5. Colours: the player whose colour difference (Norths minus Souths) is larger gets South; on a
   tie, the one who had North in the last round where their colours differed; else the higher
   ranked gets the other side than their last; in the first round the top board's higher ranked
   gets South, and the boards alternate.

Only the candidates are weighed: each player's 12 cheapest opponents by these weights; when those
cannot pair everyone, three times as many, then every pair not yet played (so "no pairing" is said
only of the whole graph).  Simplified against the full rules: the float counts of earlier rounds
(C.04.3 A.4, B.5-B.6) are not weighed, and the last round's exception for absolute colours is not
made.

Tie-breaks, in order: Buchholz (the sum of the opponents' scores), then Sonneborn-Berger (the
scores of the opponents beaten, plus half those of the opponents drawn).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import networkx as nx  # type: ignore[import-untyped]  # no stubs shipped; typeshed has types-networkx

__all__ = ["Entrant", "Pairing", "pair_round", "tie_breaks"]

#: Each player's cheapest opponents weighed first (then three times as many, then all).
CANDIDATES = 12
BYE = -1  # the bye's node in the graph (accounts are positive)


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

    def wish(self) -> tuple[str | None, bool]:
        """The side this player would like next and whether they need it (absolute): a
        difference of 2, or the same side in the last two games."""
        played = [c for c in self.colours if c != "-"]
        d = self.difference()
        if d > 0:  # more Norths: South next
            return "S", d >= 2 or played[-2:] == ["N", "N"]
        if d < 0:
            return "N", d <= -2 or played[-2:] == ["S", "S"]
        if played:
            return ("S" if played[-1] == "N" else "N"), False
        return None, False


@dataclass(frozen=True)
class Pairing:
    """A round's pairing: ``games`` (south, north) and the ``bye`` (None: none)."""

    games: list[tuple[int, int]]
    bye: int | None


def _ranked(players: Sequence[Entrant]) -> list[Entrant]:
    return sorted(players, key=lambda p: (-p.score, -p.rating, p.account))


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


class _Costs:
    """The costs of each possible pair (and of each player's bye), as tuples compared in order."""

    def __init__(self, ranked: list[Entrant], blocked: Collection[frozenset[int]]) -> None:
        self.ranked = ranked
        self.rank = {p.account: i for i, p in enumerate(ranked)}
        self.blocked = blocked
        groups: dict[float, list[Entrant]] = {}
        for p in ranked:
            groups.setdefault(p.score, []).append(p)
        self.group = {p.account: g for g in groups.values() for p in g}
        self.pos = {p.account: i for g in groups.values() for i, p in enumerate(g)}
        self.wish = {p.account: p.wish() for p in ranked}
        self.lowest = min((p.score for p in ranked), default=0.0)

    def pair(self, a: Entrant, b: Entrant) -> tuple[int, ...]:
        """``a`` ranked above ``b``."""
        block = int(frozenset((a.account, b.account)) in self.blocked)
        (wa, need_a), (wb, need_b) = self.wish[a.account], self.wish[b.account]
        absolute = int(need_a and need_b and wa == wb)
        gap = round(2 * (a.score - b.score))
        group, i, j = self.group[a.account], self.pos[a.account], self.pos[b.account]
        if gap == 0:
            m = len(group)
            half = m // 2
            if i < half <= j:  # top half against bottom half: how far the bottom half is changed
                order = abs(j - i - half)
            else:  # an exchange between the halves: after every change of the bottom half
                order = m * (half + 1) + abs(j - i - half)
        else:  # a float: the lowest of the group above, the highest of the group below
            order = (len(group) - 1 - i) + j
        mild = int(wa is not None and wa == wb)
        return (block, absolute, gap * gap, order, mild)

    def bye(self, p: Entrant) -> tuple[int, ...]:
        gap = round(2 * (p.score - self.lowest))
        return (0, 0, gap * gap, len(self.ranked) - 1 - self.rank[p.account], 0)


def _weights(costs: dict[tuple[int, int], tuple[int, ...]], pairs: int) -> dict[tuple[int, int], int]:
    """Exact integer weights from cost tuples: a cost outweighs any total of the later ones over a
    whole matching (``pairs`` edges), so the heaviest matching is the cheapest in that order."""
    if not costs:
        return {}
    width = len(next(iter(costs.values())))
    tops = [max(c[k] for c in costs.values()) for k in range(width)]
    scale = [1] * width
    for k in range(width - 2, -1, -1):
        scale[k] = scale[k + 1] * (tops[k + 1] * pairs + 1)
    base = sum(t * s for t, s in zip(tops, scale, strict=True)) + 1
    return {e: base - sum(x * s for x, s in zip(c, scale, strict=True)) for e, c in costs.items()}


def _match(nodes: int, costs: dict[tuple[int, int], tuple[int, ...]]) -> set[tuple[int, int]] | None:
    """The heaviest matching that pairs all ``nodes`` over the edges of ``costs``, or None."""
    g = nx.Graph()
    for (a, b), w in _weights(costs, nodes // 2).items():
        g.add_edge(a, b, weight=w)
    found: set[tuple[int, int]] = nx.max_weight_matching(g, maxcardinality=True)
    return found if 2 * len(found) == nodes else None


def pair_round(players: Sequence[Entrant], round_no: int, blocked: Collection[frozenset[int]] = frozenset()) -> Pairing:
    """The pairing of round ``round_no`` (1, 2, ...); ``blocked``: pairs of accounts where one
    blocked the other (they meet only when no other pairing exists).  :class:`ValueError` when no
    pairing without a repeat exists (the tournament then ends early)."""
    ranked = _ranked(players)
    c = _Costs(ranked, blocked)
    every: dict[tuple[int, int], tuple[int, ...]] = {}
    for i, a in enumerate(ranked):
        for b in ranked[i + 1 :]:
            if b.account not in a.opponents and a.account not in b.opponents:
                every[(a.account, b.account)] = c.pair(a, b)
    if len(ranked) % 2:
        takers = [p for p in ranked if not p.had_bye] or ranked
        for p in takers:
            every[(p.account, BYE)] = c.bye(p)
    nodes = len(ranked) + len(ranked) % 2
    found = None
    for k in (CANDIDATES, 3 * CANDIDATES):  # the cheapest candidates first: most rounds need no more
        chosen: dict[tuple[int, int], tuple[int, ...]] = {}
        by_player: dict[int, list[tuple[tuple[int, ...], tuple[int, int]]]] = {}
        for e, cost in every.items():
            for x in e:
                by_player.setdefault(x, []).append((cost, e))
        for x, edges in by_player.items():
            edges.sort()
            if x == BYE:
                chosen.update((e, cost) for cost, e in edges)
                continue
            # the cheapest in the player's own score group, and the cheapest floats (an odd group
            # floats someone: without those edges no perfect matching would exist)
            chosen.update((e, cost) for cost, e in [ce for ce in edges if ce[0][2] == 0][:k])
            chosen.update((e, cost) for cost, e in [ce for ce in edges if ce[0][2] != 0][:k])
        if len(chosen) == len(every):
            break
        found = _match(nodes, chosen)
        if found is not None:
            break
    if found is None:
        found = _match(nodes, every)
    if found is None:
        raise ValueError("no pairing without a repeated game exists")
    bye: int | None = None
    pairs: list[tuple[Entrant, Entrant]] = []
    by = {p.account: p for p in ranked}
    for x, y in found:
        if BYE in (x, y):
            bye = y if x == BYE else x
            continue
        a, b = sorted((by[x], by[y]), key=lambda p: c.rank[p.account])
        pairs.append((a, b))
    pairs.sort(key=lambda ab: c.rank[ab[0].account])
    games = [_colours(a, b, board) for board, (a, b) in enumerate(pairs)]
    return Pairing(games, bye)


def tie_breaks(scores: dict[int, float], games: Sequence[tuple[int, int, float]]) -> dict[int, tuple[float, float]]:
    """``(Buchholz, Sonneborn-Berger)`` per player from the games ``(player, opponent, points)``
    (each game listed once per player: 1 a win, 0.5 a draw, 0 a loss; a bye has no opponent)."""
    out: dict[int, tuple[float, float]] = {}
    for player in scores:
        buchholz = sum(scores.get(o, 0.0) for p, o, _ in games if p == player)
        sb = sum(scores.get(o, 0.0) * pts for p, o, pts in games if p == player)
        out[player] = (buchholz, sb)
    return out
