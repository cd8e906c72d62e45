"""Moves and their notation (RULES.md §7): ``5R@d2`` places a piece, ``pass`` passes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from jericho_game.errors import IllegalMoveError
from jericho_game.pieces import Piece, parse_piece

__all__ = ["Move", "PASS", "parse_move"]


@dataclass(frozen=True, slots=True)
class Move:
    """A placement of ``piece`` on ``cell`` (a cell name), or a pass when both are ``None``.

    The cell name is stored in lower case; any other field types raise
    :class:`IllegalMoveError` (``Move(piece, None)`` is not a pass: write :data:`PASS`).

    ``str(move)`` is the notation of RULES.md §7.  Moves are plain values: two moves
    with the same piece and cell are equal.  Whether a move is legal depends on the
    game it is played in.
    """

    piece: Piece | None
    cell: str | None

    def __post_init__(self) -> None:
        # Checked once at construction (the engine builds its moves once), so that a
        # hand-made Move can never reach the engine with the wrong types.
        if self.piece is None and self.cell is None:
            return
        if not isinstance(self.piece, Piece):
            shown = repr(self.piece)
            raise IllegalMoveError(f"malformed move: piece must be a Piece (e.g. Piece.parse('5R')), not {shown}")
        if not isinstance(self.cell, str):
            raise IllegalMoveError(f"malformed move: cell must be a cell name such as 'd2', not {self.cell!r}")
        cell = self.cell.strip().lower()
        if cell != self.cell:
            object.__setattr__(self, "cell", cell)

    def __repr__(self) -> str:
        return "PASS" if self.piece is None else f"Move.parse({str(self)!r})"

    @property
    def is_pass(self) -> bool:
        """True for the pass move."""
        return self.piece is None

    def __str__(self) -> str:
        if self.piece is None:
            return "pass"
        return f"{self.piece}@{self.cell}"

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse notation; see :func:`parse_move`."""
        return parse_move(text)


PASS = Move(None, None)

_MOVE_RE = re.compile(r"^\s*([^@\s]*)\s*@\s*([^@\s]*)\s*$")


def parse_move(text: str) -> Move:
    """Parse ``"5R@d2"`` or ``"pass"`` (any letter case, surrounding spaces).

    Only the syntax is checked here; whether the cell exists on the board and the
    move is legal is for :meth:`jericho_game.Game.play` to decide.  Raises
    :class:`IllegalMoveError` naming what is malformed.
    """
    if not isinstance(text, str):
        raise IllegalMoveError(f"a move must be text or a Move, not {type(text).__name__}")
    if text.strip().lower() == "pass":
        return PASS
    m = _MOVE_RE.match(text)
    if m is None:
        shown = text.strip() or "(empty)"
        raise IllegalMoveError(f"malformed move {shown!r}: expected a piece, '@' and a cell, e.g. 5R@d2, or 'pass'")
    piece_text, cell_text = m.groups()
    try:
        piece = parse_piece(piece_text)
    except ValueError as exc:
        raise IllegalMoveError(f"malformed move {text.strip()!r}: {exc}") from None
    cell = cell_text.lower()
    if not re.fullmatch(r"[a-z][0-9]+", cell):
        raise IllegalMoveError(f"malformed move {text.strip()!r}: {cell_text!r} is not a cell name like c2")
    return Move(piece, cell)
