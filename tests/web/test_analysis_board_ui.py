"""The analysis board in a real browser (Playwright driving Debian's chromium), at a desktop and a
phone size: moves for both sides, a variation kept beside the main line, back and forward by
keyboard, the engine's evaluation and line, a shared link that reopens the position, a start from a
game's replay.  Screenshots: artifacts/analysis-*.png."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from jericho_game.web.server import Limits, create_app
from tests.web import test_browser
from tests.web.test_browser import watch_errors
from tests.web.test_ui import hotseat, still_shot

browser = test_browser.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("analysis") / "games.sqlite3"
    app = create_app(str(db), limits=Limits(rate=1000.0, burst=1000), ai_processes=0)
    yield from test_browser.serve_in_thread(app)


def place(page: Page, move: str) -> None:
    piece, cell = move.split("@")
    page.locator(f'#an-tray .slot[data-piece="{piece}"]').click()
    page.locator(f'#board .cell[data-cell="{cell}"]').click()


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_moves_variations_engine_and_a_shared_link(server: str, browser: Browser, size: tuple[int, int]) -> None:
    w, h = size
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    errors = watch_errors(page)
    page.goto(server + "/analysis")
    expect(page.locator("#an-turn")).to_contain_text("South to move")
    place(page, "5R@d2")
    expect(page.locator("#an-turn")).to_contain_text("North to move")
    expect(page.locator("#an-tray-title")).to_have_text("North's pieces (to move)")
    place(page, "1G@d3")
    expect(page.locator("#an-turn")).to_contain_text("after 1... 1G@d3")
    # back one move (the keyboard), then another North move: a variation beside the main line
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#an-turn")).to_contain_text("after 1. 5R@d2")
    place(page, "4B@c3")
    expect(page.locator("#an-turn")).to_contain_text("after 1... 4B@c3")
    moves = page.locator("#an-moves .an-mv")
    expect(moves).to_have_text(["1. 5R@d2", "1G@d3", "1... 4B@c3"])
    expect(page.locator("#an-moves .an-var")).to_have_count(1)
    expect(page.locator('#an-moves .an-mv[aria-current="step"]')).to_have_accessible_name("1... 4B@c3")
    expect(page.locator("#board .cell.last")).to_have_attribute("data-cell", "c3")
    moves.nth(1).click()  # back to the main line's move
    expect(page.locator("#board .cell.last")).to_have_attribute("data-cell", "d3")
    # the engine: South's chance, the best move and its line, improving while it thinks
    page.click("#an-engine")
    expect(page.locator("#an-engine")).to_have_attribute("aria-pressed", "true")
    evaluation = page.locator("#an-eval")
    expect(evaluation).to_contain_text("South's winning chance", timeout=30000)
    expect(evaluation).to_contain_text("best ")
    expect(evaluation).to_contain_text("line: 2. ")
    expect(evaluation).to_have_attribute("data-budget", "16000", timeout=60000)  # the last, largest budget
    expect(evaluation).not_to_contain_text("thinking")
    still_shot(page, f"analysis-{'desktop' if w > 800 else 'phone'}.png")
    page.click("#an-engine")  # stopped: nothing more is asked
    expect(evaluation).to_have_text("")
    for sel in ("#an-first", "#an-back", "#an-forward", "#an-last"):  # drawn icons, named for screen readers
        assert page.locator(sel).inner_text().strip() == "" and page.locator(sel).get_attribute("aria-label")
    # the link reopens the same position in another browser
    page.click("#an-share")
    expect(page.locator("#an-link")).to_have_value(re.compile(r"/analysis#record="))
    link = page.locator("#an-link").input_value()
    assert "/analysis#record=" in link and "at=5R%40d2+1G%40d3" in link  # the whole tree, and where
    other = ctx.new_page()
    other.goto(link)
    expect(other.locator("#an-moves .an-mv")).to_have_text(["1. 5R@d2", "1G@d3", "1... 4B@c3"])
    expect(other.locator("#an-moves .an-var")).to_have_count(1)
    expect(other.locator("#board .cell.last")).to_have_attribute("data-cell", "d3")
    with other.expect_download() as info:  # the tree as a record, variations in parentheses
        other.click("#an-export")
    text = Path(info.value.path()).read_text(encoding="utf-8")
    assert "1. 5R@d2 1G@d3 (1... 4B@c3) *" in text
    box = other.locator("#board").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= w + 0.5
    # a bad position text is refused with a message, and the board stays as it was
    other.locator(".an-load summary").click()
    other.fill("#an-text", "d2:5R nonsense")
    other.click("#an-load")
    expect(other.locator("#an-error")).to_contain_text("Could not load it")
    expect(other.locator("#an-moves .an-mv")).to_have_count(3)
    assert not errors, errors
    ctx.close()


def test_a_replay_position_opens_on_the_analysis_board(server: str, browser: Browser) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    errors = watch_errors(page)
    hotseat(server, page, ["5R@d2", "1G@d3", "2Y@d3"])
    page.click("#btn-replay")
    page.click("#rp-first")
    page.click("#rp-next")
    page.click("#rp-next")
    expect(page.locator("#rp-pos")).to_have_text("1...")
    # the link names the game and the ply; once loaded, the board writes its own share link into
    # the address (#moves=...), so the address is only checked to be the analysis board's
    expect(page.locator("#rp-analyse")).to_have_attribute("href", re.compile(r"^/analysis#game=[A-Za-z0-9_-]+&ply=2$"))
    page.click("#rp-analyse")
    expect(page).to_have_url(re.compile(r"/analysis#"))
    expect(page.locator("#an-moves .an-mv")).to_have_text(["1. 5R@d2", "1G@d3", "2. 2Y@d3"])
    expect(page.locator('#an-moves .an-mv[aria-current="step"]')).to_have_accessible_name("1... 1G@d3")
    expect(page.locator("#an-turn")).to_contain_text("South to move")
    assert not errors, errors
    ctx.close()
