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
from tests.web.test_ui import hotseat, still_shot

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
    # each side's accuracy says over how many moves it counts (those up to the deciding move)
    for side in ("south", "north"):
        acc, k = review["accuracy"][side], review["counted"][side]
        if acc is not None:
            words = "over 1 move" if k == 1 else f"over {k} moves"
            expect(page.locator("#review-status")).to_contain_text(f"accuracy {round(acc)}% {words}")

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
    turning = {t["ply"] for side in ("south", "north") for t in review["turning"][side]}
    expect(page.locator("#review-keys .rv-key")).to_have_count(len({m["ply"] for m in marked} | turning))
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
    expect(page.locator("#rp-pos")).to_have_text("Start")
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
        label = f"{(k + 1) // 2}{'.' if k % 2 else '...'}"  # one numbering: 1. 1... 2.
        expect(page.locator("#review-now")).to_contain_text(f"After {label} {moves[k - 1]} (")
        expect(page.locator("#rp-pos")).to_have_text(label)
    page.keyboard.press("ArrowRight")
    expect(now).to_have_attribute("data-ply", "4")
    _shot(page, "review-stepping-desktop.png")
    target = marked[0]["ply"] if marked else len(moves)
    if marked:  # a key moment jumps there, and says what the AI preferred
        page.locator(f'#review-keys .rv-key[data-ply="{target}"]').click()
        expect(now).to_have_attribute("data-ply", str(target))
        expect(page.locator("#review-now")).to_contain_text(f"The AI preferred {marked[0]['best']}")
        # the loss is told against the AI's move: the mover's chance after each
        assert marked[0]["best_after"] is not None
        expect(page.locator("#review-now")).to_contain_text("after this move,")
        expect(page.locator(f'#review-keys .rv-key[data-ply="{target}"]')).to_contain_text(marked[0]["label"])
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
    from jericho_game.web.learn import review as review_module

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


# -- issue 21: a slow slide explained, with the board in view -------------------------------------------

SIZES = [(1280, 800), (1366, 768), (1440, 900), (390, 844)]


def _slide_game_page(server: str, page: Page, moves: list[str]) -> dict[str, object]:
    """A hot-seat game of ``moves`` that South then resigns, opened in ``page``."""
    import json

    from websockets.sync.client import connect as ws_connect

    g = page.request.post(server + "/api/games", data={"mode": "hotseat"}).json()
    with ws_connect(server.replace("http", "ws") + f"/ws/{g['id']}") as ws:
        ws.send(json.dumps({"type": "hello", "token": g["token"]}))
        for mv in moves:
            ws.send(json.dumps({"type": "move", "move": mv}))
            while (msg := json.loads(ws.recv()))["type"] != "ack":
                assert msg["type"] != "error", msg
        ws.send(json.dumps({"type": "resign"}))
        while not ((msg := json.loads(ws.recv()))["type"] == "state" and msg["game"]["status"] == "over"):
            pass
    return dict(g)


def _in_view(page: Page, selector: str) -> bool:
    b = page.locator(selector).bounding_box()
    vp = page.viewport_size
    assert b is not None and vp is not None
    return b["y"] >= -0.5 and b["y"] + b["height"] <= vp["height"] + 0.5 and b["x"] >= -0.5


def test_a_slow_slide_is_explained_and_the_board_stays_in_view_at_every_size(
    server: str, browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jericho_game.web.learn import review as review_module
    from tests.web.learn.test_review import slide_evals, slide_game

    moves = slide_game()
    table = slide_evals(moves)
    # the constructed slow slide stands for the search (the server's AI runs in threads here)
    monkeypatch.setattr(review_module, "evaluate_ply", lambda start, mv, ply, sims, seconds: table[ply])
    nothing = review_module.SolvedEnd(len(moves) + 1, (), 1, 0)  # the solver knows nothing of it (issue 53)
    monkeypatch.setattr(review_module, "solve_back", lambda start, mv: nothing)
    setup = browser.new_context(viewport={"width": 1280, "height": 800})
    g = _slide_game_page(server, setup.new_page(), moves)
    review = setup.request.post(f"{server}/api/games/{g['id']}/review")
    assert review.status == 202, review.text()
    for _ in range(300):
        review = setup.request.get(f"{server}/api/games/{g['id']}/review").json()
        if review["status"] == "done":
            break
        time.sleep(0.1)
    assert review["status"] == "done", review
    setup.close()
    line = list(table[40].line)  # the AI's line instead of 21. (South's deciding move)

    for w, h in SIZES:
        ctx = browser.new_context(viewport={"width": w, "height": h})
        page = ctx.new_page()
        errors = watch_errors(page)
        page.goto(str(g["links"]["play"]))  # type: ignore[index]
        expect(page.locator("#review-status")).to_contain_text("Review done")
        name = f"{w}x{h}"
        # what explains the loss: accuracy per side, marks, turning points, with the thresholds stated
        summary = page.locator("#review-summary")
        expect(summary.locator('tr[data-side="north"] .acc')).to_have_text("100%")
        south_acc = f"{round(review['accuracy']['south'])}%"
        expect(summary.locator('tr[data-side="south"] .acc')).to_have_text(south_acc)
        expect(page.locator("#review-status")).to_contain_text(f"accuracy {south_acc}")
        keys = page.locator("#review-keys .rv-key")
        expect(keys).to_have_count(3)  # South's three turning points (one of them the decided blunder)
        expect(keys.nth(0)).to_contain_text(f"5. {moves[8]}")
        expect(keys.nth(0)).to_contain_text("turning point")
        expect(keys.nth(0)).to_contain_text("of South's slide")
        decisive = page.locator('#review-keys .rv-key[data-ply="41"]')
        expect(decisive).to_contain_text(f"21. {moves[40]}??")
        expect(decisive).to_contain_text("blunder (decided the game)")
        # the deciding move, probable (the solver knows nothing here): by the search's figures
        expect(decisive).to_contain_text("probably the deciding move (the search)")
        expect(page.locator("#review-status")).to_contain_text(
            f"Probably decided by move 21. {moves[40]} (the search: South 8% → 3%); from then on North had a won game."
        )
        legend = page.locator("#review-legend")
        expect(legend).to_contain_text("?? blunder (30 points or more)")
        expect(legend).to_contain_text("5% or less")
        expect(legend).to_contain_text("Accuracy")
        desktop = w > 800
        if desktop:  # the review's chart starts above the fold, beside the board
            chart = page.locator("#review-chart").bounding_box()
            assert chart is not None and chart["y"] < h, (name, chart)
            assert _in_view(page, "#board"), name
        # a key moment, clicked wherever the panel is scrolled to: the board stays in view
        decisive.scroll_into_view_if_needed()
        decisive.click()
        expect(page.locator("#rp-pos")).to_have_text("21.")
        expect(page.locator("#review-chart .rv-now")).to_have_attribute("data-ply", "41")
        expect(page.locator('#moves .mv.current[data-ply="41"]')).to_have_count(1)
        assert _in_view(page, "#board"), f"{name}: the board left the view after a key moment"
        still_shot(page, f"review-slide-key-moment-{name}.png")
        # the AI's line instead, on the board on demand; the arrow keys step through it
        show = page.locator('#review-keys .rv-show-line[data-ply="41"]')
        expect(show).to_have_accessible_name(f"Show the AI's line instead of 21. {moves[40]} on the board")
        show.click()
        box = page.locator("#review-line")
        expect(box).to_be_visible()
        expect(box.locator(".rv-line-move")).to_have_text([f"21. {line[0]}", f"21... {line[1]}"])
        expect(box.locator(".rv-line-move.current")).to_have_text(f"21. {line[0]}")
        expect(page.locator("#board .cell.last")).to_have_attribute("data-cell", line[0].split("@")[1])
        expect(page.locator("#turn")).to_contain_text("The AI's line")
        expect(page.locator("#review-now")).to_contain_text(f"On the board, the AI's line: next 21... {line[1]}")
        assert _in_view(page, "#board"), f"{name}: the board left the view showing the line"
        still_shot(page, f"review-slide-line-{name}.png")
        page.keyboard.press("ArrowRight")
        expect(box.locator(".rv-line-move.current")).to_have_text(f"21... {line[1]}")
        expect(page.locator("#board .cell.last")).to_have_attribute("data-cell", line[1].split("@")[1])
        box.get_by_role("button", name="Back to the game").click()
        expect(box).to_be_hidden()
        expect(page.locator("#board .cell.last")).to_have_attribute("data-cell", moves[40].split("@")[1])
        # scrolled to the very end of the panel (the move list): the board is still there
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        page.locator('#moves .mv[data-ply="47"]').click()
        expect(page.locator("#rp-pos")).to_have_text("24.")
        assert _in_view(page, "#board"), f"{name}: the board left the view at the end of the panel"
        still_shot(page, f"review-slide-scrolled-{name}.png")
        assert not errors, (name, errors)
        ctx.close()
