"""axe-core on every page of the site (issue 24 point 4): home, game, lobby, review, replay,
analysis, puzzles, tutorial, rules, log-in, sign-up, leaderboard, profile, my games, the 404 and
the offline page, each in light, dark and high contrast (and in French on a phone), with no
serious or critical violation.  The French walk also reads each page at 1280x800 for English left
untranslated (tests/web/i18n/test_french_ui.py's check): one walk of the pages for both.
axe-core comes from the axe-playwright-python package (the dev extra): nothing is downloaded."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, expect

from jericho_game.web.server import create_app
from tests.web import screenshots, test_browser, tour
from tests.web.i18n.test_french_ui import english_on, french_checks
from tests.web.test_browser import watch_errors

browser = test_browser.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("a11y") / "games.sqlite3"
    app = create_app(str(db), password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    yield from test_browser.serve_in_thread(app)


@pytest.mark.parametrize(("look", "size"), tour.AUDITED)
def test_no_serious_accessibility_violation_on_any_page(server: str, browser: Browser, look: str, size: str) -> None:
    ctx = tour.new_context(browser, look, tour.SIZES[size])
    page = ctx.new_page()
    errors = watch_errors(page)
    found = {}
    locale, _, contrast = tour.LOOKS[look]
    french = french_checks() if locale.startswith("fr") else None
    leaks = {}
    for name, stop in tour.STOPS.items():
        stop(page, server)
        # each page is drawn in the look asked for: its language and its contrast
        expect(page.locator("html")).to_have_attribute("lang", locale[:2])
        expect(page.locator("html")).to_have_attribute("data-contrast", "high" if contrast else "normal")
        page.wait_for_function("() => document.fonts.status === 'loaded'")
        violations = tour.axe_violations(page)
        if violations:
            found[name] = violations
        if french is not None:  # no English on the French page, read at 1280x800 as the French check always was
            page.set_viewport_size(tour.SIZES["1280x800"])
            leaked = english_on(page, *french, stop=name)
            if leaked:
                leaks[name] = leaked
            page.set_viewport_size(tour.SIZES[size])
    ctx.close()
    assert found == {}, found
    assert leaks == {}, leaks
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


def test_the_screenshot_set_covers_every_page_look_and_size() -> None:
    """`python3 tasks.py screenshots` (issue 24 point 7): each page at both sizes, each look at
    both sizes; the kept pictures are those (README shows two of them)."""
    shots = screenshots.in_turn()
    assert {(p, s) for p, _, s in shots} == {(p, s) for p in tour.STOPS for s in tour.SIZES}
    assert {(lk, s) for _, lk, s in shots} == {(lk, s) for lk in tour.LOOKS for s in tour.SIZES}
    assert len(screenshots.every()) == len(tour.STOPS) * len(tour.LOOKS) * len(tour.SIZES)
    kept = screenshots.OUT
    for page, look, size in shots:
        assert (kept / f"{page}-{look}-{size}.png").is_file(), (page, look, size)
    readme = (screenshots.ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r'src="artifacts/screenshots/([^"]+\.png)"', readme)
    assert len(shown) == 2 and all((kept / name).is_file() for name in shown)
    assert sum(f.stat().st_size for f in kept.glob("*.png")) < 3_000_000  # small enough to keep


def test_the_screenshot_command_pictures_a_page(server: str, browser: Browser, tmp_path: Path) -> None:
    from PIL import Image

    files = screenshots.take(server, browser, tmp_path, [("rules", "fr", "phone"), ("404", "dark", "1280x800")])
    assert [f.name for f in files] == ["rules-fr-phone.png", "404-dark-1280x800.png"]
    with Image.open(files[0]) as phone, Image.open(files[1]) as desk:
        assert phone.size == (390, 844) and desk.size == (1280, 800)
        assert len(desk.getcolors(256) or []) > 8  # a picture, reduced to at most 256 colours
