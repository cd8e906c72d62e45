"""The rules engine's sentences in the player's language (jericho_game.web.i18n.reasons and
static/reasons.js): every sentence the engine writes on a confrontation or a refused move is said
in French with the game's words and no English left, the server and the page scripts say it
alike, and the WebSocket, the tutorial and the puzzles use it (issue 24 point 1)."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator

import pytest

pytest.importorskip("babel")

from starlette.testclient import TestClient  # noqa: E402

from jericho_game import Game  # noqa: E402
from jericho_game.pieces import PIECES  # noqa: E402
from jericho_game.web import i18n  # noqa: E402
from jericho_game.web.i18n import reasons
from jericho_game.web.server import create_app  # noqa: E402

FR = {"Accept-Language": "fr-FR"}
# English words of the engine's sentences: none may be left in a French one
ENGLISH = re.compile(
    r"\b(vs|leads?|nobody|tower|pieces?|beats?|single|equal|sizes?|top|shorter|taller|strong|side|"
    r"South|North|south|north|clash|reserve|already|placed|full|holds?|game|over|won|drawn|cannot|"
    r"pass|placement|available|asymmetry|copies|shared|alignment|malformed|expected|unknown|cells?|"
    r"empty|red|yellow|green|blue|white|colours?|the|an|of|on|in|is|and|no)\b"
)


def engine_sentences(games: int = 40, seed: int = 7) -> tuple[set[str], set[str]]:
    """What the engine says in random games: every confrontation's reason, and why each move
    that is not legal is refused (with a few malformed ones)."""
    rng = random.Random(seed)
    confrontations: set[str] = set()
    refusals: set[str] = {
        "the game is over (it was drawn): no more moves",
        "the game is over (south won): no more moves",
    }
    cells = [c.name for c in Game().topology.cells]
    for _ in range(games):
        game = Game()
        while game.outcome() is None:
            for a in game.leaders():
                confrontations.add(game.confrontation(a).reason)
            if rng.random() < 0.2:
                for text in [f"{p}@{rng.choice(cells)}" for p in rng.sample(PIECES, 6)] + ["pass"]:
                    why = game.why_illegal(text)
                    if why:
                        refusals.add(why)
            game.play(rng.choice(list(game.legal_moves())))
        refusals.add(game.why_illegal("5R@d2") or "")
    for text in ("zz", "9R@d2", "5Q@d2", "5R@z9", "5R@"):
        refusals.add(Game().why_illegal(text) or "")
    refusals.discard("")
    return confrontations, refusals


@pytest.fixture(scope="module")
def sentences() -> tuple[set[str], set[str]]:
    return engine_sentences()


def test_every_sentence_of_the_engine_is_said_in_french(sentences: tuple[set[str], set[str]]) -> None:
    confrontations, refusals = sentences
    assert len(confrontations) > 100 and len(refusals) > 20  # the grammar is well covered
    kinds = {re.sub(r"[A-Z]?\d\w*|\b[a-g]\d\b", "#", s) for s in refusals}
    assert any("asymmetry" in k for k in kinds) and any("colour clash" in k for k in kinds), kinds
    left = {}
    for s in sorted(confrontations | refusals):
        fr = reasons.translate(s, "fr")
        if fr is None or ENGLISH.search(re.sub(r"'[^']*'|«[^»]*»|\b[1-5][RYGBW]\b|\S+@\S+|\([^)]*\d[^)]*\)", "", fr)):
            left[s] = fr
    assert left == {}, left
    d = reasons.translate(
        "South 5R vs North 1G/2Y: North leads, a tower of two or more pieces beats a single piece", "fr"
    )
    assert d == "Sud 5R contre Nord 1G/2Y : Nord mène, une tour de deux pièces ou plus bat une pièce seule"
    clash = reasons.translate("4R@d2: colour clash, the tower on d2 already holds a red piece (5R)", "fr")
    assert clash == "4R@d2 : même couleur, la tour en d2 a déjà une pièce rouge (5R)"


def test_english_is_the_engines_own_sentence(sentences: tuple[set[str], set[str]]) -> None:
    confrontations, refusals = sentences
    for s in confrontations:
        assert reasons.translate(s, "en") == s
    for s in refusals:
        assert reasons.translate(s, "en") == s.replace("south", "South").replace("north", "North")
    assert reasons.translate("something else entirely", "fr") is None


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path_factory.mktemp("r") / "g.sqlite3"), ai_processes=0)) as c:
        yield c


def test_a_refused_move_is_explained_in_french_over_the_websocket(client: TestClient) -> None:
    g = client.post("/api/games", json={"mode": "hotseat"}).json()
    token = g["token"]
    with client.websocket_connect(f"/ws/{g['id']}", headers=FR) as ws:
        ws.send_text(json.dumps({"type": "hello", "token": token}))
        ws.send_text(json.dumps({"type": "move", "move": "5R@d2"}))
        ws.send_text(json.dumps({"type": "move", "move": "4R@d2"}))  # North: the tower holds a red piece
        while (msg := json.loads(ws.receive_text()))["type"] != "error":
            pass
    assert msg["code"] == "illegal"
    assert msg["message"] == "4R@d2 : même couleur, la tour en d2 a déjà une pièce rouge (5R)"


def test_the_tutorial_and_the_puzzles_quote_the_engine_in_french(client: TestClient) -> None:
    refused = client.post("/api/tutorial/clashes", json={"moves": [], "try": "3R@c2"}, headers=FR).json()
    assert not refused["legal"] and refused["feedback"].startswith("Refusé : 3R@c2 : ")
    assert not ENGLISH.search(re.sub(r"\S+@\S+|\(\w+\)|\b[a-g]\d\b", "", refused["feedback"])), refused["feedback"]
    pid = client.get("/api/puzzles/next").json()["id"]
    p = client.get(f"/api/puzzles/{pid}").json()
    game = Game.from_position(p["position"]) if "position" in p else None
    assert game is not None
    placed = next(c for c, t in game.towers().items() if t)
    top = game.tower(placed)[-1]
    same_size = next(q for q in PIECES if q.size == top.size and q != top)
    answer = client.post(f"/api/puzzles/{pid}/try", json={"moves": [], "try": f"{same_size}@{placed}"}, headers=FR)
    data = answer.json()
    assert data["legal"] is False and data["message"].startswith("Interdit : "), data["message"]
    assert "why" not in data


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_every_translation_of_the_catalog_is_there(lang: str) -> None:
    tr = i18n.translations(lang)
    for _pattern, message, _names in reasons.RULES:
        assert "{" in message or tr.gettext(message)
    if lang == "fr":
        missing = [m for _p, m, _n in reasons.RULES if tr.gettext(m) == m]
        assert missing == []


def test_the_servers_other_messages_are_french(client: TestClient) -> None:
    """The WebSocket's and the lobby's messages that are not a refused move, the tutorial's and the
    last-resort 500's errors: in the request's language, their codes unchanged."""
    from jericho_game.web.site.errors import _body_for

    with client.websocket_connect("/ws/nosuchgame", headers=FR) as ws:
        msg = json.loads(ws.receive_text())
    assert msg["code"] == "unknown_game" and msg["message"] == "Il n’y a pas de partie à cette adresse."
    with client.websocket_connect("/lobby/ws", headers=FR) as ws:
        ws.send_text(json.dumps({"type": "hello"}))
        while (msg := json.loads(ws.receive_text()))["type"] != "error":
            pass
    assert msg["code"] == "bad_message" and msg["message"] == "Ce message n’est pas compris."
    r = client.post("/api/tutorial/placing", json={"moves": ["zz"], "try": "5R@d2"}, headers=FR)
    assert (
        r.status_code == 400 and r.json()["error"] == "illegal" and r.json()["message"] == "Ce coup n’est pas permis."
    )
    scope = {"type": "http", "headers": [(b"accept-language", b"fr-FR")], "query_string": b"", "path": "/"}
    assert json.loads(_body_for(scope)) == {
        "error": "internal",
        "message": "Erreur du serveur : la partie est sauvegardée, réessayez.",
    }
    english = {"type": "http", "headers": [], "query_string": b"", "path": "/"}
    assert json.loads(_body_for(english))["message"].startswith("internal server error")


def test_numbers_and_dates_as_each_language_writes_them() -> None:
    """Babel (CLDR) on the server, as the page scripts' Intl in the browser: the same data."""
    assert i18n.format_number(1234.5, "en") == "1,234.5"
    assert i18n.format_number(1234.5, "fr").replace("\u202f", " ") == "1 234,5"
    when = 1796193600  # 2026-12-02 06:40 UTC
    assert i18n.format_date(when, "en").replace("\u202f", " ") == "Dec 2, 2026, 6:40 AM"
    assert i18n.format_date(when, "fr") == "2 déc. 2026, 06:40"
    assert i18n.format_date(when, "fr", time=False) == "2 déc. 2026"
    assert i18n.format_number(7, "xx") == "7"  # an unknown language: English
