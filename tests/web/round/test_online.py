"""Online play people come back to (issue 12, points 1-4): names, the lobby, "my games", and the
fair endings (draw offers, takebacks, claims against an absent opponent, abort), on SQLite and
PostgreSQL; and hostile names, which are refused with ``bad_name`` or stay inert text."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.record import read_record, read_records  # noqa: E402
from jericho_game.web.common.names import check_name  # noqa: E402
from jericho_game.web.server import Limits, create_app  # noqa: E402
from tests.web.test_server import WS, connect, create, first_legal, seat  # noqa: E402


class Clock:
    """A wall clock the test moves by hand (the server's game clocks, presence and expiry read it)."""

    def __init__(self) -> None:
        self.t = 1_900_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def client(db: str, clock: Clock) -> Iterator[TestClient]:
    limits = Limits(claim_after=300.0, seek_idle=120.0, seek_max_age=3600.0)
    with TestClient(create_app(db, ai_processes=0, limits=limits, clock=clock)) as c:
        yield c


def seek(c: TestClient, name: str = "Ada", **spec: Any) -> dict[str, Any]:
    return create(c, mode="online", public=True, name=name, side=spec.pop("side", "south"), **spec)


def join(c: TestClient, game_id: str, **body: Any) -> Any:
    return c.post(f"/api/games/{game_id}/join", json=body)


def online_pair(c: TestClient, clock_min: float | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    g = seek(c, "Ada", **({"clock": clock_min} if clock_min else {}))
    j = join(c, g["id"], name="Brice")
    assert j.status_code == 200, j.text
    return g, j.json()


def stored_presence(c: TestClient, game_id: str, side: str, present: bool) -> None:
    """Wait until the presence table says ``side`` is (not) connected (the write is off the event loop)."""
    svc = c.app.state.service  # type: ignore[attr-defined]
    for _ in range(200):
        if svc.storage.presence(game_id, svc.now(), svc.presence_ttl).present[side] == present:
            return
        time.sleep(0.02)
    raise AssertionError(f"{side} never became {'present' if present else 'absent'} in the database")


def play(ws: WS, expect_ply: int) -> None:
    st = ws.state
    if st is None or st["ply"] != expect_ply:
        st = ws.until("state", lambda m: m["game"]["ply"] == expect_ply)["game"]
    ws.send(type="move", move=first_legal(st), ply=st["ply"])
    ws.until("ack")
    ws.until("state", lambda m: m["game"]["ply"] > expect_ply)


# -- 1. names -------------------------------------------------------------------------------------


HOSTILE_REFUSED = {
    "right-to-left override": "Ada\u202eevil",
    "left-to-right isolate": "\u2066Ada",
    "zero-width space": "A\u200bda",
    "zero-width joiner": "Ad\u200da",
    "byte order mark": "\ufeffAda",
    "NUL": "Ada\x00",
    "line feed": "Ada\nBrice",
    "escape sequence": "\x1b[31mAda",
    "line separator": "Ada\u2028",
    "paragraph separator": "Ada\u2029",
    "private use": "Ada\ue000",
    "unassigned": "Ada\u0378",
    "Hangul filler (draws nothing)": "\u3164",
    "braille blank": "\u2800\u2800",
    "only spaces": "   \u3000 ",
    "empty": "",
    "too long": "x" * 25,
    "not text": 42,
    "Zalgo": "A" + "\u0301" * 8,
    "starts with a combining mark": "\u0301Ada",
}
# printable, so allowed: they must stay inert text wherever they show
HOSTILE_INERT = [
    "<script>alert(1)</script>"[:24],
    '"><img src=x onerror=1>',
    "Robert'); DROP TABLE--",
    'Q"uote\\back\\"',
]


@pytest.mark.parametrize("what", sorted(HOSTILE_REFUSED))
def test_check_name_refuses_control_invisible_and_empty_names(what: str) -> None:
    with pytest.raises(ValueError) as err:
        check_name(HOSTILE_REFUSED[what])
    assert str(err.value)  # says what was wrong


def test_check_name_trims_normalises_and_keeps_printable_text() -> None:
    assert check_name("  Ada   Lovelace \u00a0") == "Ada Lovelace"
    assert check_name("Ame\u0301lie") == "Amélie"  # NFC: one character
    assert check_name("x" * 24) == "x" * 24
    assert check_name("李小龍") == "李小龍" and check_name("Zoë 🎲") == "Zoë 🎲"
    for name in HOSTILE_INERT:
        assert check_name(name) == name


def test_names_are_shown_to_opponent_spectators_and_in_the_record(client: TestClient) -> None:
    g, j = online_pair(client)
    with connect(client, g["id"]) as raw:
        watcher = seat(raw, None, "spectator")
        assert watcher.state is not None and watcher.state["names"] == {"south": "Ada", "north": "Brice"}
    rec = read_record(client.get(f"/api/games/{g['id']}/record").text)
    assert rec.tags["South"] == "Ada" and rec.tags["North"] == "Brice"


def test_hostile_names_are_refused_with_bad_name_and_change_nothing(client: TestClient) -> None:
    before = client.get("/api/lobby").json()
    for what, name in HOSTILE_REFUSED.items():
        r = client.post("/api/games", json={"mode": "online", "public": True, "name": name})
        # a NUL is refused wherever it is in a body, before any field is read (web/common/jsonin.py)
        code = "bad_request" if what == "NUL" else "bad_name"
        assert r.status_code == 400 and r.json()["error"] == code, (what, r.text)
        assert r.json()["message"] and ("NUL" in r.json()["message"] or code == "bad_name")
    assert client.get("/api/lobby").json()["seeks"] == before["seeks"]
    g = seek(client)
    for name in ("Bad\u202e", "", "x" * 30):
        r = join(client, g["id"], name=name)
        assert r.status_code == 400 and r.json()["error"] == "bad_name"
    assert client.get(f"/api/games/{g['id']}").json()["status"] == "waiting"  # the seat is still open
    # a bad name in hello is refused, and the seat is still held
    with connect(client, g["id"]) as raw:
        ws = WS(raw)
        ws.until("state")
        ws.send(type="hello", token=g["token"], name="A\u200bda")
        assert ws.until("welcome")["role"] == "south"
        assert ws.error()["code"] == "bad_name"


@pytest.mark.parametrize("name", HOSTILE_INERT)
def test_markup_in_names_stays_text_in_state_lobby_and_record(client: TestClient, name: str) -> None:
    g = seek(client, name)
    lobby = client.get("/api/lobby")
    assert lobby.headers["content-type"].startswith("application/json")
    assert [s["name"] for s in lobby.json()["seeks"]] == [name]
    j = join(client, g["id"], name=name[::-1][:24])
    assert j.status_code == 200, j.text
    state = client.get(f"/api/games/{g['id']}")
    assert state.headers["content-type"].startswith("application/json")
    assert state.json()["names"] == {"south": name, "north": name[::-1][:24]}
    text = client.get(f"/api/games/{g['id']}/record").text
    rec = read_record(text)  # quotes and backslashes are escaped, and come back as they were
    assert rec.tags["South"] == name and rec.tags["North"] == name[::-1][:24]
    # the page itself is static: no name is ever written into HTML by the server
    for path in ("/", f"/g/{g['id']}", "/games"):
        assert name not in client.get(path).text
    csp = client.get("/").headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]


def test_a_name_given_in_hello_fills_an_unnamed_seat_once(client: TestClient) -> None:
    g = create(client, mode="online", side="south")  # a private invite game, no name yet
    with connect(client, g["id"]) as raw:
        ws = WS(raw)
        ws.until("state")
        ws.send(type="hello", token=g["token"], name="  Ada  ")
        ws.until("state", lambda m: m["game"]["names"]["south"] == "Ada")
        ws.send(type="hello", token=g["token"], name="Someone else")
        ws.send(type="ping", ref="p")
        ws.until("pong")
    assert client.get(f"/api/games/{g['id']}").json()["names"]["south"] == "Ada"  # chosen once for the game


# -- 2. lobby ------------------------------------------------------------------------------------


def test_a_public_seek_is_listed_joined_in_one_click_then_listed_as_playing(client: TestClient) -> None:
    with client.websocket_connect("/lobby/ws") as raw:
        lobby = json.loads(raw.receive_text())
        assert lobby["type"] == "lobby" and lobby["seeks"] == [] and lobby["playing"] == []
        g = seek(client, "Ada", clock=10, side="north")
        while not (lobby := json.loads(raw.receive_text()))["seeks"]:
            pass
        [entry] = lobby["seeks"]
        assert entry["id"] == g["id"] and entry["name"] == "Ada" and entry["side"] == "north"
        assert entry["clock"] == 10 and entry["rated"] is False and entry["rating"] is None
        assert "invite" not in json.dumps(lobby) and g["token"] not in json.dumps(lobby)
        # one click: the name is all it takes (no invite); the seat is then taken
        assert join(client, g["id"]).json()["error"] == "name_required"
        j = join(client, g["id"], name="Brice")
        assert j.status_code == 200 and j.json()["side"] == "south"
        second = join(client, g["id"], name="Chloé")
        assert second.status_code == 409 and second.json()["error"] == "seat_taken"
        while (lobby := json.loads(raw.receive_text()))["seeks"]:
            pass
        assert [p["id"] for p in lobby["playing"]] == [g["id"]]
        assert lobby["playing"][0]["names"] == {"south": "Brice", "north": "Ada"}
        raw.send_text(json.dumps({"type": "ping", "ref": 1}))
        while json.loads(raw.receive_text())["type"] != "pong":
            pass
    # it ends: gone from the lobby
    with connect(client, g["id"]) as raw2:
        ws = seat(raw2, j.json()["token"], "south")
        ws.send(type="resign")
        ws.until("state", lambda m: m["game"]["status"] == "over")
    assert client.get("/api/lobby").json()["playing"] == []


def test_private_invites_keep_working_and_are_never_listed(client: TestClient) -> None:
    g = create(client, mode="online", side="south", name="Ada")
    assert client.get("/api/lobby").json()["seeks"] == []
    assert join(client, g["id"], name="Brice").json()["error"] == "bad_invite"  # not public: needs the code
    j = join(client, g["id"], invite=g["invite"], name="Brice")
    assert j.status_code == 200
    assert client.get("/api/lobby").json()["playing"] == []
    assert client.get(f"/api/games/{g['id']}").json()["names"] == {"south": "Ada", "north": "Brice"}


def test_public_needs_a_name_and_an_online_game(client: TestClient) -> None:
    r = client.post("/api/games", json={"mode": "online", "public": True})
    assert r.json()["error"] == "name_required"
    r = client.post("/api/games", json={"mode": "ai", "public": True, "name": "Ada"})
    assert r.json()["error"] == "bad_request"
    r = client.post("/api/games", json={"mode": "online", "public": "yes", "name": "Ada"})
    assert r.json()["error"] == "bad_request"


def test_stale_seeks_expire_when_the_creator_is_away_or_too_old(client: TestClient, clock: Clock) -> None:
    transport = client.app.state.transport  # type: ignore[attr-defined]
    away = seek(client, "Gone")  # the creator never opens the game
    here = seek(client, "Here")
    with connect(client, here["id"]) as raw:
        seat(raw, here["token"], "south")
        stored_presence(client, here["id"], "south", True)
        clock.t += 121  # past seek_idle (120 s): only the seek whose creator is away expires
        transport.service.storage.beat(transport.process, clock.t)  # the heartbeat of those 121 s
        client.portal.call(transport.lobby.expire_due)  # type: ignore[union-attr]
        st = client.get(f"/api/games/{away['id']}").json()
        assert st["status"] == "over" and st["result"] is None and st["reason"] == "expired"
        assert client.get(f"/api/games/{here['id']}").json()["status"] == "waiting"
        assert [s["id"] for s in client.get("/api/lobby").json()["seeks"]] == [here["id"]]
        assert join(client, away["id"], name="Late").json()["error"] == "game_over"
        clock.t += 3600  # past seek_max_age: even a present creator's seek goes
        transport.service.storage.beat(transport.process, clock.t)
        client.portal.call(transport.lobby.expire_due)  # type: ignore[union-attr]
        assert client.get(f"/api/games/{here['id']}").json()["reason"] == "expired"
    rec = read_record(client.get(f"/api/games/{away['id']}/record").text)
    assert rec.tags["Result"] == "*" and "nobody took" in rec.tags["Termination"]


# -- 3. my games ---------------------------------------------------------------------------------


def test_my_games_lists_the_games_of_the_tokens_and_downloads_them_all(client: TestClient) -> None:
    g, j = online_pair(client)
    ai = create(client, mode="ai", level="random", side="south", name="Ada")
    hot = create(client, mode="hotseat")
    other = create(client, mode="hotseat")  # not this browser's
    with connect(client, g["id"]) as raw:
        ws = seat(raw, g["token"], "south")
        ws.send(type="resign")
        ws.until("state", lambda m: m["game"]["status"] == "over")
    mine = {g["id"]: g["token"], ai["id"]: ai["token"], hot["id"]: hot["token"], other["id"]: "wrong-token"}
    rows = client.post("/api/mygames", json={"games": mine}).json()["games"]
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == {g["id"], ai["id"], hot["id"]}  # a wrong token shows nothing
    assert by_id[g["id"]]["outcome"] == "lost" and by_id[g["id"]]["reason"] == "resign"
    assert by_id[g["id"]]["opponent"] == {"kind": "human", "name": "Brice"} and by_id[g["id"]]["name"] == "Ada"
    assert by_id[ai["id"]]["opponent"]["kind"] == "ai" and by_id[ai["id"]]["status"] == "playing"
    assert by_id[hot["id"]]["side"] == "both" and by_id[hot["id"]]["date"]
    # the joiner sees the same game from the other side
    theirs = client.post("/api/mygames", json={"games": {g["id"]: j["token"]}}).json()["games"]
    assert theirs[0]["outcome"] == "won" and theirs[0]["opponent"]["name"] == "Ada"
    r = client.post("/api/mygames/record", json={"games": mine})
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    records = read_records(r.text)
    assert len(records) == 3
    assert {rec.tags["GameId"] for rec in records} == {g["id"], ai["id"], hot["id"]}
    online = next(rec for rec in records if rec.tags["GameId"] == g["id"])
    assert online.tags["South"] == "Ada" and online.tags["North"] == "Brice" and online.tags["Result"] == "0-1"


def test_my_games_refuses_bad_requests(client: TestClient) -> None:
    for body in ({}, {"games": []}, {"games": {"../x": "t"}}, {"games": {"abc": 5}}):
        r = client.post("/api/mygames", json=body)
        assert r.status_code == 400 and r.json()["error"] == "bad_request", body
    too_many = {f"g{i}": "t" for i in range(501)}
    assert client.post("/api/mygames", json={"games": too_many}).json()["error"] == "too_many"


# -- 4. fair endings -----------------------------------------------------------------------------


def test_draw_offer_decline_then_accept_is_recorded(client: TestClient) -> None:
    g, j = online_pair(client)
    with connect(client, g["id"]) as ra, connect(client, g["id"]) as rb:
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        play(a, 0)
        b.until("state", lambda m: m["game"]["ply"] == 1)
        a.send(type="offer", what="draw")
        st = b.until("state", lambda m: m["game"]["offer"] is not None)["game"]
        assert st["offer"] == {"what": "draw", "by": "south", "ply": 1}
        a.send(type="offer", what="draw")
        assert a.error()["code"] == "offer_pending"
        a.send(type="accept", what="draw")
        assert a.error()["code"] == "own_offer"
        b.send(type="decline", what="draw")
        a.until("state", lambda m: m["game"]["offer"] is None)
        a.send(type="offer", what="draw")
        assert a.error()["code"] == "offer_again"  # once per position
        b.send(type="accept", what="draw")
        assert b.error()["code"] == "no_offer"
        play(b, 1)
        a.until("state", lambda m: m["game"]["ply"] == 2)
        b.send(type="offer", what="draw")
        a.until("state", lambda m: m["game"]["offer"] is not None)
        a.send(type="accept", what="draw")
        st = b.until("state", lambda m: m["game"]["status"] == "over")["game"]
        assert st["result"] == "draw" and st["reason"] == "agreed"
    rec = read_record(client.get(f"/api/games/{g['id']}/record").text)
    assert rec.tags["Result"] == "1/2-1/2" and rec.tags["Termination"] == "draw agreed"


def test_a_move_answers_the_opponents_draw_offer(client: TestClient) -> None:
    g, j = online_pair(client)
    with connect(client, g["id"]) as ra, connect(client, g["id"]) as rb:
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        b.send(type="offer", what="draw")  # offered while it is South's turn
        a.until("state", lambda m: m["game"]["offer"] is not None)
        play(a, 0)  # South moves instead of answering: declined
        assert a.state is not None and a.state["offer"] is None


def test_takeback_request_accepted_takes_the_move_back_and_is_recorded(client: TestClient) -> None:
    g, j = online_pair(client)
    with connect(client, g["id"]) as ra, connect(client, g["id"]) as rb:
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        b.send(type="offer", what="takeback")
        assert b.error()["code"] == "nothing_to_undo"
        play(a, 0)
        play(b, 1)
        play(a, 2)
        assert a.state is not None
        moves = list(a.state["moves"])
        # South asks to take back its last move; North declines, then South asks again later
        a.send(type="offer", what="takeback")
        b.until("state", lambda m: (m["game"]["offer"] or {}).get("what") == "takeback")
        b.send(type="decline", what="takeback")
        a.until("state", lambda m: m["game"]["offer"] is None)
        play(b, 3)
        a.until("state", lambda m: m["game"]["ply"] == 4)
        # now it is South's turn again: taking back South's move takes back North's reply too
        a.send(type="offer", what="takeback")
        b.until("state", lambda m: m["game"]["offer"] is not None)
        b.send(type="accept", what="takeback")
        st = a.until("state", lambda m: m["game"]["ply"] == 2)["game"]
        assert st["moves"] == moves[:2] and st["turn"] == "south" and st["offer"] is None
        a.send(type="undo")
        assert a.error()["code"] == "no_undo"  # online: only by request
    rec = read_record(client.get(f"/api/games/{g['id']}/record").text)
    assert rec.tags["Takebacks"] == "South at ply 4"
    assert [str(m) for m in rec.game.history] == moves[:2]


def test_abort_before_both_sides_moved_and_not_after(client: TestClient) -> None:
    g, j = online_pair(client)
    with connect(client, g["id"]) as ra, connect(client, g["id"]) as rb:
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        assert a.state is not None and a.state["can_abort"]
        play(a, 0)
        assert a.state["can_abort"]  # North has not moved yet
        b.send(type="abort")
        st = a.until("state", lambda m: m["game"]["status"] == "over")["game"]
        assert st["result"] is None and st["reason"] == "aborted" and not st["can_abort"]
        a.send(type="move", move="1G@d3")
        assert a.error()["code"] == "game_over"
    rec = read_record(client.get(f"/api/games/{g['id']}/record").text)
    assert rec.tags["Result"] == "*" and rec.tags["Termination"].startswith("aborted")
    g2, j2 = online_pair(client)
    with connect(client, g2["id"]) as ra, connect(client, g2["id"]) as rb:
        a, b = seat(ra, g2["token"], "south"), seat(rb, j2["token"], "north")
        play(a, 0)
        play(b, 1)
        a.send(type="abort")
        assert a.error()["code"] == "cannot_abort"
    # the creator withdraws a seek nobody took
    s = seek(client, "Ada")
    with connect(client, s["id"]) as raw:
        ws = seat(raw, s["token"], "south")
        ws.send(type="abort")
        ws.until("state", lambda m: m["game"]["reason"] == "aborted")
    assert client.get("/api/lobby").json()["seeks"] == []


def test_claim_after_the_opponent_has_been_away_long_enough(client: TestClient, clock: Clock) -> None:
    g, j = online_pair(client)
    with connect(client, g["id"]) as ra:
        a = seat(ra, g["token"], "south")
        with connect(client, g["id"]) as rb:
            b = seat(rb, j["token"], "north")
            a.until("state", lambda m: m["game"]["seats"]["north"]["present"])
            stored_presence(client, g["id"], "north", True)
            a.send(type="claim", what="win")
            assert a.error()["code"] == "opponent_here"
            b.send(type="claim", what="draw")
            assert b.error()["code"] == "opponent_here"
        st = a.until("state", lambda m: not m["game"]["seats"]["north"]["present"])["game"]
        assert st["claim_after"] == 300 and st["seats"]["north"]["away_for"] == 0
        clock.t += 200
        a.send(type="claim", what="win")
        err = a.error()
        assert err["code"] == "too_early" and "3:20" in err["message"] and "5:00" in err["message"]
        clock.t += 101
        a.send(type="claim", what="maybe")
        assert a.error()["code"] == "bad_message"
        a.send(type="claim", what="win")
        st = a.until("state", lambda m: m["game"]["status"] == "over")["game"]
        assert st["result"] == "south" and st["reason"] == "claim"
    rec = read_record(client.get(f"/api/games/{g['id']}/record").text)
    assert rec.tags["Result"] == "1-0" and rec.tags["Termination"] == "North left the game; South claimed the win"


def test_no_claim_in_a_timed_game_and_no_fair_endings_offline(client: TestClient, clock: Clock) -> None:
    g, j = online_pair(client, clock_min=5)
    with connect(client, g["id"]) as ra:
        a = seat(ra, g["token"], "south")
        assert a.state is not None and a.state["claim_after"] is None
        clock.t += 1000
        a.send(type="claim", what="win")
        assert a.error()["code"] in ("timed_game", "game_over")  # the clock decides instead
    for mode in ("hotseat", "ai"):
        h = create(client, mode=mode, **({"level": "random"} if mode == "ai" else {}))
        with connect(client, h["id"]) as raw:
            ws = seat(raw, h["token"], "both" if mode == "hotseat" else "south")
            for msg in ({"type": "offer", "what": "draw"}, {"type": "abort"}, {"type": "claim", "what": "win"}):
                ws.send(**msg)
                assert ws.error()["code"] == "not_online", (mode, msg)
    with connect(client, g["id"]) as raw:
        watcher = seat(raw, None, "spectator")
        watcher.send(type="offer", what="draw")
        assert watcher.error()["code"] == "not_a_player"


def test_presence_is_stored_so_watchers_and_seats_count_across_connections(client: TestClient, db: str) -> None:
    from jericho_game.web.storage.database import Storage, resolve_db_url

    g, j = online_pair(client)
    with connect(client, g["id"]) as ra, connect(client, g["id"]) as rw:
        seat(ra, g["token"], "south")
        w = seat(rw, None, "spectator")
        w.state_where(lambda m: m["game"]["seats"]["south"]["present"] and m["game"]["watchers"] == 1)
        # the state counts this process's own connections at once, the database once the
        # presence thread's writes land (in order): the stored rows must get there
        store = Storage(resolve_db_url(db))
        try:
            deadline = time.monotonic() + 20
            while True:
                now = client.app.state.service.now()  # type: ignore[attr-defined]
                p = store.presence(g["id"], now, 30)
                if p.present == {"south": True, "north": False} and p.watchers == 1:
                    break
                assert time.monotonic() < deadline, f"the stored presence stayed {p}"
                time.sleep(0.05)
        finally:
            store.close()


def test_a_spectator_arriving_does_not_reset_how_long_a_seat_has_been_away(client: TestClient, clock: Clock) -> None:
    g, j = online_pair(client)
    with connect(client, g["id"]) as ra:
        a = seat(ra, g["token"], "south")
        with connect(client, g["id"]) as rb:
            seat(rb, j["token"], "north")
            a.until("state", lambda m: m["game"]["seats"]["north"]["present"])
        a.until("state", lambda m: not m["game"]["seats"]["north"]["present"])
        clock.t += 200
        with connect(client, g["id"]) as rw:  # a watcher comes and goes meanwhile
            seat(rw, None, "spectator")
            a.until("state", lambda m: m["game"]["watchers"] == 1)
        a.until("state", lambda m: m["game"]["watchers"] == 0)
        clock.t += 101
        a.send(type="claim", what="win")
        st = a.until("state", lambda m: m["game"]["status"] == "over")["game"]
        assert st["reason"] == "claim" and st["result"] == "south"


def test_a_rematch_keeps_the_names_with_the_people_and_is_not_listed(client: TestClient) -> None:
    g, j = online_pair(client)
    with connect(client, g["id"]) as raw:
        ws = seat(raw, g["token"], "south")
        ws.send(type="resign")
        ws.until("state", lambda m: m["game"]["status"] == "over")
        ws.send(type="rematch")
        new_id = ws.until("rematch")["id"]
    st = client.get(f"/api/games/{new_id}").json()
    assert st["names"] == {"south": "Brice", "north": "Ada"} and st["public"] is False  # the seats swapped
    assert new_id not in json.dumps(client.get("/api/lobby").json())


def test_the_broker_codes_of_presence_review_and_ai_queue_differ() -> None:
    from jericho_game.web.learn.review import REVIEW_CHANGED
    from jericho_game.web.storage.database import LOBBY_ID, PRESENCE_VERSION

    assert len({-1, REVIEW_CHANGED, PRESENCE_VERSION}) == 3  # each "game X, version -k" means one thing
    assert "~" in LOBBY_ID  # never a game id (ids are letters, digits, - and _)


def test_a_rated_seek_shows_its_creators_rating_and_needs_an_account_to_join(db: str, clock: Clock) -> None:
    from jericho_game.web.accounts.accounts import CSRF_HEADER
    from tests.web.accounts.test_accounts import CHEAP, csrf, signup

    app = create_app(db, ai_processes=0, clock=clock, password_hasher=CHEAP)
    with TestClient(app, client=("10.0.0.1", 1000)) as ada, TestClient(app, client=("10.0.0.2", 1000)) as anon:
        signup(ada, "ada", "correct horse battery")
        body = {"mode": "online", "public": True, "rated": True, "name": "Ada", "side": "south"}
        g = ada.post("/api/games", json=body, headers={CSRF_HEADER: csrf(ada)}).json()
        [entry] = anon.get("/api/lobby").json()["seeks"]
        assert entry["id"] == g["id"] and entry["rated"] is True and entry["rating"] == 1500
        r = anon.post(f"/api/games/{g['id']}/join", json={"name": "Anon"})
        assert r.status_code == 403 and r.json()["error"] == "login_required"
        assert anon.get("/api/lobby").json()["seeks"][0]["id"] == g["id"]  # still open
