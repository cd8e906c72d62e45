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
from jericho_game.web.common.budget import BUDGETS  # noqa: E402
from jericho_game.web.round.rooms import ClientError  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.social.chat import ChatPolicy, clean_text  # noqa: E402
from jericho_game.web.storage.database import Storage, resolve_db_url  # noqa: E402
from tests.web.test_server import WS, another, connect, create, seat  # noqa: E402

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
PW = "correct horse battery staple"
HOSTILE = '<img src=x onerror="alert(1)">'
MESSAGES = BUDGETS["chat.message"]  # per author in a game (pair), per account, per anonymous address (group)
REPORTS = BUDGETS["chat.report"]


def _n(limit: float | None) -> int:
    assert limit is not None
    return int(limit)


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


def _early(ws: WS) -> list[dict[str, Any]]:
    """Chat messages that arrived while a helper waited for something else (kept for next_chat)."""
    if not hasattr(ws, "early_chat"):
        ws.early_chat = []  # type: ignore[attr-defined]
    early: list[dict[str, Any]] = ws.early_chat  # type: ignore[attr-defined]
    return early


def chat(ws: WS, text: str, room: str | None = None) -> dict[str, Any]:
    """Send a chat message and return the server's ``chat_sent``.  On PostgreSQL the database's
    notice of the insert may bring the message itself to its author before ``chat_sent``: it is
    kept for :func:`next_chat` (skipping it made a CI hang)."""
    ws.send(type="chat", text=text, **({"room": room} if room else {}))
    skipped = []
    for _ in range(500):
        msg = ws.recv()
        if msg["type"] == "error":
            raise AssertionError(f"unexpected error while waiting for chat_sent: {msg}")
        if msg["type"] == "chat":
            skipped.append(msg)
        if msg["type"] == "chat_sent":
            _early(ws).extend(m for m in skipped if m["id"] == msg["id"])  # others: skipped, as until() does
            return msg
    raise AssertionError("no chat_sent arrived")


def next_chat(ws: WS) -> dict[str, Any]:
    early = _early(ws)
    return early.pop(0) if early else ws.until("chat")


def no_chat_pending(ws: WS) -> list[dict[str, Any]]:
    """The chat messages that reached ``ws`` before a ping's answer (the fan-out went out before it)."""
    ws.send(type="ping", ref="flush")
    got = _early(ws)[:]
    _early(ws).clear()
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
    assert clean_text("  hi there ! ", 500) == "hi there !"
    assert clean_text("a\u202eb\u200bc[31m", 500) == "abc[31m"  # bidi override and zero width: dropped
    assert clean_text("Ame\u0301lie", 500) == "Amélie"  # NFC
    assert clean_text("Tiê\u0301ng Viê\u0323t", 500) == "Tiếng Việt"  # two marks on one letter: fine
    assert clean_text("\U0001f468\u200d\U0001f469\u200d\U0001f467", 500).count("\u200d") == 2  # ZWJ kept
    assert clean_text("e" + "\u0301" * 4, 500)  # four marks in a row: allowed
    assert clean_text(HOSTILE, 500) == HOSTILE  # printable: kept, and shown as text
    assert clean_text("x" * 500, 500) == "x" * 500
    for bad, code in (
        ("", "bad_message"),
        (" \u200b ", "bad_message"),
        (5, "bad_message"),
        ("x" * 501, "chat_too_long"),
    ):
        with pytest.raises(ClientError) as err:
            clean_text(bad, 500)
        assert err.value.code == code


def test_chat_refuses_separators_controls_invisible_text_and_zalgo() -> None:
    """Issue 33, item 10: the audit's U+2028, invisible U+3164 messages and 499 combining marks."""
    for bad, code, why in (
        ("one\u2028two", "chat_text", "U+2028 (LINE SEPARATOR)"),
        ("one\u2029two", "chat_text", "U+2029 (PARAGRAPH SEPARATOR)"),
        ("one\ntwo", "chat_text", "U+000A"),
        ("one\x85two", "chat_text", "U+0085"),
        ("bell\x07", "chat_text", "U+0007"),
        ("red\x1b[31m", "chat_text", "U+001B"),
        ("half \ud800", "chat_text", "half of a character"),
        ("\u3164", "bad_message", "visible words"),
        ("\u3164 \u3164\u115f\uffa0", "bad_message", "visible words"),
        ("\u200b\u200c\u200d\u2060\ufeff", "bad_message", "visible words"),
        ("\u2800\u3000\u00a0", "bad_message", "visible words"),
        ("\u0301\u0301", "bad_message", "visible words"),
        ("Z" + "\u0301" * 499, "chat_text", "at most 4 combining marks in a row"),
        ("x" + "\u0301\u0302\u0303\u0304\u0305", "chat_text", "combining marks"),
    ):
        with pytest.raises(ClientError) as err:
            clean_text(bad, 500)
        assert err.value.code == code, bad
        assert why in str(err.value), (bad, str(err.value))


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
        for i in range(_n(MESSAGES.per_pair) - 1):
            chat(a, f"m{i}")
        a.send(type="chat", text="one too many")
        err = a.error()
        assert err["code"] == "rate_limited" and f"at most {_n(MESSAGES.per_pair)} in 10 seconds" in err["message"]
        chat(b, "the other author has a budget of its own")
        clock.t += (MESSAGES.window or 0) + 0.1
        chat(a, "again")
    with connect(client, g["id"]) as rb2:
        b2 = seat(rb2, j["token"], "north")
        texts = [m["text"] for m in history(b2)["messages"]]
    assert "one too many" not in texts and texts[-1] == "again" and len(texts) == _n(MESSAGES.per_pair) + 2


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
        assert watcher.error()["code"] == "login_required"  # an anonymous watcher does not report
        b.send(type="chat_report", id=sent["id"], reason="insult")
        assert b.until("chat_reported")["id"] == sent["id"]
        b.send(type="chat_report", id=sent["id"] + 1000)
        assert b.error()["code"] == "unknown_message"
        b.send(type="chat_report", id="1")
        assert b.error()["code"] == "bad_message"
    login_as(client, "carol")
    with connect(client, g["id"]) as rc:
        carol = seat(rc, None, "spectator")
        carol.send(type="chat_report", id=sent["id"])
        assert carol.error()["code"] == "unknown_message"  # a watcher cannot read it: nor report it
    client.cookies.clear()
    assert client.get("/api/admin/chat/reports").status_code == 403
    login_as(client, "root", admin=True)
    page = client.get("/api/admin/chat/reports").json()
    assert page["total"] == 1 and page["page"] == page["pages"] == 1
    [r] = page["reports"]
    assert r["message_id"] == sent["id"] and r["text"] == "you are a <b>noob</b>" and r["reporters"] == ["seat:north"]
    assert r["author"] == "Ada" and r["reasons"] == ["insult"] and r["game_id"] == g["id"] and r["reports"] == 1
    # an admin closes it: the open list is empty
    csrf = client.get("/api/account").json()["csrf"]
    r2 = client.post("/api/admin/chat/reports/close", json={"message": sent["id"]}, headers={CSRF_HEADER: csrf})
    assert r2.status_code == 200 and r2.json() == {"closed": 1}
    assert client.get("/api/admin/chat/reports").json() == {
        "reports": [],
        "total": 0,
        "page": 1,
        "pages": 1,
        "per_page": ChatPolicy().reports_page,
    }
    assert client.get("/api/admin/chat/reports?page=x").status_code == 400


def _over_with_messages(c: TestClient, clock: Clock, n: int) -> tuple[dict[str, Any], list[int]]:
    """An online game that is over, whose players' chat (readable by anyone now) has ``n`` messages."""
    g, j = pair(c)
    ids = []
    with connect(c, g["id"]) as ra, connect(c, g["id"]) as rb:
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        for i in range(n):
            ids.append(chat(a, f"message {i}")["id"])
            clock.t += 2.5  # 4 per 10 s: under the per-game rate
        b.send(type="resign")
        b.until("state", lambda m: m["game"]["status"] == "over")
    return g, ids


def test_anonymous_watchers_from_sixty_addresses_cannot_flood_the_reports(client: TestClient, clock: Clock) -> None:
    """Issue 33, item 6: 60 addresses x 5 reports from anonymous watchers were 300 reports in 3 s."""
    g, ids = _over_with_messages(client, clock, 5)
    app = client.app
    for i in range(60):
        watcher_browser = TestClient(app, client=(f"10.33.{i}.1", 4000))
        with connect(watcher_browser, g["id"]) as raw:
            watcher = seat(raw, None, "spectator")
            for message_id in ids:
                watcher.send(type="chat_report", id=message_id)
                err = watcher.error()
                assert err["code"] == "login_required" and "log in" in err["message"]
    login_as(client, "root", admin=True)
    assert client.get("/api/admin/chat/reports").json()["total"] == 0
    storage = client.app.state.service.storage  # type: ignore[attr-defined]
    with storage.engine.connect() as conn:
        from sqlalchemy import text

        assert conn.execute(text("SELECT count(*) FROM chat_reports")).scalar_one() == 0


def test_reports_are_limited_per_reporter_and_per_address(client: TestClient, clock: Clock) -> None:
    g, ids = _over_with_messages(client, clock, _n(REPORTS.per_account) + 1)
    login_as(client, "dora")
    with connect(client, g["id"]) as rd:
        dora = seat(rd, None, "spectator")
        for message_id in ids[:-1]:
            dora.send(type="chat_report", id=message_id)
            dora.until("chat_reported")
        dora.send(type="chat_report", id=ids[-1])
        err = dora.error()
        assert err["code"] == "rate_limited" and f"sent {_n(REPORTS.per_account)} reports" in err["message"]
        clock.t += (REPORTS.window or 0) + 1  # an hour later: again
        dora.send(type="chat_report", id=ids[-1])
        dora.until("chat_reported")
    # many accounts behind one address: the address's own limit
    chat_app = client.app.state.chat  # type: ignore[attr-defined]
    store = chat_app.store
    message = store.message(ids[0])
    assert message is not None
    now = clock.t
    for k in range(_n(REPORTS.per_group)):
        assert store.report(message, f"account:{900 + k}", None, now, address="10.44.0.1")
    with pytest.raises(ClientError) as err2:
        store.report(message, "account:999", None, now, address="10.44.0.1")
    assert err2.value.code == "rate_limited" and "your address" in err2.value.message
    assert store.report(message, "account:999", None, now, address="10.44.0.2")  # another address


def test_a_flood_of_reports_from_accounts_cannot_push_a_real_report_out(client: TestClient, clock: Clock) -> None:
    """Issue 33, item 6: the admins' list showed the 200 newest reports; a flood pushed a real one
    out.  Now it lists every open report, one entry per message (with its count), page by page."""
    policy = ChatPolicy()
    g, ids = _over_with_messages(client, clock, 6)
    store = client.app.state.chat.store  # type: ignore[attr-defined]
    real = store.message(ids[0])
    assert store.report(real, "seat:north", "threatens me", clock.t, address="10.0.0.9")
    clock.t += 1
    # the flood: 60 accounts on 30 addresses, each as many reports as it is let, on the other messages
    accepted = refused = 0
    for k in range(60):
        for message_id in ids[1:]:
            try:
                store.report(
                    store.message(message_id), f"account:{1000 + k}", "spam", clock.t, address=f"10.55.{k // 2}.1"
                )
                accepted += 1
            except ClientError:
                refused += 1
    assert accepted == 300 and refused == 0  # each within its limits: the list must still cope
    login_as(client, "root", admin=True)
    first = client.get("/api/admin/chat/reports").json()
    assert first["total"] == 6 and [r["message_id"] for r in first["reports"]][0] == ids[0]
    assert [r["reports"] for r in first["reports"]] == [1, 60, 60, 60, 60, 60]
    assert first["reports"][0]["reasons"] == ["threatens me"]
    # a flood on many more messages: the real report is still in the list, reached page by page
    more = []
    for k in range(policy.reports_page * 2):
        clock.t += 3  # under the per-game rate
        msg = store.post(
            g["id"],
            "players",
            side="south",
            account=None,
            author="Ada",
            address=None,
            body=f"flood {k}",
            ply=0,
            now=clock.t,
        )
        more.append(msg)
    for k, msg in enumerate(more):
        store.report(msg, f"account:{5000 + k}", None, clock.t, address=f"10.66.{k}.1")
    seen: list[int] = []
    page = 1
    while True:
        got = client.get(f"/api/admin/chat/reports?page={page}").json()
        assert len(got["reports"]) <= policy.reports_page
        seen += [r["message_id"] for r in got["reports"]]
        if page >= got["pages"]:
            break
        page += 1
    assert len(seen) == len(set(seen)) == 6 + len(more) and ids[0] in seen


def test_a_mute_hides_the_opponent_everywhere_for_the_one_who_muted(client: TestClient, clock: Clock) -> None:
    """Issue 33, item 7: the muted opponent's messages in the spectators' room reached the muting
    player live and in history, and the replay's chat endpoint returned them.  Now the opponent is
    hidden from the one who muted in both rooms, live, in history and in the replay's chat."""
    app = client.app
    login_as(client, "ada")
    csrf = client.get("/api/account").json()["csrf"]
    g = client.post("/api/games", json={"mode": "online", "side": "south"}, headers={CSRF_HEADER: csrf}).json()
    brice = TestClient(app, client=("10.7.0.2", 2000))
    login_as(brice, "brice")
    csrf_b = brice.get("/api/account").json()["csrf"]
    j = brice.post(f"/api/games/{g['id']}/join", json={"invite": g["invite"]}, headers={CSRF_HEADER: csrf_b}).json()
    anon = TestClient(app, client=("10.7.0.3", 2000))  # an anonymous watcher: sees everything
    with (
        connect(client, g["id"]) as ra,
        connect(brice, g["id"]) as rb,
        connect(brice, g["id"]) as rbw,
        connect(anon, g["id"]) as rw,
    ):
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        brice_watching = seat(rbw, None, "spectator")  # the opponent's second tab, as a watcher (his account)
        watcher = seat(rw, None, "spectator")
        a.send(type="chat_mute", mute=True)
        a.until("chat_mute")
        a.until("chat_history")
        chat(b, "players' room, from the seat")
        chat(brice_watching, "spectators' room, as a watcher, during the game")
        clock.t += 11
        chat(a, "ada's own words")
        b.send(type="resign")
        b.until("state", lambda m: m["game"]["status"] == "over")
        a.until("state", lambda m: m["game"]["status"] == "over")
        chat(b, "spectators' room, from the seat, after the game", room="spectators")
        chat(brice_watching, "spectators' room, as a watcher, after the game")
        live = [m["text"] for m in no_chat_pending(a)]
        assert all("spectators' room" not in t and "players' room" not in t for t in live), live
        assert [m["text"] for m in history(a)["messages"]] == ["ada's own words"]
        # a second tab of hers, as a watcher (her session): the same
        with connect(client, g["id"]) as ra2:
            ada_watching = seat(ra2, None, "spectator")
            assert [m["text"] for m in history(ada_watching)["messages"]] == ["ada's own words"]
        # others see everything; the muted one is not told anything
        assert len(history(watcher)["messages"]) == 5 and len(history(b)["messages"]) == 5
        # she unmutes: he is back everywhere
        a.send(type="chat_mute", mute=False)
        a.until("chat_mute")
        assert len(a.until("chat_history")["messages"]) == 5
        a.send(type="chat_mute", mute=True)
        a.until("chat_mute")
        a.until("chat_history")
    # the replay's chat endpoint: for her (her session, or her seat's token in X-Seat-Token) he is hidden
    url = f"/api/games/{g['id']}/chat"
    assert [m["text"] for m in client.get(url).json()["messages"]] == ["ada's own words"]
    mine = anon.get(url, headers={"X-Seat-Token": g["token"]})
    assert [m["text"] for m in mine.json()["messages"]] == ["ada's own words"]
    assert mine.headers["cache-control"] == "private, no-store"
    assert len(anon.get(url).json()["messages"]) == 5  # anyone else: the whole chat
    assert len(brice.get(url).json()["messages"]) == 5
    assert len(anon.get(url, headers={"X-Seat-Token": "wrong"}).json()["messages"]) == 5


def test_one_account_cannot_flood_many_games_at_once(client: TestClient, clock: Clock) -> None:
    """Issue 33, item 9: one account wrote 75 chat messages into 15 games in 0.2 s (5 per game, each
    game's own budget).  Now an account has a budget across all its games."""
    login_as(client, "eve")
    csrf = client.get("/api/account").json()["csrf"]
    games = [
        client.post("/api/games", json={"mode": "online", "side": "south"}, headers={CSRF_HEADER: csrf}).json()
        for _ in range(15)
    ]
    accepted, refused = 0, []
    for g in games:
        with connect(client, g["id"]) as raw:
            ws = seat(raw, g["token"], "south")
            for i in range(5):
                ws.send(type="chat", text=f"spam {i}")
                while True:
                    msg = ws.recv()
                    if msg["type"] == "chat_sent":
                        accepted += 1
                        break
                    if msg["type"] == "error":
                        refused.append(msg)
                        break
    assert accepted == _n(MESSAGES.per_account) and len(refused) == 75 - _n(MESSAGES.per_account)
    assert all(e["code"] == "rate_limited" and "all games together" in e["message"] for e in refused)
    clock.t += (MESSAGES.window or 0) + 0.1  # the window has passed: she may write again
    with connect(client, games[0]["id"]) as raw:
        chat(seat(raw, games[0]["token"], "south"), "back")


def test_one_address_has_a_budget_across_games_too(client: TestClient, clock: Clock) -> None:
    store = client.app.state.chat.store  # type: ignore[attr-defined]
    ids = [create(client, mode="online", name="Anon")["id"] for _ in range(_n(MESSAGES.per_group) + 1)]
    for gid in ids[:-1]:
        store.post(
            gid,
            "players",
            side="south",
            account=None,
            author="Anon",
            address="10.8.0.1",
            body="hi",
            ply=0,
            now=clock.t,
        )
    with pytest.raises(ClientError) as err:
        store.post(
            ids[-1],
            "players",
            side="south",
            account=None,
            author="Anon",
            address="10.8.0.1",
            body="hi",
            ply=0,
            now=clock.t,
        )
    assert err.value.code == "rate_limited" and "your address" in err.value.message
    store.post(
        ids[-1],
        "players",
        side="south",
        account=None,
        author="Anon",
        address="10.8.0.2",
        body="hi",
        ply=0,
        now=clock.t,
    )


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


def test_a_database_of_an_older_version_gets_the_reports_new_columns(tmp_path: Any) -> None:
    """Issue 33 added the reporter's address and the closing time to chat_reports."""
    from sqlalchemy import text

    from jericho_game.web.social.chat import ChatStore

    storage = Storage(resolve_db_url(str(tmp_path / "old.sqlite3")))
    try:
        with storage.engine.begin() as conn:
            conn.execute(
                text(
                    "CREATE TABLE chat_reports (id INTEGER PRIMARY KEY, message_id INTEGER NOT NULL, "
                    "game_id VARCHAR(32) NOT NULL, at FLOAT NOT NULL, reporter VARCHAR(80) NOT NULL, reason TEXT, "
                    "CONSTRAINT chat_reports_once UNIQUE (message_id, reporter))"
                )
            )
            conn.execute(text("INSERT INTO chat_reports (message_id, game_id, at, reporter) VALUES (1, 'g', 1.0, 'x')"))
        store = ChatStore(storage)
        ChatStore(storage)  # a second start finds everything there
        with storage.engine.connect() as conn:
            row = conn.execute(text("SELECT reporter, address, closed_at FROM chat_reports")).one()
        assert tuple(row) == ("x", None, None)
        assert store.reports()["total"] == 0  # its message is gone: nothing to show, nothing fails
    finally:
        storage.close()


def test_a_block_hides_each_ones_lines_from_the_other_in_every_chat_view(client: TestClient, clock: Clock) -> None:
    """Issue 51, finding 7: a block hid the blocked player's lines from the blocker, not the other
    way round, and not in the replay's chat.  Now neither reads the other anywhere: the game's chat,
    the spectators' chat (live and in history) and the replay's chat; everyone else reads both."""
    with contextlib.ExitStack() as stack:
        _block_hides_lines(client, clock, stack)


def _block_hides_lines(client: TestClient, clock: Clock, stack: contextlib.ExitStack) -> None:
    """The test above, its other visitors opened on ``stack``."""
    app = client.app
    login_as(client, "ada")
    csrf = client.get("/api/account").json()["csrf"]
    g = client.post("/api/games", json={"mode": "online", "side": "south"}, headers={CSRF_HEADER: csrf}).json()
    # on the app's own event loop (tests.web.test_server.another): a line posted by one reaches the others
    brice = stack.enter_context(another(client, "10.7.0.2"))
    login_as(brice, "brice")
    csrf_b = brice.get("/api/account").json()["csrf"]
    j = brice.post(f"/api/games/{g['id']}/join", json={"invite": g["invite"]}, headers={CSRF_HEADER: csrf_b}).json()
    cyd = stack.enter_context(another(client, "10.7.0.4"))
    login_as(cyd, "cyd")
    accounts = app.state.accounts  # type: ignore[attr-defined]
    app.state.people.block(accounts.find("ada").id, "brice", True)  # type: ignore[attr-defined]
    with connect(client, g["id"]) as ra, connect(brice, g["id"]) as rb, connect(cyd, g["id"]) as rc:
        a, b = seat(ra, g["token"], "south"), seat(rb, j["token"], "north")
        watcher = seat(rc, None, "spectator")
        chat(a, "ada, in the players' chat")  # the blocker may write: the blocked player never reads it
        assert history(b)["messages"] == []
        b.send(type="resign")
        b.until("state", lambda m: m["game"]["status"] == "over")
        a.until("state", lambda m: m["game"]["status"] == "over")
        clock.t += 11
        # each live view is read up to a watcher's line written after the other's: the game's lines
        # come in order, so a line that reached the wrong reader would come before it
        chat(a, "ada, after the game", room="spectators")
        chat(watcher, "cyd, first")
        seen_b = _texts_until(b, "cyd, first")
        chat(b, "brice, after the game", room="spectators")
        chat(watcher, "cyd, second")
        seen_a = _texts_until(a, "cyd, second")
        assert not any(t.startswith("ada") for t in seen_b), seen_b
        assert not any(t.startswith("brice") for t in seen_a) and "cyd, first" in seen_a, seen_a
        texts_a = [m["text"] for m in history(a)["messages"]]
        texts_b = [m["text"] for m in history(b)["messages"]]
        assert texts_a == ["ada, in the players' chat", "ada, after the game", "cyd, first", "cyd, second"], texts_a
        assert texts_b == ["cyd, first", "brice, after the game", "cyd, second"], texts_b
        assert len(history(watcher)["messages"]) == 5
    # the replay's chat: the same for each of them (their sessions), everything for anyone else
    url = f"/api/games/{g['id']}/chat"
    assert [m["text"] for m in client.get(url).json()["messages"]] == texts_a
    assert [m["text"] for m in brice.get(url).json()["messages"]] == texts_b
    assert brice.get(url).headers["cache-control"] == "private, no-store"
    assert len(cyd.get(url).json()["messages"]) == 5
    assert len(stack.enter_context(another(client, "10.7.0.9")).get(url).json()["messages"]) == 5


def _texts_until(ws: WS, last: str) -> list[str]:
    """The chat lines ``ws`` receives up to ``last``."""
    got: list[str] = []
    while not got or got[-1] != last:
        got.append(next_chat(ws)["text"])
    return got


def test_the_chats_rates_and_reports_ask_the_budget_policy(db: str, clock: Clock) -> None:
    """Issue 51: the chat's counts are budgets of the one policy (``chat.message``,
    ``chat.report``), with their codes; a table that allows less refuses sooner."""
    from dataclasses import replace

    from jericho_game.web.common.budget import BUDGETS, OverBudget

    table = dict(BUDGETS)
    table["chat.message"] = replace(BUDGETS["chat.message"], per_pair=2)
    table["chat.report"] = replace(BUDGETS["chat.report"], per_account=1)
    app = create_app(db, ai_processes=0, clock=clock, password_hasher=CHEAP, budgets=table)
    with TestClient(app) as c:
        g, j = pair(c)
        with connect(c, g["id"]) as ra:
            a = seat(ra, g["token"], "south")
            ids = [chat(a, "one")["id"], chat(a, "two")["id"]]
            a.send(type="chat", text="three")
            err = a.error()
            assert err["code"] == "rate_limited" and "2" in err["message"], err
            a.send(type="resign")
            a.until("state", lambda m: m["game"]["status"] == "over")
        assert app.state.budget.refused["chat.message"] == 1
        login_as(c, "dora")
        with connect(c, g["id"]) as rd:
            dora = seat(rd, None, "spectator")
            dora.send(type="chat_report", id=ids[0])
            dora.until("chat_reported")
            dora.send(type="chat_report", id=ids[1])
            assert dora.error()["code"] == "rate_limited"
        assert app.state.budget.refused["chat.report"] == 1
        store = app.state.chat.store
        message = store.message(ids[1])
        with pytest.raises(OverBudget):
            store.report(message, f"account:{app.state.accounts.find('dora').id}", None, clock.t)
