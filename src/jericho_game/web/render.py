"""The position part of a game's public state as JSON text, rendered from memoized fragments.

Rendering the state is the web server's main cost per move: naming every piece of every tower,
and each alignment's confrontation (champions, their towers, the deciding comparison in words),
took ~0.5 ms of the ~0.8 ms a state cost.  A move changes one cell, so nearly every fragment of
the next state was rendered before, in this game or another: a tower's text depends only on its
cell and its tower code, a confrontation's only on the towers of its alignment's cells and who
leads it, a reserve's only on its mask.  Each fragment is rendered once (through the engine's
public :meth:`Game.tower` / :meth:`Game.confrontation`, never by rules of its own) and then
looked up by those integers, read from the engine's kernel state.

The memo is bounded (:data:`MAX_FRAGMENTS` in two generations: when the young one is full it
becomes the old one and the previous old one is dropped; a fragment found in the old generation
moves back to the young), so it cannot grow without limit whatever games are played, and the
fragments in use survive a turnover (clearing it whole, as before, doubled a state's cost for
the next seconds: 134 -> 275 us a state over the next 1,000 states, replaying 200 games).
The output equals ``json.dumps`` of the dicts that :func:`jericho_game.web.rooms.confrontations`
and friends build (``tests/web/test_render.py`` checks that on random games).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from jericho_game.game import Confrontation, Game
from jericho_game.pieces import PIECES

__all__ = [
    "MAX_FRAGMENTS",
    "towers_json",
    "reserves_json",
    "legal_json",
    "leaders_json",
    "confrontation_body",
    "confrontations_json",
]

MAX_FRAGMENTS = 200_000

_memo: dict[Any, str] = {}  # the young generation
_old: dict[Any, str] = {}  # the generation before it
_boards: dict[Any, int] = {}  # Tables -> small int (see _board_id); boards in use: one or two
_align_getters: dict[Any, list[tuple[int, Any]]] = {}  # per board: each alignment's tower codes, read in C
_orders: dict[Any, tuple[int, ...]] = {}  # per board (Tables): its cells in the topology's order
# per board: each piece's '"5R":[' and the cell names of each camp's half of a legal-cells mask
_legal_tables: dict[Any, tuple[list[str], dict[int, str], dict[int, str]]] = {}


def _board_id(t: Any) -> int:
    # A small int standing for a board (its Tables) in memo keys: a key made of ints and strings
    # only is a tuple the garbage collector stops tracking, so 200,000 memoized fragments add
    # nothing to a full collection (keys holding the Tables object made each one ~60-90 ms).
    board = _boards.get(t)
    if board is None:
        board = _boards[t] = len(_boards)
    return board


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _remember(key: Any, text: str) -> str:
    global _memo, _old
    if len(_memo) >= MAX_FRAGMENTS // 2:
        _memo, _old = {}, _memo
    _memo[key] = text
    return text


def _recall(key: Any) -> str | None:
    # a miss in the young generation: the old generation's text, moved back to the young, or None
    text = _old.get(key)
    return None if text is None else _remember(key, text)


def towers_json(game: Game, code: list[int] | None = None) -> str:
    """``{"cell": ["5R", ...], ...}`` for every non-empty cell, bottom to top, in board order."""
    t = game.tables
    board = _board_id(t)
    code = game.state.code if code is None else code
    names = t.cell_names
    parts = []
    for c in _board_order(game):
        x = code[c]
        if not x:
            continue
        key = (board, "t", c, x)
        frag = _memo.get(key) or _recall(key)
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
    """``{"south": [...], "north": [...]}``: each side's pieces not placed yet.

    A reserve changes with nearly every move and its masks seldom recur, so the text is joined
    from the pieces' names memoized per half of the 25-bit mask (2^13 + 2^12 texts at most)."""
    masks = game.state.reserve
    parts = []
    for i, side in enumerate(("south", "north")):
        mask = masks[i]
        low = _memo.get(("r", 0, mask & 0x1FFF))
        if low is None:
            low = _recall(("r", 0, mask & 0x1FFF))
        if low is None:
            low = _remember(("r", 0, mask & 0x1FFF), _quoted(_PIECE_NAMES, 0, mask & 0x1FFF))
        high = _memo.get(("r", 13, mask >> 13))
        if high is None:
            high = _recall(("r", 13, mask >> 13))
        if high is None:
            high = _remember(("r", 13, mask >> 13), _quoted(_PIECE_NAMES, 13, mask >> 13))
        parts.append(f'"{side}":[' + (low + "," + high if low and high else low or high) + "]")
    return "{" + ",".join(parts) + "}"


_PIECE_NAMES = [str(p) for p in PIECES]


def _quoted(names: Sequence[str], first: int, bits: int) -> str:
    # the quoted names ``names[first + i]`` for each bit i of ``bits``, comma-separated
    return ",".join(_dumps(names[first + i]) for i in range(bits.bit_length()) if bits >> i & 1)


def legal_json(game: Game) -> str:
    """``{"piece": ["cell", ...], ...}``: the legal placements, by piece (``{}`` when passing is forced).

    Built from the engine's ``(piece, mask of its legal cells)`` groups
    (:meth:`core.State.legal_groups`): each piece's part is its memoized prefix and the quoted
    names of its cells in each camp, memoized per camp's half of the mask (at most 2 x 2^13
    texts on the standard board; whole masks recur too seldom to memoize).  Naming ~400 moves
    one by one and encoding them cost ~80 us a state, this ~10-20."""
    t = game.tables
    tables = _legal_tables.get(t)
    if tables is None:
        if len(_legal_tables) >= 16:  # boards in use: one or two
            _legal_tables.clear()
        prefixes = [f'"{t.move_objects[p * t.n_cells].piece}":[' for p in range(t.pass_code // t.n_cells)]
        tables = _legal_tables[t] = (prefixes, {}, {})
    prefixes, south_of, north_of = tables
    k = t.camp_size
    low = (1 << k) - 1
    parts = []
    for piece, mask in game.state.legal_groups():
        south = south_of.get(mask & low)
        if south is None:
            south = south_of[mask & low] = _quoted(t.cell_names, 0, mask & low)
        north = north_of.get(mask >> k)
        if north is None:
            north = north_of[mask >> k] = _quoted(t.cell_names, k, mask >> k)
        parts.append(prefixes[piece] + (south + "," + north if south and north else south or north) + "]")
    return "{" + ",".join(parts) + "}"


def leaders_json(game: Game) -> str:
    """``{"alignment": "south" | "north" | null, ...}``."""
    t = game.tables
    key = (_board_id(t), "l", *game.state.leader)
    frag = _memo.get(key) or _recall(key)
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
    board = _board_id(t)
    getters = _align_getters.get(t)
    if getters is None:
        getters = _align_getters[t] = [(a, itemgetter(*cells)) for a, cells in enumerate(t.align_cells)]
    code = game.state.code if code is None else code
    leader = game.state.leader
    parts = []
    for a, towers_of in getters:
        key = (board, "c", a, leader[a], towers_of(code))
        frag = _memo.get(key) or _recall(key)
        if frag is None:
            name = t.align_names[a]
            frag = _remember(key, _dumps(name) + ":" + _dumps(confrontation_body(game.confrontation(name))))
        parts.append(frag)
    return "{" + ",".join(parts) + "}"
