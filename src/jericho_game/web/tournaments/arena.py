"""The arena's rules (lichess style), pure functions: points with a streak bonus, and pairing.

- A win is 2 points, a draw 1, a loss 0.  After two wins in a row a player is *on fire*: each
  further game counts double (a win 4, a draw 2) until a game that is not a win.
- Berserk: a player who halves their own clock before the first move gets 1 extra point for a
  win, if the game lasted at least :data:`BERSERK_MIN_PLIES` plies.
- Pairing: the free players (not in a game, with the tournament page open) are ranked by score
  (then rating) and paired neighbour to neighbour; a pair that just played each other is avoided
  when another order exists; two players of whom one blocked the other are never paired (each
  waits for someone else); the player who had South less often gets South.
- A game of fewer than :data:`MIN_PLIES` plies (a side resigned or lost on time before both had
  moved) gives no points: see :func:`points`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

__all__ = ["BERSERK_MIN_PLIES", "MIN_PLIES", "Free", "points", "pair_free"]

BERSERK_MIN_PLIES = 7
#: A game shorter than this (each side has not moved once) is no game for the points: issue 51,
#: finding 11 (64 points from 17 games resigned at ply 0 in 40 s).
MIN_PLIES = 2


def points(outcome: str, streak: int, berserk: bool, plies: int) -> tuple[int, int]:
    """``(points, streak after)`` of one game: ``outcome`` win/draw/loss, ``streak`` the wins in a
    row before it, ``berserk`` whether the player berserked, ``plies`` the game's length.

    A game of fewer than :data:`MIN_PLIES` plies gives nobody points (as lichess gives none for a
    game too short to count): its winner keeps their streak as it was (no game for them), and
    whoever lost or drew it loses their streak, as for a loss (so giving up at once neither feeds
    a friend points nor saves a streak from a strong opponent)."""
    if plies < MIN_PLIES:
        return 0, (streak if outcome == "win" else 0)
    fire = streak >= 2
    if outcome == "win":
        got = 4 if fire else 2
        if berserk and plies >= BERSERK_MIN_PLIES:
            got += 1
        return got, streak + 1
    if outcome == "draw":
        return (2 if fire else 1), 0
    return 0, 0


@dataclass(frozen=True)
class Free:
    """A player waiting for a game: account, score, rating, games played as South and North, and
    the account of their last opponent (None: none)."""

    account: int
    score: int
    rating: float
    souths: int = 0
    norths: int = 0
    last: int | None = None


def pair_free(free: list[Free], blocked: Collection[frozenset[int]] = frozenset()) -> list[tuple[int, int]]:
    """Pairs ``(south, north)`` of the free players (an odd one out waits for the next look).
    ``blocked``: pairs of accounts where one blocked the other: never paired together."""
    ranked = sorted(free, key=lambda p: (-p.score, -p.rating, p.account))
    pairs: list[tuple[Free, Free]] = []
    while len(ranked) >= 2:
        a = ranked.pop(0)
        allowed = [i for i, b in enumerate(ranked) if frozenset((a.account, b.account)) not in blocked]
        if not allowed:
            continue  # every other free player blocked a or was blocked: a waits for someone else
        j = next((i for i in allowed if ranked[i].account != a.last and a.account != ranked[i].last), None)
        if j is None:
            if len(ranked) == 1:
                break  # the only other free player is the last opponent: wait for someone else
            j = allowed[0]
        b = ranked.pop(j)
        pairs.append((a, b))
    out = []
    for a, b in pairs:
        a_south = (a.souths - a.norths, a.account) <= (b.souths - b.norths, b.account)
        out.append((a.account, b.account) if a_south else (b.account, a.account))
    return out
