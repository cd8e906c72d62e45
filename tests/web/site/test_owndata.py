"""Each player's own data (issue 54, point 5; web/site/owndata.py), on SQLite and PostgreSQL: the
archive of everything held about an account, and closing it, after which a walk over every table of
the schema finds nothing personal of it (name, e-mail address, client address, chat text, settings).
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from typing import Any

import pytest

pytest.importorskip("starlette")
from sqlalchemy import inspect, text  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from jericho_game.web.accounts.accounts import CSRF_HEADER  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.site.owndata import CLOSED_NAME  # noqa: E402
from tests.web.accounts.test_accounts import create, csrf, join, signup  # noqa: E402
from tests.web.social.test_chat import chat  # noqa: E402
from tests.web.test_server import another, connect, seat  # noqa: E402

NAME = "zqPersonal"
EMAIL = "zq-mail@example.org"
ADDRESS = "10.9.8.7"
CHAT = "zq secret chat line"
PW = "a long and private passphrase 54"
OTHER = "otherplayer"


def post(c: TestClient, path: str, body: Any) -> Any:
    r = c.post(path, json=body, headers={CSRF_HEADER: csrf(c)})
    assert r.status_code < 400, (path, r.status_code, r.text)
    return r


def app_for(db: str) -> Any:
    # with mail on (to a port nothing listens on: mails wait in the outbox), as a server with --smtp
    return create_app(db, ai_processes=0, smtp="smtp://127.0.0.1:9", public_url="http://example.org")


def a_full_account(me: TestClient, other: TestClient) -> tuple[int, int, str]:
    """``NAME`` with something in every feature; its id, the other player's, and their game's id."""
    signup(me, NAME, PW)
    signup(other, OTHER, PW)
    accounts = me.app.state.accounts  # type: ignore[attr-defined]
    mine, theirs = accounts.find(NAME).id, accounts.find(OTHER).id
    post(me, "/api/account/language", {"language": "fr"})
    post(me, "/api/account/prefs", {"board": "slate", "pieces": "deep"})
    post(me, "/api/notify/settings", {"email": EMAIL})
    post(me, "/api/challenges/settings", {"challenges": "follows"})
    post(me, "/api/people/follow", {"username": OTHER, "follow": True})
    post(other, "/api/people/follow", {"username": NAME, "follow": True})
    post(me, "/api/challenges", {"username": OTHER, "clock": 5})
    g = create(me, mode="online", side="south")
    north = join(other, g).json()["token"]
    with connect(me, g["id"]) as raw_me, connect(other, g["id"]) as raw_other:
        ws = seat(raw_me, g["token"], "south")
        theirs_ws = seat(raw_other, north, "north")
        sent = chat(ws, CHAT)
        ws.send(type="move", move="5R@d2")
        ws.until("ack")
        theirs_ws.send(type="chat_report", id=sent["id"], reason="spam")
        theirs_ws.until("chat_reported")
    me.get("/api/puzzles/next")
    storage = me.app.state.service.storage  # type: ignore[attr-defined]
    now = time.time()
    with storage.engine.begin() as conn:  # what longer stories leave: a rated game, puzzles solved, a tournament
        conn.execute(
            text(
                "INSERT INTO rating_history (game_id, account_id, at, opponent_id, score, rating_before, rating, rd, "
                "volatility) VALUES (:g, :a, :t, :o, 1, 1500, 1620, 290, 0.06), "
                "(:g, :o, :t, :a, 0, 1500, 1380, 290, 0.06)"
            ),
            {"g": g["id"], "a": mine, "o": theirs, "t": now},
        )
        conn.execute(
            text(
                "INSERT INTO puzzle_attempts (player, puzzle_id, at, solved, rating_before, rating, address) "
                "VALUES (:p, 'zz1', :t, 1, 1500, 1540, :addr)"
            ),
            {"p": f"account:{mine}", "t": now, "addr": ADDRESS},
        )
        conn.execute(
            text(
                "INSERT INTO puzzle_players (player, rating, rd, volatility, solved, failed, updated_at) "
                "VALUES (:p, 1540, 300, 0.06, 1, 0, :t)"
            ),
            {"p": f"account:{mine}", "t": now},
        )
        conn.execute(
            text("INSERT INTO puzzle_streaks (player, best, at) VALUES (:p, 7, :t)"), {"p": f"account:{mine}", "t": now}
        )
    arena = me.app.state.tournaments.create(  # type: ignore[attr-defined]
        theirs, {"name": "Walk cup", "clock": 3, "minutes": 30, "starts_in": 60}
    )
    post(me, f"/api/tournaments/{arena['id']}/join", {})
    return mine, theirs, g["id"]


def every_value(storage: Any) -> list[tuple[str, dict[str, Any]]]:
    """(table, row) of every row of every table of the schema."""
    with storage.engine.connect() as conn:
        return [
            (t, dict(r._mapping))
            for t in sorted(inspect(conn).get_table_names())
            for r in conn.execute(text(f'SELECT * FROM "{t}"'))
        ]


#: Rows that may keep the client address: counters of an address's recent attempts that name no account,
#: kept until their window ends (docs/web.md, "Accounts and ratings": closing an account)
def _address_counter(table: str, row: dict[str, Any]) -> bool:
    if table == "auth_throttle":
        return str(row["key"]).startswith(("addr:", "logins:", "signup:"))
    return table == "budget_spend" and row["account"] is None


def personal_left(storage: Any, account_id: int) -> list[str]:
    """Whatever of the account's personal data any table still holds."""
    found = []
    for table, row in every_value(storage):
        for column, value in row.items():
            if value is None:
                continue
            s = str(value).lower()
            for what, needle in (("name", NAME.lower()), ("email", EMAIL), ("chat", CHAT)):
                if needle in s:
                    found.append(f"{table}.{column} holds the {what}: {s[:80]!r}")
            if ADDRESS in s and not _address_counter(table, row):
                found.append(f"{table}.{column} holds the address: {s[:80]!r}")
    # settings: rows of the account in the settings tables
    with storage.engine.connect() as conn:
        have = set(inspect(conn).get_table_names())
        for table, column in (
            ("account_prefs", "account"),
            ("people_prefs", "account"),
            ("mail_prefs", "account_id"),
            ("people_seen", "account"),
            ("sessions", "account_id"),
            ("login_devices", "account_id"),
        ):
            if table in have:
                n = conn.execute(text(f"SELECT count(*) FROM {table} WHERE {column} = :a"), {"a": account_id}).scalar()
                if n:
                    found.append(f"{table} holds {n} rows of the account")
        language = conn.execute(text("SELECT language FROM accounts WHERE id = :a"), {"a": account_id}).scalar()
        if language is not None:
            found.append(f"accounts.language is {language!r}")
    return found


def test_closing_an_account_leaves_nothing_personal_in_any_table(db: str) -> None:
    app = app_for(db)
    with TestClient(app, client=(ADDRESS, 2000)) as me, another(me, "10.1.1.1") as other:
        mine, theirs, game_id = a_full_account(me, other)
        storage = app.state.service.storage
        before = [f for f in personal_left(storage, mine) if not f.startswith("auth_throttle")]
        # the walk finds each kind of thing while the account is open (it can fail)
        for what in ("name", "email", "chat", "address"):
            assert any(f"holds the {what}" in f for f in before), (what, before)
        assert any("account_prefs" in f for f in before) and any("mail_prefs" in f for f in before)
        # a wrong password changes nothing
        r = me.post("/api/account/close", json={"password": "not my password at all"}, headers={CSRF_HEADER: csrf(me)})
        assert r.status_code == 401 and r.json()["error"] == "wrong_password"
        # (counted as a guess by the log-in throttle: its counter is the only new row)
        assert [f for f in personal_left(storage, mine) if not f.startswith("auth_throttle")] == before
        r = me.post("/api/account/close", json={"password": PW}, headers={CSRF_HEADER: csrf(me)})
        assert r.status_code == 200, r.text
        assert personal_left(storage, mine) == []
        # the game stays, under the neutral name, for the other player too
        st = other.get(f"/api/games/{game_id}").json()
        assert st["moves"] == ["5R@d2"]
        assert CLOSED_NAME in json.dumps(st) and NAME not in json.dumps(st)
        record = other.get(f"/api/games/{game_id}/record").text
        assert NAME not in record and CLOSED_NAME in record
        # the other player's own data stays theirs
        with storage.engine.connect() as conn:
            kept = conn.execute(text("SELECT count(*) FROM rating_history WHERE account_id = :o"), {"o": theirs})
            assert kept.scalar() == 1
        # the closed account no longer logs in, and its name is free again
        assert me.get("/api/account").json()["account"] is None
        r = me.post("/api/account/login", json={"username": NAME, "password": PW}, headers={CSRF_HEADER: csrf(me)})
        assert r.status_code == 401
        assert app.state.accounts.find(NAME) is None


def test_the_archive_holds_everything_about_the_account(db: str) -> None:
    app = app_for(db)
    with TestClient(app, client=(ADDRESS, 2000)) as me, another(me, "10.1.1.1") as other:
        mine, _theirs, game_id = a_full_account(me, other)
        r = me.get("/api/account/data")
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/zip"
        assert f'filename="jericho-{NAME}-data.zip"' in r.headers["content-disposition"]
        zf = zipfile.ZipFile(io.BytesIO(r.content))
        names = set(zf.namelist())
        jgn = [n for n in names if n.startswith("games/") and n.endswith(f"-{game_id}.jgn")]
        assert len(jgn) == 1 and "5R@d2" in zf.read(jgn[0]).decode()

        def read(name: str) -> Any:
            return json.loads(zf.read(name))

        assert read("account.json")["username"] == NAME and read("account.json")["language"] == "fr"
        assert [g["id"] for g in read("games.json")] == [game_id]
        assert [h["opponent"] for h in read("ratings.json")["history"]] == [OTHER]
        puzzles = read("puzzles.json")
        assert puzzles["best_streak"] == 7 and [a["puzzle_id"] for a in puzzles["attempts"]] == ["zz1"]
        assert [c["text"] for c in read("chat.json")] == [CHAT]
        settings = read("settings.json")
        assert settings["looks"] == {"board": "slate", "pieces": "deep"} and settings["who_may_challenge"] == "follows"
        assert settings["mail"]["email"] == EMAIL and "unsub" not in json.dumps(settings)
        people = read("people.json")
        assert [f["name"] for f in people["follows"]] == [OTHER]
        assert [c["challenged"] for c in people["challenges"]] == [OTHER]
        assert [t["name"] for t in read("tournaments.json")] == ["Walk cup"]
        assert "README.txt" in names
        # someone else's session gets its own archive, never this one; without a session: 401
        theirs = other.get("/api/account/data")
        assert CHAT not in zipfile.ZipFile(io.BytesIO(theirs.content)).read("chat.json").decode()
        me.cookies.clear()
        r = me.get("/api/account/data")
        assert r.status_code == 401 and r.json()["error"] == "not_logged_in"
        assert mine > 0


def test_closing_keeps_a_waiting_ai_move_valid_and_names_the_game_anew(db: str) -> None:
    """The closing bumps the version of each of the account's games (every process's cached room is
    stale); an AI job waiting for the game's old version is moved to the new one, else the AI's move
    would be discarded and the game would wait for it for ever."""
    app = app_for(db)
    with TestClient(app, client=(ADDRESS, 2000)) as me:
        signup(me, NAME, PW)
        g = create(me, mode="online", side="south")
        storage = app.state.service.storage
        before = storage.version(g["id"])
        with storage.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO ai_jobs (game_id, version, level, moves, created_at, lane) "
                    "VALUES (:g, :v, 'easy', '', :t, 0)"
                ),
                {"g": g["id"], "v": before, "t": time.time()},
            )
        r = me.post("/api/account/close", json={"password": PW}, headers={CSRF_HEADER: csrf(me)})
        assert r.status_code == 200, r.text
        after = storage.version(g["id"])
        assert after == before + 1
        with storage.engine.connect() as conn:
            job = conn.execute(text("SELECT version FROM ai_jobs WHERE game_id = :g"), {"g": g["id"]}).scalar()
        assert job == after
        rec = storage.load(g["id"])
        assert rec.meta.get("names", {}).get("south") in (None, CLOSED_NAME) and rec.address is None
