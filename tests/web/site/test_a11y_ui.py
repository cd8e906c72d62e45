"""Screen readers and the keyboard in a real browser (Playwright driving Debian's chromium), issue
24 point 4: each move is announced once in a polite live region, whoever played it, in the page's
language; the last move's cell says so; the arrow keys move within a tray of pieces."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.web import test_browser
from tests.web.test_browser import watch_errors

server = test_browser.server
browser = test_browser.browser

# Every text the live region is given, in order (a MutationObserver installed before the page's
# scripts run): what a screen reader is told, and how many times.
RECORD_LIVE = """
window.__live = [];
new MutationObserver((changes) => {
  const node = document.getElementById("move-live");
  if (node && node.textContent && changes.some((c) => node.contains(c.target))) window.__live.push(node.textContent);
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    ctx.add_init_script(RECORD_LIVE)
    yield ctx
    ctx.close()


def live(page: Page) -> list[str]:
    return list(page.evaluate("window.__live"))


def wait_live(page: Page, n: int) -> list[str]:
    page.wait_for_function("(n) => window.__live.length >= n", arg=n, timeout=30000)
    page.wait_for_timeout(300)  # a second copy of the same announcement would come now
    return live(page)


def place(page: Page, piece: str, cell: str) -> None:
    n = page.locator("#moves .mv").count()
    page.click(f'#tray-mine .slot[data-piece="{piece}"]')
    page.click(f'#board .cell[data-cell="{cell}"]')
    expect(page.locator("#moves .mv")).to_have_count(n + 1)


def test_each_move_is_announced_once_with_the_alignments_it_changes(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    errors = watch_errors(page)
    g = page.request.post(server + "/api/games", data={"mode": "hotseat"}).json()
    page.goto(g["links"]["play"])
    expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()
    expect(page.locator("#move-live")).to_have_attribute("aria-live", "polite")
    expect(page.locator("#turn")).not_to_have_attribute("aria-live", "polite")  # not read out as well
    assert live(page) == []  # opening a game is not a move
    place(page, "5R", "d2")
    assert wait_live(page, 1) == ["South played 5R on d2"]
    place(page, "1G", "d3")  # North's single 1 against South's 5: South takes d
    assert wait_live(page, 2) == ["South played 5R on d2", "North played 1G on d3; South takes alignment d"]
    # the last move's cell is labelled as such, the one before is not any more
    expect(page.locator('#board .cell[data-cell="d3"]')).to_have_attribute(
        "aria-label", re.compile(r"^d3 \(north camp\): 1G.*; last move, 1G@d3$")
    )
    assert "last move" not in (page.locator('#board .cell[data-cell="d2"]').get_attribute("aria-label") or "")
    page.click("#btn-undo")  # a move taken back is not announced as a move
    expect(page.locator("#moves .mv")).to_have_count(1)
    page.wait_for_timeout(300)
    assert len(live(page)) == 2
    assert not errors, errors


def test_the_ais_move_is_announced_too(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    errors = watch_errors(page)
    g = page.request.post(server + "/api/games", data={"mode": "ai", "level": "easy", "side": "south"}).json()
    page.goto(g["links"]["play"])
    expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()
    place(page, "5R", "d2")
    said = wait_live(page, 2)
    moves = page.locator("#moves .mv").all_inner_texts()
    assert len(said) == 2 and said[0] == "South played 5R on d2", said
    piece, cell = moves[1].split("@")
    assert said[1].startswith(f"North played {piece} on {cell}"), (said, moves)
    expect(page.locator(f'#board .cell[data-cell="{cell}"]')).to_have_attribute(
        "aria-label", re.compile(f"; last move, {moves[1]}$")
    )
    assert not errors, errors


def test_moves_are_announced_in_french(server: str, browser: Browser) -> None:
    ctx = browser.new_context(locale="fr-FR")
    ctx.add_init_script(RECORD_LIVE)
    page = ctx.new_page()
    g = page.request.post(server + "/api/games", data={"mode": "hotseat"}).json()
    page.goto(g["links"]["play"])
    expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()
    place(page, "5R", "d2")
    place(page, "1G", "d3")
    assert wait_live(page, 2) == ["Sud a joué 5R en d2", "Nord a joué 1G en d3 ; Sud prend l’alignement d"]
    label = page.locator('#board .cell[data-cell="d3"]').get_attribute("aria-label") or ""
    assert label.endswith(" ; dernier coup, 1G@d3"), label
    ctx.close()


def focused_piece(page: Page) -> str | None:
    return page.evaluate("document.activeElement && document.activeElement.dataset.piece || null")


def test_the_arrow_keys_move_within_the_tray(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    errors = watch_errors(page)
    g = page.request.post(server + "/api/games", data={"mode": "hotseat"}).json()
    page.goto(g["links"]["play"])
    expect(page.locator("#tray-mine .slot.playable")).to_have_count(25)
    # one Tab stop for the whole tray
    assert page.locator("#tray-mine .slot[tabindex='0']").count() == 1
    page.focus('#tray-mine .slot[data-piece="5R"]')
    page.keyboard.press("ArrowRight")
    assert focused_piece(page) == "5Y"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # wraps round to the last piece
    assert focused_piece(page) == "1W"
    page.keyboard.press("Home")
    assert focused_piece(page) == "5R"
    page.keyboard.press("ArrowDown")  # the row below: the same colour, one size smaller
    assert focused_piece(page) == "4R"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowUp")
    assert focused_piece(page) == "5Y"
    page.keyboard.press("End")
    assert focused_piece(page) == "1W"
    # the focused piece is the tray's Tab stop: Tab leaves the tray, Shift+Tab comes back to it
    assert page.locator("#tray-mine .slot[tabindex='0']").get_attribute("data-piece") == "1W"
    page.keyboard.press("Tab")
    assert page.evaluate("!document.getElementById('tray-mine').contains(document.activeElement)")
    page.keyboard.press("Shift+Tab")
    assert focused_piece(page) == "1W"
    # Enter picks it, as before; a placed piece is skipped by the arrows afterwards
    page.keyboard.press("Home")
    page.keyboard.press("Enter")
    expect(page.locator("#board .cell.legal:focus")).to_have_count(1)
    page.keyboard.press("Enter")
    expect(page.locator("#moves .mv")).to_have_count(1)
    assert not errors, errors


def test_the_tutorials_tray_has_the_arrow_keys_too(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    page.goto(server + "/learn")
    expect(page.locator("#tray-mine .slot").first).to_be_visible()
    first = page.locator("#tray-mine .slot:not([disabled])").first.get_attribute("data-piece")
    second = page.locator("#tray-mine .slot:not([disabled])").nth(1).get_attribute("data-piece")
    page.focus(f'#tray-mine .slot[data-piece="{first}"]')
    page.keyboard.press("ArrowRight")
    assert focused_piece(page) == second
    assert page.locator("#tray-mine .slot[tabindex='0']").count() == 1


def test_the_language_switch_is_remembered_on_the_account(server: str, browser: Browser) -> None:
    """Logged in, the header's switch saves the language on the account: a log-in from a new
    browser (which asks for English) opens the site in French."""
    first = browser.new_context(locale="en-US")
    page = first.new_page()
    errors = watch_errors(page)
    page.goto(server + "/signup")
    page.fill("#username", "claude_f")
    page.fill("#password", "claude's long password")
    page.click("#account-submit")
    expect(page.locator("#nav-me")).to_contain_text("claude_f")
    page.click("#btn-lang")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    assert page.request.get(server + "/api/account").json()["language"] == "fr"
    assert not errors, errors
    first.close()
    second = browser.new_context(locale="en-US")  # another browser: no cookie, no localStorage
    page = second.new_page()
    page.goto(server + "/login")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.fill("#username", "claude_f")
    page.fill("#password", "claude's long password")
    page.click("#account-submit")
    expect(page.locator("#nav-me")).to_contain_text("claude_f")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    expect(page.locator("#new-game h2")).to_have_text("Nouvelle partie")
    page.goto(server + "/games")
    expect(page.locator("h1")).to_have_text("Mes parties")
    second.close()


def test_the_page_scripts_say_the_engines_confrontations_like_the_server(server: str, browser: Browser) -> None:
    """static/reasons.js and jericho_game.web.i18n.reasons: the same French for every confrontation
    the engine writes in random games; the game page shows it when an alignment is read."""
    from jericho_game.web.i18n import reasons
    from tests.web.i18n.test_reasons import engine_sentences

    confrontations, _ = engine_sentences(games=15)
    sentences = sorted(confrontations)
    ctx = browser.new_context(locale="fr-FR")
    page = ctx.new_page()
    g = page.request.post(server + "/api/games", data={"mode": "hotseat"}).json()
    page.goto(g["links"]["play"])
    expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()
    said = page.evaluate(
        "(all) => import('/static/reasons.js').then((m) => all.map((s) => m.reasonText(s)))", sentences
    )
    assert said == [reasons.translate(s, "fr") for s in sentences]
    place(page, "5R", "d2")
    place(page, "1G", "d3")
    page.locator('[data-alignment="d"]').focus()
    expect(page.locator("#info")).to_contain_text(
        "Sud 5R contre Nord 1G : Sud mène, la pièce du sommet de taille 5 bat celle de taille 1."
    )
    ctx.close()


def test_a_move_and_the_forced_pass_after_it_are_announced_together(server: str, context: BrowserContext) -> None:
    """The server plays a forced pass with the move before it: one state, two plies, both said."""
    page = context.new_page()
    page.goto(server + "/rules")
    before = {"id": "g", "ply": 2, "turn": "south", "moves": ["5R@d2", "1G@d3"], "leaders": {"d": None, "e": "north"}}
    after = {**before, "ply": 4, "turn": "south", "moves": [*before["moves"], "2Y@d3", "pass"]}
    after["leaders"] = {"d": "south", "e": None}
    far = {**after, "ply": 9, "moves": ["5R@d2"] * 9}
    said = page.evaluate(
        "([b, a, f]) => import('/static/announce.js').then((m) => [m.moveWords(b, a), m.moveWords(b, f),"
        " m.moveWords(null, a), m.moveWords(a, b)])",
        [before, after, far],
    )
    assert said == [
        "South played 2Y on d3; North passed; South takes alignment d; nobody holds alignment e any more",
        "",  # a jump of 7 plies: a reconnection, not read out
        "",  # the first state
        "",  # a move taken back
    ]


def test_the_log_in_form_works_before_the_account_is_known(server: str, browser: Browser) -> None:
    """Submitted while GET /api/account was still on its way, the form fell through to the
    browser's own GET: /signup?username=...&password=... in the address, and no account."""
    ctx = browser.new_context()
    page = ctx.new_page()
    held: list[object] = []
    page.route("**/api/account", lambda route: held.append(route))  # the answer waits
    page.goto(server + "/signup")
    page.fill("#username", "early_bird")
    page.fill("#password", "early bird's long password")
    page.click("#account-submit")
    page.wait_for_timeout(300)
    assert "password" not in page.url
    for route in held:
        route.continue_()  # type: ignore[attr-defined]
    page.unroute("**/api/account")
    expect(page.locator("#nav-me")).to_contain_text("early_bird")
    assert "password" not in page.url
    ctx.close()
