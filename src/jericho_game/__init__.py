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

The top level of this package is the rules library (pieces, board, moves, strength, core,
kernel and the C kernel, position, game, record, errors), which imports nothing else of the
project.  Around it, each in a package of its own (docs/architecture.md): :mod:`jericho_game.ai`
(players, search, the learned evaluator, arena, analysis, puzzles), :mod:`jericho_game.envs`
(research adapters), :mod:`jericho_game.web` (the web app) and :mod:`jericho_game.cli` (the
``jericho`` command and its programs).
"""

from jericho_game import _moved
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

_moved.install()  # old import paths (jericho_game.players, jericho_game.arena, ...) still work

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
