"""The compiled kernel (jericho_game._kernel) equals the pure-Python core, and fails safely.

Skipped as a whole only when the extension is not built (the fallback itself is tested in
tests/test_packaging.py, which installs the sdist with no compiler).
"""

from __future__ import annotations

import copy
import os
import pickle
import random
import subprocess
import sys
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jericho_game import Game, Move, core, kernel
from jericho_game.ai import Limit, make_player
from jericho_game.board import standard_topology
from jericho_game.position import parse_position
from tests import kernel_compare
from tests.conftest import load_conformance
from tests.helpers import position_with, spread_all_pieces

pytestmark = pytest.mark.skipif(kernel.C is None, reason="the C kernel is not built here")

TABLES = core.tables_for(standard_topology())


@pytest.mark.parametrize("block", range(8))
def test_two_thousand_random_games_agree_ply_by_ply(block: int) -> None:
    """2,000 games in all: every figure after every ply, then every undo back to the start."""
    plies = sum(kernel_compare.compare_game(seed) for seed in range(block * 250, (block + 1) * 250))
    assert plies > 250 * 20


@pytest.mark.parametrize("guided", [1, 2, 3, 8])
def test_c_playouts_follow_the_rules(guided: int) -> None:
    kernel_compare.compare_playouts(guided, 300, guided)


@pytest.mark.parametrize("guided", [1, 3, 10])
def test_defending_playouts_follow_the_rules_and_break_every_breakable_seven(guided: int) -> None:
    defended = kernel_compare.compare_playouts(40 + guided, 150, guided, defend=True)
    assert defended > 50  # the rule was exercised, not just never triggered


def test_greedy_playouts_play_a_best_move_by_margin_and_break_sevens() -> None:
    defended = kernel_compare.compare_playouts(60, 40, 0)
    assert defended > 5  # the seven-breaking priority was exercised


def test_defending_playouts_run_to_exhaustion_more_often() -> None:
    """Guided playouts end by a careless seven almost always; defended ones much less often."""
    start = kernel.new_state(TABLES, "c")
    lengths = {}
    for defend in (False, True):
        total = 0
        for seed in range(200):
            moves: list[int] = []
            kernel.C.playout(start, seed, 3, moves, defend)
            total += len(moves)
        lengths[defend] = total / 200
    assert lengths[False] < 36 < 44 < lengths[True]


def test_conformance_games_agree() -> None:
    games = load_conformance()
    assert len(games) == 205
    for record in games:
        py = kernel.new_state(TABLES, "python")
        c = kernel.new_state(TABLES, "c")
        g = Game()
        for i, move in enumerate(record["moves"]):
            code = g.tables.object_code[id(g.play(move))]
            py.push(code)
            c.push(code)
            kernel_compare.assert_same(py, c, f"conformance {record['seed']} ply {i + 1}")
        assert c.outcome == ["south", "north", "draw"].index(record["outcome"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**6), max_size=60), st.integers(0, 2**32))
def test_positions_loaded_from_text_agree(choices: list[int], seed: int) -> None:
    """A position reached by arbitrary choices, loaded from its text into both kernels, then played on."""
    g = Game()
    for x in choices:
        if g.is_over():
            break
        moves = g.legal_moves()
        g.play(moves[x % len(moves)])
    text = g.position()
    py = core.State(TABLES)
    c = kernel.new_state(TABLES, "c")
    parse_position(text, TABLES, py)
    parse_position(text, TABLES, c)
    kernel_compare.assert_same(py, c, text)
    rng = random.Random(seed)
    while py.outcome == core.NO_OUTCOME:
        codes = py.legal_codes()
        code = codes[rng.randrange(len(codes))]
        py.push(code)
        c.push(code)
        kernel_compare.assert_same(py, c, f"{text} then {py.history_codes()}")
        kernel_compare.probe(py, c, rng, text)


def test_python_state_round_trip_keeps_every_figure() -> None:
    rng = random.Random(3)
    for _ in range(100):
        c = kernel.new_state(TABLES, "c")
        for _ in range(rng.randrange(60)):
            if c.outcome != core.NO_OUTCOME:
                break
            codes = c.legal_codes()
            c.push(codes[rng.randrange(len(codes))])
        py = kernel.python_state(c)
        snap_c, snap_py = kernel_compare.snapshot(c), kernel_compare.snapshot(py)
        snap_c["ply"] = snap_py["ply"] = 0
        assert snap_c == snap_py


def test_pieces_left_counts_both_reserves_in_either_kernel() -> None:
    def on_board(state) -> int:  # each piece of a tower is a 5-bit group of its cell's code
        return sum((x.bit_length() + 4) // 5 for x in state.code)

    rng = random.Random(4)
    c = kernel.new_state(TABLES, "c")
    py = kernel.new_state(TABLES, "python")
    assert kernel.pieces_left(c) == kernel.pieces_left(py) == 50
    while c.outcome == core.NO_OUTCOME:
        codes = c.legal_codes()
        code = codes[rng.randrange(len(codes))]
        c.push(code)
        py.push(code)
        assert kernel.pieces_left(c) == kernel.pieces_left(py) == 50 - on_board(c)


# -- malformed input raises Python errors, never crashes --------------------------------------


def test_bad_move_codes_raise() -> None:
    s = kernel.new_state(TABLES, "c")
    with pytest.raises(TypeError, match="must be an int"):
        s.push("5R@d2")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        s.push(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="out of range"):
        s.push(-1)
    with pytest.raises(ValueError, match="out of range"):
        s.push(TABLES.pass_code + 1)
    with pytest.raises((ValueError, OverflowError)):
        s.push(10**30)
    with pytest.raises(ValueError, match="illegal"):
        s.push(TABLES.pass_code)  # passing is not allowed at the start
    with pytest.raises(IndexError, match="nothing|empty"):
        s.pop()
    assert s.is_legal(10**30) is False and s.is_legal(-5) is False
    with pytest.raises(TypeError):
        s.is_legal(None)  # type: ignore[arg-type]
    assert kernel_compare.snapshot(s) == kernel_compare.snapshot(kernel.new_state(TABLES, "c"))


def test_every_malformed_call_of_the_sanitizer_run_raises() -> None:
    assert kernel_compare.malformed() == 15


def test_push_on_a_finished_game_raises_and_changes_nothing() -> None:
    rng = random.Random(5)
    s = kernel.new_state(TABLES, "c")
    while s.outcome == core.NO_OUTCOME:
        codes = s.legal_codes()
        s.push(codes[rng.randrange(len(codes))])
    before = kernel_compare.snapshot(s)
    for code in (0, 17, TABLES.pass_code):
        with pytest.raises(ValueError, match="game is over"):
            s.push(code)
    assert kernel_compare.snapshot(s) == before
    assert s.legal_codes() == [] and s.legal_moves() == []


def test_bad_arguments_to_queries_raise() -> None:
    s = kernel.new_state(TABLES, "c")
    with pytest.raises(ValueError):
        s.fits(25)
    with pytest.raises(ValueError):
        s.leader_changes(5, 0)
    with pytest.raises(ValueError):
        s.leader_changes(0, 26)
    with pytest.raises(TypeError):
        s.leader_changes("a", 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        s.margin_deltas(7)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        s.margin_deltas([0, 99999])
    with pytest.raises(ValueError):
        s.breaks_possible(2)
    with pytest.raises(TypeError):
        kernel.C.State(None, TABLES)
    with pytest.raises((TypeError, ValueError)):
        kernel.C.Board(99, 1, [], [], [], [], [], [], 0, [], [], ())
    with pytest.raises(TypeError, match="pickle"):
        import pickle

        pickle.dumps(s)


def test_bad_load_arguments_raise_and_keep_the_state() -> None:
    s = kernel.new_state(TABLES, "c")
    s.push(0)
    before = kernel_compare.snapshot(s)
    full = (1 << 25) - 1
    bad = [
        ({99: [0]}, (full, full), 0, None, 0, -1),
        ({0: [0, 1, 2, 3, 4]}, (full, full), 0, None, 0, -1),
        ({0: [30]}, (full, full), 0, None, 0, -1),
        ({0: "x"}, (full, full), 0, None, 0, -1),
        ({}, (full, 1 << 26), 0, None, 0, -1),
        ({}, (full, full), 2, None, 0, -1),
        ({}, (full, full), 0, (0, 3), 0, -1),
        ({}, (full, full), 0, None, 5, -1),
        ({}, (full, full), 0, None, 0, 7),
    ]
    for args in bad:
        with pytest.raises((ValueError, TypeError)):
            s.load(*args)
        assert kernel_compare.snapshot(s) == before


def test_bad_playout_and_search_arguments_raise() -> None:
    s = kernel.new_state(TABLES, "c")
    with pytest.raises(TypeError):
        kernel.C.playout(s, "seed")
    with pytest.raises(ValueError, match=r"\[0, 1000\]"):
        kernel.C.playout(s, 1, -1)  # 0 is the greedy playout, below it nothing
    with pytest.raises(ValueError):
        kernel.C.playout(s, 1, 1001)
    with pytest.raises(TypeError):
        kernel.C.playout(s, 1, 1, moves=())
    with pytest.raises(TypeError):
        kernel.C.playout(Game(), 1)
    with pytest.raises(ValueError):
        kernel.C.playouts(s, -1, 1)
    with pytest.raises(ValueError):
        kernel.C.mcts(s, 1)  # neither simulations nor seconds
    with pytest.raises(ValueError):
        kernel.C.mcts(s, 1, sims=10, k=0)
    with pytest.raises(ValueError):
        kernel.C.mcts(s, 1, sims=10, widen=-1.0)


def test_search_on_a_finished_game_raises() -> None:
    g = Game.from_moves("5R@d2 1G@d3")
    s = g.state.copy()
    while s.outcome == core.NO_OUTCOME:
        s.push(s.legal_codes()[0])
    with pytest.raises(ValueError, match="over"):
        kernel.C.mcts(s, 1, sims=10)
    assert kernel.C.playout(s, 1) == s.outcome


def test_games_pickle_on_either_kernel() -> None:
    import pickle

    from tests.helpers import position_with

    for game in (Game.from_moves("5R@d2 1G@d3 2Y@d3"), Game.from_position(position_with({"a1": "1G2Y"}))):
        game.play(game.legal_moves()[3])
        again = pickle.loads(pickle.dumps(game))
        assert again.position() == game.position() and again.history == game.history
        assert again.start_position == game.start_position
        assert again.state.hash_key() == game.state.hash_key()
        assert type(again.state) is type(game.state)


def test_kernel_states_count_as_core_states() -> None:
    assert isinstance(kernel.new_state(TABLES, "c"), core.State)
    assert not isinstance(object(), core.State)


def test_the_fallback_can_be_forced_and_is_reported() -> None:
    code = "from jericho_game import Game, kernel; print(kernel.NAME, type(Game().state).__module__)"
    env = dict(os.environ, JERICHO_KERNEL="python")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["python", "jericho_game.core"]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["c", "jericho_game._kernel"]
    version = subprocess.run(
        [sys.executable, "-m", "jericho_game", "--version"], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "pure Python" in version


# -- the searches in C against their Python reference -------------------------------------------


@pytest.mark.parametrize("plies", [0, 2, 16, 30])
def test_alphabeta_in_c_equals_the_python_search(plies: int) -> None:
    """Same move, value and node count at fixed depths: the C search is the Python one, move for move."""
    from jericho_game.ai.alphabeta import AlphaBetaPlayer
    from jericho_game.ai.bench import midgame

    game = midgame(plies=plies, seed=5) if plies else Game()
    for depth in (1, 2) if plies != 16 else (1, 2, 3):
        runs = []
        for python in (0, 1):
            p = AlphaBetaPlayer(depth=depth, seed=1, python=python)
            move = p.choose_move(game)
            runs.append((move, p.last_value, p.last_nodes, p.last_depth))
        assert runs[0] == runs[1], (plies, depth, runs)


def test_bad_alphabeta_arguments_raise() -> None:
    s = kernel.new_state(TABLES, "c")
    with pytest.raises(ValueError, match="not legal"):
        kernel.C.alphabeta(s, [TABLES.pass_code])
    with pytest.raises(ValueError, match="no root moves"):
        kernel.C.alphabeta(s, [])
    with pytest.raises(ValueError):
        kernel.C.alphabeta(s, [0], depth=0)
    with pytest.raises(ValueError):
        kernel.C.alphabeta(s, [0], tt_bits=40)
    with pytest.raises(TypeError):
        kernel.C.alphabeta(s, None)
    with pytest.raises(ValueError, match="table must be"):
        kernel.C.alphabeta(s, [0], tt_bits=10, table=bytearray(100))
    with pytest.raises((TypeError, BufferError)):
        kernel.C.alphabeta(s, [0], tt_bits=10, table=b"\xff" * (kernel.C.TT_ENTRY_SIZE << 10))  # read-only
    assert kernel.C.alphabeta(s, [0, 1], depth=1)[0] in (0, 1)


def test_kernels_agree_on_a_board_with_three_cells_per_camp_and_alignment() -> None:
    """Another topology: the C kernel's general settlement path (not the standard board's two slots)."""
    from jericho_game.board import Topology

    cells = [
        {"name": f"{col}{row}", "camp": "south" if row <= 3 else "north", "x": i, "y": row}
        for i, col in enumerate("abc")
        for row in range(1, 7)
    ]
    lines = [{"name": col, "kind": "vertical", "cells": [f"{col}{r}" for r in range(1, 7)]} for col in "abc"]
    lines.append({"name": "x", "kind": "rising diagonal", "cells": ["a1", "b2", "c4"]})
    topo = Topology.from_dict({"name": "narrow", "cells": cells, "alignments": lines, "triangles": []})
    tables = core.tables_for(topo)
    assert max(len(x) for x in tables.align_south) == 3
    plies = sum(kernel_compare.compare_game(seed, tables) for seed in range(60))
    assert plies > 60 * 10
    game = Game(topo)
    assert type(game.state).__module__ == "jericho_game._kernel" and len(game.legal_moves()) == 25 * 18


def test_a_kept_tree_continues_the_search_exactly() -> None:
    """Searching a position in slices on one Tree builds the tree of one uncut search."""
    state = Game.from_moves("5R@d2 1G@d3").state
    whole = kernel.C.mcts(state, 99, sims=900)
    tree = kernel.C.Tree()
    for n in (256, 256, 256, 132):
        sliced = kernel.C.mcts(state, 99, sims=n, tree=tree)
    assert sorted(sliced[3]) == sorted(whole[3]) and tree.simulations == 900 and tree.nodes == whole[2]
    other = Game.from_moves("5R@d2 1G@d3 2Y@d3").state  # another position: the tree starts again
    kernel.C.mcts(other, 99, sims=10, tree=tree)
    assert tree.simulations == 10
    tree.clear()
    assert tree.simulations == 0 and tree.nodes == 0
    with pytest.raises(TypeError, match="Tree"):
        kernel.C.mcts(state, 1, sims=10, tree=object())


def _mid_game(plies: int = 20, seed: int = 4) -> Game:
    game = Game()
    rng = random.Random(seed)
    for _ in range(plies):
        moves = game.legal_moves()
        game.play(moves[rng.randrange(len(moves))])
    return game


def test_a_rerooted_tree_starts_from_the_subtree_one_or_two_plies_below() -> None:
    """reroot=True: a position below the kept root is searched on from its subtree's visits."""
    game = _mid_game()
    state = game.state
    tree = kernel.C.Tree()
    _, _, _, children = kernel.C.mcts(state, 5, sims=3000, tree=tree, reroot=True)
    code, visits, _ = max(children, key=lambda ch: ch[1])
    one = state.copy()
    one.push(code)
    _, _, _, below = kernel.C.mcts(one, 6, sims=1, tree=tree, reroot=True)
    assert tree.simulations == visits + 1  # one ply below: the subtree of the move played
    assert sum(n for _, n, _ in below) >= visits - 1  # its children came along
    assert all(one.is_legal(c) for c, _, _ in below)
    # Two plies below: the same first search again (seeded, so the same tree), then the reply.
    reply, reply_visits, _ = max(below, key=lambda ch: ch[1])
    again = kernel.C.Tree()
    kernel.C.mcts(state, 5, sims=3000, tree=again, reroot=True)
    two = one.copy()
    two.push(reply)
    kernel.C.mcts(two, 7, sims=100, tree=again, reroot=True)
    # (the one-ply search above added one simulation, which may have gone through the reply)
    assert again.simulations - 100 in (reply_visits - 1, reply_visits) and reply_visits > 1
    # Three plies below, or another game: a new tree.
    three = two.copy()
    for c in three.legal_codes():
        three.push(c)
        if three.outcome < 0:  # the game goes on
            break
        three.pop()
    kernel.C.mcts(three, 8, sims=50, tree=again, reroot=True)
    assert again.simulations == 50
    kernel.C.mcts(_mid_game(seed=9).state, 8, sims=40, tree=again, reroot=True)
    assert again.simulations == 40
    # Without reroot a new position starts a new tree, as before.
    plain = kernel.C.Tree()
    kernel.C.mcts(state, 5, sims=500, tree=plain)
    kernel.C.mcts(one, 6, sims=30, tree=plain)
    assert plain.simulations == 30


def test_transposition_statistics_change_the_search_only_where_a_position_repeats() -> None:
    """transpose=True: nodes holding one position share their statistics; without repeats, nothing changes."""
    options = {"sims": 5000, "greedy": True, "solver": True}
    start = Game().state  # 650 moves a position: no position is reached twice in 5000 simulations
    tree = kernel.C.Tree()
    shared = kernel.C.mcts(start, 1, tree=tree, transpose=True, **options)
    plain = kernel.C.mcts(start, 1, **options)
    assert tree.positions == tree.nodes - 1  # every node but the root, each its own position
    assert sorted(shared[3]) == sorted(plain[3])
    late = _mid_game(36, seed=7).state  # fewer moves: some positions are reached by two move orders
    tree = kernel.C.Tree()
    shared = kernel.C.mcts(late, 1, tree=tree, transpose=True, **options)
    plain = kernel.C.mcts(late, 1, **options)
    assert 0 < tree.positions < tree.nodes - 1
    assert sorted(shared[3]) != sorted(plain[3]) and all(late.is_legal(c) for c, _, _ in shared[3])
    without = kernel.C.Tree()
    kernel.C.mcts(late, 1, tree=without, **options)
    assert without.positions == 0
    player = make_player("mcts:sims=400,greedy=1,solver=1,transpose=1", seed=2)
    game = _mid_game(36, seed=7)
    assert game.is_legal(player.choose_move(game)) and player.transpose and 0 < player.last_sims <= 400


def test_the_mcts_player_with_subtree_keeps_the_subtree_between_moves() -> None:
    """subtree=1: the visits of the move played (and of the reply) carry over to the next search."""
    from jericho_game.ai.mcts import KernelMCTSPlayer

    game = _mid_game()
    p = KernelMCTSPlayer(sims=2000, seed=1, subtree=1, solver=1, greedy=1)
    move = p.choose_move(game, Limit(seed=11))  # a seed per move, as the arena gives
    played = next(n for code, n, _ in p.last_children if game.tables.move_objects[code] == move)
    game.play(move)
    p.choose_move(game, Limit(seed=12))
    assert p.last_reused == played > 0 and p.last_sims == 2000
    fresh = KernelMCTSPlayer(sims=2000, seed=1, solver=1, greedy=1)  # the default: no subtree
    fresh.choose_move(game, Limit(seed=12))
    assert fresh.last_reused == 0
    # Reproducible: the same searches in the same order give the same moves.
    moves = []
    for _ in range(2):
        q = KernelMCTSPlayer(sims=500, seed=3, subtree=1)
        g = _mid_game()
        line = []
        for ply in range(4):
            m = q.choose_move(g, Limit(seed=ply))
            line.append((str(m), q.last_reused))
            g.play(m)
        moves.append(line)
    assert moves[0] == moves[1] and any(reused for _, reused in moves[0])


def test_the_mcts_player_keeps_its_tree_only_for_the_same_position() -> None:
    from jericho_game.ai.mcts import KernelMCTSPlayer

    game = Game.from_moves("5R@d2 1G@d3")
    p = KernelMCTSPlayer(sims=300, seed=1)
    p.choose_move(game)
    p.choose_move(game)
    assert p.last_reused == 300
    game.play(game.legal_moves()[0])
    p.choose_move(game)
    assert p.last_reused == 0
    p.choose_move(game, Limit(seed=3))  # a seed asks for a fresh, reproducible search
    assert p.last_reused == 0


# -- the lazy legal-move sequence ---------------------------------------------------------------


def _random_c_games(count: int, seed: int) -> list[Game]:
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        g = Game()
        for _ in range(rng.randrange(70)):
            if g.is_over():
                break
            moves = g.legal_moves()
            g.play(moves[rng.randrange(len(moves))])
        games.append(g)
    return games


def test_legal_moves_sequence_indexes_like_the_list_of_the_python_core() -> None:
    """Every index, negative indices and slices give the Python core's moves, in its order."""
    for g in _random_c_games(60, 5):
        view = g.legal_moves()
        py = kernel.python_state(g.state).legal_moves()
        assert isinstance(view, kernel.C.LegalMoves)
        assert len(view) == len(py) and bool(view) == bool(py)
        assert [view[i] for i in range(len(view))] == py
        assert [view[i] for i in range(-len(view), 0)] == py
        assert list(view) == py and view.to_list() == py and view == py and py == view
        assert view[1:7] == py[1:7] and view[::-3] == py[::-3]
        for m in py[:: max(1, len(py) // 5)]:
            assert m in view and view.index(m) == py.index(m) and view.count(m) == 1
        assert all(a is b for a, b in zip(view, py, strict=True))  # the same interned Move objects


def test_legal_moves_sequence_is_a_snapshot_and_read_only() -> None:
    g = Game()
    before = g.legal_moves()
    as_list = list(before)
    g.play(before[0])
    assert before == as_list and before != g.legal_moves()
    assert isinstance(before, Sequence)
    with pytest.raises(TypeError):
        before[0] = before[1]  # type: ignore[index]
    with pytest.raises(TypeError, match="unhashable"):
        hash(before)
    assert copy.copy(before) == as_list and pickle.loads(pickle.dumps(before)) == as_list
    assert repr(before).startswith("LegalMoves([") and str(as_list[0]) in repr(before)


def test_legal_moves_sequence_rejects_bad_indices() -> None:
    view = Game().legal_moves()
    for bad in (len(view), -len(view) - 1):
        with pytest.raises(IndexError, match="out of range"):
            view[bad]
    for huge in (10**30, -(10**30)):  # as with a list: too big for an index at all
        with pytest.raises(IndexError, match="index-sized integer"):
            view[huge]
    with pytest.raises(TypeError, match="integers or slices, not str"):
        view["5R@a4"]  # type: ignore[call-overload]
    with pytest.raises(ValueError):
        view.index(Move(None, None))  # passing is not legal at the start
    assert view != "not a sequence" and view != list(view)[1:] and Move(None, None) not in view


def test_legal_moves_sequence_of_a_forced_pass_and_of_a_finished_game() -> None:
    towers = spread_all_pieces([f"{c}{r}" for r in (3, 4) for c in "abcdefg" if f"{c}{r}" != "d4"])
    forced = Game.from_position(position_with(towers, turn="north", taken_first_from="north"))
    view = forced.legal_moves()
    assert view == [Move(None, None)] and len(view) == 1 and view[0] is view[-1] and view[0].is_pass
    assert list(view) == kernel.python_state(forced.state).legal_moves()
    over = [g for g in _random_c_games(300, 9) if g.is_over()]
    assert over
    for g in over:
        view = g.legal_moves()
        assert view == [] and len(view) == 0 and not view and list(view) == []
        with pytest.raises(IndexError):
            view[0]
