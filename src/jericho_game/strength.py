"""Tower strength (RULES.md §4) for people: the comparison tuple and its explanation."""

from __future__ import annotations

from collections.abc import Sequence

from jericho_game.pieces import Piece

__all__ = ["strength", "compare_towers"]


def strength(tower: Sequence[Piece]) -> tuple[int, int, int, int, int]:
    """The strength tuple of RULES.md §4: (height ≥ 2, top size, 2nd, 3rd, 4th), 0 for missing.

    Tuples compare lexicographically: the larger tuple is the stronger tower.
    """
    sizes = [p.size for p in reversed(tower)] + [0, 0, 0, 0]
    return (1 if len(tower) >= 2 else 0, sizes[0], sizes[1], sizes[2], sizes[3])


def _show(tower: Sequence[Piece]) -> str:
    return "/".join(str(p) for p in tower) or "(empty)"


def compare_towers(a: Sequence[Piece], b: Sequence[Piece], name_a: str = "A", name_b: str = "B") -> str:
    """Explain which tower is stronger and which comparison decides it, in one sentence.

    Towers are listed bottom to top, as :meth:`jericho_game.Game.tower` returns them.
    """
    ta, tb = _show(a), _show(b)
    head = f"{name_a} {ta} vs {name_b} {tb}: "
    if not a or not b:
        return head + "a side has no tower, nobody leads"
    sa, sb = strength(a), strength(b)
    if sa[0] != sb[0]:
        win = name_a if sa[0] else name_b
        return head + f"{win} leads, a tower of two or more pieces beats a single piece"
    labels = ["top piece", "2nd piece from the top", "3rd piece from the top", "4th piece from the top"]
    for i in range(1, 5):
        if sa[i] != sb[i]:
            if sa[i] == 0 or sb[i] == 0:
                win = name_a if sa[i] else name_b
                return head + f"{win} leads, equal sizes down to the shorter tower's base and {win}'s is taller"
            win = name_a if sa[i] > sb[i] else name_b
            big, small = max(sa[i], sb[i]), min(sa[i], sb[i])
            return head + f"{win} leads, {labels[i - 1]} size {big} beats {small}"
    return head + "equal sizes all the way down: equally strong, nobody leads"
