"""The language switch is remembered on the account (issue 24 point 1), on SQLite and PostgreSQL:
a new account keeps the language it signed up in, the switch changes it, a log-in in a new browser
puts it back, and an accounts table of an older version gets the column."""

from __future__ import annotations

import re
import warnings
from typing import Any

from sqlalchemy import create_engine, inspect, text

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web import i18n  # noqa: E402
from jericho_game.web.accounts.accounts import CSRF_HEADER, AccountService  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.storage.database import Storage, resolve_db_url  # noqa: E402
from tests.web.accounts.test_accounts import CHEAP, csrf  # noqa: E402

FR = {"Accept-Language": "fr-FR,fr;q=0.9"}
EN = {"Accept-Language": "en-GB"}
PW = "a long enough password"


def browser(app: Any, address: str) -> TestClient:
    """A new browser: its own cookies (none yet), its own address."""
    return TestClient(app, client=(address, 1000))


def lang_of(c: TestClient, headers: dict[str, str]) -> str:
    m = re.search(r'<html lang="(\w+)"', c.get("/games", headers=headers).text)
    assert m
    return m.group(1)


def test_the_language_follows_the_account_into_a_new_browser(db: str) -> None:
    app = create_app(db, ai_processes=0, password_hasher=CHEAP)
    with browser(app, "10.0.0.1") as first:
        # signed up on French pages: the account keeps French
        r = first.post(
            "/api/account/signup",
            json={"username": "camille", "password": PW},
            headers={**FR, CSRF_HEADER: csrf(first)},
        )
        assert r.status_code == 201 and r.json()["language"] == "fr"
        assert first.get("/api/account").json()["language"] == "fr"
        profile = first.get("/api/players/camille")
        assert profile.status_code == 200 and '"language"' not in profile.text  # private to the player
        second = browser(app, "10.0.0.2")  # a new browser that asks for English
        assert lang_of(second, EN) == "en"
        r = second.post(
            "/api/account/login", json={"username": "camille", "password": PW}, headers={CSRF_HEADER: csrf(second)}
        )
        assert r.status_code == 200 and r.json()["language"] == "fr"
        assert second.cookies.get(i18n.COOKIE) == "fr"
        assert lang_of(second, EN) == "fr"  # the account's choice beats the browser's
        # the switch, logged in: remembered on the account
        token = second.get("/api/account").json()["csrf"]
        r = second.post("/api/account/language", json={"language": "en"}, headers={CSRF_HEADER: token})
        assert r.status_code == 200 and r.json() == {"ok": True, "language": "en"}
        assert lang_of(second, FR) == "en"
        bad = second.post("/api/account/language", json={"language": "xx"}, headers={CSRF_HEADER: token})
        assert bad.status_code == 400 and bad.json()["error"] == "bad_request" and "en, fr" in bad.json()["message"]
        no_csrf = second.post("/api/account/language", json={"language": "fr"})
        assert no_csrf.status_code in (401, 403)
        assert second.get("/api/account").json()["language"] == "en"  # the refused requests changed nothing
        third = browser(app, "10.0.0.3")  # and the next browser gets English
        third.post(
            "/api/account/login", json={"username": "camille", "password": PW}, headers={CSRF_HEADER: csrf(third)}
        )
        assert lang_of(third, FR) == "en"
        stranger = browser(app, "10.0.0.4")  # nobody logged in: the switch is the browser's only
        r = stranger.post("/api/account/language", json={"language": "fr"}, headers={CSRF_HEADER: csrf(stranger)})
        assert r.status_code == 401 and r.json()["error"] == "not_logged_in"


def test_an_older_accounts_table_gets_the_language_column(db: str) -> None:
    """A database written before this version: its accounts keep their data and get a language."""
    url = resolve_db_url(db)
    engine = create_engine(url)
    with engine.begin() as conn:  # the accounts table as the previous version created it
        conn.exec_driver_sql(
            "CREATE TABLE accounts (id INTEGER PRIMARY KEY, username VARCHAR(24) NOT NULL, "
            "username_key VARCHAR(24) NOT NULL UNIQUE, password_hash VARCHAR(255) NOT NULL, "
            "admin INTEGER NOT NULL, disabled INTEGER NOT NULL, created_at FLOAT NOT NULL, "
            "rating FLOAT NOT NULL, rd FLOAT NOT NULL, volatility FLOAT NOT NULL, rated_games INTEGER NOT NULL)"
        )
        conn.execute(
            text("INSERT INTO accounts VALUES (1, 'Old', 'old', :h, 0, 0, 0, 1612.0, 80.0, 0.06, 12)"),
            {"h": CHEAP.hash(PW)},
        )
    engine.dispose()
    storage = Storage(url)
    try:
        accounts = AccountService(storage, hasher=CHEAP)
        AccountService(storage, hasher=CHEAP)  # a second process starting: nothing to add, no error
        assert "language" in {c["name"] for c in inspect(storage.engine).get_columns("accounts")}
        old = accounts.find("old")
        assert old is not None and old.rating == 1612.0 and old.rated_games == 12 and old.language is None
        assert accounts.set_language(old.id, "fr") == "fr"
        assert accounts.get(old.id).language == "fr"  # type: ignore[union-attr]
    finally:
        storage.close()
