"""The walk's ten defects (issue 34, point 5), in a real browser: Playwright driving Debian's
chromium against a real uvicorn server.  Each test failed on the code before its fix."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect

from jericho_game.web.accounts.ratings import RatingPolicy
from jericho_game.web.server import Limits, create_app
from tests.web import test_browser
from tests.web.site.test_defects_ui import FIVE_COLOURS, hotseat, online_pair, place, sign_up
from tests.web.test_browser import watch_errors

browser = test_browser.browser

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("walk") / "games.sqlite3"
    app = create_app(
        str(db),
        limits=Limits(rate=1000.0, burst=1000),
        password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1),
        # one placement each makes a rated game here, and no rating is provisional, so that the two
        # players of one game are on the leaderboard (the defaults: 5 placements, deviation 110)
        rating_policy=RatingPolicy(min_placements=1, provisional_rd=400.0),
    )
    yield from test_browser.serve_in_thread(app)


@pytest.fixture(autouse=True, scope="module")
def patient() -> Iterator[None]:
    """Wait longer than Playwright's 5 s for what a busy machine draws late (2 cores, many tests)."""
    expect.set_options(timeout=20_000)
    yield
    expect.set_options(timeout=5_000)


def context(browser: Browser, viewport: dict[str, int], lang: str, server: str) -> BrowserContext:
    ctx = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    ctx.add_cookies([{"name": "jericho_lang", "value": lang, "url": server}])
    return ctx


def box(page: Page, selector: str) -> dict[str, float]:
    b = page.locator(selector).first.bounding_box()
    assert b is not None, f"{selector} is not rendered"
    return b


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    w = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    h = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return w > 0.5 and h > 0.5


# -- a rated game between two accounts, played once for the module --------------------------------


@pytest.fixture(scope="module")
def rated(server: str, browser: Browser) -> Iterator[dict[str, Any]]:
    """walk_ann (South) and walk_bob (North) play a rated online game, walk_ann resigns; both pages
    stay open on the finished game."""
    ctx_a = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    ctx_b = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    a, b = ctx_a.new_page(), ctx_b.new_page()
    errors = watch_errors(a) + watch_errors(b)
    sign_up(server, a, "walk_ann_longer_name_xy")
    sign_up(server, b, "walk_bob")
    expect(a.locator("#nav-me")).to_have_text("walk_ann_longer_name_xy (1500)")
    a.goto(server + "/")
    expect(a.locator("#levels-main input").first).to_be_visible()  # the form is drawn
    a.check('input[name="mode"][value="online"]')
    a.check("#rated")
    a.select_option('select[name="side"]', "south")
    a.click("#start")
    expect(a.locator("#invite-link")).to_be_visible()
    b.goto(a.locator("#invite-link").input_value())
    expect(b.locator("#north-name")).to_have_text("You (walk_bob)")
    place(a, "1R@a1")
    expect(b.locator("#moves .mv")).to_have_count(1)
    place(b, "1R@b3")
    expect(a.locator("#moves .mv")).to_have_count(2)
    a.click("#btn-resign")
    a.click("#btn-resign")
    expect(a.locator("#rating-change .rating-row")).to_have_count(2)
    expect(b.locator("#rating-change .rating-row")).to_have_count(2)
    yield {"a": a, "b": b, "errors": errors}
    ctx_a.close()
    ctx_b.close()


def test_the_header_shows_the_new_rating_after_a_rated_game(rated: dict[str, Any]) -> None:
    """The header's "name (1500)" kept the old rating until a reload."""
    for page, name in ((rated["a"], "walk_ann_longer_name_xy"), (rated["b"], "walk_bob")):
        row = page.locator(f'#rating-change .rating-row:text-matches("^{name} ")')
        after = re.search(r"→ (\d+)", row.inner_text())
        assert after is not None
        expect(page.locator("#nav-me")).to_have_text(f"{name} ({after.group(1)})")
        assert after.group(1) != "1500"
    assert not rated["errors"], rated["errors"]


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_profile_and_the_leaderboard_keep_a_phones_width(
    server: str, browser: Browser, rated: dict[str, Any], lang: str
) -> None:
    """On a 390 px phone the profile was 577 px wide (637 in French), the leaderboard 421."""
    ctx = context(browser, PHONE, lang, server)
    page = ctx.new_page()
    errors = watch_errors(page)
    page.goto(server + "/players/walk_ann_longer_name_xy")
    expect(page.locator("#recent-games tbody tr")).to_have_count(1)
    expect(page.locator("#rating-chart")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.goto(server + "/leaderboard")
    expect(page.locator("#leaderboard-table tbody tr")).to_have_count(2)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert not errors, errors
    ctx.close()


# -- notices and the result's banner ----------------------------------------------------------------


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE])
def test_a_notice_covers_neither_the_turn_line_nor_the_result(
    server: str, browser: Browser, viewport: dict[str, int]
) -> None:
    """The notice ("A move has arrived… Your turn.") lay over the turn line, and at the end over
    the result's banner, for 6 s."""
    ctx_a, ctx_b, a, b = online_pair(server, browser)
    try:
        b.set_viewport_size(viewport)  # type: ignore[arg-type]
        place(a, "1R@a1")
        notice = b.locator("#notice")
        expect(notice).to_contain_text("Your turn")
        for sel in ("#turn", ".scorebar", "header.top"):
            assert not overlap(box(b, "#notice"), box(b, sel)), sel
        place(b, "1R@b3")
        expect(a.locator("#moves .mv")).to_have_count(2)
        a.click("#btn-resign")
        a.click("#btn-resign")
        expect(notice).to_contain_text("The game has ended")
        expect(b.locator("#banner.over")).to_be_visible()
        for sel in ("#banner", "#turn", "header.top"):
            assert not overlap(box(b, "#notice"), box(b, sel)), sel
    finally:
        ctx_a.close()
        ctx_b.close()


HIT = """(sel) => { window.scrollTo(0, 0); const e = document.querySelector(sel); const r = e.getBoundingClientRect();
  const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); return !!hit && e.contains(hit); }"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE])
def test_the_result_leaves_the_header_and_the_score_bar_free(
    server: str, browser: Browser, viewport: dict[str, int]
) -> None:
    """The result's banner caught the clicks meant for the header (language, contrast, dark, log-in)
    and hid the score bar on a phone, until it was put away."""
    ctx = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    page = ctx.new_page()
    hotseat(server, page, FIVE_COLOURS)
    page.click("#btn-resign")
    page.click("#btn-resign")
    expect(page.locator("#banner.over")).to_contain_text("resign")
    if viewport is PHONE:
        page.click("#btn-display")  # the three switches sit behind one button on a phone
        expect(page.locator("#btn-lang")).to_be_visible()
    for sel in ("#nav-login", "#nav-learn", "#btn-lang", "#btn-contrast", "#btn-theme"):
        assert page.evaluate(HIT, sel), sel
    if viewport is PHONE:
        page.click("#btn-display")
    page.evaluate("window.scrollTo(0, 0)")
    assert not overlap(box(page, "#banner"), box(page, ".scorebar"))
    assert not overlap(box(page, "#banner"), box(page, "header.top"))
    if viewport is PHONE:
        page.click("#btn-display")
    page.click("#btn-theme")  # a real click reaches it
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    ctx.close()


# -- tap targets ------------------------------------------------------------------------------------

#: Every visible control smaller than 24 x 24 px (WCAG 2.2, 2.5.8): a checkbox or radio counts with
#: its label; a link inside a sentence is exempt (the criterion's "inline" exception).
SMALL_TARGETS = """() => {
  const out = [];
  const inline = (a) => [...a.parentElement.childNodes].some((n) => n.nodeType === 3 && /\\p{L}/u.test(n.textContent));
  for (const e of document.querySelectorAll('a[href], button, summary, input:not([type=hidden]), select, textarea')) {
    if (!e.getClientRects().length || getComputedStyle(e).visibility === 'hidden') continue;
    if (e.closest('.sr, [inert], [aria-hidden=true]')) continue;
    let target = e;
    if (e.matches('input[type=checkbox], input[type=radio]') && e.closest('label')) target = e.closest('label');
    const r = target.getBoundingClientRect();
    if (r.bottom < 0) continue;  // the skip link, off screen until focused
    if (e.matches('a') && inline(e)) continue;
    if (r.width < 24 || r.height < 24) {
      const words = (e.textContent || '').trim().slice(0, 24);
      out.push([e.tagName, e.id || e.className, words, Math.round(r.width), Math.round(r.height)]);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE])
def test_every_control_is_at_least_24_px_square(server: str, browser: Browser, viewport: dict[str, int]) -> None:
    """The header's links were 18 px high, the move list's buttons 55 x 20, the notification
    switches 20 px and the home page's <summary> 19 px."""
    ctx = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    page = ctx.new_page()
    found: dict[str, Any] = {}
    hotseat(server, page, FIVE_COLOURS)
    expect(page.locator("#notify-switches input")).to_have_count(2)
    found["game"] = page.evaluate(SMALL_TARGETS)
    page.goto(server + "/")
    expect(page.locator("#levels-main input").first).to_be_visible()  # the form is drawn
    page.locator("#levels-advanced summary").click()
    found["home"] = page.evaluate(SMALL_TARGETS)
    for path, ready in (
        ("/learn", "#tray-mine .slot"),
        ("/puzzles", "#tray-mine .slot"),
        ("/analysis", "#an-tray .slot"),
        ("/settings", "#switch-sound"),
        ("/leaderboard", "#leaderboard h1"),
        ("/rules", "#rules h1, #rules h2"),
        ("/games", "main"),
    ):
        page.goto(server + path)
        expect(page.locator(ready).first).to_be_attached()
        expect(page.locator("#account-nav a")).to_be_visible()
        found[path] = page.evaluate(SMALL_TARGETS)
    assert not {k: v for k, v in found.items() if v}, found
    ctx.close()


# -- offline ----------------------------------------------------------------------------------------


@pytest.fixture()
def stoppable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Iterator[str]]]:
    """A server of its own, which the test stops (the browser is then offline, as far as the page knows)."""
    db = tmp_path_factory.mktemp("walk-offline") / "games.sqlite3"
    running = test_browser.serve_in_thread(create_app(str(db)))
    url = next(running)
    yield url, running
    next(running, None)  # stops it, if the test has not


def test_learn_and_puzzles_say_plainly_that_they_need_the_server_offline(
    stoppable: tuple[str, Iterator[str]], browser: Browser
) -> None:
    """Offline, /learn (cached at install) and /puzzles opened as empty shells saying "Failed to fetch"."""
    server, running = stoppable
    ctx = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = ctx.new_page()
    page.goto(server + "/")
    page.wait_for_function("async () => !!(await navigator.serviceWorker.ready).active")
    page.reload()
    page.wait_for_function("() => !!navigator.serviceWorker.controller")
    for path in ("/learn", "/puzzles"):  # opened once online: the worker keeps them
        page.goto(server + path)
        expect(page.locator("#tray-mine .slot").first).to_be_visible()
    next(running, None)  # the server goes away
    for path, words in (("/learn", "lessons need the server"), ("/puzzles", "puzzles need the server")):
        page.goto(server + path)
        note = page.locator("#offline-note")
        expect(note).to_be_visible()
        expect(note).to_contain_text("You are offline")
        expect(note).to_contain_text(words)
        expect(note.locator('a[href="/rules"]')).to_be_visible()
        assert "Failed to fetch" not in page.locator("body").inner_text()
    ctx.close()


# -- French -----------------------------------------------------------------------------------------

#: What a French page must not show: English words left over, "..", and ";" or "!" or "?" glued to
#: the word before (French typography puts a (narrow) no-break space before them).
NOT_FRENCH = [r"\bdiagonal\b", r"\bprovisional\b", r"docs/", r"\bAlignments\b", r"[^.]\.\.(?!\.)", r"[^\W\d_][;!?]"]
TEXTS = """() => { const out = []; const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (w.nextNode()) {
    const p = w.currentNode.parentElement;
    if (p && !p.closest('script, style, [hidden]')) out.push(w.currentNode.textContent);
  }
  for (const e of document.querySelectorAll('[title], [aria-label], [placeholder]'))
    out.push(e.getAttribute('title') || '', e.getAttribute('aria-label') || '', e.getAttribute('placeholder') || '');
  return out.join('\\n'); }"""


def french_faults(page: Page) -> list[str]:
    text = page.evaluate(TEXTS)
    return [text[max(0, m.start() - 30) : m.end() + 10] for p in NOT_FRENCH for m in re.finditer(p, text)]


def test_french_pages_have_no_english_left_and_french_punctuation(
    server: str, browser: Browser, rated: dict[str, Any]
) -> None:
    """A French player read "falling diagonal" in an alignment's text, "Alignments:" in a cell's,
    the leaderboard's "provisional" tooltip, "docs/board-data.md" on /rules, "incorrect.." after a
    failed log-in, and "…on it; North…" with no space before ";"."""
    ctx = context(browser, DESKTOP, "fr", server)
    page = ctx.new_page()
    faults: dict[str, list[str]] = {}
    hotseat(server, page, FIVE_COLOURS)
    for name in page.eval_on_selector_all("#board .alignment", "(gs) => gs.map((g) => g.dataset.alignment)"):
        page.dispatch_event(f'#board .alignment[data-alignment="{name}"]', "mouseenter")
        expect(page.locator("#info")).to_contain_text(f"Alignement {name}")
        faults[f"alignment {name}"] = french_faults(page)
        page.dispatch_event(f'#board .alignment[data-alignment="{name}"]', "mouseleave")
    for cell in ("a2", "d2"):
        page.dispatch_event(f'#board .cell[data-cell="{cell}"]', "mouseenter")
        expect(page.locator("#info")).to_contain_text(cell)
        faults[f"cell {cell}"] = french_faults(page)
    page.goto(server + "/leaderboard")
    expect(page.locator("#leaderboard-table tbody tr")).to_have_count(2)
    faults["leaderboard"] = french_faults(page)
    page.goto(server + "/rules")
    expect(page.locator("#rules h2").first).to_be_visible()
    faults["rules"] = french_faults(page)
    page.goto(server + "/login")
    page.fill("#username", "walk_bob")
    page.fill("#password", "not the password at all")
    page.click("#account-submit")
    expect(page.locator("#account-error")).to_contain_text("incorrect")
    faults["login"] = french_faults(page)
    assert not {k: v for k, v in faults.items() if v}, faults
    ctx.close()


# -- puzzles ----------------------------------------------------------------------------------------


def test_next_puzzle_clears_the_old_lines_and_brings_the_keyboard_to_the_tray(server: str, browser: Browser) -> None:
    """After *Next puzzle* the last puzzle's info line stayed, and the focus stayed on the button,
    12 to 13 Tab presses from the new puzzle's pieces."""
    ctx = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = ctx.new_page()
    errors = watch_errors(page)
    page.goto(server + "/puzzles")
    slot = page.locator("#tray-mine .slot").first
    expect(slot).to_be_visible()
    first_id = page.url.rsplit("/", 1)[1]
    fresh = page.locator("#info").inner_text()
    slot.click()
    expect(page.locator("#info")).to_contain_text("highlighted")  # a line about the old puzzle
    page.click("#btn-hint")
    expect(page.locator("#feedback")).not_to_be_empty()
    page.click("#btn-next")
    page.wait_for_function("(id) => !location.pathname.endsWith('/' + id)", arg=first_id)
    expect(page.locator("#info")).to_have_text(fresh)
    expect(page.locator("#feedback")).to_be_empty()
    expect(page.locator("#tray-mine .slot").first).to_be_focused()
    page.keyboard.press("Enter")  # the keyboard goes on from there: the piece is picked
    expect(page.locator("#tray-mine .slot.selected")).to_have_count(1)
    assert not errors, errors


def test_a_refutation_by_a_pass_reads_right(server: str, browser: Browser) -> None:
    """A wrong move refuted by a pass read "…: pass holds on."."""
    ctx = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = ctx.new_page()

    def as_win(route: Route) -> None:  # a puzzle to win, whatever the database serves first
        data = route.fetch().json()
        data["theme"] = "win-in-2"
        route.fulfill(json=data)

    def refuted_by_a_pass(route: Route) -> None:  # the server's real answer, its refutation a pass
        data = route.fetch().json()
        if data.get("legal"):
            data.update(correct=False, reply="pass")
        route.fulfill(json=data)

    page.route(re.compile(r".*/api/puzzles/next.*"), as_win)
    page.route(re.compile(r".*/api/puzzles/[^/]+/try$"), refuted_by_a_pass)
    page.goto(server + "/puzzles")
    expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()
    page.locator("#tray-mine .slot.playable").first.click()
    page.locator("#board .cell.legal").first.click()
    feedback = page.locator("#feedback")
    expect(feedback).to_contain_text("does not force the win")
    expect(feedback).to_contain_text("the opponent passes and still holds on")
    expect(feedback).not_to_contain_text("pass holds on")
    ctx.close()


# -- watching ---------------------------------------------------------------------------------------


def test_an_anonymous_watcher_is_told_why_the_chat_is_closed_to_them(server: str, browser: Browser) -> None:
    """A watcher without an account saw a chat box that looked writable (a message was refused only
    once sent)."""
    ctx_a, ctx_b, a, b = online_pair(server, browser)
    ctx_w = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    try:
        place(a, "1R@a1")
        w = ctx_w.new_page()
        errors = watch_errors(w)
        w.goto(a.url.split("#")[0])
        expect(w.locator("#chat")).to_be_visible()
        expect(w.locator("#chat-signin")).to_be_visible()
        expect(w.locator("#chat-signin")).to_contain_text("Sign in or play to chat")
        expect(w.locator("#chat-input")).to_be_disabled()
        expect(w.locator("#chat-input")).to_have_attribute("placeholder", "Sign in or play to chat")
        expect(w.locator("#chat-form button")).to_be_disabled()
        w.click("#chat-login")
        w.wait_for_url("**/login?next=*")
        assert not errors, errors
    finally:
        ctx_w.close()
        ctx_a.close()
        ctx_b.close()


def test_the_watchers_chat_is_on_the_first_screen(server: str, browser: Browser) -> None:
    """At 1280x800 a watcher's chat started at y = 787: below the fold, under two full trays."""
    ctx_a, ctx_b, a, b = online_pair(server, browser)
    ctx_w = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    try:
        w = ctx_w.new_page()
        sign_up(server, w, "walk_watcher")
        w.goto(a.url.split("#")[0])
        expect(w.locator("#chat-input")).to_be_visible()
        expect(w.locator("#chat-input")).to_be_enabled()
        w.evaluate("window.scrollTo(0, 0)")
        for sel in ("#chat-title", "#chat-log", "#chat-input"):
            b_ = box(w, sel)
            assert b_["y"] + b_["height"] <= DESKTOP["height"], (sel, b_)
        w.fill("#chat-input", "hello from the stands")
        w.press("#chat-input", "Enter")
        expect(w.locator("#chat-log")).to_contain_text("hello from the stands")
        # the players' page is as it was: their own tray stays big
        expect(a.locator("#tray-mine-block")).not_to_have_class(re.compile(r"\bsmall\b"))
    finally:
        ctx_w.close()
        ctx_a.close()
        ctx_b.close()
