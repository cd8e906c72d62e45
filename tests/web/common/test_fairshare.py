"""Fair share (issue 22, docs/web.md "Limits and quotas"): no client can lock players out of their
games, fill the lobby, or starve other clients' AI replies and reviews.

The audit's attacks, replayed against real ``jericho serve`` processes on loopback: distinct client
addresses are distinct loopback sources (127.0.0.x, every one of them is this machine), so the
server sees them as the audit's separate clients.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.common.fairshare import SocketCaps  # noqa: E402
from jericho_game.web.learn.review import ReviewStore  # noqa: E402
from jericho_game.web.server import Limits, create_app  # noqa: E402
from jericho_game.web.storage.database import GameRecord, QuotaFull, Storage, resolve_db_url  # noqa: E402
from tests.helpers import Load, open_ws  # noqa: E402
from tests.web import test_multiprocess  # noqa: E402
from tests.web.processes import finish  # noqa: E402
from tests.web.test_multiprocess import Server  # noqa: E402
from tests.web.test_server import connect, create, seat, stored_moves  # noqa: E402

pg = test_multiprocess.pg
servers = test_multiprocess.servers

FAST = Limits(rate=1000.0, burst=1000)


# -- helpers: clients from chosen loopback addresses ------------------------------------------------------


def http(address: str) -> httpx.Client:
    """An HTTP client whose connections come from ``address`` (a 127.0.0.x loopback address)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=20)


def ws_from(server: Server, path: str, address: str) -> ClientConnection:
    """A WebSocket to ``path`` on ``server`` from ``address``.  Its incoming buffer is unbounded: the
    tests leave most broadcasts unread, and a full buffer would stop the client from reading the
    server's answer to its close."""
    url = f"ws://127.0.0.1:{server.port}{path}"
    return open_ws(url, source_address=(address, 0), open_timeout=20, max_queue=None)


def first(ws: ClientConnection, timeout: float = 20.0) -> dict[str, Any]:
    """The first message the server sends on ``ws``, or ``{"closed": code}`` when it closed instead."""
    try:
        msg: dict[str, Any] = json.loads(ws.recv(timeout=timeout))
        return msg
    except ConnectionClosed as exc:
        return {"closed": exc.rcvd.code if exc.rcvd else None}


def until(ws: ClientConnection, pred: Callable[[dict[str, Any]], bool], timeout: float = 30.0) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while True:
        left = end - time.monotonic()
        assert left > 0, "the awaited message never came"
        msg: dict[str, Any] = json.loads(ws.recv(timeout=left))
        if pred(msg):
            return msg


def seated(msg: dict[str, Any]) -> bool:
    """The answer to a hello with a seat's token: a welcome to a seat, or an error."""
    return msg["type"] == "error" or (msg["type"] == "welcome" and msg["role"] != "spectator")


def closed_code(ws: ClientConnection, timeout: float = 20.0) -> int | None:
    """Read until the server closes ``ws``: its close code (fails if it stays open)."""
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            ws.recv(timeout=end - time.monotonic())
    except ConnectionClosed as exc:
        return exc.rcvd.code if exc.rcvd else None
    except TimeoutError:
        pass
    raise AssertionError("the server kept the connection open")


def legal(st: dict[str, Any], k: int = 0) -> str:
    moves = [f"{p}@{c}" for p, cells in sorted(st["legal"].items()) for c in cells]
    return moves[k % len(moves)]


# -- 1. a seat holder is never refused -------------------------------------------------------------------


def test_the_audits_63_watchers_no_longer_lock_the_joiner_out(tmp_path: Any, servers: Any) -> None:
    """The audit: 63 anonymous sockets on a rated 1-minute game made the joiner get ``full`` (1013)
    and lose on time.  Now one address holds at most 16 sockets that hold no seat (default)."""
    server = servers(str(tmp_path / "g.sqlite3"), "--ai-processes", "-1")
    with http("127.0.0.1") as creator:
        g = creator.post(server.url + "/api/games", json={"mode": "online", "side": "south", "clock": 1}).json()
    gid = g["id"]
    south = ws_from(server, f"/ws/{gid}", "127.0.0.1")  # the creator waits at the board
    south.send(json.dumps({"type": "hello", "token": g["token"]}))
    assert until(south, seated)["role"] == "south"
    flood = [ws_from(server, f"/ws/{gid}", "127.0.0.9") for _ in range(63)]
    answers = [first(ws) for ws in flood]
    with http("127.0.0.2") as joiner:
        north = joiner.post(f"{server.url}/api/games/{gid}/join", json={"invite": g["invite"]}).json()
    player = ws_from(server, f"/ws/{gid}", "127.0.0.2")
    assert first(player).get("type") == "welcome"  # before: {"code": "full"} and closed (1013)
    player.send(json.dumps({"type": "hello", "token": north["token"]}))
    assert until(player, seated)["role"] == "north"
    # the flooding address got 16 sockets, and a coded refusal for the others
    assert sum(1 for a in answers if a.get("type") == "welcome") == 16
    refused = [a for a in answers if a.get("code") == "too_many_connections"]
    assert len(refused) == 47 and "address" in refused[0]["message"]
    for ws in [*flood, player, south]:
        ws.close()


def test_watchers_from_many_addresses_fill_the_game_and_its_players_still_get_in(tmp_path: Any, servers: Any) -> None:
    """Watchers from many addresses fill the game: a player's socket is still let in by its seat
    (held on probation until its hello), a further watcher is refused with ``full``."""
    server = servers(
        str(tmp_path / "g.sqlite3"), "--ai-processes", "-1", "--max-watchers", "6", "--ws-per-address", "4",
        "--seat-grace", "1",
    )  # fmt: skip
    with http("127.0.0.1") as creator:
        g = creator.post(server.url + "/api/games", json={"mode": "online", "side": "south", "clock": 1}).json()
    gid = g["id"]
    watchers = [ws_from(server, f"/ws/{gid}", f"127.0.0.{10 + i // 3}") for i in range(6)]
    assert all(first(ws).get("type") == "welcome" for ws in watchers)
    with http("127.0.0.2") as joiner:
        north = joiner.post(f"{server.url}/api/games/{gid}/join", json={"invite": g["invite"]}).json()
    player = ws_from(server, f"/ws/{gid}", "127.0.0.2")
    player.send(json.dumps({"type": "hello", "token": north["token"]}))
    assert until(player, seated)["role"] == "north"
    south = ws_from(server, f"/ws/{gid}", "127.0.0.10")  # from a watcher's address: seats count in no cap
    south.send(json.dumps({"type": "hello", "token": g["token"]}))
    assert until(south, seated)["role"] == "south"
    # presence is written by a thread of its own and read back from the database, so a state may
    # count the watchers before all six writes landed (seen under load): the count must get there
    st = until(
        south,
        lambda m: m["type"] == "state" and m["game"]["seats"]["north"]["present"] and m["game"]["watchers"] == 6,
    )["game"]
    assert st["seats"]["south"]["present"]  # (until fails the test if the count never gets to 6)
    late = ws_from(server, f"/ws/{gid}", "127.0.0.20")  # a seventh watcher: held, then `full`
    msg = first(late)
    assert msg.get("code") == "full" and "players always get in" in msg["message"]
    assert closed_code(late) == 1013
    watchers[0].close()  # a watcher leaving makes room again
    time.sleep(0.5)
    again = ws_from(server, f"/ws/{gid}", "127.0.0.20")
    assert first(again).get("type") == "welcome"
    for ws in [*watchers, player, south, again]:
        ws.close()


def test_the_lobby_is_capped_per_address(tmp_path: Any, servers: Any) -> None:
    """The audit: 1,000 idle lobby sockets made every other visitor get ``full``.  Now one address
    holds at most 8 (default)."""
    server = servers(str(tmp_path / "g.sqlite3"), "--ai-processes", "-1")
    flood = [ws_from(server, "/lobby/ws", "127.0.0.9") for _ in range(12)]
    answers = [first(ws) for ws in flood]
    assert [a.get("type") for a in answers].count("lobby") == 8
    assert [a.get("code") for a in answers].count("too_many_connections") == 4
    visitor = ws_from(server, "/lobby/ws", "127.0.0.2")
    assert first(visitor).get("type") == "lobby"
    for ws in [*flood, visitor]:
        ws.close()


def test_socket_caps_count_addresses_and_accounts_apart() -> None:
    caps = SocketCaps(per_address=2, per_account=2)
    assert caps.take("a", 7) and caps.take("b", 7)
    assert not caps.take("c", 7)  # the account is at its cap, whatever the address
    assert caps.take("c", None) and caps.take("a", None)
    assert not caps.take("a", None)  # the address is at its cap (a: 7 and one anonymous)
    caps.give("a", 7)
    assert caps.take("a", 8)
    for addr, acc in (("a", 8), ("a", None), ("b", 7), ("c", None)):
        caps.give(addr, acc)
    assert caps.addresses == {} and caps.accounts == {}  # nothing left behind


# -- 2. quotas per client: AI jobs, reviews, seeks ----------------------------------------------------------


def test_a_client_may_have_two_ai_games_waiting_then_gets_a_coded_error(db: str) -> None:
    """No AI runs here (ai_processes=-1): jobs wait.  The audit's client queued 64 master games."""
    with TestClient(create_app(db, limits=FAST, ai_processes=-1)) as c:
        create(c, mode="ai", level="random", side="north")  # the AI (south) moves first: a job
        create(c, mode="ai", level="random", side="north")
        r = c.post("/api/games", json={"mode": "ai", "level": "random", "side": "north"})
        assert r.status_code == 429 and r.json()["error"] == "ai_quota"
        assert "2" in r.json()["message"] and "nothing was changed" in r.json()["message"]
        human_first = create(c, mode="ai", level="random", side="south")  # no job needed yet: allowed
        with connect(c, human_first["id"]) as raw:
            ws = seat(raw, human_first["token"], "south")
            ws.send(type="move", move="5R@d2", ply=0)
            assert ws.error()["code"] == "ai_quota"
        assert stored_moves(db, human_first["id"]) == []  # refused: nothing changed
        s = Storage(resolve_db_url(db))
        try:
            assert s.waiting_jobs() == 2
        finally:
            s.close()


def test_review_requests_have_a_quota_per_client(db: str) -> None:
    with TestClient(create_app(db, limits=FAST, ai_processes=-1)) as c:
        ids = []
        for _ in range(3):
            g = create(c, mode="hotseat")
            with connect(c, g["id"]) as raw:
                ws = seat(raw, g["token"], "both")
                ws.send(type="resign")
                ws.until("state", lambda m: m["game"]["status"] == "over")
            ids.append(g["id"])
        assert c.post(f"/api/games/{ids[0]}/review").status_code == 202
        assert c.post(f"/api/games/{ids[1]}/review").status_code == 202
        r = c.post(f"/api/games/{ids[2]}/review")
        assert r.status_code == 429 and r.json()["error"] == "review_quota"
        assert c.get(f"/api/games/{ids[2]}/review").json()["status"] == "none"  # nothing queued


def test_open_seeks_have_a_quota_per_client(db: str) -> None:
    """The audit: 500 seeks from 10 addresses filled the lobby's 100 entries."""
    with TestClient(create_app(db, limits=FAST, ai_processes=-1)) as c:
        for _ in range(3):
            create(c, mode="online", public=True, name="Ann")
        r = c.post("/api/games", json={"mode": "online", "public": True, "name": "Ann"})
        assert r.status_code == 429 and r.json()["error"] == "seek_quota"
        assert len(c.get("/api/lobby").json()["seeks"]) == 3
        create(c, mode="online")  # a private invitation is not a seek


def test_seek_and_ai_quotas_hold_across_two_server_processes(pg: str, servers: Any) -> None:
    """The counts are in the database: two processes, one client, still three seeks and two AI games."""
    a = servers(pg, "--ai-processes", "-1", "--max-creates-per-minute", "1000")
    b = servers(pg, "--ai-processes", "-1", "--max-creates-per-minute", "1000")
    seek = {"mode": "online", "public": True, "name": "Ann"}
    ai_first = {"mode": "ai", "level": "random", "side": "north"}
    with http("127.0.0.5") as client:
        seeks = [client.post((a if i % 2 else b).url + "/api/games", json=seek).status_code for i in range(8)]
        ais = [client.post((a if i % 2 else b).url + "/api/games", json=ai_first).status_code for i in range(6)]
    assert seeks.count(201) == 3 and seeks.count(429) == 5
    assert ais.count(201) == 2 and ais.count(429) == 4
    with http("127.0.0.6") as other:  # another client is not affected
        assert other.post(a.url + "/api/games", json=seek).status_code == 201


# -- fair scheduling: the addresses take turns ------------------------------------------------------------


def test_claims_take_turns_between_addresses(db: str) -> None:
    s = Storage(resolve_db_url(db))
    try:
        for i in range(4):  # address A's jobs are all older than B's
            rec = GameRecord(id=f"a{i}", mode="ai", ai_side="south", ai_level="random", address="10.0.0.1")
            s.create(rec, job_level="random")
            time.sleep(0.01)
        s.create(
            GameRecord(id="b0", mode="ai", ai_side="south", ai_level="random", address="10.0.0.2"), job_level="random"
        )
        assert s.claim_job("w", 30.0).game_id == "a0"
        # A has one being thought about, B none: B's job goes next although it is the newest
        assert s.claim_job("w", 30.0).game_id == "b0"
        assert s.claim_job("w", 30.0, idle_clients_only=True) is None  # both busy now
        assert s.claim_job("w", 30.0).game_id == "a1"
    finally:
        s.close()


def _victim_latencies(server: Server, n: int) -> list[float]:
    """A victim (127.0.0.2) plays ``n`` moves against the ``random`` AI on ``server``: the seconds
    from each move to the AI's reply, the first left out (it may wait for the AI processes to
    start, which is no queue's doing)."""
    with http("127.0.0.2") as victim:
        g = victim.post(server.url + "/api/games", json={"mode": "ai", "level": "random", "side": "south"})
        assert g.status_code == 201, g.text
        game = g.json()
    ws = ws_from(server, f"/ws/{game['id']}", "127.0.0.2")
    ws.send(json.dumps({"type": "hello", "token": game["token"]}))
    st = until(ws, lambda m: m["type"] == "state" and m["game"]["turn"] == "south" and bool(m["game"]["legal"]))
    took = []
    for _ in range(n):
        ply = st["game"]["ply"]
        started = time.monotonic()
        ws.send(json.dumps({"type": "move", "move": legal(st["game"]), "ply": ply}))

        def replied(m: dict[str, Any], ply: int = ply) -> bool:
            return m["type"] == "state" and (m["game"]["ply"] >= ply + 2 or m["game"]["status"] == "over")

        st = until(ws, replied, 60)
        took.append(time.monotonic() - started)
        if st["game"]["status"] == "over":
            break
    ws.close()
    return took[1:]


def _calm_then_attacked(victim_server: Server, attacker_server: Server) -> tuple[list[float], list[float]]:
    """The victim's reply times alone, then while one client (127.0.0.9) keeps creating expensive
    AI-first games (``expert``) as fast as it is let; asserts the attacker was told its quota."""
    calm = _victim_latencies(victim_server, 6)
    stop = threading.Event()
    refused: list[int] = []

    def attack() -> None:
        with http("127.0.0.9") as attacker:
            while not stop.is_set():
                body = {"mode": "ai", "level": "expert", "side": "north"}
                r = attacker.post(attacker_server.url + "/api/games", json=body)
                if r.status_code != 201:
                    refused.append(r.status_code)
                stop.wait(0.2)

    t = threading.Thread(target=attack, daemon=True)
    t.start()
    try:
        time.sleep(2.0)  # the attacker's jobs are queued and being thought about
        attacked = _victim_latencies(victim_server, 6)
        # on a loaded machine the attacker may not have reached its quota yet: it goes on until told
        # (once failed in a fresh clone: no refusal within the victim's measurements)
        deadline = time.monotonic() + 30
        while not refused and t.is_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop.set()
        t.join(30)
    # the attacker was told it is over its quota (429), or that the expensive lane is full (503 ai_full)
    assert refused and set(refused) <= {429, 503}
    return calm, attacked


def test_a_burst_of_one_client_does_not_delay_another_clients_ai_reply(tmp_path: Any, servers: Any) -> None:
    """The audit's attack: one client keeps the AI busy with expensive games while a victim plays.
    The victim's AI replies (random level, 1 s floor) stay within 2x of their calm latency.
    Before: one queue for all, the victim waited behind every job of the attacker (17.5 s)."""
    server = servers(str(tmp_path / "g.sqlite3"), "--ai-processes", "2", "--ai-delay", "1.0")
    calm, attacked = _calm_then_attacked(server, server)
    assert max(attacked) <= 2 * max(calm), (calm, attacked, statistics.median(attacked))


def test_fair_turns_hold_across_servers_and_a_jericho_worker(pg: str, servers: Any) -> None:
    """The same attack on two servers of one PostgreSQL database whose AI runs in a ``jericho
    worker``: the turns are taken in the database, whichever process claims."""
    victim_server = servers(pg, "--ai-processes", "-1")
    attacker_server = servers(pg, "--ai-processes", "-1")
    env = dict(os.environ, PYTHONPATH=test_multiprocess.SRC)
    cmd = [sys.executable, "-m", "jericho_game", "worker", "--db", pg, "--processes", "2", "--ai-delay", "1.0"]
    worker = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert worker.stdout is not None and "worker" in worker.stdout.readline()
        threading.Thread(target=worker.stdout.read, daemon=True).start()  # never blocks on a full pipe
        calm, attacked = _calm_then_attacked(victim_server, attacker_server)
    finally:
        finish(worker, timeout=30)
    assert max(attacked) <= 2 * max(calm), (calm, attacked, statistics.median(attacked))


def test_quotas_count_an_account_from_any_address(db: str) -> None:
    """An account's AI games and seeks count together wherever it plays from (sock puppets of one
    account on several addresses, or one account behind several proxies)."""
    s = Storage(resolve_db_url(db))
    try:
        for i, addr in enumerate(("10.0.0.1", "10.0.0.2")):
            rec = GameRecord(id=f"ai{i}", mode="ai", ai_side="north", ai_level="random", south_account=7, address=addr)
            s.create(rec, job_level="random", max_client_jobs=2)
        third = GameRecord(id="ai2", mode="ai", ai_side="north", ai_level="random", south_account=7, address="10.0.0.3")
        with pytest.raises(QuotaFull) as exc:
            s.create(third, job_level="random", max_client_jobs=2)
        assert exc.value.what == "ai" and s.load("ai2") is None  # nothing stored
        anonymous = GameRecord(id="ai3", mode="ai", ai_side="north", ai_level="random", address="10.0.0.3")
        s.create(anonymous, job_level="random", max_client_jobs=2)  # the address itself is under quota
        for i in range(2):
            seek = GameRecord(
                id=f"s{i}", mode="online", public=True, south_token="t", south_account=7, address=f"10.1.0.{i}"
            )
            s.create(seek, max_client_seeks=2)
        with pytest.raises(QuotaFull):
            s.create(
                GameRecord(id="s2", mode="online", public=True, south_token="t", south_account=7), max_client_seeks=2
            )
    finally:
        s.close()


def test_review_claims_take_turns_between_addresses(db: str) -> None:
    s = Storage(resolve_db_url(db))
    store = ReviewStore(s)
    try:
        for i in range(3):
            store.insert(f"a{i}", None, ["5R@d2"], 10, 1.0, 16, "10.0.0.1", None, 5)
            time.sleep(0.01)
        store.insert("b0", None, ["5R@d2"], 10, 1.0, 16, "10.0.0.2", None, 5)
        claimed = store.claim("w", 30.0)
        assert claimed is not None and claimed.game_id == "a0"
        claimed = store.claim("w", 30.0)  # A has one running, B none: B's although it is the newest
        assert claimed is not None and claimed.game_id == "b0"
    finally:
        s.close()


# -- issue 33, item 1: many addresses; lanes, weights and the admission of expensive AI games ---------------


def test_an_ipv6_64_and_a_configured_ipv4_prefix_count_as_one_client() -> None:
    from jericho_game.web.common.fairshare import client_group

    a = client_group("2001:db8:1:2:aaaa::1")
    assert a == client_group("2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64"
    assert client_group("2001:db8:1:3::1") != a  # the next /64 is another client
    assert client_group("[2001:db8:1:2::9]") == a
    assert client_group("127.0.0.5") == "127.0.0.5" != client_group("127.0.0.6")  # IPv4: /32 by default
    assert client_group("::ffff:127.0.0.5") == "127.0.0.5"  # an IPv4-mapped address is the IPv4 one
    assert client_group("10.1.2.3", 24) == client_group("10.1.2.200", 24) == "10.1.2.0/24"
    assert client_group("testclient") == "testclient" and client_group("?") == "?"


def test_the_ipv4_prefix_flag_is_checked() -> None:
    from jericho_game.web.common import fairshare

    assert fairshare.settings({"ipv4_prefix": 24}) == {"ipv4_prefix": 24}
    with pytest.raises(ValueError, match="--ipv4-prefix must be between 8 and 32"):
        fairshare.settings({"ipv4_prefix": 33})


def _runner(s: Storage, slots: int = 2, cheap: int = 1) -> None:
    s.runner_beat("test-runner", slots, cheap)


def test_expensive_ai_games_are_admitted_by_their_cost_against_the_runners_slots(db: str) -> None:
    """Two AI slots hold 4 s each of thought per round of moves: two master games (3 s a move) are
    admitted, a third is refused with `ai_full` and nothing stored, an expert (1 s) still fits, and
    cheap levels have a lane, a slot and a budget of their own."""
    from jericho_game.web.common.fairshare import AIBudget
    from jericho_game.web.round.rooms import ClientError, GameService

    s = Storage(resolve_db_url(db))
    svc = GameService(s, ai_budget=AIBudget(), ai_per_client=2)
    try:
        _runner(s)
        for i in range(2):
            svc.create({"mode": "ai", "level": "master", "side": "north"}, f"10.0.0.{i + 1}")
        with pytest.raises(ClientError) as exc:
            svc.create({"mode": "ai", "level": "master", "side": "north"}, "10.0.0.3")
        assert exc.value.code == "ai_full" and exc.value.status == 503
        assert "master" in exc.value.message and "nothing was created" in exc.value.message
        assert s.count() == 2
        svc.create({"mode": "ai", "level": "expert", "side": "north"}, "10.0.0.4")  # 3 + 3 + 1 <= 8
        for i in range(20):  # the cheap lane: 1.5 s per cheap slot, easy costs 0.002 s
            svc.create({"mode": "ai", "level": "easy", "side": "south"}, f"10.0.1.{i}")
        # the claims: cheap jobs first (lane 0), then the expensive ones, oldest first within a lane
        rec = GameRecord(id="cheap1", mode="ai", ai_side="south", ai_level="easy", address="10.0.9.9")
        s.create(rec, job_level="easy", job_lane=0)
        assert s.claim_job("w", 30.0, lanes=(1,)).level in ("master", "expert")
        assert s.claim_job("w", 30.0).game_id == "cheap1"
        assert s.claim_job("w", 30.0, lanes=(0,)) is None  # the cheap slot takes nothing else
        # a new master game is refused while the runners' row is alive; with none alive nothing thinks
        s.runner_gone("test-runner")
        svc.create({"mode": "ai", "level": "master", "side": "north"}, "10.0.0.5")
    finally:
        s.close()


def test_a_long_wait_in_a_lane_refuses_new_games_of_that_lane_only(db: str) -> None:
    """The queue's measured wait: a job of the expensive lane waiting longer than the bound (a
    runner slower than its budget says, a loaded machine) refuses new expensive games at once."""
    from jericho_game.web.common.fairshare import AIBudget
    from jericho_game.web.round.rooms import ClientError, GameService

    s = Storage(resolve_db_url(db))
    svc = GameService(s, ai_budget=AIBudget(), ai_per_client=2)
    try:
        _runner(s, slots=8)
        rec = GameRecord(id="old", mode="ai", ai_side="south", ai_level="expert", address="10.0.0.1")
        s.create(rec, job_level="expert", job_lane=1)
        with s.engine.begin() as conn:
            conn.exec_driver_sql(f"UPDATE ai_jobs SET created_at = {time.time() - 30}")
        with pytest.raises(ClientError) as exc:
            svc.create({"mode": "ai", "level": "expert", "side": "north"}, "10.0.0.2")
        assert exc.value.code == "ai_full" and "wait" in exc.value.message
        svc.create({"mode": "ai", "level": "hard", "side": "north"}, "10.0.0.2")  # the cheap lane is not late
    finally:
        s.close()


def test_a_game_that_comes_back_over_budget_is_answered_in_the_deferred_lane(db: str) -> None:
    """A running game is never refused: an expensive game idle longer than `active` comes back while
    the lane is full; its move is queued, in the deferred lane, claimed after the admitted ones."""
    from jericho_game.web.common.fairshare import AIBudget
    from jericho_game.web.round.rooms import GameService

    s = Storage(resolve_db_url(db))
    svc = GameService(s, ai_budget=AIBudget(active=300.0), ai_per_client=2)
    try:
        _runner(s)
        room, reply = svc.create({"mode": "ai", "level": "master", "side": "south"}, "10.0.0.1")
        with s.engine.begin() as conn:  # idle for ten minutes
            conn.exec_driver_sql(f"UPDATE games SET updated_at = {time.time() - 600} WHERE id = '{room.rec.id}'")
        svc.rooms.clear()
        for i in range(2):  # meanwhile two others fill the lane
            svc.create({"mode": "ai", "level": "master", "side": "north"}, f"10.0.0.{i + 2}")
        import asyncio

        asyncio.run(svc.move(room.rec.id, frozenset({"south"}), "5R@d2", 0))
        with s.engine.begin() as conn:
            lanes = dict(conn.exec_driver_sql("SELECT game_id, lane FROM ai_jobs").fetchall())
        assert lanes[room.rec.id] == 2 and sorted(lanes.values()) == [1, 1, 2]
        claims = [s.claim_job("w", 30.0).game_id for _ in range(3)]
        assert claims[-1] == room.rec.id  # answered, after the admitted games
    finally:
        s.close()


def _bot(server: Server, game: dict[str, Any], address: str, stop: threading.Event) -> None:
    """An attacker's admitted game played as fast as the AI answers (each of its moves queues a master move)."""
    ws = ws_from(server, f"/ws/{game['id']}", address)
    try:
        ws.send(json.dumps({"type": "hello", "token": game["token"]}))
        while not stop.is_set():
            try:
                msg = json.loads(ws.recv(timeout=0.5))
            except TimeoutError:
                continue
            st = msg.get("game") if msg.get("type") == "state" else None
            if st and st["status"] == "playing" and st["turn"] == game["side"] and st["legal"]:
                ws.send(json.dumps({"type": "move", "move": legal(st), "ply": st["ply"]}))
            elif st and st["status"] == "over":
                return
    except ConnectionClosed:
        pass
    finally:
        ws.close()


def test_the_audits_32_address_attack_leaves_a_victims_easy_replies_in_the_bound(
    tmp_path: Any, servers: Any, load: Load
) -> None:
    """The audit (issue 33): 32 addresses asked for 96 `master` games (64 accepted, the victim's `easy`
    replies then took 94-96 s, queue place 63).  Now the expensive lane admits what its slots can
    answer in time: 2 AI processes hold 4 s each of thought per round of moves, so 2 master games
    (3 s a move) and every other request is refused with `ai_full`; the admitted ones are played as
    fast as the AI answers; and the victim's cheap moves have a lane and a slot of their own: the
    victim's job is never behind anyone (place 1 at most) and every reply comes within the bound
    (2 s stated; asserted with room for a loaded test machine, and scaled by the load measured in
    this run)."""
    db = str(tmp_path / "g.sqlite3")
    server = servers(db, "--ai-processes", "2", "--ai-delay", "0")
    store = Storage(resolve_db_url(db))
    try:
        end = time.monotonic() + 30
        while True:
            with store.reader.connect() as conn:
                if store.ai_capacity(conn, time.time()) == (2, 1):
                    break
            assert time.monotonic() < end, "the server's AI runner never said it was alive"
            time.sleep(0.1)
    finally:
        store.close()
    answers: list[tuple[str, int, dict[str, Any]]] = []
    lock = threading.Lock()

    def attacker(i: int) -> None:
        address = f"127.0.0.{10 + i}"
        with http(address) as c:
            for _ in range(3):
                r = c.post(server.url + "/api/games", json={"mode": "ai", "level": "master", "side": "north"})
                with lock:
                    answers.append((address, r.status_code, r.json()))

    threads = [threading.Thread(target=attacker, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(answers) == 96
    admitted = [(a, body) for a, code, body in answers if code == 201]
    refused = [body for _, code, body in answers if code != 201]
    assert 1 <= len(admitted) <= 2, [b.get("error") for b in refused][:5]  # 2 slots x 4 s / 3 s per move
    assert {b["error"] for b in refused} <= {"ai_full", "ai_quota"} and "ai_full" in {b["error"] for b in refused}
    stop = threading.Event()
    bots = [threading.Thread(target=_bot, args=(server, g, a, stop), daemon=True) for a, g in admitted]
    for t in bots:
        t.start()
    try:
        time.sleep(1.0)  # the master moves are being thought about
        with http("127.0.0.2") as victim:
            r = victim.post(server.url + "/api/games", json={"mode": "ai", "level": "master", "side": "south"})
            assert r.status_code == 503 and r.json()["error"] == "ai_full"  # refused at once, not queued
        took, places = _victim_replies(server, "easy", 8)
    finally:
        stop.set()
        for t in bots:
            t.join(30)
    assert places and max(places) <= 1, places  # nobody's move is ever ahead of the victim's
    factor = load.measure()
    assert max(took) <= 10.0 * factor, (took, factor)  # the bound is 2 s; the audit measured 94-96 s
    assert statistics.median(took) <= 2.0 * factor, (took, factor)


def _victim_replies(server: Server, level: str, n: int) -> tuple[list[float], list[int]]:
    """The victim (127.0.0.2) plays ``n`` moves against ``level``: the seconds to each AI reply (the
    first left out: it may wait for an AI process to start) and the AI's places seen in the queue."""
    with http("127.0.0.2") as victim:
        g = victim.post(server.url + "/api/games", json={"mode": "ai", "level": level, "side": "south"})
        assert g.status_code == 201, g.text
        game = g.json()
    ws = ws_from(server, f"/ws/{game['id']}", "127.0.0.2")
    ws.send(json.dumps({"type": "hello", "token": game["token"]}))
    st = until(ws, lambda m: m["type"] == "state" and m["game"]["turn"] == "south" and bool(m["game"]["legal"]))
    took: list[float] = []
    places: list[int] = []
    for _ in range(n):
        ply = st["game"]["ply"]
        started = time.monotonic()
        ws.send(json.dumps({"type": "move", "move": legal(st["game"]), "ply": ply}))

        def replied(m: dict[str, Any], ply: int = ply) -> bool:
            if m["type"] == "state" and m["game"].get("ai"):
                places.append(int(m["game"]["ai"]["position"]))
            return m["type"] == "state" and (m["game"]["ply"] >= ply + 2 or m["game"]["status"] == "over")

        st = until(ws, replied, 60)
        took.append(time.monotonic() - started)
        if st["game"]["status"] == "over":
            break
    ws.close()
    return took[1:], places
