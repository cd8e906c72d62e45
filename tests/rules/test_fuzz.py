"""Fuzzing the entry points that take outside input: only the documented errors may escape.

``Game.from_position`` raises :class:`PositionError`, ``parse_move`` / ``Game.play``
raise :class:`IllegalMoveError`, ``read_record`` raises :class:`RecordError`; never
``IndexError``, ``KeyError``, ``AttributeError``, ``TypeError`` or a bare ``ValueError``
(and never a hang).  A failed call leaves the game exactly as it was.
"""

from __future__ import annotations

import doctest
import importlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jericho_game import (
    PIECES,
    Game,
    IllegalMoveError,
    Move,
    Piece,
    PositionError,
    RecordError,
    parse_move,
    parse_piece,
)
from jericho_game.record import read_record, read_records, write_record

settings.register_profile("jericho-fuzz", deadline=None, max_examples=250)
FUZZ = settings.get_profile("jericho-fuzz")

GAME = Game.from_moves("5R@d2 1G@d3 2Y@d3 4B@c1 3W@e3")
POSITION = GAME.position()
RECORD = write_record(GAME, {"Event": 'quote " and \\ slash', "Date": "2026.11.29"})
FROM_POSITION_RECORD = write_record(Game.from_position(Game.from_moves("5R@d2 1G@d3").position()))

# characters the formats use, plus some that python's str methods treat specially
_SPECIAL = list(' \t\n\r:,-*@[]{};"\\.0123456789RYGBWrygbwabcdefg') + ["ß", "²", "\u0661", "\x00", "\u2028", "\ufeff"]


@st.composite
def mutated(draw: st.DrawFn, base: str) -> str:
    """``base`` with a few characters replaced, inserted or deleted."""
    chars = list(base)
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(chars)))
        op = draw(st.sampled_from(["set", "insert", "delete", "cut"]))
        ch = draw(st.one_of(st.sampled_from(_SPECIAL), st.characters()))
        if op == "set" and i < len(chars):
            chars[i] = ch
        elif op == "insert":
            chars.insert(i, ch)
        elif op == "delete" and i < len(chars):
            del chars[i]
        elif op == "cut":
            del chars[i:]
    return "".join(chars)


# -- positions ---------------------------------------------------------------------------


@FUZZ
@given(st.one_of(mutated(POSITION), mutated("- - - south - 0 *"), st.text(max_size=80)))
def test_from_position_raises_only_position_error(text: str) -> None:
    try:
        game = Game.from_position(text)
    except PositionError as exc:
        assert str(exc)
        return
    # whatever was accepted is a state the engine can round-trip and play on
    assert Game.from_position(game.position()).position() == game.position()
    moves = game.legal_moves()
    if moves:
        game.play(moves[0])
        game.undo()


@pytest.mark.parametrize("value", [None, 3, b"- - - south - 0 *", ["-"], object()])
def test_from_position_rejects_non_text(value: Any) -> None:
    with pytest.raises(PositionError, match="must be text"):
        Game.from_position(value)


# -- moves -------------------------------------------------------------------------------


@FUZZ
@given(st.one_of(mutated("5R@d2"), mutated("pass"), st.text(max_size=20)))
def test_parse_move_and_play_raise_only_illegal_move_error(text: str) -> None:
    try:
        move = parse_move(text)
    except IllegalMoveError:
        move = None
    game = GAME.copy()
    before = game.position()
    try:
        game.play(text)
    except IllegalMoveError as exc:
        assert str(exc)
        assert game.position() == before
        assert game.why_illegal(text) == str(exc)
        assert not game.is_legal(text)
    else:
        assert move is not None and game.last_move == move


def stable_id(value: Any) -> str:
    """A parameter's test id: its repr, except a bare object's (an address, different in each
    process, which pytest-xdist's workers would disagree on)."""
    return "object()" if type(value) is object else repr(value)


ODD_MOVES: list[Any] = [None, 3, 3.5, True, b"5R@d2", ["5R@d2"], {"piece": "5R"}, object(), PIECES[0], "5R", Game]


@pytest.mark.parametrize("value", ODD_MOVES, ids=stable_id)
def test_play_with_odd_types_raises_illegal_move_error(value: Any) -> None:
    game = GAME.copy()
    before = game.position()
    with pytest.raises(IllegalMoveError):
        game.play(value)
    assert game.position() == before
    assert game.is_legal(value) is False
    assert isinstance(game.why_illegal(value), str)


@pytest.mark.parametrize("value", [None, 3, object()], ids=stable_id)
def test_from_moves_rejects_what_is_not_a_list_of_moves(value: Any) -> None:
    with pytest.raises(IllegalMoveError, match="moves must be a list"):
        Game.from_moves(value)
    with pytest.raises(IllegalMoveError, match="not a move"):
        Game.from_moves([None])
    with pytest.raises(IllegalMoveError, match="not a move"):
        Game.from_moves(b"5R@d2")  # bytes iterate as ints
    assert Game.from_moves(iter(["5R@d2"])).history == [Move.parse("5R@d2")]  # any iterable


@pytest.mark.parametrize("value", [None, 3, b"5R@d2", ["5R@d2"], object()], ids=stable_id)
def test_parse_move_and_parse_piece_reject_non_text(value: Any) -> None:
    with pytest.raises(IllegalMoveError, match="must be text"):
        parse_move(value)
    with pytest.raises(ValueError, match="must be text"):
        parse_piece(value)


@pytest.mark.parametrize(
    ("piece", "cell", "words"),
    [
        ("5R", "d2", "piece must be a Piece"),  # a string where a Piece belongs
        (PIECES[24], 5, "cell must be a cell name"),
        (PIECES[24], ["d2"], "cell must be a cell name"),  # unhashable: used to be a TypeError in play()
        (PIECES[24], None, "cell must be a cell name"),  # half a pass
        (None, "d2", "piece must be a Piece"),  # used to be played as a pass
    ],
)
def test_hand_made_moves_with_wrong_fields_are_rejected(piece: Any, cell: Any, words: str) -> None:
    with pytest.raises(IllegalMoveError, match=words):
        Move(piece, cell)


def test_hand_made_move_cell_is_normalised_and_playable() -> None:
    move = Move(Piece(5, "R"), " D2 ")
    assert move == Move.parse("5R@d2") and move.cell == "d2"
    game = Game()
    assert game.play(move) == Move.parse("5R@d2")


@pytest.mark.parametrize(("size", "colour"), [(0, "R"), (6, "R"), (True, "R"), (2.0, "R"), ("2", "R"), (2, "X")])
def test_pieces_outside_the_set_are_rejected(size: Any, colour: Any) -> None:
    with pytest.raises(ValueError):
        Piece(size, colour)


def test_reprs_rebuild_the_value() -> None:
    move = Move.parse("5R@d2")
    namespace = {"Move": Move, "Piece": Piece, "PASS": Move(None, None), "Game": Game}
    assert eval(repr(move), namespace) == move  # noqa: S307 - our own repr
    assert eval(repr(PIECES[7]), namespace) == PIECES[7]  # noqa: S307
    assert eval(repr(Move(None, None)), namespace) == Move(None, None)  # noqa: S307
    rebuilt = eval(repr(GAME), namespace)  # noqa: S307
    assert rebuilt.position() == GAME.position() and rebuilt is not GAME


# -- records -----------------------------------------------------------------------------


@FUZZ
@given(
    st.one_of(
        mutated(RECORD),
        mutated(FROM_POSITION_RECORD),
        mutated('[Event "x"]\n'),
        st.binary(max_size=200),
        mutated(RECORD).map(lambda t: t.encode("utf-8", "surrogatepass")),
    )
)
def test_read_record_raises_only_record_error(data: str | bytes) -> None:
    for read in (read_record, read_records):
        try:
            read(data)
        except RecordError as exc:
            assert exc.line >= 0 and exc.column >= 0 and str(exc)


# -- the examples in docstrings are true ----------------------------------------------------


@pytest.mark.parametrize(
    "module", ["jericho_game", "jericho_game.game", "jericho_game.moves", "jericho_game.pieces", "jericho_game.record"]
)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0
