"""A tournament in a real browser (issue 52, points 1-3): two players who joined an arena and went
to other pages are taken to their game by themselves; the game page links back to its tournament
and its end screen offers "Back to the tournament" instead of a rematch; the tournament page counts
down to its start, shows each game's points in the standings, fits a 360 px phone without cutting a
column, and ends on a podium."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, expect
from sqlalchemy import text

from jericho_game.web.common.budget import BUDGETS
from jericho_game.web.server import create_app
from tests.web import test_browser, tour
from tests.web.test_browser import serve_in_thread, watch_errors

browser = test_browser.browser

APP: dict[str, Any] = {}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("tournament") / "games.sqlite3"
    table = {**BUDGETS, "signup": replace(BUDGETS["signup"], per_group=None)}  # every player from 127.0.0.1
    app = create_app(
        str(db), password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1), budgets=table
    )
    APP["app"] = app
    yield from serve_in_thread(app)


def _sql(query: str, **args: Any) -> None:
    with APP["app"].state.service.storage.engine.begin() as conn:
        conn.execute(text(query), args)


def test_the_next_game_comes_to_any_page_and_the_game_leads_back(server: str, browser: Browser) -> None:
    ada_ctx = tour.new_context(browser, "light")
    bob_ctx = tour.new_context(browser, "dark", {"width": 360, "height": 740})
    ada, bob = ada_ctx.new_page(), bob_ctx.new_page()
    errors = watch_errors(ada) + watch_errors(bob)
    tour._login(ada, server, "ada_arena")
    tour._login(bob, server, "bob_arena_long_name")
    # a scheduled arena counts down to its start
    ada.goto(server + "/tournaments")
    ada.fill("#t-name", "Night arena")
    ada.fill("#t-start", "10")
    ada.locator("#t-form button[type=submit]").click()
    expect(ada.locator("#t-title")).to_have_text("Night arena")
    countdown = ada.locator("#t-countdown")
    expect(countdown).to_have_text(re.compile(r"^Starts in (9:5\d|10:00)$"))
    first = countdown.text_content()
    expect(countdown).not_to_have_text(first or "", timeout=5000)  # it ticks
    ada.click("#t-join")
    tid = ada.url.rsplit("/", 1)[1]
    bob.goto(ada.url)
    bob.click("#t-join")
    # both go elsewhere; the start comes; each page goes to the game by itself
    ada.goto(server + "/rules")
    bob.goto(server + "/leaderboard")
    _sql("UPDATE tournaments SET starts_at = starts_at - 600 WHERE id = :t", t=tid)
    expect(ada).to_have_url(re.compile(r"/g/[A-Za-z0-9]+$"), timeout=15000)
    expect(bob).to_have_url(ada.url, timeout=15000)
    # the game page names its tournament, a link back
    for page in (ada, bob):
        link = page.locator("#game-tournament a")
        expect(link).to_have_text("Night arena")
        assert link.get_attribute("href") == f"/tournaments/{tid}"
    me = tour._get_json(ada, f"{server}/api/tournaments/{tid}")["me"]
    south, north = (ada, bob) if me["side"] == "south" else (bob, ada)
    expect(south.locator("#tray-mine .slot.playable").first).to_be_visible()
    # berserk from the game page, before the first move: South's 3 minutes halved
    expect(north.locator("#btn-berserk")).to_be_visible()
    south.click("#btn-berserk")
    expect(south.locator("#btn-berserk")).to_be_hidden()
    expect(south.locator("#clock-south")).to_contain_text("1:30")
    tour._place(south, "5R@d2")
    expect(north.locator("#tray-mine .slot.playable").first).to_be_visible()
    tour._place(north, "1G@d3")
    expect(north.locator("#btn-berserk")).to_be_hidden()  # only before one's first move
    north.click("#btn-resign")
    north.click("#btn-resign")
    # the end screen: back to the tournament, no rematch
    for page in (ada, bob):
        back = page.locator("#btn-tournament")
        expect(back).to_be_visible()
        expect(back).to_have_text("Back to the tournament")
        expect(page.locator("#btn-rematch")).to_be_hidden()
    # and a pause: the next pairing would come by itself (an arena's Pause, a Swiss's Withdraw)
    north.click("#btn-tpause")
    expect(north.locator("#btn-tpause")).to_be_hidden()
    north_name = "ada_arena" if north is ada else "bob_arena_long_name"
    withdrawn = {
        s["username"]: s["withdrawn"] for s in tour._get_json(ada, f"{server}/api/tournaments/{tid}")["standings"]
    }
    assert withdrawn[north_name] is True and list(withdrawn.values()).count(True) == 1
    south.click("#btn-tournament")
    expect(south).to_have_url(f"{server}/tournaments/{tid}")
    # the standings: each game's points (the winner's 2, berserked: ⚡)
    expect(south.locator("#t-standings tbody tr").first.locator(".sheet .pts.win")).to_have_text("2⚡")
    # on the phone the standings fit: no column cut at 360 px
    bob.goto(f"{server}/tournaments/{tid}")
    expect(bob.locator("#t-standings tbody tr")).to_have_count(2)
    wrap = bob.evaluate(
        "(() => { const w = document.querySelector('.table-wrap'); return [w.scrollWidth, w.clientWidth]; })()"
    )
    assert wrap[0] <= wrap[1], wrap
    assert bob.evaluate("document.documentElement.scrollWidth") <= 360
    # the end: a podium (the arena's half hour moved into the past, the last game over)
    for p in tour._get_json(ada, f"{server}/api/tournaments/{tid}")["games"]:
        if p["status"] != "done":
            _sql("UPDATE tournament_pairings SET status = 'void' WHERE game_id = :g", g=p["game"])
            _sql("DELETE FROM tournament_slots WHERE tournament = :t", t=tid)
    _sql("UPDATE tournaments SET starts_at = starts_at - 7200 WHERE id = :t", t=tid)
    podium = south.locator("#t-podium li")
    expect(podium).to_have_count(2, timeout=15000)
    winner = "ada_arena" if south is ada else "bob_arena_long_name"
    expect(podium.first).to_contain_text(winner)
    expect(south.locator("#t-when")).to_contain_text(f"{winner} wins")
    ada_ctx.close()
    bob_ctx.close()
    assert not [e for e in errors if "status of 40" not in e], errors


def test_the_tournament_chat_is_written_by_accounts_and_read_by_anyone(server: str, browser: Browser) -> None:
    """Issue 52: a line written on the tournament's page reaches another player's page and an
    anonymous visitor's, as text; the visitor is offered a login, not a box that would be refused."""
    ada_ctx = tour.new_context(browser, "light")
    cy_ctx = tour.new_context(browser, "dark", {"width": 360, "height": 740})
    anon_ctx = tour.new_context(browser, "light")
    ada, cy, anon = ada_ctx.new_page(), cy_ctx.new_page(), anon_ctx.new_page()
    errors = watch_errors(ada) + watch_errors(cy) + watch_errors(anon)
    tour._login(ada, server, "ada_chat")
    tour._login(cy, server, "cy_chat")
    ada.goto(server + "/tournaments")
    ada.fill("#t-name", "Chat arena")
    ada.fill("#t-start", "10")
    ada.locator("#t-form button[type=submit]").click()
    expect(ada.locator("#t-title")).to_have_text("Chat arena")
    url = ada.url
    cy.goto(url)
    anon.goto(url)
    expect(anon.locator("#tc-signin")).to_be_visible()
    expect(anon.locator("#tc-form")).to_be_hidden()
    hostile = "<b>good</b> luck"
    ada.fill("#tc-input", hostile)
    ada.locator("#tc-form button[type=submit]").click()
    expect(ada.locator("#tc-list .chat-text")).to_have_text([hostile])
    expect(ada.locator("#tc-input")).to_have_value("")
    expect(cy.locator("#tc-list .chat-text")).to_have_text([hostile], timeout=8000)
    expect(cy.locator("#tc-list .chat-author")).to_have_text(["ada_chat"])
    expect(anon.locator("#tc-list .chat-text")).to_have_text([hostile], timeout=8000)
    expect(anon.locator("#tc-list .chat-report")).to_have_count(0)
    cy.locator("#tc-list .chat-report").click()
    expect(cy.locator("#tc-note")).to_have_text("Thank you: the message was reported to the administrators.")
    expect(cy.locator("#tc-list .chat-report")).to_have_text("Reported")
    assert errors == []
    for ctx in (ada_ctx, cy_ctx, anon_ctx):
        ctx.close()
