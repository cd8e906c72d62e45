"""The games' chat (issue 23, point 4; web/social/chat.py): the players' and the spectators' rooms kept
apart, the length cap, the rate limit, the per-game mute, reports, the site-wide mute of
``jericho user mute``, the chat stored with the game and shown after it; on SQLite and PostgreSQL."""

from __future__ import annotations

import argparse
import contextlib
import io
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from argon2 import PasswordHasher  # noqa: E402

from jericho_game.cli import user as usercmd  # noqa: E402
from jericho_game.web.accounts.accounts import CSRF_HEADER, AccountService  # noqa: E402
from jericho_game.web.round.rooms import ClientError  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.social.chat import ChatPolicy, clean_text  # noqa: E402
from jericho_game.web.storage.database import Storage, resolve_db_url  # noqa: E402
from tests.web.test_server import WS, connect, create, seat  # noqa: E402

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
PW = "correct horse battery staple"
HOSTILE = '<img src=x onerror="alert(1)">'


class Clock:
    def __init__(self) -> None:
        self.t = 1_900_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def client(db: str, clock: Clock) -> Iterator[TestClient]:
    with TestClient(create_app(db, ai_processes=0, clock=clock, password_hasher=CHEAP)) as c:
        yield c


def pair(c: TestClient) -> tuple[dict[str, Any], dict[str, Any]]:
    g = create(c, mode="online", public=True, name="Ada", side="south")
    j = c.post(f"/api/games/{g['id']}/join", json={"name": "Brice"})
    assert j.status_code == 200, j.text
    return g, j.json()


def login_as(c: TestClient, name: str, *, admin: bool = False) -> None:
    """Create the account in the database and log this client in (its cookie goes with later sockets)."""
    storage = c.app.state.service.storage  # type: ignore[attr-defined]
    accounts = AccountService(storage, hasher=CHEAP)
    if accounts.find(name) is None:
        accounts.create_account(name, PW, admin=admin)
    csrf = c.get("/api/account").json()["csrf"]
    r = c.post("/api/account/login", json={"username": name, "password": PW}, headers={CSRF_HEADER: csrf})
    assert r.status_code == 200, r.text


def chat(ws: WS, text: str, room: str | None = None) -> dict[str, Any]:
    """Send a chat message and return the server's ``chat_sent``."""
    ws.send(type="chat", text=text, **({"room": room} if room else {}))
    return ws.until("chat_sent")


def next_chat(ws: WS) -> dict[str, Any]:
    return ws.until("chat")


def no_chat_pending(ws: WS) -> list[dict[str, Any]]:
    """The chat messages that reached ``ws`` before a ping's answer (the fan-out went out before it)."""
    ws.send(type="ping", ref="flush")
    got = []
    while True:
        msg = ws.recv()
        if msg["type"] == "chat":
            got.append(msg)
        if msg["type"] == "pong" and msg.get("ref") == "flush":
            return got


def history(ws: WS) -> dict[str, Any]:
    ws.send(type="chat_history")
    return ws.until("chat_history")


def test_clean_text_keeps_one_line_of_text_and_caps_it() -> None:
    assert clean_text("  hi\nthere\t! ", 500) == "hi there !"
    assert clean_text("a\u202eb\u200bc\x1b[31m", 500) == "abc[31m"  # bidi override, zero width, escape
    assert clean_text("Ame\u0301lie", 500) == "Amélie"
    assert clean_text(HOSTILE, 500) == HOSTILE  # printable: kept, and shown as text
    assert clean_text("x" * 500, 500) == "x" * 500
    for bad, code in (
        ("", "bad_message"),
        (" \n\u200b ", "bad_message"),
        (5, "bad_message"),
        ("x" * 501, "chat_too_long"),
    ):
        with pytest.raises(ClientError) as err:
            clean_text(bad, 500)
        assert err.value.code == code


def test_a_players_message_reaches_the_opponent_with_the_authors_name(client: TestClient) -> None:
    g, j = pair(client)
    with connect(client, g["id"]) as ra, connect(client, g["id"]) as rb, connect(client, g["id"]) as rw:
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        watcher = seat(rw, None, "spectator")
        sent = chat(a, HOSTILE)
        got = next_chat(b)
        assert got["author"] == "Ada" and got["side"] == "south" and got["room"] == "players"
        assert got["text"] == HOSTILE and got["id"] == sent["id"] and got["ply"] == 0
        assert "address" not in got
        assert next_chat(a)["id"] == sent["id"]  # the author sees it too
        chat(b, "hello Ada")
        assert next_chat(a)["author"] == "Brice"
        assert no_chat_pending(watcher) == []  # the players' chat is theirs while they play
        assert history(watcher)["messages"] == []
        assert [m["text"] for m in history(b)["messages"]] == [HOSTILE, "hello Ada"]


def test_spectators_never_write_to_the_players_during_a_game(client: TestClient) -> None:
    g, j = pair(client)
    with connect(client, g["id"]) as ra, connect(client, g["id"]) as rb, connect(client, g["id"]) as rw:
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        anonymous = seat(rw, None, "spectator")
        anonymous.send(type="chat", text="psst, play d2", room="players")
        assert anonymous.error()["code"] == "not_a_player"
        anonymous.send(type="chat", text="hi all")
        assert anonymous.error()["code"] == "login_required"  # the spectators' chat is for accounts
        login_as(client, "carol")
        with connect(client, g["id"]) as rc:
            carol = seat(rc, None, "spectator")
            chat(carol, "nice opening")
            assert next_chat(carol)["author"] == "carol"
            assert next_chat(anonymous)["text"] == "nice opening"  # every watcher reads it
            carol.send(type="chat", text="play d2!", room="players")
            assert carol.error()["code"] == "not_a_player"
            assert no_chat_pending(a) == [] and no_chat_pending(b) == []  # the players never see it
            a.send(type="chat", text="hi watchers", room="spectators")
            assert a.error()["code"] == "spectator_chat"
            chat(a, "good luck")
            assert next_chat(b)["text"] == "good luck"  # sent out (to the players only) before the end
            b.send(type="resign")
            b.until("state", lambda m: m["game"]["status"] == "over")
            # over: both rooms are open to everyone, the players may write to the spectators
            chat(a, "thanks for watching", room="spectators")
            assert next_chat(carol)["text"] == "thanks for watching"
            rooms = {(m["room"], m["text"]) for m in history(carol)["messages"]}
            assert rooms == {
                ("spectators", "nice opening"),
                ("players", "good luck"),
                ("spectators", "thanks for watching"),
            }
    # stored with the game: the replay's chat (what anyone may read now that it is over)
    shown = client.get(f"/api/games/{g['id']}/chat").json()
    assert shown["over"] and [m["text"] for m in shown["messages"]] == [
        "nice opening",
        "good luck",
        "thanks for watching",
    ]


def test_the_chat_of_a_game_being_played_is_private_over_http(client: TestClient) -> None:
    g, j = pair(client)
    with connect(client, g["id"]) as ra:
        a = seat(ra, g["token"], "south")
        chat(a, "secret plan")
    assert client.get(f"/api/games/{g['id']}/chat").json()["messages"] == []
    assert client.get("/api/games/nosuchgame/chat").status_code == 404


def test_length_cap_and_rate_limit_per_author_per_game(client: TestClient, clock: Clock) -> None:
    policy = ChatPolicy()
    g, j = pair(client)
    with connect(client, g["id"]) as ra, connect(client, g["id"]) as rb:
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        a.send(type="chat", text="x" * (policy.max_chars + 1))
        assert a.error()["code"] == "chat_too_long"
        a.send(type="chat", text=" \u200b ")
        assert a.error()["code"] == "bad_message"
        chat(a, "y" * policy.max_chars)
        for i in range(policy.burst - 1):
            chat(a, f"m{i}")
        a.send(type="chat", text="one too many")
        err = a.error()
        assert err["code"] == "rate_limited" and str(policy.burst) in err["message"]
        chat(b, "the other author has a budget of its own")
        clock.t += policy.window + 0.1
        chat(a, "again")
    with connect(client, g["id"]) as rb2:
        b2 = seat(rb2, j["token"], "north")
        texts = [m["text"] for m in history(b2)["messages"]]
    assert "one too many" not in texts and texts[-1] == "again" and len(texts) == policy.burst + 2


def test_a_player_mutes_the_opponent_for_themselves(client: TestClient) -> None:
    g, j = pair(client)
    with connect(client, g["id"]) as ra, connect(client, g["id"]) as rb:
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        chat(a, "before")
        next_chat(b)
        b.send(type="chat_mute", mute=True)
        assert b.until("chat_mute")["mute"] is True
        assert b.until("chat_history")["muted"] is True
        chat(a, "while muted")
        assert next_chat(a)["text"] == "while muted"  # the author still sees it
        assert no_chat_pending(b) == []
        h = history(b)
        assert h["muted"] and [m["text"] for m in h["messages"]] == []
        chat(b, "I can still write")
        assert next_chat(a)["text"] == "I can still write"  # a mute is one way: for the muter only
        assert not history(a)["muted"]
        b.send(type="chat_mute", mute=False)
        b.until("chat_mute")
        assert [m["text"] for m in history(b)["messages"]] == ["before", "while muted", "I can still write"]
        with connect(client, g["id"]) as rw:
            watcher = seat(rw, None, "spectator")
            watcher.send(type="chat_mute", mute=True)
            assert watcher.error()["code"] == "not_a_player"
        b.send(type="chat_mute", mute="yes")
        assert b.error()["code"] == "bad_message"


def test_a_report_is_stored_and_admins_read_it(client: TestClient) -> None:
    g, j = pair(client)
    with connect(client, g["id"]) as ra, connect(client, g["id"]) as rb, connect(client, g["id"]) as rw:
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        watcher = seat(rw, None, "spectator")
        sent = chat(a, "you are a <b>noob</b>")
        watcher.send(type="chat_report", id=sent["id"])
        assert watcher.error()["code"] == "unknown_message"  # a spectator cannot read it: nor report it
        b.send(type="chat_report", id=sent["id"], reason="insult")
        assert b.until("chat_reported")["id"] == sent["id"]
        b.send(type="chat_report", id=sent["id"] + 1000)
        assert b.error()["code"] == "unknown_message"
        b.send(type="chat_report", id="1")
        assert b.error()["code"] == "bad_message"
    assert client.get("/api/admin/chat/reports").status_code == 403
    login_as(client, "root", admin=True)
    reports = client.get("/api/admin/chat/reports").json()["reports"]
    assert len(reports) == 1
    r = reports[0]
    assert r["message_id"] == sent["id"] and r["text"] == "you are a <b>noob</b>" and r["reporter"] == "seat:north"
    assert r["author"] == "Ada" and r["reason"] == "insult" and r["game_id"] == g["id"]


def _user(db: str, action: str, name: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = usercmd.run(argparse.Namespace(action=action, name=name, db=db, admin=False))
    return rc, out.getvalue(), err.getvalue()


def test_jericho_user_mute_silences_an_account_everywhere(client: TestClient, db: str) -> None:
    login_as(client, "dave")
    csrf = client.get("/api/account").json()["csrf"]
    g = client.post(
        "/api/games", json={"mode": "online", "name": "Dave", "side": "south"}, headers={CSRF_HEADER: csrf}
    ).json()
    client.cookies.clear()  # the joiner is another, anonymous browser
    j = client.post(f"/api/games/{g['id']}/join", json={"invite": g["invite"], "name": "Eve"}).json()
    with connect(client, g["id"]) as rb:
        b = seat(rb, j["token"], "north")
        login_as(client, "dave")  # Dave's browser again: his seat opens with his session
        with connect(client, g["id"]) as ra:
            a = seat(ra, g["token"], "south")
            chat(a, "hi Eve")
            assert next_chat(b)["author"] == "dave"  # as the page names the seat: its account's username
            assert _user(db, "mute", "DAVE")[0] == 0  # usernames match in any case
            a.send(type="chat", text="still here?")
            assert a.error()["code"] == "chat_muted"
            assert no_chat_pending(b) == []
            chat(b, "Eve is not muted")
            assert next_chat(a)["text"] == next_chat(b)["text"] == "Eve is not muted"
            rc, out, _ = _user(db, "mute", "dave")
            assert rc == 0 and "already" in out
            assert _user(db, "unmute", "dave")[0] == 0
            chat(a, "back")
            assert next_chat(b)["text"] == "back"
    rc, _, err = _user(db, "mute", "nobody")
    assert rc == 2 and "no account named 'nobody'" in err


def test_chat_is_for_online_games_and_survives_a_restart(db: str, clock: Clock) -> None:
    with TestClient(create_app(db, ai_processes=0, clock=clock)) as c:
        h = create(c, mode="hotseat")
        with connect(c, h["id"]) as raw:
            ws = seat(raw, h["token"], "both")
            ws.send(type="chat", text="hello me")
            assert ws.error()["code"] == "not_online"
            assert history(ws)["enabled"] is False
        g, j = pair(c)
        with connect(c, g["id"]) as ra:
            chat(seat(ra, g["token"], "south"), "stored")
    with TestClient(create_app(db, ai_processes=0, clock=clock)) as c2:  # a new server on the same database
        with connect(c2, g["id"]) as rb:
            b = seat(rb, j["token"], "north")
            assert [m["text"] for m in history(b)["messages"]] == ["stored"]
    storage = Storage(resolve_db_url(db))
    try:
        with storage.engine.connect() as conn:
            from sqlalchemy import text

            rows = conn.execute(text("SELECT author, text, room, side FROM chat_messages")).all()
        assert [tuple(r) for r in rows] == [("Ada", "stored", "players", "south")]
    finally:
        storage.close()


def test_the_chat_panel_never_builds_html_from_text() -> None:
    """The page's chat puts every text in textContent (the browser test shows an <img onerror> as text)."""
    from pathlib import Path

    import jericho_game.web

    source = (Path(jericho_game.web.__file__).parent / "site" / "static" / "chat.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "DOMParser"):
        assert sink not in source, sink
    assert source.count("textContent = m.") == 2  # the author and the text of each message
