"""No English on a French page, in a real browser (issue 24 point 1): every page of the tour
(tests/web/tour.py: the game, its replay and review, the lobby, the puzzles...) is read in French,
its text and its names for screen readers, and none of the catalog's English messages may be
found there (:func:`english_on`, checked on the accessibility tour's French walk,
tests/web/site/test_a11y_pages_ui.py, which opens every page once for both); the AI levels, the
engine's sentences and the dates are French too."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from argon2 import PasswordHasher
from babel.messages.pofile import read_po
from playwright.sync_api import Browser, Page, expect

from jericho_game.web import i18n
from jericho_game.web.server import create_app
from tests.web import test_browser, tour

browser = test_browser.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("fr") / "games.sqlite3"
    app = create_app(str(db), password_hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    yield from test_browser.serve_in_thread(app)


def english_words() -> set[str]:
    """Words of the catalog's English messages that none of its French ones uses ("placed",
    "leads", "the"): one of them on a French page is English that never went through t()."""
    with (i18n.LOCALE_DIR / "fr" / "LC_MESSAGES" / "messages.po").open("rb") as f:
        catalog = read_po(f)
    en: set[str] = set()
    fr: set[str] = set()
    for m in catalog:
        if m.id and m.string:
            en |= set(re.findall(r"[a-z']{3,}", str(m.id).lower()))
            fr |= set(re.findall(r"[a-zà-ÿ']{3,}", str(m.string).lower()))
    return en - fr


def english_fragments() -> list[str]:
    """The literal pieces of the catalog's English messages that French says otherwise: long
    enough (12 characters, two words) that finding one on a French page means English leaked."""
    with (i18n.LOCALE_DIR / "fr" / "LC_MESSAGES" / "messages.po").open("rb") as f:
        catalog = read_po(f)
    out = set()
    for m in catalog:
        if not m.id or not m.string or m.string == m.id:
            continue
        for piece in re.split(r"\{\w+\}|<[^>]+>", str(m.id)):
            piece = piece.strip(" .,:;()·—-")
            if len(piece) >= 12 and " " in piece and piece not in str(m.string):
                out.add(piece)
    return sorted(out)


def page_words(page: Page) -> str:
    """What the page says: its text, and the names and hints given to screen readers."""
    return str(
        page.evaluate(
            """() => [document.body.innerText, document.title,
                ...[...document.querySelectorAll('[aria-label], [title], [placeholder], [alt]')].flatMap((e) =>
                    ['aria-label', 'title', 'placeholder', 'alt'].map((a) => e.getAttribute(a) || ''))].join('\\n')"""
        )
    )


def french_checks() -> tuple[list[str], set[str]]:
    """The catalog's English fragments and words that :func:`english_on` looks for, checked to be
    many (an empty catalog would find nothing)."""
    fragments = english_fragments()
    assert len(fragments) > 300 and any(f.startswith("Hover or tap an alignment") for f in fragments)
    words = english_words()
    assert {"placed", "leads", "the", "your"} <= words
    return fragments, words


def english_on(page: Page, fragments: list[str], words: set[str], stop: str = "") -> list[str]:
    """The English a page shows in a French tour: the catalog's English fragments it says, and its
    words that only English messages use.  At the game ``stop`` an alignment is focused first (the
    confrontation's sentence)."""
    if stop == "game":  # the confrontation's sentence, and a refused move's reason
        page.locator('[data-alignment="d"]').focus()
        expect(page.locator("#info")).to_contain_text("Alignement d")
    said = page_words(page)
    found = [f for f in fragments if f in said]
    prose = re.sub(r"\S+\.(md|py|js)\b", "", said)  # file names are not words
    # whole words, accents included: "Confirmé" is French, not the English "Confirm" + "é"
    found += sorted({w for w in re.findall(r"[A-Za-zÀ-ÿ']{3,}", prose) if w.lower() in words})
    return found


def test_the_check_finds_english(server: str, browser: Browser) -> None:
    """The check can fail: an English page read as if it were French shows many messages."""
    fragments, words = french_checks()
    ctx = tour.new_context(browser, "light")
    page = ctx.new_page()
    tour.game(page, server)
    said = page_words(page)
    assert len([f for f in fragments if f in said]) >= 3
    assert len(english_on(page, fragments, words)) >= 10
    ctx.close()


def test_ai_levels_and_dates_in_french(server: str, browser: Browser) -> None:
    ctx = tour.new_context(browser, "fr")
    page = ctx.new_page()
    page.goto(server + "/")
    labels = page.locator("#levels-main label b")
    expect(labels).to_have_text(
        [
            "Facile",
            "Détendu",
            "Moyen",
            "Difficile",
            "Fort",
            "Avancé",
            "Confirmé",
            "Chevronné",
            "Prétendant",
            "Élite",
            "Expert",
            "Maître",
        ]
    )
    g = page.request.post(server + "/api/games", data={"mode": "ai", "level": "easy", "side": "south"}).json()
    page.goto(g["links"]["play"])
    expect(page.locator("#north-name")).to_have_text("IA · Facile")
    page.goto(server + "/games")
    row = page.locator("#games tr", has_text="IA · Facile")
    expect(row).to_have_count(1)
    date = row.locator("td.date").inner_text()
    assert re.fullmatch(r"\d{1,2} [a-zéû]+\.? \d{4}(,| à) \d{2}:\d{2}", date), date  # "2 déc. 2026, 06:40"
    ctx.close()
