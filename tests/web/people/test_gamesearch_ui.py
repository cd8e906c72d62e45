"""A player's games searched and their statistics in a real browser (issue 34, point 3): the search form
and its filters in the address, the pages ("More games"), a bad position named in the error, the
download link carrying the filters (read back by the records reader), the statistics page's tables and
charts; in English and in French on a phone (390 px: nothing wider than the screen), with axe-core."""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, Page, expect
from sqlalchemy import text

from jericho_game.game import Game
from jericho_game.record import read_records
from jericho_game.web.server import create_app
from jericho_game.web.storage.database import GameRecord
from tests.web import test_browser, tour
from tests.web.test_browser import serve_in_thread, watch_errors

browser = test_browser.browser
APP: dict[str, Any] = {}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("gamesearch") / "games.sqlite3"
    app = create_app(str(db), password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    APP["app"] = app
    yield from serve_in_thread(app)


def _seed(page: Page, server: str) -> None:
    """25 games of ada_gs against bob_gs (Ada wins the even ones), two points of rating history."""
    tour._login(page, server, "bob_gs")
    tour._login(page, server, "ada_gs")
    app = APP["app"]
    ada, bob = app.state.accounts.find("ada_gs").id, app.state.accounts.find("bob_gs").id
    storage = app.state.service.storage
    g = Game()
    moves = []
    for _ in range(4):
        moves.append(str(g.legal_moves()[0]))
        g.play(moves[-1])
    start = float(calendar.timegm(time.strptime("2026-01-01", "%Y-%m-%d")))
    for i in range(25):
        storage.create(
            GameRecord(
                id=f"gs{i:02d}",
                mode="online",
                joined=True,
                south_token="s",
                north_token="n",
                south_account=ada,
                north_account=bob,
                result="south" if i % 2 == 0 else "north",
                reason="resign",
                clock=300.0,
                created_at=start + i * 86400,
                updated_at=start + i * 86400,
                moves=moves,
            )
        )
    with storage.engine.begin() as conn:
        for k, rating in enumerate((1520.0, 1490.0)):
            conn.execute(
                text(
                    "INSERT INTO rating_history (game_id, account_id, at, opponent_id, score, rating_before, rating, "
                    "rd, volatility) VALUES (:g, :a, :at, :o, 1, 1500, :r, 200, 0.06)"
                ),
                {"g": f"gs{k:02d}", "a": ada, "at": start + k, "o": bob, "r": rating},
            )


def _fits(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page is {width} px wide"  # type: ignore[index]


def test_search_filter_page_and_export_then_the_statistics(server: str, browser: Browser) -> None:
    ctx = tour.new_context(browser, "light")
    page = ctx.new_page()
    errors = watch_errors(page)
    _seed(page, server)
    page.goto(server + "/players/ada_gs")
    page.click("#profile-search")
    expect(page.locator("#pg-title")).to_contain_text("ada_gs")
    rows = page.locator("#pg-games tbody tr")
    expect(rows).to_have_count(20)  # the first page
    expect(rows.first).to_have_attribute("data-id", "gs24")  # newest first
    page.click("#pg-more")
    expect(rows).to_have_count(25)
    expect(page.locator("#pg-more")).to_be_hidden()
    expect(page.locator("#pg-status")).to_contain_text("25 games shown")
    # a filter: the games Ada won, kept in the address
    page.select_option("#pg-result", "won")
    page.click("#pg-search")
    expect(rows).to_have_count(13)
    assert "result=won" in page.url
    expect(rows.first).to_contain_text("Won")
    # the download carries the same filters: 13 records
    href = page.get_attribute("#pg-export", "href")
    assert href is not None and "result=won" in href
    records = read_records(page.request.get(server + href).text())
    assert len(records) == 13 and {r.result for r in records} == {"1-0"}
    # a position: every game passed through the position after two moves; a bad one is named
    g = Game()
    for _ in range(2):
        g.play(g.legal_moves()[0])
    page.fill("#pg-position", g.position())
    page.click("#pg-search")
    expect(rows).to_have_count(13)
    # the same search from the analysis board's position
    page.goto(server + "/analysis?" + urlencode({"position": g.position()}))
    expect(page.locator("#an-position")).to_have_value(g.position())
    page.click("#an-find-games")
    expect(page).to_have_url(re.compile(r"/players/ada_gs/games\?position="))
    expect(rows).to_have_count(20)
    expect(page.locator("#pg-position")).to_have_value(g.position())
    page.fill("#pg-position", "not a position")
    page.click("#pg-search")
    expect(page.locator("#pg-error")).to_contain_text("position")
    expect(rows).to_have_count(0)
    assert tour.axe_violations(page) == []
    # the statistics, from the search page's link
    page.goto(server + "/players/ada_gs/games")
    page.click("#pg-stats")
    expect(page.locator("#ps-counted")).to_contain_text("25 finished games counted")
    expect(page.locator("#ps-side tbody tr").first).to_contain_text("13")
    expect(page.locator("#ps-opponent tbody tr")).to_have_count(1)
    expect(page.locator("#ps-opponent tbody tr")).to_contain_text("bob_gs")
    expect(page.locator("#ps-openings tbody tr")).to_have_count(1)
    expect(page.locator("#ps-rating circle")).to_have_count(2)
    expect(page.locator("#ps-accuracy")).to_have_count(0)  # no review yet: a sentence says so
    assert tour.axe_violations(page) == []
    ctx.close()
    assert not [e for e in errors if "status of 400" not in e], errors


def test_both_pages_in_french_on_a_phone(server: str, browser: Browser) -> None:
    ctx = tour.new_context(browser, "fr", tour.SIZES["phone"])
    page = ctx.new_page()
    errors = watch_errors(page)
    if APP["app"].state.accounts.find("ada_gs") is None:
        _seed(page, server)
    tour._login(page, server, "ada_gs")
    page.goto(server + "/players/ada_gs/games?side=south&speed=blitz")
    expect(page.locator("#pg-title")).to_contain_text("Parties de ada_gs")
    expect(page.locator("#pg-games tbody tr")).to_have_count(20)
    expect(page.locator("#pg-speed")).to_have_value("blitz")  # the address fills the form (5 min: blitz)
    expect(page.locator("#pg-search")).to_have_text("Chercher")
    _fits(page)
    assert tour.axe_violations(page) == []
    page.goto(server + "/players/ada_gs/stats")
    expect(page.locator("#ps-title")).to_contain_text("Statistiques de ada_gs")
    expect(page.locator("#ps-body h2").first).to_have_text("Résultats par camp")
    _fits(page)
    assert tour.axe_violations(page) == []
    ctx.close()
    assert not errors, errors


def test_my_games_filter_the_browsers_list(server: str, browser: Browser) -> None:
    """/games (the games this browser holds, no account needed): a text, a result and a kind of game."""
    ctx = tour.new_context(browser, "light", tour.SIZES["phone"])
    page = ctx.new_page()
    errors = watch_errors(page)
    tour._game(page, server, ("5R@d2",))  # a hot-seat game in progress
    tour._over(page, server)  # a hot-seat game resigned
    page.goto(server + "/games")
    rows = page.locator("#games tr")
    expect(rows).to_have_count(2)
    expect(page.locator("#games-count")).to_have_text("Games shown: 2 of 2")
    page.select_option("#games-outcome", "playing")
    expect(page.locator("#games tr:visible")).to_have_count(1)
    expect(page.locator("#games-count")).to_have_text("Games shown: 1 of 2")
    page.select_option("#games-outcome", "")
    page.select_option("#games-kind", "ai")
    expect(page.locator("#games tr:visible")).to_have_count(0)
    page.select_option("#games-kind", "hotseat")
    page.fill("#games-find", "no such words")
    expect(page.locator("#games tr:visible")).to_have_count(0)
    page.fill("#games-find", "")
    expect(page.locator("#games tr:visible")).to_have_count(2)
    _fits(page)
    assert tour.axe_violations(page) == []
    ctx.close()
    assert not errors, errors
