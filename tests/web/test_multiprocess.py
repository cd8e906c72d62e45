"""Several real ``jericho serve`` processes (and a ``jericho worker``) on one throwaway PostgreSQL
cluster: cross-process play and spectating, races for one ply, resign against move, ``kill -9``
takeover of clocks and AI moves, AI jobs run by a separate worker, and a client that never reads.

The database is the truth: whichever process a request reaches, exactly one change wins and the
losers hear ``moved_on`` with the fresh state; nothing acknowledged is ever lost.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection

from jericho_game.web.storage.database import Storage
from tests.helpers import Load, open_ws, reserve_port
from tests.web.processes import finish

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture()
def pg(postgres_socket: tuple[str, int]) -> str:
    """A fresh PostgreSQL database URL."""
    import psycopg

    folder, port = postgres_socket
    name = f"mp_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(host=folder, port=port, user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"postgresql+psycopg://postgres@/{name}?host={folder}&port={port}"


class Server:
    """One ``jericho serve`` process."""

    def __init__(self, db: str, *extra: str) -> None:
        self._hold = reserve_port()  # held until the server stops: no other process can take it
        self.port = int(self._hold.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, PYTHONPATH=SRC)
        cmd = [sys.executable, "-m", "jericho_game", "serve", "--port", str(self.port), "--db", db, *extra]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert "ready" in line, line
        for _ in range(200):
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        else:
            raise AssertionError(f"{self.url} did not answer")
        # the log goes on being read, so that the process never blocks on a full pipe
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def ws(self, game_id: str) -> ClientConnection:
        return open_ws(f"ws://127.0.0.1:{self.port}/ws/{game_id}")

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(self.url + path, json=body, timeout=10)

    def get(self, path: str) -> dict[str, Any]:
        data: dict[str, Any] = httpx.get(self.url + path, timeout=10).json()
        return data

    def stop(self, sig: int = signal.SIGTERM) -> None:
        finish(self.proc, sig, timeout=10)
        self._hold.close()


@pytest.fixture()
def servers() -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def start(db: str, *extra: str) -> Server:
        s = Server(db, *extra)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


class Client:
    """A WebSocket client that keeps the last state and every error."""

    def __init__(self, ws: ClientConnection, token: str | None = None) -> None:
        self.ws = ws
        self.state: dict[str, Any] = {}
        self.errors: list[dict[str, Any]] = []
        self.acks: list[dict[str, Any]] = []
        self.role = "spectator"
        if token:
            self.send(type="hello", token=token)
        self.wait(lambda st: True)

    def send(self, **msg: Any) -> None:
        self.ws.send(json.dumps(msg))

    def pump(self, timeout: float) -> dict[str, Any] | None:
        try:
            msg: dict[str, Any] = json.loads(self.ws.recv(timeout=timeout))
        except TimeoutError:
            return None
        if msg["type"] == "state":
            self.state = msg["game"]
        elif msg["type"] == "error":
            self.errors.append(msg)
        elif msg["type"] == "ack":
            self.acks.append(msg)
        elif msg["type"] == "welcome":
            self.role = msg["role"]
        return msg

    def wait(self, pred: Callable[[dict[str, Any]], bool], timeout: float = 10.0) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while not (self.state and pred(self.state)):
            left = end - time.monotonic()
            assert left > 0, f"timed out; last state ply {self.state.get('ply')}, errors {self.errors[-3:]}"
            self.pump(left)
        return self.state

    def answer(self, timeout: float = 10.0) -> dict[str, Any]:
        """The ack or error that answers the last message."""
        n_acks, n_errors = len(self.acks), len(self.errors)
        end = time.monotonic() + timeout
        while len(self.acks) == n_acks and len(self.errors) == n_errors:
            assert time.monotonic() < end, "no answer"
            self.pump(end - time.monotonic())
        return self.acks[-1] if len(self.acks) > n_acks else self.errors[-1]


def legal(st: dict[str, Any], k: int = 0) -> str:
    moves = [f"{p}@{c}" for p, cells in sorted(st["legal"].items()) for c in cells]
    return moves[k % len(moves)]


def stored(db: str, game_id: str) -> Any:
    s = Storage(db)
    try:
        return s.load(game_id)
    finally:
        s.close()


def _together(actions: list[Callable[[], Any]]) -> list[Any]:
    """Run ``actions`` in threads released at the same instant; their results."""
    go = threading.Barrier(len(actions))
    results: list[Any] = [None] * len(actions)

    def one(i: int) -> None:
        go.wait()
        results[i] = actions[i]()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(actions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def _move_and_answer(c: Client, move: str, ply: int) -> dict[str, Any]:
    c.send(type="move", move=move, ply=ply)
    return c.answer()


def _resign_and_wait(c: Client) -> dict[str, Any]:
    c.send(type="resign")
    return c.wait(lambda st: st["status"] == "over")


def test_two_servers_share_games_live_play_and_spectating(pg: str, servers: Callable[..., Server], load: Load) -> None:
    a, b = servers(pg), servers(pg)
    g = a.post("/api/games", {"mode": "online", "side": "south"}).json()
    south = Client(a.ws(g["id"]), g["token"])
    watcher_a = Client(a.ws(g["id"]))
    joined = b.post(f"/api/games/{g['id']}/join", {"invite": g["invite"]})
    assert joined.status_code == 200, joined.text
    # the creator's process hears of the join made on the other process
    south.wait(lambda st: st["status"] == "playing", 5)
    north = Client(b.ws(g["id"]), joined.json()["token"])
    watcher_b = Client(b.ws(g["id"]))
    assert b.get(f"/api/games/{g['id']}")["status"] == "playing" == a.get(f"/api/games/{g['id']}")["status"]
    delays = []
    for ply in range(12):
        mover, other = (south, north) if ply % 2 == 0 else (north, south)
        st = mover.wait(lambda s, p=ply: s["ply"] == p)  # type: ignore[misc]
        t0 = time.monotonic()
        mover.send(type="move", move=legal(st, ply), ply=ply)
        assert mover.answer()["type"] == "ack"
        other.wait(lambda s, p=ply: s["ply"] > p, 5)  # type: ignore[misc]
        delays.append(time.monotonic() - t0)
        for w in (watcher_a, watcher_b):
            w.wait(lambda s, p=ply: s["ply"] > p, 5)  # type: ignore[misc]
        if other.state["status"] != "playing":
            break
    assert not south.errors and not north.errors
    last = south.state["ply"]
    for c in (south, north, watcher_a, watcher_b):
        c.wait(lambda s: s["ply"] == last)
    assert watcher_a.state["moves"] == watcher_b.state["moves"] == north.state["moves"] == south.state["moves"]
    assert stored(pg, g["id"]).moves == south.state["moves"]
    # a correctness bound (an idle machine's, scaled by the load measured in this run); `jericho loadtest`
    # measures the latency
    assert max(delays) < 2.0 * load.measure(), (delays, load.factor)
    north.send(type="resign")
    for c in (south, north, watcher_a, watcher_b):
        c.wait(lambda s: s["status"] == "over" and s["reason"] == "resign", 5)


def test_racers_on_one_ply_across_processes_exactly_one_wins(pg: str, servers: Callable[..., Server]) -> None:
    a, b = servers(pg), servers(pg)
    for _round in range(3):
        g = a.post("/api/games", {"mode": "hotseat"}).json()
        racers = [Client((a if i % 2 else b).ws(g["id"]), g["token"]) for i in range(6)]
        st = racers[0].state
        moves = [legal(st, i) for i in range(len(racers))]
        answers = _together([lambda c=c, m=m: _move_and_answer(c, m, 0) for c, m in zip(racers, moves, strict=True)])
        kinds = [x.get("type") for x in answers]
        assert kinds.count("ack") == 1, answers
        losers = [x for x in answers if x.get("type") == "error"]
        assert {x["code"] for x in losers} == {"moved_on"}, losers
        assert all(x["game"]["ply"] >= 1 for x in losers)  # the loser gets the fresh state
        rec = stored(pg, g["id"])
        winner = answers[kinds.index("ack")]
        assert rec.moves == [winner["move"]] and rec.version == 1
        for c in racers:
            c.ws.close()


def test_resign_against_move_on_two_processes_never_loses_either(pg: str, servers: Callable[..., Server]) -> None:
    a, b = servers(pg), servers(pg)
    for _round in range(4):
        g = a.post("/api/games", {"mode": "hotseat"}).json()
        resigner, mover = Client(a.ws(g["id"]), g["token"]), Client(b.ws(g["id"]), g["token"])
        _, move_answer = _together(
            [
                lambda r=resigner: _resign_and_wait(r),
                lambda m=mover: _move_and_answer(m, legal(m.state), 0),
            ]
        )
        got = {"move": move_answer}
        rec = stored(pg, g["id"])
        assert rec.reason == "resign" and rec.result is not None, rec  # the resignation is never lost
        if got["move"]["type"] == "ack":  # the move came first: it is stored, and the resignation after it
            assert rec.moves == [got["move"]["move"]]
            assert rec.result == "south"  # north, to move after the move, resigned
        else:  # the resignation came first: no move after the end
            assert got["move"]["code"] in ("game_over", "moved_on") and rec.moves == []
            assert rec.result == "north"


def test_kill_9_of_a_server_its_clocks_and_ai_moves_are_taken_over(pg: str, servers: Callable[..., Server]) -> None:
    a = servers(pg, "--ai-delay", "3", "--ai-processes", "1", "--min-clock", "0.01")
    ai = a.post("/api/games", {"mode": "ai", "level": "random", "side": "north"}).json()
    deadline = time.monotonic() + 10
    while (a.get(f"/api/games/{ai['id']}").get("ai") or {}).get("status") != "thinking":
        assert time.monotonic() < deadline, "server A never took the AI job"
        time.sleep(0.05)
    b = servers(pg, "--ai-delay", "0")
    clocked = a.post("/api/games", {"mode": "hotseat", "clock": 0.05}).json()  # 3 s a side (a's floor: 0.01)
    player = Client(a.ws(clocked["id"]), clocked["token"])
    for ply in (0, 1):  # South's clock runs once both sides have made their first move (issue 52)
        st = player.wait(lambda s, ply=ply: s["ply"] >= ply)
        player.send(type="move", move=legal(st), ply=ply)
        assert player.answer()["type"] == "ack"
    watcher = Client(b.ws(clocked["id"]))
    ai_processes = _children(a.proc.pid)
    assert ai_processes, "server A thinks in child processes"
    a.stop(signal.SIGKILL)  # mid-thought, holding the AI job and the clock's timer
    killed_at = time.monotonic()
    st = watcher.wait(lambda s: s["status"] == "over", 15)
    assert st["reason"] == "time" and st["result"] == "north" and st["clock"]["south"] == 0
    ai_state = Client(b.ws(ai["id"]), ai["token"]).wait(lambda s: s["ply"] >= 1, 20)
    assert ai_state["turn"] == "north" and not ai_state["ai_thinking"]
    assert time.monotonic() - killed_at < 20
    assert stored(pg, ai["id"]).moves == ai_state["moves"]
    while any(Path(f"/proc/{pid}").exists() for pid in ai_processes):  # A's AI processes follow it
        assert time.monotonic() - killed_at < 20, "AI processes outlived their killed server"
        time.sleep(0.2)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def test_jericho_worker_runs_the_ai_moves_of_the_servers(pg: str, servers: Callable[..., Server]) -> None:
    web = servers(pg, "--ai-processes", "-1", "--ai-delay", "0")  # no AI in the web process
    g = web.post("/api/games", {"mode": "ai", "level": "random", "side": "north"}).json()
    time.sleep(0.5)
    st = web.get(f"/api/games/{g['id']}")
    assert st["ply"] == 0 and st["ai"] == {"status": "queued", "position": 1}  # nobody to think yet
    env = dict(os.environ, PYTHONPATH=SRC)
    cmd = [sys.executable, "-m", "jericho_game", "worker", "--db", pg, "--processes", "1", "--ai-delay", "0"]
    worker = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert worker.stdout is not None and "worker" in worker.stdout.readline()
        me = Client(web.ws(g["id"]), g["token"])
        st = me.wait(lambda s: s["ply"] == 1, 20)
        me.send(type="move", move=legal(st), ply=1)
        assert me.answer()["type"] == "ack"
        st = me.wait(lambda s: s["ply"] >= 3 or s["status"] == "over", 20)
        assert stored(pg, g["id"]).moves == st["moves"]
    finally:
        finish(worker, timeout=15)
    assert worker.returncode == 0


def test_jericho_worker_and_several_workers_refuse_sqlite(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=SRC)
    db = str(tmp_path / "g.sqlite3")
    for args in (["worker", "--db", db], ["serve", "--db", db, "--workers", "2"]):
        out = subprocess.run([sys.executable, "-m", "jericho_game", *args], capture_output=True, text=True, env=env)
        assert out.returncode == 2 and "PostgreSQL" in out.stdout, out


_SMALL_BUFFERS_SERVER = """
import socket, sys, uvicorn
from jericho_game.web.server import Limits, create_app
sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)  # inherited by accepted sockets
sock.bind(("127.0.0.1", 0))
sock.listen(64)
print("ready", sock.getsockname()[1], flush=True)
app = create_app(sys.argv[1], limits=Limits(send_timeout=SEND_TIMEOUT, rate=1000, burst=1000), ai_processes=-1)
uvicorn.run(app, fd=sock.fileno(), log_level="warning")
"""


#: The small-buffers server's send timeout: a move held up behind the stuck reader would take at least this.
SEND_TIMEOUT = 2.0


@pytest.mark.timing
def test_a_client_that_never_reads_is_closed_and_slows_nobody(tmp_path: Path, load: Load) -> None:
    """A spectator that never reads: the server's socket buffers are kept small (as a busy server's
    would be full) so that its sends block after a few states; the player's updates do not wait.
    No move takes 1 s on an idle machine (a few ms each), a bound scaled by the load measured in this
    run but kept below the send timeout, which a move held up behind the stuck reader would take."""
    env = dict(os.environ, PYTHONPATH=SRC)
    server = _SMALL_BUFFERS_SERVER.replace("SEND_TIMEOUT", repr(SEND_TIMEOUT))
    cmd = [sys.executable, "-c", server, str(tmp_path / "g.sqlite3")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("ready"), line
        port = int(line.split()[1])
        threading.Thread(target=proc.stdout.read, daemon=True).start()
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                g = httpx.post(base + "/api/games", json={"mode": "hotseat"}, timeout=2).json()
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        stuck = socket.socket()
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(("127.0.0.1", port))
        stuck.sendall(
            f"GET /ws/{g['id']} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )  # ... and never reads a byte
        player = Client(open_ws(f"ws://127.0.0.1:{port}/ws/{g['id']}"), g["token"])
        player.wait(lambda st: st["watchers"] == 1)
        worst, closed_at, closed_ply = 0.0, None, 0
        t_start = time.monotonic()
        for ply in range(150):
            st = player.state
            if st["status"] != "playing":
                break
            t0 = time.monotonic()
            player.send(type="move", move=legal(st, ply), ply=st["ply"])
            assert player.answer()["type"] == "ack"
            player.wait(lambda s, p=st["ply"]: s["ply"] > p)  # type: ignore[misc]
            worst = max(worst, time.monotonic() - t0)
            if player.state["watchers"] == 0 and closed_at is None:
                closed_at, closed_ply = time.monotonic() - t_start, ply
            if closed_at is not None and ply >= closed_ply + 10:  # ten moves after the close: nothing more to see
                break
        if closed_at is None:  # the game ended first: the stuck reader is closed at the latest now
            player.send(type="hello", token=g["token"])
            player.wait(lambda s: s["watchers"] == 0, 5)
        # never held up by the stuck reader (a correctness bound, not a benchmark)
        assert worst < min(1.0 * load.measure(), 0.9 * SEND_TIMEOUT), (worst, load.factor)
        assert player.state["watchers"] == 0  # it fell behind by more than the send timeout: closed
        stuck.close()
    finally:
        finish(proc, timeout=10)


def test_x_forwarded_for_is_trusted_only_from_the_named_proxies(tmp_path: Path, servers: Callable[..., Server]) -> None:
    db = str(tmp_path / "g.sqlite3")
    plain = servers(db, "--max-creates-per-minute", "2")
    proxied = servers(db, "--max-creates-per-minute", "2", "--forwarded-allow-ips", "127.0.0.1")
    for srv, third in ((plain, 429), (proxied, 201)):
        codes = [
            httpx.post(srv.url + "/api/games", json={"mode": "hotseat"}, headers={"X-Forwarded-For": f"10.0.0.{i}"})
            for i in range(3)
        ]
        # by default the header is ignored (all three come from 127.0.0.1); behind a named proxy,
        # each forwarded address has its own allowance
        assert [r.status_code for r in codes] == [201, 201, third], srv.url


def test_serve_workers_runs_several_processes_on_one_port(pg: str, servers: Callable[..., Server]) -> None:
    srv = servers(pg, "--workers", "2", "--ai-processes", "-1")
    pids = set()
    for _ in range(60):  # a fresh connection each time: the kernel spreads them over the processes
        pids.add(httpx.get(srv.url + "/healthz", headers={"Connection": "close"}).json()["pid"])
        if len(pids) == 2:
            break
    assert len(pids) == 2, pids
    g = srv.post("/api/games", {"mode": "hotseat"}).json()
    for ply in range(6):  # each move on a new connection, whichever process takes it
        c = Client(srv.ws(g["id"]), g["token"])
        st = c.wait(lambda s, p=ply: s["ply"] == p)  # type: ignore[misc]
        c.send(type="move", move=legal(st, ply), ply=ply)
        assert c.answer()["type"] == "ack"
        c.ws.close()
    assert len(stored(pg, g["id"]).moves) == 6


def test_the_postgres_broker_hears_every_process_and_survives_a_lost_connection(pg: str) -> None:
    import asyncio

    import psycopg

    from jericho_game.web.storage.broker import PostgresBroker
    from jericho_game.web.storage.database import GameRecord

    async def scenario() -> list[tuple[str, int]]:
        heard: list[tuple[str, int]] = []
        broker = PostgresBroker(pg)
        await broker.start(on_change=lambda gid, v: heard.append((gid, v)))
        store = Storage(pg)  # another "process": its writes reach the broker only through NOTIFY
        try:
            store.create(GameRecord(id="brk1", mode="hotseat", south_token="t", north_token="t"))
            with store.write("brk1") as tx:
                rec = tx.load()
                tx.save(rec)
            for _ in range(100):
                if ("brk1", 1) in heard:
                    break
                await asyncio.sleep(0.02)
            # the listening connection dies: the broker reconnects and says "anything may have changed"
            async with await psycopg.AsyncConnection.connect(broker.conninfo, autocommit=True) as admin:
                await admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()"
                )
            for _ in range(200):
                if ("*", 0) in heard:
                    break
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.1)
            with store.write("brk1") as tx:
                tx.save(tx.load())
            for _ in range(100):
                if ("brk1", 2) in heard:
                    break
                await asyncio.sleep(0.02)
        finally:
            await broker.close()
            store.close()
        return heard

    heard = asyncio.run(scenario())
    assert ("brk1", 0) in heard and ("brk1", 1) in heard  # the creation and the change
    assert ("*", 0) in heard and ("brk1", 2) in heard  # the reconnection, then live again


def test_an_online_rematch_waits_for_each_first_move_on_different_processes(
    pg: str, servers: Callable[..., Server]
) -> None:
    """Issue 52: a rematch begins at once (before it, its clock started once both had opened it);
    no clock runs before its side's first move, as both processes show."""
    a, b = servers(pg), servers(pg)
    g = a.post("/api/games", {"mode": "online", "side": "south", "clock": 1}).json()
    north_token = b.post(f"/api/games/{g['id']}/join", {"invite": g["invite"]}).json()["token"]
    north = Client(b.ws(g["id"]), north_token)
    north.send(type="resign")
    north.wait(lambda st: st["status"] == "over")
    north.send(type="rematch")
    new_id = None
    while new_id is None:
        msg = north.pump(10)
        assert msg is not None
        new_id = msg.get("id") if msg["type"] == "rematch" else None
    first = Client(b.ws(new_id), north_token)  # the old North holds South now, on process B
    st = a.get(f"/api/games/{new_id}")
    assert st["clock"]["running"] is None and st["first_move"]["side"] == "south"
    second = Client(a.ws(new_id), g["token"])  # the old South, on process A
    first.send(type="move", move=legal(first.state), ply=0)
    st = second.wait(lambda s: s["ply"] >= 1)
    assert st["clock"]["running"] is None and st["first_move"]["side"] == "north"  # North's waits
    assert st["clock"]["south"] == 60  # South's first move cost nothing
    second.send(type="move", move=legal(st), ply=1)
    st = first.wait(lambda s: s["ply"] >= 2)
    assert st["clock"]["running"] == "south" and st["first_move"] is None and st["clock"]["north"] == 60
    second.wait(lambda s: s["ply"] >= 2 and s["clock"]["running"] == "south", 5)
