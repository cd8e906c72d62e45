"""The game WebSocket's message kinds go through one table (web/round/messages.py), not an if/elif chain:
an unknown kind is refused naming the known ones, and a feature adds a kind without touching the
transport."""

from __future__ import annotations

import asyncio
import json
import warnings
from typing import Any

import pytest

with warnings.catch_warnings():  # starlette's note about httpx2 is not ours to act on
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.round.messages import Incoming, MessageTable, game_messages  # noqa: E402
from jericho_game.web.round.rooms import ClientError  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402

GAME_KINDS = [
    "hello",
    "move",
    "undo",
    "resign",
    "rematch",
    "offer",
    "accept",
    "decline",
    "claim",
    "abort",
    "ping",
    "sync",
]


def _incoming(msg: dict[str, Any]) -> Incoming:
    return Incoming(transport=None, game_id="g", conn=None, msg=msg, ref=None)  # type: ignore[arg-type]


def test_the_game_table_holds_every_kind_of_the_protocol() -> None:
    assert game_messages().kinds() == GAME_KINDS


def test_an_unknown_or_missing_type_is_refused_naming_the_known_kinds() -> None:
    table = game_messages()
    for msg in ({"type": "teleport"}, {"type": 5}, {"type": ["move"]}, {}):
        with pytest.raises(ClientError) as err:
            asyncio.run(table.dispatch(_incoming(msg)))
        assert err.value.code == "bad_message"
        assert "unknown message type" in err.value.message
        assert ", ".join(GAME_KINDS) in err.value.message


def test_a_kind_has_one_handler_and_dispatch_reaches_it() -> None:
    table = MessageTable()
    seen: list[dict[str, Any]] = []

    async def echo(m: Incoming) -> None:
        seen.append(m.msg)

    table.add("echo", echo)
    with pytest.raises(ValueError, match="already has a handler"):
        table.add("echo", echo)
    asyncio.run(table.dispatch(_incoming({"type": "echo", "n": 1})))
    assert seen == [{"type": "echo", "n": 1}]
    assert "echo" in table and 5 not in table


def test_a_feature_adds_a_kind_to_a_running_server(db: str) -> None:
    """A kind added to the transport's table is handled over the WebSocket like the game's own."""
    app = create_app(db)

    async def shout(m: Incoming) -> None:
        m.transport.send(m.conn, {"type": "shouted", "text": str(m.msg.get("text", "")).upper(), "ref": m.ref})

    app.state.transport.messages.add("shout", shout)
    with TestClient(app) as c:
        game = c.post("/api/games", json={"mode": "hotseat"}).json()
        with c.websocket_connect(f"/ws/{game['id']}") as ws:
            ws.send_text(json.dumps({"type": "shout", "text": "hi", "ref": 3}))
            for _ in range(10):
                msg = json.loads(ws.receive_text())
                if msg["type"] == "shouted":
                    assert msg == {"type": "shouted", "text": "HI", "ref": 3}
                    break
            else:
                raise AssertionError("the added kind was never answered")
            ws.send_text(json.dumps({"type": "whisper"}))
            for _ in range(10):
                msg = json.loads(ws.receive_text())
                if msg["type"] == "error":
                    assert msg["code"] == "bad_message"
                    assert "shout" in msg["message"]  # the refusal names the added kind too
                    break
            else:
                raise AssertionError("an unknown kind was not refused")
