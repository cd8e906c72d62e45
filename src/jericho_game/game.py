"""The :class:`Game`: the public face of the rules engine (RULES.md §3–§6)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from jericho_game.board import Topology, standard_topology
from jericho_game.core import DRAW, NO_OUTCOME, State, Tables, tables_for
from jericho_game.errors import IllegalMoveError
from jericho_game.kernel import is_c_state, new_state
from jericho_game.moves import Move, parse_move
from jericho_game.pieces import PIECES, Piece, Side
from jericho_game.strength import compare_towers

__all__ = ["Game", "Confrontation", "Outcome"]

Outcome = str  # "south", "north" or "draw"

_SIDES = (Side.SOUTH, Side.NORTH)


@lru_cache(maxsize=1 << 14)
def _pieces(code: int) -> tuple[Piece, ...]:
    # the pieces of a kernel tower code (5 bits a piece, the bottom one lowest), bottom to top;
    # cached: a web server names the same towers over and over
    out = []
    while code:
        out.append(PIECES[(code & 31) - 1])
        code >>= 5
    return tuple(out)


@lru_cache(maxsize=1 << 14)
def _verdict(south: int, north: int) -> str:
    # compare_towers for two champions' tower codes, cached for the same reason
    return compare_towers(_pieces(south), _pieces(north), "South", "North")


@dataclass(frozen=True)
class Confrontation:
    """How one alignment is settled (RULES.md §5), for explaining the board to a player.

    ``south`` / ``north`` are the champions' cells (``None`` when that side has no
    tower on the alignment); ``leader`` is who holds the monolith; ``reason`` says why
    in words, naming the deciding comparison.
    """

    alignment: str
    south: str | None
    north: str | None
    south_tower: tuple[Piece, ...]
    north_tower: tuple[Piece, ...]
    leader: Side | None
    reason: str


class Game:
    """A game of Jericho from the start (or from a position), with undo.

    >>> g = Game()
    >>> g.play("5R@d2"), g.play("1G@d3")
    (Move.parse('5R@d2'), Move.parse('1G@d3'))
    >>> g.leaders()["d"] == "south", g.score()
    (True, (1, 0))

    Moves are given as :class:`Move` objects or notation text.  Every illegal or
    malformed move raises :class:`IllegalMoveError` naming the reason, and leaves the
    game untouched.  Search code that needs speed uses :attr:`state`
    (a :class:`jericho_game.core.State`), see ``docs/engine.md``.

    Games are mutable and compare by identity (no ``==`` on content: two games with the
    same position may have different histories); compare ``a.position() == b.position()``.
    """

    def __init__(self, topology: Topology | None = None) -> None:
        self._tables: Tables = tables_for(topology or standard_topology())
        self._state = new_state(self._tables)
        self._checked = is_c_state(self._state)
        self._history: list[Move] = []
        self._start: str | None = None  # position text when not the standard start

    # -- construction ----------------------------------------------------------------
    @classmethod
    def from_position(cls, text: str, topology: Topology | None = None) -> Game:
        """A game starting at a position written by :meth:`position` (see docs/notation.md).

        Raises :class:`jericho_game.PositionError` naming the bad field.
        """
        from jericho_game.position import parse_position

        game = cls(topology)
        parse_position(text, game._tables, game._state)
        game._start = game.position()
        return game

    @classmethod
    def from_moves(cls, moves: Iterable[str | Move] | str, topology: Topology | None = None) -> Game:
        """A game after playing ``moves`` (any iterable of moves, or one string of space-separated moves).

        Raises :class:`IllegalMoveError` for the first bad move (or when ``moves`` is neither).
        """
        game = cls(topology)
        items: list[str | Move]
        if isinstance(moves, str):
            items = list(moves.split())
        else:
            try:
                items = list(moves)
            except TypeError:
                kind = type(moves).__name__
                raise IllegalMoveError(f"moves must be a list of moves or one string of moves, not {kind}") from None
        for m in items:
            game.play(m)
        return game

    def copy(self) -> Game:
        """An independent copy, history included."""
        g = Game.__new__(Game)
        g._tables = self._tables
        g._state = self._state.copy(with_history=True)
        g._checked = self._checked
        g._history = self._history[:]
        g._start = self._start
        return g

    # -- reading the state -----------------------------------------------------------
    @property
    def topology(self) -> Topology:
        """The board this game is played on."""
        return self._tables.topology

    @property
    def state(self) -> State:
        """The integer kernel state (read-only use; for search code, see docs/engine.md)."""
        return self._state

    @property
    def tables(self) -> Tables:
        """Precomputed board tables shared with :attr:`state`."""
        return self._tables

    @property
    def turn(self) -> Side:
        """The side to move (also after the game ended: whoever would move next)."""
        return _SIDES[self._state.turn]

    @property
    def history(self) -> list[Move]:
        """The moves played since the start (or since :meth:`from_position`), oldest first."""
        return self._history[:]

    @property
    def start_position(self) -> str | None:
        """The position text this game started from, or ``None`` for the standard start."""
        return self._start

    @property
    def last_move(self) -> Move | None:
        """The most recent move, or ``None`` before the first."""
        return self._history[-1] if self._history else None

    def legal_moves(self) -> Sequence[Move]:
        """Every legal move: exactly ``[PASS]`` when passing is forced, ``[]`` once the game is over.

        A read-only snapshot of this position's moves (it does not change when the game
        does), equal to the list of the same moves; ``list(...)`` gives a list to edit.  With
        the C kernel it is a lazy sequence, so that ``len`` and indexing cost no list.
        """
        return self._state.legal_moves()

    def is_legal(self, move: Move | str) -> bool:
        """Whether a move (object or notation) is legal now; never raises."""
        try:
            code = self._code(move)
        except IllegalMoveError:
            return False
        return self._state.is_legal(code)

    def leaders(self) -> dict[str, Side | None]:
        """Alignment name → ``"south"``, ``"north"`` or ``None`` (who holds its monolith)."""
        names = self._tables.align_names
        return {names[a]: (_SIDES[x] if x >= 0 else None) for a, x in enumerate(self._state.leader)}

    def score(self) -> tuple[int, int]:
        """Monoliths held: ``(south, north)``."""
        return self._state.score[0], self._state.score[1]

    def outcome(self) -> str | None:
        """``None`` while the game goes on, else ``"south"``, ``"north"`` or ``"draw"``."""
        o = self._state.outcome
        if o == NO_OUTCOME:
            return None
        return "draw" if o == DRAW else str(_SIDES[o])

    def is_over(self) -> bool:
        """True once the game has ended."""
        return self._state.outcome != NO_OUTCOME

    def tower(self, cell: str) -> list[Piece]:
        """The pieces on ``cell``, bottom to top (empty list for an empty cell).

        Like a mapping lookup, an unknown cell name raises ``KeyError`` naming it.
        """
        return list(_pieces(self._state.code[self._cell(cell)]))

    def towers(self) -> dict[str, list[Piece]]:
        """Every cell name (board order) → its tower, bottom to top."""
        return {c.name: self.tower(c.name) for c in self.topology.cells}

    def reserve(self, side: Side | str) -> list[Piece]:
        """The pieces ``side`` has not placed yet, by size then colour.

        ``side`` is a :class:`Side` or ``"south"`` / ``"north"``; anything else raises ``ValueError``.
        """
        mask = self._state.reserve[Side(side).number]
        return [p for i, p in enumerate(PIECES) if mask >> i & 1]

    def seven_threat(self) -> Side | None:
        """The side that holds 7+ monoliths right now (it wins unless the mover breaks that)."""
        s, n = self._state.score
        if s >= 7:
            return Side.SOUTH
        if n >= 7:
            return Side.NORTH
        return None

    def confrontation(self, alignment: str) -> Confrontation:
        """Champions and verdict of one alignment, with the deciding comparison in words.

        An unknown alignment name raises ``KeyError`` naming it.
        """
        t = self._tables
        try:
            a = t.align_names.index(alignment)
        except ValueError:
            raise KeyError(f"unknown alignment {alignment!r}") from None
        champs: list[str | None] = []
        codes: list[int] = []  # the champions' tower codes (0: no champion)
        st = self._state
        keys, code = st.key, st.code  # one read each: the C state's list attributes are fresh copies
        for cells in (t.align_south[a], t.align_north[a]):
            best = max(cells, key=keys.__getitem__)
            if keys[best]:
                champs.append(t.cell_names[best])
                codes.append(code[best])
            else:
                champs.append(None)
                codes.append(0)
        x = st.leader[a]
        leader = _SIDES[x] if x >= 0 else None
        if champs[0] is None and champs[1] is None:
            reason = "no tower on this alignment: nobody leads"
        elif champs[0] is None or champs[1] is None:
            who = "South" if champs[0] is None else "North"
            reason = f"{who} has no tower on this alignment: nobody leads"
        else:
            reason = _verdict(codes[0], codes[1])
        return Confrontation(alignment, champs[0], champs[1], _pieces(codes[0]), _pieces(codes[1]), leader, reason)

    # -- playing -----------------------------------------------------------------------
    def play(self, move: Move | str) -> Move:
        """Play a move (object or notation); returns the :class:`Move` played.

        Raises :class:`IllegalMoveError` naming the reason; the game is then unchanged.
        """
        t = self._tables
        code = t.object_code.get(id(move))  # fast path: an interned Move from legal_moves()
        if code is None or t.move_objects[code] is not move:
            code = self._code(move)
        state = self._state
        if self._checked:  # the C kernel's push checks legality itself (and changes nothing if illegal)
            try:
                state.push(code)
            except ValueError:
                raise IllegalMoveError(self._why_illegal(code)) from None
        else:
            if not state.is_legal(code):
                raise IllegalMoveError(self._why_illegal(code))
            state.push(code)
        played = t.move_objects[code]
        self._history.append(played)
        return played

    push = play

    def undo(self) -> Move:
        """Take back the last move and return it; raises ``IndexError`` when there is none."""
        if not self._history:
            raise IndexError("nothing to undo: no move has been played")
        self._state.pop()
        return self._history.pop()

    pop = undo

    def why_illegal(self, move: Move | str) -> str | None:
        """The reason a move is illegal, or ``None`` if it is legal."""
        try:
            code = self._code(move)
        except IllegalMoveError as exc:
            return str(exc)
        if self._state.is_legal(code):
            return None
        return self._why_illegal(code)

    def position(self) -> str:
        """The one-line position text (grammar in docs/notation.md); see :meth:`from_position`."""
        from jericho_game.position import format_position

        return format_position(self._tables, self._state)

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Pickled as its start and its moves: compact, and independent of the kernel in use
        # (a C kernel state is not picklable by itself).
        return (_restore, (self._start, [str(m) for m in self._history], self._tables.topology))

    def __repr__(self) -> str:
        # An expression that rebuilds the position (not the history).
        return f"Game.from_position({self.position()!r})"

    # -- helpers -----------------------------------------------------------------------
    def _cell(self, name: str) -> int:
        c = self._tables.cell_index.get(name.strip().lower()) if isinstance(name, str) else None
        if c is None:
            raise KeyError(f"unknown cell {name!r}")
        return c

    def _code(self, move: Move | str) -> int:
        # Fast path: the interned Move objects handed out by legal_moves().
        code = self._tables.object_code.get(id(move))
        if code is not None and self._tables.move_objects[code] is move:
            return code
        if isinstance(move, str):
            move = parse_move(move)
        elif not isinstance(move, Move):
            raise IllegalMoveError(f"not a move: {move!r} (give a Move or notation such as 5R@d2)")
        if move.piece is None:
            return self._tables.pass_code
        code = self._tables.move_code.get((move.piece.index, move.cell or ""))
        if code is None:
            cells = " ".join(c.name for c in self.topology.cells)
            raise IllegalMoveError(f"unknown cell {move.cell!r} in {move}: the cells are {cells}")
        return code

    def _why_illegal(self, code: int) -> str:
        s = self._state
        t = self._tables
        if s.outcome != NO_OUTCOME:
            res = self.outcome()
            won = "it was drawn" if res == "draw" else f"{res} won"
            return f"the game is over ({won}): no more moves"
        mover = _SIDES[s.turn]
        if code == t.pass_code:
            example = t.move_objects[s.legal_codes()[0]]
            return f"{mover} cannot pass: a placement is available (e.g. {example})"
        p, c = divmod(code, t.n_cells)
        move = t.move_objects[code]
        cell = t.cell_names[c]
        piece = PIECES[p]
        if not s.reserve[s.turn] >> p & 1:
            return f"{move}: piece {piece} is not in {mover}'s reserve (already placed)"
        if s.height[c] >= 4:
            return f"{move}: tower full, the tower on {cell} already has 4 pieces"
        tower = self.tower(cell)
        for q in tower:
            if q.size == piece.size:
                return f"{move}: size clash, the tower on {cell} already holds a size-{piece.size} piece ({q})"
        for q in tower:
            if q.colour == piece.colour:
                colour = piece.colour.full_name
                return f"{move}: colour clash, the tower on {cell} already holds a {colour} piece ({q})"
        if p == s.last_piece and s.forbidden_copy_cells() >> c & 1:
            copied = t.move_objects[s.last_piece * t.n_cells + s.last_cell]
            shared = sorted(
                set(t.align_names[a] for a in t.through[c]) & set(t.align_names[a] for a in t.through[s.last_cell])
            )
            return (
                f"{move}: asymmetry rule, it copies {mover.other}'s {copied} "
                f"(same piece, identical tower, on shared alignment {', '.join(shared)})"
            )
        raise AssertionError(f"move {move} is illegal for no known reason")  # pragma: no cover


def _restore(start: str | None, moves: list[str], topology: Topology) -> Game:
    """Rebuild a pickled :class:`Game` (see ``Game.__reduce__``)."""
    game = Game.from_position(start, topology) if start is not None else Game(topology)
    for m in moves:
        game.play(m)
    return game
