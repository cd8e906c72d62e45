"""Every page of the site, opened as a visitor sees it, in a real browser: the tour that the
accessibility check (``test_a11y_pages_ui.py``, axe-core) and the screenshots
(``tests/web/screenshots.py``) walk.  Each stop opens its page and waits until it is drawn."""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable
from typing import Any

from playwright.sync_api import APIResponse, Browser, BrowserContext, Error, Page, expect

# name: (locale, colour scheme, high contrast)
LOOKS: dict[str, tuple[str, str, bool]] = {
    "light": ("en-US", "light", False),
    "dark": ("en-US", "dark", False),
    "contrast": ("en-US", "light", True),
    "fr": ("fr-FR", "light", False),
}
SIZES = {"1280x800": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def new_context(browser: Browser, look: str, viewport: dict[str, int] | None = None) -> BrowserContext:
    locale, scheme, contrast = LOOKS[look]
    ctx = browser.new_context(viewport=viewport or SIZES["1280x800"], locale=locale, color_scheme=scheme)  # type: ignore[arg-type]
    if contrast:
        ctx.add_init_script("localStorage.setItem('jericho:contrast', 'high')")
    return ctx


def _post(page: Page, url: str, data: dict[str, Any]) -> APIResponse:
    """POST through the page's request context, once more if the server had just closed the idle
    connection it reused (the server keeps one 5 s: a stop's axe check or screenshot can take
    longer, and the request then meets a reset, never the server)."""
    try:
        return page.request.post(url, data=data)
    except Error as exc:
        if "ECONNRESET" not in str(exc) and "socket hang up" not in str(exc):
            raise
        return page.request.post(url, data=data)


def _place(page: Page, move: str) -> None:
    n = page.locator("#moves .mv").count()
    piece, cell = move.split("@")
    page.click(f'#tray-mine .slot[data-piece="{piece}"]')
    page.click(f'#board .cell[data-cell="{cell}"]')
    expect(page.locator("#moves .mv")).to_have_count(n + 1)


def _game(page: Page, server: str, moves: tuple[str, ...] = ("5R@d2", "1G@d3", "2Y@d3")) -> None:
    g = _post(page, server + "/api/games", {"mode": "hotseat"}).json()
    page.goto(g["links"]["play"])
    expect(page.locator("#tray-mine .slot.playable").first).to_be_visible()
    for m in moves:
        _place(page, m)


def _over(page: Page, server: str) -> None:
    _game(page, server)
    page.click("#btn-resign")
    page.click("#btn-resign")  # the second press confirms
    expect(page.locator("#banner.over")).to_be_visible()


def home(page: Page, server: str) -> None:
    page.goto(server + "/")
    expect(page.locator("#levels-main label").first).to_be_visible()


def game(page: Page, server: str) -> None:
    _game(page, server)


def lobby(page: Page, server: str) -> None:
    _post(page, server + "/api/games", {"mode": "online", "public": True, "name": "Ada"})
    page.goto(server + "/")
    expect(page.locator("#lobby-seeks tr").first).to_be_visible()
    page.locator("#lobby").scroll_into_view_if_needed()


def replay(page: Page, server: str) -> None:
    _game(page, server)
    page.click("#btn-replay")
    expect(page.locator("#replay")).to_be_visible()


def review(page: Page, server: str) -> None:
    _over(page, server)
    page.click("#btn-review")
    expect(page.locator("#review-summary")).to_be_visible(timeout=120_000)


def analysis(page: Page, server: str) -> None:
    page.goto(server + "/analysis")
    expect(page.locator("#an-tray .slot").first).to_be_visible()


def puzzles(page: Page, server: str) -> None:
    page.goto(server + "/puzzles")
    expect(page.locator("#tray-mine .slot").first).to_be_visible()


def learn(page: Page, server: str) -> None:
    page.goto(server + "/learn")
    expect(page.locator("#tray-mine .slot").first).to_be_visible()


def rules(page: Page, server: str) -> None:
    page.goto(server + "/rules")
    expect(page.locator("#rules figure.diagram svg .cell").first).to_be_attached()


def login(page: Page, server: str) -> None:
    page.goto(server + "/login")
    expect(page.locator("#account-submit")).to_be_visible()


def signup(page: Page, server: str) -> None:
    page.goto(server + "/signup")
    expect(page.locator("#account-submit")).to_be_visible()


def _account(page: Page, server: str) -> None:
    """An account (made once per server) with one game in its list."""
    if page.request.get(server + "/api/players/ada_lovelace").ok:
        return
    page.goto(server + "/signup")
    page.fill("#username", "ada_lovelace")
    page.fill("#password", "ada's long password")
    page.click("#account-submit")
    expect(page.locator("#nav-me")).to_contain_text("ada_lovelace")
    page.context.clear_cookies()


def leaderboard(page: Page, server: str) -> None:
    _account(page, server)
    page.goto(server + "/leaderboard")
    expect(page.locator("#leaderboard h1")).to_be_visible()


def profile(page: Page, server: str) -> None:
    _account(page, server)
    page.goto(server + "/players/ada_lovelace")
    expect(page.locator("#profile h1")).to_contain_text("ada_lovelace")


def games(page: Page, server: str) -> None:
    _game(page, server, ("5R@d2",))
    page.goto(server + "/games")
    expect(page.locator("#games tr").first).to_be_visible()


def not_found(page: Page, server: str) -> None:
    page.goto(server + "/no/such/page")
    expect(page.locator("#not-found")).to_be_visible()


def settings(page: Page, server: str) -> None:
    page.goto(server + "/settings")
    expect(page.locator("#looks-preview .piece")).to_have_count(5)
    expect(page.locator('#looks-form input[name="pieces"]:checked')).to_have_count(1)


def offline(page: Page, server: str) -> None:
    page.goto(server + "/offline")
    expect(page.locator("#offline h1")).to_be_visible()


STOPS: dict[str, Callable[[Page, str], Any]] = {
    "home": home,
    "game": game,
    "lobby": lobby,
    "review": review,
    "replay": replay,
    "analysis": analysis,
    "puzzles": puzzles,
    "learn": learn,
    "rules": rules,
    "login": login,
    "signup": signup,
    "leaderboard": leaderboard,
    "profile": profile,
    "games": games,
    "404": not_found,
    "offline": offline,
    "settings": settings,
}


def axe_script() -> str:
    """axe-core's script, from the axe-playwright-python package (dev extra): nothing to download."""
    return (importlib.resources.files("axe_playwright_python") / "axe.min.js").read_text(encoding="utf-8")


def axe_violations(page: Page, impacts: tuple[str, ...] = ("serious", "critical")) -> list[dict[str, Any]]:
    """The page's accessibility violations of these impacts, by axe-core (WCAG 2.x A and AA rules
    and axe's best practices), each with the elements it found."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(axe_script())
    found = page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)")
    return [
        {"id": v["id"], "impact": v["impact"], "help": v["help"], "nodes": [n["target"] for n in v["nodes"]][:5]}
        for v in found
        if v["impact"] in impacts
    ]
