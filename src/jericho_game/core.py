"""The rules kernel: integer state, incremental updates, move generation, undo, playouts.

This module is the engine's fast path and the documented interface for search code
(see ``docs/engine.md``).  Everything is an ``int`` here:

* a **side** is 0 (South) or 1 (North);
* a **piece** is 0–24, ``(size - 1) * 5 + colour`` with colours ordered R Y G B W;
* a **cell** is an index into :attr:`Tables.cell_names` (South's camp first);
* a **move code** is ``piece * n_cells + cell``, and :attr:`Tables.pass_code` is the pass.

:class:`State` holds one position and supports ``push``/``pop`` (undo), legal move
generation (``legal_codes``), an incremental Zobrist ``hash_key`` and
:func:`random_playout` for Monte-Carlo search.  :class:`jericho_game.Game` wraps it with
notation, validation messages and Python objects.
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable
from typing import Final

from jericho_game.board import Topology
from jericho_game.moves import Move
from jericho_game.pieces import PIECES

__all__ = ["Tables", "State", "random_playout", "NO_OUTCOME", "DRAW", "strength_key", "N_PIECES"]

N_PIECES: Final = 25
NO_OUTCOME: Final = -1
DRAW: Final = 2
SEVEN: Final = 7
FULL_HEIGHT: Final = 4
TWO_OR_MORE: Final = 1 << 12  # strength-key flag of RULES.md §4 rule 1

PIECE_SIZE: Final = tuple(p // 5 for p in range(N_PIECES))  # 0-based size
PIECE_COLOUR: Final = tuple(p % 5 for p in range(N_PIECES))


def strength_key(sizes_bottom_to_top: list[int] | tuple[int, ...]) -> int:
    """The integer strength of a tower (RULES.md §4) from its sizes, bottom to top.

    Layout: bit 12 is "two or more pieces", then 3 bits for each size from the top
    down (top piece most significant).  Larger integers are stronger towers; an
    empty cell is 0.
    """
    key = 0
    for s in sizes_bottom_to_top:
        key = (s << 9) | ((key & 0xFFF) >> 3)
    if len(sizes_bottom_to_top) >= 2:
        key |= TWO_OR_MORE
    return key


def settle(key: list[int], south: tuple[int, ...], north: tuple[int, ...]) -> int:
    """Who leads an alignment (RULES.md §5): 0 South, 1 North, -1 nobody.

    ``key`` holds the strength keys of the cells (:func:`strength_key`); ``south`` and
    ``north`` are the alignment's cells in each camp.  Each side's champion is its
    strongest tower there; the stronger champion leads, and nobody leads when the
    champions are equal or a side has no tower.  The only settlement code of this module:
    playing a move, undoing it, previewing it and the playouts all call it.
    """
    s = n = 0
    for x in south:  # plain loops: no list is built, and alignments have one or two cells a side
        if key[x] > s:
            s = key[x]
    for x in north:
        if key[x] > n:
            n = key[x]
    return 0 if s > n and n else 1 if n > s and s else -1


def stacked_key(key: int, height: int, size: int) -> int:
    """The strength key of a tower of ``height`` pieces and key ``key`` after stacking a piece of ``size`` (0-based)."""
    k = ((size + 1) << 9) | ((key & 0xFFF) >> 3)
    return k | TWO_OR_MORE if height else k


class Tables:
    """Everything precomputed from a :class:`Topology`; shared by all states of that board."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        south = [c for c in topology.cells if c.camp == "south"]
        north = [c for c in topology.cells if c.camp == "north"]
        ordered = south + north
        self.n_cells: int = len(ordered)
        self.camp_size: int = len(south)
        self.cell_names: tuple[str, ...] = tuple(c.name for c in ordered)
        self.cell_index: dict[str, int] = {n: i for i, n in enumerate(self.cell_names)}
        self.cell_camp: tuple[int, ...] = tuple(0 if c.camp == "south" else 1 for c in ordered)
        self.south_mask: int = (1 << self.camp_size) - 1
        self.all_cells: int = (1 << self.n_cells) - 1
        self.align_names: tuple[str, ...] = tuple(a.name for a in topology.alignments)
        self.n_align: int = len(self.align_names)
        # Per alignment: its South-camp cells and North-camp cells (indices).
        sc: list[tuple[int, ...]] = []
        nc: list[tuple[int, ...]] = []
        for a in topology.alignments:
            idx = [self.cell_index[x] for x in a.cells]
            sc.append(tuple(i for i in idx if self.cell_camp[i] == 0))
            nc.append(tuple(i for i in idx if self.cell_camp[i] == 1))
        self.align_south: tuple[tuple[int, ...], ...] = tuple(sc)
        self.align_north: tuple[tuple[int, ...], ...] = tuple(nc)
        self.align_cells: tuple[tuple[int, ...], ...] = tuple(
            tuple(self.cell_index[x] for x in a.cells) for a in topology.alignments
        )
        self.through: tuple[tuple[int, ...], ...] = tuple(
            tuple(a for a in range(self.n_align) if i in self.align_cells[a]) for i in range(self.n_cells)
        )
        # Cells sharing at least one alignment with a cell (the cell itself excluded).
        self.aligned: tuple[tuple[int, ...], ...] = tuple(
            tuple(sorted({j for a in self.through[i] for j in self.align_cells[a] if j != i}))
            for i in range(self.n_cells)
        )
        self.pass_code: int = N_PIECES * self.n_cells
        # Per move code: the class of moves with the same effect on monoliths,
        # (size << cell_bits) | cell (strength depends on sizes only); -1 for the pass.
        self.cell_bits: int = max(1, (self.n_cells - 1).bit_length())
        self.effect_class: tuple[int, ...] = tuple(
            ((code // self.n_cells // 5) << self.cell_bits) | code % self.n_cells for code in range(self.pass_code)
        ) + (-1,)
        self.move_objects: tuple[Move, ...] = tuple(
            Move(PIECES[p], self.cell_names[c]) for p in range(N_PIECES) for c in range(self.n_cells)
        ) + (Move(None, None),)
        self.object_code: dict[int, int] = {id(m): i for i, m in enumerate(self.move_objects)}
        self.move_code: dict[tuple[int, str], int] = {
            (p, self.cell_names[c]): p * self.n_cells + c for p in range(N_PIECES) for c in range(self.n_cells)
        }
        # Lazily filled: (piece, camp, cell mask within the camp) -> tuple of move codes.
        self._code_cache: dict[int, tuple[object, ...]] = {}
        self._move_cache: dict[int, tuple[object, ...]] = {}
        rng = _random.Random(0x4A45524943484F)  # fixed: hash keys are reproducible
        bits = 64
        self.z_tower: tuple[tuple[int, ...], ...] = tuple(
            tuple(rng.getrandbits(bits) for _ in range(FULL_HEIGHT * N_PIECES)) for _ in range(self.n_cells)
        )
        self.z_reserve: tuple[tuple[int, ...], ...] = tuple(
            tuple(rng.getrandbits(bits) for _ in range(N_PIECES)) for _ in range(2)
        )
        self.z_turn: int = rng.getrandbits(bits)
        self.z_last: tuple[int, ...] = tuple(rng.getrandbits(bits) for _ in range(self.pass_code + 1))
        self.z_pass: tuple[int, ...] = tuple(rng.getrandbits(bits) for _ in range(3))

    def cached_group(self, key: int, objects: bool) -> tuple[object, ...]:
        """Build (and cache) the moves of one group key: ``((piece << 1 | camp) << camp_size) | cells``.

        Move generation is cached per (piece, camp, cells of that camp) so that the cache
        stays bounded (at most ``25 * 2 * 2**camp_size`` entries) whatever games are played.
        """
        k = self.camp_size
        half = key & ((1 << k) - 1)
        camp = (key >> k) & 1
        piece = key >> (k + 1)
        base = piece * self.n_cells + camp * k
        codes = [base + i for i in range(k) if half >> i & 1]
        if objects:
            out: tuple[object, ...] = tuple(self.move_objects[x] for x in codes)
            self._move_cache[key] = out
        else:
            out = tuple(codes)
            self._code_cache[key] = out
        return out


_TABLES: dict[int, Tables] = {}


def tables_for(topology: Topology) -> Tables:
    """The (cached) :class:`Tables` of a topology."""
    t = _TABLES.get(id(topology))
    if t is None or t.topology is not topology:
        t = Tables(topology)
        _TABLES[id(topology)] = t
    return t


class _StateType(type):
    """Metaclass of :class:`State`: ``isinstance(x, State)`` also accepts the C kernel's states.

    ``jericho_game._kernel.State`` implements this class's interface in C (see
    :mod:`jericho_game.kernel`); code that checks for a kernel state accepts either.
    """

    def __instancecheck__(cls, obj: object) -> bool:
        if type.__instancecheck__(cls, obj):
            return True
        t = type(obj)
        return t.__module__ == "jericho_game._kernel" and t.__name__ == "State"


class State(metaclass=_StateType):
    """A position of the game as plain integers, with ``push``/``pop`` and move generation.

    Attributes (read them, never assign them from outside):

    * ``turn`` — side to move (0 South, 1 North);
    * ``code[c]`` — the tower on cell ``c``: 5 bits per level, bottom first, each ``piece + 1``;
    * ``height[c]``, ``key[c]`` — height and strength key (see :func:`strength_key`);
      ``key`` has one extra sentinel slot, always 0;
    * ``size_free[s]`` / ``colour_free[k]`` — bit masks of cells that are not full and
      hold no piece of size ``s + 1`` / colour ``k``;
    * ``reserve[side]`` — bit mask of the pieces still in that side's reserve;
    * ``leader[a]`` — -1 (nobody), 0 or 1 for each alignment; ``score[side]`` — monoliths held;
    * ``last_cell``, ``last_piece``, ``last_below`` — the opponent's placement just made
      (cell -1 when the previous turn was a pass or there was none) and the tower code
      under it, for the asymmetry rule;
    * ``passes`` — consecutive passes just made; ``outcome`` — -1, 0, 1 or 2 (draw).
    """

    __slots__ = (
        "tables",
        "turn",
        "code",
        "height",
        "key",
        "size_free",
        "colour_free",
        "reserve",
        "leader",
        "score",
        "last_cell",
        "last_piece",
        "last_below",
        "passes",
        "outcome",
        "zhash",
        "_stack",
    )

    def __init__(self, tables: Tables) -> None:
        n = tables.n_cells
        self.tables = tables
        self.turn = 0
        self.code = [0] * n
        self.height = [0] * n
        self.key = [0] * (n + 1)
        self.size_free = [tables.all_cells] * 5
        self.colour_free = [tables.all_cells] * 5
        full = (1 << N_PIECES) - 1
        self.reserve = [full, full]
        self.leader = [-1] * tables.n_align
        self.score = [0, 0]
        self.last_cell = -1
        self.last_piece = -1
        self.last_below = 0
        self.passes = 0
        self.outcome = NO_OUTCOME
        z = 0
        for side in (0, 1):
            for p in range(N_PIECES):
                z ^= tables.z_reserve[side][p]
        self.zhash = z
        self._stack: list[tuple[int, ...]] = []

    # -- copying -----------------------------------------------------------------
    def copy(self, with_history: bool = False) -> State:
        """An independent copy; its undo stack is copied only when ``with_history``."""
        s = State.__new__(State)
        s.tables = self.tables
        s.turn = self.turn
        s.code = self.code[:]
        s.height = self.height[:]
        s.key = self.key[:]
        s.size_free = self.size_free[:]
        s.colour_free = self.colour_free[:]
        s.reserve = self.reserve[:]
        s.leader = self.leader[:]
        s.score = self.score[:]
        s.last_cell = self.last_cell
        s.last_piece = self.last_piece
        s.last_below = self.last_below
        s.passes = self.passes
        s.outcome = self.outcome
        s.zhash = self.zhash
        s._stack = self._stack[:] if with_history else []
        return s

    # -- queries -------------------------------------------------------------------
    @property
    def ply(self) -> int:
        """How many moves can be undone (moves pushed on this state)."""
        return len(self._stack)

    def hash_key(self) -> int:
        """A 64-bit Zobrist key of everything the rules depend on (for transposition tables)."""
        t = self.tables
        last = self.last_piece * t.n_cells + self.last_cell if self.last_cell >= 0 else t.pass_code
        z = self.zhash ^ t.z_last[last] ^ t.z_pass[self.passes]
        return z ^ t.z_turn if self.turn else z

    def fits(self, piece: int) -> int:
        """Bit mask of cells where ``piece`` may stack (height and clashes; reserve and asymmetry aside)."""
        return self.size_free[PIECE_SIZE[piece]] & self.colour_free[PIECE_COLOUR[piece]]

    def forbidden_copy_cells(self) -> int:
        """Bit mask of cells where the opponent's last piece may not go (asymmetry rule)."""
        lc = self.last_cell
        if lc < 0:
            return 0
        below = self.last_below
        code = self.code
        mask = 0
        for c in self.tables.aligned[lc]:
            if code[c] == below:
                mask |= 1 << c
        return mask

    def legal_codes(self) -> list[int]:
        """Legal move codes; ``[pass_code]`` when passing is forced, ``[]`` when the game is over."""
        out: list[int] = self._generate(False)  # type: ignore[assignment]
        if not out and self.outcome == NO_OUTCOME:
            out.append(self.tables.pass_code)
        return out

    def legal_moves(self) -> list[Move]:
        """Legal moves as interned :class:`Move` objects (same order as :meth:`legal_codes`)."""
        out: list[Move] = self._generate(True)  # type: ignore[assignment]
        if not out and self.outcome == NO_OUTCOME:
            out.append(self.tables.move_objects[self.tables.pass_code])
        return out

    def legal_groups(self) -> list[tuple[int, int]]:
        """Legal placements grouped by piece: ``(piece, mask of its legal cells)`` in piece order.

        The same moves as :meth:`legal_codes` without the pass (``[]`` when passing is forced or
        the game is over), for a caller that wants cells per piece without a move per cell."""
        groups: dict[int, int] = {}
        n = self.tables.n_cells
        for code in self.legal_codes():
            if code != self.tables.pass_code:
                piece, cell = divmod(code, n)
                groups[piece] = groups.get(piece, 0) | 1 << cell
        return list(groups.items())

    def _generate(self, objects: bool) -> list[object]:
        out: list[object] = []
        if self.outcome != NO_OUTCOME:
            return out
        t = self.tables
        cache = t._move_cache if objects else t._code_cache
        get = cache.get
        build = t.cached_group
        k = t.camp_size
        south = t.south_mask
        extend = out.extend
        r = self.reserve[self.turn]
        sf = self.size_free
        cf = self.colour_free
        lp = self.last_piece if self.last_cell >= 0 else -1
        while r:
            low = r & -r
            p = low.bit_length() - 1
            r ^= low
            cells = sf[PIECE_SIZE[p]] & cf[PIECE_COLOUR[p]]
            if p == lp:
                cells &= ~self.forbidden_copy_cells()
            half = cells & south
            if half:
                key = (p << 1 << k) | half
                group = get(key)
                extend(group if group is not None else build(key, objects))
            half = cells >> k
            if half:
                key = (((p << 1) | 1) << k) | half
                group = get(key)
                extend(group if group is not None else build(key, objects))
        return out

    def has_placement(self) -> bool:
        """True when the side to move has at least one legal placement."""
        r = self.reserve[self.turn]
        lp = self.last_piece if self.last_cell >= 0 else -1
        while r:
            low = r & -r
            p = low.bit_length() - 1
            r ^= low
            cells = self.fits(p)
            if p == lp:
                cells &= ~self.forbidden_copy_cells()
            if cells:
                return True
        return False

    def is_legal(self, code: int) -> bool:
        """Whether a move code is legal here."""
        if self.outcome != NO_OUTCOME:
            return False
        t = self.tables
        if code == t.pass_code:
            return not self.has_placement()
        if not 0 <= code < t.pass_code:
            return False
        p, c = divmod(code, t.n_cells)
        if not (self.reserve[self.turn] >> p) & 1 or not (self.fits(p) >> c) & 1:
            return False
        return not (p == self.last_piece and (self.forbidden_copy_cells() >> c) & 1)

    def leader_changes(self, size: int, cell: int) -> list[tuple[int, int, int]]:
        """What stacking a piece of ``size`` (0-based) on ``cell`` would do to the monoliths.

        Returns ``(alignment, old leader, new leader)`` for each alignment through the cell
        whose leader would change, without playing the move.  Tower strength depends on
        sizes only (RULES.md §4), so the piece's colour does not matter here.
        """
        key = self.key
        old_key = key[cell]
        key[cell] = stacked_key(old_key, self.height[cell], size)
        t = self.tables
        out = []
        for a in t.through[cell]:
            new = settle(key, t.align_south[a], t.align_north[a])
            if new != self.leader[a]:
                out.append((a, self.leader[a], new))
        key[cell] = old_key
        return out

    def margin_deltas(self, codes: list[int]) -> list[int]:
        """For each move code, the change of (mover's monoliths − opponent's) it causes at once.

        Moves with the same piece size and cell share one computation (tower strength
        depends on sizes only), and the pass code gets 0.
        """
        t = self.tables
        classes = t.effect_class
        shift = t.cell_bits
        mask = (1 << shift) - 1
        table: dict[int, int] = {-1: 0}
        cls = list(map(classes.__getitem__, codes))
        for ck in set(cls):
            if ck >= 0:
                table[ck] = _margin_change(self.key, self.height, self.leader, t, ck >> shift, ck & mask, self.turn)
        return list(map(table.__getitem__, cls))

    # -- making and unmaking moves --------------------------------------------
    def push(self, code: int) -> None:
        """Play a move code, which must be legal (check with :meth:`is_legal`); O(1)."""
        t = self.tables
        turn = self.turn
        other = 1 - turn
        score = self.score
        self._stack.append(
            (
                code,
                self.last_cell,
                self.last_piece,
                self.last_below,
                self.passes,
                self.outcome,
                score[0],
                score[1],
                *self.leader,
            )
        )
        before_other = score[other]
        if code == t.pass_code:
            self.passes += 1
            self.last_cell = -1
        else:
            p, c = divmod(code, t.n_cells)
            self.reserve[turn] ^= 1 << p
            self.zhash ^= t.z_reserve[turn][p]
            self._place(p, c)
            self.passes = 0
        if score[other] >= SEVEN and before_other >= SEVEN:
            self.outcome = other
        elif self.passes >= 2:
            self.outcome = 0 if score[0] > score[1] else 1 if score[1] > score[0] else DRAW
        self.turn = other

    def _place(self, p: int, c: int) -> None:
        t = self.tables
        h = self.height[c]
        below = self.code[c]
        self.last_cell = c
        self.last_piece = p
        self.last_below = below
        self.code[c] = below | ((p + 1) << (5 * h))
        self.height[c] = h + 1
        self.zhash ^= t.z_tower[c][h * N_PIECES + p]
        self.key[c] = stacked_key(self.key[c], h, p // 5)
        bit = 1 << c
        if h + 1 == FULL_HEIGHT:
            nb = ~bit
            sf = self.size_free
            cf = self.colour_free
            for i in range(5):
                sf[i] &= nb
                cf[i] &= nb
        else:
            self.size_free[p // 5] &= ~bit
            self.colour_free[p % 5] &= ~bit
        self._settle(c)

    def _settle(self, c: int) -> None:
        """Re-settle the (at most two) alignments through cell ``c`` (RULES.md §5)."""
        t = self.tables
        key = self.key
        leader = self.leader
        score = self.score
        for a in t.through[c]:
            new = settle(key, t.align_south[a], t.align_north[a])
            old = leader[a]
            if new != old:
                if old >= 0:
                    score[old] -= 1
                if new >= 0:
                    score[new] += 1
                leader[a] = new

    def pop(self) -> int:
        """Undo the last :meth:`push`; returns its move code.  Raises ``IndexError`` at the start."""
        rec = self._stack.pop()
        code = rec[0]
        t = self.tables
        self.turn = turn = 1 - self.turn
        if code != t.pass_code:
            p, c = divmod(code, t.n_cells)
            self.reserve[turn] |= 1 << p
            self.zhash ^= t.z_reserve[turn][p]
            h = self.height[c] - 1
            below = self.code[c] & ((1 << (5 * h)) - 1)
            self.code[c] = below
            self.height[c] = h
            self.zhash ^= t.z_tower[c][h * N_PIECES + p]
            self.key[c] = _key_of_code(below, h)
            bit = 1 << c
            if h + 1 == FULL_HEIGHT:
                smask = cmask = 0
                x = below
                while x:
                    q = (x & 31) - 1
                    smask |= 1 << (q // 5)
                    cmask |= 1 << (q % 5)
                    x >>= 5
                for i in range(5):
                    if not smask >> i & 1:
                        self.size_free[i] |= bit
                    if not cmask >> i & 1:
                        self.colour_free[i] |= bit
            else:
                self.size_free[p // 5] |= bit
                self.colour_free[p % 5] |= bit
        self.last_cell = rec[1]
        self.last_piece = rec[2]
        self.last_below = rec[3]
        self.passes = rec[4]
        self.outcome = rec[5]
        self.score[0] = rec[6]
        self.score[1] = rec[7]
        self.leader[:] = rec[8:]
        return code

    def history_codes(self) -> list[int]:
        """Move codes pushed on this state, oldest first."""
        return [r[0] for r in self._stack]

    # -- rebuilding from a description --------------------------------------------
    def load(
        self,
        towers: dict[int, list[int]],
        reserves: tuple[int, int],
        turn: int,
        last: tuple[int, int] | None,
        passes: int,
        outcome: int,
    ) -> None:
        """Reset to a described position (used by ``Game.from_position``); no history."""
        t = self.tables
        self.__init__(t)  # type: ignore[misc]
        self.reserve = [reserves[0], reserves[1]]
        z = 0
        for side in (0, 1):
            for p in range(N_PIECES):
                if reserves[side] >> p & 1:
                    z ^= t.z_reserve[side][p]
        self.zhash = z
        for c, pieces in towers.items():
            for p in pieces:
                self._place(p, c)
        self.turn = turn
        if last is None:
            self.last_cell = -1
            self.last_piece = -1
            self.last_below = 0
        else:
            p, c = last
            self.last_cell = c
            self.last_piece = p
            self.last_below = self.code[c] & ((1 << (5 * (self.height[c] - 1))) - 1)
        self.passes = passes
        self.outcome = outcome


def _key_of_code(code: int, height: int) -> int:
    key = 0
    x = code
    for _ in range(height):
        key = (((x & 31) - 1) // 5 + 1 << 9) | ((key & 0xFFF) >> 3)
        x >>= 5
    return key | TWO_OR_MORE if height >= 2 else key


def random_playout(
    state: State,
    random: Callable[[], float] = _random.random,
    moves: list[int] | None = None,
    guided: int = 1,
) -> int:
    """Play random legal moves from ``state`` to the end; return the outcome.

    ``state`` is not modified.  ``random`` is a ``random.Random().random``-like
    function (pass a seeded one for reproducible playouts).  If ``moves`` is a list,
    the move codes played are appended to it.  The outcome is 0 (South wins),
    1 (North wins) or 2 (draw).

    With ``guided=1`` (the default) moves are uniform over the legal moves.  With
    ``guided=k > 1`` each move is the best of ``k`` uniformly sampled legal moves by
    its immediate effect on the mover's monolith margin (ties: the first sampled), a
    playout policy that looks more like real play (see ``docs/ai.md``).

    This is the engine's fastest path: one function, local variables only,
    rejection sampling over (reserve piece, cell) pairs (which is exactly uniform
    over legal moves) with an exact fallback when the board is nearly blocked.
    """
    if state.outcome != NO_OUTCOME:
        return state.outcome
    t = state.tables
    n = t.n_cells
    aligned = t.aligned
    through = t.through
    asouth = t.align_south
    anorth = t.align_north
    code = state.code[:]
    height = state.height[:]
    key = state.key[:]
    sf = state.size_free[:]
    cf = state.colour_free[:]
    leader = state.leader[:]
    s0, s1 = state.score
    pieces = [_reserve_list(state.reserve[0]), _reserve_list(state.reserve[1])]
    turn = state.turn
    last_cell = state.last_cell
    last_piece = state.last_piece
    last_below = state.last_below
    passes = state.passes
    record = moves.append if moves is not None else None
    psize = PIECE_SIZE
    pcol = PIECE_COLOUR
    seven = SEVEN
    while True:
        before = s1 if turn == 0 else s0
        mine = pieces[turn]
        np_ = len(mine)
        p = c = i = -1
        if np_ and guided > 1:
            p, c, i = _guided_choice(
                mine, turn, guided, sf, cf, code, height, key, leader, t,
                last_cell, last_piece, last_below, random,
            )  # fmt: skip
        elif np_:
            # Rejection sampling: a uniformly random (piece, cell) pair, kept if legal.
            for _ in range(12):
                r = random() * np_
                i = int(r)
                p = mine[i]
                c = int((r - i) * n)
                if (sf[psize[p]] & cf[pcol[p]]) >> c & 1 and not (
                    p == last_piece and last_cell >= 0 and code[c] == last_below and c in aligned[last_cell]
                ):
                    break
            else:
                p, c, i = _exact_choice(mine, sf, cf, code, aligned, last_cell, last_piece, last_below, random)
        if p < 0:
            passes += 1
            last_cell = -1
            if record is not None:
                record(t.pass_code)
        else:
            mine[i] = mine[-1]
            mine.pop()
            if record is not None:
                record(p * n + c)
            h = height[c]
            last_below = code[c]
            last_cell = c
            last_piece = p
            code[c] = last_below | ((p + 1) << (5 * h))
            height[c] = h + 1
            size = psize[p]
            key[c] = stacked_key(key[c], h, size)
            nb = ~(1 << c)
            if h == 3:
                for j in range(5):
                    sf[j] &= nb
                    cf[j] &= nb
            else:
                sf[size] &= nb
                cf[pcol[p]] &= nb
            for a in through[c]:
                new = settle(key, asouth[a], anorth[a])
                old = leader[a]
                if new != old:
                    if old == 0:
                        s0 -= 1
                    elif old == 1:
                        s1 -= 1
                    if new == 0:
                        s0 += 1
                    elif new == 1:
                        s1 += 1
                    leader[a] = new
            passes = 0
        # Seven-monolith rule: the opponent wins if it held 7 before this turn and still does.
        if before >= seven and (s1 if turn == 0 else s0) >= seven:
            return 1 - turn
        if passes >= 2:
            return 0 if s0 > s1 else 1 if s1 > s0 else DRAW
        turn = 1 - turn


_RESERVE_LISTS: dict[int, tuple[int, ...]] = {}


def _reserve_list(mask: int) -> list[int]:
    """The pieces of a reserve mask as a fresh list (tuples cached: playouts start from few masks)."""
    t = _RESERVE_LISTS.get(mask)
    if t is None:
        t = tuple(p for p in range(N_PIECES) if mask >> p & 1)
        if len(_RESERVE_LISTS) < 4096:
            _RESERVE_LISTS[mask] = t
    return list(t)


def _guided_choice(
    mine: list[int],
    turn: int,
    k: int,
    sf: list[int],
    cf: list[int],
    code: list[int],
    height: list[int],
    key: list[int],
    leader: list[int],
    t: Tables,
    last_cell: int,
    last_piece: int,
    last_below: int,
    random: Callable[[], float],
) -> tuple[int, int, int]:
    """Best of ``k`` sampled legal placements by immediate monolith margin; ``(-1, -1, -1)`` if none."""
    aligned = t.aligned
    n = t.n_cells
    np_ = len(mine)
    best = -9
    bp = bc = bi = -1
    found = 0
    for _ in range(12 * k):
        r = random() * np_
        i = int(r)
        p = mine[i]
        c = int((r - i) * n)
        if not (sf[PIECE_SIZE[p]] & cf[PIECE_COLOUR[p]]) >> c & 1 or (
            p == last_piece and last_cell >= 0 and code[c] == last_below and c in aligned[last_cell]
        ):
            continue
        d = _margin_change(key, height, leader, t, PIECE_SIZE[p], c, turn)
        if d > best:
            best = d
            bp, bc, bi = p, c, i
        found += 1
        if found >= k:
            break
    if bp < 0:
        # Nearly blocked board: any legal placement, uniformly.
        return _exact_choice(mine, sf, cf, code, aligned, last_cell, last_piece, last_below, random)
    return bp, bc, bi


def _margin_change(key: list[int], height: list[int], leader: list[int], t: Tables, size: int, c: int, me: int) -> int:
    """The change of (``me``'s monoliths − the opponent's) if a piece of ``size`` were stacked on ``c``.

    Tries the new strength key on the cell, settles the alignments through it with
    :func:`settle`, and restores the key.
    """
    old_key = key[c]
    key[c] = stacked_key(old_key, height[c], size)
    d = 0
    for a in t.through[c]:
        new = settle(key, t.align_south[a], t.align_north[a])
        old = leader[a]
        if new != old:
            d += (new == me) - (old == me) - (new == 1 - me) + (old == 1 - me)
    key[c] = old_key
    return d


def _exact_choice(
    mine: list[int],
    sf: list[int],
    cf: list[int],
    code: list[int],
    aligned: tuple[tuple[int, ...], ...],
    last_cell: int,
    last_piece: int,
    last_below: int,
    random: Callable[[], float],
) -> tuple[int, int, int]:
    """Uniform choice among all legal placements; ``(-1, -1, -1)`` when there is none."""
    masks = []
    total = 0
    for i, p in enumerate(mine):
        cells = sf[PIECE_SIZE[p]] & cf[PIECE_COLOUR[p]]
        if p == last_piece and last_cell >= 0:
            for c in aligned[last_cell]:
                if code[c] == last_below:
                    cells &= ~(1 << c)
        if cells:
            masks.append((i, p, cells))
            total += cells.bit_count()
    if not total:
        return -1, -1, -1
    k = int(random() * total)
    for i, p, cells in masks:
        cnt = cells.bit_count()
        if k < cnt:
            while True:
                low = cells & -cells
                if not k:
                    return p, low.bit_length() - 1, i
                cells ^= low
                k -= 1
        k -= cnt
    raise AssertionError("unreachable")
