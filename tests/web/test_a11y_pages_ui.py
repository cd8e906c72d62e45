"""axe-core on every page of the site (issue 24 point 4): home, game, lobby, review, replay,
analysis, puzzles, tutorial, rules, log-in, sign-up, leaderboard, profile, my games, the 404 and
the offline page, each in light, dark and high contrast, with no serious or critical violation.
axe-core comes from the axe-playwright-python package (the dev extra): nothing is downloaded."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser

from jericho_game.web.server import create_app
from tests.web import test_browser, tour
from tests.web.test_browser import watch_errors

browser = test_browser.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("a11y") / "games.sqlite3"
    app = create_app(str(db), password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    yield from test_browser.serve_in_thread(app)


@pytest.mark.parametrize("look", ["light", "dark", "contrast"])
def test_no_serious_accessibility_violation_on_any_page(server: str, browser: Browser, look: str) -> None:
    ctx = tour.new_context(browser, look)
    page = ctx.new_page()
    errors = watch_errors(page)
    found = {}
    for name, stop in tour.STOPS.items():
        stop(page, server)
        page.wait_for_function("() => document.fonts.status === 'loaded'")
        violations = tour.axe_violations(page)
        if violations:
            found[name] = violations
    ctx.close()
    assert found == {}, found
    assert not [e for e in errors if "status of 404" not in e], errors


def test_the_check_finds_a_violation(server: str, browser: Browser) -> None:
    """The check can fail: a button without a name and grey-on-grey text are reported."""
    ctx = tour.new_context(browser, "light")
    page = ctx.new_page()
    tour.offline(page, server)
    page.evaluate(
        """() => {
        const b = document.createElement("button");
        document.querySelector("main").append(b);
        const p = document.createElement("p");
        p.textContent = "faint";
        p.style.color = "#eee";
        p.style.background = "#fff";
        document.querySelector("main").append(p);
    }"""
    )
    ids = {v["id"] for v in tour.axe_violations(page)}
    assert {"button-name", "color-contrast"} <= ids, ids
    ctx.close()
