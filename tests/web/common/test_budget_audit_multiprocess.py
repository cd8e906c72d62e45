"""The third audit's attacks on the budgets (issue 51 point 4), replayed against a real ``jericho
serve`` on loopback, each bounded: distinct loopback sources (127.0.0.x) are the audit's distinct
clients."""

from __future__ import annotations

import statistics
import time
from typing import Any

from jericho_game.web.storage.database import Storage, resolve_db_url
from tests.web import test_multiprocess
from tests.web.common.test_fairshare import _victim_replies, http

servers = test_multiprocess.servers


def _wait_for_runner(db: str, slots: tuple[int, int]) -> None:
    store = Storage(resolve_db_url(db))
    try:
        end = time.monotonic() + 60
        while True:
            with store.reader.connect() as conn:
                if store.ai_capacity(conn, time.time()) == slots:
                    return
            assert time.monotonic() < end, "the server's AI runner never said it was alive"
            time.sleep(0.1)
    finally:
        store.close()


def test_finding_1s_attacker_leaves_a_fresh_client_admitted_and_answered(tmp_path: Any, servers: Any) -> None:
    """Finding 1: one address made 2 `master` + 50 `hard` games in 2.6 s, moved in none, and every other
    client got `ai_full` at every level for minutes.  Now the attacker's games count against the
    attacker: it gets 4 (one master), the rest are refused with `ai_games` / `ai_full`; a fresh client
    is admitted at every level and its `easy` replies come as fast as before the attack (the issue's
    bound is 2 s; asserted against the same run's calm replies, so a loaded machine cannot break it)."""
    db = str(tmp_path / "g.sqlite3")
    server = servers(db, "--ai-processes", "2", "--ai-delay", "0")
    _wait_for_runner(db, (2, 1))
    calm, _ = _victim_replies(server, "easy", 4)
    codes: list[tuple[int, str]] = []
    started = time.monotonic()
    with http("127.0.0.50") as attacker:
        for level in ["master"] * 2 + ["hard"] * 50:
            r = attacker.post(server.url + "/api/games", json={"mode": "ai", "level": level, "side": "south"})
            codes.append((r.status_code, r.json().get("error", "ok")))
    print(f"52 creations in {time.monotonic() - started:.1f} s: {sorted(set(codes))}")
    assert sum(1 for status, _ in codes if status == 201) == 4, codes[:8]
    assert {code for status, code in codes if status != 201} == {"ai_games", "ai_full"}
    with http("127.0.0.3") as fresh:
        for level in ("medium", "hard", "master"):
            r = fresh.post(server.url + "/api/games", json={"mode": "ai", "level": level, "side": "south"})
            assert r.status_code == 201, (level, r.text)
    took, places = _victim_replies(server, "easy", 6)
    print(f"easy replies: calm {calm}, attacked {took}")
    assert places and max(places) <= 1, places  # nobody's move is ever ahead of the victim's
    assert statistics.median(took) <= max(2.0, 2 * statistics.median(calm)), (calm, took)
