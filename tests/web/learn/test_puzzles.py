"""Puzzles on the web (web/learn/puzzles.py): the API on SQLite and PostgreSQL (next puzzle, moves,
ratings per browser and per account, exactly once across processes), and the /puzzles page in
Debian's chromium at desktop and phone sizes, by keyboard, with names for screen readers.
Screenshots: artifacts/puzzles-*.png."""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from argon2 import PasswordHasher
from playwright.sync_api import Browser, Page, expect
from sqlalchemy import text

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game import Game  # noqa: E402
from jericho_game.ai.puzzles import Puzzle, shipped_puzzles, verify  # noqa: E402
from jericho_game.web.accounts.accounts import CSRF_HEADER  # noqa: E402
from jericho_game.web.learn.puzzles import NEAREST, PUZZLER_HEADER  # noqa: E402
from jericho_game.web.server import Limits, create_app  # noqa: E402
from jericho_game.web.storage.database import Storage, resolve_db_url  # noqa: E402
from tests.web import test_browser  # noqa: E402
from tests.web.test_browser import ARTIFACTS, watch_errors  # noqa: E402

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
TOKEN_A = "a" * 32
TOKEN_B = "b" * 32
SHIPPED = shipped_puzzles()
ONE = next(p for p in SHIPPED if p.theme == "win-in-1")
TWO = next(p for p in SHIPPED if p.theme == "win-in-2")
SAVE = next(p for p in SHIPPED if p.theme == "break-the-seven")


@pytest.fixture()
def app(db: str) -> Iterator[Any]:
    app = create_app(db, ai_processes=0, password_hasher=CHEAP)
    yield app
    # requests made outside the lifespan (a TestClient without `with`) reopen the pool it closed
    app.state.service.storage.close()


@pytest.fixture()
def client(app: Any) -> Iterator[TestClient]:
    with TestClient(app, client=("10.0.0.1", 1000)) as c:
        yield c


def wrong_move(p: Puzzle) -> str:
    game = Game.from_position(p.position)
    return next(str(m) for m in game.legal_moves() if str(m) != p.solution[0])


def result(c: TestClient, p: Puzzle, moves: list[str], token: str | None = TOKEN_A, hints: int = 0) -> Any:
    headers = {PUZZLER_HEADER: token} if token else {}
    return c.post(f"/api/puzzles/{p.id}/result", json={"moves": moves, "hints": hints}, headers=headers)


# -- the API ------------------------------------------------------------------------------------------


def test_next_returns_a_proved_puzzle_with_position_and_solution(client: TestClient) -> None:
    r = client.get("/api/puzzles/next", headers={PUZZLER_HEADER: TOKEN_A})
    assert r.status_code == 200
    data = r.json()
    for key in ("id", "position", "solution", "theme", "side", "rating", "game", "theme_text"):
        assert key in data, key
    p = Puzzle(data["id"], data["position"], data["theme"], tuple(data["solution"]), float(data["rating"]))
    assert verify(p) == []  # the served puzzle is proved again, from what the API said alone
    assert data["side"] == data["position"].split()[3] == data["game"]["turn"]
    assert data["player"] == {"rating": 1500, "rd": 350, "solved": 0, "failed": 0, "provisional": True}
    assert client.get(f"/api/puzzles/{data['id']}").json()["position"] == data["position"]
    missing = client.get("/api/puzzles/nope1234")
    assert missing.status_code == 404 and missing.json()["error"] == "unknown_puzzle"


def test_moves_are_checked_and_the_reply_is_played(client: TestClient) -> None:
    url = f"/api/puzzles/{TWO.id}/try"
    first = client.post(url, json={"moves": [], "try": TWO.solution[0]}).json()
    assert first["correct"] and first["reply"] == TWO.solution[1] and not first["done"]
    assert first["game"]["turn"] == TWO.side and first["game"]["last"] == TWO.solution[1]
    last = client.post(url, json={"moves": list(TWO.solution[:2]), "try": TWO.solution[2]}).json()
    assert last["correct"] and last["done"] and last["reply"] is None
    wrong = client.post(url, json={"moves": [], "try": wrong_move(TWO)}).json()
    assert wrong["legal"] and not wrong["correct"] and "does not force the win" in wrong["message"]
    assert wrong["reply"] and wrong["game"]["last"] == wrong["reply"] and wrong["reply"] in wrong["message"]
    save = client.post(f"/api/puzzles/{SAVE.id}/try", json={"moves": [], "try": wrong_move(SAVE)}).json()
    assert not save["correct"] and "does not save the game" in save["message"]
    illegal = client.post(url, json={"moves": [], "try": "9Q@z9"}).json()
    assert illegal["legal"] is False and illegal["message"].startswith("Not allowed")
    bad = client.post(url, json={"moves": ["5R@d2"], "try": TWO.solution[0]})
    assert bad.status_code == 400 and "start of the puzzle's line" in bad.json()["message"]


def test_a_browser_is_rated_once_per_puzzle_and_the_next_puzzle_is_new(client: TestClient) -> None:
    r = result(client, ONE, list(ONE.solution[::2])).json()
    assert r["solved"] and r["rated"] and r["after"] > r["before"] == 1500
    assert r["player"]["solved"] == 1 and r["player"]["rating"] == r["after"]
    again = result(client, ONE, [wrong_move(ONE)]).json()  # a second try never counts
    assert not again["rated"] and again["first_solved"] and again["player"]["rating"] == r["after"]
    failed = result(client, TWO, [wrong_move(TWO)]).json()
    assert failed["rated"] and not failed["solved"] and failed["after"] < failed["before"]
    hinted = result(client, SAVE, list(SAVE.solution[::2]), hints=2).json()  # the cell was shown
    assert hinted["rated"] and not hinted["solved"]
    # another browser starts from scratch; no token: nothing is stored
    assert result(client, ONE, list(ONE.solution[::2]), token=TOKEN_B).json()["before"] == 1500
    assert result(client, ONE, list(ONE.solution[::2]), token=None).json()["rated"] is False
    seen = {ONE.id, TWO.id, SAVE.id}
    for _ in range(10):
        nxt = client.get("/api/puzzles/next", headers={PUZZLER_HEADER: TOKEN_A}).json()
        assert nxt["id"] not in seen
    bad = client.post(f"/api/puzzles/{ONE.id}/result", json={"moves": "4Y@a3"}, headers={PUZZLER_HEADER: TOKEN_A})
    assert bad.status_code == 400 and "'moves'" in bad.json()["message"]


def test_the_next_puzzle_is_near_the_solvers_rating(client: TestClient, db: str) -> None:
    result(client, ONE, list(ONE.solution[::2]))  # creates the browser's row
    store = Storage(resolve_db_url(db))
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE puzzle_players SET rating = 2100"))
    store.close()
    ratings = sorted(abs(p.rating - 2100) for p in SHIPPED if p.id != ONE.id)
    for _ in range(5):
        nxt = client.get("/api/puzzles/next", headers={PUZZLER_HEADER: TOKEN_A}).json()
        assert abs(nxt["rating"] - 2100) <= ratings[NEAREST - 1]
        assert nxt["player"]["rating"] == 2100


def test_an_account_has_its_own_rating_and_needs_its_csrf_token(client: TestClient) -> None:
    token = client.get("/api/account").json()["csrf"]
    r = client.post("/api/account/signup", json={"username": "solver", "password": "long enough pw"},
                    headers={CSRF_HEADER: token})  # fmt: skip
    assert r.status_code == 201
    csrf = r.json()["csrf"]
    refused = client.post(f"/api/puzzles/{ONE.id}/result", json={"moves": list(ONE.solution[::2])})
    assert refused.status_code == 403 and refused.json()["error"] == "csrf"
    ok = client.post(
        f"/api/puzzles/{ONE.id}/result",
        json={"moves": list(ONE.solution[::2])},
        headers={CSRF_HEADER: csrf, PUZZLER_HEADER: TOKEN_A},
    ).json()
    assert ok["rated"] and ok["solved"]
    # the browser token was ignored for the account: that browser has not tried the puzzle
    anon = TestClient(client.app, client=("10.0.0.2", 1000))
    assert result(anon, ONE, list(ONE.solution[::2])).json()["rated"]
    assert client.get("/api/puzzles/next").json()["player"]["solved"] == 1


def test_racing_first_attempts_on_two_processes_rate_once(db: str) -> None:
    apps = [create_app(db, ai_processes=0, password_hasher=CHEAP) for _ in range(2)]
    with TestClient(apps[0]) as c0, TestClient(apps[1]) as c1:
        barrier = threading.Barrier(4)
        answers: list[dict[str, Any]] = []

        def go(c: TestClient, p: Puzzle) -> None:
            barrier.wait()
            answers.append(result(c, p, list(p.solution[::2])).json())

        threads = [threading.Thread(target=go, args=(c, p)) for c in (c0, c1) for p in (ONE, TWO)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert sorted(a["id"] for a in answers if a["rated"]) == sorted([ONE.id, TWO.id])
        me = c0.get("/api/puzzles/next", headers={PUZZLER_HEADER: TOKEN_A}).json()["player"]
        assert me["solved"] == 2


# -- the page --------------------------------------------------------------------------------------

browser = test_browser.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("puzzles") / "games.sqlite3"
    app = create_app(str(db), limits=Limits(rate=1000.0, burst=1000), ai_processes=0)
    yield from test_browser.serve_in_thread(app)


def _shot(page: Page, name: str) -> None:
    page.wait_for_function("() => document.fonts.status === 'loaded'")
    page.screenshot(path=str(ARTIFACTS / name), animations="disabled")


def _unnamed(page: Page) -> list[str]:
    """Buttons, links and inputs with no accessible name (a screen reader would say only 'button')."""
    return list(
        page.evaluate(
            """() => [...document.querySelectorAll('button, a, input, [role=button]')]
              .filter((e) => e.offsetParent !== null || e.closest('svg'))
              .filter((e) => {
                const label = e.getAttribute('aria-label') || e.textContent.trim() ||
                  (e.labels && e.labels.length && e.labels[0].textContent.trim()) || e.getAttribute('title');
                return !label;
              }).map((e) => e.outerHTML.slice(0, 80))"""
        )
    )


@pytest.mark.parametrize(("w", "h"), [(1280, 800), (390, 844)])
def test_a_puzzle_is_solved_with_the_keyboard_and_rated(server: str, browser: Browser, w: int, h: int) -> None:
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    errors = watch_errors(page)
    page.goto(server)  # the home page leads to the puzzles
    expect(page.get_by_role("link", name="Solve puzzles")).to_have_attribute("href", "/puzzles")
    page.goto(f"{server}/puzzles/{ONE.id}")
    expect(page.locator("#puzzle-goal")).to_contain_text(f"{ONE.side.capitalize()} to move")
    expect(page.locator("#puzzle-score")).to_contain_text("Your puzzle rating: 1500")
    # the whole board is on screen, and nothing scrolls sideways
    board = page.locator("#board").bounding_box()
    assert board is not None and board["x"] >= -0.5 and board["x"] + board["width"] <= w + 0.5
    assert page.evaluate("document.documentElement.scrollWidth") <= w
    assert _unnamed(page) == []
    expect(page.get_by_role("group", name="Jericho board")).to_be_visible()
    expect(page.locator("#account-nav a")).to_have_count(1)
    header = page.locator("header.top").bounding_box()
    assert header is not None and (w > 600 or header["height"] <= 46.5)  # a phone's: one line, as in a game
    for item in page.locator("header.top nav a").all():  # each link whole ("Log in" was cut on a phone)
        assert item.evaluate("(e) => e.scrollWidth <= e.clientWidth"), item.inner_text()
    _shot(page, f"puzzles-{w}x{h}-start.png")

    # keyboard only: the piece's button, Enter; focus goes to the board; the target cell, Enter
    piece, cell = ONE.solution[0].split("@")
    slot = page.locator(f'#tray-mine .slot[data-piece="{piece}"]')
    expect(slot).to_have_attribute("aria-label", f"{piece}, size {piece[0]}, " + _colour(piece) + "")
    slot.focus()
    page.keyboard.press("Enter")
    expect(slot).to_have_attribute("aria-pressed", "true")
    # the focus went to a cell where the piece may go; the arrow keys move between cells
    focused = page.locator("[data-cell]:focus")
    expect(focused).to_have_attribute("aria-label", re.compile(f"{piece} may go here"))
    page.keyboard.press("ArrowRight")
    expect(page.locator("[data-cell]:focus")).to_have_count(1)
    expect(page.locator(f'[data-cell="{cell}"]')).to_have_attribute("aria-label", re.compile(f"{piece} may go here"))
    page.locator(f'[data-cell="{cell}"]').focus()
    page.keyboard.press("Enter")
    feedback = page.get_by_role("status")
    expect(feedback).to_contain_text("Solved!")
    expect(page.locator("#puzzle-score")).to_contain_text("solved 1")
    expect(page.locator("#btn-next")).to_be_focused()
    analyse = page.get_by_role("link", name="Analyse")
    expect(analyse).to_be_visible()
    assert "/analysis?position=" in (analyse.get_attribute("href") or "")
    expect(page.locator("#puzzle-line li")).to_have_count(1)
    _shot(page, f"puzzles-{w}x{h}-solved.png")

    # Enter on "Next puzzle" loads another one
    page.keyboard.press("Enter")
    expect(page.locator("#puzzle-title")).not_to_have_text(f"Puzzle {ONE.id}")
    expect(page.locator("#puzzle-line li")).to_have_count(0)
    assert errors == []
    ctx.close()


def _colour(piece: str) -> str:
    return {"R": "red", "Y": "yellow", "G": "green", "B": "blue", "W": "white"}[piece[1]]


def test_a_typed_wrong_move_is_refuted_then_hints_and_solution(server: str, browser: Browser) -> None:
    ctx = browser.new_context(viewport={"width": 1366, "height": 768})
    page = ctx.new_page()
    errors = watch_errors(page)
    page.goto(f"{server}/puzzles/{TWO.id}")
    expect(page.locator("#puzzle-goal")).to_contain_text("to move")
    # hints: the theme, then the cell (highlighted), then the piece
    page.get_by_role("button", name="Hint").click()
    expect(page.get_by_role("status")).to_contain_text("Win in 2")
    page.get_by_role("button", name="Another hint").click()
    piece, cell = TWO.solution[0].split("@")
    expect(page.get_by_role("status")).to_contain_text(f"the move is on {cell}")
    expect(page.locator(f'[data-cell="{cell}"]')).to_have_class(re.compile(r"\blegal\b"))
    page.get_by_role("button", name="Last hint").click()
    expect(page.get_by_role("status")).to_contain_text(f"play {piece} on {cell}")
    # a wrong move typed in the box: refuted, the attempt is over
    box = page.get_by_label("Or type your move")
    box.fill(wrong_move(TWO))
    box.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("does not force the win")
    expect(page.get_by_role("button", name="Try again")).to_be_visible()
    expect(page.locator("#puzzle-score")).to_contain_text("failed 1")
    _shot(page, "puzzles-1366x768-wrong.png")
    page.get_by_role("button", name="Show the solution").click()
    expect(page.get_by_role("status")).to_contain_text("Solution: " + ", ".join(TWO.solution))
    expect(page.locator("#puzzle-line li")).to_have_count(3)
    # try again: the puzzle from the start, the right line now plays through (unrated)
    page.get_by_role("button", name="Try again").click()
    for mv in TWO.solution[::2]:
        box.fill(mv)
        box.press("Enter")
        expect(page.locator("#puzzle-line li").first).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("That is the solution")
    expect(page.locator("#puzzle-score")).to_contain_text("solved 0, failed 1")
    assert errors == []
    ctx.close()


# -- puzzles from the server's own games -------------------------------------------------------------


def test_make_reads_the_finished_games_of_a_server_database(db: str, tmp_path: Any) -> None:
    from jericho_game.ai.puzzles import Budget, load_puzzles
    from jericho_game.cli.puzzles import make
    from jericho_game.record import read_records
    from jericho_game.web.learn.puzzles import games_from_db
    from jericho_game.web.storage.database import GameRecord
    from tests.ai.test_puzzles import SAMPLE

    records = read_records(SAMPLE.read_text(encoding="utf-8"))
    store = Storage(resolve_db_url(db))
    store.create(GameRecord(id="done1", mode="hotseat", moves=[str(m) for m in records[3].moves], result="north"))
    store.create(GameRecord(id="going", mode="hotseat", moves=[str(m) for m in records[4].moves[:30]]))
    store.close()
    out = tmp_path / "p.jsonl"
    new, games = make(games_from_db(db), out, Budget(seconds=20.0), log=False)
    assert games == 1 and new >= 1  # the finished game only; game 3 of the sample holds a puzzle
    assert (tmp_path / "p.jsonl.done").read_text().split() == ["db:done1"]
    made = load_puzzles(out.read_text(encoding="utf-8"))
    assert all(p.source.startswith("db:done1 ply ") and verify(p) == [] for p in made)
