"""Accounts and ratings in a real browser (Playwright driving Debian's chromium): two people
sign up in two browser contexts, play a rated online game to its end (a resignation), and see
both ratings change on the leaderboard and their profiles.  Screenshots go to artifacts/."""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator

import httpx
import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, Page, Route, expect

from jericho_game.web.accounts.glicko2 import Rating, update
from jericho_game.web.server import create_app
from tests.web import test_browser
from tests.web.test_browser import ARTIFACTS, watch_errors
from tests.web.test_ui import _place

browser = test_browser.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("accounts") / "games.sqlite3"
    app = create_app(str(db), password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    yield from test_browser.serve_in_thread(app)


def wait_ply(server: str, game_id: str, ply: int) -> None:
    for _ in range(200):
        if httpx.get(f"{server}/api/games/{game_id}").json()["ply"] >= ply:
            return
        time.sleep(0.05)
    raise AssertionError(f"the game did not reach ply {ply}")


def shot(page: Page, name: str) -> None:
    page.wait_for_function("() => document.fonts.status === 'loaded'")
    page.screenshot(path=str(ARTIFACTS / name), animations="disabled", full_page=True)


def sign_up(server: str, page: Page, name: str, password: str, picture: str | None = None) -> None:
    page.goto(server + "/")
    page.click("#nav-signup")  # the home page offers it
    expect(page.locator("#account-title")).to_have_text("Sign up")
    page.fill("#username", name)
    page.fill("#password", password)
    if picture:
        shot(page, picture)
    page.click("#account-submit")
    expect(page.locator("#nav-me")).to_have_text(f"{name} (1500)")  # back on the page it came from


def test_two_accounts_play_a_rated_game_and_both_ratings_change(server: str, browser: Browser) -> None:
    ctx_a = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx_b = browser.new_context(viewport={"width": 1280, "height": 900})
    a, b = ctx_a.new_page(), ctx_b.new_page()
    errors = watch_errors(a) + watch_errors(b)
    try:
        sign_up(server, a, "alice", "alice's long password", "accounts-signup.png")
        sign_up(server, b, "bob", "bob's long password")
        # the page's cookie is HttpOnly: the page's script cannot read it
        assert "jericho_session" not in a.evaluate("document.cookie")
        cookie = next(c for c in ctx_a.cookies() if c["name"] == "jericho_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"

        # Alice creates a rated online game; the option shows only for online games of a logged-in player
        expect(a.locator("#rated-field")).to_be_hidden()
        a.check('input[name="mode"][value="online"]')
        expect(a.locator("#rated-field")).to_be_visible()
        a.check("#rated")
        a.select_option('select[name="side"]', "south")
        shot(a, "accounts-new-rated-game.png")
        a.click("#start")
        expect(a.locator("#invite-link")).to_be_visible()
        invite = a.locator("#invite-link").input_value()
        b.goto(invite)
        expect(b.locator("#north-name")).to_have_text("You (bob)")
        expect(a.locator("#north-name")).to_have_text("bob")
        expect(a.locator("#south-name")).to_have_text("You (alice)")

        # five placements each (a rated game with less play is not rated: issue 33), then Alice resigns
        game_id = invite.split("/g/")[1].split("#")[0]
        opening = ["1R@a1", "1Y@a4", "2R@c1", "2Y@c4", "3R@e1", "3Y@e4", "4R@g1", "4Y@g4", "5R@a2", "5Y@a3"]
        for ply, move in enumerate(opening):
            _place(a if ply % 2 == 0 else b, move)
            wait_ply(server, game_id, ply + 1)
        a.click("#btn-resign")
        a.click("#btn-resign")
        expect(a.locator("#banner")).to_contain_text("lost")
        expect(b.locator("#banner")).to_contain_text("won")
        # the end screen shows both players' rating change (issue 21), to the players and to anyone watching
        lost, won = update(Rating(), [(Rating(), 0.0)]), update(Rating(), [(Rating(), 1.0)])
        alice_row = f"alice 1500 → {round(lost.rating)} (−{1500 - round(lost.rating)})"
        bob_row = f"bob 1500 → {round(won.rating)} (+{round(won.rating) - 1500})"
        for page in (a, b):
            change = page.locator("#rating-change")
            expect(change).to_be_visible(timeout=15000)
            expect(change.locator(".rating-row")).to_have_text([alice_row, bob_row])
            expect(change).to_have_attribute("role", "status")
        shot(b, "accounts-rated-game-over.png")
        ctx_phone = browser.new_context(viewport={"width": 390, "height": 844})
        try:
            watcher = ctx_phone.new_page()
            errors += watch_errors(watcher)
            watcher.goto(a.url)
            expect(watcher.locator("#rating-change .rating-row")).to_have_text([alice_row, bob_row], timeout=15000)
            box = watcher.locator("#rating-change").bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390.5
            shot(watcher, "accounts-rated-game-over-phone.png")
        finally:
            ctx_phone.close()

        # both ratings changed, and after one game both are provisional: not ranked on the
        # leaderboard (issue 33), shown with a "?" on the profiles
        for _ in range(50):
            ratings = {n: b.request.get(f"{server}/api/players/{n}").json() for n in ("alice", "bob")}
            if all(r["rated_games"] == 1 for r in ratings.values()):
                break
            time.sleep(0.2)
        bob_rating, alice_rating = ratings["bob"]["rating"], ratings["alice"]["rating"]
        assert alice_rating < 1500 < bob_rating and ratings["bob"]["provisional"]
        b.goto(server + "/leaderboard")
        expect(b.locator("#leaderboard h1")).to_have_text("Leaderboard")
        expect(b.locator("#leaderboard .empty")).to_be_visible()
        expect(b.locator("#leaderboard-table")).to_have_count(0)
        b.reload()
        expect(b.locator("#nav-me")).to_have_text(f"bob ({bob_rating})")
        shot(b, "accounts-leaderboard.png")

        a.goto(server + "/players/alice")
        expect(a.locator("#profile-rating")).to_have_text(f"{alice_rating}?")
        expect(a.locator("#rating-chart circle")).to_have_count(2)  # before and after the game
        games = a.locator("#recent-games tbody tr")
        expect(games).to_have_count(1)
        expect(games.first).to_contain_text("bob")
        expect(games.first).to_contain_text("lost (resign)")
        expect(games.first).to_contain_text("rated")
        shot(a, "accounts-profile.png")

        # log out everywhere: the session is gone in this browser (and any other)
        a.click("#logout-all")
        expect(a.locator("#nav-login")).to_be_visible()
        assert not any(c["name"] == "jericho_session" for c in ctx_a.cookies())
        assert errors == [], errors
    finally:
        ctx_a.close()
        ctx_b.close()


def test_a_wrong_password_is_refused_with_a_message_and_never_shown(server: str, browser: Browser) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    try:
        page.goto(server + "/login")
        page.fill("#username", "nobody-here")
        page.fill("#password", "a wrong password")
        page.click("#account-submit")
        expect(page.locator("#account-error")).to_contain_text("wrong username or password", timeout=20000)
        expect(page.locator("#password")).to_have_value("")
        assert "a wrong password" not in page.content()
        shot(page, "accounts-login-refused.png")
    finally:
        ctx.close()


def fulfil(route: Route, body: str) -> None:
    route.fulfill(status=200, content_type="text/html", body=body)


def test_another_sites_form_cannot_act_for_a_logged_in_player(server: str, browser: Browser) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    try:
        sign_up(server, page, "victim", "the victim's password")
        # a page on another site posts a form to the server in the victim's browser (top-level
        # navigations: Chrome blocks another site's frames from reaching 127.0.0.1 at all)
        evil = server.replace("127.0.0.1", "localhost") + "/evil"  # localhost is another site than 127.0.0.1
        answers = []
        for path in ("/api/account/logout-all", "/api/games", "/api/account/logout"):
            form = f'<form method="post" action="{server}{path}"><input name="mode" value="online"></form>'
            page.route(evil, functools.partial(fulfil, body=form))
            page.goto(evil)
            with page.expect_response(server + path) as answer:
                page.evaluate("() => document.querySelector('form').submit()")
            answers.append(answer.value.status)
            page.unroute(evil)
        # SameSite=Lax: the browser sends no session cookie with another site's post, so nothing acts for
        # the victim: logout-all 401 (nobody logged in), /api/games 400 (a form is no JSON; nobody bound),
        # logout 200 with no session to end
        assert answers == [401, 400, 200], answers
        page.goto(server + "/")
        expect(page.locator("#nav-me")).to_have_text("victim (1500)")  # still logged in
        profile = page.request.get(server + "/api/players/victim").json()
        assert profile["games"] == [], "no game was created for the victim"
    finally:
        ctx.close()
