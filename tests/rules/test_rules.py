"""RULES.md, paragraph by paragraph."""

from __future__ import annotations

import random

import pytest

from jericho_game import (
    PASS,
    PIECES,
    Game,
    IllegalMoveError,
    Piece,
    Side,
    compare_towers,
    standard_topology,
    strength,
)
from jericho_game.pieces import Colour
from tests.conftest import load_conformance
from tests.helpers import position_with, spread_all_pieces

# ---------------------------------------------------------------- §1 Components


def test_components_counts() -> None:
    topo = standard_topology()
    assert len(topo.cells) == 26
    assert sum(c.camp == "south" for c in topo.cells) == 13
    assert len(topo.alignments) == 13
    assert sum(a.is_vertical for a in topo.alignments) == 7
    assert len(topo.triangles) == 26
    assert sum(t.side == "south" for t in topo.triangles) == 13
    assert len(PIECES) == 25
    assert {(p.size, str(p.colour)) for p in PIECES} == {(s, c) for s in range(1, 6) for c in "RYGBW"}
    game = Game()
    assert game.reserve("south") == game.reserve("north") == list(PIECES)


def test_every_alignment_crosses_both_camps_and_cells_lie_on_one_vertical() -> None:
    topo = standard_topology()
    camp = {c.name: c.camp for c in topo.cells}
    for a in topo.alignments:
        assert {camp[x] for x in a.cells} == {"south", "north"}
    for c in topo.cells:
        through = topo.alignments_through(c.name)
        assert sum(a.is_vertical for a in through) == 1
        assert sum(not a.is_vertical for a in through) <= 1


def test_sides_are_strings_and_south_moves_first() -> None:
    game = Game()
    assert game.turn == "south" and game.turn is Side.SOUTH
    assert Side.NORTH == "north" and Side.SOUTH.other is Side.NORTH
    game.play("1R@a1")
    assert game.turn == "north"


# ---------------------------------------------------------------- §2 The board

RULES_TABLE = {
    "a": "a1 a2 a3 a4",
    "b": "b1 b2 b3 b4",
    "c": "c1 c2 c3 c4",
    "d": "d2 d3",
    "e": "e1 e2 e3 e4",
    "f": "f1 f2 f3 f4",
    "g": "g1 g2 g3 g4",
    "a1-g4": "a1 b2 f3 g4",
    "a2-f4": "a2 e3 f4",
    "b1-g3": "b1 c2 g3",
    "g1-a4": "g1 f2 b3 a4",
    "g2-b4": "g2 c3 b4",
    "f1-a3": "f1 e2 a3",
}


def test_alignment_table_is_exactly_the_rule_books() -> None:
    topo = standard_topology()
    assert {a.name: " ".join(a.cells) for a in topo.alignments} == RULES_TABLE
    kinds = {a.name: a.kind for a in topo.alignments}
    assert kinds["a1-g4"] == "rising diagonal" and kinds["g2-b4"] == "falling diagonal"


def test_cells_rows_and_geometry() -> None:
    topo = standard_topology()
    names = {c.name for c in topo.cells}
    assert "d1" not in names and "d4" not in names
    for row, count in ((1, 6), (2, 7), (3, 7), (4, 6)):
        assert sum(c.name.endswith(str(row)) for c in topo.cells) == count
    ys = {1: -3, 2: -2, 3: 2, 4: 3}
    for c in topo.cells:
        assert c.x == "abcdefg".index(c.name[0]) - 3
        assert c.y == ys[int(c.name[1])]
        assert c.camp == ("south" if c.name[1] in "12" else "north")
    # Diagonals really are the lines y = x + k and y = -x + k, k in {-1, 0, 1}.
    pos = {c.name: (c.x, c.y) for c in topo.cells}
    for a in topo.alignments:
        if a.is_vertical:
            assert len({pos[x][0] for x in a.cells}) == 1
        else:
            sign = 1 if a.kind == "rising diagonal" else -1
            ks = {pos[x][1] - sign * pos[x][0] for x in a.cells}
            assert len(ks) == 1 and ks.pop() in (-1, 0, 1)


def test_cells_on_no_diagonal() -> None:
    topo = standard_topology()
    lonely = {c.name for c in topo.cells if len(topo.alignments_through(c.name)) == 1}
    assert lonely == {"c1", "e1", "d2", "d3", "c4", "e4"}


def test_board_is_symmetric_under_a_half_turn() -> None:
    topo = standard_topology()

    def turn(cell: str) -> str:
        col = "abcdefg"[6 - "abcdefg".index(cell[0])]
        return f"{col}{5 - int(cell[1])}"

    lines = {frozenset(a.cells) for a in topo.alignments}
    assert {frozenset(turn(x) for x in line) for line in lines} == lines
    assert turn("a1") == "g4" and turn("a2") == "g3"


# ---------------------------------------------------------------- §3 A turn


def test_start_has_every_piece_on_every_cell() -> None:
    moves = Game().legal_moves()
    assert len(moves) == 25 * 26
    assert len(set(moves)) == len(moves)


def test_placing_on_empty_cell_and_stacking() -> None:
    game = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    assert game.tower("d3") == [Piece.parse("1G"), Piece.parse("2Y")]
    assert game.tower("d2") == [Piece.parse("5R")]
    # South placed in North's camp: the piece left South's reserve.
    assert Piece.parse("2Y") not in game.reserve("south")
    assert Piece.parse("2Y") in game.reserve("north")


def test_pieces_come_from_the_movers_reserve() -> None:
    game = Game.from_moves("5R@d2 1G@d3")
    with pytest.raises(IllegalMoveError, match="not in south's reserve"):
        game.play("5R@a1")
    game.play("5Y@a1")  # the same size in another colour is still there


def test_size_clash_and_colour_clash() -> None:
    game = Game.from_moves("3G@c2")
    with pytest.raises(IllegalMoveError, match="size clash"):
        game.play("3R@c2")
    with pytest.raises(IllegalMoveError, match="colour clash"):
        game.play("1G@c2")
    game.play("1R@c2")
    assert [str(p) for p in game.tower("c2")] == ["3G", "1R"]


def test_tower_holds_at_most_four_pieces() -> None:
    game = Game.from_moves("1R@a1 2Y@a1 3G@a1 4B@a1")
    assert len(game.tower("a1")) == 4
    with pytest.raises(IllegalMoveError, match="tower full"):
        game.play("5W@a1")
    assert all(m.cell != "a1" for m in game.legal_moves())


def test_tower_belongs_to_the_camp_owner_whoever_placed_it() -> None:
    # South builds in North's camp: the tower counts for North on alignment d.
    game = Game.from_moves("5R@d2 1Y@d3")
    assert game.leaders()["d"] == "south"
    game.play("4W@d3")  # South stacks on North's tower: North's 1Y/4W now beats South's single 5
    assert game.leaders()["d"] == "north"


# ---- Asymmetry rule


def test_asymmetry_forbids_an_exact_copy_on_a_shared_alignment() -> None:
    game = Game.from_moves("5R@a1")
    before = game.position()
    with pytest.raises(IllegalMoveError, match=r"asymmetry rule.*5R@a1.*shared alignment a\b"):
        game.play("5R@a3")
    assert game.position() == before
    with pytest.raises(IllegalMoveError, match="asymmetry rule.*a1-g4"):
        game.play("5R@g4")
    assert not game.is_legal("5R@b2")  # same camp, shared diagonal a1-g4
    assert "5R@a4" not in map(str, game.legal_moves())


@pytest.mark.parametrize(
    "reply, why",
    [
        ("5Y@a3", "other colour"),
        ("4R@a3", "other size"),
        ("5R@d3", "cell on no shared alignment"),
        ("5R@c3", "cell on no shared alignment"),
    ],
)
def test_asymmetry_allows_near_copies(reply: str, why: str) -> None:
    game = Game.from_moves("5R@a1")
    assert game.is_legal(reply), why
    game.play(reply)
    assert str(game.history[-1]) == reply


def test_asymmetry_allows_another_level_and_another_tower() -> None:
    # Towers a2:1G (South camp) and a3:1B, a4:1G (North camp); South then makes 1G/3Y on a2.
    text = position_with({"a2": "1G", "a3": "1B", "a4": "1G"}, turn="south")
    game = Game.from_position(text)
    game.play("3Y@a2")
    assert not game.is_legal("3Y@a4")  # identical tower 1G/3Y on shared alignment a
    assert "asymmetry" in (game.why_illegal("3Y@a4") or "")
    game.play("3Y@a3")  # another tower: 1B/3Y is not 1G/3Y
    game.undo()
    game.play("3Y@e3")  # another level: e3 shares a2-f4 with a2, but a single 3Y is not 1G/3Y
    game.undo()
    assert game.is_legal("3Y@b3")  # b3 shares no alignment with a2


def test_asymmetry_only_looks_at_the_immediately_preceding_placement() -> None:
    game = Game.from_moves("5R@a1 1W@g4 2B@b1")
    # North's last own move no longer matters, nor South's 5R two plies ago.
    assert game.is_legal("5R@a3")
    assert not game.is_legal("2B@b3")  # copies South's 2B@b1 on vertical b


def test_asymmetry_does_not_apply_after_a_pass() -> None:
    text = position_with({"a1": "5R"}, turn="north", last=None, passes=1)
    game = Game.from_position(text)
    assert game.is_legal("5R@a3")
    # While the same position with the placement still "last" forbids it.
    game2 = Game.from_position(position_with({"a1": "5R"}, turn="north", last="5R@a1"))
    assert not game2.is_legal("5R@a3")


# ---- Passing


def test_pass_is_the_only_move_when_nothing_fits() -> None:
    # North's reserve is empty: it must pass; South may not pass while it can place.
    towers = spread_all_pieces([f"{c}{r}" for r in (3, 4) for c in "abcdefg" if f"{c}{r}" != "d4"])
    game = Game.from_position(position_with(towers, turn="north", taken_first_from="north"))
    assert game.reserve("north") == []
    assert game.legal_moves() == [PASS]
    with pytest.raises(IllegalMoveError, match="not in north's reserve"):
        game.play("1R@d3")
    game.play("pass")
    assert game.turn == "south" and game.outcome() is None
    with pytest.raises(IllegalMoveError, match="cannot pass: a placement is available"):
        game.play("pass")


# ---------------------------------------------------------------- §4 Strength


@pytest.mark.parametrize(
    "a, b, winner",
    [
        ("1R2Y", "5G", "a"),  # two pieces beat one, whatever the sizes
        ("5G", "1R2Y", "b"),
        ("4R", "3Y", "a"),  # singles: larger top wins
        ("1R5Y", "4G3B", "a"),  # top 5 beats top 3
        ("2R3Y", "1G3B", "a"),  # equal tops: compare the piece below
        ("1R2Y3G", "2B3W", "a"),  # equal down to the shorter base: the taller wins
        ("2R3Y", "2B3W", None),  # equal sizes all the way down (colours differ)
        ("1R", "1Y", None),
    ],
)
def test_strength_comparison(a: str, b: str, winner: str | None) -> None:
    ta = [Piece.parse(a[i : i + 2]) for i in range(0, len(a), 2)]
    tb = [Piece.parse(b[i : i + 2]) for i in range(0, len(b), 2)]
    sa, sb = strength(ta), strength(tb)
    assert (sa > sb, sb > sa) == (winner == "a", winner == "b")
    explanation = compare_towers(ta, tb, "A", "B")
    if winner is None:
        assert "equally strong" in explanation
    else:
        assert f"{winner.upper()} leads" in explanation


def test_strength_tuple_form() -> None:
    t = [Piece(3, Colour.R), Piece(5, Colour.G)]  # bottom 3, top 5
    assert strength(t) == (1, 5, 3, 0, 0)
    assert strength([Piece(4, Colour.W)]) == (0, 4, 0, 0, 0)


def test_strength_decides_on_the_board() -> None:
    # South single 5 vs North 4/3 (two pieces): North leads despite smaller sizes.
    game = Game.from_moves("5R@d2 4G@d3 3Y@d3")
    assert game.leaders()["d"] == "north"
    assert "two or more pieces" in game.confrontation("d").reason


# ---------------------------------------------------------------- §5 Confrontations


def test_no_monolith_without_both_champions_or_when_equal() -> None:
    game = Game.from_moves("5R@d2")
    assert game.leaders()["d"] is None and game.score() == (0, 0)
    game.play("5Y@d3")  # equal singles
    assert game.leaders()["d"] is None
    assert "equally strong" in game.confrontation("d").reason


def test_champion_is_the_strongest_tower_of_the_camp_on_the_alignment() -> None:
    game = Game.from_moves("2R@a1 3Y@a3 4G@a2")
    # South's champion on a is a2 (4), beating North's a3 (3).
    assert game.confrontation("a").south == "a2"
    assert game.leaders()["a"] == "south"


def test_one_placement_can_win_two_monoliths() -> None:
    # b2 lies on vertical b and on diagonal a1-g4 (with f3, g4 in North's camp).
    game = Game.from_moves("1R@d2 2Y@b3 1G@c2 2B@f3")
    assert game.leaders()["b"] is None and game.leaders()["a1-g4"] is None
    game.play("4W@b2")
    assert game.leaders()["b"] == "south" and game.leaders()["a1-g4"] == "south"
    assert game.score() == (2, 0)


def test_monoliths_are_a_function_of_the_towers() -> None:
    for record in load_conformance()[:20]:
        game = Game.from_moves(record["moves"])
        again = Game.from_position(game.position())
        assert again.leaders() == game.leaders()


# ---------------------------------------------------------------- §6 End of the game


def _random_games(n: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    games = []
    for _ in range(n):
        g = Game()
        while not g.is_over():
            moves = g.legal_moves()
            g.play(moves[rng.randrange(len(moves))])
        games.append([str(m) for m in g.history])
    return games


@pytest.fixture(scope="module")
def sample_games() -> list[list[str]]:
    return [r["moves"] for r in load_conformance()] + _random_games(300, 11)


def _scenarios(moves: list[str]) -> list[tuple[str, int, Game]]:
    """Every ply where a side reaches 7 monoliths, classified by how it happened."""
    found = []
    g = Game()
    for i, m in enumerate(moves):
        mover = g.turn
        before = g.score()
        g.play(m)
        after = g.score()
        for side in (0, 1):
            if before[side] < 7 <= after[side]:
                kind = "own" if side == mover.number else "handed"
                found.append((kind, i, g.copy()))
    return found


def test_seven_won_then_kept_wins_after_the_reply(sample_games: list[list[str]]) -> None:
    checked = 0
    for moves in sample_games:
        for kind, i, game in _scenarios(moves):
            if kind != "own" or i + 1 >= len(moves):
                continue
            winner = game.turn.other  # the side whose own move reached 7
            assert game.outcome() is None  # reaching 7 does not win at once
            game.play(moves[i + 1])  # the opponent's reply
            if game.score()[winner.number] >= 7:
                assert game.outcome() == winner
                checked += 1
    assert checked >= 20


def test_seven_won_then_lost_in_the_reply_does_not_win(sample_games: list[list[str]]) -> None:
    checked = 0
    for moves in sample_games:
        for kind, i, game in _scenarios(moves):
            if kind != "own" or i + 1 >= len(moves):
                continue
            holder = game.turn.other
            game.play(moves[i + 1])
            if game.score()[holder.number] < 7:
                assert game.outcome() is None or game.outcome() == game.turn.other
                assert game.outcome() != holder
                checked += 1
    assert checked >= 5


def test_seven_handed_over_by_the_opponent_must_be_kept_a_full_turn(sample_games: list[list[str]]) -> None:
    checked = 0
    for moves in sample_games:
        for kind, i, game in _scenarios(moves):
            if kind != "handed":
                continue
            receiver = game.turn  # the opponent's own move gave the mover its 7th
            assert game.outcome() != receiver
            if i + 2 >= len(moves):
                continue
            game.play(moves[i + 1])  # receiver's own move
            if game.outcome() is not None:
                continue  # the receiver's move ended the game for another reason
            kept = game.score()[receiver.number] >= 7
            game.play(moves[i + 2])  # the opponent's reply
            if kept and game.score()[receiver.number] >= 7:
                assert game.outcome() == receiver
            else:
                assert game.outcome() != receiver
            checked += 1
    assert checked >= 3


def test_seven_rule_oracle_on_every_ply(sample_games: list[list[str]]) -> None:
    """After any turn, the opponent wins iff it holds 7 now and held 7 before that turn."""
    for moves in sample_games[:200]:
        g = Game()
        for m in moves:
            opponent = g.turn.other
            held_before = g.score()[opponent.number] >= 7
            g.play(m)
            holds_now = g.score()[opponent.number] >= 7
            if held_before and holds_now:
                assert g.outcome() == opponent
            elif g.history[-1] != PASS:
                assert g.outcome() is None, f"game ended without the seven rule after {m}"


def test_exhaustion_ends_the_game_and_counts_monoliths() -> None:
    draws = [r for r in load_conformance() if r["outcome"] == "draw"]
    assert draws, "the vectors include an exhaustion draw"
    record = draws[0]
    game = Game.from_moves(record["moves"])
    assert [str(m) for m in game.history[-2:]] == ["pass", "pass"]
    south, north = game.score()
    assert south == north and game.outcome() == "draw"
    assert game.legal_moves() == []
    with pytest.raises(IllegalMoveError, match="game is over"):
        game.play("pass")


@pytest.mark.parametrize("order, rows", [("gfedcba", (2, 1)), ("badcfeg", (2, 1)), ("abcdefg", (1, 2))])
def test_exhaustion_counts_monoliths(order: str, rows: tuple[int, int]) -> None:
    """Every piece placed: South must pass after North's pass, and the count decides."""
    north = spread_all_pieces([f"{c}{r}" for r in (3, 4) for c in "abcdefg" if f"{c}{r}" != "d4"])
    south = spread_all_pieces([f"{c}{r}" for r in rows for c in order if f"{c}{r}" != "d1"])
    game = Game.from_position(position_with({**north, **south}, turn="south", passes=1))
    assert game.reserve("south") == game.reserve("north") == []
    assert game.legal_moves() == [PASS]
    assert game.outcome() is None
    s, n = game.score()
    assert (s, n) == _score_from_scratch(game)  # the count that decides, read from the towers alone
    game.play(PASS)
    assert game.outcome() == ("south" if s > n else "north" if n > s else "draw")
    assert game.legal_moves() == []


def test_exhaustion_cases_cover_win_and_draw() -> None:
    outcomes = set()
    north = spread_all_pieces([f"{c}{r}" for r in (3, 4) for c in "abcdefg" if f"{c}{r}" != "d4"])
    for order, rows in (("gfedcba", (2, 1)), ("badcfeg", (2, 1))):
        south = spread_all_pieces([f"{c}{r}" for r in rows for c in order if f"{c}{r}" != "d1"])
        game = Game.from_position(position_with({**north, **south}, turn="south", passes=1))
        s, n = _score_from_scratch(game)
        game.play(PASS)
        assert game.outcome() == ("south" if s > n else "north" if n > s else "draw")
        outcomes.add(game.outcome())
    assert outcomes == {"draw", "north"}  # with test_exhaustion_won_by_south_...: all three endings


# Both reserves empty, South to move (found in seeded random games; the scores are checked
# below from the towers alone, with the independent reading of §5 in test_properties).
NORTH_HOLDS_SEVEN = (
    "a1:2G,b1:5W,c1:2R1Y,e1:5G4B3R,f1:1B2G5R,g1:1W2B4Y,a2:1W,b2:4R3W,c2:3G,d2:5R,e2:1Y,f2:5B4Y2W,"
    "g2:1R5Y4W,a3:5G,b3:3W,c3:2Y1G4B,d3:3G5Y,e3:2R5W,f3:4G2Y,g3:3Y2W,a4:4G5B,b4:3Y1R2B,c4:1G3B4W,"
    "f4:3R1B,g4:4R3B - - south 4Y@g1 0 *"
)
SOUTH_LEADS_SIX_TO_FIVE = (
    "a1:5R,b1:2G4W,c1:2G,e1:5R2Y,f1:5W2R,g1:2B,a2:1G5Y3R,b2:3B1Y5G,c2:3G2R4W,e2:3W1Y,f2:1W2Y4B,"
    "g2:1B,a3:4R,b3:2W4Y3R,c3:1R3Y,d3:3B5W,e3:4G1R,f3:5Y4R3G,g3:4Y1B,a4:1G2W,c4:3W2B4G,e4:3Y5B,"
    "f4:4B1W5G,g4:5B - - south 3Y@c3 0 *"
)


def _score_from_scratch(game: Game) -> tuple[int, int]:
    from tests.rules.test_properties import leaders_from_scratch

    held = list(leaders_from_scratch(game).values())
    return held.count("south"), held.count("north")


def test_seven_held_through_a_forced_pass_wins_at_once() -> None:
    game = Game.from_position(NORTH_HOLDS_SEVEN)
    assert _score_from_scratch(game) == (5, 7)
    assert game.legal_moves() == [PASS] and game.outcome() is None
    game.play(PASS)  # a pass changes no tower: North held 7 before South's turn and still does
    assert game.outcome() == "north"
    assert game.legal_moves() == []
    fields = game.position().split()
    assert fields[3:] == ["north", "-", "1", "north"]  # ended after one pass, not by exhaustion
    game.undo()
    assert game.position() == Game.from_position(NORTH_HOLDS_SEVEN).position()


def test_exhaustion_won_by_south_with_fewer_than_seven() -> None:
    game = Game.from_position(SOUTH_LEADS_SIX_TO_FIVE)
    assert _score_from_scratch(game) == (6, 5)
    game.play(PASS)
    assert game.outcome() is None  # one pass does not end the game
    game.play(PASS)
    assert game.outcome() == "south"  # more monoliths wins, 7 or not


# ---------------------------------------------------------------- §8 Worked example


def test_worked_example() -> None:
    game = Game()
    game.play("5R@d2")
    assert game.leaders()["d"] is None
    game.play("1G@d3")
    assert game.leaders()["d"] == "south"
    game.play("2Y@d3")
    assert [str(p) for p in game.tower("d3")] == ["1G", "2Y"]
    assert game.leaders()["d"] == "north"
    assert game.score() == (0, 1)
