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
#: The (look, size) pairs the accessibility tour (test_a11y_pages_ui.py) walks every page in; the
#: screenshot test draws the others.
AUDITED = [("light", "1280x800"), ("dark", "1280x800"), ("contrast", "1280x800"), ("fr", "phone")]


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
    # the first stop of a tour, a new browser context: under a loaded CI machine (the other test
    # worker's browser) the page's second request once took over 5 s
    expect(page.locator("#levels-main label").first).to_be_visible(timeout=20_000)


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


_REVIEWED: dict[str, str] = {}  # server -> the address of a finished game whose review a tour asked for


def review(page: Page, server: str) -> None:
    """A finished game's review: the game is made and its review asked for by the first tour of a
    server; the next tours (other looks and sizes) open the same game, which shows its stored review,
    instead of waiting for the AI to review a new game each time (the slowest stop by far)."""
    seen = _REVIEWED.get(server)
    if seen is None:
        _over(page, server)
        _REVIEWED[server] = page.url
        page.click("#btn-review")
    else:  # a finished game whose review is done shows it (its button hidden)
        page.goto(seen)
        expect(page.locator("#banner.over")).to_be_visible()
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
    page.goto(server + "/healthz")  # leave the logged-in page first: its feeds would ask with no session
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


_SESSIONS: dict[tuple[str, str], list[Any]] = {}  # (server, name) -> the session's cookies


def _login(page: Page, server: str, name: str) -> None:
    """Log this page's context in as ``name`` (signed up once per server; later its session cookie
    is put back, so that the log-in throttle never sees the tour) without opening a page.  The page
    is left first: an open page (its feeds, the timeline, the tournament's refresh) would ask again
    with no session between the cookies cleared and put back, and log the 401 as a console error."""
    if page.url.startswith(server) and not page.url.endswith("/healthz"):
        page.goto(server + "/healthz")  # a page of the site's own that asks nothing
    page.context.clear_cookies()
    kept = _SESSIONS.get((server, name))
    if kept is not None:
        page.context.add_cookies(kept)
        return
    body = {"username": name, "password": f"{name}'s long password"}
    r = _post_csrf(page, server, "/api/account/signup", body)
    assert r.ok, r.text()
    _SESSIONS[(server, name)] = [dict(c) for c in page.context.cookies() if c["name"] == "jericho_session"]
    # only the session, as when it is put back: the sign-up's language cookie (the new account's
    # language, English for a request without Accept-Language) would turn a French tour English
    page.context.clear_cookies()
    page.context.add_cookies(_SESSIONS[(server, name)])


def _again(call: Callable[[], APIResponse]) -> APIResponse:
    """A request, once more if it met the reset of an idle connection (see :func:`_post`)."""
    try:
        return call()
    except Error as exc:
        if "ECONNRESET" not in str(exc) and "socket hang up" not in str(exc):
            raise
        return call()


def _get_json(page: Page, url: str) -> Any:
    return _again(lambda: page.request.get(url)).json()


def sign(page: Page, server: str, how: str, name: str, password: str = "long enough pw") -> None:
    """Sign ``page``'s context up (``how`` "signup") or in ("login") as ``name`` through the API:
    the session cookie is then the context's, as after the form."""
    r = _post_csrf(page, server, f"/api/account/{how}", {"username": name, "password": password})
    assert r.status == (201 if how == "signup" else 200), r.text()


def _post_csrf(page: Page, server: str, path: str, body: dict[str, Any]) -> APIResponse:
    """POST as the context's logged-in account (with its CSRF token)."""
    csrf = _get_json(page, server + "/api/account")["csrf"]
    return _again(lambda: page.request.post(server + path, data=body, headers={"X-CSRF-Token": csrf}))


def challenges(page: Page, server: str) -> None:
    """Ada's challenges: one received from Brice (who follows her), one she sent to Carla."""
    for name in ("carla_tour", "ada_tour"):
        _login(page, server, name)
    _login(page, server, "brice_tour")
    _post_csrf(page, server, "/api/people/follow", {"username": "ada_tour", "follow": True})
    # a correspondence challenge: it waits for Ada's answer in every look (a real-time one expires 20 s
    # after its challenger's last page closed, issue 52, and Brice holds no page here)
    _post_csrf(page, server, "/api/challenges", {"username": "ada_tour", "per_move_days": 1, "rated": True})
    _login(page, server, "ada_tour")
    _post_csrf(page, server, "/api/people/follow", {"username": "brice_tour", "follow": True})
    _post_csrf(page, server, "/api/challenges", {"username": "carla_tour", "per_move_days": 3})
    page.goto(server + "/challenges")
    expect(page.locator("#ch-incoming li").first).to_contain_text("brice_tour")
    expect(page.locator("#ch-outgoing li").first).to_contain_text("carla_tour")


def _tournament(page: Page, server: str) -> str:
    """An arena with three players that starts in ten hours (made once per server); Dora logged in,
    who is not in it.  Not a running one: its players would be paired at once, and the tournament
    push (issue 52) takes a paired player to their game from any page, so Ada's later pages in the
    tour would be her game instead."""
    _login(page, server, "ada_tour")
    listed = _get_json(page, server + "/api/tournaments")
    for t in listed["scheduled"]:
        if t["name"] == "Jericho 2026":
            _login(page, server, "dora_tour")
            return str(t["id"])
    body = {"name": "Jericho 2026", "clock": 5, "minutes": 60, "starts_in": 600}
    t = _post_csrf(page, server, "/api/tournaments", body).json()
    for name in ("brice_tour", "carla_tour", "ada_tour"):
        _login(page, server, name)
        _post_csrf(page, server, f"/api/tournaments/{t['id']}/join", {})
    _login(page, server, "dora_tour")
    return str(t["id"])


def tournaments(page: Page, server: str) -> None:
    _tournament(page, server)
    page.goto(server + "/tournaments")
    expect(page.locator("#t-scheduled li a").first).to_contain_text("Jericho 2026")
    expect(page.locator("#t-form")).to_be_visible()


def tournament(page: Page, server: str) -> None:
    tid = _tournament(page, server)
    page.goto(server + f"/tournaments/{tid}")
    expect(page.locator("#t-standings tbody tr")).to_have_count(3)
    expect(page.locator("#t-countdown")).to_be_visible()


def unsubscribe(page: Page, server: str) -> None:
    page.goto(server + "/unsubscribe?u=not-a-secret&kind=invite")  # what a mail's link leads to
    expect(page.locator("#unsubscribe-submit")).to_be_visible()


def _player_games(page: Page, server: str) -> None:
    """Dora (logged in) with two hot-seat games, made once per server: her search and statistics pages."""
    _login(page, server, "dora_tour")
    if not _get_json(page, server + "/api/players/dora_tour/games")["games"]:
        for _ in range(2):
            _post_csrf(page, server, "/api/games", {"mode": "hotseat"})


def player_games(page: Page, server: str) -> None:
    _player_games(page, server)
    page.goto(server + "/players/dora_tour/games")
    expect(page.locator("#pg-games tbody tr")).to_have_count(2)


def player_stats(page: Page, server: str) -> None:
    _player_games(page, server)
    page.goto(server + "/players/dora_tour/stats")
    expect(page.locator("#ps-side")).to_be_visible()


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
    "challenges": challenges,
    "tournaments": tournaments,
    "tournament": tournament,
    "unsubscribe": unsubscribe,
    "settings": settings,
    "player-games": player_games,  # added last: the looks of the screenshots' earlier stops stay as they were
    "player-stats": player_stats,
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
