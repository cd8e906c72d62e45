"""Move deltas on the game WebSocket (issue 57, web/round/wire.py, static/delta.js): random games
replayed through the server's delta builder and both mirrors of ``apply`` (Python here, the page's
JavaScript in chromium in test_wire_ui.py), and the socket's protocol 2 end to end."""

from __future__ import annotations

import asyncio
import json
import os
import random
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():  # starlette's note about httpx2 is not ours to act on
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.common.conn import Conn  # noqa: E402
from jericho_game.web.round import wire  # noqa: E402
from jericho_game.web.round.rooms import GameService  # noqa: E402
from jericho_game.web.server import Limits, create_app  # noqa: E402
from jericho_game.web.storage.database import Storage  # noqa: E402

#: Games replayed by the fast test (JERICHO_WIRE_GAMES for more); the slow one replays 1,000.
GAMES = int(os.environ.get("JERICHO_WIRE_GAMES", "40"))


def random_games(tmp: Path, games: int, seed: int = 57) -> Iterator[list[dict[str, Any]]]:
    """The server's public states of ``games`` random hot-seat games, after every move (the states
    as the transport renders them: ``GameService.state_json``)."""
    service = GameService(Storage(f"sqlite:///{tmp / 'wire.db'}"), max_rooms=10_000, creates_per_minute=10**6)
    rng = random.Random(seed)
    both = frozenset({"south", "north"})

    async def one() -> list[dict[str, Any]]:
        room, _ = service.create({"mode": "hotseat"})
        gid = room.rec.id
        states = [json.loads(service.state_json(room))]
        while states[-1]["status"] == "playing":
            legal = states[-1]["legal"]
            if rng.random() < 0.02 and len(states) > 3:
                change = await asyncio.to_thread(service.undo, gid, both)  # undo: the moves list shrinks
            else:
                piece = rng.choice(sorted(legal)) if legal else None
                text = f"{piece}@{rng.choice(legal[piece])}" if piece else "pass"
                change = await service.move(gid, both, text, states[-1]["ply"])
            states.append(json.loads(service.state_json(change.room)))
        return states

    try:
        for _ in range(games):
            yield asyncio.run(one())
    finally:
        service.close()


def replay(states: list[dict[str, Any]]) -> int:
    """Apply each delta to the client's copy and compare it with the server's state; the bytes sent."""
    copy, sent = states[0], 0
    for new in states[1:]:
        delta = wire.diff(copy, new)
        assert delta is not None
        sent += len(json.dumps({"type": "delta", "from": 1, "seq": 2, **delta}, separators=(",", ":")))
        copy = wire.apply(copy, delta)
        assert copy == new
        assert list(copy) == list(new)  # the same fields in the same order
        for key in ("towers", "confrontations", "legal", "leaders"):
            assert list(copy[key]) == list(new[key]), key
    return sent


def test_random_games_replayed_through_deltas_equal_the_server_state_after_every_move(tmp_path: Path) -> None:
    moves = 0
    for states in random_games(tmp_path, GAMES):
        replay(states)
        moves += len(states) - 1
    assert moves > GAMES * 10


@pytest.mark.slow
@pytest.mark.timeout(1200)  # about three minutes alone; a shared machine under load may take many times that
def test_a_thousand_random_games_replayed_through_deltas(tmp_path: Path) -> None:
    for states in random_games(tmp_path, 1000, seed=1):
        replay(states)


def test_a_delta_is_a_fraction_of_the_whole_state(tmp_path: Path) -> None:
    whole = delta = 0
    for states in random_games(tmp_path, 5, seed=3):
        delta += replay(states)
        whole += sum(len(json.dumps(s, separators=(",", ":"))) for s in states[1:])
    assert delta * 3 < whole, (delta, whole)


def test_legal_placements_keep_their_order_or_are_sent_whole() -> None:
    legal = {"1R": ["a1", "c1"], "2R": ["b1", "c1"]}
    packed = wire.encode_legal(legal)
    assert packed is not None and wire.decode_legal(packed) == legal
    assert list(wire.decode_legal(packed)) == ["1R", "2R"]
    disordered = {"1R": ["a1", "c1"], "2R": ["c1", "a1"]}
    assert wire.encode_legal(disordered) is None
    delta = wire.diff({"legal": legal}, {"legal": disordered})
    assert delta is not None and "legal" not in delta  # not the compact form: the lists as they are
    assert wire.apply({"legal": legal}, delta) == {"legal": disordered}


def test_states_with_other_fields_get_no_delta() -> None:
    assert wire.diff({"a": 1}, {"a": 1, "b": 2}) is None
    assert wire.diff({"a": 1, "b": 2}, {"b": 2, "a": 1}) is None


# -- the socket ----------------------------------------------------------------------------------


class Copy:
    """A protocol-2 client's copy of the game: whole states and deltas, as static/delta.js keeps it."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.seq: int | None = None
        self.game: dict[str, Any] | None = None
        self.kinds: list[str] = []

    def recv(self) -> dict[str, Any]:
        msg: dict[str, Any] = json.loads(self.ws.receive_text())
        if msg["type"] == "state":
            self.seq, self.game = msg["seq"], msg["game"]
        elif msg["type"] == "delta":
            assert self.game is not None and msg["from"] == self.seq, "a gap the test did not make"
            self.game, self.seq = wire.apply(self.game, msg), msg["seq"]
        if msg["type"] in ("state", "delta"):
            self.kinds.append(msg["type"])
        return msg

    def until(self, pred: Any) -> dict[str, Any]:
        for _ in range(200):
            msg = self.recv()
            assert msg["type"] != "error", msg
            if pred(msg):
                return msg
        raise AssertionError("never came")

    def at(self, ply: int) -> dict[str, Any]:
        if not (self.game is not None and self.game["ply"] >= ply):
            self.until(lambda m: m["type"] in ("state", "delta") and self.game is not None and self.game["ply"] >= ply)
        assert self.game is not None
        return self.game


@pytest.fixture()
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(f"sqlite:///{tmp_path / 'ws.db'}", ai_processes=0, limits=Limits(rate=1000.0, burst=1000))
    with TestClient(app) as c:
        yield c


def test_a_player_and_a_watcher_get_deltas_after_the_first_state_equal_to_the_server_state(client: TestClient) -> None:
    game = client.post("/api/games", json={"mode": "hotseat"}).json()
    gid = game["id"]
    with (
        client.websocket_connect(f"/ws/{gid}?proto=2") as p,
        client.websocket_connect(f"/ws/{gid}?proto=2") as w,
        client.websocket_connect(f"/ws/{gid}") as old,
    ):
        player, watcher = Copy(p), Copy(w)
        player.until(lambda m: m["type"] == "state")
        p.send_text(json.dumps({"type": "hello", "token": game["token"]}))
        player.until(lambda m: m["type"] == "welcome")
        assert player.until(lambda m: m["type"] in ("state", "delta"))["type"] == "state"  # hello: whole
        watcher.until(lambda m: m["type"] in ("state", "delta"))
        rng = random.Random(5)
        for ply in range(12):
            state = player.at(ply)
            legal = state["legal"]
            piece = rng.choice(sorted(legal))
            p.send_text(json.dumps({"type": "move", "move": f"{piece}@{rng.choice(legal[piece])}", "ply": ply}))
            player.at(ply + 1)
            watcher.at(ply + 1)
        server = client.get(f"/api/games/{gid}").json()
        for copy in (player, watcher):
            assert copy.kinds[0] == "state" and copy.kinds.count("delta") >= 12, copy.kinds
            assert copy.game is not None
            for key in ("moves", "towers", "leaders", "confrontations", "score", "legal", "ply", "version"):
                assert copy.game[key] == server[key], key
        # a client of protocol 1 still gets whole states only
        kinds = []
        for _ in range(200):
            msg = json.loads(old.receive_text())
            kinds.append(msg["type"])
            if msg["type"] == "state" and msg["game"]["ply"] == 12:
                break
        assert "delta" not in kinds and kinds.count("state") >= 12
        # a gap (a delta missed): the client asks, and gets the whole state again
        player.seq = -5
        p.send_text(json.dumps({"type": "move", "move": "pass" if not server["legal"] else first(server), "ply": 12}))
        gap = json.loads(p.receive_text())
        while gap["type"] != "delta":
            gap = json.loads(p.receive_text())
        assert gap["from"] != player.seq  # it cannot apply it: it asks
        p.send_text(json.dumps({"type": "sync"}))
        whole = player.until(lambda m: m["type"] == "state")
        assert whole["seq"] == gap["seq"]
        assert player.game is not None
        assert player.game == client.get(f"/api/games/{gid}").json() | {k: player.game[k] for k in LIVE}


#: the state's parts that change without a move (presence, clocks): compared by the fields above
LIVE = ("seats", "clock", "ai_thinking", "ai", "watchers", "claim_after", "first_move")


def first(state: dict[str, Any]) -> str:
    piece, cells = next(iter(state["legal"].items()))
    return f"{piece}@{cells[0]}"


def test_a_slow_readers_waiting_deltas_give_way_to_the_next_whole_state() -> None:
    conn = Conn(ws=None)
    conn.put('{"type":"ack"}', "ack")
    conn.put('{"type":"delta","seq":2}', "delta")
    conn.put('{"type":"delta","seq":3}', "delta")
    assert conn.waiting("state", "delta") and not conn.waiting("review")
    conn.put('{"type":"state","seq":4}', "state")
    assert [kind for kind, _ in conn.queue] == ["ack", "state"]
