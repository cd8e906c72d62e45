"""Bytes a watcher receives per move, whole states (protocol 1) against deltas (protocol 2).

``python -m jericho_game.web.tools.wirebytes [games] [seed]``: plays random hot-seat games on an
in-process server (a temporary SQLite file) with one watcher of each protocol on every game, and
prints the state and delta bytes each received per move (docs/web.md, "WebSocket protocol").
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

with warnings.catch_warnings():  # starlette's note about httpx2 is not ours to act on
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.server import Limits, create_app  # noqa: E402

__all__ = ["measure", "main"]


def _drain(ws: Any, ply: int, counts: dict[str, int]) -> None:
    """Read ``ws`` until its game reaches ``ply`` moves, adding the state and delta bytes to ``counts``."""
    while True:
        text = ws.receive_text()
        msg = json.loads(text)
        if msg["type"] in ("state", "delta"):
            counts[msg["type"]] += len(text.encode())
            seen = msg["game"]["ply"] if msg["type"] == "state" else msg.get("set", {}).get("ply")
            if seen == ply:
                return


def measure(games: int = 20, seed: int = 57) -> dict[str, float]:
    """Bytes per move a protocol-1 and a protocol-2 watcher received over ``games`` random games."""
    rng = random.Random(seed)
    old = {"state": 0, "delta": 0}
    new = {"state": 0, "delta": 0}
    moves = 0
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(str(Path(tmp) / "wire.sqlite3"), ai_processes=0, limits=Limits(rate=1e6, burst=10**6))
        with TestClient(app) as client:
            for _ in range(games):
                game = client.post("/api/games", json={"mode": "hotseat"}).json()
                gid = game["id"]
                with (
                    client.websocket_connect(f"/ws/{gid}") as player,
                    client.websocket_connect(f"/ws/{gid}") as w1,
                    client.websocket_connect(f"/ws/{gid}?proto=2") as w2,
                ):
                    player.send_text(json.dumps({"type": "hello", "token": game["token"]}))
                    state = game["game"]
                    ply = 0
                    while True:
                        while True:  # the player's own view of the game, whole states
                            msg = json.loads(player.receive_text())
                            if msg["type"] == "state" and msg["game"]["ply"] == ply:
                                state = msg["game"]
                                break
                        if state["status"] != "playing":
                            break
                        legal = state["legal"]
                        piece = rng.choice(sorted(legal)) if legal else None
                        text = f"{piece}@{rng.choice(legal[piece])}" if piece else "pass"
                        player.send_text(json.dumps({"type": "move", "move": text, "ply": ply}))
                        ply += 1
                        # counted from the first move on: the first whole state is the same for both
                        if ply == 1:
                            _drain(w1, 0, {"state": 0, "delta": 0})
                            _drain(w2, 0, {"state": 0, "delta": 0})
                        _drain(w1, ply, old)
                        _drain(w2, ply, new)
                        moves += 1
    return {
        "moves": moves,
        "protocol 1 (whole states)": sum(old.values()) / moves,
        "protocol 2 (deltas)": sum(new.values()) / moves,
        "protocol 2 whole states": new["state"] / moves,
    }


def main(argv: list[str] | None = None) -> None:
    """Print :func:`measure`'s figures."""
    args = sys.argv[1:] if argv is None else argv
    figures = measure(int(args[0]) if args else 20, int(args[1]) if len(args) > 1 else 57)
    for name, value in figures.items():
        print(f"{name}: {value:,.0f}" + ("" if name == "moves" else " bytes per move"))


if __name__ == "__main__":
    main()
