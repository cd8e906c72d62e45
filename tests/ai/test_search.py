"""The C search's proofs and greedy playouts (MCTS-solver), checked against a brute-force search."""

from __future__ import annotations

import random

import pytest

from jericho_game import core, kernel
from jericho_game.ai import make_player
from jericho_game.ai._util import to_move
from jericho_game.board import standard_topology
from jericho_game.game import Game

pytestmark = pytest.mark.skipif(kernel.C is None, reason="the C search needs the C kernel")

TABLES = core.tables_for(standard_topology())
#: A random game's first 43 plies: North to move wins in 4 plies (found by the solver, proven below).
DEEP_WIN = [67, 136, 361, 572, 2, 32, 459, 127, 378, 222, 554, 296, 275, 351, 607, 12, 286, 70, 644, 315, 43, 536]
DEEP_WIN += [203, 443, 115, 423, 219, 492, 332, 649, 133, 509, 412, 608, 534, 181, 470, 398, 515, 269, 157, 382, 425]


def _state(history: list[int]) -> core.State:
    state = kernel.new_state(TABLES, "c")
    for code in history:
        state.push(code)
    return state


def wins_within(state: core.State, side: int, plies: int) -> bool:
    """Brute force: whether ``side`` forces a win within ``plies`` plies from ``state``."""
    if state.outcome != core.NO_OUTCOME:
        return state.outcome == side
    if plies == 0:
        return False
    mine = state.turn == side
    for code in state.legal_codes():
        state.push(code)
        won = wins_within(state, side, plies - 1)
        state.pop()
        if won == mine:
            return mine
    return not mine


def test_the_solver_proves_a_deep_win_plays_it_and_stops_early() -> None:
    state = _state(DEEP_WIN)
    me = state.turn
    done, _, _, children = kernel.C.mcts(state, 1, sims=50_000, k=10, defend=True, solver=True, proofs=True)
    won = [code for code, _, _, proof in children if proof == 1]
    assert won and done < 50_000  # a proven root ends the search
    for code in won:
        state.push(code)
        assert wins_within(state, me, 3), f"{code} was proven won but is not"
        state.pop()
    for code in [code for code, _, _, proof in children if proof == 0][:20]:
        state.push(code)
        assert wins_within(state, 1 - me, 5), f"{code} was proven lost but is not"
        state.pop()
    # Without the solver the same search spends its whole budget and proves nothing.
    done, _, _, children = kernel.C.mcts(state, 1, sims=3_000, k=10, defend=True, proofs=True)
    assert done == 3_000 and all(proof in (-1, 2) for *_, proof in children)


def test_a_player_with_the_solver_plays_the_proven_win() -> None:
    game = Game()
    state = _state(DEEP_WIN)
    for code in DEEP_WIN:
        game.play(to_move(game, code))
    player = make_player("mcts:sims=50000,k=10,defend=1,solver=1,seed=3")
    move = player.choose_move(game)
    code = next(c for c in state.legal_codes() if to_move(game, c) == move)
    assert player.last_proofs.get(code) == 1
    state.push(code)
    assert wins_within(state, 1 - state.turn, 3)


def test_facing_an_unbreakable_seven_every_move_is_proven_lost() -> None:
    # Play random games until the side to move faces seven monoliths it cannot break.
    rng = random.Random(8)
    for _ in range(400):
        state = kernel.new_state(TABLES, "c")
        while state.outcome == core.NO_OUTCOME:
            opp = 1 - state.turn
            if state.score[opp] >= core.SEVEN and not state.breaks_possible(opp):
                break
            codes = state.legal_codes()
            state.push(codes[rng.randrange(len(codes))])
        else:
            continue
        n_legal = len(state.legal_codes())
        done, _, _, children = kernel.C.mcts(state, 2, sims=100_000, solver=True, proofs=True)
        assert len(children) == n_legal and all(proof == 0 for *_, proof in children)
        assert done < 100_000
        return
    pytest.fail("no position facing an unbreakable seven in 400 random games")


def test_the_review_calls_a_proven_position_exact() -> None:
    from jericho_game.ai.analysis import evaluate

    game = Game()
    for code in DEEP_WIN:
        game.play(to_move(game, code))
    found = evaluate(game, len(DEEP_WIN), sims=20_000, seed=1)
    assert found.exact and found.chance(found.turn) == 1.0
    assert found.best is not None


def test_a_sliced_engine_search_ends_once_the_solver_proves_the_position() -> None:
    # Each slice of a proven root runs one simulation: without the stop, "go nodes 1000000"
    # would call the search a million times.
    from jericho_game.cli.protocol import EngineSession

    game = Game()
    for code in DEEP_WIN:
        game.play(to_move(game, code))
    session = EngineSession(make_player("master"), spec="master")
    session.handle("position start moves " + " ".join(str(m) for m in game.history))
    search = session.search(["nodes", "1000000", "seed", "3"])
    search.run()
    assert search.slices < 200
    state = _state(DEEP_WIN)
    code = next(c for c in state.legal_codes() if to_move(game, c) == search.move)
    state.push(code)
    assert wins_within(state, 1 - state.turn, 3)


@pytest.mark.skipif(kernel.C is None, reason="the final-move choice is the C search's")
def test_final_lcb_prefers_the_surer_move_to_the_most_visited(monkeypatch: pytest.MonkeyPatch) -> None:
    from jericho_game.ai import mcts as mcts_module

    assert mcts_module._lower_bound(90, 70) > mcts_module._lower_bound(100, 50)
    assert mcts_module._lower_bound(1000, 600) > mcts_module._lower_bound(10, 6)  # more visits, surer
    g = Game()
    codes = g.state.legal_codes()[:2]
    fake = [(codes[0], 100, 50.0, -1), (codes[1], 90, 70.0, -1)]
    monkeypatch.setattr(kernel.C, "mcts", lambda *a, **k: (190, 0.01, 191, fake))
    assert make_player("mcts:sims=190,greedy=1,final=visits").choose_move(g) == to_move(g, codes[0])
    assert make_player("mcts:sims=190,greedy=1,final=lcb").choose_move(g) == to_move(g, codes[1])
    with pytest.raises(ValueError, match="expected one of visits, lcb"):
        make_player("mcts:final=max")
