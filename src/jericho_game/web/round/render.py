"""The position part of a game's public state as JSON text, rendered from memoized fragments.

Rendering the state is the web server's main cost per move: naming every piece of every tower,
and each alignment's confrontation (champions, their towers, the deciding comparison in words),
took ~0.5 ms of the ~0.8 ms a state cost.  A move changes one cell, so nearly every fragment of
the next state was rendered before, in this game or another: a tower's text depends only on its
cell and its tower code, a confrontation's only on the towers of its alignment's cells and who
leads it, a reserve's only on its mask.  Each fragment is rendered once (through the engine's
public :meth:`Game.tower` / :meth:`Game.confrontation`, never by rules of its own) and then
looked up by those integers, read from the engine's kernel state.

A game's next state re-renders only what its move changed (:func:`position_json`, from the
previous state's :class:`Rendered` parts): one tower, the 2-4 alignments through its cell, the
mover's reserve.  ``jericho bench`` prints what a state costs (its ``web public state`` line;
docs/web.md quotes it before and after).

The memo is bounded (:data:`MAX_FRAGMENTS` in two generations: when the young one is full it
becomes the old one and the previous old one is dropped; a fragment found in the old generation
moves back to the young), so it cannot grow without limit whatever games are played, and the
fragments in use survive a turnover (clearing it whole, as before, doubled a state's cost for
the next seconds: 134 -> 275 us a state over the next 1,000 states, replaying 200 games).
The output equals ``json.dumps`` of the dicts that :func:`jericho_game.web.round.rooms.confrontations`
and friends build (``tests/web/round/test_render.py`` checks that on random games).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import compress
from operator import itemgetter, ne
from typing import Any

from jericho_game.game import Confrontation, Game
from jericho_game.pieces import PIECES, Side

__all__ = [
    "MAX_FRAGMENTS",
    "towers_json",
    "reserves_json",
    "legal_json",
    "leaders_json",
    "confrontation_body",
    "confrontations_json",
    "Rendered",
    "position_json",
]

MAX_FRAGMENTS = 200_000

_memo: dict[Any, str] = {}  # the young generation
_old: dict[Any, str] = {}  # the generation before it
_boards: dict[Any, int] = {}  # Tables -> small int (see _board_id); boards in use: one or two
_align_getters: dict[Any, list[tuple[int, Any]]] = {}  # per board: each alignment's tower codes, read in C
_orders: dict[Any, tuple[int, ...]] = {}  # per board (Tables): its cells in the topology's order
# per board: each piece's '"5R":[', the texts of each camp's half of a legal-cells mask, the quoted cell names
_legal_tables: dict[Any, tuple[list[str], dict[int, str], dict[int, str], list[str]]] = {}


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
    return "{" + ",".join([_tower(game, board, names, c, code[c]) for c in _board_order(game) if code[c]]) + "}"


def _tower(game: Game, board: int, names: Sequence[str], c: int, x: int) -> str:
    # '"cell":["5R",...]' for kernel cell ``c`` holding tower code ``x`` (not 0)
    key = (board, "t", c, x)
    frag = _memo.get(key) or _recall(key)
    if frag is None:
        frag = _remember(key, _dumps(names[c]) + ":" + _tower_list(game, names[c], x))
    return frag


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
    return "{" + _reserve(0, masks[0]) + "," + _reserve(1, masks[1]) + "}"


def _reserve(i: int, mask: int) -> str:
    # '"south":[...]' (i 0) or '"north":[...]' (i 1) for a reserve's 25-bit mask
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
    return _SIDE_KEYS[i] + (low + "," + high if low and high else low or high) + "]"


_SIDE_KEYS = ('"south":[', '"north":[')


_PIECE_NAMES = [_dumps(str(p)) for p in PIECES]  # quoted


def _quoted(names: Sequence[str], first: int, bits: int) -> str:
    # the names ``names[first + i]`` (quoted already) for each bit i of ``bits``, comma-separated
    return ",".join([names[first + i] for i in range(bits.bit_length()) if bits >> i & 1])


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
        tables = _legal_tables[t] = (prefixes, {}, {}, [_dumps(c) for c in t.cell_names])
    prefixes, south_of, north_of, cells = tables
    k = t.camp_size
    low = (1 << k) - 1
    parts = []
    for piece, mask in game.state.legal_groups():
        south = south_of.get(mask & low)
        if south is None:
            south = south_of[mask & low] = _quoted(cells, 0, mask & low)
        north = north_of.get(mask >> k)
        if north is None:
            north = north_of[mask >> k] = _quoted(cells, k, mask >> k)
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
    getters = _getters(t)
    code = game.state.code if code is None else code
    leader = game.state.leader
    parts = [_confrontation(game, board, a, leader[a], towers_of(code)) for a, towers_of in getters]
    return "{" + ",".join(parts) + "}"


def _getters(t: Any) -> list[tuple[int, Any]]:
    # per alignment: (its index, an itemgetter reading its cells' tower codes from a code list)
    getters = _align_getters.get(t)
    if getters is None:
        getters = _align_getters[t] = [(a, itemgetter(*cells)) for a, cells in enumerate(t.align_cells)]
    return getters


def _confrontation(game: Game, board: int, a: int, lead: int, towers: Any) -> str:
    # '"alignment":{...}' for alignment ``a`` with leader ``lead`` and its cells' tower codes ``towers``
    key = (board, "c", a, lead, towers)
    frag = _memo.get(key) or _recall(key)
    if frag is None:
        frag = _remember(key, _confrontation_text(game, a))
    return frag


_LEADERS = {None: "null", Side.SOUTH: '"south"', Side.NORTH: '"north"'}


def _confrontation_text(game: Game, a: int) -> str:
    # '"alignment":' + confrontation_body as JSON, from the engine's Confrontation; the champions'
    # tower lists are memoized by tower code and the reason by its text (both recur far more than
    # the alignment's whole key)
    t = game.tables
    name = t.align_names[a]
    c = game.confrontation(name)
    code = game.state.code
    south = "null" if c.south is None else _dumps(c.south)
    north = "null" if c.north is None else _dumps(c.north)
    south_tower = "[]" if c.south is None else _tower_list(game, c.south, code[t.cell_index[c.south]])
    north_tower = "[]" if c.north is None else _tower_list(game, c.north, code[t.cell_index[c.north]])
    reason = _memo.get(c.reason) or _recall(c.reason) or _remember(c.reason, _dumps(c.reason))
    return (
        f'{_dumps(name)}:{{"south":{south},"north":{north},"south_tower":{south_tower},'
        f'"north_tower":{north_tower},"leader":{_LEADERS[c.leader]},"reason":{reason}}}'
    )


def _tower_list(game: Game, cell: str, code: int) -> str:
    # '["5R","3W"]': the tower on ``cell``, whose tower code is ``code``, bottom to top
    key = ("tl", code)
    text = _memo.get(key) or _recall(key)
    if text is None:
        text = _remember(key, _dumps([str(p) for p in game.tower(cell)]))
    return text


class Rendered:
    """One position's rendered parts, kept so that the next position of the game re-renders only
    what the move changed: a placement changes one cell, so one tower and the 2-4 alignments
    through that cell (a forced pass changes none), instead of looking all 26 cells and 13
    alignments up in the memo again (each a tuple key hashed into a dict of ~10^5 entries).

    ``text`` is ``"leaders":{...},"towers":{...},"reserves":{...},"confrontations":{...}``."""

    __slots__ = ("board", "code", "leader", "reserve", "towers", "confrontations", "leaders", "reserves", "text")

    def __init__(
        self,
        board: int,
        code: list[int],
        leader: list[int],
        reserve: list[int],
        towers: list[str | None],
        confrontations: list[str],
        leaders: str,
        reserves: list[str],
    ) -> None:
        self.board = board
        self.code = code
        self.leader = leader
        self.reserve = reserve
        self.towers = towers  # per cell in board order: its fragment, None when empty
        self.confrontations = confrontations  # per alignment
        self.leaders = leaders
        self.reserves = reserves  # per side
        self.text = (
            '"leaders":'
            + leaders
            + ',"towers":{'
            + ",".join(filter(None, towers))
            + '},"reserves":{'
            + ",".join(reserves)
            + '},"confrontations":{'
            + ",".join(confrontations)
            + "}"
        )


def position_json(game: Game, prior: Rendered | None = None) -> Rendered:
    """The position's leaders, towers, reserves and confrontations (each as the function of that
    name renders it), re-rendering only what differs from ``prior`` (any earlier rendering of a
    position on the same board: the previous one of the game, usually)."""
    t = game.tables
    board = _board_id(t)
    st = game.state
    code, leader, reserve = st.code, st.leader, st.reserve
    names = t.cell_names
    order = _board_order(game)
    getters = _getters(t)
    if prior is None or prior.board != board:
        towers: list[str | None] = [_tower(game, board, names, c, code[c]) if code[c] else None for c in order]
        confs = [_confrontation(game, board, a, leader[a], towers_of(code)) for a, towers_of in getters]
        leaders = leaders_json(game)
        reserves = [_reserve(0, reserve[0]), _reserve(1, reserve[1])]
        return Rendered(board, code, leader, reserve, towers, confs, leaders, reserves)
    towers, confs, reserves = prior.towers, prior.confrontations, prior.reserves
    leaders = prior.leaders
    cells = list(compress(range(len(code)), map(ne, code, prior.code)))
    aligns = set(compress(range(len(leader)), map(ne, leader, prior.leader)))
    if cells:
        towers = towers.copy()
        place, through = _cell_places(game)
        for c in cells:
            towers[place[c]] = _tower(game, board, names, c, code[c]) if code[c] else None
            aligns.update(through[c])
    if aligns:
        confs = confs.copy()
        for a in aligns:
            confs[a] = _confrontation(game, board, a, leader[a], getters[a][1](code))
    if leader != prior.leader:
        leaders = leaders_json(game)
    if reserve != prior.reserve:
        reserves = [reserves[i] if reserve[i] == prior.reserve[i] else _reserve(i, reserve[i]) for i in (0, 1)]
    return Rendered(board, code, leader, reserve, towers, confs, leaders, reserves)


_places: dict[Any, tuple[list[int], list[tuple[int, ...]]]] = {}  # per board (Tables), see _cell_places


def _cell_places(game: Game) -> tuple[list[int], list[tuple[int, ...]]]:
    # per kernel cell: its place in the board order, and the alignments through it
    t = game.tables
    places = _places.get(t)
    if places is None:
        place = [0] * t.n_cells
        for i, c in enumerate(_board_order(game)):
            place[c] = i
        through = [tuple(a for a, cells in enumerate(t.align_cells) if c in cells) for c in range(t.n_cells)]
        places = _places[t] = (place, through)
    return places
