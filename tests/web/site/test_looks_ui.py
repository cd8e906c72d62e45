"""Board and piece themes (issue 34, point 4) in a real browser: three boards and three piece sets,
each set's colours apart under simulated colour blindness, chosen on /settings, kept in the browser
and with the account (a new browser that logs in gets them)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, Page, Route, expect

from jericho_game.web.server import Limits, create_app
from tests.web import test_browser
from tests.web.colour import ciede2000, simulate
from tests.web.site.test_defects_ui import FIVE_COLOURS, hotseat, log_in, sign_up
from tests.web.test_ui import PIECE_MARGIN

browser = test_browser.browser
PIECES = ["classic", "bright", "deep"]
BOARDS = ["wood", "slate", "paper"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("looks") / "games.sqlite3"
    app = create_app(
        str(db),
        limits=Limits(rate=1000.0, burst=1000),
        password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1),
    )
    yield from test_browser.serve_in_thread(app)


@pytest.fixture(autouse=True, scope="module")
def patient() -> Iterator[None]:
    expect.set_options(timeout=20_000)
    yield
    expect.set_options(timeout=5_000)


FILLS = """() => Object.fromEntries(['R', 'Y', 'G', 'B', 'W'].map((c) => [c,
  getComputedStyle(document.querySelector(`#board .piece[data-piece$="${c}"] .piece-body`)).fill]))"""


def rgb(css: str) -> tuple[float, float, float]:
    m = re.fullmatch(r"rgb\((\d+), (\d+), (\d+)\)", css)
    assert m, css
    return float(m[1]), float(m[2]), float(m[3])


def test_every_piece_set_keeps_its_colours_apart_for_colour_blind_eyes(server: str, browser: Browser) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    hotseat(server, page, FIVE_COLOURS)
    seen_sets = set()
    for pieces in PIECES:
        page.evaluate(f"localStorage.setItem('jericho:pieces', '{pieces}')")
        page.reload()
        expect(page.locator("html")).to_have_attribute("data-pieces", pieces)
        expect(page.locator("#board .piece")).to_have_count(5)
        fills = {c: rgb(v) for c, v in page.evaluate(FILLS).items()}
        seen_sets.add(tuple(sorted(fills.items())))
        for kind in (None, "protanopia", "deuteranopia", "tritanopia"):
            seen = {c: simulate(v, kind) if kind else v for c, v in fills.items()}
            worst = min((ciede2000(seen[a], seen[b]), a + b) for a, b in itertools.combinations(seen, 2))
            assert worst[0] >= PIECE_MARGIN, f"{pieces}, {kind}: pieces {worst[1]} only {worst[0]:.1f} apart"
        # the letters stay on every piece
        expect(page.locator("#board .piece .piece-label")).to_have_count(5)
    assert len(seen_sets) == len(PIECES)  # three different sets, not one drawn three times
    ctx.close()


def board_look(page: Page) -> str:
    return str(
        page.evaluate("""() => [getComputedStyle(document.querySelector('#board .octagon')).fill,
      getComputedStyle(document.querySelector('#board .cell .cell-bg')).fill].join(' ')""")
    )


def test_themes_are_chosen_on_settings_and_kept_by_browser_and_account(server: str, browser: Browser) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    # a browser without an account: kept in it
    page.goto(server + "/settings")
    expect(page.locator("#looks-preview .piece")).to_have_count(5)
    expect(page.locator('#looks-form input[value="wood"]')).to_be_checked()
    looks = set()
    for board in BOARDS:
        page.check(f'#looks-form input[value="{board}"]')
        expect(page.locator("html")).to_have_attribute("data-board", board)
        looks.add(str(page.evaluate("getComputedStyle(document.querySelector('#looks-preview .cell-bg')).fill")))
    assert len(looks) == len(BOARDS)
    page.check('#looks-form input[value="deep"]')
    expect(page.locator("#looks-saved")).to_have_text("Saved in this browser.")
    hotseat(server, page, FIVE_COLOURS)  # applied before the first paint of any page
    expect(page.locator("html")).to_have_attribute("data-board", "paper")
    expect(page.locator("html")).to_have_attribute("data-pieces", "deep")
    paper = board_look(page)
    page.evaluate("localStorage.setItem('jericho:board', 'wood')")
    page.reload()
    expect(page.locator("#board .cell")).to_have_count(26)
    assert board_look(page) != paper

    # an account: kept with it, and brought to a new browser at log-in
    sign_up(server, page, "looks_ada")
    held: list[Route] = []  # the account's choice held back: until it comes, nothing can be chosen
    page.route("**/api/account/prefs", lambda route: held.append(route))
    page.goto(server + "/settings")
    expect(page.locator('#looks-form input[value="slate"]')).to_be_disabled()
    while not held:
        page.wait_for_timeout(20)
    page.wait_for_timeout(200)
    expect(page.locator('#looks-form input[value="slate"]')).to_be_disabled()
    held[0].continue_()
    page.unroute("**/api/account/prefs")
    expect(page.locator('#looks-form input[value="slate"]')).to_be_enabled()
    page.check('#looks-form input[value="slate"]')
    expect(page.locator("#looks-saved")).to_have_text("Saved with your account.")
    page.check('#looks-form input[value="bright"]')
    expect(page.locator("#looks-saved")).to_have_text("Saved with your account.")
    other = browser.new_context(viewport={"width": 390, "height": 844})
    fresh = other.new_page()
    fresh.goto(server + "/")
    expect(fresh.locator("html")).to_have_attribute("data-board", "wood")
    log_in(server, fresh, "looks_ada")
    fresh.goto(server + "/settings")
    expect(fresh.locator('#looks-form input[value="slate"]')).to_be_checked()
    expect(fresh.locator('#looks-form input[value="bright"]')).to_be_checked()
    expect(fresh.locator("html")).to_have_attribute("data-board", "slate")
    expect(fresh.locator("html")).to_have_attribute("data-pieces", "bright")
    # bad input: refused, naming the choices, and nothing lost
    csrf = fresh.evaluate("fetch('/api/account').then((r) => r.json()).then((d) => d.csrf)")
    r = fresh.request.post(server + "/api/account/prefs", data={"board": "neon"}, headers={"X-CSRF-Token": csrf})
    assert r.status == 400 and "wood, slate, paper" in r.json()["message"], r.text()
    assert fresh.request.get(server + "/api/account/prefs").json() == {"board": "slate", "pieces": "bright"}
    anonymous = browser.new_context().request
    assert anonymous.get(server + "/api/account/prefs").status == 401
    other.close()
    ctx.close()
