"""The endgame solver (jericho_game.ai.solver) against an independent brute-force minimax.

The brute force is written from the rule book on the pure-Python core (``core.State``
push/pop, no alpha-beta, no Zobrist keys: a memo keyed by the towers, reserves, side to move,
last placement and passes), and searches every line to the end of the game.  Positions come
from seeded random games played until few pieces are left in the reserves.
"""

from __future__ import annotations

import random

import pytest

from jericho_game import Game, core, kernel
from jericho_game.ai.solver import Solution, Table, solve
from jericho_game.board import standard_topology
from jericho_game.core import NO_OUTCOME, SEVEN
from tests.helpers import Load

TABLES = core.tables_for(standard_topology())
needs_c = pytest.mark.skipif(kernel.C is None, reason="the C kernel is not built (the Python search is tested below)")

# -- the brute force -----------------------------------------------------------------------


def _rank(result: int, plies: int | None) -> tuple[int, int]:
    """Order of outcomes for the side choosing: a win (the sooner the better), a draw, a loss (the later)."""
    if result > 0:
        return (2, -(plies or 0))
    if result < 0:
        return (0, plies or 0)
    return (1, 0)


def brute(st: core.State, memo: dict[tuple[object, ...], tuple[int, int | None]]) -> tuple[int, int | None]:
    """(result for the side to move: 1/0/-1, plies to the end under best play; None for a draw)."""
    if st.outcome != NO_OUTCOME:
        if st.outcome == core.DRAW:
            return 0, None
        return (1 if st.outcome == st.turn else -1), 0
    key = (tuple(st.code), tuple(st.reserve), st.turn, st.last_cell, st.last_piece, st.passes)
    found = memo.get(key)
    if found is not None:
        return found
    best: tuple[int, int | None] | None = None
    for code in st.legal_codes():
        st.push(code)
        r, p = brute(st, memo)
        st.pop()
        cand = (-r, None if r == 0 else (p or 0) + 1)
        if best is None or _rank(*cand) > _rank(*best):
            best = cand
    assert best is not None
    memo[key] = best
    return best


def _play_on(st: core.State, rng: random.Random, left: int, quiet: bool, codes: list[int]) -> bool:
    """Random moves until ``left`` pieces remain in the two reserves together; False if the game ended.

    Moves are uniform among those that keep the game going; a ``quiet`` game also avoids giving
    either side seven monoliths when it can (so both quiet endings and sevens are covered)."""
    while st.outcome == NO_OUTCOME and bin(st.reserve[0]).count("1") + bin(st.reserve[1]).count("1") > left:
        legal = st.legal_codes()
        rng.shuffle(legal)
        choice = fallback = None
        for code in legal:
            st.push(code)
            going = st.outcome == NO_OUTCOME
            calm = going and max(st.score) < SEVEN
            st.pop()
            if going and fallback is None:
                fallback = code
            if calm or (going and not quiet):
                choice = code
                break
        code = choice if choice is not None else fallback if fallback is not None else legal[0]
        st.push(code)
        codes.append(code)
    return st.outcome == NO_OUTCOME


def positions(count: int, seed: int, sizes: tuple[int, ...], branches: int = 5) -> list[list[int]]:
    """``count`` late positions (as move codes from the start), seeded: random games to 8 pieces
    left, each continued ``branches`` times at random to a size drawn from ``sizes``."""
    rng = random.Random(seed)
    out: list[list[int]] = []
    while len(out) < count:
        base: list[int] = []
        quiet = rng.random() < 0.5
        st = core.State(TABLES)
        if not _play_on(st, rng, 8, quiet, base):
            continue
        for _ in range(branches):
            codes = list(base)
            branch = core.State(TABLES)
            for c in codes:
                branch.push(c)
            if _play_on(branch, rng, rng.choice(sizes), quiet, codes) and len(out) < count:
                out.append(codes)
    return out


def state_of(codes: list[int], which: str) -> core.State:
    st = kernel.new_state(TABLES, which)
    for c in codes:
        st.push(c)
    return st


def check_line(codes: list[int], sol: Solution) -> None:
    """The principal line is legal, ends the game, and its end is the value claimed."""
    st = state_of(codes, "python")
    mover = st.turn
    for move in sol.line:
        code = TABLES.move_code[(move.piece.index, move.cell)] if move.piece is not None else TABLES.pass_code
        assert st.is_legal(code), (codes, sol)
        st.push(code)
    assert st.outcome != NO_OUTCOME, (codes, sol)
    want = {1: mover, -1: 1 - mover, 0: core.DRAW}[sol.value or 0]
    assert st.outcome == want, (codes, sol)
    if sol.value != 0 and sol.plies is not None:
        assert len(sol.line) == sol.plies, (codes, sol)


# -- the tests -----------------------------------------------------------------------------

#: The sample: 2,000 positions with 2, 3 or 4 pieces left in the reserves (the brute force
#: needs ~2 ms, ~30 ms and ~0.25 s for them on the pure-Python core: ~20 s of CPU in all).
SAMPLE = ((1685, 2), (300, 3), (15, 4))


@needs_c
@pytest.mark.timeout(900)  # ~25 s of CPU, but a shared machine under load may take many times that
def test_values_and_plies_match_brute_force() -> None:
    """2,000 seeded late positions: the C solver's value and plies equal the brute force's, for the
    position and (moves="exact") for every legal move; the line plays out to the claimed end."""
    checked = kinds = 0
    seen: set[tuple[int, int | None]] = set()
    for i, (count, left) in enumerate(SAMPLE):
        for codes in positions(count, 31_000 + i, (left,)):
            memo: dict[tuple[object, ...], tuple[int, int | None]] = {}
            st = state_of(codes, "python")
            want = brute(st, memo)
            sol = solve(state_of(codes, "c"), moves="exact")
            assert (sol.value, sol.plies) == want, (codes, want, sol)
            seen.add(want)
            assert sol.moves is not None
            for code in st.legal_codes():
                st.push(code)
                r, p = brute(st, memo)
                st.pop()
                move_want = (-r, None if r == 0 else (p or 0) + 1)
                assert sol.moves[TABLES.move_objects[code]] == move_want, (codes, code, move_want, sol.moves)
            assert sol.move is not None and sol.moves[sol.move] == want
            check_line(codes, sol)
            checked += 1
    assert checked == sum(n for n, _ in SAMPLE)
    kinds = len(seen)
    assert {v for v, _ in seen} == {-1, 0, 1} and kinds >= 8  # wins, draws and losses of many lengths


@needs_c
def test_win_draw_loss_per_move_agrees_with_exact() -> None:
    """moves="wdl" gives each move's win/draw/loss (a distance only for the best move and moves that
    end the game); it agrees with the exact values."""
    for codes in positions(200, 4242, (3, 4, 5)):
        c = state_of(codes, "c")
        exact = solve(c, moves="exact")
        wdl = solve(c, moves="wdl")
        assert exact.moves is not None and wdl.moves is not None
        assert (wdl.value, wdl.plies) == (exact.value, exact.plies)
        for move, (v, p) in wdl.moves.items():
            assert v == exact.moves[move][0]
            assert p is None or p == exact.moves[move][1]  # a distance only where it is exact
        quick = solve(c, distance=False)  # win/draw/loss only: no plies, a move that keeps the value
        assert quick.value == exact.value and quick.plies is None and quick.nodes <= exact.nodes
        assert quick.move is not None and exact.moves[quick.move][0] == exact.value
        check_line(codes, quick)


def test_python_search_matches_brute_force() -> None:
    """The pure-Python search (no C kernel) gives the brute force's values too."""
    for codes in positions(150, 5150, (2, 3)):
        want = brute(state_of(codes, "python"), {})
        sol = solve(state_of(codes, "python"), moves="exact")
        assert (sol.value, sol.plies) == want, (codes, want, sol)
        check_line(codes, sol)
        assert solve(state_of(codes, "python"), distance=False).value == want[0]


@needs_c
def test_python_and_c_agree_on_larger_positions() -> None:
    """Beyond the brute force's reach (5-7 pieces left), the two searches agree with each other."""
    for codes in positions(12, 777, (5, 6, 7)):
        c = solve(state_of(codes, "c"))
        py = solve(state_of(codes, "python"))
        assert (c.value, c.plies) == (py.value, py.plies), codes
        # asking for every move's win/draw/loss must not lose the root's own distance (the Python
        # search once overwrote its distance flag in the per-move loop: a won root with no plies)
        c_wdl = solve(state_of(codes, "c"), moves="wdl")
        py_wdl = solve(state_of(codes, "python"), moves="wdl")
        assert (c_wdl.value, c_wdl.plies) == (py_wdl.value, py_wdl.plies) == (c.value, c.plies), codes
        assert c_wdl.moves is not None and py_wdl.moves is not None
        assert {m: v for m, (v, _) in c_wdl.moves.items()} == {m: v for m, (v, _) in py_wdl.moves.items()}, codes


#: The three examples of issue 31 (positions of the puzzle set of 2026-12-02).
ISSUE_EXAMPLES = {
    # break-the-seven: the only "saving" move 5Y@a4 leaves neither side a placement, pass, pass,
    # and South wins 6-5 by exhaustion; every other move leaves South's seven standing.
    "97248b3f": "a1:2Y4B1R,b1:1Y3G,c1:1Y,e1:5R,f1:5Y3B,g1:5G3Y1W4R,a2:3Y4W2G5B,c2:2G4Y1B3W,d2:4G,f2:3R,a3:2B,"
    "b3:4W5G1B,c3:3B,e3:1G5W,f3:2W3R5B1G,g3:5W2B4G1R,a4:4B3W,b4:2R,c4:2W4R,e4:2R4Y,f4:3G5R2Y1W - 5Y north 1R@g3 0 *",
    # win-in-1: 4Y@a3 makes seven no reply breaks, but 4Y@c1 wins too (in 4 plies).
    "f9b57479": "a1:4B3Y1W5R,b1:2B1G4W,c1:3B2R,f1:5G,b2:5B,c2:3G2W,d2:2Y3W4G1R,e2:4Y,f2:2G3R1B5Y,g2:3R5W1G,"
    "b3:4R5Y1B,c3:2W1Y5B,d3:3G4B,f3:4R5G2B,g3:4W2R,a4:5R3Y1W2G,c4:1Y,e4:2Y3W,f4:3B,g4:1R5W 4Y 4G south 4B@d3 0 *",
    # hold-on: a forced win for South.
    "1c63af7d": "a1:2W5Y1B4G,f1:3B,g1:2B3W5R,b2:1R5W,c2:3R4W,d2:1W,e2:3W2R5B1Y,f2:3G1W4B2R,g2:4B5G2W,a3:3Y5B1G4R,"
    "b3:2Y1G3R,c3:2G1Y,e3:4G2Y1B5W,f3:2B3Y,g3:4R3G,b4:2G4Y,c4:5R,g4:3B5G1R4W 4Y 5Y south 4R@a3 0 *",
}


@pytest.mark.parametrize("which", ["c", "python"])
def test_issue_examples(which: str) -> None:
    """The values issue 31 states for its three puzzle examples."""
    if which == "c" and kernel.C is None:
        pytest.skip("the C kernel is not built")

    def solved(pid: str) -> Solution:
        game = Game.from_position(ISSUE_EXAMPLES[pid])
        st = kernel.python_state(game.state) if which == "python" else game.state
        return solve(st, moves="exact")

    lost = solved("97248b3f")  # North to move: lost, the longest defence is 5Y@a4 pass pass
    assert (lost.value, lost.plies) == (-1, 3)
    assert [str(m) for m in lost.line] == ["5Y@a4", "pass", "pass"]
    assert lost.moves is not None and all(v == -1 for v, _ in lost.moves.values())
    win = solved("f9b57479")
    assert (win.value, win.plies, str(win.move)) == (1, 2, "4Y@a3")
    assert win.moves is not None
    assert win.moves[Game().tables.move_objects[TABLES.move_code[(3 * 5 + 1, "c1")]]] == (1, 4)  # 4Y@c1 wins too
    assert sum(v == 1 for v, _ in win.moves.values()) > 1
    hold = solved("1c63af7d")
    assert hold.value == 1 and hold.plies is not None
    assert str(hold) == f"Win in {hold.plies} plies"


def _midgame() -> Game:
    game = Game()
    rng = random.Random(5)
    for _ in range(14):
        game.play(rng.choice(list(game.legal_moves())))
    return game


@pytest.mark.parametrize("which", ["c", "python"])
def test_budget_runs_out_unknown(which: str) -> None:
    """Out of budget the answer is "unknown": no value, no move, and the nodes spent."""
    if which == "c" and kernel.C is None:
        pytest.skip("the C kernel is not built")
    game = _midgame()
    st = kernel.python_state(game.state) if which == "python" else game.state
    sol = solve(st, nodes=500)
    assert not sol.solved and sol.value is None and sol.move is None and sol.line == ()
    assert 500 <= sol.nodes <= 501
    assert str(sol) == "Unknown"


@pytest.mark.timing
@pytest.mark.parametrize("which", ["c", "python"])
def test_a_time_budget_runs_out_unknown(which: str) -> None:
    """Out of time (0.05 s) the answer is "unknown" too, within a second (on an idle machine; the
    bound scales with the load measured around the search, tests/helpers.Load)."""
    if which == "c" and kernel.C is None:
        pytest.skip("the C kernel is not built")
    game = _midgame()
    st = kernel.python_state(game.state) if which == "python" else game.state
    with Load() as load:
        timed = solve(st, seconds=0.05)
    assert not timed.solved and timed.value is None and timed.seconds < 1.0 * load.factor, (timed, load.factor)


def test_finished_game_and_untouched_input() -> None:
    game = Game.from_position(ISSUE_EXAMPLES["97248b3f"])
    before = (game.position(), game.state.hash_key(), len(game.history))
    sol = solve(game, moves="wdl")
    assert (game.position(), game.state.hash_key(), len(game.history)) == before
    assert sol.move is not None
    for move in sol.line:
        game.play(move)
    assert game.is_over()
    done = solve(game)
    assert (done.value, done.plies, done.move, done.line) == (1, 0, None, ())  # South to move has won


def test_table_is_reused() -> None:
    """A kept table answers a position it has solved with far fewer nodes, and the same value."""
    codes = positions(1, 99, (6,))[0]
    table = Table(1)
    st = state_of(codes, kernel.NAME)
    first = solve(st, table=table, line=False)
    again = solve(st, table=table, line=False)
    assert first.solved and (again.value, again.plies) == (first.value, first.plies)
    assert again.nodes < first.nodes or first.nodes <= 2
    table.clear()
    assert table.megabytes == 1.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"nodes": 0}, "nodes must be a whole number >= 1"),
        ({"nodes": 2.5}, "nodes must be a whole number >= 1"),
        ({"seconds": 0}, "seconds must be a positive finite number"),
        ({"seconds": float("inf")}, "seconds must be a positive finite number"),
        ({"moves": "all"}, "moves must be None, 'wdl' or 'exact'"),
        ({"table_mb": -1}, "table_mb must be a number of megabytes"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        solve(Game(), **kwargs)  # type: ignore[arg-type]


def test_not_a_game() -> None:
    with pytest.raises(TypeError, match="needs a jericho_game.Game or a kernel State"):
        solve("a1:1R")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="table must be"):
        solve(Game(), table=bytearray(16))  # type: ignore[arg-type]


@needs_c
def test_c_kernel_rejects_bad_arguments() -> None:
    st = Game().state
    for call in (
        lambda: kernel.C.solve(st, -1),
        lambda: kernel.C.solve(st, 0, -1.0),
        lambda: kernel.C.solve(st, 0, 0.0, 9),
        lambda: kernel.C.solve(st, 0, 0.0, 12, bytearray(10)),
        lambda: kernel.C.solve(st, 0, 0.0, 12, None, 3),
        lambda: kernel.C.mcts(st, 1, sims=10, solve_nodes=100),  # solver proofs need solver=True
    ):
        with pytest.raises(ValueError):
            call()


def test_bench_prints_the_solver_table(capsys) -> None:  # type: ignore[no-untyped-def]
    """``jericho bench --solver`` prints one row per size (speed itself is never asserted)."""
    from jericho_game.ai.bench import SOLVER_SIZES, late_game
    from jericho_game.cli import main

    assert main(["bench", "--solver", "--sample", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines if line.split() and line.split()[0].isdigit()]
    assert [int(r[0]) for r in rows] == list(SOLVER_SIZES)
    assert all(r[1].endswith("%") and r[2].endswith("%") for r in rows)
    game = late_game(6, 3)
    assert not game.is_over() and sum(len(game.reserve(side)) for side in ("south", "north")) == 6
    assert main(["bench", "--solver", "--sample", "0"]) == 2


@needs_c
def test_mcts_leaves_solved_are_proofs() -> None:
    """The C MCTS with the solver at its leaves: every proof it reports agrees with the solver's
    win/draw/loss of that move, and late positions get proven roots."""
    proven_roots = 0
    for codes in positions(12, 6060, (6, 7, 8)):
        st = state_of(codes, "c")
        exact = solve(st, moves="wdl", distance=False)
        assert exact.moves is not None
        tree = kernel.C.Tree()
        _, _, _, children = kernel.C.mcts(
            st, 3, sims=3000, greedy=True, solver=True, proofs=True, tree=tree, solve_nodes=20000, solve_pieces=10
        )
        tries, proofs = tree.solver
        assert tries >= proofs >= 1
        for code, _n, _w, proof in children:
            if proof >= 0:
                want = {1: 1, 0: -1, 2: 0}[proof]
                assert exact.moves[TABLES.move_objects[code]][0] == want, (codes, code, proof)
        won = any(p == 1 for *_, p in children)
        all_known = len(children) == len(st.legal_codes()) and all(p >= 0 for *_, p in children)
        proven_roots += won or all_known
    assert proven_roots >= 6


@needs_c
def test_mcts_solves_a_leaf_only_when_it_is_revisited() -> None:
    """``solve_after=N``: a node is solved once, when the search comes back to it with N visits, so
    far fewer solves than with a solve at every new leaf; the proofs agree with the solver all the same."""
    tries = {0: 0, 16: 0}
    for codes in positions(6, 6061, (8, 10)):
        st = state_of(codes, "c")
        exact = solve(st, moves="wdl", distance=False)
        assert exact.moves is not None
        for after in tries:
            tree = kernel.C.Tree()
            _, _, _, children = kernel.C.mcts(
                st,
                3,
                sims=1000,
                greedy=True,
                solver=True,
                proofs=True,
                tree=tree,
                solve_nodes=20000,
                solve_pieces=10,
                solve_after=after,
            )
            tries[after] += tree.solver[0]
            for code, _n, _w, proof in children:
                if proof >= 0:
                    assert exact.moves[TABLES.move_objects[code]][0] == {1: 1, 0: -1, 2: 0}[proof], (codes, code)
    assert 0 < tries[16] < tries[0] / 2, tries
    with pytest.raises(ValueError, match="solve_after"):
        kernel.C.mcts(state_of(codes, "c"), 3, sims=10, solver=True, solve_nodes=10, solve_after=-1)
