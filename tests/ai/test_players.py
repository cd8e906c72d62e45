"""AI players: legality, the seven-monolith tactics, greedy's rules, MCTS and alpha-beta details.

All budgets here are node/simulation budgets (never wall-clock), so the tests are
deterministic; speed and time limits are measured by ``jericho_game.ai.bench``.
"""

from __future__ import annotations

import random

import pytest

from jericho_game import PASS, Game, Move, kernel
from jericho_game.ai import Limit, make_player
from jericho_game.ai.alphabeta import AlphaBetaPlayer, evaluate, symmetry_classes
from jericho_game.ai.greedy import GreedyPlayer
from jericho_game.ai.mcts import MCTSPlayer
from tests.helpers import Load

SEARCHERS = ["greedy", "mcts:sims=300", "mcts-py:sims=300", "alphabeta:depth=2", "alphabeta-py:depth=2"]
ALL_PLAYERS = ["random", *SEARCHERS, "easy", "medium", "hard"]

_FULL = "a1 b1 c1 e1 f1".split()
# South has placed all 25 pieces (none fits anywhere for South afterwards): a forced pass.
COLS = "RYGBW"
_FORCED_PASS = (
    ",".join(
        [f"{c}:" + "".join(f"{s + 1}{COLS[(s + k) % 5]}" for s in range(4)) for k, c in enumerate(_FULL)]
        + [f"{c}:5{COLS[k]}" for k, c in enumerate("g1 a2 b2 c2 d2".split())]
    )
    + " - 1RYGBW2RYGBW3RYGBW4RYGBW5RYGBW south - 0 *"
)


# -- an oracle written with the public Game API only -----------------------------------------
def margin(game: Game, side: int) -> int:
    s = game.score()
    return s[side] - s[1 - side]


def can_break(game: Game, holder: int) -> bool:
    """Whether the side to move has a reply leaving ``holder`` below 7."""
    for m in game.legal_moves():
        game.play(m)
        broken = game.score()[holder] < 7
        game.undo()
        if broken:
            return True
    return False


def winning_sevens(game: Game) -> list[str]:
    """Moves reaching 7 monoliths that no reply breaks (a certain win)."""
    me = game.state.turn
    out = []
    for m in game.legal_moves():
        game.play(m)
        if not game.is_over() and game.score()[me] >= 7 and not can_break(game, me):
            out.append(str(m))
        game.undo()
    return out


def breaking_moves(game: Game) -> list[str]:
    """Moves that bring the opponent (holding 7+) below 7."""
    opp = 1 - game.state.turn
    out = []
    for m in game.legal_moves():
        game.play(m)
        if game.score()[opp] < 7:
            out.append(str(m))
        game.undo()
    return out


def random_positions(seed: int, count: int, min_ply: int = 0) -> list[Game]:
    rng = random.Random(seed)
    out: list[Game] = []
    while len(out) < count:
        g = Game()
        target = rng.randrange(min_ply, 40)
        while not g.is_over() and len(g.history) < target:
            moves = g.legal_moves()
            g.play(moves[rng.randrange(len(moves))])
        if not g.is_over():
            out.append(g)
    return out


def find_positions(kind: str, count: int, seed: int = 7) -> list[tuple[Game, list[str]]]:
    """Real positions from seeded random games where a winning 7 / a break exists (but not every move works)."""
    rng = random.Random(seed)
    found: list[tuple[Game, list[str]]] = []
    while len(found) < count:
        g = Game()
        while not g.is_over() and len(found) < count:
            me = g.state.turn
            s = g.score()
            if kind == "seven" and s[me] >= 5 and s[1 - me] < 7:
                good = winning_sevens(g)
                if good and len(good) < len(g.legal_moves()):
                    found.append((g.copy(), good))
            elif kind == "break" and s[1 - me] >= 7:
                good = breaking_moves(g)
                if good and len(good) < len(g.legal_moves()) // 2:
                    found.append((g.copy(), good))
            moves = g.legal_moves()
            g.play(moves[rng.randrange(len(moves))])
    return found


@pytest.fixture(scope="module")
def seven_positions() -> list[tuple[Game, list[str]]]:
    return find_positions("seven", 3)


@pytest.fixture(scope="module")
def break_positions() -> list[tuple[Game, list[str]]]:
    return find_positions("break", 3)


# -- tactics ------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", SEARCHERS + ["alphabeta:depth=1"])
def test_finds_unbreakable_seven(spec: str, seven_positions: list[tuple[Game, list[str]]]) -> None:
    for game, good in seven_positions:
        player = make_player(spec, seed=1)
        move = player.choose_move(game, Limit(seed=3))
        assert str(move) in good, f"{spec} played {move} in {game.position()}, winning moves: {good[:5]}"


@pytest.mark.parametrize("spec", SEARCHERS + ["alphabeta:depth=1"])
def test_breaks_opponents_seven(spec: str, break_positions: list[tuple[Game, list[str]]]) -> None:
    for game, good in break_positions:
        player = make_player(spec, seed=1)
        move = player.choose_move(game, Limit(seed=3))
        assert str(move) in good, f"{spec} played {move} in {game.position()}, breaking moves: {good[:5]}"


def test_alphabeta_sees_the_win_it_plays(seven_positions: list[tuple[Game, list[str]]]) -> None:
    game, _ = seven_positions[0]
    p = AlphaBetaPlayer(depth=2)
    p.choose_move(game)
    assert p.last_value > 50_000  # a forced win was proven, not guessed


# -- legality -----------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ALL_PLAYERS)
def test_legal_and_never_passes_needlessly(spec: str) -> None:
    player = make_player(spec, seed=5)
    for game in random_positions(11, 6):
        before = game.position()
        history = [str(m) for m in game.history]
        move = player.choose_move(game, Limit(nodes=200 if "alphabeta" in spec else None, seed=1))
        assert game.is_legal(move), f"{spec} played illegal {move} in {before}"
        assert not move.is_pass
        assert game.position() == before and [str(m) for m in game.history] == history, "game was modified"


@pytest.mark.parametrize("spec", ["random", *SEARCHERS, "expert"])
def test_forced_pass(spec: str) -> None:
    game = Game.from_position(_FORCED_PASS)
    assert game.legal_moves() == [PASS]
    assert make_player(spec, seed=1).choose_move(game, Limit(nodes=50, seed=1)) == PASS


@pytest.mark.parametrize("spec", SEARCHERS)
def test_finished_game_is_refused(spec: str) -> None:
    game, _ = find_positions("break", 1)[0]
    game.play(next(m for m in game.legal_moves() if str(m) not in breaking_moves(game)))
    assert game.is_over()
    with pytest.raises(ValueError, match="over"):
        make_player(spec).choose_move(game)


def test_whole_games_between_players_are_legal() -> None:
    players = [make_player("mcts:sims=60", seed=1), make_player("alphabeta:depth=1", seed=2)]
    for start in range(2):
        game = Game()
        while not game.is_over():
            side = (game.state.turn + start) % 2
            move = players[side].choose_move(game, Limit(nodes=60, seed=len(game.history)))
            game.play(move)  # raises on an illegal move
        assert game.outcome() in ("south", "north", "draw")


# -- greedy ---------------------------------------------------------------------------------------
def test_greedy_maximises_margin() -> None:
    for game in random_positions(3, 8, min_ply=4):
        me = game.state.turn
        if max(game.score()) >= 5:
            continue  # seven-rule positions are checked elsewhere
        best = -99
        for m in game.legal_moves():
            game.play(m)
            best = max(best, margin(game, me))
            game.undo()
        move = GreedyPlayer(seed=1).choose_move(game)
        game.play(move)
        assert margin(game, me) == best
        game.undo()


def test_greedy_random_among_equals_and_seeded() -> None:
    game = Game()  # every first move is worth 0: all 650 are equal
    a = [str(GreedyPlayer(seed=s).choose_move(game)) for s in range(8)]
    b = [str(GreedyPlayer(seed=s).choose_move(game)) for s in range(8)]
    assert a == b
    assert len(set(a)) > 4


def test_greedy_avoids_keeping_the_opponents_seven(break_positions: list[tuple[Game, list[str]]]) -> None:
    for game, good in break_positions:
        for seed in range(3):
            assert str(GreedyPlayer(seed=seed).choose_move(game)) in good


# -- MCTS ------------------------------------------------------------------------------------------
def test_mcts_reproducible_with_seed_and_sims() -> None:
    game = Game.from_moves("5R@d2 1G@d3")
    a = MCTSPlayer(sims=300, seed=4).choose_move(game)
    b = MCTSPlayer(sims=300, seed=4).choose_move(game)
    assert a == b


def test_mcts_reuses_its_tree_and_reports_speed() -> None:
    p = MCTSPlayer(sims=400, seed=1)
    game = Game()
    m = p.choose_move(game)
    assert p.last_sims == 400 and p.sims_per_second > 0
    reply = _most_visited_reply(p, m, game)
    game.play(m)
    # the opponent answers with the move MCTS explored most below its choice
    game.play(game.tables.move_objects[reply])
    p.choose_move(game)
    assert p.last_reused > 0


def _most_visited_reply(p: MCTSPlayer, m: object, game: Game) -> int:
    root = p._root
    assert root is not None
    child = max(root.children, key=lambda c: c.n)
    assert game.tables.move_objects[child.code] == m
    return max(child.children, key=lambda c: c.n).code


def test_mcts_no_reuse_for_a_different_game() -> None:
    p = MCTSPlayer(sims=200, seed=1)
    p.choose_move(Game.from_moves("5R@d2"))
    p.choose_move(Game.from_moves("5R@a2 1R@a3"))
    assert p.last_reused == 0


def test_mcts_bad_options() -> None:
    with pytest.raises(ValueError, match="sims"):
        MCTSPlayer(sims=0)
    with pytest.raises(ValueError, match="time"):
        MCTSPlayer(time=-1)


# -- alpha-beta --------------------------------------------------------------------------------------
def test_alphabeta_deterministic_and_counts_nodes() -> None:
    game = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    a = AlphaBetaPlayer(nodes=3000, seed=2)
    b = AlphaBetaPlayer(nodes=3000, seed=2)
    assert a.choose_move(game) == b.choose_move(game)
    assert 0 < a.last_nodes <= 3001 and a.last_depth >= 1


def test_alphabeta_transposition_table_reused() -> None:
    game = Game.from_moves("5R@d2 1G@d3")
    p = AlphaBetaPlayer(depth=2, seed=1)
    p.choose_move(game)
    first = p.last_nodes
    p.choose_move(game)
    assert p.last_nodes < first  # the second search finds its answers in the table


def test_symmetry_classes_at_start() -> None:
    game = Game()
    codes = game.state.legal_codes()
    reps = symmetry_classes(game.state, codes)
    # 5 sizes x 14 cells (columns a-c and d, by the mirror), one colour each
    assert len(codes) == 650 and len(reps) == 70
    # after an asymmetric move the mirror no longer applies, colours partly do
    g = Game.from_moves("5R@a1")
    r2 = symmetry_classes(g.state, g.state.legal_codes())
    assert len(r2) < len(g.state.legal_codes())
    assert all(g.state.is_legal(c) for c in r2)


def test_symmetry_does_not_change_the_value() -> None:
    game = Game.from_moves("5R@d2")
    plain = AlphaBetaPlayer(depth=1, symmetry=0, seed=1)
    sym = AlphaBetaPlayer(depth=1, symmetry=1, seed=1)
    plain.choose_move(game)
    sym.choose_move(game)
    assert plain.last_value == sym.last_value
    assert sym.last_nodes < plain.last_nodes


def test_evaluation_is_antisymmetric_in_margin() -> None:
    g = Game.from_moves("5R@d2 1G@d3")  # South leads d
    south_view = evaluate(g.state)  # South to move
    g.play("1R@a1")  # nothing changes on d
    assert evaluate(g.state) < south_view


# -- specs and levels --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["easy", "medium", "hard", "expert", "master"])
def test_levels(name: str) -> None:
    p = make_player(name, seed=1)
    assert p.name == name


def test_expert_time_is_capped() -> None:
    from jericho_game.ai.levels import expert

    with pytest.raises(ValueError, match="expert time"):
        expert(time=5)


def test_bad_specs() -> None:
    from jericho_game.ai import PlayerSpecError

    with pytest.raises(PlayerSpecError, match="nonsense"):
        make_player("mcts:nonsense=1")
    with pytest.raises(PlayerSpecError, match="unknown player"):
        make_player("deepblue")


# -- guided playouts -----------------------------------------------------------------------------------
def test_guided_playout_follows_the_rules() -> None:
    from jericho_game.ai.playout import guided_playout

    rng = random.Random(4)
    for game in random_positions(21, 25):
        before = game.position()
        codes: list[int] = []
        result = guided_playout(game.state, rng.random, 3, codes)
        assert game.position() == before  # the state is not modified
        replay = game.copy()
        for code in codes:
            replay.play(replay.tables.move_objects[code])  # raises on an illegal move
        assert replay.is_over()
        assert {"south": 0, "north": 1, "draw": 2}[replay.outcome() or ""] == result


def test_guided_playout_prefers_breaking_a_seven(break_positions: list[tuple[Game, list[str]]]) -> None:
    """Facing the opponent's 7, a best-of-k playout breaks it far more often than a random one.

    Measured on both kernels (the rates are ~12-32% against ~60-95%, so 200 playouts per
    position keep a 3x margin well clear of chance).
    """
    from jericho_game import kernel
    from jericho_game.ai.playout import guided_playout

    rng = random.Random(1)
    lost_at_once = {"guided": 0, "random": 0}
    for game, _ in break_positions:
        state = game.state if rng.random() < 0.5 else kernel.python_state(game.state)
        for _ in range(200):
            moves: list[int] = []
            guided_playout(state, rng.random, 10, moves)
            lost_at_once["guided"] += len(moves) == 1
            moves = []
            guided_playout(state, rng.random, 1, moves)
            lost_at_once["random"] += len(moves) == 1
    assert lost_at_once["random"] >= 300  # at least half the moves fail in these positions
    assert lost_at_once["guided"] * 3 < lost_at_once["random"]


def test_mcts_random_playouts_option() -> None:
    game = Game.from_moves("5R@d2")
    p = make_player("mcts:sims=200,playout=random", seed=1)
    assert game.is_legal(p.choose_move(game))
    with pytest.raises(ValueError, match="playout"):
        MCTSPlayer(playout="smart")


def test_bench_figures_shape() -> None:
    from jericho_game.ai.bench import figures, midgame

    out = figures(seconds=0.05, expert_positions=0, short=0.05)
    # the v1 and the strongest playouts, the levels' learned search, and the learned evaluator are
    # measured on the C kernel only (then the strongest search with the evaluator at mix 0.5, with
    # its value alone, mix 1, and with the value alone without priors, issue 32's gate)
    kernel_only = ["sims/s"] * 3 + ["evals/s", "sims/s", "sims/s", "sims/s"] if kernel.C is not None else []
    units = ["sims/s"] * 4 + kernel_only + ["sims/s", "nodes/s", "plies", "plies", "nodes/s"]
    assert [unit for _, _, unit in out] == units
    labels = [label for label, _, _ in out]
    if kernel.C is not None:
        assert any(label.startswith("learned evaluator evaluations/s") for label in labels)
        assert any("the value alone, no priors" in label for label in labels)
        assert any(label.startswith("MCTS simulations/s, mid-game (expert/master: ") for label in labels)
    assert all(value > 0 for _, value, _ in out)
    assert not midgame().is_over() and len(midgame().history) == 16


def test_mcts_answers_even_when_the_time_is_up_before_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    # On a loaded machine the deadline can pass before the first simulation (tiny budgets,
    # slow root tactics): the player must still answer a searched legal move, not crash.
    import time as _time

    import jericho_game.ai.mcts as mcts_module
    from jericho_game.ai._util import Deadline

    class Expired(Deadline):
        def __init__(self, seconds: float | None) -> None:
            super().__init__(seconds)
            self.stop = _time.perf_counter() - 1.0

    monkeypatch.setattr(mcts_module, "Deadline", Expired)
    for game in random_positions(5, 3):
        p = MCTSPlayer(time=0.5, seed=1)
        move = p.choose_move(game, Limit(time=0.01))
        assert game.is_legal(move) and not move.is_pass
        assert p.last_sims >= 1


def test_mcts_refuses_an_empty_simulation_budget() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        MCTSPlayer(seed=1).choose_move(Game(), Limit(nodes=0))


def test_mcts_tree_is_not_reused_after_undo_or_for_an_equal_position_from_text() -> None:
    p = MCTSPlayer(sims=200, seed=2)
    game = Game.from_moves("5R@d2 1G@d3")
    first = p.choose_move(game)
    reply = _most_visited_reply(p, first, game)
    game.play(first)
    game.play(game.tables.move_objects[reply])
    assert game.is_legal(p.choose_move(game)) and p.last_reused > 0
    # Take both moves back and play others: the stored subtree belongs to another position.
    game.undo()
    game.undo()
    other = next(m for m in game.legal_moves() if m != first)
    game.play(other)
    game.play(next(m for m in game.legal_moves() if m.cell != other.cell))
    move = p.choose_move(game)
    assert p.last_reused == 0 and game.is_legal(move)
    # The same position reached from a position text has another history: no reuse either,
    # and the answer is legal there.
    again = Game.from_position(game.position())
    move = p.choose_move(again)
    assert p.last_reused == 0 and again.is_legal(move)


def test_bench_awkward_positions_are_what_they_claim() -> None:
    from jericho_game.ai.bench import awkward_positions

    late, must_break, near_seven = awkward_positions()
    assert len(late.history) >= 40 and not late.is_over()
    assert must_break.score()[1 - must_break.state.turn] >= 7 and not must_break.is_over()
    assert must_break.seven_threat() == must_break.turn.other
    assert near_seven.score()[near_seven.state.turn] >= 5 and not near_seven.is_over()


# -- MCTS on the C kernel --------------------------------------------------------------------------
needs_c = pytest.mark.skipif(kernel.C is None, reason="the C kernel is not built")


@needs_c
def test_mcts_runs_in_the_kernel_and_mcts_py_in_python() -> None:
    from jericho_game.ai.mcts import KernelMCTSPlayer, MCTSPlayer

    fast, slow = make_player("mcts:sims=500", seed=1), make_player("mcts-py:sims=50", seed=1)
    assert isinstance(fast, KernelMCTSPlayer) and isinstance(slow, MCTSPlayer)
    game = Game.from_moves("5R@d2 1G@d3")
    assert game.is_legal(fast.choose_move(game)) and fast.last_sims == 500
    assert sum(n for _, n, _ in fast.last_children) == 500
    assert game.is_legal(slow.choose_move(game)) and slow.last_sims == 50
    assert game.history == [Move.parse("5R@d2"), Move.parse("1G@d3")]  # the game is untouched


@needs_c
def test_kernel_mcts_is_reproducible_with_a_seed_and_a_simulation_budget() -> None:
    game = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    a = [make_player("mcts:sims=2000", seed=9).choose_move(game) for _ in range(2)]
    b = make_player("mcts:sims=2000", seed=9).choose_move(game, Limit(seed=4))
    c = make_player("mcts:sims=2000", seed=1).choose_move(game, Limit(seed=4))
    assert a[0] == a[1] and b == c


@needs_c
@pytest.mark.timing
def test_kernel_mcts_keeps_to_its_time() -> None:
    import time as _time

    game = Game.from_moves("5R@d2 1G@d3")
    p = make_player("mcts:time=0.3", seed=1)
    with Load() as load:  # the margin over the 0.3 s: 0.3 s on an idle machine, scaled by its load
        t0 = _time.perf_counter()
        p.choose_move(game)
        took = _time.perf_counter() - t0
    assert took < 0.3 + 0.3 * load.factor and p.last_sims > 100, (took, load.factor)  # type: ignore[attr-defined]


@needs_c
def test_kernel_mcts_rejects_bad_options() -> None:
    from jericho_game.ai import PlayerSpecError

    for spec in ("mcts:sims=0", "mcts:time=-1", "mcts:playout=smart", "mcts:k=0", "mcts:widen=0"):
        with pytest.raises((ValueError, PlayerSpecError)):
            make_player(spec).choose_move(Game())


@needs_c
def test_defending_playouts_reach_the_c_search() -> None:
    """``defend=1`` changes the playouts (so the visit counts) and stays reproducible."""
    game = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    runs = []
    for spec in ("mcts:sims=1500,k=10", "mcts:sims=1500,k=10,defend=1", "mcts:sims=1500,k=10,defend=1"):
        p = make_player(spec, seed=5)
        assert game.is_legal(p.choose_move(game, Limit(seed=2)))
        runs.append(sorted(p.last_children))  # type: ignore[attr-defined]
    assert runs[1] == runs[2] and runs[0] != runs[1]


def test_expert_and_master_play_the_learned_search_and_the_old_levels_stay_frozen() -> None:
    from jericho_game.ai import levels
    from jericho_game.ai._util import VALUE_NETWORK

    for level in (levels.expert(seed=1), levels.master(seed=1)):
        if kernel.C is not None:
            assert level.greedy and level.solver and level.endgame  # type: ignore[attr-defined]
            assert (level.c, level.widen) == (levels.LEARNED_C, levels.STRONG_WIDEN)  # type: ignore[attr-defined]
            assert level.evaluator == str(VALUE_NETWORK)  # type: ignore[attr-defined]
            assert (level.mix, level.cprior, level.vorder) == (levels.LEARNED_MIX, 0.0, levels.LEARNED_VORDER)  # type: ignore[attr-defined]
        else:  # the pure-Python fallback keeps the pre-kernel expert's search
            assert level.k == 3  # type: ignore[attr-defined]
    for spec, budget in (("expert-v3", levels.EXPERT_V3_C), ("master-v3", levels.MASTER_V3_C)):
        v3 = make_player(spec, seed=1)  # the levels before the network: the rungs' search
        assert v3.name == spec
        if kernel.C is not None:
            assert (v3.sims, v3.time) == budget and v3.evaluator is None  # type: ignore[attr-defined]
            assert (v3.c, v3.greedy, v3.solver, v3.endgame) == (levels.STRONG_C, 1, 1, 1)  # type: ignore[attr-defined]
    # the review's search (ai/analysis.py, calibrated to it) is master-v3's, under a lower cap
    assert levels.master_v3(seed=1, time=0.5).time == 0.5  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="master-v3 time"):
        levels.master_v3(time=4)
    for spec, budget in (("expert-v1", levels.EXPERT_V1_C), ("master-v1", levels.MASTER_V1_C)):
        v1 = make_player(spec, seed=1)
        assert v1.name == spec
        if kernel.C is not None:
            assert (v1.sims, v1.time) == budget  # type: ignore[attr-defined]
            assert v1.k == levels.STRONG_K and v1.defend and not v1.greedy and not v1.solver  # type: ignore[attr-defined]
    if kernel.C is None:
        for option in ("defend", "solver", "greedy"):
            with pytest.raises(ValueError, match="C kernel"):
                make_player(f"mcts:{option}=1")


def test_master_is_allowed_more_than_expert() -> None:
    from jericho_game.ai import levels

    assert levels.MASTER_SIMS > levels.EXPERT_SIMS and levels.MASTER_TIME <= 3.0
    with pytest.raises(ValueError, match="master time"):
        levels.master(time=4)


@pytest.mark.parametrize("spec", ["alphabeta", "alphabeta:python=1"])
def test_a_seeded_alphabeta_search_does_not_depend_on_earlier_searches(spec: str) -> None:
    # The transposition table is kept between moves, but a seed in the limit starts afresh: the
    # engine protocol's "go nodes N seed S" must answer the same after any earlier search.
    game = Game.from_moves("5R@d2 1G@d3")
    fresh = make_player(spec, seed=1)
    move = fresh.choose_move(game, Limit(nodes=3000, seed=2))
    used = make_player(spec, seed=1)
    used.choose_move(game, Limit(nodes=20000))  # fills the table with a deeper search of the same position
    assert used.choose_move(game, Limit(nodes=3000, seed=2)) == move
    assert used.last_nodes == fresh.last_nodes  # type: ignore[attr-defined]
