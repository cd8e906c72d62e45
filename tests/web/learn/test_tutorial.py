"""The tutorial and the move preview (jericho_game.web.learn.tutorial): every lesson can be solved,
a wrong answer is told apart from a right one, and the preview says exactly what playing the
move does."""

from __future__ import annotations

import random

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from jericho_game import Game
from jericho_game.web.learn import tutorial

# lesson → (a move that does what the lesson asks, a legal move that does not, an illegal try)
ANSWERS = {
    "placing": ("5R@d2", None, "5R@d4"),
    "clashes": ("5R@c2", "5R@d2", "5G@c2"),
    "stronger": ("3Y@d2", "1Y@d2", "5R@d2"),
    "monoliths": ("5R@b2", "3Y@b2", "1Y@e1"),
    "asymmetry": ("3B@a1", "4B@c2", "3B@c2"),
    "seven": ("1G@a4", "5R@f1", "1Y@a4"),
    "passes": ("1R@c3", "1R@d2", "2R@c3"),
}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(Starlette(routes=tutorial.routes))


def test_every_lesson_is_listed_and_starts_with_south_to_move(client: TestClient) -> None:
    lessons = client.get("/api/tutorial").json()["lessons"]
    assert [x["id"] for x in lessons] == list(ANSWERS)
    for lesson in lessons:
        assert lesson["title"] and lesson["text"] and lesson["goal"]
        start = client.get(f"/api/tutorial/{lesson['id']}").json()["game"]
        assert start["turn"] == "south" and start["legal"] and start["outcome"] is None


@pytest.mark.parametrize("lesson", list(ANSWERS))
def test_a_lesson_tells_right_from_wrong(client: TestClient, lesson: str) -> None:
    right, wrong, illegal = ANSWERS[lesson]
    r = client.post(f"/api/tutorial/{lesson}", json={"moves": [], "try": right}).json()
    assert r["legal"] and r["done"], r["feedback"]
    assert r["moves"][0] == right
    if wrong:
        r = client.post(f"/api/tutorial/{lesson}", json={"moves": [], "try": wrong}).json()
        assert r["legal"] and not r["done"] and r["feedback"]
    r = client.post(f"/api/tutorial/{lesson}", json={"moves": [], "try": illegal}).json()
    assert not r["legal"] and not r["done"] and r["feedback"].startswith("Refused:")
    assert "south" not in r["feedback"] and "north" not in r["feedback"]  # side names as players read them


def test_the_tutor_answers_for_north_with_its_hardest_reply(client: TestClient) -> None:
    r = client.post("/api/tutorial/seven", json={"moves": [], "try": "5R@f1"}).json()
    assert len(r["moves"]) == 2 and r["game"]["turn"] == "south"  # North replied
    start = tutorial.BY_ID["seven"].start()
    start.play("5R@f1")
    fewest = min(_score_after(start, m) for m in start.legal_moves())
    assert r["game"]["score"][0] == fewest


def _score_after(game: Game, move: object) -> int:
    game.play(move)  # type: ignore[arg-type]
    try:
        return game.score()[0]
    finally:
        game.undo()


def test_the_end_by_passes_is_played_out(client: TestClient) -> None:
    r = client.post("/api/tutorial/passes", json={"moves": [], "try": "1R@c3"}).json()
    assert r["moves"] == ["1R@c3", "pass", "pass"] and r["game"]["outcome"] == "south"


def test_the_preview_matches_playing_the_move() -> None:
    rnd = random.Random(4)
    for _ in range(6):
        game = Game()
        for _ in range(rnd.randrange(0, 30)):
            game.play(rnd.choice(game.legal_moves()))
        if game.is_over():
            continue
        effects = tutorial.effects(game)
        before = game.leaders()
        for move in game.legal_moves():
            if move.piece is None:
                continue
            game.play(move)
            after = game.leaders()
            game.undo()
            changed = sorted([a, before[a], after[a]] for a in after if after[a] != before[a])
            said = sorted(effects[str(move.piece.size)].get(move.cell or "", []))
            assert [[a, o and o.value, n and n.value] for a, o, n in changed] == said, move


def test_the_preview_endpoint(client: TestClient) -> None:
    r = client.post("/api/preview", json={"moves": ["5R@d2"]}).json()
    assert r["ply"] == 1
    assert r["effects"]["1"]["d3"] == [["d", None, "south"]]  # North's single 1 would lose d to the 5
    assert "d2" not in r["effects"]["1"] or all(c[0] != "d" for c in r["effects"]["1"]["d2"])


@pytest.mark.parametrize(
    ("path", "body", "status", "words"),
    [
        ("/api/preview", {"moves": "5R@d2"}, 400, "list of moves"),
        ("/api/preview", {"moves": ["5R@d2", "5R@d2"]}, 400, "move 2"),
        ("/api/tutorial/placing", {"moves": [], "try": 5}, 400, "'try'"),
        ("/api/tutorial/nope", {"moves": [], "try": "5R@d2"}, 404, "no lesson"),
        ("/api/preview", {"moves": ["5R@d2"] * 1000}, 413, "too large"),
    ],
)
def test_bad_requests_are_refused_with_a_reason(
    client: TestClient, path: str, body: object, status: int, words: str
) -> None:
    r = client.post(path, json=body)
    assert r.status_code == status and words in r.json()["message"], r.json()


def test_bad_json_is_refused(client: TestClient) -> None:
    r = client.post("/api/preview", content=b"{nope")
    assert r.status_code == 400 and r.json()["error"] == "bad_json"
