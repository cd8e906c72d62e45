"""The analysis board's API (web/learn/analysis_board.py): where an analysis starts (a position text, a
record, a game of the server), the position after a path of moves, the AI's evaluation with its
line (streamed: tests/web/learn/test_analysis_stream.py), and the line as a record.  Bad input gets coded errors."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game import Game  # noqa: E402
from jericho_game.record import read_record  # noqa: E402
from jericho_game.web.server import Limits, create_app  # noqa: E402
from tests.web.test_server import connect, create, seat  # noqa: E402

OPENING = ["5R@d2", "1G@d3", "2Y@d3"]


@pytest.fixture()
def client(tmp_path: Any) -> Iterator[TestClient]:
    app = create_app(str(tmp_path / "games.sqlite3"), ai_processes=0, limits=Limits(rate=1000.0, burst=1000))
    with TestClient(app) as c:
        yield c


def post(c: TestClient, path: str, body: Any) -> Any:
    return c.post(f"/api/analysis/{path}", json=body)


def test_the_page_and_the_position_after_a_path(client: TestClient) -> None:
    page = client.get("/analysis")
    assert page.status_code == 200 and 'id="an-moves"' in page.text
    r = post(client, "view", {"start": None, "moves": OPENING})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["position"] == Game.from_moves(OPENING).position() and data["ply"] == 3
    assert data["labels"] == ["1.", "1...", "2."] and data["first"] == "south"
    assert data["game"]["towers"] == {"d2": ["5R"], "d3": ["1G", "2Y"]} and data["game"]["turn"] == "north"
    # from a position with North to move, numbering starts at 1...
    start = Game.from_moves(["5R@d2"]).position()
    data = post(client, "view", {"start": start, "moves": ["1G@d3", "2Y@d3"]}).json()
    assert data["labels"] == ["1...", "2."] and data["first"] == "north"


def test_bad_paths_are_refused_with_the_move_and_the_reason(client: TestClient) -> None:
    r = post(client, "view", {"moves": ["5R@d2", "5R@d3"]})
    assert r.status_code == 400 and r.json()["error"] == "illegal_move"
    assert r.json()["message"].startswith("move 1... '5R@d3' cannot be played")
    for body, code in (
        ({"start": "nonsense"}, "bad_position"),
        ({"moves": "5R@d2"}, "bad_request"),
        ({"moves": ["x" * 40]}, "illegal_move"),
        ({"moves": ["pass"] * 201}, "bad_request"),
        ([1, 2], "bad_request"),
    ):
        r = post(client, "view", body)
        assert r.status_code == 400 and r.json()["error"] == code, (body, r.text)
    r = client.post("/api/analysis/view", content=b"{not json")
    assert r.status_code == 400 and r.json()["error"] == "bad_json"
    # numbers json.loads takes but no field means (a 5,000-digit integer was a 500 elsewhere, issue 22)
    for raw in (b'{"moves": [], "start": ' + b"9" * 5000 + b"}", b'{"start": NaN}', b'{"x": Infinity}'):
        r = client.post("/api/analysis/view", content=raw)
        assert r.status_code == 400 and r.json()["error"] == "bad_json", (raw[:30], r.text)


def test_an_analysis_starts_from_a_position_a_record_or_a_game(client: TestClient) -> None:
    game = Game.from_moves(OPENING)
    assert post(client, "load", {"position": game.position()}).json() == {"start": game.position(), "moves": []}
    from jericho_game.record import write_record

    rec = write_record(game)
    chain = {"move": "2Y@d3", "children": []}
    for mv in ("1G@d3", "5R@d2"):
        chain = {"move": mv, "children": [chain]}
    assert post(client, "load", {"record": rec}).json() == {"start": None, "moves": OPENING, "tree": [chain]}
    g = create(client, mode="hotseat")
    with connect(client, g["id"]) as raw:
        ws = seat(raw, g["token"], "both")
        for i, mv in enumerate(OPENING):
            ws.send(type="move", move=mv, ply=i)
            ws.until("ack")
    assert post(client, "load", {"game": g["id"]}).json() == {"start": None, "moves": OPENING}
    for body, status, code in (
        ({"position": "d2:5R nonsense"}, 400, "bad_position"),
        ({"record": "1. 5R@d2 5R@d3 *"}, 400, "bad_record"),
        ({"game": "nosuchgame"}, 404, "unknown_game"),
        ({}, 400, "bad_request"),
        ({"position": game.position(), "record": rec}, 400, "bad_request"),
    ):
        r = post(client, "load", body)
        assert (r.status_code, r.json()["error"]) == (status, code), (body, r.text)


def test_the_engine_is_no_longer_asked_by_request(client: TestClient) -> None:
    # the evaluation streams over /ws/analysis (tests/web/learn/test_analysis_stream.py)
    r = post(client, "evaluate", {"moves": OPENING, "sims": 200})
    assert r.status_code in (404, 405)


def test_the_line_downloads_as_a_record_that_reads_back(client: TestClient) -> None:
    r = post(client, "record", {"moves": OPENING})
    assert r.status_code == 200 and "jericho-analysis.jgn" in r.headers["content-disposition"]
    assert [str(m) for m in read_record(r.text).moves] == OPENING
    start = Game.from_moves(["5R@d2"]).position()
    r = post(client, "record", {"start": start, "moves": ["1G@d3"]})
    rec = read_record(r.text)
    assert rec.tags["Position"] == start and [str(m) for m in rec.moves] == ["1G@d3"]


def test_a_tree_of_variations_is_exported_and_loaded_back(client: TestClient) -> None:
    tree = [
        {
            "move": "5R@d2",
            "children": [
                {"move": "1G@d3", "children": [{"move": "2Y@d3", "children": []}]},
                {
                    "move": "4B@c3",
                    "children": [
                        {"move": "3W@e2", "children": []},
                        {"move": "2W@c3", "children": []},
                    ],
                },
            ],
        },
    ]
    r = post(client, "record", {"tree": tree})
    assert r.status_code == 200, r.text
    assert "1. 5R@d2 1G@d3 (1... 4B@c3 2. 3W@e2 (2. 2W@c3)) 2. 2Y@d3 *" in r.text
    rec = read_record(r.text)
    assert [str(m) for m in rec.moves] == ["5R@d2", "1G@d3", "2Y@d3"] and rec.variations[0].ply == 2
    loaded = post(client, "load", {"record": r.text}).json()
    assert loaded["tree"] == tree and loaded["moves"] == ["5R@d2", "1G@d3", "2Y@d3"]
    bad = [{"move": "5R@d2", "children": [{"move": "1G@d3", "children": []}, {"move": "5R@d2", "children": []}]}]
    r = post(client, "record", {"tree": bad})
    assert r.status_code == 400 and r.json()["error"] == "illegal_move" and "1... 5R@d2" in r.json()["message"]
    for body in ({"tree": "5R@d2"}, {"tree": [{"move": 5}]}, {"tree": [{"move": "5R@d2"}] * 601}):
        r = post(client, "record", body)
        assert r.status_code == 400 and r.json()["error"] == "bad_request", (body, r.text)
