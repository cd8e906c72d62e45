"""The site's pages over HTTP (jericho_game.web.site.pages, jericho_game.web.i18n): one layout, the
language of each request, the HTML 404, compression, the manifest and the translation catalogs."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("babel")
pytest.importorskip("jinja2")

from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir  # noqa: E402
from babel.messages.frontend import parse_mapping_cfg  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from jericho_game.web import i18n  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.site import pages

ROOT = Path(__file__).resolve().parents[3]
PAGES = [
    "/",
    "/g/nosuchgame",
    "/rules",
    "/learn",
    "/games",
    "/login",
    "/signup",
    "/leaderboard",
    "/players/ada",
    "/players/ada/games",
    "/players/ada/stats",
    "/analysis",
    "/puzzles",
    "/puzzles/p1",
    "/unsubscribe?u=x&kind=invite",
]
FR = {"Accept-Language": "fr-FR,fr;q=0.9,en;q=0.8"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    db = str(tmp_path_factory.mktemp("pages") / "games.sqlite3")
    with TestClient(create_app(db, ai_processes=0)) as c:
        yield c


class Text(HTMLParser):
    """The visible text of a page (not scripts or styles), and each element's attributes by id."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[str] = []
        self.ids: dict[str, dict[str, str | None]] = {}
        self.skip = 0
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if a.get("id"):
            self.ids[str(a["id"])] = a
        if tag in ("script", "style"):
            self.skip += 1
        for name in ("title", "aria-label", "placeholder"):  # text people meet too
            if a.get(name):
                self.chunks.append(str(a[name]))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip and data.strip():
            self.chunks.append(data.strip())


def parse(html: str) -> Text:
    p = Text()
    p.feed(html)
    return p


def heading_of_new_game(html: str) -> str:
    form = html.split('<form id="new-game"', 1)[1]
    return re.search(r"<h2>(.*?)</h2>", form, re.S).group(1).strip()  # type: ignore[union-attr]


# -- the layout --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", PAGES)
def test_every_page_has_the_one_layout(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = parse(r.text)
    # the same header everywhere: navigation, account link, the three switches, the manifest
    links = ("nav-new", "nav-learn", "nav-rules", "account-nav")
    for id_ in links + (("nav-games", "nav-board") if not path.startswith("/g/") else ()):
        assert id_ in page.ids, (path, id_)
    for id_ in ("btn-contrast", "btn-theme", "btn-lang"):
        assert page.ids[id_].get("aria-pressed") is not None or id_ == "btn-lang", (path, id_)
    assert ("link", {"rel": "manifest", "href": "/manifest.webmanifest"}) in page.tags
    assert any(t == "script" and a.get("src") == "/static/layout.js" for t, a in page.tags)
    assert r.headers["cache-control"] == "no-cache"


def test_the_current_page_is_marked_in_the_navigation(client: TestClient) -> None:
    assert parse(client.get("/games").text).ids["nav-games"].get("aria-current") == "page"
    assert parse(client.get("/leaderboard").text).ids["nav-board"].get("aria-current") == "page"
    assert parse(client.get("/").text).ids["nav-games"].get("aria-current") is None


def test_an_unknown_page_is_an_html_404_in_the_layout(client: TestClient) -> None:
    r = client.get("/foo")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")
    page = parse(r.text)
    assert "not-found" in page.ids and "nav-new" in page.ids
    assert "Page not found" in page.chunks
    fr = client.get("/no/such/page", headers=FR)
    assert fr.status_code == 404 and "Page introuvable" in parse(fr.text).chunks
    assert '<html lang="fr">' in fr.text


def test_the_api_keeps_its_json_errors(client: TestClient) -> None:
    for path in ("/api/nothing", "/api/games/nosuchgame"):
        r = client.get(path)
        assert r.status_code == 404 and r.headers["content-type"].startswith("application/json"), path
        assert r.json()["error"] in ("not_found", "unknown_game")
    r = client.post("/api/games", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"] == "bad_json"


def test_responses_are_compressed(client: TestClient) -> None:
    for path in ("/", "/static/app.js", "/static/style.css", "/api/topology"):
        r = client.get(path, headers={"Accept-Encoding": "gzip"})
        assert r.headers.get("content-encoding") == "gzip", path
        assert "accept-encoding" in r.headers.get("vary", "").lower(), path
    # the body really is gzip: httpx has decoded it, and the raw size is smaller
    raw = client.get("/static/app.js", headers={"Accept-Encoding": "gzip"}).content
    assert len(gzip.compress(raw)) < len(raw) / 2
    plain = client.get("/static/app.js", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers


# -- languages ---------------------------------------------------------------------------------


def test_french_from_accept_language(client: TestClient) -> None:
    r = client.get("/", headers={"Accept-Language": "fr-FR"})
    assert '<html lang="fr">' in r.text
    assert heading_of_new_game(r.text) == "Nouvelle partie"
    assert "Vary" in r.headers and "accept-language" in r.headers["vary"].lower()
    en = client.get("/", headers={"Accept-Language": "en-GB,en;q=0.9"})
    assert '<html lang="en">' in en.text and heading_of_new_game(en.text) == "New game"
    # a language we do not have: English; French preferred after German: French
    assert '<html lang="en">' in client.get("/", headers={"Accept-Language": "de"}).text
    assert '<html lang="fr">' in client.get("/", headers={"Accept-Language": "de, fr;q=0.5, en;q=0.1"}).text


def test_the_choice_beats_the_browser_and_is_remembered(tmp_path: Path) -> None:
    with TestClient(create_app(str(tmp_path / "g.sqlite3"), ai_processes=0)) as c:
        r = c.get("/?lang=fr", headers={"Accept-Language": "en"})
        assert '<html lang="fr">' in r.text
        assert c.cookies.get(i18n.COOKIE) == "fr"  # remembered: the next page, without the query
        assert '<html lang="fr">' in c.get("/games", headers={"Accept-Language": "en"}).text
        c.cookies.clear()
        c.cookies.set(i18n.COOKIE, "en")
        assert '<html lang="en">' in c.get("/games", headers=FR).text
        c.cookies.clear()
        c.cookies.set(i18n.COOKIE, "xx")  # nonsense is ignored
        assert '<html lang="fr">' in c.get("/games", headers=FR).text


def test_accept_language_parsing() -> None:
    assert i18n.from_accept_language("fr-CA") == "fr"
    assert i18n.from_accept_language("en;q=0.4, fr;q=0.8") == "fr"
    assert i18n.from_accept_language("fr;q=0, en") == "en"
    assert i18n.from_accept_language("*") is None
    assert i18n.from_accept_language("garbage;q=x,,;") is None
    assert i18n.from_accept_language(None) is None
    assert i18n.choose(None, None, "de") == "en"


@pytest.mark.parametrize("path", PAGES)
def test_no_english_is_left_on_a_french_page(client: TestClient, path: str) -> None:
    """Rendered with every message translated to nothing, a page shows no words at all: each
    text of the templates goes through the catalog (a word written outside _() would be left)."""
    empty = {"gettext": lambda s: "", "ngettext": lambda s, p, n: "", "pgettext": lambda c, s: "", "_": lambda s: ""}
    original = pages.context

    def blank(*args: object, **kwargs: object) -> dict[str, object]:
        return {**original(*args, **kwargs), **empty}  # type: ignore[arg-type]

    pages.context = blank  # type: ignore[assignment]
    try:
        html = client.get(path).text
    finally:
        pages.context = original  # type: ignore[assignment]
    allowed = {"Jericho", "◐", "☾", "⚙", "FR", "Français", "English", "EN", "0", "0 / 0", "Jericho ·"}
    left = [c for c in parse(html).chunks if c not in allowed and re.search(r"[A-Za-z]{2,}", c)]
    assert left == [], f"{path}: text outside the catalog: {left}"


def test_french_pages_are_in_french(client: TestClient) -> None:
    text = " ".join(parse(client.get("/", headers=FR).text).chunks)
    for words in ("Nouvelle partie", "monolithes", "alignements", "Votre réserve", "Passer", "Salon"):
        assert words in text
    assert "Apprendre à jouer" in client.get("/learn", headers=FR).text
    assert "Connexion" in client.get("/login", headers=FR).text
    assert "Créer un compte" in client.get("/signup", headers=FR).text


def test_the_analysis_board_and_the_puzzles_are_pages_of_the_layout(client: TestClient) -> None:
    """Once static files without the header; now templates: the French page, its scripts' French."""
    board = client.get("/analysis", headers=FR)
    assert board.status_code == 200 and '<html lang="fr">' in board.text
    ids = parse(board.text).ids
    for id_ in ("an-engine", "an-moves", "an-tray", "board", "btn-theme", "btn-lang", "account-nav"):
        assert id_ in ids, id_
    assert "Plateau d’analyse" in board.text and "Lancer le moteur" in board.text
    blob = json.loads(board.text.split('id="i18n-catalog">', 1)[1].split("</script>", 1)[0])
    assert blob["Turn the engine off"] == "Éteindre le moteur"
    assert blob["Solved! {move} was the only move. {theme}."].startswith("Résolu !")
    assert blob["{mark}: {side}'s winning chance fell by {points}"].startswith("{mark} : les chances de gain")
    puzzle = client.get("/puzzles/abc", headers=FR)
    assert puzzle.status_code == 200 and "Problème suivant" in puzzle.text
    assert 'href="/analysis"' in puzzle.text and "btn-analyse" in parse(puzzle.text).ids
    assert "Résoudre des problèmes" in client.get("/", headers=FR).text  # the home page's link to them
    # the API routes stayed where they were
    assert client.get("/api/puzzles/nosuchpuzzle").status_code == 404
    assert client.post("/api/analysis/view", json={"start": None, "moves": []}).status_code == 200


def test_the_puzzle_pages_words_are_the_servers() -> None:
    """puzzles.js says the theme and why a move is wrong in the page's language: its English
    messages are the server's (jericho_game.ai.puzzles.THEME_NAMES, web/learn/puzzles.py), word for word."""
    from types import SimpleNamespace

    from jericho_game.ai.puzzles import THEME_NAMES
    from jericho_game.web.learn.puzzles import _wrong_words

    js = (ROOT / "src" / "jericho_game" / "web" / "site" / "static" / "puzzles.js").read_text(encoding="utf-8")
    for text in THEME_NAMES.values():
        assert f't("{text}")' in js, text
    for theme in THEME_NAMES:
        for reply in ("{reply}", None):
            words = _wrong_words(SimpleNamespace(theme=theme), "{move}", reply)  # type: ignore[arg-type]
            assert f't("{words}"' in js, words


def test_a_log_in_link_never_leads_off_the_site(client: TestClient) -> None:
    """The page's ``next`` is checked on the server too: a foreign one is dropped (303)."""
    for path in ("/login", "/signup"):
        r = client.get(f"{path}?next=//evil.example/x", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == path
        assert client.get(f"{path}?next=/games", follow_redirects=False).status_code == 200


def test_the_service_worker_keeps_the_new_scripts(client: TestClient) -> None:
    worker = client.get("/sw.js").text
    for script in ("analysis.js", "puzzles.js", "ratingchange.js", "notation.js", "review.js"):
        assert f'"/static/{script}"' in worker, script
    assert "analysis.html" not in worker and "puzzles.html" not in worker  # templates, not static files


def test_the_page_scripts_get_the_same_catalog(client: TestClient) -> None:
    fr = parse(client.get("/games", headers=FR).text)
    html = client.get("/games", headers=FR).text
    blob = json.loads(html.split('id="i18n-catalog">', 1)[1].split("</script>", 1)[0])
    assert blob["Resume"] == "Reprendre" and blob["Log in"] == "Connexion"
    assert blob == client.get("/i18n/fr.json").json()
    assert client.get("/i18n/en.json").json() == {}  # the scripts are written in English
    assert client.get("/i18n/xx.json").status_code == 404
    assert "i18n-catalog" in fr.ids


def test_server_errors_are_translated_and_keep_their_code(client: TestClient) -> None:
    en = client.get("/api/games/nosuchgame")
    fr = client.get("/api/games/nosuchgame", headers=FR)
    assert en.json()["error"] == fr.json()["error"] == "unknown_game"
    assert fr.json()["message"] == "Il n’y a pas de partie à cette adresse."
    assert en.json()["message"] != fr.json()["message"]
    bad = client.post("/api/games", content=b"[", headers={**FR, "Content-Type": "application/json"})
    assert bad.json() == {"error": "bad_json", "message": "La requête n’est pas du JSON valable."}
    # the analysis board's API too (its own BadRequest, web/learn/analysis_board.py)
    body = {"start": None, "moves": ["9Z@z9"]}
    en, fr = client.post("/api/analysis/view", json=body), client.post("/api/analysis/view", json=body, headers=FR)
    assert en.status_code == fr.status_code == 400 and en.json()["error"] == fr.json()["error"]
    assert "9Z@z9" in en.json()["message"] and fr.json()["message"] != en.json()["message"]
    assert fr.json() == {"error": "illegal_move", "message": "Ce coup n’est pas permis dans cette position."}


def test_every_error_code_has_a_text() -> None:
    """Each code the server raises has its human text in :data:`i18n.ERRORS` (and so in French)."""
    src = (ROOT / "src" / "jericho_game" / "web").glob("*.py")
    codes = set()
    for f in src:
        codes |= set(re.findall(r'(?:ClientError|BadRequest)\(\s*"([a-z_]+)"', f.read_text(encoding="utf-8")))
    assert codes and codes <= set(i18n.ERRORS), sorted(codes - set(i18n.ERRORS))


# -- the catalogs ------------------------------------------------------------------------------


def extracted() -> dict[tuple[str | None, str], list[str]]:
    """Every user-facing message in the sources, by (context, message), extracted with Babel as
    docs/web.md says."""
    with (ROOT / "babel.cfg").open(encoding="utf-8") as f:
        method_map, options_map = parse_mapping_cfg(f)
    keywords = {**DEFAULT_KEYWORDS, "t": None, "N_": None}
    out: dict[tuple[str | None, str], list[str]] = {}
    for filename, _line, message, _comments, context in extract_from_dir(
        str(ROOT), method_map, options_map, keywords=keywords
    ):
        if isinstance(message, tuple):
            message = message[0]
        out.setdefault((context, message), []).append(filename)
    return out


def catalog(lang: str) -> dict[tuple[str | None, str], str]:
    with (i18n.LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po").open("rb") as f:
        return {(m.context, str(m.id)): ("" if m.fuzzy else str(m.string)) for m in read_po(f) if m.id}


def test_every_message_is_in_the_french_catalog() -> None:
    found = extracted()
    assert len(found) > 150 and (None, "New game") in found and (None, "Resume") in found  # templates, scripts
    assert ("nav", "New game") in found and (None, "The game is over.") in found  # contexts, errors
    fr = catalog("fr")
    missing = sorted((str(c), m) for c, m in found if not fr.get((c, m)))
    assert missing == [], f"messages without a French translation (docs/web.md, translations): {missing}"
    assert sorted((str(c), m) for c, m in set(found) - set(catalog("en"))) == []  # the English catalog too


def test_french_keeps_the_placeholders() -> None:
    for (_, msgid), msgstr in catalog("fr").items():
        assert set(re.findall(r"\{\w+\}", msgid)) == set(re.findall(r"\{\w+\}", msgstr)), msgid
        assert set(re.findall(r"<[^>]+>", msgid)) == set(re.findall(r"<[^>]+>", msgstr)), msgid


def test_french_uses_the_games_words() -> None:
    fr = {m: s for (c, m), s in catalog("fr").items() if c is None}
    assert fr["New game"] == "Nouvelle partie"
    assert fr["Pass"] == "Passer" and fr["Tower"] == "Tour" and "réserve" in fr["Your pieces"].lower()
    assert "monolithes" in fr["South's monoliths"].lower()
    assert "alignement" in fr["Hover an alignment to see its confrontation; pick a piece, then a cell."]


def test_the_tutorial_speaks_french(client: TestClient) -> None:
    en = client.get("/api/tutorial").json()["lessons"]
    fr = client.get("/api/tutorial", headers=FR).json()["lessons"]
    assert [x["id"] for x in en] == [x["id"] for x in fr]
    assert en[0]["title"] == "1. Placing a piece" and fr[0]["title"] == "1. Poser une pièce"
    assert all(f["text"] != e["text"] and f["goal"] != e["goal"] for e, f in zip(en, fr, strict=True))
    placed = client.post("/api/tutorial/placing", json={"moves": [], "try": "5R@d2"}, headers=FR).json()
    assert placed["done"] and placed["feedback"].startswith("Vous avez posé 5R en d2.")
    refused = client.post("/api/tutorial/clashes", json={"moves": [], "try": "3R@c2"}, headers=FR).json()
    assert not refused["legal"] and refused["feedback"].startswith("Refusé : ")
    english = client.post("/api/tutorial/placing", json={"moves": [], "try": "5R@d2"}).json()
    assert english["feedback"].startswith("You placed 5R on d2.")  # a French request changed nothing for others


def test_the_rules_page_speaks_french(client: TestClient) -> None:
    en = client.get("/api/rules.md").text
    fr = client.get("/api/rules.md", headers=FR).text
    assert en.startswith("# How to play Jericho") and fr.startswith("# Comment jouer à Jericho")
    # the same diagrams (positions) and the same sections: a translation, not a summary
    assert re.findall(r"^towers: .*$", en, re.M) == re.findall(r"^towers: .*$", fr, re.M)
    assert len(re.findall(r"^## ", en, re.M)) == len(re.findall(r"^## ", fr, re.M))
    assert en.count("|") == fr.count("|")
    assert "accept-language" in client.get("/api/rules.md").headers["vary"].lower()
    # the package ships a copy (installed packages have no docs/)
    shipped = ROOT / "src" / "jericho_game" / "web" / "site" / "static" / "rules.fr.md"
    assert shipped.read_text(encoding="utf-8") == (ROOT / "docs" / "rules.fr.md").read_text(encoding="utf-8")


def test_websocket_errors_are_translated_and_keep_their_code(client: TestClient) -> None:
    g = client.post("/api/games", json={"mode": "hotseat"}).json()
    replies = {}
    for lang, headers in (("en", {}), ("fr", FR)):
        with client.websocket_connect(f"/ws/{g['id']}", headers=headers) as ws:
            while json.loads(ws.receive_text())["type"] != "state":
                pass
            ws.send_text(json.dumps({"type": "move", "move": "5R@d2"}))  # a spectator may not move
            while (msg := json.loads(ws.receive_text()))["type"] != "error":
                pass
            replies[lang] = msg
    assert replies["en"]["code"] == replies["fr"]["code"] == "not_a_player"
    assert replies["fr"]["message"] == "Vous ne jouez pas dans cette partie."
    assert replies["en"]["message"] != replies["fr"]["message"]


def test_every_t_call_of_the_scripts_is_extracted() -> None:
    """Babel's extractor misses some calls (a t() nested in another's arguments): each t("...")
    literal of the page scripts must be among the extracted messages, hence in the catalogs."""
    found = {m for _, m in extracted()}
    literal = re.compile(r'\bt\(\s*"((?:[^"\\]|\\.)*)"(?!\s*\+)')
    missed = []
    for f in sorted((ROOT / "src" / "jericho_game" / "web" / "site" / "static").glob("*.js")):
        for m in literal.finditer(f.read_text(encoding="utf-8")):
            text = json.loads(f'"{m.group(1)}"')
            if text not in found:
                missed.append(f"{f.name}: {text}")
    assert missed == []


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_each_catalog_is_well_formed(lang: str) -> None:
    # every msgid has its msgstr (a merge once left three without): the parser's lenient mode
    # only prints a warning and drops the entry, so read it strictly here
    from babel.messages.pofile import read_po

    locale = Path(__file__).parents[3] / "src" / "jericho_game" / "web" / "i18n" / "locale"
    po = locale / lang / "LC_MESSAGES" / "messages.po"
    with po.open("rb") as fh:
        catalog = read_po(fh, abort_invalid=True)
    assert len(catalog) > 500
