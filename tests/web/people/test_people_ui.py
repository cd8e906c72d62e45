"""People and tournaments in a real browser (issue 34, points 1-2): follow and challenge from a
profile, the challenge's notice on another page, accepting it into the game, the challenger taken
there; a block refusing the next challenge; a tournament created, joined by two players, who
are then shown their game.  Issue 52: answers (a decline's reason in each player's language),
a challenger leaving and a block reach the open pages by the people feed, no reload."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, Page, expect

from jericho_game.web.common.budget import BUDGETS
from jericho_game.web.people.people import PeoplePolicy
from jericho_game.web.server import create_app
from tests.web import test_browser, tour
from tests.web.test_browser import serve_in_thread, watch_errors

browser = test_browser.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("people") / "games.sqlite3"
    table = {**BUDGETS, "signup": replace(BUDGETS["signup"], per_group=None)}  # every player from 127.0.0.1
    app = create_app(
        str(db),
        password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1),
        budgets=table,
        people_policy=PeoplePolicy(left_after=4.0),  # a challenger who leaves: gone in seconds, not 20
    )
    yield from serve_in_thread(app)


def test_follow_challenge_accept_and_block_in_the_pages(server: str, browser: Browser) -> None:
    ada_ctx, bob_ctx = tour.new_context(browser, "light"), tour.new_context(browser, "fr")
    ada, bob = ada_ctx.new_page(), bob_ctx.new_page()
    errors = watch_errors(ada) + watch_errors(bob)
    tour._login(ada, server, "ada_ui")
    tour._login(bob, server, "bob_ui")
    # Ada follows Bob and challenges him from his profile
    ada.goto(server + "/players/bob_ui")
    ada.click("#btn-follow")
    expect(ada.locator("#btn-follow")).to_have_attribute("aria-pressed", "true")
    expect(ada.locator("#people-followers")).to_contain_text("ada_ui")
    ada.click("#challenge-details summary")
    form = ada.locator("#challenge-details form")
    form.locator("select").first.select_option("5+3")
    form.locator("select").nth(1).select_option("north")
    form.locator("input[type=checkbox]").check()
    form.locator("button[type=submit]").click()
    expect(form.locator("p[role=status]")).to_contain_text("bob_ui")
    # Bob, on another page (in French), hears of it and accepts it on /challenges
    bob.goto(server + "/leaderboard")
    notice = bob.locator("#challenge-notice")
    expect(notice).to_contain_text("ada_ui")
    notice.locator("a").click()
    expect(bob).to_have_url(server + "/challenges")
    row = bob.locator("#ch-incoming li").first
    expect(row).to_contain_text("5 min + 3 s")
    row.locator("button").first.click()
    expect(bob).to_have_url(re.compile(r"/g/[A-Za-z0-9]+$"))
    game = bob.url.split("/g/")[1]
    # issue 52: Ada, still on his profile, is taken to the game by the people feed
    expect(ada).to_have_url(server + f"/g/{game}")
    # Bob blocks Ada: her next challenge is refused
    bob.on("dialog", lambda d: d.accept())
    bob.goto(server + "/players/ada_ui")
    bob.click("#btn-block")
    expect(bob.locator("#btn-block")).to_have_attribute("aria-pressed", "true")
    ada.goto(server + "/challenges")
    ada.fill("#ch-form input", "bob_ui")
    ada.locator("#ch-form button[type=submit]").click()
    expect(ada.locator("#ch-form p[role=alert]").first).to_contain_text("does not take challenges")
    # issue 51: her view of his page offers nothing that would fail (no follow, no challenge)
    ada.goto(server + "/players/bob_ui")
    expect(ada.locator("#btn-block")).to_be_visible()
    expect(ada.locator("#btn-follow")).to_have_count(0)
    expect(ada.locator("#challenge-details")).to_have_count(0)
    ada_ctx.close()
    bob_ctx.close()
    assert not [e for e in errors if "status of 40" not in e], errors


def test_who_may_challenge_me_is_chosen_on_the_settings_page(server: str, browser: Browser) -> None:
    """Issue 51, finding 7: the "who may challenge me" setting, on /settings (in French here); a
    player who takes no challenges from a visitor is offered none on their page."""
    cyd_ctx, dan_ctx = tour.new_context(browser, "fr"), tour.new_context(browser, "light")
    cyd, dan = cyd_ctx.new_page(), dan_ctx.new_page()
    errors = watch_errors(cyd) + watch_errors(dan)
    tour._login(cyd, server, "cyd_ui")
    tour._login(dan, server, "dan_ui")
    cyd.goto(server + "/settings")
    form = cyd.locator("#challengers-form")
    expect(form).to_contain_text("Qui peut me défier")
    expect(form.locator("input[value=all]")).to_be_checked()
    form.locator("input[value=nobody]").check()
    expect(cyd.locator("#challengers-saved")).to_have_text("Enregistré.")
    cyd.reload()
    expect(cyd.locator("#challengers-form input[value=nobody]")).to_be_checked()
    dan.goto(server + "/players/cyd_ui")
    expect(dan.locator("#btn-follow")).to_be_visible()
    expect(dan.locator("#challenge-details")).to_have_count(0)
    cyd.locator("#challengers-form input[value=all]").check()
    expect(cyd.locator("#challengers-saved")).to_have_text("Enregistré.")
    dan.reload()
    expect(dan.locator("#challenge-details")).to_be_visible()
    cyd_ctx.close()
    dan_ctx.close()
    assert errors == [], errors


def test_a_tournament_is_created_joined_and_pairs_its_players(server: str, browser: Browser) -> None:
    ada_ctx, bob_ctx = tour.new_context(browser, "dark"), tour.new_context(browser, "light", tour.SIZES["phone"])
    ada, bob = ada_ctx.new_page(), bob_ctx.new_page()
    errors = watch_errors(ada) + watch_errors(bob)
    tour._login(ada, server, "ada_t")
    tour._login(bob, server, "bob_t")
    ada.goto(server + "/tournaments")
    ada.fill("#t-name", "Friday arena")
    ada.fill("#t-start", "0")
    ada.locator("#t-form button[type=submit]").click()
    expect(ada.locator("#t-title")).to_have_text("Friday arena")
    ada.click("#t-join")
    expect(ada.locator("#t-standings tbody tr")).to_have_count(1)
    page = ada.url
    bob.goto(page)
    bob.click("#t-join")
    # the next look at the tournament pairs them; each page goes to the game by itself (issue 52)
    expect(bob).to_have_url(re.compile(r"/g/[A-Za-z0-9]+$"), timeout=15000)
    expect(ada).to_have_url(bob.url, timeout=15000)
    for p in (ada, bob):  # back on the tournament page (not taken to the game again), it shows their game
        p.goto(page)
        expect(p.locator("#t-mygame a")).to_be_visible()
    assert ada.locator("#t-mygame a").get_attribute("href") == bob.locator("#t-mygame a").get_attribute("href")
    expect(ada.locator("#t-games li a").first).to_have_text("Watch")
    width = bob.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width
    ada_ctx.close()
    bob_ctx.close()
    assert not [e for e in errors if "status of 40" not in e], errors


def test_answers_departures_and_blocks_reach_the_open_pages(server: str, browser: Browser) -> None:
    """Issue 52: Fay (French) sees Eve's challenge arrive on her open /challenges page and declines
    it with a reason, which Eve's open page says in English; Eve's refusal of Fay's challenge reaches
    Fay's page in French; a challenge whose challenger closed her page is withdrawn from Fay's page
    in seconds; Fay's block takes Follow and Challenge off Eve's open view of her page."""
    eve_ctx, fay_ctx = tour.new_context(browser, "light"), tour.new_context(browser, "fr")
    eve, fay = eve_ctx.new_page(), fay_ctx.new_page()
    errors = watch_errors(eve) + watch_errors(fay)
    tour._login(eve, server, "eve_ui")
    tour._login(fay, server, "fay_ui")
    fay.goto(server + "/challenges")
    expect(fay.locator("#ch-incoming")).to_contain_text("Aucun défi")

    def challenge(page: Page, name: str) -> None:
        page.goto(server + f"/players/{name}")
        page.click("#challenge-details summary")
        page.locator("#challenge-details form button[type=submit]").click()
        expect(page.locator("#challenge-details form p[role=status]")).to_contain_text(name)

    challenge(eve, "fay_ui")
    row = fay.locator("#ch-incoming li").first
    expect(row).to_contain_text("eve_ui")  # pushed: her page was not reloaded
    row.locator("select").select_option("rated")
    expect(row.locator("select")).to_contain_text("Envoyez-moi plutôt un défi classé.")
    row.locator("button", has_text="Refuser").click()
    expect(eve.locator("#challenge-notice")).to_contain_text(
        "fay_ui declined your challenge. “Please send me a rated challenge instead.”"
    )
    expect(fay.locator("#ch-recent")).to_contain_text("Envoyez-moi plutôt un défi classé.")
    # the other way round: the reason in the challenger's language
    eve.goto(server + "/challenges")
    challenge(fay, "eve_ui")
    row = eve.locator("#ch-incoming li").first
    expect(row).to_contain_text("fay_ui")
    row.locator("select").select_option("later")
    row.locator("button", has_text="Decline").click()
    expect(fay.locator("#challenge-notice")).to_contain_text("eve_ui a refusé votre défi.")
    expect(fay.locator("#challenge-notice")).to_contain_text("Ce n’est pas le bon moment pour moi")
    # Eve challenges, then closes her only page: Fay's page is told it is withdrawn (left_after: 4 s)
    fay.goto(server + "/challenges")
    challenge(eve, "fay_ui")
    row = fay.locator("#ch-incoming li").first
    expect(row).to_contain_text("eve_ui")
    cid = (row.get_attribute("id") or "").removeprefix("challenge-")
    eve.close()
    expect(fay.locator(f"#ch-recent #challenge-{cid}")).to_contain_text("son auteur n’était plus là", timeout=20000)
    expect(fay.locator("#ch-incoming li")).to_contain_text("Aucun défi")
    # Eve looks at Fay's page; Fay blocks her: Follow and Challenge leave Eve's open view
    eve = eve_ctx.new_page()
    errors += watch_errors(eve)
    eve.goto(server + "/players/fay_ui")
    expect(eve.locator("#btn-follow")).to_be_visible()
    expect(eve.locator("#challenge-details")).to_be_visible()
    fay.on("dialog", lambda d: d.accept())
    fay.goto(server + "/players/eve_ui")
    fay.click("#btn-block")
    expect(fay.locator("#btn-block")).to_have_attribute("aria-pressed", "true")
    expect(eve.locator("#btn-follow")).to_have_count(0)
    expect(eve.locator("#challenge-details")).to_have_count(0)
    expect(eve.locator("#btn-block")).to_be_visible()
    eve_ctx.close()
    fay_ctx.close()
    assert not [e for e in errors if "status of 40" not in e], errors
