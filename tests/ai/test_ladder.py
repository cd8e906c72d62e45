"""The ladder of levels (issue 32 point 5): one list in ai/levels.py for every front end."""

from __future__ import annotations

import argparse
from itertools import pairwise
from pathlib import Path

import pytest

from jericho_game import Game
from jericho_game.ai import base, levels
from jericho_game.ai.arena import add_arguments, ladder_specs, rate_runs
from tests.helpers import journal_games


def test_the_ladder_is_the_one_list_of_levels():
    names = levels.ladder()
    assert names[0] == "easy" and names[-1] == "master" and len(names) == len(set(names)) >= 7
    assert list(levels.LEVELS) == names  # the factories, in the ladder's order
    for name in names:  # each is a player of the registry (the engine protocol, the arena) built from levels.py
        assert base._REGISTRY[name][0] == "jericho_game.ai.levels"
        assert getattr(levels, base._REGISTRY[name][1]) is levels.LEVELS[name]
    # every level the registry takes from levels.py is on the ladder or a frozen old level
    from_levels = {n for n, (module, _) in base._REGISTRY.items() if module == "jericho_game.ai.levels"}
    assert {n for n in from_levels if not n.endswith(("-v1", "-v2", "-v3"))} == set(names)


def test_the_ladder_climbs_and_its_times_suit_a_person():
    elos = [lv.elo for lv in levels.LADDER]
    assert elos == sorted(elos) and len(set(elos)) == len(elos)
    for lv in levels.LADDER:
        assert 0 < lv.think <= 3.0 and lv.cap <= 3.0, lv
        assert levels.think_time(lv.name) == lv.think
    upper = levels.LADDER[4:]  # from strong up
    assert all(lv.think >= 1.0 for lv in upper)  # the upper levels never answer at once
    assert levels.think_time("mcts:sims=10") == 0.0


@pytest.mark.parametrize("name", ["casual", "strong", "advanced", "skilled", "veteran", "challenger", "elite"])
def test_the_new_rungs_play_legal_moves_under_their_names(name):
    player = base.make_player(name, seed=1)
    assert player.name == name
    g = Game()
    for _ in range(4):
        move = player.choose_move(g)
        assert move in g.legal_moves()
        g.play(move)


def test_the_arena_plays_the_ladder():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--ladder", "--games", "2"])
    assert ladder_specs(args) == levels.ladder()
    args = parser.parse_args(["hard", "strong", "--games", "2"])
    assert ladder_specs(args) == ["hard", "strong"]


ROOT = Path(__file__).resolve().parents[2]
#: The round robin of 2026-12-04; then, when expert and master took the learned search
#: (2026-12-06), their two pairings played again, and the pairings of the rung put in below the
#: new expert (elite): ``rate_runs`` lets a later run's pairings replace the earlier's.
DOC = (ROOT / "docs" / "ai.md").read_text(encoding="utf-8")
RUNS = [ROOT / "docs" / "runs" / name for name in ("ladder-3304", "ladder-top-2026-12-06", "ladder-elite-2026-12-06")]


def test_the_ladder_elos_are_the_round_robins():
    """The Elo shown beside each level is the kept round robins' fit (easy at 1,000, to the ten),
    and they hold >= 100 games for each adjacent pair, each won 60-85% by the higher rung; the
    pairings played again are the later runs' games alone."""
    summary = rate_runs(RUNS)
    for pair in summary["pairings"]:
        assert pair["games"] == 100, pair  # the replaced pairings' old games are gone
    journals = {run.name: journal_games(run) for run in RUNS[1:]}
    played = {name: {frozenset((g["south"], g["north"])) for g in games} for name, games in journals.items()}
    assert played == {
        "ladder-top-2026-12-06": {frozenset(("master", "expert")), frozenset(("expert", "challenger"))},
        "ladder-elite-2026-12-06": {frozenset(("expert", "elite")), frozenset(("elite", "challenger"))},
    }
    fitted = {p["player"]: p["elo"] for p in summary["players"]}
    assert set(fitted) == set(levels.ladder())
    shift = 1000 - fitted["easy"]
    for lv in levels.LADDER:
        assert abs(lv.elo - (fitted[lv.name] + shift)) <= 5, (lv, fitted[lv.name] + shift)
    for lower, upper in pairwise(levels.ladder()):
        pair = next(p for p in summary["pairings"] if {p["a"], p["b"]} == {lower, upper})
        upper_score = pair["score_a"] if pair["a"] == upper else 1 - pair["score_a"]
        assert pair["games"] >= 100 and 0.60 <= upper_score <= 0.85, (lower, upper, upper_score)
        # docs/ai.md's table of the ladder's pairings says the same
        wins, losses = (pair["wins"], pair["losses"]) if pair["a"] == upper else (pair["losses"], pair["wins"])
        row = f"| `{upper}` – `{lower}` | {wins}-{pair['draws']}-{losses} | {100 * upper_score:.1f}% |"
        assert row in DOC, row
    # the 1 s levels overran only while browser tests ran beside (docs/ai.md says which games)
    over = [
        (name, g["pairing"], g["index"])
        for name, games in journals.items()
        for g in games
        if max(g[f"max_{side}"] for side in ("south", "north") if g[side] != "master") > 1.0
    ]
    assert sorted(i for _, _, i in over) == [14, 17, 18, 19, 20, 21, 22]
    assert {(name, pairing) for name, pairing, _ in over} == {("ladder-elite-2026-12-06", 0)}
    for lv in levels.LADDER:  # and its table of the levels
        assert f"| `{lv.name}` | {lv.elo:,} |" in DOC, lv
