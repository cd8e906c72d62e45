"""The expert and master play solved endgames exactly (issue 31 point 2); the v2 levels stay frozen."""

from __future__ import annotations

import pytest

from jericho_game import Game, kernel
from jericho_game.ai import Limit, make_player
from jericho_game.ai.solver import solve
from tests.ai.test_solver import ISSUE_EXAMPLES, TABLES, positions

pytestmark = pytest.mark.skipif(kernel.C is None, reason="the endgame play is the C search's")


def game_of(codes: list[int]) -> Game:
    game = Game()
    for c in codes:
        game.play(TABLES.move_objects[c])
    return game


def test_v2_levels_are_frozen_before_the_endgame_solver() -> None:
    from jericho_game.ai import levels

    for spec, budget in (("expert-v2", levels.EXPERT_V2_C), ("master-v2", levels.MASTER_V2_C)):
        v2 = make_player(spec, seed=1)
        assert v2.name == spec
        assert (v2.sims, v2.time) == budget  # type: ignore[attr-defined]
        assert v2.greedy and v2.solver and not v2.endgame and v2.solve_nodes == 0  # type: ignore[attr-defined]
        assert (v2.c, v2.widen) == (0.3, 2.0)  # type: ignore[attr-defined]
    for spec in ("expert", "master", "expert-v3", "master-v3"):
        level = make_player(spec, seed=1)
        assert level.endgame and level.solve_nodes > 0 and level.solve_after == 8  # type: ignore[attr-defined]
    # Before the solver reaches (a full board of reserves) v2 and v3 (v2 with the endgame solver,
    # the levels before the value network) search alike.
    game = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    a = make_player("expert-v2", seed=3).choose_move(game, Limit(nodes=300, seed=3))
    b = make_player("expert-v3", seed=3).choose_move(game, Limit(nodes=300, seed=3))
    assert a == b


@pytest.mark.parametrize("spec", ["expert", "master"])
def test_a_solved_win_is_played_fastest(spec: str) -> None:
    """A forced win (issue 31's hold-on example, won in 4 plies): the level plays a move of it."""
    game = Game.from_position(ISSUE_EXAMPLES["1c63af7d"])
    sol = solve(game, moves="exact")
    assert sol.value == 1 and sol.moves is not None
    player = make_player(spec, seed=1)
    move = player.choose_move(game, Limit(nodes=2000, seed=1))
    assert sol.moves[move] == (1, sol.plies)
    assert player.last_solution is not None and player.last_solution.value == 1  # type: ignore[attr-defined]


def test_solved_positions_get_a_move_of_the_best_value() -> None:
    """Seeded late positions: from a won one the fastest win, from a drawn one a drawing move,
    from a lost one the longest defence."""
    player = make_player("expert", seed=1)
    seen = {1: 0, 0: 0, -1: 0}
    for codes in positions(60, 2718, (4, 5, 6)):
        game = game_of(codes)
        sol = solve(game, moves="exact")
        assert sol.moves is not None and sol.value is not None
        if len(sol.moves) < 2:
            continue
        move = player.choose_move(game, Limit(nodes=3000, seed=1))
        assert sol.moves[move] == (sol.value, sol.plies), (codes, move, sol)
        seen[sol.value] += 1
    assert all(n >= 3 for n in seen.values()), seen


def test_the_longest_defence_where_the_old_level_gives_up_sooner() -> None:
    """A lost position where moves lose at different distances: the level holds out longest."""
    player = make_player("expert", seed=1)
    found = 0
    for codes in positions(80, 1618, (5, 6)):
        game = game_of(codes)
        sol = solve(game, moves="exact")
        assert sol.moves is not None
        lengths = {p for v, p in sol.moves.values() if v == -1}
        if sol.value != -1 or len(lengths) < 2:
            continue
        move = player.choose_move(game, Limit(nodes=3000, seed=1))
        assert sol.moves[move] == (-1, max(lengths)), (codes, move)
        found += 1
    assert found >= 3
