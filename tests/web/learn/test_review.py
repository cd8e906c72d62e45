"""Game review over HTTP and WebSocket, on SQLite and PostgreSQL: a finished game's review is queued
once (whoever asks, however often, from however many processes), run by the AI workers, stored,
and delivered to the players and spectators; hostile requests get clear coded errors.

Budgets are tiny (a few dozen simulations per position): these check the plumbing, not the search."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.ai.analysis import classify  # noqa: E402
from jericho_game.web.airunner.aiqueue import AIRunner  # noqa: E402
from jericho_game.web.learn import review as review_module  # noqa: E402
from jericho_game.web.learn.review import ReviewStore  # noqa: E402
from jericho_game.web.server import Limits, create_app  # noqa: E402
from jericho_game.web.storage.database import AIJob, Storage, resolve_db_url  # noqa: E402
from tests.web import test_multiprocess  # noqa: E402
from tests.web.processes import finish  # noqa: E402
from tests.web.test_server import WS, connect, create, seat  # noqa: E402

# real server processes on a throwaway PostgreSQL cluster: the same fixtures as the multi-process tests
pg = test_multiprocess.pg
servers = test_multiprocess.servers

OPENING = ["5R@d2", "1G@d3", "4Y@c2", "2B@c3", "3W@e2", "5G@e3"]
FAST = Limits(rate=1000.0, burst=1000)


def finished_online_game(c: TestClient, moves: list[str] = OPENING) -> dict[str, Any]:
    """An online game: ``moves`` played by the two seats, then North resigns."""
    g = create(c, mode="online", side="south")
    north = c.post(f"/api/games/{g['id']}/join", json={"invite": g["invite"]}).json()
    with connect(c, g["id"]) as a_raw, connect(c, g["id"]) as b_raw:
        a = seat(a_raw, g["token"], "south")
        b = seat(b_raw, north["token"], "north")
        for i, mv in enumerate(moves):
            ws = a if i % 2 == 0 else b
            ws.send(type="move", move=mv, ply=i)
            ws.until("ack")
        b.send(type="resign")
        b.until("state", lambda m: m["game"]["status"] == "over")
    return {"id": g["id"], "south": g["token"], "north": north["token"], "moves": moves}


def reviews_of(db: str, game_id: str) -> Any:
    storage = Storage(resolve_db_url(db))
    try:
        return ReviewStore(storage).load(game_id)
    finally:
        storage.close()


def _await_review(ws: WS, seen: list[dict[str, Any]]) -> dict[str, Any]:
    def done(m: dict[str, Any]) -> bool:
        seen.append(m["review"])
        return bool(m["review"]["status"] == "done")

    return ws.until("review", done)["review"]


def test_a_review_is_queued_once_run_stored_and_delivered_to_players_and_spectators(db: str) -> None:
    with TestClient(create_app(db, ai_processes=0, review_sims=40, limits=FAST)) as c:
        g = finished_online_game(c)
        url = f"/api/games/{g['id']}/review"
        with connect(c, g["id"]) as north_raw, connect(c, g["id"]) as spec_raw:
            north = seat(north_raw, g["north"], "north")
            spectator = seat(spec_raw, None, "spectator")
            before = c.get(url).json()
            assert before["status"] == "none" and before["thresholds"]["blunder"] == {"loss": 0.3, "sign": "??"}
            # a spectator may ask: the review is shared, and it is queued once whoever asks
            first = c.post(url)
            assert first.status_code == 202, first.text
            assert first.json()["queued"] is True and first.json()["review"]["status"] in ("queued", "running")
            again = c.post(url)
            assert again.status_code == 409 and again.json()["error"] == "review_exists"
            assert "already asked for" in again.json()["message"] and again.json()["review"]["total"] == 7
            seen_s: list[dict[str, Any]] = []
            seen_n: list[dict[str, Any]] = []
            done = _await_review(spectator, seen_s)
            assert _await_review(north, seen_n) == done
        assert [r["done"] for r in seen_s] == sorted(r["done"] for r in seen_s)  # progress never goes back
        assert all(r["status"] in ("queued", "running", "done") for r in seen_s)
        total = len(g["moves"]) + 1
        assert done["done"] == done["total"] == total and done["budget"] == {"sims": 40, "seconds": None}
        assert [p["ply"] for p in done["positions"]] == list(range(total))
        assert all(0.0 <= p["south"] <= 1.0 and p["best"] for p in done["positions"])
        assert [p["turn"] for p in done["positions"]] == ["south", "north"] * 3 + ["south"]
        judged = done["moves"]
        assert [m["move"] for m in judged] == g["moves"] and [m["side"] for m in judged] == ["south", "north"] * 3
        for m, p0, p1 in zip(judged, done["positions"], done["positions"][1:], strict=False):
            mover = (lambda p: p["south"]) if m["side"] == "south" else (lambda p: 1 - p["south"])  # noqa: E731
            assert m["before"] == pytest.approx(mover(p0)) and m["after"] == pytest.approx(mover(p1))
            # the yardstick: the mover's chance after the preferred move (stored with the position)
            assert p0["best_after"] is not None
            ref = mover({"south": p0["best_after"]})
            expected = 0.0 if m["move"] == p0["best"] else max(0.0, ref - mover(p1))
            assert m["loss"] == pytest.approx(expected, abs=1e-4) and m["best"] == p0["best"]
            assert m["mark"] == ("blunder" if m["decided"] else classify(m["loss"]))
        # stored: another client (or process) reads the same review from the database
        assert c.get(url).json() == done
        rec = reviews_of(db, g["id"])
        assert rec.status == "done" and len(rec.positions) == total and rec.moves == g["moves"]
        assert [p.best_after for p in rec.positions] == [p["best_after"] for p in done["positions"]]
        assert c.post(url).status_code == 409  # done is done: not queued again
        # the record annotated with the review: every move commented, and it still reads back
        annotated = c.get(url + "/record")
        assert annotated.status_code == 200 and "-review.jgn" in annotated.headers["content-disposition"]
        from jericho_game.record import read_record

        parsed = read_record(annotated.text)
        assert [str(m) for m in parsed.moves] == g["moves"] and parsed.result == "1-0"
        assert annotated.text.count("{South ") == len(g["moves"]) and "[Annotator " in annotated.text
        for m in judged:
            if m["mark"]:
                assert f"{m['mark']}: {m['side'].capitalize()}" in annotated.text and m["best"] in annotated.text


def test_many_requests_at_once_queue_one_review_the_database_decides(db: str) -> None:
    url = resolve_db_url(db)
    setup = Storage(url)
    ReviewStore(setup)  # the tables exist before the racers start
    stores = [ReviewStore(Storage(url)) for _ in range(6)]
    go = threading.Barrier(len(stores))
    results: list[Any] = [None] * len(stores)

    def one(i: int) -> None:
        go.wait()
        results[i] = stores[i].insert("racegame", None, OPENING, 10, 1.0, 16)[0]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    try:
        assert sorted(results) == [False] * 5 + [True]
        assert stores[0].unfinished() == 1
    finally:
        for s in stores:
            s.storage.close()
        setup.close()


def test_hostile_review_requests_get_clear_coded_errors_and_change_nothing(db: str) -> None:
    # no AI runs here: reviews stay queued, so the queue's bound can be met
    with TestClient(create_app(db, ai_processes=-1, limits=Limits(review_queue=1, rate=1000.0, burst=1000))) as c:
        for bad in ("nosuchgame", "a$b", "x" * 40):
            for method in (c.get, c.post):
                r = method(f"/api/games/{bad}/review")
                assert r.status_code == 404 and r.json()["error"] == "unknown_game", (bad, r.text)
        playing = create(c, mode="hotseat")
        r = c.post(f"/api/games/{playing['id']}/review")
        assert r.status_code == 409 and r.json()["error"] == "not_over"
        assert "still being played" in r.json()["message"]
        waiting = create(c, mode="online")
        r = c.post(f"/api/games/{waiting['id']}/review")
        assert r.status_code == 409 and r.json()["error"] == "not_over" and "joined" in r.json()["message"]
        assert c.put(f"/api/games/{playing['id']}/review").json()["error"] == "bad_method"
        a = finished_online_game(c)
        b = finished_online_game(c, OPENING[:2])
        state_before = c.get(f"/api/games/{a['id']}").json()
        assert c.post(f"/api/games/{a['id']}/review", json={"sims": 10**9}).status_code == 202  # a body is ignored
        view = c.get(f"/api/games/{a['id']}/review").json()
        assert view["status"] == "queued" and view["ahead"] == 0 and view["done"] == 0
        assert view["budget"]["sims"] == review_module.DEFAULT_SIMS  # the server decides the budget
        for _ in range(3):
            r = c.post(f"/api/games/{a['id']}/review")
            assert r.status_code == 409 and r.json()["error"] == "review_exists" and "queued" in r.json()["message"]
        r = c.post(f"/api/games/{b['id']}/review")  # the queue holds one review
        assert r.status_code == 503 and r.json()["error"] == "busy" and "try again" in r.json()["message"]
        assert c.get(f"/api/games/{b['id']}/review").json()["status"] == "none"
        for gid in (a["id"], b["id"]):  # no annotated record before the review is done
            r = c.get(f"/api/games/{gid}/review/record")
            assert r.status_code == 409 and r.json()["error"] == "review_not_done"
        assert c.get("/api/games/nosuchgame/review/record").json()["error"] == "unknown_game"
        assert c.get(f"/api/games/{a['id']}").json() == state_before  # a review never changes the game
    assert reviews_of(db, b["id"]) is None and reviews_of(db, a["id"]).status == "queued"


def test_a_review_that_keeps_failing_is_marked_failed_and_can_be_asked_again(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = review_module.evaluate_ply
    calls = {"n": 0}

    def broken(*args: Any) -> Any:
        calls["n"] += 1
        raise RuntimeError("the search fell over")

    monkeypatch.setattr(review_module, "evaluate_ply", broken)
    with TestClient(create_app(db, ai_processes=0, review_sims=20, limits=FAST)) as c:
        g = finished_online_game(c, OPENING[:2])
        url = f"/api/games/{g['id']}/review"
        with connect(c, g["id"]) as raw:
            ws = seat(raw, None, "spectator")
            assert c.post(url).status_code == 202
            failed = ws.until("review", lambda m: m["review"]["status"] == "failed")["review"]
            assert "the search fell over" in failed["error"] and calls["n"] == review_module.MAX_ATTEMPTS
            monkeypatch.setattr(review_module, "evaluate_ply", real)
            assert c.post(url).status_code == 202  # a failed review may be asked for again
            done = ws.until("review", lambda m: m["review"]["status"] == "done")["review"]
        assert done["done"] == 3 and done["error"] is None


# -- the AI runner: AI moves first, reviews leave them a slot -------------------------------------


class _FakeKind:
    """Review-like jobs that take a little while; notes how many run at once and when each was claimed."""

    name = "fake"

    def __init__(self, jobs: int, claims: list[str]) -> None:
        self.left = jobs
        self.running = 0
        self.most = 0
        self.claims = claims

    def claim(self, worker: str, lease: float) -> Any:
        if self.left == 0:
            return None
        self.left -= 1
        self.claims.append("review")
        return self.left

    async def run(self, job: Any, pool: Any, worker: str) -> None:
        self.running += 1
        self.most = max(self.most, self.running)
        await asyncio.sleep(0.03)
        self.running -= 1


class _FakeStorage:
    """An AI queue holding ``moves`` AI moves (of a fresh game, for the ``random`` player)."""

    def __init__(self, moves: int, claims: list[str]) -> None:
        self.moves = moves
        self.claims = claims

    def claim_job(
        self, worker: str, lease: float, idle_clients_only: bool = False, lanes: tuple[int, ...] | None = None
    ) -> Any:
        if self.moves == 0 or lanes is not None:  # the cheap lane's own slot (issue 33) takes none of these
            return None
        self.moves -= 1
        self.claims.append("move")
        return AIJob(f"g{self.moves}", 0, "random", None, [])

    def runner_beat(self, name: str, slots: int, cheap_slots: int) -> None:
        pass

    def runner_gone(self, name: str) -> None:
        pass


def _run_runner(slots: int, moves: int, reviews: int) -> tuple[list[str], list[str], _FakeKind]:
    from concurrent.futures import ThreadPoolExecutor

    claims: list[str] = []
    played: list[str] = []
    kind = _FakeKind(reviews, claims)

    async def scenario() -> None:
        runner = AIRunner(
            _FakeStorage(moves, claims),
            lambda job, move: played.append(str(move)),
            slots=slots,
            pool=ThreadPoolExecutor(2),
            kinds=[kind],
            poll=0.01,
        )
        task = asyncio.get_running_loop().create_task(runner.run())
        for _ in range(300):
            await asyncio.sleep(0.01)
            if kind.left == 0 and kind.running == 0 and len(played) == moves:
                break
        task.cancel()
        await runner.close()

    asyncio.run(scenario())
    return claims, played, kind


def test_the_ai_runner_claims_ai_moves_first_and_reviews_leave_them_a_slot() -> None:
    claims, played, kind = _run_runner(slots=3, moves=2, reviews=6)
    assert claims[:2] == ["move", "move"] and len(played) == 2  # waiting AI moves go first
    assert kind.left == 0 and kind.most == 2  # three slots: reviews take two at most
    claims, played, kind = _run_runner(slots=1, moves=0, reviews=3)
    assert kind.left == 0 and kind.most == 1  # one slot: reviews still run, one at a time


# -- several processes on PostgreSQL --------------------------------------------------------------------


def test_two_servers_one_review_run_by_jericho_worker_seen_on_both(pg: str, servers: Callable[..., Any]) -> None:
    import httpx

    from tests.web.test_multiprocess import SRC, Client, _together

    one = servers(pg, "--ai-processes", "-1", "--review-sims", "30")  # no AI in the web processes
    two = servers(pg, "--ai-processes", "-1", "--review-sims", "30")
    g = one.post("/api/games", {"mode": "online", "side": "south"}).json()
    north = two.post(f"/api/games/{g['id']}/join", {"invite": g["invite"]}).json()
    a = Client(one.ws(g["id"]), g["token"])
    b = Client(two.ws(g["id"]), north["token"])
    for i, mv in enumerate(OPENING[:4]):
        (a if i % 2 == 0 else b).send(type="move", move=mv, ply=i)
        assert (a if i % 2 == 0 else b).answer()["type"] == "ack"
    a.send(type="resign")
    a.wait(lambda st: st["status"] == "over")
    spectator = Client(two.ws(g["id"]))
    path = f"/api/games/{g['id']}/review"
    answers = _together([lambda s=s: httpx.post(s.url + path, timeout=10) for s in (one, two, one, two)])
    assert sorted(r.status_code for r in answers) == [202, 409, 409, 409]  # queued once, across processes
    time.sleep(0.5)
    assert one.get(path)["status"] == "queued"  # nobody thinks yet: no worker, no AI in the web processes
    env = dict(os.environ, PYTHONPATH=SRC)
    cmd = [sys.executable, "-m", "jericho_game", "worker", "--db", pg, "--processes", "1"]
    worker = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert worker.stdout is not None and "worker" in worker.stdout.readline()
        got: dict[str, Any] = {}
        end = time.monotonic() + 30
        while got.get("status") != "done":
            assert time.monotonic() < end, f"no finished review reached the spectator on process 2: {got}"
            msg = spectator.pump(end - time.monotonic())
            if msg is not None and msg["type"] == "review":
                got = msg["review"]
                assert got["done"] <= got["total"] == 5
    finally:
        finish(worker, timeout=15)
    assert worker.returncode == 0
    assert got["done"] == 5 and len(got["moves"]) == 4 and one.get(path) == got == two.get(path)


def test_a_dead_workers_review_step_is_taken_over_and_its_late_result_is_refused(db: str) -> None:
    from jericho_game.ai.analysis import evaluate_ply

    storage = Storage(resolve_db_url(db))
    store = ReviewStore(storage)
    try:
        assert store.insert("takeover", None, OPENING[:2], 10, 1.0, 16)[0]
        # worker A claims position 0, then dies (no renewal).  The lease is long enough that a loaded
        # machine cannot let it run out before B's first try (it did with 0.05 s, under load 37).
        lease = 3.0
        a = store.claim("worker-a", lease)
        claimed = time.monotonic()
        assert a is not None and a.ply == 0 and set(a.changed) == {"takeover"}
        assert store.claim("worker-b", 5.0) is None  # held: nobody else takes it meanwhile
        time.sleep(max(0.0, lease + 0.1 - (time.monotonic() - claimed)))
        b = store.claim("worker-b", 5.0)  # the lease ran out: B takes the same position over
        assert b is not None and b.ply == 0 and b.changed == ()  # already running: nothing new to say
        ev = evaluate_ply(None, b.moves, 0, 10, 1.0)
        assert store.store(a, "worker-a", ev) is None  # A's late answer is refused
        assert store.renew(a, "worker-a", 5.0) is False
        assert store.store(b, "worker-b", ev) == ["takeover"]
        rec = store.load("takeover")
        assert rec is not None and rec.next_ply == 1 and [p.ply for p in rec.positions] == [0]
        assert rec.status == "running"
    finally:
        storage.close()


# -- issue 21: a review that explains a slow slide ------------------------------------------------------


def slide_game() -> list[str]:
    """48 legal plies (24 numbered moves) of a seeded random game that is not over yet."""
    import random

    from jericho_game import Game

    rng, game = random.Random(24), Game()
    while len(game.history) < 48:
        game.play(rng.choice(game.legal_moves()))
    assert not game.is_over()
    return [str(m) for m in game.history]


def slide_evals(moves: list[str]) -> dict[int, Any]:
    """The constructed slow slide of tests/ai/test_analysis.py on a real game: South's chance goes from 40 %
    to 0 % by small steps (8 % to a decided 3 % at 21. ...), each position's preferred move is a legal
    move other than South's (North plays the preferred one), and each line is legal."""
    from jericho_game.ai.analysis import PositionEval, replay
    from tests.ai.test_analysis import slow_slide

    out = {}
    for ev in slow_slide()[1]:
        if ev.ply == len(moves):
            out[ev.ply] = ev
            continue
        game = replay(None, moves[: ev.ply])
        played = moves[ev.ply]
        best = played if ev.turn == "north" else next(str(m) for m in game.legal_moves() if str(m) != played)
        after = game.copy()
        after.play(best)
        line = (best,) if after.is_over() else (best, str(after.legal_moves()[0]))
        out[ev.ply] = PositionEval(ev.ply, ev.south, game.turn.value, best, False, 100, line)
    return out


def test_a_slow_slide_is_explained_accuracy_turning_points_lines_and_one_numbering(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    moves = slide_game()
    table = slide_evals(moves)
    monkeypatch.setattr(review_module, "evaluate_ply", lambda start, mv, ply, sims, seconds: table[ply])
    # the constructed figures are not the real game's: the solver is said to know nothing of it
    nothing = review_module.SolvedEnd(len(moves) + 1, (), 1, 0)
    monkeypatch.setattr(review_module, "solve_back", lambda start, mv: nothing)
    with TestClient(create_app(db, ai_processes=0, review_sims=20, limits=FAST)) as c:
        g = finished_online_game(c, moves)
        url = f"/api/games/{g['id']}/review"
        with connect(c, g["id"]) as raw:
            ws = seat(raw, None, "spectator")
            assert c.post(url).status_code == 202
            done = ws.until("review", lambda m: m["review"]["status"] == "done")["review"]
        judged = done["moves"]
        # one numbering: a numbered move is a South ply and the North ply after it
        assert [m["label"] for m in judged[:4]] == ["1.", "1...", "2.", "2..."]
        assert judged[40]["label"] == "21." and judged[-1]["label"] == "24..."
        # the per-move thresholds never trip on the slide; the move into a decided game is a blunder
        assert [(m["label"], m["mark"], m["decided"]) for m in judged if m["mark"]] == [("21.", "blunder", True)]
        assert done["decided"] == {"chance": 0.05, "least_loss": 0.05}
        # the game was probably decided by move 21 (South's chance 8 % to 3 % and lower to the end, the
        # solver knowing nothing): named, marked, and the moves after it are not counted in the accuracy
        assert done["decisive"] == {
            "ply": 41, "result": "north", "exact": False, "label": "21.", "move": moves[40], "side": "south",
            "before": 0.08, "after": 0.03, "solved_from": None,
        }  # fmt: skip
        assert [m["ply"] for m in judged if m["decisive"]] == [41]
        assert done["accuracy"]["north"] == 100.0 and 60.0 < done["accuracy"]["south"] < 95.0
        everything = review_module.accuracy(
            review_module.judge(moves, list(table.values())), [table[i] for i in range(len(moves) + 1)]
        )
        assert done["accuracy"]["south"] < everything["south"]  # the moves after it no longer pad it
        assert done["slide"]["south"] == pytest.approx(0.40) and done["slide"]["north"] == 0.0
        south = done["turning"]["south"]
        assert [(t["label"], t["move"]) for t in south] == [("12.", moves[22]), ("5.", moves[8]), ("21.", moves[40])]
        assert south[0]["share"] == pytest.approx(0.15) and done["turning"]["north"] == []
        # each judged move carries the AI's line in the position before it
        assert judged[40]["line"] == list(table[40].line) and judged[40]["best"] == table[40].line[0]
        # the line, as board frames: the position, then after each move of the line
        line = c.get(f"{url}/line/40").json()
        assert line["line"] == list(table[40].line) and line["labels"] == ["21.", "21..."]
        assert [f["ply"] for f in line["frames"]] == [40, 41, 42]
        assert line["frames"][1]["move"] == table[40].line[0] and line["frames"][0]["move"] is None
        replayed = c.get(f"/api/games/{g['id']}/replay").json()["frames"][40]
        assert {k: line["frames"][0][k] for k in ("towers", "leaders", "score", "turn")} == {
            k: replayed[k] for k in ("towers", "leaders", "score", "turn")
        }
        for bad, status, code in (("48", 404, "no_line"), ("999", 404, "no_line"), ("x1", 400, "bad_request")):
            r = c.get(f"{url}/line/{bad}")
            assert (r.status_code, r.json()["error"]) == (status, code), r.text
        assert c.get("/api/games/nosuchgame/review/line/1").status_code == 404
        text = c.get(url + "/record").text
        assert "(decided), the AI preferred" in text and " ".join(table[40].line) in text
        assert "probably the deciding move (the search: South 8% to 3%): the game is won for North" in text


#: A game of two ``hard`` players (seeds 1 and 2, tests/ai/test_analysis.py's ``_hard_game(1)``), played out
#: (52 plies, South won): North's 22... 5G@c3 (ply 44) threw the draw away, as the solver knows it.
HARD_GAME = (
    "1Y@a1 3R@g4 4Y@b2 5B@g4 5W@b2 1R@b2 1W@g4 4G@g4 5G@a1 4R@g2 2W@b4 4Y@b4 1G@b4 2W@a1 4B@a1 5R@b4 4W@a4 "
    "3B@e1 4G@f1 1W@b3 4R@b1 3G@a4 3G@g3 2R@g3 2G@b1 4W@g3 1B@g3 3Y@f2 2R@e2 1Y@b1 3W@b1 2G@g2 5Y@g2 1B@g2 "
    "5R@f2 2Y@c3 3Y@g1 1G@f2 5B@g1 2B@d2 3R@f1 5Y@a4 2B@a4 5G@c3 1R@e4 4B@e3 3B@e2 3W@e3 2Y@f1 5W@c1 pass pass"
).split()


def played_out_game(c: TestClient, moves: list[str]) -> dict[str, Any]:
    """An online game whose ``moves``, played by the two seats, end it (its last forced passes are the
    server's)."""
    g = create(c, mode="online", side="south")
    north = c.post(f"/api/games/{g['id']}/join", json={"invite": g["invite"]}).json()
    played = list(moves)
    while played and played[-1] == "pass":
        played.pop()
    with connect(c, g["id"]) as a_raw, connect(c, g["id"]) as b_raw:
        a = seat(a_raw, g["token"], "south")
        b = seat(b_raw, north["token"], "north")
        for i, mv in enumerate(played):
            ws = a if i % 2 == 0 else b
            ws.send(type="move", move=mv, ply=i)
            ws.until("ack")
        a.until("state", lambda m: m["game"]["status"] == "over")
    return {"id": g["id"], "moves": moves}


def test_the_deciding_move_is_stored_exact_where_the_solver_knows_it_and_older_reviews_still_read(db: str) -> None:
    """Issue 53: the review walks the game back from its end with the endgame solver (with its last
    position), stores the walk (versioned), and names the last move that changed the game's value:
    exact, by its mover, never the winner.  A review stored before the walk (or with a version this
    one does not read) still reads: its deciding move from its own exact positions."""
    from sqlalchemy import text

    from jericho_game.ai.analysis import solve_back

    with TestClient(create_app(db, ai_processes=0, review_sims=20, limits=FAST)) as c:
        g = played_out_game(c, HARD_GAME)
        url = f"/api/games/{g['id']}/review"
        with connect(c, g["id"]) as raw:
            ws = seat(raw, None, "spectator")
            assert c.post(url).status_code == 202
            done = ws.until("review", lambda m: m["review"]["status"] == "done")["review"]
        assert done["decisive"] == {
            "ply": 44, "result": "south", "exact": True, "label": "22...", "move": "5G@c3", "side": "north",
            "before": 0.5, "after": 0.0, "solved_from": 42,
        }  # fmt: skip
        assert [m["ply"] for m in done["moves"] if m["decisive"]] == [44]
        rec = reviews_of(db, g["id"])
        assert rec.solved == solve_back(None, HARD_GAME)  # the walk, stored with the last position
        text_ = c.get(url + "/record").text
        assert "the deciding move (exact, the endgame solver): the game is won for South from here" in text_
        # a review stored before the walk: the column is NULL (or holds a version this one cannot read)
        storage = Storage(resolve_db_url(db))
        try:
            for old in (None, '{"v": 99}', "not json"):
                with storage.engine.begin() as conn:
                    conn.execute(
                        text("UPDATE reviews SET solved_end = :s WHERE game_id = :id"), {"s": old, "id": g["id"]}
                    )
                view = c.get(url).json()
                d = view["decisive"]
                assert view["status"] == "done" and d is not None and d["result"] == "south", old
                assert d["side"] == "north" and 1 <= d["ply"] <= 44, old  # never the winner's move
                assert reviews_of(db, g["id"]).solved is None
        finally:
            storage.close()


def test_a_review_table_made_before_lines_existed_gets_its_line_column(tmp_path: Any) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:  # the table as the first version of the review made it
        conn.execute(
            "CREATE TABLE review_positions (game_id VARCHAR(32) NOT NULL, ply INTEGER NOT NULL, south FLOAT NOT NULL,"
            " turn VARCHAR(8) NOT NULL, best VARCHAR(16), exact INTEGER NOT NULL, sims INTEGER NOT NULL,"
            " PRIMARY KEY (game_id, ply))"
        )
        conn.execute("INSERT INTO review_positions VALUES ('g1', 0, 0.5, 'south', '5R@d2', 0, 10)")
    storage = Storage(resolve_db_url(str(path)))
    try:
        ReviewStore(storage)
        ReviewStore(storage)  # a second process: nothing left to add
    finally:
        storage.close()
    with sqlite3.connect(path) as conn:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(review_positions)")]
        assert {"line", "value", "plies", "best_after"} <= set(columns)
        assert conn.execute("SELECT best, line FROM review_positions").fetchall() == [("5R@d2", None)]
