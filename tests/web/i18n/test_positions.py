"""A bad position text said to a player (issue 52, web/i18n/positions.py): every sentence the engine
can write about a position text becomes a plain one naming the part at fault, in English and French,
through the analysis board's and the game search's answers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from jericho_game.errors import PositionError
from jericho_game.game import Game
from jericho_game.web.i18n import error_text, positions
from jericho_game.web.server import create_app

START = "- 1RYGBW2RYGBW3RYGBW4RYGBW5RYGBW 1RYGBW2RYGBW3RYGBW4RYGBW5RYGBW south - 0 *"
# after 5R@d2 1G@d3 2Y@d3: North to move
AFTER = "d2:5R,d3:1G2Y 1RYGBW2RGBW3RYGBW4RYGBW5YGBW 1RYBW2RYGBW3RYGBW4RYGBW5RYGBW north 2Y@d3 0 *"
FULL = "1RYGBW2RYGBW3RYGBW4RYGBW5RYGBW"
FIVE_PLACED = "1YGBW2RGBW3RYBW4RYGW5RYGB"  # South's reserve without 1R 2Y 3G 4B 5W

#: One bad text for each of the engine's sentences (parse_position's checks, in its order).
BAD = [
    "d2:5R south",
    AFTER.replace("d2:5R,", "d2,"),
    AFTER.replace("d2:5R", "z9:5R"),
    AFTER.replace("d3:1G2Y", "d2:1G2Y"),
    AFTER.replace("d2:5R", "d2:5R1"),
    AFTER.replace("d2:5R", "d2:9R"),
    AFTER.replace("d3:1G2Y", "d3:1G1Y"),
    AFTER.replace("d3:1G2Y", "d3:1G2G"),
    f"d3:1R2Y3G4B5W {FIVE_PLACED} {FULL} south - 0 *",
    START.replace(" 1RYGBW", " 6RYGBW", 1),
    START.replace(" 1RYGBW", " R1YGBW", 1),
    START.replace(" 1RYGBW", " 1XRYGBW", 1),
    START.replace(" 1RYGBW", " 1RRYGBW", 1),
    START.replace(" 1RYGBW", " 1YGBW", 1),
    START.replace("south", "east"),
    START.replace(" 0 ", " 3 "),
    START.replace("*", "maybe"),
    AFTER.replace(" 0 ", " 1 "),
    AFTER.replace("2Y@d3", "2Yd3"),
    AFTER.replace("2Y@d3", "1G@d3"),
    AFTER.replace("2RGBW", "2RYGBW").replace("1RYBW2RYGBW", "1RYBW2RGBW"),  # 2Y placed, still South's
    START.replace(" 0 ", " 2 "),
    START.replace(" 0 *", " 2 south"),
    START.replace("*", "south"),
    AFTER.replace("*", "draw"),
]


def engine(text: str) -> str:
    with pytest.raises(PositionError) as caught:
        Game.from_position(text)
    return str(caught.value)


#: The engine's sentence for a win by seven monoliths with the loser to move (a position that is long
#: to build by hand), as position.py writes it.
WRITTEN = [
    "result: south won by the seven-monolith rule, which ends the game after north's turn, so turn must be south",
]


def test_every_sentence_of_the_engine_is_said_plainly_in_both_languages() -> None:
    said: dict[str, str] = {}
    for sentence in [engine(text) for text in BAD] + WRITTEN:
        plain = positions.explain(sentence)
        assert plain != positions.GENERAL, sentence
        assert not re.search(r"\bexpected\b|\bfields?\b|\bcell:pieces\b|\{", plain), plain  # no developer words
        french = error_text("bad_position", plain, "fr")
        assert french != plain and "{" not in french, (plain, french)
        assert error_text("bad_position", plain, "en") == plain
        said[sentence] = plain
    # every player's sentence is reached by one of the bad texts
    reached = {next(m for p, m in positions.RULES if p.fullmatch(s)) for s in said}
    assert reached == {m for _, m in positions.RULES}, {m for _, m in positions.RULES} - reached


def test_an_unknown_sentence_is_the_general_one() -> None:
    assert positions.explain("something else went wrong") == positions.GENERAL
    assert error_text("bad_position", positions.GENERAL, "fr") == "Le texte de cette position est illisible."


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "g.sqlite3"))) as c:
        yield c


def test_the_analysis_board_and_the_search_answer_in_the_players_words(client: TestClient) -> None:
    bad = AFTER.replace("d2:5R", "z9:5R")
    r = client.post("/api/analysis/load", json={"position": bad})
    assert r.status_code == 400
    assert r.json() == {"error": "bad_position", "message": "The towers: there is no cell “z9” on the board."}
    r = client.post("/api/analysis/load?lang=fr", json={"position": bad})
    assert r.json()["message"] == "Les tours : il n’y a pas de case « z9 » sur le plateau."
    r = client.post("/api/analysis/view", json={"start": START.replace("south", "east"), "moves": []})
    assert r.json()["message"] == "Whose turn it is: write south or north, not “east”."
