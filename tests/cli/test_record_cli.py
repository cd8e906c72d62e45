"""``jericho show`` and ``jericho check`` on good and bad record files."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from jericho_game import Game
from jericho_game.cli import main
from jericho_game.record import result_token, write_record

SRC = Path(__file__).resolve().parents[2] / "src"


def finished_game(seed: int = 1) -> Game:
    game = Game()
    rng = random.Random(seed)
    while not game.is_over():
        moves = game.legal_moves()
        game.play(moves[rng.randrange(len(moves))])
    return game


@pytest.fixture
def good(tmp_path: Path) -> tuple[Path, Game]:
    game = finished_game()
    path = tmp_path / "good.jgn"
    path.write_text(write_record(game, {"Event": "Test", "South": "Ada", "North": "Brice"}), encoding="utf-8")
    return path, game


def test_check_good_file(good: tuple[Path, Game], capsys: pytest.CaptureFixture[str]) -> None:
    path, game = good
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out == f"ok: {len(game.history)} moves, result {result_token(game.outcome())}\n"


def test_check_several_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "two.jgn"
    path.write_text(write_record(Game.from_moves("5R@d2")) + "\n" + write_record(finished_game(2)), encoding="utf-8")
    assert main(["check", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "game 1: ok: 1 moves, result *"
    assert lines[1].startswith("game 2: ok: ")
    assert lines[2] == "ok: 2 games"


def test_show_prints_final_board_result_and_score(good: tuple[Path, Game], capsys: pytest.CaptureFixture[str]) -> None:
    path, game = good
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    s, n = game.score()
    assert "Test, " in out and "South Ada - North Brice" in out
    assert f"Result: {result_token(game.outcome())}   Score: South {s} - North {n}   Moves: {len(game.history)}" in out
    assert "Game over:" in out
    last = game.history[-1]
    assert f"{last}" in out and "*" in out
    assert "\x1b[" not in out


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b'[Event "x"]\n\n1. 5R@d2 5R@d2 *\n', ":3:10: illegal move 1... 5R@d2 by north"),
        (b'[Event "x"]\n\n1. 5R@d2 1G@d3', ":3:15: truncated record"),
        (b'[Event "x"\n*\n', ":1:11: bad tag Event"),
        (b'[Result "0-1"]\n1. 5R@d2 1-0\n', ":2:10: result token 1-0 disagrees"),
        (b"\x00\x01garbage\xff\n", ":1:10: not UTF-8 text"),
        (b"", ":1:1: empty record"),
    ],
)
@pytest.mark.parametrize("command", ["check", "show"])
def test_bad_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, content: bytes, words: str
) -> None:
    path = tmp_path / "bad.jgn"
    path.write_bytes(content)
    assert main([command, str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"jericho {command}: {path}{words}")


def test_missing_file_and_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "nope.jgn")]) == 1
    assert capsys.readouterr().err == f"jericho check: cannot read {tmp_path / 'nope.jgn'}: no such file\n"
    assert main(["show", str(tmp_path)]) == 1
    assert "it is a directory" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["show", "check"])
def test_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert "FILE" in capsys.readouterr().out


def test_exit_codes_in_a_real_process(good: tuple[Path, Game], tmp_path: Path) -> None:
    path, _ = good
    bad = tmp_path / "bad.jgn"
    bad.write_text("1. 5R@q9 *\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    ok = subprocess.run(
        [sys.executable, "-m", "jericho_game", "check", str(path)], capture_output=True, text=True, env=env, timeout=60
    )
    assert ok.returncode == 0 and ok.stdout.startswith("ok: ")
    ko = subprocess.run(
        [sys.executable, "-m", "jericho_game", "check", str(bad)], capture_output=True, text=True, env=env, timeout=60
    )
    assert ko.returncode == 1
    assert "Traceback" not in ko.stderr and f"{bad}:1:4: " in ko.stderr and "unknown cell 'q9'" in ko.stderr
