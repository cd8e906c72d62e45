"""Sides, colours and pieces, with their notation (RULES.md §1 and §7)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Side", "Colour", "Piece", "PIECES", "SIZES", "COLOURS", "parse_piece"]


class Side(StrEnum):
    """A player.  Compares equal to the strings ``"south"`` and ``"north"``."""

    SOUTH = "south"
    NORTH = "north"

    @property
    def other(self) -> Side:
        """The opponent."""
        return Side.NORTH if self is Side.SOUTH else Side.SOUTH

    @property
    def number(self) -> int:
        """0 for South, 1 for North (the engine's internal numbering)."""
        return 0 if self is Side.SOUTH else 1


class Colour(StrEnum):
    """The five piece colours, named by their notation letter."""

    R = "R"
    Y = "Y"
    G = "G"
    B = "B"
    W = "W"

    @property
    def full_name(self) -> str:
        """The colour's English name (``"red"`` ...)."""
        return {"R": "red", "Y": "yellow", "G": "green", "B": "blue", "W": "white"}[self.value]


SIZES: tuple[int, ...] = (1, 2, 3, 4, 5)
COLOURS: tuple[Colour, ...] = tuple(Colour)
_COLOUR_POS = {c: i for i, c in enumerate(COLOURS)}


@dataclass(frozen=True, slots=True)
class Piece:
    """A cylinder: a size 1–5 and a colour.  ``str(piece)`` is its notation, e.g. ``"3G"``.

    ``Piece(3, "G")`` and ``Piece(3, Colour.G)`` are the same piece; a size outside 1–5
    or an unknown colour raises ``ValueError``.

    Both players own the same 25 pieces, so a piece carries no side.  ``index`` is
    ``(size - 1) * 5 + colour position``, the engine's bit number for the piece.
    """

    size: int
    colour: Colour

    def __post_init__(self) -> None:
        if type(self.size) is not int or not 1 <= self.size <= 5:
            raise ValueError(f"no piece of size {self.size!r}: sizes run 1-5")
        if not isinstance(self.colour, Colour):
            try:
                object.__setattr__(self, "colour", Colour(self.colour))
            except ValueError:
                raise ValueError(f"unknown colour {self.colour!r}: colours are R, Y, G, B, W") from None

    def __repr__(self) -> str:
        return f"Piece.parse({str(self)!r})"

    @property
    def index(self) -> int:
        """Position 0–24 of this piece in :data:`PIECES`."""
        return (self.size - 1) * 5 + _COLOUR_POS[self.colour]

    def __str__(self) -> str:
        return f"{self.size}{self.colour.value}"

    @classmethod
    def from_index(cls, index: int) -> Piece:
        """The piece with engine bit number ``index`` (0–24)."""
        return PIECES[index]

    @classmethod
    def parse(cls, text: str) -> Piece:
        """Parse notation such as ``"3G"`` (any case, surrounding spaces allowed)."""
        return parse_piece(text)


PIECES: tuple[Piece, ...] = tuple(Piece(s, c) for s in SIZES for c in COLOURS)
_BY_TEXT = {str(p): p for p in PIECES}


def parse_piece(text: str) -> Piece:
    """Parse a piece's notation; raise ``ValueError`` with the reason if it is not one."""
    if not isinstance(text, str):
        raise ValueError(f"a piece must be text such as 3G, not {type(text).__name__}")
    t = text.strip().upper()
    piece = _BY_TEXT.get(t)
    if piece is None:
        if len(t) == 2 and t[0].isdigit() and t[1] in "RYGBW":
            raise ValueError(f"no piece of size {t[0]}: sizes run 1-5")
        if len(t) == 2 and t[0] in "12345":
            raise ValueError(f"unknown colour {t[1]!r}: colours are R, Y, G, B, W")
        raise ValueError(f"malformed piece {text.strip()!r}: expected a size 1-5 and a colour R/Y/G/B/W, e.g. 3G")
    return piece
