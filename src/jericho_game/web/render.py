"""The position part of a game's public state as JSON text, rendered from memoized fragments.

Rendering the state is the web server's main cost per move: naming every piece of every tower,
and each alignment's confrontation (champions, their towers, the deciding comparison in words),
took ~0.5 ms of the ~0.8 ms a state cost.  A move changes one cell, so nearly every fragment of
the next state was rendered before, in this game or another: a tower's text depends only on its
cell and its tower code, a confrontation's only on the towers of its alignment's cells and who
leads it, a reserve's only on its mask.  Each fragment is rendered once (through the engine's
public :meth:`Game.tower` / :meth:`Game.confrontation`, never by rules of its own) and then
looked up by those integers, read from the engine's kernel state.

The memo is bounded (cleared when it holds :data:`MAX_FRAGMENTS`), so it cannot grow without
limit whatever games are played.  The output equals ``json.dumps`` of the dicts that
:func:`jericho_game.web.rooms.confrontations` and friends build (``tests/web/test_server.py``
checks that on random games).
"""

from __future__ import annotations

import json
from typing import Any

from jericho_game.game import Confrontation, Game

__all__ = [
    "MAX_FRAGMENTS",
    "towers_json",
    "reserves_json",
    "leaders_json",
    "confrontation_body",
    "confrontations_json",
]

MAX_FRAGMENTS = 200_000

_memo: dict[Any, str] = {}
_orders: dict[Any, tuple[int, ...]] = {}  # per board (Tables): its cells in the topology's order


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _remember(key: Any, text: str) -> str:
    if len(_memo) >= MAX_FRAGMENTS:
        _memo.clear()
    _memo[key] = text
    return text


def towers_json(game: Game, code: list[int] | None = None) -> str:
    """``{"cell": ["5R", ...], ...}`` for every non-empty cell, bottom to top, in board order."""
    t = game.tables
    code = game.state.code if code is None else code
    names = t.cell_names
    parts = []
    for c in _board_order(game):
        x = code[c]
        if not x:
            continue
        key = (t, "t", c, x)
        frag = _memo.get(key)
        if frag is None:
            name = names[c]
            frag = _remember(key, _dumps(name) + ":" + _dumps([str(p) for p in game.tower(name)]))
        parts.append(frag)
    return "{" + ",".join(parts) + "}"


def _board_order(game: Game) -> tuple[int, ...]:
    # the topology's cell order (Game.towers() order), as kernel cell indices
    t = game.tables
    order = _orders.get(t)
    if order is None:
        order = _orders[t] = tuple(t.cell_index[c.name] for c in t.topology.cells)
    return order


def reserves_json(game: Game) -> str:
    """``{"south": [...], "north": [...]}``: each side's pieces not placed yet."""
    masks = game.state.reserve
    parts = []
    for i, side in enumerate(("south", "north")):
        key = ("r", masks[i])
        frag = _memo.get(key)
        if frag is None:
            frag = _remember(key, _dumps([str(p) for p in game.reserve(side)]))
        parts.append(f'"{side}":{frag}')
    return "{" + ",".join(parts) + "}"


def leaders_json(game: Game) -> str:
    """``{"alignment": "south" | "north" | null, ...}``."""
    t = game.tables
    key = (t, "l", tuple(game.state.leader))
    frag = _memo.get(key)
    if frag is None:
        frag = _remember(key, _dumps({k: (str(v) if v is not None else None) for k, v in game.leaders().items()}))
    return frag


def confrontation_body(c: Confrontation) -> dict[str, Any]:
    """One alignment's champions, their towers, leader and the deciding comparison in words."""
    return {
        "south": c.south,
        "north": c.north,
        "south_tower": [str(p) for p in c.south_tower],
        "north_tower": [str(p) for p in c.north_tower],
        "leader": c.leader.value if c.leader else None,
        "reason": c.reason,
    }


def confrontations_json(game: Game, code: list[int] | None = None) -> str:
    """``{"alignment": {"south", "north", "south_tower", "north_tower", "leader", "reason"}, ...}``."""
    t = game.tables
    code = game.state.code if code is None else code
    leader = game.state.leader
    parts = []
    for a, cells in enumerate(t.align_cells):
        key = (t, "c", a, leader[a], *[code[c] for c in cells])
        frag = _memo.get(key)
        if frag is None:
            name = t.align_names[a]
            frag = _remember(key, _dumps(name) + ":" + _dumps(confrontation_body(game.confrontation(name))))
        parts.append(frag)
    return "{" + ",".join(parts) + "}"
