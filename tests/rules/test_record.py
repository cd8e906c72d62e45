"""Game records (jericho_game.record): round trips and every kind of corrupt record."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jericho_game import Game, RecordError
from jericho_game.record import RESULTS, Record, read_record, read_records, result_token, write_record


def random_game(seed: int, max_plies: int | None = None) -> Game:
    game = Game()
    rng = random.Random(seed)
    while not game.is_over() and (max_plies is None or len(game.history) < max_plies):
        moves = game.legal_moves()
        game.play(moves[rng.randrange(len(moves))])
    return game


def finished_by(kind: str) -> Game:
    """The first seeded random game that ends by ``kind`` ("passes" or "seven")."""
    for seed in range(1000):
        game = random_game(seed)
        if (game.state.passes == 2) == (kind == "passes"):
            return game
    raise AssertionError(f"no random game ends by {kind}")  # pragma: no cover


def assert_same_game(a: Game, b: Game) -> None:
    assert [str(m) for m in a.history] == [str(m) for m in b.history]
    assert a.position() == b.position()
    assert a.start_position == b.start_position
    assert a.outcome() == b.outcome()


TAGS = {"Event": "Club night", "Site": "Lyon", "Date": "2026.11.29", "South": "Ada", "North": "Brice"}

# -- writing and round trips -----------------------------------------------------------


def test_written_form_of_the_worked_example() -> None:
    game = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    text = write_record(game, TAGS)
    assert text == (
        '[Event "Club night"]\n[Site "Lyon"]\n[Date "2026.11.29"]\n[South "Ada"]\n[North "Brice"]\n'
        '[Result "*"]\n\n1. 5R@d2 1G@d3 2. 2Y@d3 *\n'
    )
    record = read_record(text)
    assert record.tags == {**TAGS, "Result": "*"}
    assert [str(m) for m in record.moves] == ["5R@d2", "1G@d3", "2Y@d3"]
    assert record.game.leaders()["d"] == "north"
    assert record.to_text() == text


def test_roster_defaults_and_tag_order() -> None:
    text = write_record(Game(), {"Annotator": "me", "North": "N"})
    lines = text.splitlines()
    assert [line.split()[0] for line in lines[:7]] == [
        "[Event",
        "[Site",
        "[Date",
        "[South",
        "[North",
        "[Result",
        "[Annotator",
    ]
    assert '[North "N"]' in lines and '[Event "?"]' in lines
    record = read_record(text)
    assert record.tags["Annotator"] == "me"
    assert record.moves == [] and record.result == "*"


@pytest.mark.parametrize("kind", ["seven", "passes"])
def test_finished_game_round_trip(kind: str) -> None:
    game = finished_by(kind)
    text = write_record(game, TAGS)
    record = read_record(text)
    assert_same_game(record.game, game)
    assert record.result == result_token(game.outcome())
    assert record.ended_by_rules
    assert record.to_text() == text
    if kind == "passes":
        assert "pass pass" in text.replace("\n", " ")


def test_tag_values_with_quotes_backslashes_and_unicode_round_trip() -> None:
    tags = {"Event": 'The "big" one \\ final', "South": "Zoé", "Comment_2": "a [bracket] and {brace}"}
    text = write_record(Game.from_moves("5R@d2"), tags)
    assert '[Event "The \\"big\\" one \\\\ final"]' in text
    record = read_record(text)
    for name, value in tags.items():
        assert record.tags[name] == value


def test_from_position_start_with_north_to_move() -> None:
    base = random_game(7, max_plies=9)  # North to move
    start = Game.from_position(base.position())
    assert start.turn == "north"
    rng = random.Random(1)
    for _ in range(6):
        moves = start.legal_moves()
        start.play(moves[rng.randrange(len(moves))])
    text = write_record(start, TAGS)
    assert f'[Position "{base.position()}"]' in text
    assert "\n1... " in text and " 2. " in text
    record = read_record(text)
    assert record.tags["Position"] == base.position()
    assert_same_game(record.game, start)
    assert record.to_text() == text


def test_position_tag_is_normalised_on_reading() -> None:
    base = Game.from_moves("5R@d2")
    messy = base.position().upper().replace("SOUTH", "south").replace("NORTH", "North")
    text = f'[Position "{messy}"]\n\n1... 1G@d3 *\n'
    record = read_record(text)
    assert record.tags["Position"] == base.position()
    assert record.game.tower("d3")[0].size == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(0, 80), from_position=st.booleans())
def test_random_games_round_trip(seed: int, plies: int, from_position: bool) -> None:
    game = random_game(seed, max_plies=plies)
    if from_position:
        game = Game.from_position(game.position())
        rng = random.Random(seed + 1)
        for _ in range(10):
            moves = game.legal_moves()
            if not moves:
                break
            game.play(moves[rng.randrange(len(moves))])
    text = write_record(game, TAGS)
    record = read_record(text)
    assert_same_game(record.game, game)
    assert record.to_text() == text
    for line in text.splitlines():
        assert len(line) <= 79 or line.startswith("[")


def test_resignation_result_for_unfinished_game() -> None:
    game = Game.from_moves("5R@d2 1G@d3")
    text = write_record(game, {**TAGS, "Result": "0-1", "Termination": "resignation"})
    record = read_record(text)
    assert record.result == "0-1" and record.winner == "north"
    assert not record.ended_by_rules
    assert record.tags["Termination"] == "resignation"
    assert record.to_text() == text


def test_reader_is_lenient_about_layout() -> None:
    text = (
        "\ufeff; a line comment\n"
        '[ Event  "x" ]\n'
        "{a comment before the moves}\n"
        "1.5r@D2 {comment} 1... 1g@d3\n2.   2Y@d3 pass?"
    )
    with pytest.raises(RecordError):  # "pass?" is not a move
        read_record(text)
    record = read_record(text.replace("pass?", "*"))
    assert [str(m) for m in record.moves] == ["5R@d2", "1G@d3", "2Y@d3"]
    assert record.tags["Event"] == "x"
    crlf = write_record(Game.from_moves("5R@d2 1G@d3"), TAGS).replace("\n", "\r\n")
    assert read_record(crlf).tags["North"] == "Brice"
    # move numbers are optional
    assert read_record("5R@d2 1G@d3 *").game.score() == (1, 0)


def test_read_records_several_games() -> None:
    one = write_record(Game.from_moves("5R@d2"), {"Event": "one"})
    two = write_record(finished_by("seven"), {"Event": "two"})
    records = read_records(one + "\n" + two)
    assert [r.tags["Event"] for r in records] == ["one", "two"]
    assert records[1].result in ("1-0", "0-1")
    with pytest.raises(RecordError) as err:
        read_record(one + two)
    assert "text after the result token" in err.value.reason
    assert err.value.line == 9 and err.value.column == 1


def test_write_errors() -> None:
    finished = finished_by("seven")
    wrong = "0-1" if finished.outcome() == "south" else "1-0"
    with pytest.raises(RecordError, match="contradicts the game"):
        write_record(finished, {"Result": wrong})
    with pytest.raises(RecordError, match="bad Result"):
        write_record(Game(), {"Result": "2-0"})
    with pytest.raises(RecordError, match="line break"):
        write_record(Game(), {"Event": "a\nb"})
    with pytest.raises(RecordError, match="bad tag name"):
        write_record(Game(), {"bad name": "x"})
    with pytest.raises(RecordError, match="Position tag"):
        write_record(Game(), {"Position": Game.from_moves("5R@d2").position()})


def test_result_token_table() -> None:
    assert RESULTS == {"1-0": "south", "0-1": "north", "1/2-1/2": "draw", "*": None}
    assert [result_token(x) for x in ("south", "north", "draw", None)] == ["1-0", "0-1", "1/2-1/2", "*"]
    with pytest.raises(ValueError):
        result_token("east")


def test_record_dataclass_to_text() -> None:
    game = Game.from_moves("5R@d2")
    record = Record({"Event": "e", "Result": "*"}, game, game.history)
    assert read_record(record.to_text()).tags["Event"] == "e"


# -- corrupt records: (text, line, column, words in the message) ---------------------------

HEAD = '[Event "x"]\n[Result "*"]\n\n'

CORRUPT = [
    pytest.param("", 1, 1, "empty record", id="empty"),
    pytest.param("   \n\n", 3, 1, "empty record", id="blank"),
    pytest.param('[Event "x]\n1. 5R@d2 *\n', 1, 8, "closing quote is missing", id="tag-unclosed-quote"),
    pytest.param('[Event "x"\n1. 5R@d2 *\n', 1, 11, "expected ']'", id="tag-no-bracket"),
    pytest.param("[Event x]\n*\n", 1, 8, "quoted value", id="tag-unquoted"),
    pytest.param('[9Event "x"]\n*\n', 1, 2, "tag name", id="tag-bad-name"),
    pytest.param('[Event "a\\n"]\n*\n', 1, 11, "unknown escape", id="tag-bad-escape"),
    pytest.param('[Event "a"]\n[Event "b"]\n*\n', 2, 2, "duplicate tag", id="tag-duplicate"),
    pytest.param('[Result "2-0"]\n*\n', 1, 9, "bad Result tag", id="tag-bad-result"),
    pytest.param('[Position "- junk"]\n*\n', 1, 11, "bad Position tag", id="tag-bad-position"),
    pytest.param(HEAD + '1. 5R@d2 [Site "x"] *\n', 4, 10, "tag pair in the move text", id="tag-in-moves"),
    pytest.param(HEAD + "1. 5R@d1 *\n", 4, 4, "unknown cell 'd1'", id="unknown-cell"),
    pytest.param(HEAD + "1. 5R@d2 1G@d3 2. 5R@a1 *\n", 4, 19, "not in south's reserve", id="piece-not-in-reserve"),
    pytest.param(HEAD + "1. 5R@d2 5Y@d2 *\n", 4, 10, "size clash", id="size-clash"),
    pytest.param(HEAD + "1. 5R@d2 4R@d2 *\n", 4, 10, "colour clash", id="colour-clash"),
    pytest.param(HEAD + "1. 5R@d2 5R@d3 *\n", 4, 10, "asymmetry rule", id="asymmetry"),
    pytest.param(HEAD + "1. pass *\n", 4, 4, "cannot pass", id="pass-not-allowed"),
    pytest.param(HEAD + "1. 5R@d2 1G@d3\n", 5, 1, "truncated record", id="truncated"),
    pytest.param(HEAD + "1. 5R@d2 1G@", 4, 10, "malformed move", id="truncated-mid-move"),
    pytest.param(HEAD + "1. 5R@d2 1-0\n", 4, 10, 'disagrees with the Result tag "*"', id="result-vs-tag"),
    pytest.param(HEAD + "2. 5R@d2 *\n", 4, 1, "bad move number 2.", id="move-number-wrong"),
    pytest.param(HEAD + "1... 5R@d2 *\n", 4, 1, "numbered 1.", id="move-number-dots-for-south"),
    pytest.param(HEAD + "1. 5R@d2 1. 1G@d3 *\n", 4, 10, "numbered 1...", id="move-number-dot-for-north"),
    pytest.param(HEAD + "1. 2. 5R@d2 *\n", 4, 4, "two move numbers", id="move-number-twice"),
    pytest.param(HEAD + "1. 5R@d2 1G@d3 2. *\n", 4, 19, "followed by the result", id="move-number-then-result"),
    pytest.param(HEAD + "1. 5R@d2 hello *\n", 4, 10, "found 'hello'", id="garbage-word"),
    pytest.param(HEAD + "1. 5R@d2 } *\n", 4, 10, "unexpected '}'", id="garbage-brace"),
    pytest.param(HEAD + "1. 5R@d2 {never closed *\n", 4, 10, "unterminated comment", id="comment-unclosed"),
    # files cut off inside a tag pair (these used to loop forever: at the end of the text
    # peek() gives "", and "" is "in" any string)
    pytest.param("[", 1, 2, "found 'end of file'", id="truncated-after-bracket"),
    pytest.param("[ ", 1, 3, "found 'end of file'", id="truncated-after-bracket-space"),
    pytest.param("[Event", 1, 7, "found 'end of file'", id="cut-after-tag-name"),
    pytest.param('[Event "x"', 1, 11, "expected ']' after the value, found 'end of file'", id="cut-after-value"),
    pytest.param('[Event "x" ', 1, 12, "expected ']'", id="truncated-after-tag-value-space"),
    # a move number longer than int() accepts (4300 digits) is a bad move number, not a crash
    pytest.param(HEAD + "1. 5R@d2 " + "9" * 5000 + ". *\n", 4, 10, "bad move number", id="move-number-huge"),
    # only ASCII digits number moves ("\u0661" is ARABIC-INDIC DIGIT ONE, which int() reads as 1)
    pytest.param(HEAD + "\u0661. 5R@d2 *\n", 4, 1, "expected a move", id="move-number-not-ascii"),
]


@pytest.mark.parametrize(("text", "line", "column", "words"), CORRUPT)
def test_corrupt_records(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(RecordError) as err:
        read_record(text)
    assert (err.value.line, err.value.column) == (line, column), str(err.value)
    assert words in err.value.reason
    assert str(err.value).startswith(f"line {line}, column {column}: ")


def test_illegal_move_names_the_move_number_side_and_engine_reason() -> None:
    with pytest.raises(RecordError) as err:
        read_record(HEAD + "1. 5R@d2 1G@d3\n2. 2Y@d3 2Y@d3 *\n")
    assert (err.value.line, err.value.column) == (5, 10)
    assert "illegal move 2... 2Y@d3 by north" in err.value.reason
    assert "size clash" in err.value.reason


def test_result_token_contradicting_the_game() -> None:
    game = finished_by("seven")
    text = write_record(game, TAGS)
    right = result_token(game.outcome())
    for wrong in ("*", "1/2-1/2", "0-1" if right == "1-0" else "1-0"):
        bad = text.replace(f'[Result "{right}"]', f'[Result "{wrong}"]').rstrip("\n")
        assert bad.endswith(right)
        bad = bad[: -len(right)] + wrong + "\n"
        last_line = bad.rstrip("\n").splitlines()
        with pytest.raises(RecordError) as err:
            read_record(bad)
        assert "contradicts the game" in err.value.reason
        assert err.value.line == len(last_line)
        assert err.value.column == len(last_line[-1]) - len(wrong) + 1


def test_move_after_the_game_ended() -> None:
    game = finished_by("seven")
    text = write_record(game).rstrip("\n")
    right = result_token(game.outcome())
    bad = text[: -len(right)] + "5R@d2 " + right + "\n"
    with pytest.raises(RecordError) as err:
        read_record(bad)
    assert "the game is over" in err.value.reason


def test_non_utf8_bytes() -> None:
    with pytest.raises(RecordError) as err:
        read_record(b'[Event "x"]\n[Site "\xff"]\n*\n')
    assert (err.value.line, err.value.column) == (2, 8)
    assert "not UTF-8" in err.value.reason
    assert read_record(b"5R@d2 *").moves[0].cell == "d2"


# -- docs/notation.md stays true ---------------------------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "notation.md"


def test_notation_doc_examples() -> None:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```jgn\n(.*?)```", text, re.S)
    assert len(blocks) >= 2
    first = read_record(blocks[0])
    assert first.result == "0-1" and first.ended_by_rules and first.game.outcome() == "north"
    assert first.game.score() == (0, 8)
    for block in blocks[1:]:
        assert read_records(block)
    assert Game().position() in text
    assert Game.from_moves("5R@d2 1G@d3 2Y@d3").position() in text
    for token, meaning in (("1-0", "South won"), ("0-1", "North won"), ("1/2-1/2", "draw"), ("*", "unfinished")):
        assert f"| `{token}` | {meaning} |" in text


def test_move_labels_number_moves_as_the_move_text_does() -> None:
    """One numbering everywhere (issue 21): ``move_label`` gives each ply the number the record writes."""
    from jericho_game.record import move_label, move_number

    game = Game()
    rng = random.Random(7)
    while not game.is_over():
        game.play(rng.choice(game.legal_moves()))
    body = write_record(game).split("\n\n", 1)[1].split()
    numbers = [tok for tok in body if re.fullmatch(r"\d+\.", tok)]
    n = len(game.history)
    assert numbers == [move_label(k) for k in range(1, n + 1, 2)]
    assert [move_label(k) for k in (1, 2, 31, 32)] == ["1.", "1...", "16.", "16..."]
    assert move_number(47) == (24, "south")  # 47 plies are 24 numbered moves
    # from a position with North to move: 1... then 2.
    assert [move_label(k, "north") for k in (1, 2, 3)] == ["1...", "2.", "2..."]
    with pytest.raises(ValueError):
        move_number(0)
    with pytest.raises(ValueError):
        move_number(1, "east")


# -- variations (issue 21: the analysis board's export) ---------------------------------------------

VARIED = "1. 5R@d2 1G@d3 (1... 4B@c3 (1... 2W@c3) 2. 3W@e2) 2. 2Y@d3 {main} *"


def test_variations_are_read_beside_the_main_line() -> None:
    from jericho_game.record import Variation

    rec = read_record(VARIED)
    assert [str(m) for m in rec.moves] == ["5R@d2", "1G@d3", "2Y@d3"]  # the game is the main line
    (v,) = rec.variations
    assert v.ply == 2 and [str(m) for m in v.moves] == ["4B@c3", "3W@e2"]
    (w,) = v.variations
    assert w.ply == 2 and [str(m) for m in w.moves] == ["2W@c3"] and w.variations == []
    assert isinstance(v, Variation)
    # written back with the variations, it reads back the same; numbers are optional when reading
    text = rec.to_text()
    assert "1. 5R@d2 1G@d3 (1... 4B@c3 (1... 2W@c3) 2. 3W@e2) 2. 2Y@d3 *" in text
    again = read_record(text)
    assert again.variations == rec.variations and again.moves == rec.moves
    plain = read_record("5R@d2 1G@d3 (4B@c3 3W@e2) 2Y@d3 *")
    assert plain.variations[0].moves == v.moves
    # a record without variations is written exactly as before
    assert "(" not in read_record("1. 5R@d2 1G@d3 *").to_text()


def test_a_variation_after_a_north_move_and_from_a_position() -> None:
    rec = read_record("1. 5R@d2 1G@d3 2. 2Y@d3 (2. 4W@e2 3B@e3) 2... 3R@c2 *")
    assert rec.variations[0].ply == 3 and [str(m) for m in rec.variations[0].moves] == ["4W@e2", "3B@e3"]
    start = Game.from_moves(["5R@d2"]).position()
    text = f'[Position "{start}"]\n\n1... 1G@d3 (1... 4B@c3 2. 3W@e2) 2. 2Y@d3 *'
    rec = read_record(text)
    assert rec.variations[0].ply == 1 and read_record(rec.to_text()).variations == rec.variations


@pytest.mark.parametrize(
    ("text", "words", "col"),
    [
        ("( 5R@d2 ) *", "must follow the move it replaces", 1),
        ("1. 5R@d2 (1. 4B@c3 *", "before the ')' of the variation opened at line 1, column 10", 20),
        ("1. 5R@d2 (1. 4B@c3", "variation opened at line 1, column 10 has no ')'", 19),
        ("1. 5R@d2 ) *", "')' closes no variation", 10),
        ("1. 5R@d2 () *", "an empty variation", 11),
        ("1. 5R@d2 (1. 4B@c3 2. 1G@d3) *", "bad move number 2.: north's move here is numbered 1...", 20),
        ("1. 5R@d2 (1. 4B@c3 4B@c3) *", "illegal move 1... 4B@c3", 20),
        ("1. 5R@d2 (1.) *", "move number 1. is followed by ')'", 13),
    ],
)
def test_bad_variations_are_refused_with_line_and_column(text: str, words: str, col: int) -> None:
    with pytest.raises(RecordError) as exc:
        read_record(text)
    assert words in str(exc.value) and exc.value.column == col, str(exc.value)


def test_writing_a_variation_checks_its_moves() -> None:
    from jericho_game.moves import parse_move
    from jericho_game.record import Variation

    game = Game.from_moves(["5R@d2", "1G@d3"])
    ok = write_record(game, {}, [Variation(2, [parse_move("4B@c3")])])
    assert read_record(ok).variations[0].moves == [parse_move("4B@c3")]
    with pytest.raises(RecordError, match="illegal move 1... 5R@d2"):  # a second size 5 on d2
        write_record(game, {}, [Variation(2, [parse_move("5R@d2")])])
    with pytest.raises(RecordError, match="outside its line"):
        write_record(game, {}, [Variation(3, [parse_move("4B@c3")])])
    with pytest.raises(RecordError, match="empty variation"):
        write_record(game, {}, [Variation(2, [])])
