"""The analysis board in a real browser (Playwright driving Debian's chromium), at a desktop and a
phone size: moves for both sides, a variation kept beside the main line, back and forward by
keyboard, the engine's live evaluation and line (updating while it thinks, stopped by its button and
by keyboard), a shared link that reopens the position, a start from a
game's replay.  Screenshots: artifacts/analysis-*.png."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page, expect

from jericho_game.web.server import Limits, create_app
from tests.web import test_browser, tour
from tests.web.test_browser import watch_errors
from tests.web.test_ui import hotseat, still_shot

browser = test_browser.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("analysis") / "games.sqlite3"
    app = create_app(str(db), limits=Limits(rate=1000.0, burst=1000), ai_processes=0)
    # the engine thinks until it is stopped here, however slow a loaded machine makes the test
    app.state.analysis_streams.max_seconds = 120.0
    app.state.analysis_streams.max_sims = 400_000
    yield from test_browser.serve_in_thread(app)


def doc_box(page: Page, selector: str) -> list[float]:
    """Where an element is on the page (not in the window, which scrolls): left, top, width, height."""
    js = (
        "s => { const r = document.querySelector(s).getBoundingClientRect();"
        " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; }"
    )
    box: list[float] = page.evaluate(js, selector)
    return box


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
    # the engine: South's chance, the best move and its line, updating live while it thinks
    tray = doc_box(page, "#an-tray")
    page.click("#an-engine")
    expect(page.locator("#an-engine")).to_have_attribute("aria-pressed", "true")
    evaluation = page.locator("#an-eval")
    expect(evaluation).to_contain_text("South's winning chance", timeout=30000)
    expect(page.locator("#an-engine-state")).to_contain_text("thinking")
    expect(page.locator("#an-pv")).to_contain_text("best ")
    expect(page.locator("#an-pv .an-mv").first).to_contain_text("2. ")
    first = int(evaluation.get_attribute("data-sims") or 0)
    # a later update with more simulations, the figure and the bar redrawn (no second request)
    page.wait_for_function("n => Number(document.querySelector('#an-eval').dataset.sims) > n", arg=first, timeout=30000)
    assert doc_box(page, "#an-tray") == tray  # the figures change, nothing below moves
    still_shot(page, f"analysis-engine-{'desktop' if w > 800 else 'phone'}.png")
    # the stop button ends the search: the figure stays, frozen
    stop = page.locator("#an-stop")
    expect(stop).to_be_enabled()
    stop.click()
    expect(page.locator("#an-engine-state")).to_contain_text("Stopped at", timeout=15000)
    expect(stop).to_be_disabled()
    frozen = evaluation.get_attribute("data-sims")
    page.wait_for_timeout(800)
    assert evaluation.get_attribute("data-sims") == frozen
    expect(evaluation).to_contain_text("South's winning chance")
    assert doc_box(page, "#an-tray") == tray
    # by keyboard: "e" turns the engine off (the figures go), Enter on its button on again, "s" stops
    page.keyboard.press("e")
    expect(page.locator("#an-engine")).to_have_attribute("aria-pressed", "false")
    expect(evaluation).to_have_text("")
    page.focus("#an-engine")
    page.keyboard.press("Enter")
    expect(evaluation).to_contain_text("South's winning chance", timeout=30000)
    page.keyboard.press("s")
    expect(page.locator("#an-engine-state")).to_contain_text("Stopped at", timeout=15000)
    page.keyboard.press("e")
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


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_a_solved_position_reads_like_a_tablebase_with_an_arrow_and_its_text(
    server: str, browser: Browser, size: tuple[int, int]
) -> None:
    """Issue 31 point 5: a position the endgame solver decides shows "Win in 4 plies" and the
    solver's whole line; the best move is an arrow on the board (a toggle, remembered); the
    position's text can be copied from its box, and a pasted one loads (a bad one is named)."""
    from tests.ai.test_analysis import LOST, WON

    w, h = size
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    errors = watch_errors(page)
    page.goto(server + "/analysis?" + urlencode({"position": WON}))
    expect(page.locator("#an-position")).to_have_value(WON)
    page.click("#an-engine")
    evaluation = page.locator("#an-eval")
    expect(evaluation).to_contain_text("Win in 4 plies", timeout=30000)
    expect(evaluation).to_contain_text("South to move, solved to the end of the game")
    expect(page.locator("#an-engine-state")).to_contain_text("endgame solver decided this position")
    expect(page.locator("#an-pv")).to_contain_text("The solver's line:")
    expect(page.locator("#an-pv .an-mv")).to_have_text(["1. 4Y@f1", "1... 5Y@g3", "2. pass", "2... pass"])
    arrow = page.locator("#board #an-arrow")
    expect(arrow).to_have_attribute("data-move", "4Y@f1")
    expect(arrow).to_have_attribute("aria-hidden", "true")
    still_shot(page, f"analysis-{w}x{h}-solved.png")
    assert tour.axe_violations(page) == []  # the solved evaluation, the arrow, the toggle, the box
    # the arrow's toggle, remembered by the browser
    toggle = page.get_by_label("Show the engine's best move as an arrow")
    toggle.uncheck()
    expect(arrow).to_have_count(0)
    page.reload()
    expect(page.get_by_label("Show the engine's best move as an arrow")).not_to_be_checked()
    page.click("#an-engine")
    expect(page.locator("#an-eval")).to_contain_text("Win in 4 plies", timeout=30000)
    expect(page.locator("#board #an-arrow")).to_have_count(0)
    page.get_by_label("Show the engine's best move as an arrow").check()
    expect(page.locator("#board #an-arrow")).to_have_attribute("data-move", "4Y@f1")
    # the position's text: copy it; paste a bad one (named, nothing lost), then a good one
    page.get_by_role("button", name="Copy the position").click()
    expect(page.locator("#info")).to_have_text(re.compile(r"Position copied\.|Select the text and copy it"))
    box = page.get_by_label("This position as text (copy it, or paste one and load it)")
    box.fill("a1:9Z south")
    page.get_by_role("button", name="Load this position").click()
    expect(page.locator("#an-error")).to_contain_text("Could not load it")
    expect(page.locator("#an-turn")).to_contain_text("South to move")  # still the position it was
    box.fill(LOST)
    box.press("Enter")
    expect(page.locator("#an-turn")).to_contain_text("North to move")
    expect(page.locator("#an-error")).to_have_text("")
    expect(page.locator("#an-eval")).to_contain_text("Loss in 3 plies", timeout=30000)
    expect(page.locator("#an-eval")).to_contain_text("North to move")
    # the bad position's refusal (400) is the only console message
    assert [e for e in errors if "status of 400" not in e] == []
    ctx.close()


def test_a_real_games_late_position_reads_solved(server: str, browser: Browser) -> None:
    """issue 52: the solved readout did not appear two to eight plies before the end of a real game
    (only on the shipped puzzles' positions): the position 8 plies before the end of a generated game
    (tests/fixtures/review/deciding.jsonl), which takes the solver about 640,000 nodes, reads solved,
    whatever the machine's load (the solver's budget is nodes, not 0.5 s)."""
    import json

    from jericho_game import Game

    fixture = Path(__file__).parents[2] / "fixtures" / "review" / "deciding.jsonl"
    row = next(json.loads(x) for x in fixture.read_text(encoding="utf-8").splitlines() if '"strong-strong-530"' in x)
    position = Game.from_moves(row["moves"][:-8]).position()
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    errors = watch_errors(page)
    page.goto(server + "/analysis?" + urlencode({"position": position}))
    expect(page.locator("#an-position")).to_have_value(position)
    page.click("#an-engine")
    evaluation = page.locator("#an-eval")
    expect(evaluation).to_contain_text(re.compile(r"Win in \d+ plies"), timeout=60000)
    expect(evaluation).to_contain_text("solved to the end of the game")
    expect(page.locator("#an-engine-state")).to_contain_text("endgame solver decided this position")
    assert errors == []
    ctx.close()


def test_the_engine_button_waits_for_the_position(server: str, browser: Browser) -> None:
    """A click on "Start the engine" as soon as the page shows (before its script has the position)
    is not lost: the button is usable only once there is a position to analyse (a click before
    it was wired did nothing, and CI's loaded machine met it)."""
    from tests.ai.test_analysis import WON

    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    errors = watch_errors(page)
    # a slow network: the page's first request (the board's topology) answers after half a second
    page.route("**/api/topology", lambda route: (time.sleep(0.5), route.continue_()))
    page.goto(server + "/analysis?" + urlencode({"position": WON}), wait_until="commit")
    page.click("#an-engine")  # Playwright waits until the button is enabled
    expect(page.locator("#an-engine")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#an-eval")).to_contain_text("Win in 4 plies", timeout=30000)
    assert errors == []
    ctx.close()
