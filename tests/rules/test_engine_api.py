"""The public engine API: names, errors that explain themselves, undo, positions."""

from __future__ import annotations

import json
import random

import pytest

import jericho_game
from jericho_game import (
    PASS,
    START_POSITION,
    Game,
    IllegalMoveError,
    Move,
    Piece,
    PositionError,
    Topology,
    TopologyError,
    parse_move,
    standard_topology,
)

# ---------------------------------------------------------------- moves and notation


@pytest.mark.parametrize(
    "text, expected",
    [("5R@d2", "5R@d2"), (" 5r@D2 ", "5R@d2"), ("3g @ c2", "3G@c2"), ("PASS", "pass"), (" pass ", "pass")],
)
def test_parse_move_accepts_any_case_and_spaces(text: str, expected: str) -> None:
    assert str(parse_move(text)) == expected


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "malformed move"),
        ("5R", "malformed move"),
        ("5R@", "not a cell name"),
        ("6R@d2", "no piece of size 6"),
        ("5X@d2", "unknown colour"),
        ("R5@d2", "malformed piece"),
        ("5R@d2@d3", "malformed move"),
        ("5R@22", "not a cell name"),
    ],
)
def test_malformed_moves_say_what_is_wrong(text: str, reason: str) -> None:
    with pytest.raises(IllegalMoveError, match=reason):
        parse_move(text)


def test_illegal_move_error_is_a_value_error() -> None:
    assert issubclass(IllegalMoveError, ValueError)
    assert issubclass(PositionError, ValueError)
    assert issubclass(jericho_game.RecordError, ValueError)


# ---------------------------------------------------------------- play() errors


def _fails(game: Game, move: str | object, reason: str) -> None:
    before = (game.position(), game.history, game.legal_moves())
    with pytest.raises(IllegalMoveError, match=reason):
        game.play(move)  # type: ignore[arg-type]
    assert (game.position(), game.history, game.legal_moves()) == before


def test_every_kind_of_illegal_move_names_its_reason() -> None:
    game = Game.from_moves("5R@a1 1G@c2 2Y@c2 3B@c2 4W@c2")
    _fails(game, "5R@h9", "unknown cell 'h9'")
    _fails(game, "5R@d1", "unknown cell 'd1'")
    _fails(game, "nonsense", "malformed move")
    _fails(game, 42, "not a move")
    _fails(game, "1G@a3", "piece 1G is not in north's reserve")
    game2 = Game.from_moves("5R@a1")
    _fails(game2, "5R@a3", "asymmetry rule.*5R@a1")
    _fails(game, "5Y@c2", "tower full")
    _fails(Game.from_moves("3G@c2"), "3R@c2", "size clash")
    _fails(Game.from_moves("3G@c2"), "1G@c2", "colour clash")
    _fails(Game(), "pass", "cannot pass")


def test_game_over_rejects_moves() -> None:
    from tests.conftest import load_conformance

    record = load_conformance()[0]
    game = Game.from_moves(record["moves"])
    assert game.is_over() and game.legal_moves() == []
    _fails(game, "1R@a1", "game is over")
    _fails(game, PASS, "game is over")


def test_piece_not_in_reserve() -> None:
    game = Game.from_moves("5R@a1 1G@g4")
    _fails(game, "5R@b1", "piece 5R is not in south's reserve")


def test_why_illegal_and_is_legal_never_raise() -> None:
    game = Game()
    assert game.why_illegal("5R@d2") is None and game.is_legal("5R@d2")
    assert "unknown cell" in (game.why_illegal("5R@z9") or "")
    assert not game.is_legal("garbage")


def test_play_accepts_moves_and_text_and_returns_the_move() -> None:
    game = Game()
    move = game.legal_moves()[0]
    assert game.play(move) == move
    assert game.play("1y@G4") == Move(Piece.parse("1Y"), "g4")
    assert game.play(Move(Piece.parse("2B"), "a1")) == parse_move("2B@a1")
    assert [str(m) for m in game.history] == [str(move), "1Y@g4", "2B@a1"]


# ---------------------------------------------------------------- undo, copy


def test_undo_to_the_start_and_beyond() -> None:
    game = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    assert str(game.undo()) == "2Y@d3"
    assert game.leaders()["d"] == "south"
    game.undo()
    game.undo()
    assert game.position() == START_POSITION == Game().position()
    with pytest.raises(IndexError, match="nothing to undo"):
        game.undo()


def test_copy_is_independent() -> None:
    game = Game.from_moves("5R@d2")
    twin = game.copy()
    twin.play("1G@d3")
    assert game.history == [parse_move("5R@d2")] and len(twin.history) == 2
    twin.undo()
    assert twin.position() == game.position()


# ---------------------------------------------------------------- positions


def test_start_position_text() -> None:
    assert Game().position() == START_POSITION
    assert Game.from_position(START_POSITION).legal_moves() == Game().legal_moves()


@pytest.mark.parametrize(
    "text, field",
    [
        ("", "position has 0 fields"),
        ("- - - south - 0", "expected 7"),
        ("zz:1R " + START_POSITION.split(" ", 1)[1], "towers: unknown cell 'zz'"),
        ("a1 " + START_POSITION.split(" ", 1)[1], "towers: item 'a1'"),
        ("a1:1R1Y " + START_POSITION.split(" ", 1)[1], "towers: a1 holds two pieces of size 1"),
        ("a1:1R2R " + START_POSITION.split(" ", 1)[1], "towers: a1 holds two red pieces"),
        ("a1:1R2Y3G4B5W " + START_POSITION.split(" ", 1)[1], "at most 4"),
        ("a1:1R,a1:2Y " + START_POSITION.split(" ", 1)[1], "listed twice"),
        ("a1:1R " + START_POSITION.split(" ", 1)[1], "piece 1R appears 3 times"),
        ("- 1RR - south - 0 *", "south reserve: piece 1R is listed twice"),
        ("- 7R - south - 0 *", "south reserve: no size 7"),
        ("- 1Q - south - 0 *", "south reserve: unknown colour 'Q'"),
        (START_POSITION.replace("south", "east"), "turn: expected 'south' or 'north'"),
        (START_POSITION.replace(" 0 *", " 3 *"), "passes: expected 0, 1 or 2"),
        (START_POSITION.replace(" 0 *", " 0 won"), "result: expected"),
        (START_POSITION.replace(" 0 *", " 2 *"), "result: both players passed"),
        (START_POSITION.replace(" 0 *", " 0 south"), "cannot have won while holding 0"),
        (START_POSITION.replace(" - 0 *", " 5R@a1 0 *"), "last: 5R@a1 is not the top piece"),
    ],
)
def test_malformed_positions_name_the_bad_field(text: str, field: str) -> None:
    with pytest.raises(PositionError, match=field):
        Game.from_position(text)


def test_last_move_must_come_out_of_the_opponents_reserve() -> None:
    g = Game.from_moves("5R@a1")
    text = g.position()
    fields = text.split()
    fields[1], fields[2] = fields[2], fields[1]  # South's reserve still holds 5R
    with pytest.raises(PositionError, match="still in its reserve"):
        Game.from_position(" ".join(fields))


def test_seven_monolith_win_needs_the_winner_to_move() -> None:
    # A seven-monolith win is declared after the loser's turn, so the winner is the side to
    # move in every reachable finished position; the other turn is an impossible state.
    rng = random.Random(0)
    game = Game()
    while not game.is_over():
        game.play(rng.choice(game.legal_moves()))
    fields = game.position().split()
    assert fields[5] != "2" and fields[6] in ("south", "north")  # not an exhaustion end
    assert fields[3] == fields[6]
    assert Game.from_position(" ".join(fields)).outcome() == fields[6]
    fields[3] = "south" if fields[3] == "north" else "north"
    fields[4] = "-"  # the last move's check is not what this test is about
    with pytest.raises(PositionError, match="result: .* seven-monolith rule.* turn must be"):
        Game.from_position(" ".join(fields))


def test_position_grammar_example() -> None:
    g = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    assert g.position() == ("d2:5R,d3:1G2Y 1RYGBW2RGBW3RYGBW4RYGBW5YGBW 1RYBW2RYGBW3RYGBW4RYGBW5RYGBW north 2Y@d3 0 *")
    assert Game.from_position(g.position()).start_position == g.position()


# ---------------------------------------------------------------- topology


def _standard_data() -> dict:
    return standard_topology().to_dict()


def test_topology_round_trips_through_json() -> None:
    topo = Topology.from_json(json.dumps(_standard_data()))
    assert topo.to_dict() == _standard_data()


@pytest.mark.parametrize(
    "mutate, reason",
    [
        (lambda d: d["cells"].append(dict(d["cells"][0])), "cell names are not unique"),
        (lambda d: d["cells"].pop(), "camps differ in size"),
        (lambda d: d["alignments"][3].update(cells=["d2"]), "does not cross both camps"),
        (lambda d: d["alignments"][0].update(cells=["a1", "zz"]), "unknown cells"),
        (lambda d: d["alignments"].append({"name": "x", "kind": "vertical", "cells": ["a1", "b3"]}), "verticals"),
        (
            lambda d: d["alignments"].append({"name": "y", "kind": "rising diagonal", "cells": ["a1", "c3"]}),
            "diagonals",
        ),
        (lambda d: d["alignments"][0].update(kind="wobbly"), "unknown kind"),
        (lambda d: d["alignments"][0].update(cells=["a3", "a1", "a2", "a4"]), "South's end"),
        (lambda d: d["triangles"].pop(), "triangles"),
        (lambda d: d["alignments"].append(dict(d["alignments"][0])), "alignment names are not unique"),
        (lambda d: d.pop("cells"), "malformed topology"),
    ],
)
def test_validator_rejects_broken_boards(mutate, reason: str) -> None:  # type: ignore[no-untyped-def]
    data = _standard_data()
    mutate(data)
    with pytest.raises(TopologyError, match=reason):
        Topology.from_dict(data)


def test_topology_json_errors() -> None:
    with pytest.raises(TopologyError, match="not valid JSON"):
        Topology.from_json("{")
    with pytest.raises(TopologyError, match="must be an object"):
        Topology.from_json("[]")


def test_a_variant_board_is_a_data_change() -> None:
    """A small 3-column board: the engine plays it with no code change."""
    cells = [
        {"name": f"{c}{r}", "camp": "south" if r <= 2 else "north", "x": i, "y": r}
        for r in (1, 2, 3, 4)
        for i, c in enumerate("abc")
    ]
    aligns = [{"name": c, "kind": "vertical", "cells": [f"{c}{r}" for r in (1, 2, 3, 4)]} for c in "abc"]
    aligns.append({"name": "a1-c4", "kind": "rising diagonal", "cells": ["a1", "b2", "c4"]})
    topo = Topology.from_dict({"name": "mini", "cells": cells, "alignments": aligns})
    game = Game(topo)
    assert len(game.legal_moves()) == 25 * 12
    game.play("5R@b2")
    game.play("1G@c4")
    assert game.leaders() == {"a": None, "b": None, "c": None, "a1-c4": "south"}
    with pytest.raises(IllegalMoveError, match="unknown cell 'd2'"):
        game.play("1R@d2")
    again = Game.from_position(game.position(), topo)
    assert again.position() == game.position()


def test_confrontation_explains_the_leader() -> None:
    game = Game.from_moves("2R@a1 3Y@a3 4G@a2")
    c = game.confrontation("a")
    assert (c.south, c.north, c.leader) == ("a2", "a3", "south")
    assert "top piece size 4 beats 3" in c.reason
    with pytest.raises(KeyError):
        game.confrontation("zz")
    assert "nobody leads" in Game().confrontation("d").reason
