"""RULES.md as replayed by an independent implementation: every figure must match."""

from __future__ import annotations

import hashlib

import pytest

from jericho_game import Game
from jericho_game.core import State, random_playout
from tests.conftest import load_conformance

GAMES = load_conformance()


def _check(game: Game, expected: dict, where: str) -> None:
    legal = game.legal_moves()
    assert str(game.turn) == expected["turn"], where
    assert len(legal) == expected["legal_count"], where
    digest = hashlib.sha1(" ".join(sorted(str(m) for m in legal)).encode()).hexdigest()
    assert digest == expected["legal_sha1"], where
    assert game.leaders() == expected["leaders"], where
    assert list(game.score()) == expected["score"], where
    assert game.outcome() == expected["outcome"], where


def test_vector_file_has_all_games() -> None:
    assert len(GAMES) == 205


@pytest.mark.parametrize("record", GAMES, ids=[str(g["seed"]) for g in GAMES])
def test_replay_matches_every_figure(record: dict) -> None:
    game = Game()
    _check(game, record["start"], "start")
    for i, (move, expected) in enumerate(zip(record["moves"], record["plies"], strict=True)):
        assert expected["move"] == move
        game.play(move)
        _check(game, expected, f"after ply {i + 1} ({move})")
    assert game.outcome() == record["outcome"]
    # Undo all the way back: every figure of every earlier ply is restored exactly.
    for i in range(len(record["moves"]) - 1, -1, -1):
        game.undo()
        _check(game, record["plies"][i - 1] if i else record["start"], f"undo to ply {i}")
    assert game.position() == Game().position()


@pytest.mark.parametrize("record", GAMES[:40], ids=[str(g["seed"]) for g in GAMES[:40]])
def test_positions_round_trip_along_the_game(record: dict) -> None:
    game = Game()
    for move in record["moves"]:
        game.play(move)
        text = game.position()
        again = Game.from_position(text)
        assert again.position() == text
        assert sorted(map(str, again.legal_moves())) == sorted(map(str, game.legal_moves()))
        assert again.outcome() == game.outcome()


@pytest.mark.parametrize("guided", [1, 3])
def test_fast_playout_follows_the_same_rules(guided: int) -> None:
    """Moves chosen by the playout path, replayed through Game, give the playout's outcome."""
    import random

    rng = random.Random(7)
    for _ in range(300):
        start = Game()
        moves: list[int] = []
        outcome = random_playout(start.state, rng.random, moves, guided=guided)
        replay = Game()
        objects = replay.tables.move_objects
        for code in moves:
            assert replay.is_legal(objects[code]), (replay.position(), objects[code])
            replay.play(objects[code])
        assert replay.is_over()
        assert replay.outcome() == ["south", "north", "draw"][outcome]
        assert isinstance(start.state, State) and start.state.ply == 0
