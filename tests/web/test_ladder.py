"""The ladder on the site (issue 32 point 5): the picker's levels and their Elo come from
ai/levels.py, and the AI runner keeps each level's least think time."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from jericho_game.ai import levels  # noqa: E402
from jericho_game.web.airunner.aiqueue import AIRunner  # noqa: E402
from jericho_game.web.round.rooms import PREFERRED_LEVELS  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.storage.database import AIJob  # noqa: E402

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
