"""Property tests over random games (hypothesis)."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jericho_game import PIECES, Game, Move, parse_move, strength
from jericho_game.core import random_playout

settings.register_profile("jericho", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("jericho")

choices = st.lists(st.integers(min_value=0, max_value=10_000), min_size=0, max_size=60)


def each_ply(picks: list[int], game: Game | None = None) -> Iterator[Game]:
    """The game after each move chosen by ``picks`` (indices into the legal moves), until it ends."""
    game = game or Game()
    for k in picks:
        moves = game.legal_moves()
        if not moves:
            break
        game.play(moves[k % len(moves)])
        yield game


def play_out(picks: list[int]) -> Game:
    game = Game()
    for _ in each_ply(picks, game):
        pass
    return game


def leaders_from_scratch(game: Game) -> dict[str, str | None]:
    """An independent reading of RULES.md §5 from the towers alone."""
    camp = {c.name: str(c.camp) for c in game.topology.cells}
    out: dict[str, str | None] = {}
    for a in game.topology.alignments:
        best = {}
        for side in ("south", "north"):
            towers = [game.tower(x) for x in a.cells if camp[x] == side and game.tower(x)]
            best[side] = max((strength(t) for t in towers), default=None)
        s, n = best["south"], best["north"]
        out[a.name] = None if s is None or n is None or s == n else ("south" if s > n else "north")
    return out


@given(choices)
def test_monoliths_equal_a_from_scratch_recomputation(picks: list[int]) -> None:
    for game in each_ply(picks):
        leaders = leaders_from_scratch(game)
        assert game.leaders() == leaders
        assert game.score() == (
            sum(v == "south" for v in leaders.values()),
            sum(v == "north" for v in leaders.values()),
        )


@given(choices)
def test_undo_restores_exactly(picks: list[int]) -> None:
    game = Game()
    snapshots = []
    for k in picks:
        moves = game.legal_moves()
        if not moves:
            break
        snapshots.append((game.position(), sorted(map(str, moves)), game.state.hash_key(), game.history))
        game.play(moves[k % len(moves)])
    while snapshots:
        position, moves, key, history = snapshots.pop()
        game.undo()
        assert game.position() == position
        assert sorted(map(str, game.legal_moves())) == moves
        assert game.state.hash_key() == key
        assert game.history == history
    assert game.position() == Game().position()


@given(choices)
def test_notation_and_position_round_trip(picks: list[int]) -> None:
    game = play_out(picks)
    for move in game.legal_moves():
        text = str(move)
        assert parse_move(text) == move
        assert parse_move(f"  {text.swapcase()} ") == move
    text = game.position()
    again = Game.from_position(text)
    assert again.position() == text
    assert again.legal_moves() == game.legal_moves()
    assert again.leaders() == game.leaders() and again.outcome() == game.outcome()


@given(choices)
def test_every_piece_is_accounted_for(picks: list[int]) -> None:
    game = play_out(picks)
    on_board = [p for t in game.towers().values() for p in t]
    for piece in PIECES:
        in_reserves = (piece in game.reserve("south")) + (piece in game.reserve("north"))
        assert on_board.count(piece) + in_reserves == 2
    placed = {"south": 0, "north": 0}
    replay = Game()
    for move in game.history:
        if not move.is_pass:
            placed[str(replay.turn)] += 1
        replay.play(move)
    for side in ("south", "north"):
        assert len(game.reserve(side)) == 25 - placed[side]


@given(choices)
def test_hash_key_is_a_function_of_the_position(picks: list[int]) -> None:
    game = play_out(picks)
    assert Game.from_position(game.position()).state.hash_key() == game.state.hash_key()


@given(st.integers(min_value=0, max_value=2**32 - 1), choices)
def test_fast_playout_leaves_the_state_alone(seed: int, picks: list[int]) -> None:
    import random

    game = play_out(picks)
    before = game.position()
    moves: list[int] = []
    outcome = random_playout(game.state, random.Random(seed).random, moves)
    assert game.position() == before
    replay = game.copy()
    for code in moves:
        replay.play(replay.tables.move_objects[code])
    expected = {"south": 0, "north": 1, "draw": 2}
    assert replay.is_over() and expected[replay.outcome() or ""] == outcome


def test_move_equality_is_by_value() -> None:
    assert Move(PIECES[0], "a1") == parse_move("1r@A1")


@given(choices)
def test_leader_changes_predict_the_placement(picks: list[int]) -> None:
    game = play_out(picks)
    state = game.state.copy()
    for code in state.legal_codes()[:80]:
        if code == state.tables.pass_code:
            continue
        piece, cell = divmod(code, state.tables.n_cells)
        before = state.leader[:]
        predicted = state.leader_changes(piece // 5, cell)
        [delta] = state.margin_deltas([code])
        me = state.turn
        margin = state.score[me] - state.score[1 - me]
        state.push(code)
        actual = [(a, before[a], state.leader[a]) for a in range(len(before)) if state.leader[a] != before[a]]
        assert delta == state.score[me] - state.score[1 - me] - margin
        state.pop()
        assert sorted(predicted) == actual


def legal_moves_from_scratch(game: Game) -> set[str]:
    """RULES.md §3 read literally from the towers, the reserve and the last move played."""
    if game.outcome() is not None:
        return set()
    last = game.history[-1] if game.history else None
    copied = None
    if last is not None and not last.is_pass:
        assert last.cell is not None
        copied = (last.piece, game.tower(last.cell), last.cell)
    lines = [set(a.cells) for a in game.topology.alignments]
    out = set()
    for piece in game.reserve(game.turn):
        for cell in (c.name for c in game.topology.cells):
            tower = game.tower(cell)
            if len(tower) >= 4 or any(q.size == piece.size or q.colour == piece.colour for q in tower):
                continue
            if copied is not None:
                their_piece, their_tower, their_cell = copied
                shares = any(cell in line and their_cell in line for line in lines)
                if piece == their_piece and tower + [piece] == their_tower and shares:
                    continue  # the asymmetry rule
            out.add(f"{piece}@{cell}")
    return out or {"pass"}


@given(choices)
def test_legal_moves_equal_a_literal_reading_of_the_rules(picks: list[int]) -> None:
    game = Game()
    for k in picks:
        assert {str(m) for m in game.legal_moves()} == legal_moves_from_scratch(game)
        moves = game.legal_moves()
        if not moves:
            break
        game.play(moves[k % len(moves)])
