"""Jericho: the rules engine of Jean-Louis Roubira's strategy game, and tools around it.

The engine is pure Python with no dependencies::

    >>> import jericho
    >>> game = jericho.Game()
    >>> game.play("5R@d2")
    Move.parse('5R@d2')
    >>> game.turn
    <Side.NORTH: 'north'>

See ``docs/rules.md`` for the rules, ``docs/notation.md`` for notation, positions and
records, and ``docs/engine.md`` for the search interface (:mod:`jericho.core`).
"""

from jericho.board import Alignment, Cell, Topology, Triangle, standard_topology, validate
from jericho.errors import (
    IllegalMoveError,
    JerichoError,
    PositionError,
    RecordError,
    TopologyError,
)
from jericho.game import Confrontation, Game
from jericho.moves import PASS, Move, parse_move
from jericho.pieces import COLOURS, PIECES, SIZES, Colour, Piece, Side, parse_piece
from jericho.position import START_POSITION
from jericho.strength import compare_towers, strength

__version__ = "0.1.0"

__all__ = [
    "Alignment",
    "Cell",
    "COLOURS",
    "Colour",
    "Confrontation",
    "Game",
    "IllegalMoveError",
    "JerichoError",
    "Move",
    "PASS",
    "PIECES",
    "Piece",
    "PositionError",
    "RecordError",
    "SIZES",
    "Side",
    "START_POSITION",
    "Topology",
    "TopologyError",
    "Triangle",
    "compare_towers",
    "parse_move",
    "parse_piece",
    "standard_topology",
    "strength",
    "validate",
]
