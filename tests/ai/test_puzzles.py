"""Puzzles: the proof search (jericho_game.ai.puzzles), the shipped set, and ``jericho puzzles``."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from jericho_game import Game
from jericho_game.ai.puzzles import (
    MAX_WINNING_MOVES,
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
from jericho_game.ai.solver import LOSS, WIN, solve
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


def test_the_tactics_search_still_finds_wins_in_1_exactly() -> None:
    """The two-move tactics search (kept for its exact bounds) against a brute force."""
    game = Game.from_position(ONE_WIN)
    assert brute_force_wins_in_1(game) == names(game, winning_moves_1(game.state))
    assert names(game, saving_moves(Game.from_position(BREAK).state)) == ["2Y@d3"]
    assert names(Game.from_position(TWO_WINS), winning_moves_2(Game.from_position(TWO_WINS).state)) == [
        "4W@b1",
        "4Y@b1",
    ]


# -- the three examples of issue 31: wrong to the end of the game under the old definitions ------

# 97248b3f, shipped as break-the-seven with 5Y@a4 as the one saving move: after 5Y@a4 neither side
# can place, pass, pass, and South wins 6-5 by exhaustion.  North's position is lost whatever it plays.
LOST_SAVE = (
    "a1:2Y4B1R,b1:1Y3G,c1:1Y,e1:5R,f1:5Y3B,g1:5G3Y1W4R,a2:3Y4W2G5B,c2:2G4Y1B3W,d2:4G,f2:3R,a3:2B,b3:4W5G1B,"
    "c3:3B,e3:1G5W,f3:2W3R5B1G,g3:5W2B4G1R,a4:4B3W,b4:2R,c4:2W4R,e4:2R4Y,f4:3G5R2Y1W - 5Y north 1R@g3 0 *"
)
# 1c63af7d, shipped as hold-on: 4Y@f1 does not merely hold, it wins (5Y@g3, pass, pass: exhaustion).
WON_HOLD = (
    "a1:2W5Y1B4G,f1:3B,g1:2B3W5R,b2:1R5W,c2:3R4W,d2:1W,e2:3W2R5B1Y,f2:3G1W4B2R,g2:4B5G2W,a3:3Y5B1G4R,"
    "b3:2Y1G3R,c3:2G1Y,e3:4G2Y1B5W,f3:2B3Y,g3:4R3G,b4:2G4Y,c4:5R,g4:3B5G1R4W 4Y 5Y south 4R@a3 0 *"
)


def _old(pid: str, position: str, theme: str, move: str) -> Puzzle:
    return Puzzle(pid, position, theme, (move,), 1300.0)


def test_97248b3f_a_saving_move_that_loses_is_no_puzzle() -> None:
    game = Game.from_position(LOST_SAVE)
    sol = solve(game, moves="wdl")
    assert (sol.value, sol.plies) == (LOSS, 3) and [str(m) for m in sol.line] == ["5Y@a4", "pass", "pass"]
    assert sol.moves is not None and all(v == LOSS for v, _ in sol.moves.values())
    g = game.copy()
    for mv in sol.line:
        g.play(mv)
    assert g.outcome() == "south" and g.score() == (6, 5)
    assert find_puzzle(game) is None
    problems = verify(_old("97248b3f", LOST_SAVE, "break-the-seven", "5Y@a4"))
    assert problems == ["the position is lost for the side to move, not drawn"]


def test_f9b57479_nearly_every_move_wins_so_it_is_no_puzzle() -> None:
    game = Game.from_position(ONE_WIN)
    assert puzzle_id(ONE_WIN) == "f9b57479"
    sol = solve(game, moves="wdl")
    assert sol.value == WIN and sol.moves is not None
    wins = sorted(str(m) for m, (v, _) in sol.moves.items() if v == WIN)
    assert "4Y@c1" in wins and "4Y@a3" in wins and len(wins) == 11 and len(sol.moves) == 13
    assert find_puzzle(game) is None
    assert verify(_old("f9b57479", ONE_WIN, "win-in-1", "4Y@a3")) == ["11 of 13 moves win: not a puzzle"]


def test_1c63af7d_a_hold_on_that_wins_is_a_win_by_exhaustion() -> None:
    game = Game.from_position(WON_HOLD)
    puzzle = find_puzzle(game)
    assert puzzle is not None
    assert (puzzle.theme, puzzle.kind, puzzle.accept, puzzle.value, puzzle.plies) == (
        "win-by-exhaustion",
        "win",
        ("4Y@f1",),
        1,
        4,
    )
    assert puzzle.solution == ("4Y@f1",) and puzzle.line == ("4Y@f1", "5Y@g3", "pass", "pass")
    assert verify(puzzle) == []
    old = verify(_old("1c63af7d", WON_HOLD, "hold-on", "4Y@f1"))
    assert old == ["the position is won for the side to move, not drawn"]


# -- the definitions, to the end of the game -------------------------------------------------------


def _every_move(game: Game) -> dict[str, int]:
    """Each legal move's value for its player, by the solver on the position after it."""
    out = {}
    for mv in game.legal_moves():
        g = game.copy()
        g.play(mv)
        if g.is_over():
            out[str(mv)] = 1 if g.outcome() == game.turn.value else 0 if g.outcome() == "draw" else -1
        else:
            v = solve(g).value
            assert v is not None
            out[str(mv)] = -v
    return out


@pytest.mark.parametrize("which", ["win", "defence"])
def test_shipped_puzzles_keep_their_promise_move_by_move(which: str) -> None:
    """Checked move by move (each first move solved on its own, not by the per-move mode): a win
    puzzle accepts exactly the winning moves, a defence puzzle has one move that holds and every
    other loses; the line ends the game as promised."""
    puzzles = [p for p in shipped_puzzles() if p.kind == which]
    for p in random.Random(31).sample(puzzles, 6):
        game = Game.from_position(p.position)
        values = _every_move(game)
        if which == "win":
            assert sorted(m for m, v in values.items() if v == 1) == sorted(p.accept), p.id
            assert len(p.accept) <= MAX_WINNING_MOVES and len(p.accept) < len(values)
        else:
            assert [m for m, v in values.items() if v >= 0] == list(p.accept), p.id
            assert sum(v == -1 for v in values.values()) == len(values) - 1
        g = game.copy()
        for mv in p.line:
            g.play(mv)
        assert g.outcome() == (p.side if which == "win" else "draw"), p.id


def test_verify_names_a_wrong_accepted_set_a_wrong_theme_and_a_bad_position() -> None:
    good = find_puzzle(Game.from_position(WON_HOLD))
    assert good is not None
    wrong_theme = replace(good, theme="win-in-2")
    assert verify(wrong_theme) == ["the theme is win-by-exhaustion, not win-in-2"]
    more = replace(good, accept=("4Y@f1", "5Y@g3"))
    assert any("winning moves are ['4Y@f1'], not exactly" in p for p in verify(more))
    slow = replace(good, line=("4Y@f1", "pass", "5Y@g3", "pass", "pass"))
    assert any("does not end the game won" in p or "plies" in p for p in verify(slow))
    illegal = replace(good, solution=("4G@a3",))
    assert any("solution move 1" in p for p in verify(illegal))
    assert verify(Puzzle("x", "nonsense", "win-in-1", ("4Y@a3",), 1.0))[0].startswith("position:")


def test_a_lost_position_is_no_puzzle_and_a_budget_stops_the_search() -> None:
    game = Game.from_position(LOST_SAVE)
    assert find_puzzle(game) is None
    early = Game()
    for mv in ["5R@d2", "1G@d3", "2Y@d3", "3B@c2"]:
        early.play(mv)
    with pytest.raises(SearchLimit):
        find_puzzle(early, Budget(nodes=500, seconds=None).start())
    assert early.position() == Game.from_moves(["5R@d2", "1G@d3", "2Y@d3", "3B@c2"]).position()


def test_the_pure_python_core_gives_the_same_answers() -> None:
    for text in (ONE_WIN, TWO_WINS, BREAK, WIN_IN_2):
        game = Game.from_position(text)
        py = python_state(game.state)
        assert winning_moves_2(py) == winning_moves_2(game.state)
        assert saving_moves(py) == saving_moves(game.state)


def test_puzzle_files_name_the_bad_line() -> None:
    good = find_puzzle(Game.from_position(WON_HOLD))
    assert good is not None
    line = json.dumps(good.to_json())
    assert load_puzzles(line + "\n\n" + line)[1] == good
    with pytest.raises(PuzzleError, match=r"f.jsonl:2: .*theme"):
        load_puzzles(line + "\n" + line.replace("win-by-exhaustion", "mate"), "f.jsonl")
    with pytest.raises(PuzzleError, match=r"f.jsonl:1: .*'value'"):
        load_puzzles(line.replace('"value": 1', '"value": 2'), "f.jsonl")
    with pytest.raises(PuzzleError, match=r"f.jsonl:1: "):
        load_puzzles("{not json", "f.jsonl")


# -- the shipped set ------------------------------------------------------------------------------


def test_the_shipped_set_has_500_distinct_puzzles_of_both_kinds() -> None:
    puzzles = shipped_puzzles()
    assert len(puzzles) >= 500
    assert len({p.id for p in puzzles}) == len(puzzles)
    assert len({p.position for p in puzzles}) == len(puzzles)
    assert {p.theme for p in puzzles} <= set(THEMES)
    assert {p.kind for p in puzzles} == {"win", "defence"}
    assert any(len(p.accept) > 1 for p in puzzles)  # win puzzles that accept several moves
    for p in puzzles:
        assert p.id == puzzle_id(p.position)
        assert len(p.solution) == 1 and p.solution[0] in p.accept and p.line[0] == p.solution[0]
        assert p.value == (1 if p.kind == "win" else 0)
        assert "pass" not in p.solution  # the solver's move is a real choice


def test_shipped_puzzles_are_proved_again() -> None:
    """The whole proof to the end of the game (value, accepted moves, line, theme) for 60 shipped
    puzzles drawn anew each run; the slow tier's test below proves every one of them."""
    puzzles = random.sample(shipped_puzzles(), 60)
    bad = {p.id: verify(p) for p in puzzles}
    assert {k: v for k, v in bad.items() if v} == {}


@pytest.mark.slow
def test_every_shipped_puzzle_is_proved_again() -> None:
    """Every shipped puzzle, no sampling: `jericho puzzles verify` (docs/engine.md quotes the time)."""
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
    # games 3 and 4 of the sample, and a record that passes through the WON_HOLD position
    records = read_records(SAMPLE.read_text(encoding="utf-8"))
    games = tmp_path / "games.jgn"
    games.write_text("\n".join(r.to_text() for r in records[3:5]), encoding="utf-8")
    start = Game.from_position(WON_HOLD)
    for mv in ("4Y@f1", "5Y@g3", "pass", "pass"):
        start.play(mv)
    extra = tmp_path / "extra.jgn"
    extra.write_text(write_record(start), encoding="utf-8")
    out = tmp_path / "p.jsonl"
    first = _cli("make", str(games), str(extra), "--out", str(out))
    assert first.returncode == 0, first.stderr
    made = load_puzzles(out.read_text(encoding="utf-8"))
    assert any(p.position == WON_HOLD and p.accept == ("4Y@f1",) for p in made), first.stdout
    assert all(verify(p) == [] for p in made)
    assert (tmp_path / "p.jsonl.done").read_text().split() == [f"{games}#0", f"{games}#1", f"{extra}#0"]
    again = _cli("make", str(games), str(extra), "--out", str(out))
    assert again.returncode == 0 and "0 new puzzles from 0 games" in again.stdout
    assert load_puzzles(out.read_text(encoding="utf-8")) == made


def test_selfplay_puzzles_are_reproducible_with_any_number_of_jobs(tmp_path: Path) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    a = _cli("make", "--selfplay", "2", "--seed", "7", "--deviations", "2", "--out", str(one), "--quiet")
    b = _cli("make", "--selfplay", "2", "--seed", "7", "--deviations", "2", "--jobs", "2", "--out", str(two), "--quiet")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert one.read_text() == two.read_text()
    assert (tmp_path / "one.jsonl.done").read_text().split() == ["selfplay:7:0", "selfplay:7:1"]
    assert all(verify(p) == [] for p in load_puzzles(one.read_text()))


def test_verify_command_fails_on_a_puzzle_the_end_of_the_game_refutes(tmp_path: Path) -> None:
    good = find_puzzle(Game.from_position(WON_HOLD))
    assert good is not None
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(good.to_json()) + "\n", encoding="utf-8")
    ok = _cli("verify", str(path))
    assert ok.returncode == 0 and "1/1 puzzles proved" in ok.stdout
    old = _old("f9b57479", ONE_WIN, "win-in-1", "4Y@a3")
    path.write_text(json.dumps(good.to_json()) + "\n" + json.dumps(old.to_json()) + "\n", encoding="utf-8")
    bad = _cli("verify", str(path))
    assert bad.returncode == 1
    assert "f9b57479 (win-in-1): 11 of 13 moves win: not a puzzle" in bad.stdout
    assert "1/2 puzzles proved" in bad.stdout


def test_verify_command_samples_the_shipped_set() -> None:
    done = _cli("verify", "--sample", "20", "--seed", str(random.randrange(1000)))
    assert done.returncode == 0, done.stdout
    assert "20/20 puzzles proved" in done.stdout


def test_make_and_verify_name_what_is_wrong(tmp_path: Path) -> None:
    missing = _cli("make", str(tmp_path / "nope.jgn"), "--out", str(tmp_path / "p.jsonl"))
    assert missing.returncode == 2 and "no such game record file" in missing.stderr
    nothing = _cli("make", "--out", str(tmp_path / "p.jsonl"))
    assert nothing.returncode == 2 and "give game records, --db or --selfplay N" in nothing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    broken = _cli("verify", str(bad))
    assert broken.returncode == 2 and "bad.jsonl:1: puzzle field 'position'" in broken.stderr


def test_the_pure_python_core_proves_puzzles_too(tmp_path: Path) -> None:
    import os

    good = find_puzzle(Game.from_position(WON_HOLD))
    assert good is not None
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(good.to_json()) + "\n", encoding="utf-8")
    env = dict(os.environ, JERICHO_KERNEL="python")
    done = subprocess.run(
        [sys.executable, "-m", "jericho_game", "puzzles", "verify", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1/1 puzzles proved" in done.stdout
