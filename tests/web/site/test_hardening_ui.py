"""Issue 22 in a real browser (Playwright driving Debian's chromium): after logging in, the page
never follows ``next`` to another site (the audit's ``/\\host/`` and ``/%09/host/`` did), and
the log-in page's own check refuses every payload that the server's refuses."""

from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import Browser

from jericho_game.web.server import create_app
from tests.web import test_browser
from tests.web.accounts.test_accounts import CHEAP
from tests.web.site.test_hardening import BAD_NEXT, GOOD_NEXT

browser = test_browser.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("hardening") / "games.sqlite3"
    app = create_app(str(db), ai_processes=0, password_hasher=CHEAP)
    yield from test_browser.serve_in_thread(app)


def test_logging_in_never_leaves_the_site(server: str, browser: Browser) -> None:
    ctx = browser.new_context()
    page = ctx.new_page()
    try:
        page.goto(server + "/signup")
        page.fill("#username", "alice")
        page.fill("#password", "alice's long password")
        page.click("#account-submit")
        page.wait_for_url(server + "/")
        # a real log-in with the audit's payloads, as a victim would click them
        for raw in ("/\\evil.example/x", "/%09/evil.example/x", quote("/\\evil.example", safe="")):
            page.goto(f"{server}/login?next={raw}")
            page.fill("#username", "alice")
            page.fill("#password", "alice's long password")
            page.click("#account-submit")
            deadline = time.monotonic() + 30
            while "/login" in page.url and time.monotonic() < deadline:
                page.wait_for_timeout(100)
            assert urlsplit(page.url).netloc == urlsplit(server).netloc, (raw, page.url)
        # the page's own check, whatever the server did with the query
        page.goto(server + "/login")
        for bad in BAD_NEXT:
            assert page.evaluate("async (p) => (await import('/static/account.js')).safeNext(p)", bad) == "/", bad
        for good in GOOD_NEXT:
            assert page.evaluate("async (p) => (await import('/static/account.js')).safeNext(p)", good) == good
        # a good next is still followed
        page.goto(f"{server}/login?next=/leaderboard")
        page.fill("#username", "alice")
        page.fill("#password", "alice's long password")
        page.click("#account-submit")
        page.wait_for_url(server + "/leaderboard")
    finally:
        ctx.close()
