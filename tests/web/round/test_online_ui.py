"""Issue 12 in a real browser, as people would do it, with three browser contexts: each chooses
a name, one creates a public game, another joins it from the lobby, a third watches from the
lobby; they play, ask for a takeback, agree a draw, and find the game under "My games" to
download.  One name is HTML that would run script if it were ever rendered as markup: it must
show as text everywhere.  Screenshots go to artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from jericho_game.web.server import Limits, create_app
from tests.web import test_browser
from tests.web.test_browser import ARTIFACTS, DESKTOP, PHONE, play_one, shot, watch_errors

server = test_browser.server
browser = test_browser.browser

EVIL = "<img src=x onerror=p=1>"  # 23 characters: allowed, and inert only if shown as text


def set_name(page: Page, name: str) -> None:
    page.fill("#name-input", name)
    page.click("#name-save")


def pwned(page: Page) -> Any:
    return page.evaluate("() => typeof window.p !== 'undefined' || !!document.querySelector('img[src=x]')")


def test_name_lobby_join_play_takeback_draw_and_my_games(server: str, browser: Browser) -> None:
    a_ctx = browser.new_context(viewport=DESKTOP, accept_downloads=True)
    b_ctx = browser.new_context(viewport=PHONE)
    c_ctx = browser.new_context(viewport=DESKTOP)
    a, b, c = a_ctx.new_page(), b_ctx.new_page(), c_ctx.new_page()
    errors = [watch_errors(p) for p in (a, b, c)]

    # names: an invisible character is refused at once; HTML is just text
    a.goto(server + "/")
    set_name(a, "Ada\u202e")
    expect(a.locator("#name-note")).to_contain_text("control or invisible")
    set_name(a, EVIL)
    expect(a.locator("#name-note")).to_contain_text("Saved")
    a.reload()
    expect(a.locator("#name-input")).to_have_value(EVIL)  # remembered in the browser
    b.goto(server + "/")
    set_name(b, "Brice")
    c.goto(server + "/")
    expect(c.locator("#lobby[data-ready='1']")).to_have_count(1)
    expect(c.locator("#lobby-seeks-empty")).to_be_visible()

    # Ada creates a public game: it appears live in the others' lobbies
    a.get_by_label("Online").check()
    expect(a.locator("#online-field")).to_be_visible()
    a.get_by_label("Anyone").check()  # a public game, listed in the lobby (the default is invite only)
    a.select_option("select[name=side]", "south")
    a.click("#start")
    a.wait_for_url("**/g/*")
    game_url = a.url
    expect(a.locator("#banner")).to_contain_text("Waiting")
    expect(a.locator("#btn-abort")).to_have_text("Cancel game")
    a.goto(server + "/")  # Ada's own seek is listed for her as hers, not to join
    expect(a.locator("#lobby-seeks tr a.mine")).to_have_text("Your game")
    expect(a.locator("#lobby-seeks tr button.join")).to_have_count(0)
    a.locator("#lobby-seeks tr a.mine").click()
    a.wait_for_url(game_url)
    row = b.locator("#lobby-seeks tr")
    expect(row).to_have_count(1)
    expect(row.locator("td.who")).to_have_text(EVIL)
    expect(c.locator("#lobby-seeks td.who")).to_have_text(EVIL)
    b.locator("#lobby").screenshot(path=str(ARTIFACTS / "lobby-seek-phone.png"), animations="disabled")

    # Brice joins in one click; the game moves to "playing now" for the watcher
    row.locator("button.join").click()
    b.wait_for_url(game_url)
    expect(b.locator("#turn")).to_contain_text("South to move")
    expect(b.locator("#south-name")).to_have_text(EVIL)
    expect(b.locator("#north-name")).to_have_text("You (Brice)")
    expect(a.locator("#north-name")).to_have_text("Brice")
    expect(c.locator("#lobby-seeks tr")).to_have_count(0)
    expect(c.locator("#lobby-playing tr")).to_have_count(1)
    expect(c.locator("#lobby-playing td.who.south")).to_have_text(EVIL)
    c.locator("#lobby").screenshot(path=str(ARTIFACTS / "lobby-playing-desktop.png"), animations="disabled")
    c.locator("#lobby-playing a.watch").click()
    c.wait_for_url(game_url)
    expect(c.locator("#south-name")).to_have_text(EVIL)
    expect(c.locator("#endings")).to_be_hidden()  # a spectator has no offers to make

    # they play three moves; South asks to take its last one back, North accepts
    for i in range(3):
        mover = a if i % 2 == 0 else b
        expect(mover.locator("#turn")).to_contain_text("Your move")
        play_one(mover, i)
        for p in (a, b, c):
            expect(p.locator("#moves .mv")).to_have_count(i + 1)
    expect(a.locator("#btn-abort")).to_have_count(0)  # both have moved: no abort any more
    a.click("#btn-takeback")
    expect(a.locator("#offer-text")).to_contain_text("waiting for Brice")
    expect(b.locator("#offer-text")).to_contain_text(f"{EVIL} (South) asks to take back")
    shot(b, "takeback-request-phone.png", full_page=True)
    b.click("#btn-accept")
    for p in (a, b, c):
        expect(p.locator("#moves .mv")).to_have_count(2)
    expect(a.locator("#turn")).to_contain_text("Your move")

    # North offers a draw; South declines once (it stays declined), North offers after a move...
    play_one(a, 2)
    expect(b.locator("#turn")).to_contain_text("Your move")
    b.click("#btn-draw")
    expect(a.locator("#offer-text")).to_contain_text("Brice (North) offers a draw")
    shot(a, "draw-offer-desktop.png")
    a.click("#btn-accept")
    for p in (a, b, c):
        expect(p.locator("#banner.over")).to_contain_text("Draw agreed")
    shot(c, "draw-agreed-spectator-desktop.png")

    # My games: the game is listed with its opponent and result, and downloads as .jgn
    a.goto(server + "/")
    a.click("#my-games-link")  # from the home page
    a.wait_for_url("**/games")
    mine = a.locator(f"#games tr[data-id='{game_url.rsplit('/', 1)[1]}']")
    expect(mine.locator("td.who")).to_have_text("Brice")
    expect(mine.locator("td.result")).to_contain_text("Draw (by agreement)")
    shot(a, "my-games-desktop.png")
    with a.expect_download() as dl:
        a.click("#download-all")
    text = Path(dl.value.path()).read_text(encoding="utf-8")
    assert f'[South "{EVIL}"]' in text and '[North "Brice"]' in text and "draw agreed" in text
    (ARTIFACTS / "my-games.jgn").write_text(text, encoding="utf-8")
    b.goto(server + "/games")
    expect(b.locator("#games td.who").first).to_have_text(EVIL)

    for p in (a, b, c):
        assert not pwned(p), "a name was rendered as HTML"
    for errs in errors:
        assert not errs, errs
    for ctx in (a_ctx, b_ctx, c_ctx):
        ctx.close()


@pytest.fixture(scope="module")
def quick_claims(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server where an absent opponent may be claimed against after 3 seconds."""
    db = tmp_path_factory.mktemp("claims") / "games.sqlite3"
    app = create_app(str(db), limits=Limits(claim_after=3.0))
    yield from test_browser.serve_in_thread(app)


def _seek_and_join(a: Page, b: Page, url: str) -> str:
    a.goto(url + "/")
    set_name(a, "Ada")
    a.get_by_label("Online").check()
    a.get_by_label("Anyone").check()
    a.click("#start")
    a.wait_for_url("**/g/*")
    b.goto(url + "/")
    set_name(b, "Brice")
    b.locator(f"#lobby-seeks tr[data-id='{a.url.rsplit('/', 1)[1]}'] button.join").click()
    b.wait_for_url(a.url)
    expect(a.locator("#north-name")).to_have_text("Brice")
    return a.url


def test_abort_then_claim_against_an_opponent_who_left(quick_claims: str, browser: Browser) -> None:
    a_ctx, b_ctx = browser.new_context(viewport=DESKTOP), browser.new_context(viewport=DESKTOP)
    a, b = a_ctx.new_page(), b_ctx.new_page()
    errors = [watch_errors(p) for p in (a, b)]
    # abort: allowed before both sides have moved, and leaves no result
    _seek_and_join(a, b, quick_claims)
    play_one(a, 0)
    b.click("#btn-abort")
    for p in (a, b):
        expect(p.locator("#banner.over")).to_contain_text("Game aborted: no result")
    shot(a, "aborted-desktop.png")
    # a claim: Brice leaves an untimed game; after 3 s Ada may claim the win
    _seek_and_join(a, b, quick_claims)
    play_one(a, 0)
    play_one(b, 1)
    expect(a.locator("#btn-abort")).to_have_count(0)
    b_ctx.close()
    expect(a.locator("#claim-text")).to_contain_text("Brice (North) left")
    expect(a.locator("#btn-claim-win")).to_be_enabled(timeout=15000)
    shot(a, "claim-desktop.png")
    a.click("#btn-claim-win")
    expect(a.locator("#banner.over")).to_contain_text("You won: North left the game and you claimed the win")
    for errs in errors:
        assert not errs, errs
    a_ctx.close()
