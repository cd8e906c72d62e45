"""The analysis board's live engine (web/learn/analysis_stream.py, docs/web.md "Analysis board"): one
WebSocket stream per analysis, updates with growing simulations, cancelled by a new position, a stop
or the page going away, one stream per client (decided in the database, across processes), run in
the AI pool after the AI's moves (``AIRunner.acquire``), refused over the client's AI quota."""

from __future__ import annotations

import asyncio
import json
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game import Game  # noqa: E402
from jericho_game.ai.analysis import stream  # noqa: E402
from jericho_game.web.airunner.aiqueue import AIRunner  # noqa: E402
from jericho_game.web.learn import analysis_stream  # noqa: E402
from jericho_game.web.server import Limits, create_app  # noqa: E402
from jericho_game.web.storage.database import AIJob, Storage, resolve_db_url  # noqa: E402
from tests.helpers import Load  # noqa: E402
from tests.web import test_multiprocess  # noqa: E402
from tests.web.common.test_fairshare import ws_from  # noqa: E402
from tests.web.test_multiprocess import Server  # noqa: E402

pg = test_multiprocess.pg
servers = test_multiprocess.servers

OPENING = ["5R@d2", "1G@d3", "2Y@d3"]
#: How long a stop may take in these tests: the search sees it within a slice (0.05 s) and its line
#: (4 searches of at most 0.02 s), about 0.1 s on an idle machine; the margin is for a loaded one,
#: and a test multiplies it by the load measured in the same run (the ``load`` fixture, marker ``timing``).
STOP_BOUND = 1.5


@pytest.fixture()
def app(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    # a test names its client address in a header (TestClient's sockets all come from one address)
    monkeypatch.setattr(analysis_stream, "address_of", lambda ws: ws.headers.get("x-test-address", "testclient"))
    app = create_app(str(tmp_path / "games.sqlite3"), ai_processes=0, limits=Limits(rate=1000.0, burst=1000))
    # a search runs until the test stops it, however slow a loaded machine makes the test
    app.state.analysis_streams.max_seconds = 120.0
    app.state.analysis_streams.max_sims = 400_000
    return app


@pytest.fixture()
def client(app: Any) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


def until(ws: Any, pred: Callable[[dict[str, Any]], bool], seen: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The first message matching ``pred`` (every stream ends with ``done``, so this never waits long)."""
    for _ in range(500):
        msg: dict[str, Any] = ws.receive_json()
        if seen is not None:
            seen.append(msg)
        if pred(msg):
            return msg
    raise AssertionError("the awaited message never came")


def check_update(msg: dict[str, Any], moves: list[str]) -> None:
    """An update's fields: a chance, a legal best move, a legal line labelled from the position."""
    assert msg["type"] == "update" and 0.0 <= msg["south"] <= 1.0 and msg["ply"] == len(moves)
    game = Game.from_moves(moves)
    assert msg["line"][0] == msg["best"] and len(msg["labels"]) == len(msg["line"]) >= 1
    for mv in msg["line"]:
        assert game.is_legal(mv), (mv, msg)
        game.play(mv)


@pytest.mark.timing
def test_a_stream_deepens_while_it_thinks_and_stops_on_request(client: TestClient, load: Load) -> None:
    with client.websocket_connect("/ws/analysis") as ws:
        ws.send_json({"type": "analyse", "id": 7, "moves": OPENING})
        updates = [until(ws, lambda m: m["type"] == "update") for _ in range(4)]
        for u in updates:
            check_update(u, OPENING)
            assert u["id"] == 7 and u["turn"] == "north" and u["labels"][0] == "2..." and not u["exact"]
        sims = [u["sims"] for u in updates]
        assert sims == sorted(sims) and len(set(sims)) == 4, sims  # more simulations at every update
        assert updates[-1]["seconds"] > updates[0]["seconds"]
        assert updates[0]["cap"] == {"sims": 400_000, "seconds": 120.0}
        assert (analysis_stream.MAX_SIMS, analysis_stream.MAX_SECONDS) == (100_000, 5.0)  # the served cap
        ws.send_json({"type": "stop"})
        done = until(ws, lambda m: m["type"] == "done")
        assert done["id"] == 7 and done["reason"] == "stopped" and done["stopped_in"] < STOP_BOUND * load.measure(), (
            done,
            load.factor,
        )
        assert done["sims"] >= sims[-1]
    # the page went away: nothing of it is left running or counted
    streams = client.app.state.analysis_streams  # type: ignore[attr-defined]
    assert streams.by_client == {} and streams.store.count() == 0


def test_a_stream_ends_at_its_cap(app: Any) -> None:
    streams = app.state.analysis_streams
    streams.max_sims = 3000  # a small cap, reached quickly
    with TestClient(app) as client, client.websocket_connect("/ws/analysis") as ws:
        ws.send_json({"type": "analyse", "id": 1, "moves": OPENING})
        seen: list[dict[str, Any]] = []
        done = until(ws, lambda m: m["type"] == "done", seen)
        assert done["reason"] == "cap" and 3000 <= done["sims"] <= 3000 + 4096, done
        assert [m["type"] for m in seen].count("update") >= 1 and "stopped_in" not in done


@pytest.mark.timing
def test_a_new_position_from_the_page_ends_the_running_search(client: TestClient, load: Load) -> None:
    with client.websocket_connect("/ws/analysis") as ws:
        ws.send_json({"type": "analyse", "id": 1, "moves": OPENING})
        until(ws, lambda m: m["type"] == "update" and m["id"] == 1)
        ws.send_json({"type": "analyse", "id": 2, "moves": OPENING[:1]})
        seen: list[dict[str, Any]] = []
        done = until(ws, lambda m: m["type"] == "done" and m["id"] == 1, seen)
        assert done["reason"] == "replaced" and done["stopped_in"] < STOP_BOUND * load.measure(), (done, load.factor)
        second = until(ws, lambda m: m["type"] == "update" and m["id"] == 2, seen)
        check_update(second, OPENING[:1])
        # nothing of the first search comes after its end
        after = seen[seen.index(done) + 1 :]
        assert all(m.get("id") == 2 for m in after), after
        ws.send_json({"type": "stop"})
        assert until(ws, lambda m: m["type"] == "done")["id"] == 2


def test_a_burst_of_positions_ends_each_but_the_last(client: TestClient) -> None:
    # the arrow key held down: every position but the last ends "replaced", the last one is analysed
    with client.websocket_connect("/ws/analysis") as ws:
        for i in range(1, 7):
            ws.send_json({"type": "analyse", "id": i, "moves": OPENING[: i % 4]})
        seen: list[dict[str, Any]] = []
        until(ws, lambda m: m["type"] == "update" and m["id"] == 6, seen)
        ws.send_json({"type": "stop"})
        until(ws, lambda m: m["type"] == "done" and m["id"] == 6, seen)
        while len([m for m in seen if m["type"] == "done"]) < 6:
            seen.append(ws.receive_json())
        ends = {m["id"]: m["reason"] for m in seen if m["type"] == "done"}
        assert ends == {1: "replaced", 2: "replaced", 3: "replaced", 4: "replaced", 5: "replaced", 6: "stopped"}
    assert client.app.state.analysis_streams.store.count() == 0  # type: ignore[attr-defined]


@pytest.mark.timing
def test_the_page_going_away_stops_its_search(client: TestClient, load: Load) -> None:
    streams = client.app.state.analysis_streams  # type: ignore[attr-defined]
    runner = client.app.state.transport.runner  # type: ignore[attr-defined]
    with client.websocket_connect("/ws/analysis") as ws:
        ws.send_json({"type": "analyse", "id": 1, "moves": OPENING})
        until(ws, lambda m: m["type"] == "update")
        assert runner.other_busy == 1 and streams.store.count() == 1
    t0 = time.monotonic()
    while runner.other_busy or streams.store.count() or streams.by_client:
        bound = STOP_BOUND + 3.0  # the load is measured again only once the idle machine's bound is passed
        assert time.monotonic() - t0 < bound * load.factor or time.monotonic() - t0 < bound * load.measure(), (
            "the search of a closed page went on"
        )
        time.sleep(0.02)


def test_bad_positions_get_coded_errors_and_the_socket_stays(client: TestClient) -> None:
    with client.websocket_connect("/ws/analysis") as ws:
        ws.send_json({"type": "analyse", "id": 3, "moves": ["5R@d2", "5R@d3"]})
        err = ws.receive_json()
        assert err == {"type": "error", "id": 3, "code": "illegal_move", "message": err["message"]}
        assert "1..." in err["message"]
        ws.send_json({"type": "analyse", "id": 4, "start": "nonsense"})
        assert ws.receive_json()["code"] == "bad_position"
        ws.send_text("{not json")
        assert ws.receive_json()["code"] == "bad_request"
        ws.send_text(json.dumps({"type": "analyse", "moves": ["pass"] * 5000}))
        assert ws.receive_json()["code"] == "too_large"
        # a finished position: one exact figure, nothing to search
        game = Game.from_moves(OPENING)
        while not game.is_over():
            game.play(game.legal_moves()[0])
        moves = [str(m) for m in game.history]
        ws.send_json({"type": "analyse", "id": 5, "moves": moves})
        upd = until(ws, lambda m: m["type"] == "update")
        assert upd["exact"] and upd["best"] is None and upd["south"] in (0.0, 0.5, 1.0)
        assert until(ws, lambda m: m["type"] == "done")["reason"] == "decided"


def test_the_endgame_solver_decides_a_late_position_like_a_tablebase(client: TestClient) -> None:
    """Near the end the endgame solver answers before any search: one exact update with the side
    to move's value, the plies to the end and the whole line, then ``done`` with ``solved``."""
    game = Game.from_moves(OPENING)
    while not game.is_over():
        game.play(game.legal_moves()[0])
    moves = [str(m) for m in game.history]
    pos = Game.from_moves(moves[:-6])
    (ev,) = list(stream(pos, len(moves) - 6, sims=20_000, seconds=3.0))
    assert ev.exact and ev.sims == 0 and ev.value in (-1, 0, 1) and ev.best == ev.line[0]
    end = pos.copy()
    for mv in ev.line:
        end.play(mv)
    assert end.is_over() and len(ev.line) == (ev.plies if ev.value else len(ev.line))
    outcome = end.outcome()
    assert ev.value == (0 if outcome == "draw" else 1 if outcome == pos.turn.value else -1)
    with client.websocket_connect("/ws/analysis", headers={"x-test-address": "10.0.0.9"}) as ws:
        ws.send_json({"type": "analyse", "id": 6, "moves": moves[:-6]})
        upd = until(ws, lambda m: m["type"] == "update")
        assert (upd["value"], upd["plies"], upd["line"], upd["exact"]) == (ev.value, ev.plies, list(ev.line), True)
        assert len(upd["labels"]) == len(upd["line"])
        assert until(ws, lambda m: m["type"] == "done")["reason"] == "solved"


def test_the_solver_proves_a_position_and_the_figure_is_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    # a game near its end, where the master's solver proves the result within its budget (the
    # endgame solver, which would answer first, is given no budget here)
    from jericho_game.ai import analysis

    monkeypatch.setattr(analysis, "STREAM_SOLVE_NODES", 1)
    game = Game.from_moves(OPENING)
    while not game.is_over():
        game.play(game.legal_moves()[0])
    moves = [str(m) for m in game.history]
    proven = None
    for back in range(2, 12):
        pos = Game.from_moves(moves[:-back])
        evs = list(stream(pos, len(moves) - back, sims=20_000, seconds=3.0))
        if evs[-1].exact and evs[-1].sims > 0:
            proven = evs
            break
    assert proven is not None, "no position near the end was proven"
    assert proven[-1].south in (0.0, 1.0) and all(not e.exact for e in proven[:-1])


@pytest.mark.timing
def test_one_stream_per_client_a_second_replaces_the_first(client: TestClient, load: Load) -> None:
    headers = {"x-test-address": "10.0.0.1"}
    with (
        client.websocket_connect("/ws/analysis", headers=headers) as a,
        client.websocket_connect("/ws/analysis", headers=headers) as b,
    ):
        a.send_json({"type": "analyse", "id": "a", "moves": OPENING})
        until(a, lambda m: m["type"] == "update")
        b.send_json({"type": "analyse", "id": "b", "moves": OPENING})
        done = until(a, lambda m: m["type"] == "done")
        assert done["reason"] == "replaced" and done["stopped_in"] < STOP_BOUND * load.measure(), (done, load.factor)
        until(b, lambda m: m["type"] == "update")
        assert client.app.state.analysis_streams.store.count() == 1  # type: ignore[attr-defined]
        b.send_json({"type": "stop"})
        until(b, lambda m: m["type"] == "done")


@pytest.mark.timing
def test_a_stream_started_by_the_same_client_elsewhere_replaces_this_one(client: TestClient, load: Load) -> None:
    # another process starting a stream for this address deletes this one's row: it stops at its
    # next renewal (about every second)
    streams = client.app.state.analysis_streams  # type: ignore[attr-defined]
    with client.websocket_connect("/ws/analysis", headers={"x-test-address": "10.0.0.2"}) as ws:
        ws.send_json({"type": "analyse", "id": 1, "moves": OPENING})
        until(ws, lambda m: m["type"] == "update")
        streams.store.start("elsewhere", "10.0.0.2", None, None)
        t0 = time.monotonic()
        done = until(ws, lambda m: m["type"] == "done")
        assert (
            done["reason"] == "replaced" and time.monotonic() - t0 < (analysis_stream.RENEW + 3.0) * load.measure()
        ), done
    assert streams.store.count() == 1  # the other process's row stays
    streams.store.end("elsewhere")


def test_a_client_is_its_address_or_its_account(db: str) -> None:
    storage = Storage(resolve_db_url(db))
    try:
        runs = analysis_stream.RunStore(storage)
        runs.start("one", "10.0.4.1", 7, None)
        runs.start("other", "10.0.4.9", None, None)  # someone else: both run
        assert runs.renew("one") and runs.renew("other") and runs.count() == 2
        runs.start("two", "10.0.4.2", 7, None)  # the same account from another address replaces "one"
        assert not runs.renew("one") and runs.renew("two")
        runs.start("three", "10.0.4.2", None, None)  # the same address, logged out, replaces "two"
        assert not runs.renew("two") and runs.renew("three") and runs.renew("other") and runs.count() == 2
    finally:
        storage.close()


def test_the_ai_quota_of_the_client_applies(client: TestClient) -> None:
    storage = client.app.state.service.storage  # type: ignore[attr-defined]
    with storage.engine.begin() as conn:  # two AI moves of this client being thought about elsewhere: its quota
        for gid in ("g1", "g2"):
            conn.exec_driver_sql(
                "INSERT INTO ai_jobs (game_id, version, level, moves, created_at, claimed_by, lease_until, address) "
                f"VALUES ('{gid}', 1, 'random', '', {time.time()}, 'elsewhere', {time.time() + 3600}, '10.0.0.3')"
            )
    with client.websocket_connect("/ws/analysis", headers={"x-test-address": "10.0.0.3"}) as ws:
        ws.send_json({"type": "analyse", "id": 1, "moves": OPENING})
        err = ws.receive_json()
        assert err["type"] == "error" and err["code"] == "ai_quota" and err["id"] == 1, err
    assert client.app.state.analysis_streams.started == 0  # type: ignore[attr-defined]


def test_streams_beyond_the_pool_share_wait_their_turn(client: TestClient) -> None:
    # the test pool has 2 slots: analyses (with reviews) take at most 1, the other stays for AI moves
    runner = client.app.state.transport.runner  # type: ignore[attr-defined]
    assert runner.slots == 2
    with (
        client.websocket_connect("/ws/analysis", headers={"x-test-address": "10.0.1.1"}) as a,
        client.websocket_connect("/ws/analysis", headers={"x-test-address": "10.0.1.2"}) as b,
    ):
        a.send_json({"type": "analyse", "id": "a", "moves": OPENING})
        until(a, lambda m: m["type"] == "update")
        b.send_json({"type": "analyse", "id": "b", "moves": OPENING})
        queued = b.receive_json()
        assert queued == {"type": "queued", "id": "b", "ahead": 0}, queued
        assert runner.other_busy == 1 and runner.busy == 1
        a.send_json({"type": "stop"})
        until(a, lambda m: m["type"] == "done")
        upd = until(b, lambda m: m["type"] == "update")  # b's turn once a's slot is free
        assert upd["id"] == "b"
        b.send_json({"type": "stop"})
        until(b, lambda m: m["type"] == "done")


@pytest.mark.timing
def test_an_ai_move_takes_the_slot_back_and_the_analysis_resumes_after_it(client: TestClient, load: Load) -> None:
    # one slot: the analysis holds it; a game's AI move arrives and is played at once, the analysis
    # waits ("queued") and then starts again
    runner = client.app.state.transport.runner  # type: ignore[attr-defined]
    runner.slots = 1
    runner.cheap_slots = 0  # no slot of the cheap lane (issue 33), where a random move would not need the analysis's
    with client.websocket_connect("/ws/analysis", headers={"x-test-address": "10.0.3.1"}) as ws:
        ws.send_json({"type": "analyse", "id": 1, "moves": OPENING})
        until(ws, lambda m: m["type"] == "update")
        t0 = time.monotonic()
        r = client.post("/api/games", json={"mode": "ai", "level": "random", "side": "north"})
        assert r.status_code == 201, r.text
        gid = r.json()["id"]
        for _ in range(400):
            if client.get(f"/api/games/{gid}").json()["ply"] >= 1:
                break
            time.sleep(0.025)
        waited = time.monotonic() - t0
        assert client.get(f"/api/games/{gid}").json()["ply"] >= 1, "the AI's move waited for the analysis"
        assert waited < (STOP_BOUND + 3.0) * load.measure(), (waited, load.factor)
        seen: list[dict[str, Any]] = []
        until(ws, lambda m: m["type"] == "queued", seen)
        resumed = until(ws, lambda m: m["type"] == "update", seen)
        assert resumed["id"] == 1 and runner.preempted >= 1
        ws.send_json({"type": "stop"})
        assert until(ws, lambda m: m["type"] == "done")["reason"] == "stopped"


class FakeQueue:
    """A storage whose AI queue the test fills: ``claim_job`` hands out its jobs."""

    def __init__(self) -> None:
        self.jobs: list[AIJob] = []

    def claim_job(
        self, worker: str, lease: float, idle_clients_only: bool = False, lanes: tuple[int, ...] | None = None
    ) -> AIJob | None:
        if lanes is not None:  # the cheap lane's own slot (issue 33): these jobs are of no lane
            return None
        return self.jobs.pop(0) if self.jobs else None

    def runner_beat(self, name: str, slots: int, cheap_slots: int) -> None:
        pass

    def runner_gone(self, name: str) -> None:
        pass

    def claimable_jobs(self, idle_clients_only: bool = False) -> int:
        return len(self.jobs)

    def renew_job(self, job: AIJob, worker: str, lease: float) -> bool:
        return True

    def release_job(self, job: AIJob, worker: str) -> None:
        pass


def test_ai_moves_come_first_and_take_the_slot_back_from_an_analysis() -> None:
    async def main() -> None:
        store = FakeQueue()
        played: list[str] = []
        runner = AIRunner(
            store,  # type: ignore[arg-type]
            lambda job, move: played.append(job.game_id),
            slots=1,
            pool=ThreadPoolExecutor(max_workers=1),
            poll=0.02,
        )
        task = asyncio.get_running_loop().create_task(runner.run())
        preempted = asyncio.Event()
        await asyncio.wait_for(runner.acquire(preempted.set), 5)  # a free pool: the analysis gets the slot
        assert runner.busy == 1 and runner.interactive
        # an AI move arrives: the analysis is told to give the slot back, and the move is played
        store.jobs.append(AIJob("g1", 1, "random", None, []))
        runner.wake()
        await asyncio.wait_for(preempted.wait(), 5)
        for _ in range(200):
            if played:
                break
            await asyncio.sleep(0.02)
        assert played == ["g1"] and runner.preempted == 1
        runner.release(preempted.set)  # the analysis stops (a no-op: its slot was taken back)
        # while AI moves wait, an analysis is not given a slot
        store.jobs.extend(AIJob(f"g{i}", 1, "random", None, []) for i in range(2, 5))
        again = asyncio.get_running_loop().create_task(runner.acquire(lambda: None))
        for _ in range(500):
            if len(played) == 4:
                break
            assert not again.done(), "an analysis got the slot while AI moves waited"
            await asyncio.sleep(0.01)
        await asyncio.wait_for(again, 5)
        assert played == ["g1", "g2", "g3", "g4"] and runner.busy == 1
        task.cancel()
        await runner.close()

    asyncio.run(main())


def test_the_ai_claims_count_a_clients_analysis_as_work_in_progress(db: str) -> None:
    # fair share: A's job is older, but A is analysing, so B's job is claimed first
    storage = Storage(resolve_db_url(db))
    try:
        with storage.engine.begin() as conn:
            for gid, address, created in (("ga", "10.0.2.1", 1.0), ("gb", "10.0.2.2", 2.0)):
                conn.exec_driver_sql(
                    "INSERT INTO ai_jobs (game_id, version, level, moves, created_at, address) "
                    f"VALUES ('{gid}', 1, 'random', '', {created}, '{address}')"
                )
        runs = analysis_stream.RunStore(storage)
        runs.start("run-a", "10.0.2.1", None, None)
        job = storage.claim_job("w", 6.0)
        assert job is not None and job.game_id == "gb"
        runs.end("run-a")
        job = storage.claim_job("w", 6.0)
        assert job is not None and job.game_id == "ga"
    finally:
        storage.close()


def test_streams_run_in_the_ai_processes_and_one_client_has_one_across_servers(
    pg: str,
    servers: Callable[..., Server],
    load: Load,
) -> None:
    # two real servers on one PostgreSQL, each with its own AI process (the search runs there and
    # reports through a manager's queue); the same client address on both: one stream at a time
    one = servers(pg, "--ai-processes", "1")
    two = servers(pg, "--ai-processes", "1")
    a = ws_from(one, "/ws/analysis", "127.0.0.21")
    b = ws_from(two, "/ws/analysis", "127.0.0.21")

    def recv(ws: Any) -> dict[str, Any]:
        msg: dict[str, Any] = json.loads(ws.recv(timeout=60))
        return msg

    def until_ws(ws: Any, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        for _ in range(500):
            msg = recv(ws)
            if pred(msg):
                return msg
        raise AssertionError("never came")

    try:
        a.send(json.dumps({"type": "analyse", "id": 1, "moves": OPENING}))
        first = until_ws(a, lambda m: m["type"] == "update")
        second = until_ws(a, lambda m: m["type"] == "update")
        check_update(first, OPENING)
        assert second["sims"] > first["sims"]
        b.send(json.dumps({"type": "analyse", "id": 2, "moves": OPENING}))
        until_ws(b, lambda m: m["type"] == "update")
        done = until_ws(a, lambda m: m["type"] == "done")  # the other server's stream replaced it
        assert done["reason"] == "replaced", done
        b.send(json.dumps({"type": "stop"}))
        done = until_ws(b, lambda m: m["type"] == "done")
        assert done["reason"] == "stopped" and done["stopped_in"] < STOP_BOUND * load.measure(), (done, load.factor)
    finally:
        a.close()
        b.close()
