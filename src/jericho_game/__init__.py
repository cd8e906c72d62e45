"""Jericho: the rules engine of Jean-Louis Roubira's strategy game, and tools around it.

The engine is pure Python with no dependencies::

    >>> import jericho_game
    >>> game = jericho_game.Game()
    >>> game.play("5R@d2")
    Move.parse('5R@d2')
    >>> game.turn
    <Side.NORTH: 'north'>

See ``docs/rules.md`` for the rules, ``docs/notation.md`` for notation, positions and
records, and ``docs/engine.md`` for the search interface (:mod:`jericho_game.core`).
"""

from jericho_game.board import Alignment, Cell, Topology, Triangle, standard_topology, validate
from jericho_game.errors import (
    IllegalMoveError,
    JerichoError,
    PositionError,
    RecordError,
    TopologyError,
)
from jericho_game.game import Confrontation, Game
from jericho_game.moves import PASS, Move, parse_move
from jericho_game.pieces import COLOURS, PIECES, SIZES, Colour, Piece, Side, parse_piece
from jericho_game.position import START_POSITION
from jericho_game.strength import compare_towers, strength

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
