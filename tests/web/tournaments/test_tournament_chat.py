"""A tournament's chat (issue 52; web/tournaments/chat.py): one room per tournament, written by
accounts and read by anyone, with the games' chat's rules, blocks, reports and ``chat.message``
budget; on SQLite and PostgreSQL."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from argon2 import PasswordHasher
from sqlalchemy import text

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.accounts.accounts import CSRF_HEADER, AccountService  # noqa: E402
from jericho_game.web.common.budget import BUDGETS  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.tournaments.tournaments import TournamentPolicy  # noqa: E402
from tests.web.test_server import another  # noqa: E402

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
PW = "correct horse battery staple"
HOSTILE = '<img src=x onerror="alert(1)">'
MESSAGES = BUDGETS["chat.message"]


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
    app = create_app(
        db, ai_processes=0, clock=clock, password_hasher=CHEAP, tournament_policy=TournamentPolicy(tick=3600.0)
    )
    with TestClient(app) as c:
        yield c


def login_as(c: TestClient, name: str, *, admin: bool = False) -> str:
    """Create the account and log this client in; its CSRF token."""
    accounts = AccountService(c.app.state.service.storage, hasher=CHEAP)  # type: ignore[attr-defined]
    if accounts.find(name) is None:
        accounts.create_account(name, PW, admin=admin)
    csrf = c.get("/api/account").json()["csrf"]
    r = c.post("/api/account/login", json={"username": name, "password": PW}, headers={CSRF_HEADER: csrf})
    assert r.status_code == 200, r.text
    token: str = c.get("/api/account").json()["csrf"]
    return token


def arena(c: TestClient, csrf: str, name: str = "Chat cup") -> str:
    r = c.post(
        "/api/tournaments", json={"name": name, "clock": 3, "minutes": 30, "starts_in": 60}, headers={CSRF_HEADER: csrf}
    )
    assert r.status_code == 201, r.text
    tid: str = r.json()["id"]
    return tid


def say(c: TestClient, csrf: str, tid: str, words: Any) -> Any:
    return c.post(f"/api/tournaments/{tid}/chat", json={"text": words}, headers={CSRF_HEADER: csrf})


def texts(c: TestClient, tid: str, after: int = 0) -> list[str]:
    r = c.get(f"/api/tournaments/{tid}/chat?after={after}")
    assert r.status_code == 200, r.text
    return [m["text"] for m in r.json()["messages"]]


def rows(c: TestClient) -> int:
    with c.app.state.service.storage.engine.connect() as conn:  # type: ignore[attr-defined]
        return int(conn.execute(text("SELECT COUNT(*) FROM chat_messages")).scalar_one())


def test_players_and_visitors_write_anyone_reads(client: TestClient, clock: Clock) -> None:
    with ExitStack() as stack:
        csrf = login_as(client, "ada")
        tid = arena(client, csrf)
        assert client.post(f"/api/tournaments/{tid}/join", json={}, headers={CSRF_HEADER: csrf}).status_code == 200
        r = say(client, csrf, tid, f"  good luck {HOSTILE}  ")
        assert r.status_code == 201, r.text
        first = r.json()
        assert first["author"] == "ada" and first["room"] == "tournament" and first["text"] == f"good luck {HOSTILE}"
        bob = stack.enter_context(another(client, "10.8.0.2"))
        csrf_b = login_as(bob, "bob")  # a visitor: not a player of the tournament
        assert say(bob, csrf_b, tid, "thanks").status_code == 201
        anon = stack.enter_context(another(client, "10.8.0.3"))
        page = anon.get(f"/api/tournaments/{tid}/chat").json()
        assert [m["text"] for m in page["messages"]] == [f"good luck {HOSTILE}", "thanks"]
        assert page["writable"] is False and page["seq"] == 2
        assert texts(anon, tid, after=1) == ["thanks"]  # what a page that has seq 1 asks for
        # an anonymous visitor reads but does not write: a clear error, nothing stored
        csrf_anon = anon.get("/api/account").json()["csrf"]
        refused = say(anon, csrf_anon, tid, "hello")
        assert refused.status_code == 403 and refused.json()["error"] == "login_required", refused.text
        assert "log in" in refused.json()["message"]
        # the games' chat's rules: one line of text, the length cap; an unknown tournament
        assert say(bob, csrf_b, tid, "two\nlines").json()["error"] == "chat_text"
        assert say(bob, csrf_b, tid, "x" * 501).json()["error"] == "chat_too_long"
        assert say(bob, csrf_b, tid, "\u3164").json()["error"] == "bad_message"
        assert say(bob, csrf_b, "nosuch", "hi").status_code == 404
        assert anon.get("/api/tournaments/nosuch/chat").json()["error"] == "unknown_tournament"
        assert anon.get(f"/api/tournaments/{tid}/chat?after=x").status_code == 400
        assert rows(client) == 2
        # the tournament's room is not a game's: its messages are not any game's chat
        assert anon.get(f"/api/games/t:{tid}/chat").status_code == 404


def test_a_site_muted_account_cannot_write(client: TestClient) -> None:
    csrf = login_as(client, "ada")
    tid = arena(client, csrf)
    client.app.state.chat.store.set_site_mute(client.app.state.accounts.find("ada").id, True)  # type: ignore[attr-defined]
    r = say(client, csrf, tid, "hi")
    assert r.status_code == 403 and r.json()["error"] == "chat_muted"


def test_a_block_hides_each_ones_lines_from_the_other(client: TestClient, clock: Clock) -> None:
    with ExitStack() as stack:
        csrf = login_as(client, "ada")
        tid = arena(client, csrf)
        brice = stack.enter_context(another(client, "10.7.0.2"))
        csrf_b = login_as(brice, "brice")
        cyd = stack.enter_context(another(client, "10.7.0.4"))
        csrf_c = login_as(cyd, "cyd")
        accounts = client.app.state.accounts  # type: ignore[attr-defined]
        client.app.state.people.block(accounts.find("ada").id, "brice", True)  # type: ignore[attr-defined]
        assert say(client, csrf, tid, "ada here").status_code == 201
        assert say(brice, csrf_b, tid, "brice here").status_code == 201
        assert say(cyd, csrf_c, tid, "cyd here").status_code == 201
        assert texts(client, tid) == ["ada here", "cyd here"]  # the blocker does not read the blocked
        assert texts(brice, tid) == ["brice here", "cyd here"]  # nor the blocked the blocker
        assert texts(cyd, tid) == ["ada here", "brice here", "cyd here"]
        assert brice.get(f"/api/tournaments/{tid}/chat").headers["cache-control"] == "private, no-store"
        # the page's next read starts after the room's last line, shown or not
        assert client.get(f"/api/tournaments/{tid}/chat").json()["seq"] == 3


def test_a_report_reaches_the_admins_queue(client: TestClient) -> None:
    with ExitStack() as stack:
        csrf = login_as(client, "ada")
        tid = arena(client, csrf)
        sent = say(client, csrf, tid, "you are a noob").json()
        anon = stack.enter_context(another(client, "10.6.0.3"))
        csrf_anon = anon.get("/api/account").json()["csrf"]
        url = f"/api/tournaments/{tid}/chat/report"
        r = anon.post(url, json={"id": sent["id"]}, headers={CSRF_HEADER: csrf_anon})
        assert r.status_code == 403 and r.json()["error"] == "login_required"
        bob = stack.enter_context(another(client, "10.6.0.2"))
        csrf_b = login_as(bob, "bob")
        other = arena(client, csrf, "Other cup")
        wrong = bob.post(
            f"/api/tournaments/{other}/chat/report", json={"id": sent["id"]}, headers={CSRF_HEADER: csrf_b}
        )
        assert wrong.status_code == 404 and wrong.json()["error"] == "unknown_message"
        assert bob.post(url, json={"id": "1"}, headers={CSRF_HEADER: csrf_b}).status_code == 400
        r = bob.post(url, json={"id": sent["id"], "reason": "insult"}, headers={CSRF_HEADER: csrf_b})
        assert r.status_code == 200, r.text
        root = stack.enter_context(another(client, "10.6.0.9"))
        login_as(root, "root", admin=True)
        [report] = root.get("/api/admin/chat/reports").json()["reports"]
        assert report["message_id"] == sent["id"] and report["game_id"] == f"t:{tid}"
        assert report["room"] == "tournament" and report["reasons"] == ["insult"]
        assert report["reporters"] == [f"account:{bob.app.state.accounts.find('bob').id}"]  # type: ignore[attr-defined]


def test_the_budget_refuses_a_flood_in_one_room_and_across_rooms(client: TestClient, clock: Clock) -> None:
    """``chat.message``: per author in one room (the pair), per account in every room together."""
    assert MESSAGES.per_pair is not None and MESSAGES.per_account is not None and MESSAGES.window is not None
    csrf = login_as(client, "ada")
    rooms = [arena(client, csrf, f"Cup {i}") for i in range(3)]
    pair, per_account = int(MESSAGES.per_pair), int(MESSAGES.per_account)
    for i in range(pair):
        assert say(client, csrf, rooms[0], f"line {i}").status_code == 201
    before = rows(client)
    r = say(client, csrf, rooms[0], "one too many")
    assert r.status_code == 429 and r.json()["error"] == "rate_limited", r.text
    assert rows(client) == before
    # other rooms take more, up to the account's budget across rooms
    sent = pair
    k = 1
    while sent < per_account:
        room = rooms[k]
        for _ in range(min(pair, per_account - sent)):
            assert say(client, csrf, room, f"line {sent}").status_code == 201
            sent += 1
        k += 1
    r = say(client, csrf, rooms[-1], "still too many")
    assert r.status_code == 429 and "from your account" in r.json()["message"], r.text
    assert rows(client) == per_account
    clock.t += MESSAGES.window + 1  # the window passed: the author writes again
    assert say(client, csrf, rooms[0], "back").status_code == 201
