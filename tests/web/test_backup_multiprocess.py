"""A backup taken while games are being played (issue 54, point 2), on SQLite and PostgreSQL.

A real ``jericho serve`` process; 30 hot-seat games played on loopback by WebSocket clients, each
move sent once the previous one is acknowledged, a finished game followed by its rematch.  Once
every game has moves acknowledged, ``jericho backup`` runs as its own process while the games go
on; ``jericho restore`` loads the copy into an empty database.  The restored database must hold
every move acknowledged before the backup began, and each of its games must replay on the rules
engine to the position the server showed its players at that ply.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from jericho_game import Game
from jericho_game.web.storage.database import Storage, resolve_db_url
from tests.web.test_multiprocess import SRC, Server

GAMES = 30
#: what the servers' per-client limits must allow: every simulated player comes from 127.0.0.1
SERVER_FLAGS = ("--ai-delay", "0", "--max-creates-per-minute", "100000", "--ws-per-address", "100000")


class Played:
    """What the clients saw: each game's acknowledged moves with the time of their ``ack``, and the
    position the server showed at each ply."""

    def __init__(self) -> None:
        self.acks: dict[str, list[tuple[str, float]]] = {}
        self.seen: dict[tuple[str, int], dict[str, Any]] = {}
        self.errors: list[str] = []

    def acked_before(self, t: float) -> dict[str, list[str]]:
        return {g: [m for m, at in acks if at < t] for g, acks in self.acks.items()}

    def count(self, after: float = 0.0, before: float = float("inf")) -> int:
        return sum(1 for acks in self.acks.values() for _, at in acks if after < at < before)


async def _one_game(base: str, http: httpx.AsyncClient, rng: random.Random, stop: asyncio.Event, out: Played) -> None:
    from websockets.asyncio.client import connect

    r = await http.post(base + "/api/games", json={"mode": "hotseat"})
    assert r.status_code == 201, r.text
    game_id, token = r.json()["id"], r.json()["token"]
    while not stop.is_set():
        out.acks.setdefault(game_id, [])
        next_id = None
        async with connect(f"{base.replace('http', 'ws', 1)}/ws/{game_id}", max_size=2**22) as ws:
            await ws.send(json.dumps({"type": "hello", "token": token}))
            waiting_for = 0  # the ply whose state must come before the next move
            pending = False  # a move sent, its ack or error not yet here
            while True:
                msg = json.loads(await ws.recv())
                if msg["type"] == "ack":
                    out.acks[game_id].append((msg["move"], time.monotonic()))
                    pending, waiting_for = False, msg["ply"]
                    continue
                if msg["type"] == "error":
                    out.errors.append(f"{game_id}: {msg.get('code')}: {msg.get('message')}")
                    pending = False
                    continue
                if msg["type"] == "rematch":
                    next_id = msg["id"]
                    break
                if msg["type"] != "state":
                    continue
                st = msg["game"]
                out.seen[(game_id, st["ply"])] = {k: st[k] for k in ("moves", "towers", "leaders")}
                if pending or st["ply"] < waiting_for:
                    continue
                if stop.is_set():
                    break
                if st["status"] == "over":
                    await ws.send(json.dumps({"type": "rematch"}))
                    pending = True  # answered by "rematch"
                    continue
                if st["status"] != "playing":
                    continue
                legal = [f"{p}@{c}" for p, cells in sorted(st["legal"].items()) for c in cells] or ["pass"]
                await ws.send(json.dumps({"type": "move", "move": rng.choice(legal), "ply": st["ply"]}))
                pending = True
                await asyncio.sleep(rng.uniform(0.0, 0.05))  # players do not all move in step
        if next_id is None:
            return
        game_id = next_id  # the rematch: the same token holds a seat of it (both, in hot seat)


def _jericho(*argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=SRC)
    return subprocess.run(
        [sys.executable, "-m", "jericho_game", *argv], capture_output=True, text=True, env=env, timeout=120
    )


def _empty_like(db: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if "://" not in db:
        return str(tmp_path / "restored.sqlite3")
    import psycopg

    folder, port = request.getfixturevalue("postgres_socket")
    name = f"restored_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(host=folder, port=port, user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"postgresql+psycopg://postgres@/{name}?host={folder}&port={port}"


def _position(game: Game) -> dict[str, Any]:
    """The position as the server's state shows it (web/round/roomstate.py)."""
    return {
        "towers": {c: [str(p) for p in t] for c, t in game.towers().items() if t},
        "leaders": {k: (str(v) if v is not None else None) for k, v in game.leaders().items()},
    }


def test_a_backup_while_games_move_holds_every_acknowledged_move_and_replays(
    db: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    server = Server(db, *SERVER_FLAGS)
    out = tmp_path / "while-serving.backup"
    played = Played()
    try:

        async def scenario() -> tuple[float, float, subprocess.CompletedProcess[str]]:
            stop = asyncio.Event()
            rng = random.Random(54)
            async with httpx.AsyncClient(timeout=30) as http:
                tasks = [
                    asyncio.create_task(_one_game(server.url, http, random.Random(rng.random()), stop, played))
                    for _ in range(GAMES)
                ]
                try:
                    # every game under way (a bounded wait: the clients fail loudly, not hang)
                    for _ in range(1200):
                        if len(played.acks) >= GAMES and all(len(a) >= 3 for a in played.acks.values()):
                            break
                        assert not any(t.done() for t in tasks), [t.exception() for t in tasks if t.done()]
                        await asyncio.sleep(0.05)
                    else:
                        raise AssertionError(f"the games did not get going: {played.errors[:3]}")
                    began = time.monotonic()
                    done = await asyncio.to_thread(_jericho, "backup", "--db", db, str(out))
                    ended = time.monotonic()
                    # the games go on after the backup, so that the copy is visibly not the end
                    goal = played.count() + GAMES
                    for _ in range(1200):
                        if played.count() >= goal:
                            break
                        await asyncio.sleep(0.05)
                finally:
                    stop.set()
                    await asyncio.wait_for(asyncio.gather(*tasks), 60)
            return began, ended, done

        began, ended, done = asyncio.run(scenario())
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    assert "backup written to" in done.stdout
    assert played.errors == []
    during = played.count(began, ended)
    assert during > 0, "no move was acknowledged while the backup ran: it did not test serving"

    target = _empty_like(db, tmp_path, request)
    back = _jericho("restore", "--db", target, str(out))
    assert back.returncode == 0, back.stderr
    must_hold = played.acked_before(began)
    storage = Storage(resolve_db_url(target))
    live = Storage(resolve_db_url(db))
    try:
        with storage.reader.connect() as conn:
            restored = [game_id for (game_id,) in conn.execute(text("SELECT id FROM games ORDER BY id"))]
        for game_id, acked in must_hold.items():
            rec = storage.load(game_id)
            if not acked and rec is None:
                continue  # a rematch created after the backup began
            assert rec is not None, f"game {game_id} with {len(acked)} acknowledged moves is missing"
            assert rec.moves[: len(acked)] == acked, f"game {game_id} lost acknowledged moves"
        later = 0
        for game_id in restored:
            rec = storage.load(game_id)
            assert rec is not None
            now = live.load(game_id)
            assert now is not None and now.moves[: len(rec.moves)] == rec.moves
            later += len(now.moves) - len(rec.moves)
            game = Game.from_position(rec.start_position) if rec.start_position else Game()
            for move in rec.moves:
                game.play(move)  # raises on an illegal move
            if rec.moves:
                shown = played.seen[(game_id, len(rec.moves))]
                assert shown["moves"] == rec.moves
                assert _position(game) == {"towers": shown["towers"], "leaders": shown["leaders"]}, game_id
        assert later > 0, "the backup holds every move played: it was not taken while they were played"
        assert len(restored) >= GAMES
    finally:
        storage.close()
        live.close()
