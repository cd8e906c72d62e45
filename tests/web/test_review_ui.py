"""Game review in a real browser (Playwright driving Debian's chromium): a player finishes a short
game, asks for the review, a spectator in another browser context sees it arrive live, and the
player steps through the game with the current ply highlighted in the chart.  A test-only budget
of 30 simulations per position keeps it to seconds.  Screenshots: artifacts/review-*.png."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from jericho_game import Game
from jericho_game.web.server import Limits, create_app
from tests.web import test_browser
from tests.web.test_browser import ARTIFACTS, watch_errors
from tests.web.test_ui import hotseat

browser = test_browser.browser  # the module-scoped Debian chromium


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("review") / "games.sqlite3"
    # AI work in threads of this process, and a tiny review budget: seconds, not a minute
    app = create_app(str(db), limits=Limits(rate=1000.0, burst=1000), ai_processes=0, review_sims=30)
    yield from test_browser.serve_in_thread(app)


def _short_game() -> list[str]:
    """A random game that ends by seven monoliths within 16 moves (seed 8)."""
    rng = random.Random(8)
    game = Game()
    while not game.is_over():
        game.play(rng.choice(game.legal_moves()))
    moves = [str(m) for m in game.history]
    assert len(moves) <= 20 and "pass" not in moves
    return moves


def _shot(page: Page, name: str) -> None:
    page.wait_for_function("() => document.fonts.status === 'loaded'")
    page.evaluate("window.scrollTo(0, 0)")  # the floating banner sits over the header, not mid-page
    page.screenshot(path=str(ARTIFACTS / name), animations="disabled", full_page=True)


def test_a_finished_game_is_reviewed_shared_and_stepped_through(server: str, browser: Browser) -> None:
    moves = _short_game()
    player_ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    watcher_ctx = browser.new_context(viewport={"width": 390, "height": 844})
    page = player_ctx.new_page()
    errors = watch_errors(page)
    g = hotseat(server, page, moves)
    expect(page.locator("#banner.over")).to_be_visible()
    watcher = watcher_ctx.new_page()
    watcher_errors = watch_errors(watcher)
    watcher.goto(g["links"]["watch"])
    expect(watcher.locator("#btn-review")).to_be_visible()  # spectators may ask too; this one waits
    expect(page.locator("#review")).to_be_hidden()

    page.click("#btn-review")
    expect(page.locator("#btn-review")).to_be_hidden()
    expect(page.locator("#review-status")).to_contain_text("Review done", timeout=30000)
    review = page.request.get(f"{server}/api/games/{g['id']}/review").json()
    total = len(moves) + 1
    assert review["status"] == "done" and review["done"] == total

    # the chart: South's chances by ply, one point per position, and a dot per marked move
    line = page.locator("#review-chart .rv-line")
    expect(line).to_have_count(1)
    assert len((line.get_attribute("points") or "").split()) == total
    marked = [m for m in review["moves"] if m["mark"]]
    expect(page.locator("#review-chart .rv-mark")).to_have_count(len(marked))
    # ... and the same marks in the move list, with their signs and the AI's preferred move
    expect(page.locator("#moves .mv.marked")).to_have_count(len(marked))
    signs = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}
    for m in marked:
        b = page.locator(f'#moves .mv[data-ply="{m["ply"]}"]')
        expect(b.locator(".mark-sign")).to_have_text(signs[m["mark"]])
        assert f"the AI preferred {m['best']}" in (b.get_attribute("title") or "")
    expect(page.locator("#review-keys .rv-key")).to_have_count(len(marked))
    expect(page.locator("#review-legend")).to_contain_text("?? blunder (30 points or more)")
    with page.expect_download() as info:  # the record, annotated with the review
        page.click("#review-record")
    assert info.value.suggested_filename == f"jericho-{g['id']}-review.jgn"
    _shot(page, "review-done-desktop.png")

    # the spectator's page received it live (no reload), on a phone-sized screen
    expect(watcher.locator("#review-status")).to_contain_text("Review done", timeout=15000)
    expect(watcher.locator("#review-chart .rv-line")).to_have_count(1)
    expect(watcher.locator("#btn-review")).to_be_hidden()
    _shot(watcher, "review-spectator-phone.png")

    # stepping through: the replay's controls move the chart's current-ply marker
    now = page.locator("#review-chart .rv-now")
    expect(now).to_have_attribute("data-ply", str(len(moves)))  # the final position to start with
    chart = page.locator("#review-chart")
    bbox = chart.bounding_box()
    assert bbox is not None
    page.mouse.click(bbox["x"] + 2, bbox["y"] + bbox["height"] / 2)  # the chart's left edge: the start
    expect(page.locator("#replay")).to_be_visible()
    expect(page.locator("#rp-pos")).to_have_text(f"0 / {len(moves)}")
    expect(now).to_have_attribute("data-ply", "0")
    expect(page.locator("#review-now")).to_contain_text("Start: South's winning chance")
    best = review["positions"][0]["best"]  # the AI's preferred first move: its cell is outlined
    expect(page.locator("#review-now")).to_contain_text(f"Here the AI would play {best}")
    expect(page.locator("#board .cell.rv-best")).to_have_count(1)
    expect(page.locator("#board .cell.rv-best")).to_have_attribute("data-cell", best.split("@")[1])
    for k in (1, 2, 3):
        page.click("#rp-next")
        expect(now).to_have_attribute("data-ply", str(k))
        expect(page.locator(f'#moves .mv.current[data-ply="{k}"]')).to_have_count(1)
        expect(page.locator("#review-now")).to_contain_text(f"After move {k} (")
    page.keyboard.press("ArrowRight")
    expect(now).to_have_attribute("data-ply", "4")
    _shot(page, "review-stepping-desktop.png")
    target = marked[0]["ply"] if marked else len(moves)
    if marked:  # a key moment jumps there, and says what the AI preferred
        page.locator(f'#review-keys .rv-key[data-ply="{target}"]').click()
        expect(now).to_have_attribute("data-ply", str(target))
        expect(page.locator("#review-now")).to_contain_text(f"The AI preferred {marked[0]['best']}")
        _shot(page, "review-key-moment-desktop.png")
    page.click("#rp-last")
    expect(now).to_have_attribute("data-ply", str(len(moves)))
    expect(page.locator("#board .cell.rv-best")).to_have_count(0)  # the game is over there: no move to prefer
    expect(page.locator("#review-now")).to_contain_text("(decided)")  # the final position is exact
    assert not errors and not watcher_errors, errors + watcher_errors
    player_ctx.close()
    watcher_ctx.close()


def test_a_failed_reviews_error_text_is_shown_inert(
    server: str, browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jericho_game.web import review as review_module

    payload = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>\u202eevil\u200b'

    def broken(*args: object) -> object:
        raise RuntimeError(payload)

    monkeypatch.setattr(review_module, "evaluate_ply", broken)  # the server's AI runs in threads here
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors = watch_errors(page)
    hotseat(server, page, _short_game())

    def late(route: Route) -> None:
        # the POST's "queued" answer arrives after the pushed "failed": it must not put the page back
        answer = route.fetch()
        time.sleep(2.0)
        route.fulfill(response=answer)

    page.route("**/review", lambda route: late(route) if route.request.method == "POST" else route.continue_())
    page.click("#btn-review")
    status = page.locator("#review-status")
    expect(status).to_contain_text("The review failed", timeout=60000)  # three tries: slow on a busy machine
    shown = status.text_content() or ""
    assert '<img src=x onerror="window.pwned=1"><script>' in shown  # shown as the text it is
    # the bidi override and the zero-width space arrive as escapes: they cannot turn the text around
    assert "\u202e" not in shown and "\u200b" not in shown and "\\u202eevil\\u200b" in shown
    assert shown.endswith("You can ask again.")
    expect(page.locator("#review-chart")).to_be_hidden()  # no position was evaluated: no empty chart
    assert page.locator("#review img, #review script").count() == 0
    assert page.evaluate("window.pwned") is None
    expect(page.locator("#btn-review")).to_have_text("Review again")
    _shot(page, "review-failed-desktop.png")
    assert not errors, errors
    ctx.close()
