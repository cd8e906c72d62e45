"""The ladder on the site (issue 32 point 5): the picker's levels and their Elo come from
ai/levels.py, and the AI runner keeps each level's least think time."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import pytest
import uvicorn

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from jericho_game.ai import base, levels  # noqa: E402
from jericho_game.web.airunner.aiqueue import AIRunner  # noqa: E402
from jericho_game.web.round.rooms import PREFERRED_LEVELS  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.storage.database import AIJob  # noqa: E402
from tests.helpers import start_in_thread  # noqa: E402

STATIC = Path(__file__).resolve().parents[2] / "src/jericho_game/web/site/static"


def test_the_picker_offers_the_ladder_with_each_level_s_elo(tmp_path):
    assert PREFERRED_LEVELS[: len(levels.LADDER)] == tuple(levels.ladder())
    with TestClient(create_app(str(tmp_path / "games.sqlite3"), ai_processes=0)) as c:
        data = c.get("/api/levels").json()
    assert data["levels"][: len(levels.LADDER)] == levels.ladder()
    assert data["elo"] == {lv.name: lv.elo for lv in levels.LADDER}
    # the picker writes "about 1,400" beside a level's name from that answer, in the page's language
    app = (STATIC / "app.js").read_text()
    assert "data.elo && data.elo[name]" in app and 't("about {elo}", { elo: formatNumber(elo) })' in app
    names = (STATIC / "levels.js").read_text()
    assert all(f"{lv.name}: () => t(" in names for lv in levels.LADDER)  # each level's name is translated


class _OneJob:
    """An AI queue holding one AI move of a fresh game for ``level``."""

    def __init__(self, level: str) -> None:
        self.level, self.given = level, False

    def claim_job(self, worker: str, lease: float, idle_clients_only: bool = False) -> Any:
        if self.given:
            return None
        self.given = True
        return AIJob("g1", 0, self.level, None, [])


def _answer_time(level: str) -> float:
    played: list[float] = []

    async def scenario() -> None:
        started = time.monotonic()
        runner = AIRunner(
            _OneJob(level),
            lambda job, move: played.append(time.monotonic() - started),
            slots=1,
            pool=ThreadPoolExecutor(1),
            poll=0.01,
        )
        task = asyncio.get_running_loop().create_task(runner.run())
        for _ in range(1000):
            await asyncio.sleep(0.01)
            if played:
                break
        task.cancel()
        await runner.close()

    asyncio.run(scenario())
    assert played, f"no move from {level}"
    return played[0]


def test_the_ai_runner_keeps_a_level_s_least_think_time():
    # easy answers in a millisecond; the runner waits out the level's think time (a lower bound only:
    # a busy machine may take longer, never shorter)
    assert levels.think_time("easy") >= 0.5
    assert _answer_time("easy") >= levels.think_time("easy") * 0.95


_SLOW_ENTERED = threading.Event()
_SLOW_RELEASE = threading.Event()


def slow_plugin(**options: Any) -> Any:
    """A plug-in player whose building takes as long as the test says (a slow import's stand-in)."""
    _SLOW_ENTERED.set()
    assert _SLOW_RELEASE.wait(60), "the test never let the slow plug-in finish"
    return base.make_player("random")


def test_the_first_look_at_the_levels_stalls_nobody(tmp_path, monkeypatch):
    # The first /api/levels builds every registered player once; a plug-in whose import takes
    # seconds (jax-az imports JAX: 4 s here) held the event loop, and every other request of
    # the server (a click to /learn in the tutorial's browser test) waited behind it.
    monkeypatch.setitem(base._REGISTRY, "slow-plugin", (__name__, "slow_plugin"))
    _SLOW_ENTERED.clear()
    _SLOW_RELEASE.clear()
    srv = uvicorn.Server(uvicorn.Config(create_app(str(tmp_path / "g.sqlite3"), ai_processes=0), log_level="warning"))
    thread, sock = start_in_thread(srv)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        deadline = time.monotonic() + 15
        while not srv.started:
            assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
            time.sleep(0.05)
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(lambda: json.loads(urlopen(url + "/api/levels", timeout=60).read()))
            assert _SLOW_ENTERED.wait(30), "the levels were never looked at"
            # the look is under way (the plug-in is still being built): the site goes on answering
            with urlopen(url + "/learn", timeout=20) as page:
                assert page.status == 200 and b"lesson" in page.read()
            assert not first.done()
            _SLOW_RELEASE.set()
            assert "slow-plugin" in first.result(timeout=30)["levels"]
    finally:
        _SLOW_RELEASE.set()
        srv.should_exit = True
        thread.join(timeout=10)
        sock.close()


def test_a_player_that_needs_a_file_is_never_offered_nor_imported(tmp_path):
    # jax-az cannot be built without its checkpoint: it is left out without importing its module
    # (JAX: seconds of a fresh server's first look), in a process of its own to see its imports
    assert base.needs_a_file("jax-az") and not base.needs_a_file("master")
    script = (
        "import sys; from starlette.testclient import TestClient;"
        "from jericho_game.web.server import create_app;"
        f"c = TestClient(create_app({str(tmp_path / 'games.sqlite3')!r}, ai_processes=0));"
        "levels = c.get('/api/levels').json()['levels'];"
        "print(repr(('jax-az' in levels, 'master' in levels, 'jax' in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip().splitlines()[-1] == "(False, True, False)", out.stdout + out.stderr
