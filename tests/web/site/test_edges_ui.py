"""The rest of issue 52's list, in a real browser (Playwright driving Debian's chromium against a
real uvicorn server): the desktop tables' last column, the chat log's markup (axe-core), tap targets
of at least 24 CSS px on every phone page, the premoved cell marked, *Start game* on a phone's first
screen, the AI-level filter a list, the position text's error for players.  Each test failed on the
code before its fix."""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, Page, expect

from jericho_game.game import Game
from jericho_game.web.server import create_app
from jericho_game.web.storage.database import GameRecord
from tests.web import test_browser, tour
from tests.web.test_browser import serve_in_thread, watch_errors

browser = test_browser.browser
APP: dict[str, Any] = {}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("edges") / "games.sqlite3"
    # the tour's accounts and this module's, all from one address: more than the 5 sign-ups an hour
    app = create_app(
        str(db),
        password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1),
        budget_settings=["signup.group=50"],
    )
    APP["app"] = app
    yield from serve_in_thread(app)


@pytest.fixture(autouse=True, scope="module")
def patient() -> Iterator[None]:
    """Wait longer than Playwright's 5 s for what a busy machine draws late (2 cores, many tests)."""
    expect.set_options(timeout=20_000)
    yield
    expect.set_options(timeout=5_000)


PLAYER = "ada_edges"
OPPONENT = "bartholomew_edges"  # a long name: the widest opponent cell


def seed(page: Page, server: str, app: Any) -> None:
    """Games of every kind for PLAYER (made once per server): online against OPPONENT with a clock,
    rated and not, correspondence, against the AI at two levels; every result and both sides."""
    tour._login(page, server, OPPONENT)
    tour._login(page, server, PLAYER)
    if page.request.get(server + f"/api/players/{PLAYER}/games").json()["games"]:
        return
    me, other = app.state.accounts.find(PLAYER).id, app.state.accounts.find(OPPONENT).id
    storage = app.state.service.storage
    g = Game()
    moves = []
    for _ in range(4):
        moves.append(str(g.legal_moves()[0]))
        g.play(moves[-1])
    start = float(calendar.timegm(time.strptime("2026-11-01", "%Y-%m-%d")))
    kinds: list[dict[str, Any]] = [
        {"mode": "online", "clock": 300.0, "increment": 3.0, "rated": True},
        {"mode": "online", "clock": 60.0},
        {"mode": "online", "per_move_days": 3},
        {"mode": "ai", "ai_side": "north", "ai_level": "challenger", "clock": 1500.0, "increment": 10.0},
        {"mode": "ai", "ai_side": "south", "ai_level": "medium"},
    ]
    for i in range(10):
        kind = dict(kinds[i % len(kinds)])
        south, north = (me, other) if i % 2 == 0 else (other, me)
        if kind["mode"] == "ai":
            south, north = (None, me) if kind["ai_side"] == "south" else (me, None)
        storage.create(
            GameRecord(
                id=f"edge{i:02d}",
                joined=True,
                south_token="s",
                north_token="n",
                south_account=south,
                north_account=north,
                result=("south", "north", "draw")[i % 3] if i else None,
                reason="resign" if i % 3 != 2 else "exhaustion",
                created_at=start + i * 86400,
                updated_at=start + i * 86400,
                moves=moves,
                **kind,
            )
        )


#: Each shown table's last column against the box that shows it: how far its cells reach past the
#: box's visible right edge (px), how many cut their own text (content wider than the cell), and
#: whether that box scrolls sideways (a phone may scroll a wide table in its own box).  The header
#: row counts only where it is drawn (a phone's cards hide it off screen for screen readers).
CUT = """() => [...document.querySelectorAll('main table')].filter((t) => t.offsetParent !== null).map((t) => {
  let box = t.parentElement;
  while (box && getComputedStyle(box).overflowX === 'visible') box = box.parentElement;
  const edge = box ? box.getBoundingClientRect().right : innerWidth;
  const right = Math.min(edge, document.documentElement.clientWidth);
  const rows = [...t.querySelectorAll('tr')].filter((r) => getComputedStyle(r.parentElement).position !== 'absolute');
  const cells = rows.map((r) => r.cells[r.cells.length - 1]).filter((c) => c);
  const past = Math.max(...cells.map((c) => c.getBoundingClientRect().right - right));
  const clipped = cells.filter((c) => c.scrollWidth > c.clientWidth + 1).length;
  const scrolls = !!box && ['auto', 'scroll'].includes(getComputedStyle(box).overflowX)
    && box.scrollWidth > box.clientWidth;
  return { table: t.id, past: Math.round(past), clipped, scrolls, boxFits: !box || edge <= innerWidth };
})"""


@pytest.mark.parametrize(("w", "h"), [(1280, 800), (1440, 900), (390, 844)])
def test_every_tables_last_column_is_whole(server: str, browser: Browser, w: int, h: int) -> None:
    """The search cut its last column (*Replay* shown as "R") and the four statistics tables cut
    *Score* at 1280 and 1440: the tables reached past the 56 rem page's box, which scrolled them.
    On a desktop every cell of the last column is now inside the box; on a phone the table is cards
    (the search) or scrolls in its own box (the statistics), never wider than the screen."""
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    errors = watch_errors(page)
    seed(page, server, APP["app"])
    for path, count in (("games", 1), ("stats", 4)):
        page.goto(server + f"/players/{PLAYER}/{path}")
        expect(page.locator("main table tbody tr").first).to_be_visible()
        tables = page.evaluate(CUT)
        assert len(tables) == count, tables
        for t in tables:
            if w >= 1280:
                assert t["past"] <= 0 and not t["clipped"] and not t["scrolls"], (path, w, t)
            else:
                assert t["boxFits"] and not t["clipped"] and (t["past"] <= 0 or t["scrolls"]), (path, w, t)
        assert page.evaluate("document.documentElement.scrollWidth") <= w
    ctx.close()
    assert not errors, errors


def test_the_ai_level_filter_is_a_list_of_the_levels(server: str, browser: Browser) -> None:
    """The search's AI level was a free text box (a player had to know "challenger" was an id): it is
    a list of every level the server plays, by its name in the page's language, that the statistics'
    links and the address fill."""
    ctx = tour.new_context(browser, "fr")
    page = ctx.new_page()
    errors = watch_errors(page)
    seed(page, server, APP["app"])
    levels = page.request.get(server + "/api/levels").json()["levels"]
    page.goto(server + f"/players/{PLAYER}/games")
    expect(page.locator("#pg-games tbody tr")).to_have_count(10)
    level = page.locator("#pg-level")
    assert level.evaluate("(e) => e.tagName") == "SELECT"
    expect(level.locator("option")).to_have_count(len(levels) + 1)  # and "any"
    expect(level.locator('option[value="challenger"]')).to_have_text("Prétendant")
    level.select_option("challenger")
    page.click("#pg-search")
    expect(page.locator("#pg-games tbody tr")).to_have_count(2)
    assert "level=challenger" in page.url
    # the statistics' row for an AI level leads to the search with that level chosen
    page.goto(server + f"/players/{PLAYER}/stats")
    page.locator("#ps-opponent a", has_text="Moyen").click()
    expect(page.locator("#pg-level")).to_have_value("medium")
    expect(page.locator("#pg-games tbody tr")).to_have_count(2)
    # a level the list does not hold (a research player's, from an old address) is kept, not lost
    page.goto(server + f"/players/{PLAYER}/games?level=mcts:sims=200")
    expect(page.locator("#pg-level")).to_have_value("mcts:sims=200")
    expect(page.locator("#pg-games tbody tr")).to_have_count(0)
    ctx.close()
    assert not errors, errors


def test_the_chat_log_is_a_log_holding_a_list(server: str, browser: Browser) -> None:
    """axe-core found a serious ``listitem`` fault on every online game's page: the chat was an
    ``<ol role="log">``, whose role took the list's away from its ``<li>`` messages.  The log is now
    a box holding the list: still a polite live region named by the chat's title."""
    a_ctx, b_ctx = tour.new_context(browser, "light"), tour.new_context(browser, "dark", tour.SIZES["phone"])
    a, b = a_ctx.new_page(), b_ctx.new_page()
    errors = [watch_errors(p) for p in (a, b)]
    g = a.request.post(server + "/api/games", data={"mode": "online", "name": "Ada", "side": "south"}).json()
    a.goto(g["links"]["play"])
    b.goto(g["links"]["invite"])
    for page in (a, b):
        expect(page.locator("#chat-log .chat-empty")).to_be_visible()
        assert tour.axe_violations(page) == [], page.url
    a.fill("#chat-input", "good luck")
    a.press("#chat-input", "Enter")
    for page in (a, b):
        expect(page.locator("#chat-log .chat-text")).to_have_text(["good luck"])
        assert tour.axe_violations(page) == [], page.url
        log = page.locator('[role="log"]')
        expect(log).to_have_count(1)
        expect(log).to_have_attribute("aria-live", "polite")
        expect(log).to_have_attribute("aria-labelledby", "chat-title")
        expect(log.locator("ol > li")).to_have_count(1)
    for ctx in (a_ctx, b_ctx):
        ctx.close()
    assert not [e for p in errors for e in p], errors


@pytest.mark.parametrize(
    ("look", "board", "search"),
    [
        (
            "light",
            "Could not load it: The towers: there is no cell “z9” on the board.",
            "position: Whose turn it is: write south or north, not “east”.",
        ),
        (
            "fr",
            "Chargement impossible : Les tours : il n’y a pas de case « z9 » sur le plateau.",
            "position: Le trait : écrivez south ou north, et non « east ».",
        ),
    ],
)
def test_a_bad_position_text_is_named_for_a_player(
    server: str, browser: Browser, look: str, board: str, search: str
) -> None:
    """The analysis board said "not a position text: towers: unknown cell 'z9'" (and the search "not
    a position text (turn: expected 'south' or 'north', not 'east')"), in English on the French page
    too: words of the notation's code.  Each now names the part at fault in the page's language."""
    ctx = tour.new_context(browser, look)
    page = ctx.new_page()
    seed(page, server, APP["app"])
    start = "- 1RYGBW2RYGBW3RYGBW4RYGBW5RYGBW 1RYGBW2RYGBW3RYGBW4RYGBW5RYGBW south - 0 *"
    page.goto(server + "/analysis")
    expect(page.locator("#an-tray .slot").first).to_be_visible()
    page.fill("#an-position", "z9:5R " + start.split(" ", 1)[1])
    page.click("#an-load-position")
    expect(page.locator("#an-error")).to_have_text(board)
    page.goto(server + f"/players/{PLAYER}/games")
    expect(page.locator("#pg-games tbody tr")).to_have_count(10)
    page.fill("#pg-position", start.replace("south", "east"))
    page.click("#pg-search")
    expect(page.locator("#pg-error")).to_have_text(search)
    ctx.close()


def _rgb(css: str) -> tuple[float, float, float]:
    r, g, b = (float(x) for x in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return r, g, b


def contrast(a: str, b: str) -> float:
    """WCAG's contrast ratio of two CSS rgb() colours."""

    def lum(c: str) -> float:
        ch = [v / 255 for v in _rgb(c)]
        lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in ch]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


#: A cell's drawn outline (its ring when the ring is drawn, else its background's border), its fill
#: and the outline's width, for the premoved cell and an unmarked one of the same camp.
OUTLINE = """(cells) => cells.map((name) => {
  const c = document.querySelector(`#board .cell[data-cell="${name}"]`);
  const ring = getComputedStyle(c.querySelector('.cell-ring'));
  const bg = getComputedStyle(c.querySelector('.cell-bg'));
  const drawn = ring.stroke !== 'none' && !/rgba\\(.*, 0\\)$/.test(ring.stroke) && ring.stroke !== 'transparent';
  return { stroke: drawn ? ring.stroke : bg.stroke, width: parseFloat(drawn ? ring.strokeWidth : bg.strokeWidth),
           fill: bg.fill };
})"""


@pytest.mark.parametrize(("look", "board"), [("light", None), ("dark", None), ("contrast", None), ("dark", "slate")])
def test_the_premoved_cell_is_marked_in_every_look(server: str, browser: Browser, look: str, board: str | None) -> None:
    """The queued move's cell got its class but, in dark mode, high contrast and the board themes,
    the theme's own cell border won over the premove's (the same colour and width as every cell's):
    no cell was seen marked.  Now its outline differs from an unmarked cell's and stands out from its
    own fill at 3:1 at least (WCAG's non-text contrast), in every look."""
    ctx_a = tour.new_context(browser, look)
    ctx_b = tour.new_context(browser, "light")
    if board:
        ctx_a.add_init_script(f"localStorage.setItem('jericho:board', '{board}')")
    a, b = ctx_a.new_page(), ctx_b.new_page()
    errors = watch_errors(a) + watch_errors(b)
    g = a.request.post(server + "/api/games", data={"mode": "online", "name": "Ada", "side": "south"}).json()
    a.goto(g["links"]["play"])
    b.goto(g["links"]["invite"])
    expect(a.locator("#tray-mine .slot.playable").first).to_be_visible()
    a.click('#tray-mine .slot[data-piece="1R"]')
    a.click('#board .cell[data-cell="a1"]')
    expect(b.locator("#moves .mv")).to_have_count(1)
    a.click('#tray-mine .slot[data-piece="2R"]')  # North to move: a premove
    a.click('#board .cell[data-cell="a2"]')
    expect(a.locator('#board .cell[data-cell="a2"]')).to_have_class(re.compile(r"\bpremove\b"))
    a.locator("#info").click()  # the focus off the board: its ring is not the mark
    marked, plain = a.evaluate(OUTLINE, ["a2", "b2"])
    assert marked["stroke"] != plain["stroke"] or marked["width"] >= plain["width"] + 3, (marked, plain)
    assert contrast(marked["stroke"], marked["fill"]) >= 3, (marked, plain)
    ctx_a.close()
    ctx_b.close()
    assert not errors, errors


@pytest.mark.parametrize("look", ["light", "fr"])
def test_start_game_is_on_a_phones_first_screen(server: str, browser: Browser, look: str) -> None:
    """At 360x740 *Start game* was at y = 1432, 1.9 screens down, under the intro, three opponents
    with their descriptions, the twelve levels with their Elo and the side and clock on lines of their
    own.  On a phone the form now comes first and is compact; every choice is still there."""
    from jericho_game.ai.levels import ladder

    ctx = tour.new_context(browser, look, {"width": 360, "height": 740})
    page = ctx.new_page()
    errors = watch_errors(page)
    page.goto(server + "/")
    expect(page.locator("#levels-main input")).to_have_count(len(ladder()))
    start = page.locator("#start").bounding_box()
    assert start is not None and start["y"] + start["height"] <= 740, start
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    # every choice of the form is on the screen too, and the intro and its links are kept below
    for sel in ('input[name="mode"][value="online"]', "#levels-main label:last-child", 'select[name="clock"]'):
        box = page.locator(sel).first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 740, (sel, box)
    expect(page.locator(".intro h1")).to_be_visible()
    # the checked level's Elo is shown (the others' are left to the desktop's grid)
    expect(page.locator("#levels-main label:has(input:checked) .level-elo")).to_be_visible()
    # online: "Who may join" instead of the levels, Start still on the first screen
    page.check('input[name="mode"][value="online"]')
    start = page.locator("#start").bounding_box()
    assert start is not None and start["y"] + start["height"] <= 740, start
    ctx.close()
    assert not errors, errors


#: The page's interactive elements drawn smaller than 24 x 24 CSS px (WCAG 2.5.8), each as (name, text,
#: width, height).  A radio or checkbox counts by the label around it (the label is what a finger
#: hits); left out as WCAG does: a link within a sentence (its block holds other text), and what is
#: not drawn (hidden, inert, or clipped away for screen readers only, as a file input under its label).
SMALL_TARGETS = """() => {
  const SEL = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=tab], '
    + '[role=link], [role=checkbox], [role=radio], [tabindex]:not([tabindex="-1"])';
  const drawn = (e) => {
    const s = getComputedStyle(e), b = e.getBoundingClientRect();
    return b.width > 0 && b.height > 0 && s.visibility !== 'hidden' && !e.closest('[inert], [aria-hidden=true]')
      && !e.closest('.sr') && s.clip !== 'rect(0px, 0px, 0px, 0px)';
  };
  const inSentence = (e) => {
    if (e.tagName !== 'A' || getComputedStyle(e).display !== 'inline') return false;
    let block = e.parentElement;
    while (block && getComputedStyle(block).display.startsWith('inline')) block = block.parentElement;
    return (block ? block.textContent : '').replace(e.textContent, '').replace(/[\\s·|,.:;()]/g, '').length > 0;
  };
  const out = [];
  for (const e of document.querySelectorAll(SEL)) {
    if (!drawn(e) || inSentence(e)) continue;
    const t = (e.matches('input[type=radio], input[type=checkbox]') && e.closest('label')) || e;
    const b = t.getBoundingClientRect();
    if (b.width < 23.99 || b.height < 23.99) {
      out.push([t.id || String(t.className) || t.tagName, (t.textContent || t.value || '').trim().slice(0, 30),
        Math.round(b.width), Math.round(b.height)]);
    }
  }
  return out;
}"""


def _online_game(page: Page, server: str) -> None:
    """An online game's page as its South player sees it, a move played, its chat and fair endings
    (the tour's game is a hot-seat one)."""
    g = page.request.post(server + "/api/games", data={"mode": "online", "name": "Ada", "side": "south"}).json()
    other = page.context.browser.new_context()  # type: ignore[union-attr]
    page.goto(g["links"]["play"])
    north = other.new_page()
    north.goto(g["links"]["invite"])
    expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()
    page.click('#tray-mine .slot[data-piece="1R"]')
    page.click('#board .cell[data-cell="a1"]')
    expect(north.locator("#moves .mv")).to_have_count(1)
    expect(page.locator("#chat-log .chat-empty")).to_be_visible()
    other.close()


def _profile_seen(page: Page, server: str) -> None:
    """Another player's profile, seen logged in: its follow, challenge and block controls."""
    tour._login(page, server, "ada_tour")
    tour._login(page, server, "erin_tour")
    page.goto(server + "/players/ada_tour")
    expect(page.locator("#profile h1")).to_contain_text("ada_tour")
    page.wait_for_load_state("networkidle")


PHONE_PAGES = {
    **{name: stop for name, stop in tour.STOPS.items() if name != "review"},
    "online-game": _online_game,
    "profile-seen": _profile_seen,
}


@pytest.mark.parametrize("stop", list(PHONE_PAGES))
def test_every_tap_target_of_a_phone_page_is_24_px(server: str, browser: Browser, stop: str) -> None:
    """0-4 targets under 24 px per phone page: the log-in / sign-up switch link (19 px high), the
    challenges' player links (19 px), ...  Every page of the tour (the review is the game's page with
    its panel, left out: its AI review is the slowest stop), an online game and a profile seen by
    another account, at 390x844 in light: none left."""
    ctx = tour.new_context(browser, "light", tour.SIZES["phone"])
    page = ctx.new_page()
    PHONE_PAGES[stop](page, server)
    page.wait_for_function("() => document.fonts.status === 'loaded'")
    assert page.evaluate(SMALL_TARGETS) == []
    ctx.close()


def test_the_tap_target_check_finds_a_small_one(server: str, browser: Browser) -> None:
    """The check can fail: a 20 px button and a link alone on its line are reported, a link inside a
    sentence is not."""
    ctx = tour.new_context(browser, "light", tour.SIZES["phone"])
    page = ctx.new_page()
    tour.offline(page, server)
    page.evaluate(
        """() => {
        const b = document.createElement("button");
        b.textContent = "x";
        b.style.cssText = "width: 20px; height: 20px; padding: 0; min-height: 0; min-width: 0";
        const p = document.createElement("p");
        p.innerHTML = '<a href="/rules" id="alone">Rules</a>';
        const q = document.createElement("p");
        q.innerHTML = 'Read <a href="/rules" id="inline">the rules</a> first.';
        document.querySelector("main").append(b, p, q);
    }"""
    )
    found = [name for name, *_ in page.evaluate(SMALL_TARGETS)]
    assert "alone" in found and "inline" not in found and any(not n or n == "BUTTON" for n in found), found
    ctx.close()
