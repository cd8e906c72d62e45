"""The memoized state fragments (web/round/render.py) equal the plain rendering they replace."""

from __future__ import annotations

import gc
import json
import random

import pytest

from jericho_game import Game, Move
from jericho_game.web.round import render
from jericho_game.web.round.rooms import GameService, Room
from jericho_game.web.round.roomstate import StateView, confrontations, legal_by_piece
from jericho_game.web.storage.database import GameRecord
from tests.helpers import random_games


@pytest.mark.parametrize("seed", [1, 2])
def test_fragments_equal_the_plain_rendering_on_random_games(seed: int) -> None:
    games = random_games(60, seed, max_plies=80)
    assert any(g.is_over() for g in games) and any(len(g.history) > 20 for g in games)
    for _ in range(2):  # the first pass renders and remembers, the second reads the memo
        for g in games:
            assert json.loads(render.confrontations_json(g)) == confrontations(g)
            plain = [f"{json.dumps(a)}:{render._dumps(body)}" for a, body in confrontations(g).items()]
            assert render.confrontations_json(g) == "{" + ",".join(plain) + "}"  # the very text
            towers = json.loads(render.towers_json(g))
            assert towers == {c: [str(p) for p in t] for c, t in g.towers().items() if t}
            assert list(towers) == [c for c, t in g.towers().items() if t]  # board order kept
            reserves = {s: [str(p) for p in g.reserve(s)] for s in ("south", "north")}
            assert json.loads(render.reserves_json(g)) == reserves
            leaders = {k: (str(v) if v is not None else None) for k, v in g.leaders().items()}
            assert json.loads(render.leaders_json(g)) == leaders
            legal = render.legal_json(g)
            assert legal == json.dumps(legal_by_piece(g.legal_moves()), separators=(",", ":"))  # order too


def test_the_public_state_carries_the_position_and_the_memo_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render, "MAX_FRAGMENTS", 50)
    service = GameService.__new__(GameService)  # rendering needs no database
    service.view = StateView(service)  # the state's rendering (web/round/roomstate.py)
    for g in random_games(20, 3, max_plies=80):
        rec = GameRecord(id="g", mode="hotseat", moves=[str(m) for m in g.history])
        state = json.loads("{" + service.view.board(Room(rec, g)) + "}")
        assert state["towers"] == {c: [str(p) for p in t] for c, t in g.towers().items() if t}
        assert state["confrontations"] == confrontations(g)
        assert state["ply"] == len(g.history) and state["moves"] == rec.moves
        if state["status"] == "playing":
            assert state["legal"] == legal_by_piece(g.legal_moves())
            assert state["pass_only"] == (g.legal_moves() == [Move(None, None)])
        assert len(render._memo) + len(render._old) <= 50


def test_the_memo_adds_nothing_to_a_garbage_collection() -> None:
    """Memo keys are tuples of ints and strings, which the collector stops tracking: 200,000
    fragments then cost a full collection nothing (keys holding the Tables object made each
    full collection of a busy server take 60-90 ms)."""
    for g in random_games(10, 4, max_plies=60):
        render.towers_json(g), render.confrontations_json(g), render.leaders_json(g)
        render.reserves_json(g), render.legal_json(g)
    gc.collect()
    gc.collect()  # a key's inner tuple is untracked by one collection, the key by the next
    assert render._memo and not [k for k in render._memo if gc.is_tracked(k)]


def test_a_record_copy_is_equal_and_independent() -> None:
    rec = GameRecord(id="g", mode="online", moves=["5R@a1", "pass"], meta={"names": {"south": "Ann"}}, version=7)
    copy = rec.copy()
    assert copy == rec and type(copy) is GameRecord and copy is not rec
    copy.moves.append("1W@b2")
    copy.meta["offer"] = {"what": "draw"}
    copy.version = 8
    assert rec.moves == ["5R@a1", "pass"] and rec.meta == {"names": {"south": "Ann"}} and rec.version == 7


def test_fragments_in_use_survive_the_memo_turnover(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounded memo drops what is not used any more, not what is: a game rendered again and
    again keeps its fragments while other games' push the memo past its bound many times."""
    monkeypatch.setattr(render, "MAX_FRAGMENTS", 100)  # a generation holds more than one state
    monkeypatch.setattr(render, "_memo", {})
    monkeypatch.setattr(render, "_old", {})
    game = random_games(1, 5, max_plies=30)[0]
    first = render.confrontations_json(game)
    rendered: list[str] = []
    real = Game.confrontation
    monkeypatch.setattr(Game, "confrontation", lambda self, name: rendered.append(name) or real(self, name))
    turnovers = 0
    for other in random_games(30, 6, max_plies=40):
        young = render._memo
        render.towers_json(other)
        turnovers += render._memo is not young
        assert render.confrontations_json(game) == first
        assert len(render._memo) + len(render._old) <= 100
    assert turnovers >= 5 and rendered == []  # never rendered again


def _whole(g: Game) -> str:
    # the four position functions, as position_json joins them
    return (
        f'"leaders":{render.leaders_json(g)},"towers":{render.towers_json(g)},'
        f'"reserves":{render.reserves_json(g)},"confrontations":{render.confrontations_json(g)}'
    )


@pytest.mark.parametrize("seed", [8, 9])
def test_a_position_rendered_from_an_earlier_one_equals_one_rendered_whole(seed: int) -> None:
    """``position_json`` re-renders only the cells and alignments that differ from ``prior``: from
    the previous position (the server's case), from any earlier or later one of the game (undo,
    a state skipped), from another game, or from nothing, the text is the same."""
    rng = random.Random(seed)
    games = random_games(25, seed, max_plies=90)
    assert any(g.is_over() for g in games)
    seen: list[render.Rendered] = []
    for g in games:
        replay, prior = Game(), render.position_json(Game())
        assert prior.text == _whole(Game())
        for move in g.history:
            replay.play(move)
            whole = _whole(replay)
            step = render.position_json(replay, prior)
            assert step.text == whole
            assert render.position_json(replay).text == whole
            assert render.position_json(replay, step).text == whole  # nothing changed (a pass)
            if seen:
                assert render.position_json(replay, rng.choice(seen)).text == whole
            seen.append(step)
            prior = step


def test_the_service_renders_each_version_from_the_previous_one() -> None:
    """A room made by a change keeps the rendered parts of the room it came from until it is
    rendered itself; its state equals the one rendered from scratch."""
    service = GameService.__new__(GameService)  # rendering needs no database
    service.account_name = lambda account: None  # type: ignore[method-assign]
    service.view = StateView(service)  # the state's rendering (web/round/roomstate.py)
    game, rec = Game(), GameRecord(id="g", mode="hotseat", moves=[])
    room = Room(rec, game.copy())
    service.view.board(room)
    rng = random.Random(3)
    for ply in range(40):
        if game.is_over():
            break
        game.play(rng.choice(game.legal_moves()))
        rec = GameRecord(id="g", mode="hotseat", moves=[str(m) for m in game.history], version=ply + 1)
        new = Room(rec, game.copy())
        new.prior = room.rendered
        assert new.prior is not None
        text = service.view.board(new)
        assert new.prior is None and new.rendered is not None  # the prior is let go once used
        assert text == service.view.board(Room(rec, game.copy()))
        room = new
    assert len(game.history) >= 20
