"""Puzzles: the proof search (jericho_game.ai.puzzles), the shipped set, and ``jericho puzzles``."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jericho_game import Game
from jericho_game.ai.puzzles import (
    THEMES,
    Budget,
    Puzzle,
    PuzzleError,
    SearchLimit,
    find_puzzle,
    load_puzzles,
    puzzle_id,
    saving_moves,
    shipped_puzzles,
    verify,
    winning_moves_1,
    winning_moves_2,
)
from jericho_game.core import NO_OUTCOME
from jericho_game.kernel import python_state
from jericho_game.record import read_records, write_record

# From a self-play game (examples/data/sample/games.jgn): South (6 monoliths to North's 5) holds
# 4Y only, North 4G only; 4Y@a3 is the one move that makes seven no reply can break.
ONE_WIN = (
    "a1:4B3Y1W5R,b1:2B1G4W,c1:3B2R,f1:5G,b2:5B,c2:3G2W,d2:2Y3W4G1R,e2:4Y,f2:2G3R1B5Y,g2:3R5W1G,"
    "b3:4R5Y1B,c3:2W1Y5B,d3:3G4B,f3:4R5G2B,g3:4W2R,a4:5R3Y1W2G,c4:1Y,e4:2Y3W,f4:3B,g4:1R5W 4Y 4G south 4B@d3 0 *"
)
# The same position with South's last piece on b1 (4W) taken back into its reserve: North now holds
# seven, and South breaks them and wins with a size-4 piece on b1, whichever colour: 4Y@b1 and 4W@b1
# both work, so the position has two solutions and is no puzzle.
TWO_WINS = (
    "a1:4B3Y1W5R,b1:2B1G,c1:3B2R,f1:5G,b2:5B,c2:3G2W,d2:2Y3W4G1R,e2:4Y,f2:2G3R1B5Y,g2:3R5W1G,"
    "b3:4R5Y1B,c3:2W1Y5B,d3:3G4B,f3:4R5G2B,g3:4W2R,a4:5R3Y1W2G,c4:1Y,e4:2Y3W,f4:3B,g4:1R5W 4YW 4G south 4B@d3 0 *"
)
# North holds seven; only 2Y@d3 breaks them without leaving South a win in 1 (sample game 3, ply 49).
BREAK = (
    "a1:1B,c1:3Y5R,f1:1G2Y4B,g1:4R2W3B5Y,a2:4R3W2G,b2:1R4Y3W5G,c2:3R4G,d2:2W3Y1B,f2:2R5B1G,g2:5W1R,a3:4Y2B,"
    "c3:2B,d3:1W,f3:1W3R4B5G,g3:2G,a4:4W3B5R1Y,b4:3G1Y,c4:4G5B,f4:4W5Y2R,g4:5W3G - 2Y north 1R@g2 0 *"
)
# South wins in 2 with 4Y@a2 (sample game 21, ply 40): every reply leaves a win in 1.
WIN_IN_2 = (
    "b1:4B2G1Y,c1:3R4B,a2:5G1W,b2:3W2R5B,c2:2Y4R3G5W,e2:5Y,f2:5G2Y1W,g2:5Y3R1G4W,a3:4G3W,b3:3B2R,c3:1G4W5R2B,"
    "f3:1B3Y,g3:2W,b4:3B,c4:2B,e4:2W4Y,f4:1Y5B2G 1R3YG4Y5R 1RB4RG5W south 3B@b4 0 *"
)
SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample" / "games.jgn"


def names(game: Game, codes: list[int]) -> list[str]:
    return sorted(str(game.tables.move_objects[c]) for c in codes)


def brute_force_wins_in_1(game: Game) -> list[str]:
    """Every move after which every reply leaves the mover the winner: all moves, all replies, no bounds."""
    s = game.state
    me = s.turn
    out = []
    for code in s.legal_codes():
        s.push(code)
        if s.outcome == me:
            won = True
        elif s.outcome != NO_OUTCOME:
            won = False
        else:
            won = True
            for reply in s.legal_codes():
                s.push(reply)
                won = s.outcome == me
                s.pop()
                if not won:
                    break
        s.pop()
        if won:
            out.append(str(game.tables.move_objects[code]))
    return sorted(out)


def test_a_position_with_exactly_one_winning_move_is_a_puzzle() -> None:
    game = Game.from_position(ONE_WIN)
    assert brute_force_wins_in_1(game) == ["4Y@a3"]  # the position, checked without the solver
    assert names(game, winning_moves_1(game.state)) == ["4Y@a3"]
    assert names(game, winning_moves_2(game.state)) == ["4Y@a3"]
    puzzle = find_puzzle(game)
    assert puzzle is not None
    assert (puzzle.theme, puzzle.solution, puzzle.position, puzzle.side) == ("win-in-1", ("4Y@a3",), ONE_WIN, "south")
    assert puzzle.id == puzzle_id(ONE_WIN)
    assert verify(puzzle) == []
    assert game.position() == ONE_WIN  # the search pushed and popped: the game is unchanged


def test_a_position_with_two_winning_moves_is_rejected() -> None:
    game = Game.from_position(TWO_WINS)
    assert names(game, winning_moves_2(game.state)) == ["4W@b1", "4Y@b1"]
    assert find_puzzle(game) is None
    # and a puzzle file that claims one of them as the only solution fails verification
    g = Game.from_position(TWO_WINS)
    g.play("4Y@b1")
    line = ["4Y@b1"]
    for reply in g.legal_moves():
        g.play(reply)
        finish = winning_moves_1(g.state)
        if g.outcome() is None and len(finish) == 1:
            line += [str(reply), str(g.tables.move_objects[finish[0]])]
            break
        g.undo()
    assert len(line) == 3
    fake = Puzzle(puzzle_id(TWO_WINS), TWO_WINS, "win-in-2", tuple(line), 1500.0)
    problems = verify(fake)
    assert any("4W@b1" in p and "not exactly 4Y@b1" in p for p in problems), problems


def test_verify_rejects_a_wrong_solution_a_wrong_theme_and_a_bad_position() -> None:
    good = find_puzzle(Game.from_position(ONE_WIN))
    assert good is not None
    wrong_move = Puzzle(good.id, ONE_WIN, "win-in-1", ("4Y@a2",), 1200.0)
    assert any("not exactly 4Y@a2" in p for p in verify(wrong_move))
    wrong_theme = Puzzle(good.id, ONE_WIN, "hold-on", ("4Y@a3",), 1200.0)
    assert any("win within 2" in p for p in verify(wrong_theme))
    illegal = Puzzle(good.id, ONE_WIN, "win-in-1", ("4G@a3",), 1200.0)
    assert any("solution move 1" in p for p in verify(illegal))
    assert verify(Puzzle("x", "nonsense", "win-in-1", ("4Y@a3",), 1.0))[0].startswith("position:")


def test_break_the_seven_exactly_one_saving_move() -> None:
    game = Game.from_position(BREAK)
    assert game.score()[0] >= 7  # South (the opponent of the solver) holds seven
    assert winning_moves_2(game.state) == []
    assert names(game, saving_moves(game.state)) == ["2Y@d3"]
    # checked without the solver: every other move loses at once or to a win in 1
    s = game.state
    survivors = []
    for code in s.legal_codes():
        s.push(code)
        if s.outcome == NO_OUTCOME and not brute_force_wins_in_1(Game.from_position(game_position(s))):
            survivors.append(str(game.tables.move_objects[code]))
        s.pop()
    assert survivors == ["2Y@d3"]
    puzzle = find_puzzle(game)
    assert puzzle is not None and (puzzle.theme, puzzle.solution) == ("break-the-seven", ("2Y@d3",))
    assert verify(puzzle) == []


def game_position(state: object) -> str:
    from jericho_game.position import format_position

    return format_position(state.tables, state)  # type: ignore[attr-defined]


def test_win_in_2_line_and_proof() -> None:
    game = Game.from_position(WIN_IN_2)
    puzzle = find_puzzle(game)
    assert puzzle is not None
    assert puzzle.theme == "win-in-2" and puzzle.solution[0] == "4Y@a2" and len(puzzle.solution) == 3
    assert verify(puzzle) == []
    # the reply in the line does not lose at once, and after it exactly one move wins in 1
    g = Game.from_position(WIN_IN_2)
    g.play(puzzle.solution[0])
    g.play(puzzle.solution[1])
    assert g.outcome() is None
    assert brute_force_wins_in_1(g) == [puzzle.solution[2]]


def test_the_pure_python_core_gives_the_same_answers() -> None:
    for text in (ONE_WIN, TWO_WINS, BREAK, WIN_IN_2):
        game = Game.from_position(text)
        py = python_state(game.state)
        assert winning_moves_2(py) == winning_moves_2(game.state)
        assert saving_moves(py) == saving_moves(game.state)


def test_a_budget_stops_the_search() -> None:
    game = Game.from_position(WIN_IN_2)
    with pytest.raises(SearchLimit):
        find_puzzle(game, Budget(nodes=50, seconds=None).start())
    assert game.position() == WIN_IN_2  # popped back on the way out


def test_puzzle_files_name_the_bad_line() -> None:
    good = find_puzzle(Game.from_position(ONE_WIN))
    assert good is not None
    line = json.dumps(good.to_json())
    assert load_puzzles(line + "\n\n" + line)[1] == good
    with pytest.raises(PuzzleError, match=r"f.jsonl:2: .*theme"):
        load_puzzles(line + "\n" + line.replace("win-in-1", "mate"), "f.jsonl")
    with pytest.raises(PuzzleError, match=r"f.jsonl:1: "):
        load_puzzles("{not json", "f.jsonl")


# -- the shipped set ------------------------------------------------------------------------------


def test_the_shipped_set_has_500_distinct_puzzles_of_every_theme() -> None:
    puzzles = shipped_puzzles()
    assert len(puzzles) >= 500
    assert len({p.id for p in puzzles}) == len(puzzles)
    assert len({p.position for p in puzzles}) == len(puzzles)
    assert {p.theme for p in puzzles} == set(THEMES)
    for p in puzzles:
        assert p.id == puzzle_id(p.position)
        assert len(p.solution) == (3 if p.theme == "win-in-2" else 1)
        assert "pass" not in p.solution[::2]  # the solver's moves are real choices


def test_every_shipped_puzzle_is_proved_again() -> None:
    """The whole proof (unique working move, line, theme) for every shipped puzzle, no sampling:
    543 puzzles in 3-5 s on the 2-core development machine with the C kernel (loaded)."""
    puzzles = shipped_puzzles()
    t0 = time.perf_counter()
    bad = {p.id: verify(p) for p in puzzles}
    bad = {k: v for k, v in bad.items() if v}
    assert bad == {}, list(bad.items())[:5]
    print(f"{len(puzzles)} puzzles proved in {time.perf_counter() - t0:.1f} s")


# -- jericho puzzles ------------------------------------------------------------------------------


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jericho_game", "puzzles", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def test_make_finds_proves_and_resumes(tmp_path: Path) -> None:
    # games 3 and 4 of the sample hold puzzles; a record that ends in the ONE_WIN position too
    records = read_records(SAMPLE.read_text(encoding="utf-8"))
    games = tmp_path / "games.jgn"
    games.write_text("\n".join(r.to_text() for r in records[3:5]), encoding="utf-8")
    start = Game.from_position(ONE_WIN)
    start.play("4Y@a2")  # not the winning move: North then plays on
    extra = tmp_path / "extra.jgn"
    extra.write_text(write_record(start), encoding="utf-8")
    out = tmp_path / "p.jsonl"
    first = _cli("make", str(games), str(extra), "--out", str(out), "--seconds", "20")
    assert first.returncode == 0, first.stderr
    made = load_puzzles(out.read_text(encoding="utf-8"))
    assert made, first.stdout
    assert any(p.position == ONE_WIN and p.solution == ("4Y@a3",) for p in made)
    assert all(verify(p) == [] for p in made)
    assert (tmp_path / "p.jsonl.done").read_text().split() == [f"{games}#0", f"{games}#1", f"{extra}#0"]
    again = _cli("make", str(games), str(extra), "--out", str(out))
    assert again.returncode == 0 and "0 new puzzles from 0 games" in again.stdout
    assert load_puzzles(out.read_text(encoding="utf-8")) == made


def test_verify_command_fails_on_a_puzzle_with_two_solutions(tmp_path: Path) -> None:
    good = find_puzzle(Game.from_position(ONE_WIN))
    assert good is not None
    g = Game.from_position(TWO_WINS)
    two = Puzzle(puzzle_id(TWO_WINS), TWO_WINS, "win-in-2", ("4Y@b1", "x", "y"), 1500.0)
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(good.to_json()) + "\n", encoding="utf-8")
    ok = _cli("verify", str(path))
    assert ok.returncode == 0 and "1/1 puzzles proved" in ok.stdout
    # a two-solution puzzle with a complete, legal line
    s = g
    s.play("4Y@b1")
    reply = next(m for m in s.legal_moves() if (s.play(m), s.outcome(), s.undo())[1] is None)
    s.play(reply)
    finish = winning_moves_1(s.state)
    two = Puzzle(two.id, TWO_WINS, "win-in-2", ("4Y@b1", str(reply), str(s.tables.move_objects[finish[0]])), 1500.0)
    path.write_text(json.dumps(good.to_json()) + "\n" + json.dumps(two.to_json()) + "\n", encoding="utf-8")
    bad = _cli("verify", str(path))
    assert bad.returncode == 1
    assert re.search(
        rf"{two.id} \(win-in-2\): the working moves are \['4[YW]@b1', '4[YW]@b1'\], not exactly 4Y@b1", bad.stdout
    )
    assert "1/2 puzzles proved" in bad.stdout


def test_verify_command_samples_the_shipped_set() -> None:
    done = _cli("verify", "--sample", "20", "--seed", str(random.randrange(1000)))
    assert done.returncode == 0, done.stdout
    assert "20/20 puzzles proved" in done.stdout


def test_make_and_verify_name_what_is_wrong(tmp_path: Path) -> None:
    missing = _cli("make", str(tmp_path / "nope.jgn"), "--out", str(tmp_path / "p.jsonl"))
    assert missing.returncode == 2 and "no such game record file" in missing.stderr
    nothing = _cli("make", "--out", str(tmp_path / "p.jsonl"))
    assert nothing.returncode == 2 and "give game records, --db, or both" in nothing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    broken = _cli("verify", str(bad))
    assert broken.returncode == 2 and "bad.jsonl:1: puzzle field 'position'" in broken.stderr


def test_the_pure_python_core_proves_shipped_puzzles_too() -> None:
    import os

    env = dict(os.environ, JERICHO_KERNEL="python")
    done = subprocess.run(
        [sys.executable, "-m", "jericho_game", "puzzles", "verify", "--sample", "8", "--seed", "3"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8/8 puzzles proved" in done.stdout
