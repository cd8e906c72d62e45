"""The web server over HTTP and WebSocket: every mode, the token rules, restart-and-resume,
clocks, and every kind of hostile input (which must get a clear error and change nothing)."""

from __future__ import annotations

import gc
import json
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():  # starlette's note about httpx2 is not ours to act on
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from jericho_game import Game  # noqa: E402
from jericho_game.ai.base import register, unregister  # noqa: E402
from jericho_game.web.server import Limits, create_app  # noqa: E402
from jericho_game.web.storage.database import Storage, resolve_db_url  # noqa: E402
from tests.helpers import reserve_port  # noqa: E402
from tests.web.processes import finish  # noqa: E402


class SleepyPlayer:
    """An AI that thinks until the test releases it (to check the server answers meanwhile)."""

    release = threading.Event()

    def __init__(self, seed: int | None = None) -> None:
        self.name = "sleepy"

    def choose_move(self, game: Game, limit: Any = None) -> Any:
        SleepyPlayer.release.wait(timeout=30)
        return game.legal_moves()[0]


class BrokenPlayer:
    """An AI that fails: the server must still move for it (random legal move)."""

    def __init__(self, seed: int | None = None) -> None:
        self.name = "broken"

    def choose_move(self, game: Game, limit: Any = None) -> Any:
        raise RuntimeError("boom")


class GatedPlayer:
    """An AI that waits for the test's go, and notes if one instance is ever used by two threads."""

    go = threading.Event()
    entered = threading.Semaphore(0)
    overlaps = 0

    def __init__(self, seed: int | None = None) -> None:
        self.name = "gated"
        self.busy = False

    def choose_move(self, game: Game, limit: Any = None) -> Any:
        if self.busy:
            GatedPlayer.overlaps += 1
        self.busy = True
        GatedPlayer.entered.release()
        try:
            GatedPlayer.go.wait(timeout=30)
            return game.legal_moves()[0]
        finally:
            self.busy = False


#: The test AIs, registered for this module's tests only: registered at import, they showed in every
#: other test server's /api/levels in the process (the level filter's "Broken-test" on a French page).
TEST_PLAYERS = {"gated-test": "GatedPlayer", "sleepy-test": "SleepyPlayer", "broken-test": "BrokenPlayer"}


@pytest.fixture(autouse=True, scope="module")
def _test_players() -> Iterator[None]:
    for name, attribute in TEST_PLAYERS.items():
        register(name, __name__, attribute)
    yield
    for name in TEST_PLAYERS:
        unregister(name)


class WS:
    """A WebSocket test client that remembers the last state it saw."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.state: dict[str, Any] | None = None
        self.seen: list[str] = []
        self.checks = 0

    def send(self, **msg: Any) -> None:
        self.ws.send_text(json.dumps(msg))

    def recv(self) -> dict[str, Any]:
        text = self.ws.receive_text()
        self.seen.append(text)
        msg = json.loads(text)
        if msg["type"] == "state":
            self.state = msg["game"]
        return msg

    def until(self, kind: str, pred: Callable[[dict[str, Any]], bool] = lambda m: True) -> dict[str, Any]:
        for _ in range(500):
            msg = self.recv()
            if msg["type"] == "error" and kind != "error":
                raise AssertionError(f"unexpected error while waiting for {kind}: {msg}")
            if msg["type"] == kind and pred(msg):
                return msg
        raise AssertionError(f"no {kind} message arrived")

    def state_where(self, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The game's state once ``pred(state message)`` holds: the last state seen if it does, else
        the next such state.  Waiting for "the next state" after ``seat()`` hangs when the state
        ``seat()`` consumed already holds and nothing changes afterwards (a CI hang: a watcher's
        first state already counted it)."""
        if self.state is not None and pred({"type": "state", "game": self.state}):
            return self.state
        game: dict[str, Any] = self.until("state", pred)["game"]
        return game

    def state_at(self, ply: int) -> dict[str, Any]:
        """The game's state once it has ``ply`` moves or more: the last one seen if it has, else
        the next such state.  After an ``ack``: the server sends the mover's ack before the
        state, but on PostgreSQL the database's notice of the same commit may bring the state
        first, so waiting for "the next state" could wait for one that never comes (the move
        that ends a game: a CI hang)."""
        if self.state is not None and self.state["ply"] >= ply:
            return self.state
        game: dict[str, Any] = self.until("state", lambda m: m["game"]["ply"] >= ply)["game"]
        return game

    def error(self) -> dict[str, Any]:
        """The error answering the last message sent; fails (instead of hanging) if it was accepted.

        A ping follows the message: the server answers a connection's messages in order, so a
        pong before any error means the message was accepted."""
        self.checks += 1
        ref = f"error-check-{self.checks}"
        self.send(type="ping", ref=ref)
        for _ in range(500):
            msg = self.recv()
            if msg["type"] == "pong" and msg.get("ref") == ref:
                raise AssertionError("expected an error, but the message was accepted")
            if msg["type"] == "error":
                assert msg["message"], "errors must say what went wrong"
                return msg
        raise AssertionError("no error arrived")


@pytest.fixture()
def client(db: str) -> Iterator[TestClient]:
    # threads rather than processes for the AI: the test players below live in this process
    with TestClient(create_app(db, ai_processes=0)) as c:
        yield c


@contextmanager
def another(client: TestClient, address: str | None = None) -> Iterator[TestClient]:
    """Another visitor (cookies of its own) of the app ``client`` runs, on the same event loop.

    Entering one app in a second ``TestClient`` would run its lifespan again: its background tasks
    (AI runner, mail notifier) a second time, on another event loop, where a request would meet
    events bound to the first ("bound to a different event loop": a mail test's extra mail under
    load); and its shutdown disposes the storage's pool while the first's tasks still use it (a
    connection returned to the disposed pool, closed by the garbage collector: a ResourceWarning
    in whatever test ran next).  This client shares ``client``'s portal instead, so the app runs
    once.  ``address``: the visitor's IP address (another browser on another machine)."""
    other = TestClient(client.app, client=(address, 2000)) if address else TestClient(client.app)
    other.portal = client.portal
    try:
        yield other
    finally:
        other.portal = None
        other.close()


@contextmanager
def visitors(app: Any, n: int) -> Iterator[tuple[TestClient, ...]]:
    """``n`` visitors of ``app``: the first runs it, the others are :func:`another` of it."""
    with TestClient(app) as first, ExitStack() as stack:
        yield (first, *(stack.enter_context(another(first)) for _ in range(n - 1)))


def create(client: TestClient, **spec: Any) -> dict[str, Any]:
    r = client.post("/api/games", json=spec)
    assert r.status_code == 201, r.text
    return r.json()


def connect(client: TestClient, game_id: str, token: str | None = None) -> Any:
    return client.websocket_connect(f"/ws/{game_id}")


def seat(ws_ctx: Any, token: str | None, role: str) -> WS:
    ws = WS(ws_ctx)
    ws.until("state")
    if token is not None:
        ws.send(type="hello", token=token)
        assert ws.until("welcome")["role"] == role
        ws.until("state")
    return ws


def first_legal(state: dict[str, Any]) -> str:
    piece, cells = next(iter(state["legal"].items()))
    return f"{piece}@{cells[0]}"


def stored_moves(db: str, game_id: str) -> list[str]:
    s = Storage(resolve_db_url(db))
    try:
        rec = s.load(game_id)
        assert rec is not None
        return rec.moves
    finally:
        s.close()


# -- pages and data ----------------------------------------------------------------------------


def test_pages_static_files_topology_and_levels(client: TestClient) -> None:
    for path in ("/", "/g/anything", "/rules"):
        r = client.get(path)
        assert r.status_code == 200 and "<html" in r.text
    for path in ("/static/app.js", "/static/board.js", "/static/style.css", "/static/rules.js"):
        assert client.get(path).status_code == 200, path
    rules = client.get("/api/rules.md")
    assert rules.status_code == 200 and "monolith" in rules.text.lower()
    topo = client.get("/api/topology").json()
    assert len(topo["cells"]) == 26 and len(topo["alignments"]) == 13 and len(topo["triangles"]) == 26
    assert len(topo["outline"]) == 8 and {"x", "y", "camp"} <= set(topo["cells"][0])
    levels = client.get("/api/levels").json()
    assert "random" in levels["levels"] and levels["default"] in levels["levels"]


# -- vs AI ---------------------------------------------------------------------------------------


def test_full_game_against_the_ai_then_record_and_replay(client: TestClient, db: str) -> None:
    g = create(client, mode="ai", level="random", side="south")
    assert g["side"] == "south" and g["game"]["seats"]["north"]["kind"] == "ai"
    with connect(client, g["id"]) as raw:
        ws = seat(raw, g["token"], "south")
        for _ in range(200):
            st = ws.state
            assert st is not None
            if st["status"] == "over":
                break
            if st["turn"] == "south" and not st["ai_thinking"]:
                ws.send(type="move", move=first_legal(st), ply=st["ply"])
                ws.until("ack")
                ws.state_at(st["ply"] + 1)
            else:
                ws.until("state")
        st = ws.state
        assert st is not None and st["status"] == "over" and st["result"] in ("south", "north", "draw")
        assert st["reason"] in ("seven", "exhaustion")
    replayed = Game.from_moves(st["moves"])
    assert replayed.outcome() == st["result"]
    assert stored_moves(db, g["id"]) == st["moves"]
    record = client.get(f"/api/games/{g['id']}/record")
    assert record.status_code == 200 and "attachment" in record.headers["content-disposition"]
    assert st["moves"][0] in record.text and st["moves"][-1] in record.text
    token = {"south": "1-0", "north": "0-1", "draw": "1/2-1/2"}[st["result"]]
    assert f'[Result "{token}"]' in record.text and record.text.rstrip().endswith(token)
    try:
        from jericho_game.record import read_record
    except ImportError:  # the record module is another issue's; the minimal record is checked above
        pass
    else:
        parsed = read_record(record.text)
        assert [str(m) for m in parsed.moves] == st["moves"]
    frames = client.get(f"/api/games/{g['id']}/replay").json()["frames"]
    assert len(frames) == len(st["moves"]) + 1 and frames[0]["towers"] == {}
    assert frames[-1]["score"] == st["score"] and frames[-1]["towers"] == st["towers"]


def test_ai_moves_first_when_the_person_plays_north_and_undo_takes_back_a_pair(client: TestClient) -> None:
    g = create(client, mode="ai", level="random", side="north")
    with connect(client, g["id"]) as raw:
        ws = seat(raw, g["token"], "north")
        st = (
            ws.state
            if ws.state and ws.state["ply"] == 1
            else ws.until("state", lambda m: m["game"]["ply"] == 1)["game"]
        )
        assert st["turn"] == "north" and not st["can_undo"]  # the AI's opening move is not the person's
        ws.send(type="undo")
        assert ws.error()["code"] == "nothing_to_undo"
        ws.send(type="move", move=first_legal(st), ply=1)
        assert ws.until("state", lambda m: m["game"]["ply"] >= 3)["game"]["can_undo"]
        ws.send(type="undo")
        st = ws.until("state", lambda m: m["game"]["ply"] == 1)["game"]
        assert st["turn"] == "north" and not st["can_undo"]


def test_ai_runs_off_the_event_loop_and_a_failing_ai_still_moves(client: TestClient) -> None:
    SleepyPlayer.release.clear()
    g = create(client, mode="ai", level="sleepy-test", side="north")
    try:
        # the AI is stuck thinking: a server that ran it on its event loop could not answer here
        st = client.get(f"/api/games/{g['id']}").json()
        assert st["ai_thinking"] and st["ply"] == 0, "the server must answer while the AI thinks"
    finally:
        SleepyPlayer.release.set()
    with connect(client, g["id"]) as raw:
        ws = seat(raw, g["token"], "north")
        ws.state_where(lambda m: m["game"]["ply"] == 1)
    with another(client, "10.9.9.9") as other:  # one client holds one game of the dearest cost at once
        g2 = create(other, mode="ai", level="broken-test", side="north")
    with connect(client, g2["id"]) as raw:
        ws = seat(raw, g2["token"], "north")
        ws.state_where(lambda m: m["game"]["ply"] == 1)


def test_a_stored_game_whose_ai_level_is_gone_still_gets_its_ai_moves(db: str) -> None:
    from jericho_game.web.storage.database import GameRecord

    storage = Storage(resolve_db_url(db))
    storage.create(GameRecord(id="gone1", mode="ai", ai_side="south", ai_level="vanished", north_token="t" * 24))
    storage.close()
    with TestClient(create_app(db)) as c:
        deadline = time.monotonic() + 20
        while c.get("/api/games/gone1").json()["ply"] == 0:  # loading the game starts the AI
            assert time.monotonic() < deadline, "the AI never moved"
            time.sleep(0.02)
        assert stored_moves(db, "gone1") == c.get("/api/games/gone1").json()["moves"]


def test_an_ai_player_is_never_used_by_two_threads_at_once(client: TestClient) -> None:
    """Undo while the AI thinks, then move again: the abandoned search still runs in its thread,
    so the next AI move must not run on the same player object."""
    GatedPlayer.go.clear()
    GatedPlayer.overlaps = 0
    g = create(client, mode="ai", level="gated-test", side="south")
    try:
        with connect(client, g["id"]) as raw:
            ws = seat(raw, g["token"], "south")
            ws.send(type="move", move="5R@d2")
            ws.until("ack")
            assert GatedPlayer.entered.acquire(timeout=10)  # the AI is thinking about ply 1
            ws.send(type="undo")
            ws.until("state", lambda m: m["game"]["ply"] == 0)
            ws.send(type="move", move="5Y@a1")
            ws.until("ack")
            assert GatedPlayer.entered.acquire(timeout=10)  # a second search started meanwhile
            GatedPlayer.go.set()
            st = ws.until("state", lambda m: m["game"]["ply"] == 2)["game"]
    finally:
        GatedPlayer.go.set()
    assert st["moves"][0] == "5Y@a1" and GatedPlayer.overlaps == 0


def test_unknown_level_is_refused(client: TestClient) -> None:
    r = client.post("/api/games", json={"mode": "ai", "level": "no-such-ai"})
    assert r.status_code == 400 and "no-such-ai" in r.json()["message"]


def test_a_level_cannot_name_a_program_or_options(client: TestClient, tmp_path: Path) -> None:
    """Only the offered level names are accepted: a player spec with options could start a program
    on the server (external:cmd=...) or hold an AI worker for hours (mcts:time=...)."""
    marker = tmp_path / "pwned"
    for level in (f"external:cmd=touch {marker}", "external", "openspiel-mcts", "mcts:time=100000", "random:seed=1"):
        r = client.post("/api/games", json={"mode": "ai", "level": level, "side": "north"})
        assert r.status_code == 400 and r.json()["error"] == "bad_level", (level, r.text)
        assert "random" in r.json()["message"]  # the refusal lists what is available
    assert not marker.exists()
    assert "external" not in client.get("/api/levels").json()["levels"]


# -- hot-seat --------------------------------------------------------------------------------------


def test_hotseat_one_token_plays_both_sides_undo_resign_rematch(client: TestClient) -> None:
    g = create(client, mode="hotseat")
    assert g["side"] == "both"
    with connect(client, g["id"]) as raw:
        ws = seat(raw, g["token"], "both")
        ws.send(type="move", move="5R@d2")
        ws.until("ack")
        ws.send(type="move", move="1G@d3")
        st = ws.until("state", lambda m: m["game"]["ply"] == 2)["game"]
        assert st["leaders"]["d"] == "south" and st["score"] == [1, 0]
        assert "South leads" in st["confrontations"]["d"]["reason"]
        ws.send(type="undo")
        st = ws.until("state", lambda m: m["game"]["ply"] == 1)["game"]
        assert st["turn"] == "north" and st["moves"] == ["5R@d2"]
        ws.send(type="rematch")
        assert ws.error()["code"] == "not_over"
        ws.send(type="resign")
        st = ws.until("state", lambda m: m["game"]["status"] == "over")["game"]
        assert st["result"] == "south" and st["reason"] == "resign"  # north (to move) resigned
        text = client.get(f"/api/games/{g['id']}/record").text
        assert '[Result "1-0"]' in text and '[Termination "North resigned"]' in text and "5R@d2" in text
        ws.send(type="move", move="1R@a1")
        assert ws.error()["code"] == "game_over"
        ws.send(type="rematch")
        new_id = ws.until("rematch")["id"]
    with connect(client, new_id) as raw:
        ws = seat(raw, g["token"], "both")
        assert ws.state is not None and ws.state["rematch_of"] == g["id"] and ws.state["ply"] == 0


# -- online ------------------------------------------------------------------------------------------


def test_online_invite_join_spectate_and_token_rules(client: TestClient) -> None:
    g = create(client, mode="online", side="south")
    gid, south_token, invite = g["id"], g["token"], g["invite"]
    assert g["links"]["invite"].endswith(f"#invite={invite}") and g["game"]["status"] == "waiting"
    with connect(client, gid) as a_raw, connect(client, gid) as spec_raw:
        a = seat(a_raw, south_token, "south")
        spectator = seat(spec_raw, None, "spectator")
        a.send(type="move", move="5R@d2")
        assert a.error()["code"] == "waiting"
        a.send(type="resign")  # resigning would leave an over game whose seat nobody can ever take
        assert a.error()["code"] == "waiting"
        assert client.get(f"/api/games/{gid}").json()["status"] == "waiting"
        assert client.post(f"/api/games/{gid}/join", json={"invite": "wrong"}).status_code == 403
        joined = client.post(f"/api/games/{gid}/join", json={"invite": invite})
        assert joined.status_code == 200 and joined.json()["side"] == "north"
        north_token = joined.json()["token"]
        again = client.post(f"/api/games/{gid}/join", json={"invite": invite})
        assert again.status_code == 409 and "taken" in again.json()["message"]
        a.until("state", lambda m: m["game"]["status"] == "playing")
        with connect(client, gid) as b_raw:
            b = seat(b_raw, north_token, "north")
            b.send(type="move", move="5R@d2")
            assert b.error()["code"] == "not_your_turn"
            a.send(type="move", move="5R@d2")
            a.until("ack")
            b.until("state", lambda m: m["game"]["ply"] == 1)
            b.send(type="move", move="1G@d3")
            b.until("ack")
            st = spectator.until("state", lambda m: m["game"]["ply"] == 2)["game"]
            assert st["moves"] == ["5R@d2", "1G@d3"] and st["seats"]["north"]["present"]
            for kind in ("move", "undo", "resign", "rematch"):
                spectator.send(type=kind, move="1R@a1")
                assert spectator.error()["code"] == "not_a_player"
            wrong = south_token[:-1] + ("x" if south_token[-1] != "x" else "y")  # one character off
            spectator.send(type="hello", token=wrong)
            assert spectator.error()["code"] == "bad_token"
            spectator.send(type="move", move="1R@a1")
            assert spectator.error()["code"] == "not_a_player"
            a.send(type="undo")
            assert a.error()["code"] == "no_undo"
            b.send(type="resign")
            st = spectator.until("state", lambda m: m["game"]["status"] == "over")["game"]
            assert st["result"] == "south" and st["reason"] == "resign"
            b.send(type="rematch")
            new_id = b.until("rematch")["id"]
            # the others are told in the state and not taken there
            assert a.until("state", lambda m: m["game"]["rematch_id"] is not None)["game"]["rematch_id"] == new_id
            spectator.until("state", lambda m: m["game"]["rematch_id"] == new_id)
            assert not any('"rematch"' in m for m in a.seen + spectator.seen)
        public = json.dumps(client.get(f"/api/games/{gid}").json()) + "".join(spectator.seen)
        for secret in (south_token, north_token, invite):
            assert secret not in public, "tokens must never reach spectators"
    # in the rematch the seats swap: the old north token now holds south
    with connect(client, new_id) as raw:
        seat(raw, north_token, "south")
    with connect(client, new_id) as raw:
        seat(raw, south_token, "north")


# -- persistence ---------------------------------------------------------------------------------------


def test_restart_resumes_every_game_from_its_last_acknowledged_move(db: str) -> None:
    with TestClient(create_app(db)) as c1:
        hot = create(c1, mode="hotseat", clock=10)
        online = create(c1, mode="online", side="north")
        north = online["token"]
        south = c1.post(f"/api/games/{online['id']}/join", json={"invite": online["invite"]}).json()["token"]
        with connect(c1, hot["id"]) as raw:
            ws = seat(raw, hot["token"], "both")
            for mv in ("5R@d2", "1G@d3", "2Y@d3"):
                ws.send(type="move", move=mv)
                ws.until("ack")
        with connect(c1, online["id"]) as raw:
            ws = seat(raw, south, "south")
            ws.send(type="move", move="4B@a1")
            ws.until("ack")
    # a new server on the same database file
    with TestClient(create_app(db)) as c2:
        st = c2.get(f"/api/games/{hot['id']}").json()
        assert st["moves"] == ["5R@d2", "1G@d3", "2Y@d3"] and st["leaders"]["d"] == "north"
        assert st["clock"]["initial"] == 600 and 0 < st["clock"]["north"] <= 600
        with connect(c2, hot["id"]) as raw:
            ws = seat(raw, hot["token"], "both")
            ws.send(type="move", move="3W@a1")
            ws.until("ack")
        with connect(c2, online["id"]) as raw:
            ws = seat(raw, north, "north")
            assert ws.state is not None and ws.state["moves"] == ["4B@a1"] and ws.state["status"] == "playing"
            ws.send(type="move", move="4B@g4")
            assert "4B@g4" in ws.error()["message"]  # the asymmetry rule, explained by the engine
            ws.send(type="move", move="4B@b4")
            ws.until("ack")
    assert stored_moves(db, hot["id"]) == ["5R@d2", "1G@d3", "2Y@d3", "3W@a1"]
    assert stored_moves(db, online["id"]) == ["4B@a1", "4B@b4"]


# -- clocks ------------------------------------------------------------------------------------------


def test_clock_flags_the_side_that_runs_out(db: str) -> None:
    now = [1_000_000.0]
    with TestClient(create_app(db, clock=lambda: now[0])) as c:
        g = create(c, mode="hotseat", clock=1)
        with connect(c, g["id"]) as raw:
            ws = seat(raw, g["token"], "both")
            # each side's clock starts at its own first move (issue 52): the first two cost nothing
            for ply, move in enumerate(("5R@d2", "1G@d3")):
                now[0] += 20
                ws.send(type="move", move=move)
                ws.until("ack")
                st = ws.state_at(ply + 1)
            assert st["clock"]["south"] == st["clock"]["north"] == 60 and st["clock"]["running"] == "south"
            now[0] += 20
            ws.send(type="move", move="2Y@d3")
            ws.until("ack")
            st = ws.state_at(3)
            assert st["clock"]["south"] == pytest.approx(40) and st["clock"]["running"] == "north"
            now[0] += 61
            ws.send(type="move", move="3W@a1")
            assert "North ran out of time" in ws.error()["message"]
            st = c.get(f"/api/games/{g['id']}").json()
            assert st["status"] == "over" and st["result"] == "south" and st["reason"] == "time"
            assert st["clock"]["north"] == 0 and st["moves"] == ["5R@d2", "1G@d3", "2Y@d3"]
    assert stored_moves(db, g["id"]) == ["5R@d2", "1G@d3", "2Y@d3"]


def test_an_online_rematch_clock_waits_for_its_first_moves(db: str) -> None:
    """Nobody loses time before they have seen the new board: no clock runs before its side's
    first move (issue 52; before it, an online rematch's clock started once both had opened it)."""
    now = [1_000_000.0]
    with TestClient(create_app(db, clock=lambda: now[0])) as c:
        g = create(c, mode="online", side="south", clock=1)
        north = c.post(f"/api/games/{g['id']}/join", json={"invite": g["invite"]}).json()["token"]
        with connect(c, g["id"]) as raw:
            ws = seat(raw, north, "north")
            ws.send(type="resign")
            ws.until("state", lambda m: m["game"]["status"] == "over")
            ws.send(type="rematch")
            new_id = ws.until("rematch")["id"]
        now[0] += 10  # the old South (South's seat in the rematch is the old North's) is still elsewhere
        st = c.get(f"/api/games/{new_id}").json()
        assert st["clock"]["running"] is None and st["clock"]["south"] == 60
        assert st["first_move"] == {"side": "south", "left": 20, "limit": 30}
        with connect(c, new_id) as raw_s, connect(c, new_id) as raw_n:
            ws_s, ws_n = seat(raw_s, north, "south"), seat(raw_n, g["token"], "north")
            now[0] += 15
            ws_s.send(type="move", move="5R@d2", ply=0)
            ws_s.until("ack")
            now[0] += 25
            st = c.get(f"/api/games/{new_id}").json()
            assert st["clock"]["south"] == st["clock"]["north"] == 60 and st["clock"]["running"] is None
            ws_n.state_at(1)
            ws_n.send(type="move", move="1G@d3", ply=1)
            ws_n.until("ack")
            now[0] += 10
            st = c.get(f"/api/games/{new_id}").json()
            assert st["clock"]["running"] == "south" and st["clock"]["south"] == pytest.approx(50)


def test_bad_clock_and_bad_fields_are_refused(client: TestClient) -> None:
    for body in ({"clock": -5}, {"clock": "ten"}, {"clock": 999}, {"mode": "chess"}, {"side": "east"}, {"x": 1}):
        r = client.post("/api/games", json=body)
        assert r.status_code == 400 and r.json()["message"], body


# -- hostile input ---------------------------------------------------------------------------------------


def test_every_kind_of_bad_websocket_input_gets_a_clear_error_and_changes_nothing(db: str) -> None:
    limits = Limits(max_message=512, burst=1000, rate=1000.0)
    with TestClient(create_app(db, limits=limits)) as c:
        g = create(c, mode="hotseat")
        with connect(c, g["id"]) as raw:
            ws = seat(raw, g["token"], "both")
            ws.send(type="move", move="5R@d2")
            ws.until("ack")
            before = stored_moves(db, g["id"])
            cases: list[tuple[str | bytes, str]] = [
                ("{not json", "bad_json"),
                ("[1, 2, 3]", "bad_message"),
                ('"just a string"', "bad_message"),
                ('{"type": "teleport"}', "bad_message"),
                ('{"type": 5}', "bad_message"),
                ('{"type": "move"}', "bad_message"),
                ('{"type": "move", "move": 42}', "bad_message"),
                ('{"type": "move", "move": "9Z@z9"}', "illegal"),
                ('{"type": "move", "move": "5R@d2"}', "illegal"),
                ('{"type": "move", "move": "pass"}', "illegal"),
                ('{"type": "move", "move": "1G@d3", "ply": 0}', "moved_on"),
                ('{"type": "hello", "token": 12}', "bad_token"),
                (json.dumps({"type": "move", "move": "1G@d3", "pad": "x" * 600}), "too_large"),
                ("[" * 100 + "]" * 100, "bad_message"),
                (b"\x00\x01binary", "bad_message"),
            ]
            for payload, code in cases:
                if isinstance(payload, bytes):
                    raw.send_bytes(payload)
                else:
                    raw.send_text(payload)
                err = ws.error()
                assert err["code"] == code, (payload, err)
            ws.send(type="move", move="5R@d2")
            reason = ws.error()["message"]
            assert reason == Game.from_moves(["5R@d2"]).why_illegal("5R@d2")
            assert stored_moves(db, g["id"]) == before
            ws.send(type="ping", ref=7)
            assert ws.until("pong", lambda m: m["ref"] != f"error-check-{ws.checks}")["ref"] == 7
            ws.send(type="move", move="1G@d3")  # the connection still works
            ws.until("ack")


def test_message_flood_is_rate_limited_then_cut_off_without_harm(db: str) -> None:
    limits = Limits(rate=0.001, burst=5, flood_close=20)
    with TestClient(create_app(db, limits=limits)) as c:
        g = create(c, mode="hotseat")
        with connect(c, g["id"]) as raw:
            ws = seat(raw, g["token"], "both")  # uses 1 of the burst
            codes = []
            with pytest.raises(WebSocketDisconnect):
                for _ in range(60):
                    ws.send(type="move", move="1R@a1")
                    while True:
                        msg = ws.recv()
                        if msg["type"] in ("error", "ack"):
                            codes.append(msg.get("code", "ack"))
                            break
            assert codes[0] == "ack" and "rate_limited" in codes
            assert "too many messages" in next(m for m in ws.seen if "rate_limited" in m)
        st = c.get(f"/api/games/{g['id']}").json()
        assert st["moves"] == ["1R@a1"] and st["status"] == "playing"
        with connect(c, g["id"]) as raw:  # the game itself is fine
            ws = seat(raw, g["token"], "both")
            ws.send(type="move", move="2Y@a1")
            ws.until("ack")


def test_unknown_games_and_bad_http_requests(client: TestClient) -> None:
    for gid in ("nope", "x" * 40, "bad%20id", "..%2f..%2fetc"):
        r = client.get(f"/api/games/{gid}")
        assert r.status_code == 404 and r.json()["message"], gid
    assert client.get("/api/games/nope/record").status_code == 404
    assert client.get("/api/games/nope/replay").status_code == 404
    assert client.post("/api/games/nope/join", json={"invite": "x"}).status_code == 404
    with client.websocket_connect("/ws/nope") as raw:
        ws = WS(raw)
        assert ws.error()["code"] == "unknown_game"
        with pytest.raises(WebSocketDisconnect):
            raw.receive_text()
    r = client.post("/api/games", content=b"{oops", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"] == "bad_json"
    r = client.post("/api/games", content=b"[1]", headers={"content-type": "application/json"})
    assert r.status_code == 400
    r = client.post("/api/games", content=b"{" + b" " * 10000 + b"}", headers={"content-type": "application/json"})
    assert r.status_code == 413 and "too large" in r.json()["message"]
    assert client.get("/api/no/such/thing").status_code == 404
    assert client.delete("/api/games").status_code == 405
    g = create(client, mode="hotseat")
    assert client.post(f"/api/games/{g['id']}/join", json={"invite": "x"}).status_code == 400  # not online
    assert client.get(f"/api/games/{g['id']}").json()["ply"] == 0


def test_a_database_failure_while_loading_a_game_is_a_clear_error(db: str) -> None:
    app = create_app(db)
    with TestClient(app, raise_server_exceptions=False) as c:
        g = create(c, mode="hotseat")
        app.state.service.rooms.clear()  # not in memory: the next request loads it from the database

        def broken(game_id: str) -> Any:
            raise RuntimeError("database unreachable")

        app.state.service.storage.load = broken
        r = c.get(f"/api/games/{g['id']}")
        assert r.status_code == 500 and r.json()["error"] == "internal" and "safe" in r.json()["message"]
        with c.websocket_connect(f"/ws/{g['id']}") as raw:
            msg = json.loads(raw.receive_text())
            assert msg["type"] == "error" and msg["code"] == "internal" and "nothing was changed" in msg["message"]
            with pytest.raises(WebSocketDisconnect):
                raw.receive_text()
        del app.state.service.storage.load  # the database is back: the game is intact
        assert c.get(f"/api/games/{g['id']}").json()["status"] == "playing"


def test_game_creation_is_rate_limited_per_address(db: str) -> None:
    with TestClient(create_app(db, limits=Limits(creates_per_minute=3))) as c:
        for _ in range(3):
            create(c, mode="hotseat")
        r = c.post("/api/games", json={"mode": "hotseat"})
        assert r.status_code == 429 and "wait" in r.json()["message"]


def test_the_creation_rate_counts_a_sliding_minute_and_forgets_quiet_addresses(db: str) -> None:
    """The `game.create` budget (web/common/budget.py): counted in the database over the last minute,
    and its rows pruned once older than every window, so the ledger cannot grow without bound."""
    now = [1_000_000.0]
    app = create_app(db, clock=lambda: now[0], limits=Limits(creates_per_minute=2))
    with TestClient(app) as c:
        hub = app.state.service
        for i in range(5):
            hub.create({"mode": "hotseat"}, client=f"10.0.0.{i}")
        for _ in range(2):
            create(c, mode="hotseat")
        assert c.post("/api/games", json={"mode": "hotseat"}).json()["error"] == "rate_limited"
        now[0] += 61
        create(c, mode="hotseat")
        now[0] += 2 * 24 * 3600  # past the longest window of every budget
        assert app.state.budget.prune() == 8
        create(c, mode="hotseat")
        with hub.storage.engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT grp FROM budget_spend").fetchall()
        assert [r[0] for r in rows] == ["testclient"]


# -- the real command: kill -9 mid-game, restart, carry on ----------------------------------------------


def _serve(db: str, port: int) -> Any:
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    cmd = [sys.executable, "-m", "jericho_game", "serve", "--port", str(port), "--db", db, "--ai-delay", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert f"http://127.0.0.1:{port}/" in line, line
    return proc


def _wait_http(url: str) -> None:
    import httpx

    for _ in range(100):
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise AssertionError(f"{url} did not answer")


def test_jericho_serve_prints_its_url_and_survives_kill_9(db: str) -> None:
    import signal

    import httpx
    from websockets.sync.client import connect as ws_connect

    with reserve_port() as hold:  # held through the restart too: no other process can take the port
        port = hold.getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        proc = _serve(db, port)
        try:
            _wait_http(base + "/")
            g = httpx.post(base + "/api/games", json={"mode": "hotseat"}).json()
            with ws_connect(f"ws://127.0.0.1:{port}/ws/{g['id']}") as ws:
                ws.send(json.dumps({"type": "hello", "token": g["token"]}))
                for mv in ("5R@d2", "1G@d3"):
                    ws.send(json.dumps({"type": "move", "move": mv}))
                    while json.loads(ws.recv())["type"] != "ack":
                        pass
        finally:
            finish(proc, signal.SIGKILL)
        proc = _serve(db, port)
        try:
            _wait_http(base + "/")
            st = httpx.get(f"{base}/api/games/{g['id']}").json()
            assert st["moves"] == ["5R@d2", "1G@d3"] and st["leaders"]["d"] == "south"
            with ws_connect(f"ws://127.0.0.1:{port}/ws/{g['id']}") as ws:
                ws.send(json.dumps({"type": "hello", "token": g["token"]}))
                ws.send(json.dumps({"type": "move", "move": "2Y@d3"}))
                while (msg := json.loads(ws.recv()))["type"] != "ack":
                    assert msg["type"] != "error", msg
        finally:
            finish(proc, timeout=10)
    assert stored_moves(db, g["id"]) == ["5R@d2", "1G@d3", "2Y@d3"]


def test_the_server_flags_a_silent_player_on_its_own(db: str) -> None:
    with TestClient(create_app(db, limits=Limits(min_clock=0.01))) as c:  # below the public 1-minute floor
        g = create(c, mode="hotseat", clock=0.01)  # 0.6 seconds each
        with connect(c, g["id"]) as raw:
            ws = seat(raw, g["token"], "both")
            # the clocks start at each side's first move (issue 52): then South says nothing more
            for ply, move in enumerate(("5R@d2", "1G@d3")):
                ws.send(type="move", move=move, ply=ply)
                ws.until("ack")
            st = ws.state_where(lambda m: m["game"]["status"] == "over")
            assert st["result"] == "north" and st["reason"] == "time" and st["clock"]["south"] == 0


def _moves_to_a_seven_threat() -> list[str]:
    import random

    rng = random.Random(7)
    for _ in range(500):
        game = Game()
        while not game.is_over():
            game.play(rng.choice(game.legal_moves()))
            if game.seven_threat() is not None and not game.is_over():
                return [str(m) for m in game.history]
    raise AssertionError("no seven-threat found in 500 random games")


def test_state_announces_who_holds_seven(db: str) -> None:
    moves = _moves_to_a_seven_threat()
    with TestClient(create_app(db, limits=Limits(rate=1000, burst=1000))) as client:
        g = create(client, mode="hotseat")
        with connect(client, g["id"]) as raw:
            ws = seat(raw, g["token"], "both")
            for mv in moves:
                if mv != "pass":  # forced passes are played by the server
                    ws.send(type="move", move=mv)
                    ws.until("ack")
            st = ws.until("state", lambda m: m["game"]["ply"] >= len(moves))["game"]
    holder = Game.from_moves(moves).seven_threat()
    assert holder is not None and st["threat"] == holder.value and st["status"] == "playing"
    assert max(st["score"]) >= 7


# -- broadcasts ------------------------------------------------------------------------------------------


class FakeSocket:
    """A WebSocket whose sends wait for ``gate`` (a slow client); ``None``: never completes."""

    def __init__(self, gate: Any = "open") -> None:
        self.gate = gate
        self.plies: list[int] = []

    async def send_text(self, text: str) -> None:
        import asyncio

        if self.gate is None:
            await asyncio.Event().wait()  # a client that never reads
        if self.gate != "open":
            await self.gate.wait()
        msg = json.loads(text)
        if msg["type"] == "state":
            self.plies.append(msg["game"]["ply"])


def _transport(tmp_path: Path, limits: Limits) -> Any:
    from jericho_game.web.round.rooms import GameService
    from jericho_game.web.server import Transport
    from jericho_game.web.storage.broker import LocalBroker

    service = GameService(Storage(resolve_db_url(str(tmp_path / "g.sqlite3"))), LocalBroker())
    return Transport(service, service.broker, limits, ai_processes=-1)


def test_a_slow_client_gets_only_the_latest_state_never_an_older_one_after_a_newer(tmp_path: Path) -> None:
    import asyncio

    from jericho_game.web.server import Conn

    async def scenario() -> tuple[list[int], list[int]]:
        t = _transport(tmp_path, Limits())
        room, reply = t.service.create({"mode": "hotseat"})
        gate = asyncio.Event()
        slow, fast = Conn(FakeSocket(gate)), Conn(FakeSocket())
        t.conns[room.rec.id] = {slow, fast}
        pumps = [asyncio.create_task(c.pump(t.limits)) for c in (slow, fast)]
        t.broadcast(room)  # ply 0: the slow client's first send hangs on the gate
        await asyncio.sleep(0.01)
        for ply, mv in enumerate(["5R@d2", "1G@d3", "2Y@d3"]):
            await t.service.move(room.rec.id, frozenset(["south", "north"]), mv, ply, on_commit=t.after)
            await asyncio.sleep(0.01)
        assert len(slow.queue) == 1, "waiting states are coalesced into the latest"
        gate.set()
        await asyncio.sleep(0.05)
        for p in pumps:
            p.cancel()
        t.service.storage.close()
        return slow.ws.plies, fast.ws.plies

    slow, fast = asyncio.run(scenario())
    assert fast == [0, 1, 2, 3]
    assert slow == [0, 3], "a slow reader skips to the latest state, in order"


def test_a_client_that_does_not_read_is_closed_and_the_others_still_get_every_state(tmp_path: Path) -> None:
    import asyncio

    from jericho_game.web.server import Conn

    async def scenario() -> tuple[Any, Any, bool]:
        t = _transport(tmp_path, Limits(send_timeout=0.05))
        room, _ = t.service.create({"mode": "hotseat"})
        stuck, fine = Conn(FakeSocket(None)), Conn(FakeSocket())
        t.conns[room.rec.id] = {stuck, fine}
        stuck.on_drop = lambda c, why: t._forget(room.rec.id, c)
        pumps = [asyncio.create_task(c.pump(t.limits)) for c in (stuck, fine)]
        pumps.append(asyncio.create_task(t._watchdog()))
        t.broadcast(room)
        await asyncio.sleep(0.1)  # the stuck client's send does not end: the watchdog closes it
        assert stuck.dropped
        await t.service.move(room.rec.id, frozenset(["south", "north"]), "5R@d2", 0, on_commit=t.after)
        await asyncio.sleep(0.02)
        for p in pumps:
            p.cancel()
        t.service.storage.close()
        return fine.ws, stuck, stuck in t.conns.get(room.rec.id, set())

    fine, stuck, still_there = asyncio.run(scenario())
    assert fine.plies == [0, 1] and stuck.dropped and not still_there


# -- the AI queue, headers, health ------------------------------------------------------------------------


def test_the_ai_queue_is_bounded_and_states_say_where_a_game_stands(db: str) -> None:
    """No AI runs here (ai_processes=-1): jobs wait; beyond the bound new ones are refused (busy)."""
    # the global bound; each client's own quota (2 by default, test_fairshare.py) is raised above it
    with TestClient(create_app(db, limits=Limits(ai_queue=2, ai_per_client=10), ai_processes=-1)) as c:
        first = create(c, mode="ai", level="random", side="north")  # the AI (south) moves first
        second = create(c, mode="ai", level="random", side="north")
        assert first["game"]["ai"] == {"status": "queued", "position": 1} and first["game"]["ai_thinking"]
        assert c.get(f"/api/games/{second['id']}").json()["ai"] == {"status": "queued", "position": 2}
        r = c.post("/api/games", json={"mode": "ai", "level": "random", "side": "north"})
        assert r.status_code == 503 and r.json()["error"] == "busy" and "try again" in r.json()["message"]
        human_first = create(c, mode="ai", level="random", side="south")  # no job needed yet
        with connect(c, human_first["id"]) as raw:
            ws = seat(raw, human_first["token"], "south")
            ws.send(type="move", move="5R@d2", ply=0)
            err = ws.error()
            assert err["code"] == "busy"
        assert stored_moves(db, human_first["id"]) == []  # refused: nothing changed
        assert c.get(f"/api/games/{human_first['id']}").json()["ai"] is None


def test_security_headers_health_and_refusals_of_the_command(db: str) -> None:
    with TestClient(create_app(db, ai_processes=-1)) as c:
        for path in ("/", "/api/levels", "/static/app.js", "/api/games/nope"):
            h = c.get(path).headers
            assert "frame-ancestors 'none'" in h["content-security-policy"], path
            assert h["x-content-type-options"] == "nosniff" and h["referrer-policy"] == "no-referrer"
        health = c.get("/healthz")
        assert health.status_code == 200 and health.json()["database"] == "ok"
        c.app.state.service.storage.ping = lambda: (_ for _ in ()).throw(RuntimeError("db down"))  # type: ignore[attr-defined]
        down = c.get("/healthz")
        assert down.status_code == 503 and "db down" in down.json()["database"]


def test_moves_that_arrive_together_commit_together_and_a_refused_one_harms_none(db: str) -> None:
    """Group commit: one transaction, a savepoint per move; the loser of a race and an illegal move
    are refused without undoing the others."""
    import asyncio

    from jericho_game.web.round.rooms import ClientError

    async def scenario() -> list[Any]:
        t = _transport_on(db)
        both = frozenset(["south", "north"])
        a, _ = t.service.create({"mode": "hotseat"})
        b, _ = t.service.create({"mode": "hotseat"})
        moves = [
            t.service.move(a.rec.id, both, "5R@d2", 0),
            t.service.move(b.rec.id, both, "9Z@z9", 0),  # illegal
            t.service.move(a.rec.id, both, "4R@d2", 0),  # the same ply again: moved_on
            t.service.move(b.rec.id, both, "1G@d3", 0),
        ]
        results = await asyncio.gather(*moves, return_exceptions=True)
        t.service.storage.close()
        return results

    won_a, illegal, lost, won_b = asyncio.run(scenario())
    assert won_a.ack["move"] == "5R@d2" and won_b.ack["move"] == "1G@d3"
    assert isinstance(illegal, ClientError) and illegal.code == "illegal"
    assert isinstance(lost, ClientError) and lost.code == "moved_on" and lost.game["moves"] == ["5R@d2"]
    assert stored_moves(db, won_a.room.rec.id) == ["5R@d2"] and stored_moves(db, won_b.room.rec.id) == ["1G@d3"]


def test_resignations_rematches_and_undos_commit_with_the_moves_around_them(db: str) -> None:
    """They join the group commit (one transaction, one disk flush) instead of a transaction each: a
    round of games ending together no longer holds everyone's moves up for a flush per game."""
    import asyncio

    from sqlalchemy import event

    commits: list[int] = []

    async def scenario() -> tuple[list[Any], list[Any]]:
        t = _transport_on(db)
        both = frozenset(["south", "north"])
        a, b, c = (t.service.create({"mode": "hotseat"})[0] for _ in range(3))
        await t.service.move(b.rec.id, both, "5R@d2", 0)
        event.listen(t.service.storage.engine, "commit", lambda conn: commits.append(1))
        first = await asyncio.gather(
            t.service.grouped("resign", a.rec.id, both),
            t.service.move(b.rec.id, both, "4G@e4", 1),
            t.service.move(c.rec.id, both, "5R@d2", 0),
        )
        assert len(commits) == 1
        second = await asyncio.gather(
            t.service.grouped("rematch", a.rec.id, both),
            t.service.grouped("undo", b.rec.id, both),
            t.service.move(c.rec.id, both, "4G@e4", 1),
            t.service.grouped("rematch", c.rec.id, both),  # refused: that game goes on
            return_exceptions=True,
        )
        assert len(commits) == 2
        t.service.storage.close()
        return first, second

    (resigned, _, _), (rematch, undone, moved, refused) = asyncio.run(scenario())
    assert resigned.room.rec.result == "north" and resigned.room.rec.reason == "resign"
    assert rematch.rematch_id and stored_moves(db, rematch.rematch_id) == []
    assert undone.room.rec.moves == ["5R@d2"] and stored_moves(db, undone.room.rec.id) == ["5R@d2"]
    assert stored_moves(db, moved.room.rec.id) == ["5R@d2", "4G@e4"]
    assert getattr(refused, "code", None) == "not_over"


def _transport_on(db: str) -> Any:
    from jericho_game.web.round.rooms import GameService
    from jericho_game.web.server import Transport
    from jericho_game.web.storage.broker import LocalBroker

    service = GameService(Storage(resolve_db_url(db)), LocalBroker())
    return Transport(service, service.broker, Limits(), ai_processes=-1)


def test_a_change_that_fails_after_writing_aborts_its_whole_group(db: str, monkeypatch: Any) -> None:
    """Nothing half-made is ever committed: a failure after a write fails every move of the group."""
    import asyncio

    from jericho_game.web.storage.database import Tx

    real_save = Tx.save

    def save(self: Tx, rec: Any) -> int:
        if rec.id == doomed[0]:
            raise RuntimeError("disk full")
        return real_save(self, rec)

    doomed = [""]

    async def scenario() -> tuple[list[Any], str, str]:
        t = _transport_on(db)
        both = frozenset(["south", "north"])
        a, _ = t.service.create({"mode": "hotseat"})
        b, _ = t.service.create({"mode": "hotseat"})
        doomed[0] = b.rec.id
        monkeypatch.setattr(Tx, "save", save)
        results = await asyncio.gather(
            t.service.move(a.rec.id, both, "5R@d2", 0),
            t.service.move(b.rec.id, both, "5R@d2", 0),
            return_exceptions=True,
        )
        monkeypatch.setattr(Tx, "save", real_save)
        again = await t.service.move(a.rec.id, both, "5R@d2", 0)  # the game is intact and playable
        t.service.storage.close()
        return results, a.rec.id, again.ack["move"]

    results, a_id, again = asyncio.run(scenario())
    assert all(isinstance(r, RuntimeError) for r in results), results
    assert stored_moves(db, a_id) == ["5R@d2"] and again == "5R@d2"  # only the retried move is stored


def test_games_waiting_for_the_ai_see_their_place_move_up(db: str) -> None:
    with TestClient(create_app(db, ai_processes=-1)) as c:  # no AI here: the test claims the jobs
        first = create(c, mode="ai", level="random", side="north")
        second = create(c, mode="ai", level="random", side="north")
        with connect(c, second["id"]) as raw:
            ws = seat(raw, second["token"], "north")
            assert ws.state is not None and ws.state["ai"] == {"status": "queued", "position": 2}
            service, transport = c.app.state.service, c.app.state.transport  # type: ignore[attr-defined]
            job = service.storage.claim_job("another-worker", 30.0)
            assert job is not None and job.game_id == first["id"]  # oldest first
            c.portal.call(transport.on_change, first["id"], -1)  # type: ignore[union-attr]  # the claim's NOTIFY
            st = ws.until("state", lambda m: m["game"]["ai"]["position"] == 1)["game"]
            assert st["ai"] == {"status": "queued", "position": 1} and st["ai_thinking"]
            job2 = service.storage.claim_job("another-worker", 30.0)
            assert job2 is not None and job2.game_id == second["id"]
            c.portal.call(transport.on_change, second["id"], -1)  # type: ignore[union-attr]
            st = ws.until("state", lambda m: m["game"]["ai"]["status"] == "thinking")["game"]
            assert st["ai"] == {"status": "thinking", "position": 0}


def test_a_database_written_before_versions_is_migrated_and_its_clock_still_runs(db: str) -> None:
    """Databases of the single-process server lack games.version/deadline and ai_jobs: opening one
    adds them, and a game in progress there goes on (its clock flag included)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(resolve_db_url(db))
    with engine.begin() as conn:
        conn.execute(
            text(
                "CREATE TABLE games (id VARCHAR(32) PRIMARY KEY, created_at FLOAT NOT NULL, updated_at FLOAT NOT NULL, "
                "mode VARCHAR(16) NOT NULL, start_position TEXT, south_token VARCHAR(64), north_token VARCHAR(64), "
                "invite VARCHAR(64), joined INTEGER NOT NULL, ai_side VARCHAR(8), ai_level VARCHAR(200), clock FLOAT, "
                "south_time FLOAT, north_time FLOAT, turn_started FLOAT, result VARCHAR(8), reason VARCHAR(16), "
                "rematch_of VARCHAR(32), rematch_id VARCHAR(32), meta TEXT NOT NULL)"
            )
        )
        conn.execute(
            text(
                "CREATE TABLE moves (game_id VARCHAR(32) NOT NULL REFERENCES games (id), ply INTEGER NOT NULL, "
                "move VARCHAR(16) NOT NULL, played_at FLOAT NOT NULL, PRIMARY KEY (game_id, ply))"
            )
        )
        now = time.time()
        conn.execute(
            text(
                "INSERT INTO games VALUES ('oldgame1', :t, :t, 'hotseat', NULL, 'tok', 'tok', NULL, 0, NULL, NULL, "
                "0.6, 0.6, 0.6, :t, NULL, NULL, NULL, NULL, '{}')"
            ),
            {"t": now},
        )
        conn.execute(text("INSERT INTO moves VALUES ('oldgame1', 0, '5R@d2', :t)"), {"t": now})
        conn.execute(text("INSERT INTO moves VALUES ('oldgame1', 1, '1G@d3', :t)"), {"t": now})
    engine.dispose()
    with TestClient(create_app(db, ai_processes=-1)) as c:
        with connect(c, "oldgame1") as raw:
            ws = seat(raw, "tok", "both")
            assert ws.state is not None and ws.state["moves"] == ["5R@d2", "1G@d3"] and ws.state["version"] == 0
            st = ws.state_where(lambda m: m["game"]["status"] == "over")  # South's 0.6 s run out
            assert st["reason"] == "time" and st["result"] == "north"
    assert stored_moves(db, "oldgame1") == ["5R@d2", "1G@d3"]


def test_the_start_up_heap_is_frozen_while_the_app_runs(db: str) -> None:
    """A full garbage collection scanned the start-up heap under load (60-90 ms stalls): the app
    freezes it for its lifetime, and gives it back when it stops."""
    gc.unfreeze()
    with TestClient(create_app(db, ai_processes=0)) as c:
        assert c.get("/healthz").status_code == 200
        assert gc.get_freeze_count() > 10_000
    assert gc.get_freeze_count() == 0
