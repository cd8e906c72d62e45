"""The board for everyone (issue 11), in a real browser: it fits each screen, it reads without
colour vision, a phone can zoom on a tower, the tutorial can be walked through, and the small
things a new player tripped over stay fixed.  Element boxes are measured, not eyeballed;
screenshots go to artifacts/ (git-ignored) to be looked at."""

from __future__ import annotations

import io
import itertools
import json
import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.request import urlopen

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from websockets.sync.client import connect as ws_connect

from jericho_game.ai.levels import ladder
from tests.web import test_browser
from tests.web.colour import ciede2000, fe_color_matrix, hex_rgb
from tests.web.test_browser import ARTIFACTS, watch_errors

# the same module-scoped fixtures: a uvicorn server and Debian's chromium
server = test_browser.server
browser = test_browser.browser

DESKTOPS = [(1280, 800), (1366, 768), (1440, 900), (1920, 1080)]
PHONE = (390, 844)
# the five piece colours and the two sides, as board.js draws them
PIECE_FILL = {"R": "#ea320f", "Y": "#ffc801", "G": "#3a9776", "B": "#003ccc", "W": "#f8f6ef"}
SIDE_FILL = {"south": "#6a1b7a", "north": "#3fb0a2"}
# Stated margins (CIEDE2000; about 2.3 is a just-noticeable difference, 10+ is obvious at a glance)
PIECE_MARGIN = 15.0
SIDE_MARGIN = 20.0
# a position that shows all five colours (single towers) and one monolith for each side
FIVE_COLOURS = ["5R@a2", "4Y@a3", "3G@g2", "5B@g3", "5W@c1"]


def hotseat(server: str, page: Page, moves: list[str]) -> dict[str, Any]:
    """A hot-seat game with ``moves`` played (over the WebSocket), opened in ``page``."""
    g = page.request.post(server + "/api/games", data={"mode": "hotseat"}).json()
    with ws_connect(server.replace("http", "ws") + f"/ws/{g['id']}") as ws:
        ws.send(json.dumps({"type": "hello", "token": g["token"]}))
        for mv in moves:
            if mv == "pass":
                continue  # forced passes are played by the server
            ws.send(json.dumps({"type": "move", "move": mv}))
            while (msg := json.loads(ws.recv()))["type"] != "ack":
                assert msg["type"] != "error", msg
    page.goto(g["links"]["play"])
    expect(page.locator("#moves .mv")).to_have_count(len(moves))
    if not moves:  # zero moves listed proves nothing: wait until the state has arrived and is drawn
        expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()
    return g


def box(page: Page, selector: str) -> dict[str, float]:
    b = page.locator(selector).first.bounding_box()
    assert b is not None, f"{selector} is not rendered"
    return b


def inside(b: dict[str, float], w: int, h: int) -> bool:
    return b["x"] >= -0.5 and b["y"] >= -0.5 and b["x"] + b["width"] <= w + 0.5 and b["y"] + b["height"] <= h + 0.5


def switch_contrast(page: Page) -> None:
    """Click ◐ (on a phone the display switches open from the header's ⚙ first)."""
    if page.locator("#btn-display").is_visible():
        page.click("#btn-display")
    page.click("#btn-contrast")


def still_shot(page: Page, name: str) -> None:
    page.wait_for_function("() => document.fonts.status === 'loaded'")
    page.screenshot(path=str(ARTIFACTS / name), animations="disabled")


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    yield ctx
    ctx.close()


# -- 1. layout ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("w", "h"), [*DESKTOPS, PHONE])
def test_board_tray_turn_and_score_fit_the_screen(server: str, browser: Browser, w: int, h: int) -> None:
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    errors = watch_errors(page)
    hotseat(server, page, FIVE_COLOURS)
    page.click('#tray-mine .slot[data-piece="4B"]')  # a piece in hand: the legal cells and badges show
    expect(page.locator("#board .cell.legal").first).to_be_visible()
    page.evaluate("window.scrollTo(0, 0)")
    for sel in ("#board", "#tray-mine", "#turn", "#score-south", "#score-north"):
        b = box(page, sel)
        if (w, h) != PHONE or sel != "#tray-mine":
            assert inside(b, w, h), f"{sel} at {w}x{h}: {b}"
    tray = box(page, "#tray-mine")
    board = box(page, "#board")
    if (w, h) == PHONE:
        # one screen height holds the board and the whole tray
        assert tray["y"] + tray["height"] <= h, tray
        assert board["width"] >= w - 12, board  # the board takes the phone's width
    else:
        assert inside(tray, w, h), tray
        assert board["height"] >= 0.75 * (h - 160), board  # the board is not shrunk to make room
    # tap targets: every cell answers on its whole pitch, at least 44 CSS px square on every screen
    # (a phone draws the rim narrower for it: board.js COMPACT_RIMS), with the whole board in sight
    for cell in page.locator("#board .cell .cell-hit").all():
        hit = cell.bounding_box()
        assert hit is not None and min(hit["width"], hit["height"]) >= 44.0, (w, h, hit)
    for sel in ("#board .octagon", *(f"#board .triangle:nth-child({i + 1}) .tri" for i in range(26))):
        assert 0 <= box(page, sel)["x"] and box(page, sel)["x"] + box(page, sel)["width"] <= w, (sel, w)
    # every piece, on the board and in the trays, carries its notation
    for piece in page.locator("#board .piece, #tray-mine .piece, #tray-other .piece").all()[:60]:
        assert piece.locator(".piece-label").text_content() == piece.get_attribute("data-piece")
    # the letters are readable: at least 11 CSS px high on a single-piece tower and in the tray
    label_h = box(page, '#board .cell[data-cell="a2"] .piece-label')["height"]
    tray_h = box(page, '#tray-mine .slot[data-piece="4B"] .piece-label')["height"]
    assert label_h >= 11 and tray_h >= 11, (label_h, tray_h)
    kind = "phone" if (w, h) == PHONE else f"desktop-{w}x{h}"
    still_shot(page, f"board-{kind}-light.png")
    switch_contrast(page)
    expect(page.locator("html")).to_have_attribute("data-contrast", "high")
    still_shot(page, f"board-{kind}-high-contrast.png")
    assert not errors, errors
    ctx.close()


@pytest.mark.parametrize(("w", "h", "least"), [(375, 667, 44.0), (360, 740, 43.0)])
def test_narrower_phones_keep_the_board_whole_and_cells_near_44_px(
    server: str, browser: Browser, w: int, h: int, least: float
) -> None:
    """Under 380 px the rim is drawn narrower still: 44 px cells at 375 px; at 360 px the 7 columns,
    their coordinates and three triangles per corner leave 43 px (8.36 pitches in 360 px)."""
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    hotseat(server, page, TALL_TOWERS)
    for cell in page.locator("#board .cell .cell-hit").all():
        hit = cell.bounding_box()
        assert hit is not None and min(hit["width"], hit["height"]) >= least, (w, h, hit)
    for sel in ("#board .octagon", *(f"#board .triangle:nth-child({i + 1}) .tri" for i in range(26))):
        b = box(page, sel)
        assert 0 <= b["x"] and b["x"] + b["width"] <= w, (sel, w, b)
    labels = page.evaluate(MEASURE_LABELS, "#board .piece-label, #tray-mine .piece-label, #tray-other .piece-label")
    assert min(x["px"] for x in labels) >= 10.5, labels  # letters: 11 px at 375, 10.6 at 360
    still_shot(page, f"tall-towers-phone-{w}x{h}-light.png")
    ctx.close()


@pytest.mark.parametrize(("w", "h"), [PHONE, (375, 667), (360, 740)])
def test_the_phone_header_keeps_to_one_line(server: str, browser: Browser, w: int, h: int) -> None:
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    hotseat(server, page, [])
    expect(page.locator("#account-nav a")).to_have_count(1)  # "Log in" (or the player's name) is drawn
    header = box(page, "header.top")
    assert header["height"] <= 46.5, header
    for item in page.locator("header.top .brand, header.top nav a, header.top nav button").all():
        b = item.bounding_box()
        assert b is not None and inside(b, w, h), (item.inner_text(), b)
    for item in page.locator("header.top nav a").all():  # whole ("Log in" was cut to "Lo…")
        assert item.evaluate("(e) => e.scrollWidth <= e.clientWidth"), item.inner_text()
    for item in page.locator("header.top nav a").all():  # one line each: "New game" wrapped to two
        size = float(item.evaluate("(e) => parseFloat(getComputedStyle(e).fontSize)"))
        # one line: under two lines of text (a link is at least a 24 px target, issue 34)
        assert item.bounding_box()["height"] < 2.4 * size, (item.inner_text(), item.bounding_box(), size)
    assert box(page, "header.top .brand")["height"] <= 30  # the icon and "Jericho" side by side
    ctx.close()


# towers of every height on both camps: 4 high on d3 and c1, 3 high on a2 and g4
TALL_TOWERS = (
    "5R@d2 1G@d3 2Y@d3 4B@d3 3W@d3 1R@a2 2B@a2 3Y@a2 5W@g4 4G@g4 1B@g4 2R@g4 5G@c1 1W@c1 4R@c1 3B@c1"
).split()
# a letter's rendered size: its font size in CSS px (the SVG user unit times the screen scale), the
# ink of its capitals and digits as the browser measures them, and the bar it sits on
MEASURE_LABELS = """(sel) => {
  const ctx = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll(sel)].map((t) => {
    const cs = getComputedStyle(t);
    const px = parseFloat(cs.fontSize) * t.getScreenCTM().a;
    ctx.font = `${cs.fontWeight} ${px}px ${cs.fontFamily}`;
    const m = ctx.measureText(t.textContent);
    const bar = t.parentNode.querySelector('.piece-body').getBoundingClientRect();
    return {piece: t.textContent, px, ink: m.actualBoundingBoxAscent + m.actualBoundingBoxDescent,
            inkWidth: m.width, barH: bar.height, barW: bar.width};
  });
}"""


@pytest.mark.parametrize(("w", "h"), [*DESKTOPS, PHONE])
def test_every_piece_letter_is_readable_even_on_tall_towers(server: str, browser: Browser, w: int, h: int) -> None:
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    hotseat(server, page, TALL_TOWERS)
    page.evaluate("() => Promise.all(document.getAnimations().map((a) => { a.finish(); return a.finished; }))")
    board = page.evaluate(MEASURE_LABELS, "#board .piece-label")
    assert len(board) == 1 + 4 + 3 + 4 + 4, board  # every piece on the board carries its letters
    trays = page.evaluate(MEASURE_LABELS, "#tray-mine .piece-label, #tray-other .piece-label")
    assert len(trays) == 50 - len(TALL_TOWERS)
    for label in board + trays:
        assert label["px"] >= 11.0, (w, h, label)  # 11 CSS px letters, even 4 high on a phone
        assert label["ink"] <= label["barH"] - 1 and label["inkWidth"] <= label["barW"] - 2, (w, h, label)
    kind = "phone" if (w, h) == PHONE else f"desktop-{w}x{h}"
    smallest = min(x["px"] for x in board)
    print(f"{kind}: smallest letter on the board {smallest:.1f} CSS px, in the trays {min(x['px'] for x in trays):.1f}")
    still_shot(page, f"tall-towers-{kind}-light.png")
    switch_contrast(page)
    still_shot(page, f"tall-towers-{kind}-high-contrast.png")
    ctx.close()


def test_banners_float_and_nothing_jumps(server: str, browser: Browser) -> None:
    from tests.web.test_server import _moves_to_a_seven_threat

    for w, h in (PHONE, (1280, 800)):
        ctx = browser.new_context(viewport={"width": w, "height": h})
        page = ctx.new_page()
        hotseat(server, page, ["5R@d2"])
        plain = box(page, "#board")["y"] + page.evaluate("window.scrollY")
        hotseat(server, page, _moves_to_a_seven_threat())
        banner = page.locator("#banner.threat")
        expect(banner).to_be_visible()
        with_banner = box(page, "#board")["y"] + page.evaluate("window.scrollY")
        assert with_banner == plain, "the 7-monolith banner moved the board"
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        assert page.evaluate("window.scrollY") > 0 or h >= page.evaluate("document.body.scrollHeight")
        assert inside(box(page, "#banner"), w, h), "the banner scrolled out of sight"
        before = box(page, "#board")
        page.locator("#typed-move").fill("nonsense")
        page.keyboard.press("Enter")
        expect(page.locator("#message")).to_contain_text("Malformed move")
        assert box(page, "#board") == before, "an error moved the board"
        assert inside(box(page, "#message"), w, h)
        if (w, h) == PHONE:
            still_shot(page, "seven-threat-scrolled-phone.png")
        ctx.close()


# the page's hello reaches the server a second late: the state the server sends at connection,
# to a socket it counts as a watcher until the hello, is there a second before the seat is
SLOW_HELLO = """
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  if (String(data).includes('"type":"hello"')) {
    setTimeout(() => send.call(this, data), 1000);
    return;
  }
  return send.call(this, data);
};
"""


def test_a_player_never_sees_the_spectators_page_while_the_hello_travels(server: str, browser: Browser) -> None:
    """The banner test's jump under load: drawn before the answer to its hello, a player's page was
    a spectator's ("you are watching · 1 watching", small trays), its phone score bar a line
    taller and the board lower, until the seat arrived."""
    ctx = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    page = ctx.new_page()
    hotseat(server, page, ["5R@d2"])
    expect(page.locator("#play")).not_to_have_class(re.compile(r"\bwatching\b"))  # the seat is there
    settled = box(page, "#board")
    ctx.add_init_script(SLOW_HELLO)  # for the pages opened from now on
    drawn: list[Any] = []
    for moves in (["5R@d2"], ["5R@d2", "1G@d3"]):
        hotseat(server, page, moves)  # measured as soon as the moves are drawn: before the seat came, once
        classes = page.locator("#play").get_attribute("class")
        drawn.append((page.locator("#turn").inner_text(), box(page, "#board"), classes))
    for turn, board, classes in drawn:
        assert "watching" not in turn, turn
        assert "watching" not in (classes or "").split(), classes
        assert board == settled, "the board moved while the hello travelled"
    ctx.close()


def test_a_spectator_arriving_does_not_move_a_players_board_on_a_phone(server: str, browser: Browser) -> None:
    # between the two clocks "· 1 watching" took a third line of the score bar: its room is kept
    player = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    watcher = browser.new_context(viewport={"width": 1280, "height": 800})
    page = player.new_page()
    g = page.request.post(server + "/api/games", data={"mode": "online", "side": "south", "clock": 5}).json()
    page.goto(g["links"]["play"])
    expect(page.locator("#clock-north")).to_be_visible()
    expect(page.locator("#turn")).to_contain_text("Waiting")
    before = box(page, "#board")
    watcher.new_page().goto(g["links"]["watch"])
    expect(page.locator("#turn")).to_contain_text("1 watching", use_inner_text=True)  # shown, not only kept
    assert box(page, "#board") == before, "a spectator's arrival moved the board"
    player.close()
    watcher.close()


@pytest.mark.parametrize("who", ["player with clocks", "spectator"])
def test_the_score_bar_holds_names_clocks_and_turn_on_a_phone(server: str, browser: Browser, who: str) -> None:
    ctx = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    page = ctx.new_page()
    clock = {"clock": 5} if who == "player with clocks" else {}
    g = page.request.post(server + "/api/games", data={"mode": "online", "side": "south", **clock}).json()
    # the longest bars: two clocks with "Waiting for opponent" and "open seat"; or no clocks and a
    # long small line ("... monoliths off the board · you are watching")
    page.goto(g["links"]["play" if clock else "watch"])
    if clock:
        expect(page.locator("#clock-north")).to_be_visible()
    else:
        expect(page.locator("#turn")).to_contain_text("watching")
    expect(page.locator("#turn")).to_contain_text("Waiting")
    bar = box(page, ".scorebar")
    sels = ["#turn", "#south-panel", "#north-panel", "#score-south", "#score-north", "#south-name", "#north-name"]
    for sel in sels + (["#clock-south", "#clock-north"] if clock else []):
        b = box(page, sel)  # nothing spills out of the fixed-height bar onto the board
        assert bar["y"] <= b["y"] and b["y"] + b["height"] <= bar["y"] + bar["height"], (sel, b, bar)
        assert bar["x"] <= b["x"] and b["x"] + b["width"] <= bar["x"] + bar["width"], (sel, b, bar)
    for a, b in itertools.combinations(("#turn", "#score-south", "#score-north", "#south-name", "#north-name"), 2):
        p, q = box(page, a), box(page, b)  # nor do they overlap one another
        assert p["x"] + p["width"] <= q["x"] + 0.5 or q["x"] + q["width"] <= p["x"] + 0.5, (a, p, b, q)
    for sel in ("#south-name", "#north-name"):  # the names are whole, not cut
        whole = "(e => e.clientWidth > 0 && e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight)"
        assert page.evaluate(f"{whole}(document.querySelector('{sel}'))"), sel
    ctx.close()


def test_connection_lost_is_shown_over_the_page(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    sockets: list[Any] = []

    def through(ws: Any) -> None:  # pass the game's socket through, keeping a handle to cut it
        ws.connect_to_server()
        sockets.append(ws)

    cut = [False]

    def route(ws: Any) -> None:  # while cut, reconnections fail
        if cut[0]:
            ws.close()
        else:
            through(ws)

    page.route_web_socket("**/ws/*", route)
    hotseat(server, page, ["5R@d2"])
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    before = box(page, "#board")
    cut[0] = True
    for ws in sockets:
        ws.close()
    expect(page.locator("#conn")).to_be_visible()
    expect(page.locator("#conn")).to_contain_text("Connection lost")
    assert inside(box(page, "#conn"), 1280, 800), "the connection banner scrolled out of sight"
    assert box(page, "#board") == before, "the connection banner moved the board"
    cut[0] = False
    expect(page.locator("#conn")).to_be_hidden(timeout=10000)  # back: the page reconnected


# -- 2. colour ----------------------------------------------------------------------------------------


def _samples(page: Page) -> dict[str, tuple[int, int, int]]:
    """Screen colours of the five pieces (inside the bar, away from its letters) and of a
    monolith of each side, read from a screenshot of the page as rendered."""
    from PIL import Image

    # the last piece drops in with an animation: measure where it lands
    page.evaluate("() => Promise.all(document.getAnimations().map((a) => { a.finish(); return a.finished; }))")
    points: dict[str, list[float]] = page.evaluate(
        """() => {
      const out = {};
      for (const c of ['R', 'Y', 'G', 'B', 'W']) {
        const r = document.querySelector(`#board .piece[data-piece$="${c}"] .piece-body`).getBoundingClientRect();
        out[c] = [r.left + r.width * 0.15, r.top + r.height * 0.7];
      }
      for (const side of ['south', 'north']) {
        const r = document.querySelector(`#board .triangle.held.tri-${side} .monolith-body`).getBoundingClientRect();
        out[side] = [r.left + r.width / 2, r.top + r.height * 0.6];
      }
      return out;
    }"""
    )
    image = Image.open(io.BytesIO(page.screenshot(animations="disabled"))).convert("RGB")
    return {k: image.getpixel((round(x), round(y))) for k, (x, y) in points.items()}  # type: ignore[misc]


@pytest.mark.parametrize("contrast", ["normal", "high"])
def test_colours_stay_apart_under_simulated_colour_blindness(
    server: str, context: BrowserContext, contrast: str
) -> None:
    page = context.new_page()
    page.add_init_script(f"localStorage.setItem('jericho:contrast', '{contrast}')")
    hotseat(server, page, FIVE_COLOURS)
    page.mouse.move(0, 0)
    page.evaluate("window.scrollTo(0, 0)")
    normal = _samples(page)
    if contrast == "normal":  # the samples hit the pieces' and monoliths' fills
        for c, fill in PIECE_FILL.items():
            assert ciede2000(normal[c], hex_rgb(fill)) < 3, (c, normal[c])
        for side, fill in SIDE_FILL.items():
            assert ciede2000(normal[side], hex_rgb(fill)) < 3, (side, normal[side])
    for kind in ("protanopia", "deuteranopia", "tritanopia"):
        page.evaluate(
            """([id, values]) => {
          const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
          svg.setAttribute('width', 0); svg.setAttribute('height', 0); svg.style.position = 'absolute';
          svg.innerHTML = `<filter id="${id}"><feColorMatrix type="matrix" values="${values}"/></filter>`;
          document.body.appendChild(svg);
          document.querySelector('#board').style.filter = `url(#${id})`;
        }""",
            [f"cvd-{kind}", fe_color_matrix(kind)],
        )
        seen = _samples(page)
        assert ciede2000(seen["R"], normal["R"]) > 3 or kind == "tritanopia", "the simulation filter did not apply"
        pieces = {c: seen[c] for c in PIECE_FILL}
        worst = min((ciede2000(pieces[a], pieces[b]), a + b) for a, b in itertools.combinations(pieces, 2))
        assert worst[0] >= PIECE_MARGIN, f"{kind}: pieces {worst[1]} only {worst[0]:.1f} apart"
        sides = ciede2000(seen["south"], seen["north"])
        assert sides >= SIDE_MARGIN, f"{kind}: the two sides only {sides:.1f} apart"
        if contrast == "normal":
            still_shot(page, f"board-{kind}-simulated.png")


# -- 3. phone zoom ------------------------------------------------------------------------------------


def test_tapping_a_tower_on_a_phone_zooms_on_it(server: str, browser: Browser) -> None:
    ctx = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]}, has_touch=True, is_mobile=True)
    page = ctx.new_page()
    hotseat(server, page, ["5R@d2", "1G@d3", "2Y@d3", "4B@d3"])
    # the last piece has landed (a tap on a tower still dropping in made Playwright scroll the page)
    page.evaluate("() => Promise.all(document.getAnimations().map((a) => a.finished))")
    page.locator('#board .cell[data-cell="d3"]').tap()
    zoom = page.locator("#zoom")
    expect(zoom).to_be_visible()
    expect(page.locator("#zoom-title")).to_contain_text("d3: 3 pieces, North's camp")
    items = page.locator("#zoom-list li")
    expect(items).to_have_text(["bottom: size 1, green (1G)", "size 2, yellow (2Y)", "top: size 4, blue (4B)"])
    assert float(page.evaluate("getComputedStyle(document.querySelector('#zoom-list')).fontSize")[:-2]) >= 16
    assert inside(box(page, "#zoom"), *PHONE)
    assert page.evaluate("window.scrollY") == 0, "opening the zoom scrolled the page"
    still_shot(page, "tower-zoom-phone.png")
    page.locator("#zoom-close").tap()
    expect(zoom).to_be_hidden()
    ctx.close()


def test_a_phone_plays_with_two_taps_and_no_scrolling(server: str, browser: Browser) -> None:
    ctx = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]}, has_touch=True, is_mobile=True)
    page = ctx.new_page()
    hotseat(server, page, [])
    page.evaluate("() => Promise.all(document.getAnimations().map((a) => a.finished))")
    for piece, cell in (("1W", "a4"), ("1R", "g1")):  # the farthest corners from the tray's last row
        slot = box(page, f'#tray-mine .slot[data-piece="{piece}"]')
        target = box(page, f'#board .cell[data-cell="{cell}"] .cell-hit')
        assert inside(slot, *PHONE) and inside(target, *PHONE), (slot, target)  # both in sight at once
        page.locator(f'#tray-mine .slot[data-piece="{piece}"]').tap()
        page.locator(f'#board .cell[data-cell="{cell}"]').tap()
        expect(page.locator(f'#board .cell[data-cell="{cell}"] .piece')).to_have_count(1)
        assert page.evaluate("window.scrollY") == 0, "a tap scrolled the page"
    expect(page.locator("#moves .mv")).to_have_count(2)
    # scrolled down (the tray at the top of the screen, the board's far rows out of sight), a
    # piece picked brings the whole board back in sight
    page.evaluate("document.querySelector('#tray-mine').scrollIntoView()")
    assert box(page, "#board")["y"] < 0
    page.locator('#tray-mine .slot[data-piece="2W"]').tap()
    expect(page.locator("#tray-mine .slot.selected")).to_have_count(1)
    assert inside(box(page, "#board"), *PHONE), box(page, "#board")
    ctx.close()


# -- 4. tutorial, preview and rules ----------------------------------------------------------------

# per lesson: an illegal try to see refused (or None), then the answer
WALK = [
    (None, "5R@d2"),
    ("5G@c2", "5R@c2"),
    ("1G@d3", "3Y@d2"),
    ("2W@b3", "5R@b2"),
    ("3B@c2", "3B@a1"),
    ("1Y@a4", "1G@a4"),
    ("1R@a1", "1R@c3"),
]


def _place(page: Page, move: str) -> None:
    piece, cell = move.split("@")
    page.click(f'#tray-mine .slot[data-piece="{piece}"]')
    page.click(f'#board .cell[data-cell="{cell}"]')


def _answers(server: str) -> str:
    """How the server answers a plain GET of /learn now (a stalled event loop: a timeout)."""
    started = time.monotonic()
    try:
        with urlopen(server + "/learn", timeout=10) as r:
            return f"HTTP {r.status} in {time.monotonic() - started:.2f} s"
    except OSError as exc:
        return f"{type(exc).__name__}: {exc} after {time.monotonic() - started:.2f} s"


@pytest.mark.parametrize(("w", "h"), [(1280, 800), PHONE])
def test_the_whole_tutorial_can_be_walked(server: str, browser: Browser, w: int, h: int) -> None:
    # No service worker: on a fresh context its install fetches the whole site (61 requests) from
    # the test's in-process server while the click navigates (the worker has tests of its own).
    # The click to /learn twice waited past 30 s on a loaded CI machine: the home page's first
    # /api/levels imported JAX on the server's event loop (test_ladder.py: the first look at the
    # levels stalls nobody).
    ctx = browser.new_context(viewport={"width": w, "height": h}, service_workers="block")
    page = ctx.new_page()
    errors = watch_errors(page)
    page.goto(server + "/")
    sent: list[str] = []  # what the page asked for after the click: said if /learn never comes
    page.on("request", lambda r: sent.append(r.url.removeprefix(server)))
    page.on("requestfailed", lambda r: sent.append(f"failed {r.url.removeprefix(server)}: {r.failure}"))
    page.click("text=Learn to play in two minutes")
    try:
        page.wait_for_url("**/learn", wait_until="domcontentloaded", timeout=60_000)
    except PlaywrightTimeout as exc:  # once more on a loaded CI run after the levels fix: say what was seen
        raise AssertionError(
            f"no /learn after the click; the server then: {_answers(server)}; the page asked {sent}"
        ) from exc
    expect(page.locator("#lesson-nav button")).to_have_count(len(WALK))
    for cell in page.locator("#board .cell .cell-hit").all():  # as large targets as in a game
        hit = cell.bounding_box()
        assert hit is not None and min(hit["width"], hit["height"]) >= 44.0, (w, h, hit)
    for i, (illegal, answer) in enumerate(WALK):
        expect(page.locator("#lesson-nav button").nth(i)).to_have_attribute("aria-current", "step")
        if illegal:
            _place(page, illegal)
            expect(page.locator("#feedback.bad")).to_contain_text("Refused")
        if i == 3:  # the preview: +2 on b2 for a large piece before it is placed
            page.click('#tray-mine .slot[data-piece="5R"]')
            expect(page.locator('#board .cell[data-cell="b2"] .badge.shown.gain')).to_have_text("+2")
            page.hover('#board .cell[data-cell="b2"]')
            expect(page.locator("#board .alignment.preview-south")).to_have_count(2)
            if w == 1280:
                still_shot(page, "tutorial-preview-desktop.png")
            page.click('#tray-mine .slot[data-piece="5R"]')  # put it back
        _place(page, answer)
        expect(page.locator("#feedback.good")).to_contain_text("Well done")
        if i < len(WALK) - 1:
            page.click("#btn-next")
    expect(page.locator("#btn-play")).to_be_visible()
    assert page.locator("#lesson-nav button.done").count() == len(WALK)
    still_shot(page, f"tutorial-done-{'phone' if w < 500 else 'desktop'}.png")
    assert not errors, errors
    ctx.close()


def test_a_phone_sees_the_whole_board_once_a_tutorial_piece_is_picked(server: str, browser: Browser) -> None:
    ctx = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]}, has_touch=True, is_mobile=True)
    page = ctx.new_page()
    page.goto(server + "/learn#seven")  # the answer goes on a4, the board's far row
    expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # down at the tray, the board's top out of sight
    assert box(page, "#board")["y"] < 0
    page.locator('#tray-mine .slot[data-piece="1G"]').tap()
    expect(page.locator('#tray-mine .slot[data-piece="1G"]')).to_have_attribute("aria-pressed", "true")
    assert inside(box(page, "#board"), *PHONE), box(page, "#board")
    assert inside(box(page, '#board .cell[data-cell="a4"] .cell-hit'), *PHONE)
    ctx.close()


def test_a_wrong_answer_is_explained_and_can_be_retried(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    page.goto(server + "/learn#seven")
    _place(page, "5R@f1")  # reaches 7, but North's best reply breaks it
    expect(page.locator("#feedback.bad")).to_contain_text("North's reply left you")
    page.click("#btn-reset")
    expect(page.locator("#feedback")).to_have_text("")
    expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()


def test_the_game_board_previews_which_alignments_change_hands(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    hotseat(server, page, ["5R@d2"])  # North to move: a single 1 on d3 would hand d to South
    page.click('#tray-mine .slot[data-piece="1G"]')
    expect(page.locator('#board .cell[data-cell="d3"] .badge.shown.loss')).to_have_text("−1")
    page.hover('#board .cell[data-cell="d3"]')
    expect(page.locator('#board .alignment.preview-south[data-alignment="d"]')).to_have_count(1)
    expect(page.locator("#info")).to_contain_text("1G@d3: gives d to South")
    page.click('#tray-mine .slot[data-piece="5G"]')  # a 5 there would tie: nobody leads, no badge
    expect(page.locator('#board .cell[data-cell="d3"] .badge.shown')).to_have_count(0)


def test_rules_page_is_for_players(server: str, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": PHONE[0], "height": PHONE[1]})
    page.goto(server + "/rules")
    expect(page.locator("#rules h1")).to_be_visible()
    expect(page.locator("#rules .diagram svg").first).to_be_visible()  # diagrams drawn with the real board
    text = page.locator("#rules").inner_text()
    for developer_word in ("RULES.md", "standard.json", "jericho_game", "conformance", "Game."):
        assert developer_word not in text, developer_word
    height = page.evaluate("document.body.scrollHeight")
    assert height < 6500, f"the rules are {height} px long on a phone"
    page.close()


# -- 5. levels ----------------------------------------------------------------------------------------


def test_ai_levels_read_as_levels_with_one_line_each(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    page.goto(server + "/")
    labels = page.locator("#levels-main label")
    expect(labels).to_have_count(len(ladder()))  # the ladder (ai/levels.py), weakest first
    names = (
        "Easy",
        "Casual",
        "Medium",
        "Hard",
        "Strong",
        "Advanced",
        "Skilled",
        "Veteran",
        "Challenger",
        "Elite",
        "Expert",
        "Master",
    )
    assert len(names) == len(ladder())
    for i, name in enumerate(names):
        expect(labels.nth(i).locator("b")).to_have_text(name)
        expect(labels.nth(i).locator(".level-elo")).to_contain_text("about")  # its Elo on one scale
        labels.nth(i).click()  # the checked level says, once under the grid, what to expect
        line = page.locator("#level-about").inner_text()  # what to expect of it, in one line
        assert line and line == labels.nth(i).locator("small").text_content(), line
    expect(page.locator("#levels-research")).to_be_hidden()  # research players: under the fold
    page.locator("#levels-advanced summary").click()
    expect(page.locator("#levels-research input[value=mcts]")).to_be_visible()


# -- 6. the smaller things -----------------------------------------------------------------------------


def test_choosing_a_piece_outlines_it_only_in_your_tray(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    hotseat(server, page, [])
    page.click('#tray-mine .slot[data-piece="5R"]')
    expect(page.locator("#tray-mine .slot.selected")).to_have_count(1)
    expect(page.locator("#tray-other .slot.selected")).to_have_count(0)


def test_a_double_click_plays_once_without_an_error(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    hotseat(server, page, [])
    page.click('#tray-mine .slot[data-piece="5R"]')
    page.dblclick('#board .cell[data-cell="d2"]')
    expect(page.locator("#moves .mv")).to_have_count(1)
    page.wait_for_timeout(400)  # an error would arrive within a round trip
    expect(page.locator("#message")).to_have_text("")
    expect(page.locator("#zoom")).to_be_hidden()  # nor does the second click open the tower's zoom
    expect(page.locator("#moves .mv")).to_have_count(1)


def test_a_stale_error_goes_when_the_game_moves_on(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    hotseat(server, page, ["5R@d2"])
    page.locator("#typed-move").fill("6R@d3")  # no such piece: refused
    page.keyboard.press("Enter")
    expect(page.locator("#message")).to_contain_text("6R@d3")
    page.locator("#typed-move").fill("1G@d3")
    page.keyboard.press("Enter")
    expect(page.locator("#moves .mv")).to_have_count(2)
    expect(page.locator("#message")).to_have_text("")


def test_server_messages_name_the_sides_with_capitals(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    hotseat(server, page, [])
    page.locator("#typed-move").fill("pass")
    page.keyboard.press("Enter")
    expect(page.locator("#message")).to_contain_text("South cannot pass")


def test_an_unknown_game_says_so_and_shows_no_game_controls(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    errors = watch_errors(page)
    page.goto(server + "/g/nosuchgame")
    expect(page.locator("#missing")).to_be_visible()
    expect(page.locator("#missing")).to_contain_text("No game here")
    for sel in ("#btn-resign", "#btn-undo", "#typed", "#tray-mine", "#board"):
        expect(page.locator(sel)).to_be_hidden()
    assert not [e for e in errors if "404" not in e], errors


def test_absurd_clocks_are_refused(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    for minutes in (1e-9, 0.5, 181):
        r = page.request.post(server + "/api/games", data={"mode": "hotseat", "clock": minutes})
        assert r.status == 400 and "between 1 and 180" in r.json()["message"], minutes
    assert page.request.post(server + "/api/games", data={"mode": "hotseat", "clock": 5}).status == 201


def test_the_record_downloads_as_jgn(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    g = hotseat(server, page, ["5R@d2"])
    with page.expect_download() as info:
        page.click("#btn-record")
    assert info.value.suggested_filename == f"jericho-{g['id']}.jgn"


def test_replay_buttons_show_drawn_icons(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    hotseat(server, page, ["5R@d2", "1G@d3"])
    page.click("#btn-replay")
    # the replay opens once its frames are fetched: measure the bar after it is shown, not before
    expect(page.locator("#replay")).to_be_visible()
    for sel in ("#rp-first", "#rp-prev", "#rp-next", "#rp-last"):
        button = page.locator(sel)
        assert button.inner_text().strip() == "", "no glyph that a font may lack (⏮ drew an empty box)"
        icon = box(page, f"{sel} svg")
        assert icon["width"] >= 10 and icon["height"] >= 10
        assert button.get_attribute("aria-label")
    page.click("#rp-first")
    expect(page.locator("#rp-pos")).to_have_text("Start")


def test_keyboard_reaches_the_pieces_quickly(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    page.goto(server + "/")
    expect(page.locator("#levels-main label")).to_have_count(len(ladder()))
    # the decorative board on the home page takes no Tab stop
    assert page.evaluate("document.querySelectorAll('#home-board [tabindex=\"0\"]').length") == 0
    for _ in range(12):
        page.keyboard.press("Tab")
        assert not page.evaluate("!!document.activeElement.closest('#home-board')")
    hotseat(server, page, [])
    expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()  # the game state has arrived
    page.keyboard.press("Tab")
    expect(page.locator("#skip")).to_be_focused()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.classList.contains('playable')")
    # without the skip link: the board is one Tab stop for its cells and one for its lines
    page.evaluate("document.activeElement.blur()")
    page.reload()
    expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()
    tabs = 0
    while tabs < 20 and not page.evaluate("document.activeElement.classList.contains('playable')"):
        page.keyboard.press("Tab")
        tabs += 1
    assert tabs <= 10, f"{tabs} Tabs to reach the first piece"


def test_the_ticking_clock_is_not_in_a_live_region(server: str, context: BrowserContext) -> None:
    page = context.new_page()
    g = page.request.post(server + "/api/games", data={"mode": "hotseat", "clock": 5}).json()
    page.goto(g["links"]["play"])
    expect(page.locator("#clock-south")).to_be_visible()
    for sel in ("#clock-south", "#clock-north"):
        assert page.evaluate(f"!document.querySelector('{sel}').closest('[aria-live], [role=status], [role=alert]')")
    # the moves are announced in their own live region (tests/web/site/test_a11y_ui.py); the turn line is
    # redrawn at every render (a hover, a tick), so it is not live: it would be read again and again
    assert page.evaluate("document.querySelector('#move-live').getAttribute('aria-live') === 'polite'")
    assert page.evaluate("!document.querySelector('#turn').closest('[aria-live]')")


def test_an_online_games_first_move_is_counted_down_while_its_clock_waits(server: str, context: BrowserContext) -> None:
    """Issue 52: after the join South's clock still shows the full minute, and the banner counts the
    first move's 30 s down (not read out every second); the opponent and spectators read whose it is."""
    page = context.new_page()
    g = page.request.post(server + "/api/games", data={"mode": "online", "side": "south", "clock": 1}).json()
    assert page.request.post(server + f"/api/games/{g['id']}/join", data={"invite": g["invite"]}).ok
    page.goto(g["links"]["play"])
    banner = page.locator("#banner")
    expect(banner).to_contain_text(re.compile(r"Move within 0:[0-3]\d or the game is aborted\."))
    expect(page.locator("#clock-south")).to_have_text("1:00")
    expect(page.locator("#clock-north")).to_have_text("1:00")
    shown = banner.inner_text()
    expect(banner).not_to_have_text(shown)  # it ticks
    expect(page.locator("#clock-south")).to_have_text("1:00")  # while the clock waits
    assert page.evaluate("document.querySelector('#banner').getAttribute('aria-live') === 'off'")
    assert context.browser is not None
    elsewhere = context.browser.new_context()  # this one remembers South's seat
    watcher = elsewhere.new_page()
    watcher.goto(g["links"]["watch"])
    expect(watcher.locator("#banner")).to_contain_text("South must move within 0:")
    elsewhere.close()
