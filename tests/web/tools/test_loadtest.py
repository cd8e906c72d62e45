"""``jericho loadtest``: the load generator's reading of the server's messages, its move choice, and
the command itself against a server it starts (small and short: the figures are the benchmark's)."""

from __future__ import annotations

import asyncio
import json
import random
import re
import subprocess
import sys
from pathlib import Path

from jericho_game import Game
from jericho_game.web.round.rooms import GameService
from jericho_game.web.storage.broker import LocalBroker
from jericho_game.web.storage.database import Storage, resolve_db_url
from jericho_game.web.tools import loadtest

POSITION = ("legal", "leaders", "towers", "reserves", "confrontations")


def _state_message(tmp_path: Path, moves: list[str]) -> tuple[str, dict[str, object]]:
    # a state message as the server sends it, after ``moves`` in a hot-seat game
    service = GameService(Storage(resolve_db_url(str(tmp_path / "g.sqlite3"))), LocalBroker())
    room, _ = service.create({"mode": "hotseat"})

    async def play() -> None:
        for ply, move in enumerate(moves):
            await service.move(room.rec.id, frozenset(["south", "north"]), move, ply)

    asyncio.run(play())
    text = '{"type":"state","game":' + service.state_json(service.room(room.rec.id)) + "}"
    service.storage.close()
    return text, json.loads(text)["game"]


def test_a_state_is_read_without_its_position_and_everything_else_whole(tmp_path: Path) -> None:
    text, whole = _state_message(tmp_path, ["5R@d2", "4G@e4"])
    read = loadtest._read(text)
    assert read["type"] == "state"
    game = read["game"]
    assert set(game) == set(whole) - set(POSITION)  # the live part ("seats", ...) is kept
    assert {k: v for k, v in whole.items() if k not in POSITION} == game
    assert game["moves"] == ["5R@d2", "4G@e4"] and game["ply"] == 2 and "seats" in game
    # anything else, or a state laid out otherwise, is read whole
    for other in ('{"type":"ack","ply":3,"move":"5R@d2"}', '{"type":"state","game":{"ply":1,"legal":{}}}'):
        assert loadtest._read(other) == json.loads(other)


def test_the_mirror_draws_legal_moves_and_follows_a_takeback() -> None:
    mirror, rng = loadtest._Mirror(), random.Random(4)
    moves: list[str] = []
    for _ in range(12):
        move = mirror.choose(moves, rng)
        game = Game()
        for m in moves:
            game.play(m)
        assert game.is_legal(move), (moves, move)
        moves.append(move)
    taken_back = moves[:5]  # an undo: the mirror replays the shorter game
    move = mirror.choose(taken_back, rng)
    game = Game()
    for m in taken_back:
        game.play(m)
    assert game.is_legal(move) and mirror.moves == taken_back


def test_the_command_plays_games_against_a_server_it_starts_and_prints_its_figures() -> None:
    """A run of a known amount of work (``--moves``: 10 acknowledged moves a game, ~2 s at 5 moves/s
    on an idle machine), not of a wall-clock time: a loaded machine takes longer, never plays less."""
    cmd = [sys.executable, "-m", "jericho_game", "loadtest", "--games", "4", "--moves", "10", "--seconds", "100"]
    out = subprocess.run([*cmd, "--pace", "5"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "4 hot-seat games for 10 acknowledged moves each (at most 100 s)" in out.stdout, out.stdout
    moves = re.search(r"acknowledged moves: (\d+) in all", out.stdout)
    assert moves is not None and int(moves.group(1)) == 40, out.stdout  # 4 games, 10 moves each
    assert "when all 4 games were playing" in out.stdout  # the steady state starts there
    assert "errors: 0" in out.stdout
    assert re.search(r"latency, move sent to state received: p50 [\d.]+ ms, p99 [\d.]+ ms", out.stdout)
    assert re.search(r"server CPU per acknowledged move: [\d.]+ ms", out.stdout), out.stdout
