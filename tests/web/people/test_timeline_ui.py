"""The timeline of followed players on /challenges, in Chromium (issue 52), in French and English:
a followed player's finished game (linked) and best streak; an unfollowed player's game not shown;
the list emptied on the open page when the followed player blocks the viewer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, expect
from sqlalchemy import insert

from jericho_game.web.common.budget import BUDGETS
from jericho_game.web.learn.puzzles import puzzle_streaks
from jericho_game.web.server import create_app
from jericho_game.web.storage.database import games_table
from tests.web import test_browser, tour
from tests.web.test_browser import serve_in_thread, watch_errors

browser = test_browser.browser


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    db = tmp_path_factory.mktemp("timeline") / "games.sqlite3"
    table = {**BUDGETS, "signup": replace(BUDGETS["signup"], per_group=None)}  # every player from 127.0.0.1
    app = create_app(
        str(db), password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1), budgets=table
    )
    for url in serve_in_thread(app):
        yield url, app


def test_the_timeline_on_the_challenges_page(served: tuple[str, Any], browser: Browser) -> None:
    server, app = served
    ada_ctx, bob_ctx = tour.new_context(browser, "fr"), tour.new_context(browser, "light")
    ada, bob = ada_ctx.new_page(), bob_ctx.new_page()
    errors = watch_errors(ada) + watch_errors(bob)
    tour._login(ada, server, "ada_tl")
    tour._login(bob, server, "bob_tl")
    tour._login(bob_ctx.new_page(), server, "eve_tl")  # a third account (its session is not kept here)
    tour._login(bob, server, "bob_tl")
    ids = {n: int(app.state.accounts.find(n).id) for n in ("ada_tl", "bob_tl", "eve_tl")}
    now = time.time()
    with app.state.service.storage.engine.begin() as conn:
        for gid, south, north, result, at in (
            ("tl-bob-won", "bob_tl", "eve_tl", "south", now - 60),
            ("tl-eve-ada", "eve_tl", "ada_tl", "draw", now - 30),
        ):
            conn.execute(
                insert(games_table).values(
                    id=gid, created_at=at - 60, updated_at=at, mode="online", result=result, reason="seven",
                    south_account=ids[south], north_account=ids[north], joined=1,
                )
            )  # fmt: skip
        conn.execute(insert(puzzle_streaks).values(player=f"account:{ids['bob_tl']}", best=12, at=now - 10))
    ada.goto(server + "/challenges")
    timeline = ada.locator("#ch-timeline")
    expect(timeline).to_contain_text("Rien pour l’instant")  # follows nobody yet
    ada.goto(server + "/players/bob_tl")
    ada.click("#btn-follow")
    expect(ada.locator("#btn-follow")).to_have_attribute("aria-pressed", "true")
    ada.goto(server + "/challenges")
    expect(ada.locator("#ch-timeline-title")).to_have_text("Le fil des joueurs que vous suivez")
    items = timeline.locator("li")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("bob_tl a battu son record de série de problèmes : 12")
    expect(items.nth(1)).to_contain_text("bob_tl a gagné contre eve_tl")
    expect(items.nth(1).locator("a", has_text="Voir la partie")).to_have_attribute("href", "/g/tl-bob-won")
    expect(timeline).not_to_contain_text("nulle")  # eve's game with ada: eve is not followed
    # in English, on the same account
    ada_en = tour.new_context(browser, "light").new_page()
    errors += watch_errors(ada_en)
    tour._login(ada_en, server, "ada_tl")
    ada_en.goto(server + "/challenges")
    expect(ada_en.locator("#ch-timeline li").nth(1)).to_contain_text("bob_tl won against eve_tl")
    # Bob blocks Ada: her open page hears it (the people feed) and drops his events
    bob.on("dialog", lambda d: d.accept())
    bob.goto(server + "/players/ada_tl")
    bob.click("#btn-block")
    expect(bob.locator("#btn-block")).to_have_attribute("aria-pressed", "true")
    expect(timeline).to_contain_text("Rien pour l’instant")
    for ctx in (ada_ctx, bob_ctx, ada_en.context):
        ctx.close()
    assert not [e for e in errors if "status of 40" not in e], errors
