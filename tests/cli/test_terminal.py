"""Terminal play (jericho_game.cli.terminal): board drawing and whole scripted sessions."""

from __future__ import annotations

import io
import random
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from jericho_game import PASS, Game, Move, Side
from jericho_game.ai.random_player import RandomPlayer
from jericho_game.cli import main
from jericho_game.cli.terminal import (
    TerminalSession,
    colour_wanted,
    format_moves,
    format_reserve,
    format_tower,
    render_board,
    render_status,
)
from jericho_game.record import read_record


class Script:
    """An input function that replays lines (or asks a callback), then signals end of input."""

    def __init__(self, lines: Iterable[str | Callable[[], str]], out: io.StringIO) -> None:
        self.lines = list(lines)
        self.out = out
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        self.out.write(prompt)
        if not self.lines:
            raise EOFError
        item = self.lines.pop(0)
        line = item() if callable(item) else item
        self.out.write(line + "\n")
        return line


def play(lines: Iterable[str | Callable[[], str]], **kwargs: object) -> tuple[TerminalSession, int, str]:
    out = io.StringIO()
    script = Script(lines, out)
    session = TerminalSession(input_fn=script, out=out, **kwargs)  # type: ignore[arg-type]
    rc = session.run()
    text = out.getvalue()
    assert "Traceback" not in text
    return session, rc, text


def random_game(seed: int, stop: Callable[[Game], bool]) -> Game:
    """Play seeded random moves until ``stop(game)`` holds or the game ends."""
    game = Game()
    rng = random.Random(seed)
    while not game.is_over() and not stop(game):
        moves = game.legal_moves()
        game.play(moves[rng.randrange(len(moves))])
    return game


# -- drawing -------------------------------------------------------------------------------


def test_full_neighbouring_towers_stay_apart_when_one_is_the_last_move() -> None:
    # c3 and d3 full (4 pieces each), the last move on c3: a space must still separate them.
    game = Game.from_moves("1Y@d3 1R@c3 2R@d3 2Y@c3 3B@d3 3G@c3 4G@d3 4B@c3")
    board = render_board(game).splitlines()
    row3 = next(line for line in board if line.startswith(" 3 "))
    assert row3.split() == ["3", ".", ".", "1R2Y3G*4B*", "1Y2R3B[4G]", ".", ".", "."]


def test_last_placement_of_a_loaded_position_is_shown() -> None:
    # Loaded mid-game, no move played yet: the asymmetry rule still looks at North's 1G@a3,
    # so the board and the status must show it rather than "none yet".
    game = Game.from_position(Game.from_moves("5R@d2 1G@a3").position())
    assert not game.is_legal("1G@a2")  # the copy the rule forbids (empty cell, vertical a)
    status = render_status(game)
    assert "Last move: North 1G@a3" in status and "none yet" not in status
    row3 = next(line for line in render_board(game).splitlines() if line.startswith(" 3 "))
    assert "*1G*" in row3
    game.play("3B@a1")
    assert "Last move: South 3B@a1" in render_status(game)


def test_board_layout_north_on_top_and_missing_cells_blank() -> None:
    game = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    board = render_board(game).splitlines()
    rows = {line.split()[0]: i for i, line in enumerate(board) if line[:3].strip() in ("1", "2", "3", "4")}
    assert rows["4"] < rows["3"] < rows["2"] < rows["1"]
    centre = next(i for i, line in enumerate(board) if "centre" in line or "camp above" in line)
    assert rows["3"] < centre < rows["2"]
    d_col = board[rows["4"] - 1].index("d")  # the column header just above row 4
    assert board[rows["3"]][d_col - 4 : d_col + 4].strip() == "1G*2Y*"  # last move: its top piece starred
    assert board[rows["2"]][d_col - 4 : d_col + 4].strip() == "[5R]"
    assert board[rows["4"]][d_col - 3 : d_col + 4].strip() == ""  # d4 does not exist
    assert board[rows["1"]][d_col - 3 : d_col + 4].strip() == ""  # d1 does not exist
    # North leads d: its monolith is drawn above column d, on North's edge
    north_marks = board[rows["4"] - 2]
    assert north_marks.strip() == "N" and north_marks.index("N") == d_col
    assert "S" not in board[rows["1"] + 2]
    assert all(len(line) <= 80 for line in board)


def test_diagonal_monoliths_at_the_holders_corner() -> None:
    # South tower on a1 (diagonal a1-g4) beats North's single on g4: South leads a1-g4
    game = Game.from_moves("5R@a1 1G@g4 4Y@a1")
    assert game.leaders()["a1-g4"] == "south"
    board = render_board(game)
    last = board.splitlines()[-1]
    assert last.startswith("SW (South): a1-g4")
    assert "SE (South): -" in last
    status = render_status(game)
    assert "South holds: a1-g4" in status


def test_status_score_turn_last_move_and_reserves() -> None:
    game = Game.from_moves("5R@d2 1G@d3")
    status = render_status(game)
    assert "Score: South 1 - North 0" in status
    assert "Last move: North 1G@d3" in status
    assert "To move: South" in status
    assert "South reserve (24): 1 RYGBW  2 RYGBW  3 RYGBW  4 RYGBW  5 .YGBW" in status
    assert "North reserve (24): 1 RY.BW" in status
    assert format_reserve([]) == "1 .....  2 .....  3 .....  4 .....  5 ....."


def test_seven_warning() -> None:
    game = random_game(1, lambda g: g.seven_threat() is not None and g.seven_threat() == g.turn.other)
    threat = game.seven_threat()
    assert threat is not None and not game.is_over()
    status = render_status(game)
    assert f"WARNING: {threat.capitalize()} holds" in status
    assert f"{threat.other.capitalize()} must bring them below 7" in status


def test_forced_pass_hint() -> None:
    for seed in range(100):
        game = random_game(seed, lambda g: g.legal_moves() == [PASS])
        if not game.is_over():
            break
    else:  # pragma: no cover
        pytest.fail("no forced pass found")
    assert "must pass: type pass" in render_status(game)
    assert "you must pass" in format_moves(game)


def test_colour_only_when_asked() -> None:
    game = Game.from_moves("5R@d2 1G@d3")
    assert "\x1b[" not in render_board(game) + render_status(game)
    coloured = render_board(game, colour=True)
    assert "\x1b[31" in coloured and "\x1b[0m" in coloured
    text, width = format_tower(game.tower("d2"), colour=True)
    assert width == 4 and "\x1b[" in text


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_wanted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert colour_wanted(FakeTTY())
    assert not colour_wanted(io.StringIO())
    assert not colour_wanted(FakeTTY(), no_color=True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_wanted(FakeTTY())


def test_moves_grouped_by_piece() -> None:
    game = Game.from_moves("5R@d2 1G@d3")
    text = format_moves(game)
    assert text.startswith(f"{len(game.legal_moves())} legal moves (South to move):")
    # 5R is placed, so it appears nowhere; 1G is on d3, so 1R..1W avoid d3 (size clash)
    assert "5R" not in text
    line = next(line for line in text.splitlines() if line.strip().startswith("1R"))
    assert "except" in line and "d3" in line.split("except")[1]
    # the grouped lines, expanded again, are exactly the legal moves (no move lost or invented)
    all_cells = [c.name for c in game.topology.cells]
    listed = set()
    for group in text.splitlines()[1:]:
        pieces, where = group.split(":")
        if where.strip() == "any cell":
            cells = all_cells
        elif where.strip().startswith("any cell except "):
            cells = [c for c in all_cells if c not in where.split("except")[1].split()]
        else:
            cells = where.split()
        listed |= {f"{p}@{c}" for p in pieces.split() for c in cells}
    assert listed == {str(m) for m in game.legal_moves()}
    assert format_moves(game, "d3").startswith("On d3: ")
    assert "1R" not in format_moves(game, "d3").split(":")[1].split()
    assert format_moves(game, "4w").startswith("4W: ")
    assert "not in the reserve" in format_moves(game, "5R")
    assert "neither a piece (like 3G) nor a cell (like c2)" in format_moves(game, "zz")
    assert "there is no cell d1" in format_moves(game, "D1")  # not "malformed piece 'd1'"


# -- sessions ------------------------------------------------------------------------------


def test_two_player_session_with_bad_entries() -> None:
    lines = ["help", "5R@d2", "1G@d3", "hello", "5Z@a1", "5R@d9", "pass", "2Y@d3", "2Y@d3", "", "board", "quit"]
    session, rc, text = play(lines)
    assert rc == 0
    assert [str(m) for m in session.game.history] == ["5R@d2", "1G@d3", "2Y@d3"]
    assert "docs/rules.md" in text and "save FILE" in text  # help
    assert "illegal: malformed move 'hello'" in text
    assert "unknown colour 'Z'" in text
    assert "unknown cell 'd9'" in text
    assert "south cannot pass" in text
    assert "size clash" in text
    assert "South plays 5R@d2" in text and "North plays 1G@d3" in text
    assert "North holds: d" in text
    assert session.game.turn == "north"


def test_undo_two_players() -> None:
    session, _, text = play(["undo", "5R@d2", "1G@d3", "undo", "undo", "undo", "4W@a1"])
    assert "nothing to undo" in text
    assert "took back 1G@d3" in text and "took back 5R@d2" in text
    assert [str(m) for m in session.game.history] == ["4W@a1"]


def test_end_of_input_and_ctrl_c_exit_cleanly() -> None:
    _, rc, text = play([])
    assert rc == 0 and text.rstrip().endswith("bye")

    def interrupt() -> str:
        raise KeyboardInterrupt

    _, rc, text = play(["5R@d2", interrupt])
    assert rc == 0 and "bye" in text


def test_save_then_check_and_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "game.jgn"
    session, _, text = play(["5R@d2", "1G@d3", "2Y@d3", f"save {path}", f"save {tmp_path}/no/such/dir/x.jgn", "save"])
    assert f"saved 3 moves to {path}" in text
    assert "could not save" in text and "save needs a file name" in text
    record = read_record(path.read_text(encoding="utf-8"))
    assert record.game.position() == session.game.position()
    assert record.tags["Event"] == "Jericho terminal game"
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out.strip() == "ok: 3 moves, result *"
    assert main(["show", str(path), "--no-color"]) == 0
    shown = capsys.readouterr().out
    assert "1G*2Y*" in shown and "Result: *" in shown and "Score: South 0 - North 1" in shown


def test_full_game_against_random_to_the_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    holder: list[TerminalSession] = []

    def first_legal() -> str:
        game = holder[0].game
        if game.is_over():
            return f"save {tmp_path / 'vs.jgn'}"
        return str(game.legal_moves()[0])

    script = Script([first_legal] * 200, out)
    session = TerminalSession(input_fn=script, out=out, opponent=RandomPlayer(seed=3), human=Side.SOUTH)
    holder.append(session)
    assert session.run() == 0
    text = out.getvalue()
    game = session.game
    assert game.is_over()
    assert "Game over:" in text
    assert text.count("North (random) plays") == len(game.history) // 2
    assert "North (random) is thinking" in text
    assert script.prompts[0] == "South (you) to move> "
    assert "game over (undo, save FILE, quit)> " in script.prompts
    assert main(["check", str(tmp_path / "vs.jgn")]) == 0
    want = {"south": "1-0", "north": "0-1", "draw": "1/2-1/2"}[str(game.outcome())]
    assert capsys.readouterr().out.strip() == f"ok: {len(game.history)} moves, result {want}"
    tags = read_record((tmp_path / "vs.jgn").read_text()).tags
    assert tags["North"] == "random (AI)" and tags["South"] == "human"


def test_undo_against_the_ai_goes_back_to_the_humans_turn() -> None:
    session, _, text = play(["5R@d2", "undo", "undo", "4W@a1"], opponent=RandomPlayer(seed=1))
    assert "took back 5R@d2 " in text  # with the AI's reply
    assert "nothing to undo" in text
    history = session.game.history
    assert str(history[0]) == "4W@a1" and len(history) == 2 and session.game.turn == "south"


def test_human_plays_north_ai_moves_first() -> None:
    session, _, text = play(["undo", "moves 5R", "quit"], opponent=RandomPlayer(seed=2), human=Side.NORTH)
    assert text.index("South (random) plays") < text.index("North (you) to move> ")
    assert "nothing to undo: you have not moved yet" in text
    assert len(session.game.history) == 1


def test_resign_and_record(tmp_path: Path) -> None:
    path = tmp_path / "r.jgn"
    session, _, text = play(["5R@d2", "resign", "1G@d3", f"save {path}", "undo", "1G@d3"])
    assert "North resigns: South wins (1-0)" in text
    assert "the game is over (result 1-0)" in text
    record = read_record(path.read_text())
    assert record.result == "1-0" and record.tags["Termination"] == "resignation"
    assert "resignation taken back" in text
    assert [str(m) for m in session.game.history] == ["5R@d2", "1G@d3"]


class Broken:
    name = "broken"

    def __init__(self, move: Move | None) -> None:
        self.move = move

    def choose_move(self, game: Game, limit: object = None) -> Move:
        if self.move is None:
            raise RuntimeError("boom")
        return self.move


@pytest.mark.parametrize(
    ("player", "words"),
    [(Broken(None), "the AI failed: RuntimeError: boom"), (Broken(Move.parse("5R@d1")), "illegal move")],
)
def test_a_failing_ai_ends_the_session_without_a_traceback(player: Broken, words: str) -> None:
    _, rc, text = play(["5R@d2"], opponent=player)
    assert rc == 1 and words in text


def test_play_command_options(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["play", "--help"])
    assert exc.value.code == 0
    helptext = capsys.readouterr().out
    assert "--vs" in helptext and "--side" in helptext and "--load" in helptext and "--no-color" in helptext

    assert main(["play", "--vs", "nosuch"]) == 2
    assert "unknown player 'nosuch'" in capsys.readouterr().err

    assert main(["play", "--load", str(tmp_path / "missing.jgn")]) == 1
    assert "no such file" in capsys.readouterr().err

    path = tmp_path / "g.jgn"
    path.write_text("1. 5R@d2 1G@d3 *\n", encoding="utf-8")
    feed = iter(["2Y@d3", f"save {path}", "quit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(feed))
    assert main(["play", "--load", str(path), "--vs", "random", "--seed", "4", "--side", "south"]) == 0
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # not a TTY
    assert "North (random) plays" in out
    assert len(read_record(path.read_text()).moves) == 4
