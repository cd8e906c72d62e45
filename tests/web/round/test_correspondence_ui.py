"""Correspondence games in a real browser (issue 23, point 1): created from the home page with
days per move, joined by invite on a phone; the "your turn" list on the home page and on /games,
desktop and phone, lists every game waiting for the player, most urgent first, each deadline in
the player's own time zone.  Screenshots go to artifacts/."""

from __future__ import annotations

from playwright.sync_api import Browser, Page, expect

from tests.web import test_browser
from tests.web.test_browser import ARTIFACTS, DESKTOP, PHONE, play_one, watch_errors

server = test_browser.server
browser = test_browser.browser


def _new_correspondence(page: Page, server: str, days: str) -> str:
    """Create an invite-only online game with ``days`` per move as South; its invite link."""
    page.goto(server + "/")
    page.get_by_label("Online").check()
    page.select_option("select[name=side]", "south")
    page.select_option("select[name=clock]", f"d{days}")
    page.click("#start")
    page.wait_for_url("**/g/*")
    link: str = page.locator("#invite-link").input_value()
    return link


def test_the_your_turn_list_on_desktop_and_phone(server: str, browser: Browser) -> None:
    a_ctx = browser.new_context(viewport=DESKTOP, timezone_id="America/New_York", locale="en-US")
    b_ctx = browser.new_context(viewport=PHONE, timezone_id="Asia/Tokyo", locale="en-US")
    a, b = a_ctx.new_page(), b_ctx.new_page()
    errors = [watch_errors(p) for p in (a, b)]
    # the correspondence choices are offered for online games only
    a.goto(server + "/")
    expect(a.locator("#per-move-days")).to_be_hidden()
    a.get_by_label("Online").check()
    expect(a.locator("option[value=d3]")).to_be_attached()
    slow = _new_correspondence(a, server, "7")
    fast = _new_correspondence(a, server, "1")
    ids = [u.split("/g/")[1].split("#")[0] for u in (slow, fast)]
    for link in (slow, fast):
        b.goto(link)
        expect(b.locator("#turn")).to_contain_text("South to move")
    # Ada's turn in both: her home page lists them, the 1-day game first (the nearest deadline)
    a.goto(server + "/")
    rows = a.locator("#your-turn-list li")
    expect(rows).to_have_count(2, timeout=20_000)
    assert [rows.nth(i).get_attribute("data-id") for i in range(2)] == [ids[1], ids[0]]
    expect(rows.nth(0)).to_contain_text("1 day per move")
    expect(rows.nth(1)).to_contain_text("7 days per move")
    expect(rows.nth(0).locator(".deadline")).to_contain_text("EST")  # New York's time zone
    a.locator("#your-turn").screenshot(path=str(ARTIFACTS / "your-turn-desktop.png"), animations="disabled")
    # Brice's list is empty: the section is not shown
    b.goto(server + "/")
    expect(b.locator("#your-turn[data-ready='1']")).to_have_count(1)
    expect(b.locator("#your-turn")).to_be_hidden()
    # Ada moves in the 7-day game from the list: it is now Brice's turn there
    rows.nth(1).locator("a").click()
    a.wait_for_url(f"**/g/{ids[0]}")
    expect(a.locator("#turn")).to_contain_text("move by")
    play_one(a, 0)
    a.goto(server + "/games")
    expect(a.locator("#your-turn-list li")).to_have_count(1)
    b.goto(server + "/")
    expect(b.locator("#your-turn-list li")).to_have_count(1)
    row = b.locator("#your-turn-list li").first
    assert row.get_attribute("data-id") == ids[0]
    expect(row.locator(".deadline")).to_contain_text("GMT+9")  # Tokyo's time, on Brice's phone
    expect(row.locator(".deadline")).to_contain_text("left")
    b.locator("#your-turn").screenshot(path=str(ARTIFACTS / "your-turn-phone.png"), animations="disabled")
    b.goto(server + "/games")
    expect(b.locator("#your-turn-list li")).to_have_count(1)
    b.screenshot(path=str(ARTIFACTS / "your-turn-games-phone.png"), full_page=True, animations="disabled")
    for e in errors:
        assert e == [], e
    a_ctx.close()
    b_ctx.close()
