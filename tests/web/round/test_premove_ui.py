"""Premoves (issue 34, point 4) in a real browser: one queued move, shown on the board, played as
soon as it is legal on the player's turn, cancelled by a click or Escape or when illegal, and never
sent to the server before the turn."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from jericho_game.web.server import Limits, create_app
from tests.web import test_browser
from tests.web.site.test_defects_ui import online_pair, place
from tests.web.test_browser import watch_errors

browser = test_browser.browser
QUEUED = re.compile(r"\bpremove\b")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("premove") / "games.sqlite3"
    yield from test_browser.serve_in_thread(create_app(str(db), limits=Limits(rate=1000.0, burst=1000)))


@pytest.fixture(autouse=True, scope="module")
def patient() -> Iterator[None]:
    expect.set_options(timeout=20_000)
    yield
    expect.set_options(timeout=5_000)


def premove(page: Page, move: str) -> None:
    piece, cell = move.split("@")
    page.click(f'#tray-mine .slot[data-piece="{piece}"]')
    page.click(f'#board .cell[data-cell="{cell}"]')
    expect(page.locator(f'#board .cell[data-cell="{cell}"]')).to_have_class(QUEUED)
    expect(page.locator(f'#tray-mine .slot[data-piece="{piece}"]')).to_have_class(re.compile(r"\bpremoved\b"))
    expect(page.locator("#info")).to_contain_text(f"Premove {move}")


def server_ply(page: Page, server: str, game_id: str) -> int:
    return int(page.request.get(f"{server}/api/games/{game_id}").json()["ply"])


def test_a_premove_is_played_on_the_turn_and_never_sent_before(server: str, browser: Browser) -> None:
    ctx_a, ctx_b, a, b = online_pair(server, browser)
    errors = watch_errors(a) + watch_errors(b)
    try:
        game_id = a.url.split("/g/")[1].split("#")[0]
        place(a, "1R@a1")
        expect(b.locator("#moves .mv")).to_have_count(1)
        premove(a, "2R@a2")  # North is to move: South queues a move
        # the server has not seen it: still North to move after one ply, and North's page shows nothing
        assert server_ply(a, server, game_id) == 1
        expect(b.locator("#moves .mv")).to_have_count(1)
        place(b, "1R@b3")
        expect(a.locator("#moves .mv")).to_have_count(3)  # played at once on South's turn
        expect(a.locator("#moves .mv").nth(2)).to_contain_text("2R@a2")
        expect(b.locator("#moves .mv")).to_have_count(3)
        expect(a.locator("#board .cell.premove")).to_have_count(0)
        expect(a.locator("#tray-mine .slot.premoved")).to_have_count(0)

        # cancelled by Escape: North's move leaves South to move, nothing played
        premove(a, "3R@a3")
        a.keyboard.press("Escape")
        expect(a.locator("#board .cell.premove")).to_have_count(0)
        expect(a.locator("#message")).to_contain_text("cancelled")
        place(b, "2R@b4")
        expect(a.locator("#moves .mv")).to_have_count(4)
        expect(a.locator("#tray-mine .slot.playable").first).to_be_visible()  # South's turn, waiting
        assert server_ply(a, server, game_id) == 4

        # cancelled by a click on the board
        place(a, "3R@a3")
        expect(b.locator("#moves .mv")).to_have_count(5)
        premove(a, "4R@c1")
        a.click('#board .cell[data-cell="g1"]')
        expect(a.locator("#board .cell.premove")).to_have_count(0)
        place(b, "3R@e3")
        expect(a.locator("#moves .mv")).to_have_count(6)
        assert server_ply(a, server, game_id) == 6

        # illegal when the turn comes (North put a 5 on that cell): dropped with a word, not sent
        place(a, "4R@e1")
        expect(b.locator("#moves .mv")).to_have_count(7)
        premove(a, "5R@c4")
        place(b, "5Y@c4")
        expect(a.locator("#moves .mv")).to_have_count(8)
        expect(a.locator("#message")).to_contain_text("5R@c4 dropped")
        expect(a.locator("#board .cell.premove")).to_have_count(0)
        assert server_ply(a, server, game_id) == 8
        expect(a.locator("#tray-mine .slot.playable").first).to_be_visible()
        assert not errors, errors
    finally:
        ctx_a.close()
        ctx_b.close()
