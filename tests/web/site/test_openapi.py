"""The HTTP API's OpenAPI document (``GET /api/openapi.json``) and the fuzzing of every operation.

The document is built from the app's routes (web/site/openapi.py): these tests check that it
holds every route and method of the app and nothing else, and that it is valid OpenAPI 3.1.

:func:`test_fuzz_every_operation` then runs schemathesis over every operation of that document
against the app in-process (positive and negative data, anonymous, logged in with the CSRF token,
and logged in without it; real game, puzzle, tournament, challenge and player ids mixed into the
generated ones), and checks on every answer that:

- nothing answers 500 or more (the fuzz app's queues are large enough that no capacity 503 is due);
- every refusal (4xx) of the API is JSON naming what was wrong: ``{"error": code, "message": text}``
  (a page's refusal is an HTML page), with a status and a content type the document lists;
- nothing is written by a refused request: the row count of every table of the database is the
  same before and after each 4xx (the app's background loops are stopped and its clock frozen, so
  every change is the request's), but for the throttle's rows of a failed log-in or sign-up.

``JERICHO_FUZZ_EXAMPLES`` (default 10) is the number of examples per operation (a quarter of it for
``HEAD``, which is ``GET`` without the body);
``JERICHO_FUZZ_SEED`` a seed for a different run (default: the same examples every run);
``JERICHO_FUZZ_DB=postgresql`` runs it on PostgreSQL (CI's run is on SQLite, within its minute).
"""

from __future__ import annotations

import json
import os
import re
import uuid
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

schemathesis = pytest.importorskip("schemathesis")
openapi_spec_validator = pytest.importorskip("openapi_spec_validator")

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.core import NotSet  # noqa: E402
from sqlalchemy import inspect, text  # noqa: E402
from starlette.routing import Route  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.ai.puzzles import shipped_puzzles  # noqa: E402
from jericho_game.web.accounts.accounts import CSRF_HEADER  # noqa: E402
from jericho_game.web.common import budget as budgeting  # noqa: E402
from jericho_game.web.common.limits import Limits  # noqa: E402
from jericho_game.web.learn import tutorial  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.site import openapi  # noqa: E402
from tests.web.accounts.test_accounts import CHEAP, create, csrf, signup  # noqa: E402

EXAMPLES = int(os.environ.get("JERICHO_FUZZ_EXAMPLES", "10"))
SEED = os.environ.get("JERICHO_FUZZ_SEED")
T0 = 1_800_000_000.0  # the fuzz app's frozen clock
PASSWORD = "correct horse battery fuzz"
SCOPES = ("per_group", "per_account", "per_recipient", "per_pair", "total")


@pytest.fixture()
def app(tmp_path: Path) -> Iterator[Any]:
    app = create_app(str(tmp_path / "games.sqlite3"), ai_processes=-1, password_hasher=CHEAP)
    yield app
    app.state.service.storage.close()


# -- the document --------------------------------------------------------------------------------------


def _app_operations(app: Any) -> set[tuple[str, str]]:
    """Every (method, path) the app answers over HTTP (not its mounts nor its WebSockets)."""
    return {(m, r.path) for r in app.routes if type(r) is Route for m in r.methods or ()}


def test_document_holds_every_route_and_nothing_else(app: Any) -> None:
    with TestClient(app) as client:
        r = client.get(openapi.PATH)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    doc = r.json()
    served = {(m.upper(), path) for path, item in doc["paths"].items() for m in item}
    assert served == _app_operations(app)
    assert openapi.missing(app.routes) == []  # each described, none "not described yet"
    openapi_spec_validator.validate(doc)  # valid OpenAPI 3.1
    # the WebSocket routes and the static files are not in it
    assert not [p for p in doc["paths"] if p.startswith(("/ws/", "/lobby/ws", "/static"))]


def test_an_undescribed_route_is_an_error() -> None:
    async def endpoint(request: Any) -> Any:
        raise AssertionError

    extra = [Route("/api/nothing/{x}", endpoint, methods=["POST"])]
    assert openapi.missing(extra) == ["POST /api/nothing/{x}"]
    with pytest.raises(LookupError, match="POST /api/nothing/{x}"):
        openapi.document(extra)
    # the served document still answers (not a 500), saying the route is not described yet
    served = openapi.document(extra, strict=False)["paths"]["/api/nothing/{x}"]["post"]
    assert served["tags"] == ["undescribed"] and "Not described yet" in served["summary"]


def test_the_documents_parameters_are_the_routes() -> None:
    """Each description's path parameters are its route's (a renamed one cannot go unnoticed)."""
    for (method, path), op in openapi.OPERATIONS.items():
        names = set(re.findall(r"{(\w+)}", path))
        assert set(op.path) <= names, (method, path)
        assert op.session in ("", "read", "change"), (method, path)
        assert not (op.body is not None and method == "GET"), (method, path)


# -- findings of the fuzzing, one test each ---------------------------------------------------------------


def _rows(engine: Any) -> dict[str, int]:
    """The row count of every table (SQLite or PostgreSQL)."""
    names = inspect(engine).get_table_names()
    with engine.connect() as conn:
        return {n: int(conn.execute(text(f'SELECT count(*) FROM "{n}"')).scalar_one()) for n in names}


# the routes whose GET reads and POST changes: Starlette answers HEAD with the same endpoint
HEAD_ROUTES = [
    "/api/tournaments",
    "/api/challenges",
    "/api/account/prefs",
    "/api/notify/settings",
    "/api/games/{id}/review",
    "/api/notify/unsubscribe?u={u}&kind=turn",
]


@pytest.mark.parametrize("route", HEAD_ROUTES)
def test_head_reads_as_get_and_changes_nothing(db: str, route: str) -> None:
    """Found by the fuzzing: a HEAD request ran the POST branch of a GET-and-POST endpoint (``if
    request.method == "GET": read, else: change``), so HEAD tried to create a tournament or a
    challenge, asked for a game's review, and unsubscribed a mail's link: a mail scanner's HEAD
    did what its GET must not (issue 33).  HEAD is GET without the body, and changes nothing."""
    app = create_app(db, ai_processes=-1, password_hasher=CHEAP)
    try:
        with TestClient(app) as c:
            signup(c, "header", "correct horse battery H")
            token = csrf(c)
            game = create(c, mode="hotseat")["id"]
            r = c.post("/api/notify/settings", json={"turn": True}, headers={CSRF_HEADER: token})
            assert r.status_code == 200, r.text
            engine = app.state.service.storage.engine
            with engine.connect() as conn:
                secret = conn.execute(text("SELECT unsub FROM mail_prefs")).scalar_one()
            path = route.format(id=game, u=secret)
            endpoint = next(r.endpoint for r in app.routes if isinstance(r, Route) and r.path == route.split("?")[0])
            said = budgeting.declared(endpoint)
            may_write = set(said.writes.get("HEAD", ())) if said is not None else set()  # e.g. "seen" marks
            before = _rows(engine)
            head = c.head(path, headers={CSRF_HEADER: token}, follow_redirects=False)
            after = _rows(engine)
            assert {t: n for t, n in after.items() if t not in may_write} == {
                t: n for t, n in before.items() if t not in may_write
            }
            assert c.get("/api/notify/settings").json()["kinds"]["turn"] is True  # still subscribed
            get = c.get(path, headers={CSRF_HEADER: token}, follow_redirects=False)
            assert (head.status_code, head.headers.get("content-type")) == (
                get.status_code,
                get.headers.get("content-type"),
            )
            assert head.content == b""
    finally:
        app.state.service.storage.close()


@pytest.mark.parametrize("message", [2**70, -(2**70), 2**31])
def test_closing_a_report_of_an_id_no_message_can_have(db: str, message: int) -> None:
    """Found by the fuzzing: ``POST /api/admin/chat/reports/close {"message": 2**70}`` answered 500
    (SQLite: OverflowError; PostgreSQL's INTEGER ends at 2**31 - 1).  Such an id is no message's:
    nothing is closed, as for any id that names no message (and a report of it over the WebSocket
    finds no message)."""
    app = create_app(db, ai_processes=-1, password_hasher=CHEAP)
    try:
        app.state.accounts.create_account("admin", "correct horse battery A", admin=True)
        with TestClient(app) as c:
            r = c.post(
                "/api/account/login",
                json={"username": "admin", "password": "correct horse battery A"},
                headers={CSRF_HEADER: csrf(c)},
            )
            assert r.status_code == 200, r.text
            r = c.post("/api/admin/chat/reports/close", json={"message": message}, headers={CSRF_HEADER: csrf(c)})
            assert (r.status_code, r.json()) == (200, {"closed": 0})
            assert app.state.chat.store.message(message) is None  # the WebSocket's report looks it up so
    finally:
        app.state.service.storage.close()


NUL_REQUESTS = [
    ("GET", "/api/people/a%00b", None, None),  # a path parameter
    ("GET", "/api/tournaments/a%00b", None, None),
    ("GET", "/api/players/a%00b/stats", None, None),
    ("POST", "/api/notify/unsubscribe?u=a%00b&kind=turn", None, None),  # a query parameter
    ("POST", "/api/account/login", {"username": "a\x00b", "password": "correct horse battery N"}, None),  # JSON
    ("POST", "/api/people/follow", {"username": "a\x00b", "follow": True}, None),
    ("POST", "/api/challenges", {"username": "a\x00b"}, None),
    ("POST", "/api/notify/invite", {"game": "a\x00b", "username": "fuzz"}, None),
    ("POST", "/api/notify/unsubscribe", None, "u=a%00b&kind=turn&confirm=page"),  # a form
]


@pytest.mark.parametrize(("method", "path", "body", "form"), NUL_REQUESTS)
def test_a_nul_character_is_a_400_naming_it(db: str, method: str, path: str, body: Any, form: str | None) -> None:
    """Found by the fuzzing on PostgreSQL (``JERICHO_FUZZ_DB=postgresql``): a NUL character in a
    username, an id or a secret answered 500, PostgreSQL's text holding no NUL (psycopg's DataError),
    e.g. ``POST /api/account/login`` with ``"username": "a\\u0000b"``.  No text of this site holds
    one: a NUL in the address or in a JSON body is refused with 400 ``bad_request`` saying so, before
    any work, on both databases; a form's is no valid secret (404 ``bad_link``)."""
    app = create_app(db, ai_processes=-1, password_hasher=CHEAP)
    try:
        with TestClient(app, raise_server_exceptions=False) as c:
            signup(c, "nulls", "correct horse battery N")
            headers = {CSRF_HEADER: csrf(c)}
            if form is not None:
                headers["content-type"] = "application/x-www-form-urlencoded"
            engine = app.state.service.storage.engine
            before = _rows(engine)
            r = c.request(method, path, json=body, content=form, headers=headers, follow_redirects=False)
            assert _rows(engine) == before
        if form is not None:  # the unsubscribe page's form: an unknown secret, back to the settings
            assert (r.status_code, r.headers["location"]) == (303, "/settings?unsubscribed=invalid")
            return
        assert r.status_code == 400, r.text
        assert r.json()["error"] == "bad_request" and "NUL" in r.json()["message"]
    finally:
        app.state.service.storage.close()


# -- the fuzzing ---------------------------------------------------------------------------------------


def _generous(table: dict[str, Any]) -> dict[str, Any]:
    """Every budget a thousand times larger: the fuzzing goes past the first refusals."""
    out = {}
    for kind, b in table.items():
        out[kind] = replace(b, **{s: getattr(b, s) * 1000 for s in SCOPES if getattr(b, s) is not None})
    return out


@dataclass
class World:
    """The fuzz app's known things (real ids mixed into the generated ones) and its logged-in account."""

    client: Any
    app: Any
    session: str = ""
    csrf: str = ""
    ids: dict[str, list[str]] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    invites: list[str] = field(default_factory=list)
    unsub: str = ""

    def login(self) -> None:
        accounts = self.app.state.accounts
        accounts.set_disabled("fuzzer", False)
        sess, token = accounts.login("fuzzer", PASSWORD, "127.0.0.1")
        self.session, self.csrf = token, sess.csrf

    def logged_in(self) -> bool:
        return self.app.state.accounts.session(self.session) is not None


def _tables(engine: Any) -> list[str]:
    """The names of the database's tables (those created while the app runs too)."""
    query = (
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        if engine.dialect.name == "postgresql"
        else "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    )
    with engine.connect() as conn:
        return [r[0] for r in conn.execute(text(query))]


def _counts(engine: Any) -> dict[str, int]:
    """The row count of every table, in one statement."""
    names = _tables(engine)
    select = ", ".join(f'(SELECT count(*) FROM "{n}")' for n in names)
    with engine.connect() as conn:
        row = conn.execute(text(f"SELECT {select}")).one()
    return dict(zip(names, row, strict=True))


def _build_world(app: Any, client: Any) -> World:
    accounts = app.state.accounts
    accounts.create_account("fuzzer", PASSWORD, admin=True)
    accounts.create_account("other", PASSWORD)
    world = World(client, app)
    world.login()
    _, other = accounts.login("other", PASSWORD, "127.0.0.1")
    other_csrf = accounts.session(other).csrf
    mine = {"Cookie": f"jericho_session={world.session}", "X-CSRF-Token": world.csrf}
    theirs = {"Cookie": f"jericho_session={other}", "X-CSRF-Token": other_csrf}
    games = []
    for spec, headers in (
        ({"mode": "ai", "level": "random"}, mine),
        ({"mode": "hotseat"}, {}),
        ({"mode": "online", "name": "fuzz"}, {}),
        ({"mode": "online", "public": True, "name": "fuzz", "clock": 5}, mine),
        ({"mode": "online", "rated": True}, theirs),
    ):
        r = client.post("/api/games", json=spec, headers=headers)
        assert r.status_code == 201, r.text
        games.append(r.json()["id"])
        world.tokens.append(r.json()["token"])
        if "invite" in r.json():
            world.invites.append(r.json()["invite"])
    r = client.post("/api/tournaments", json={"name": "Fuzz cup", "clock": 3, "starts_in": 5}, headers=mine)
    assert r.status_code == 201, r.text
    tid = r.json()["id"]
    r = client.post("/api/challenges", json={"username": "fuzzer", "clock": 5}, headers=theirs)
    assert r.status_code == 201, r.text
    cid = r.json()["id"]
    world.ids = {
        "/api/games/": games,
        "/g/": games,
        "/api/puzzles/": [p.id for p in shipped_puzzles()[:5]],
        "/puzzles/": [p.id for p in shipped_puzzles()[:2]],
        "/api/tournaments/": [tid],
        "/tournaments/": [tid],
        "/api/challenges/": [cid],
        "lesson": list(tutorial.BY_ID),
        "ply": ["0", "1", "3"],
        "lang": ["en", "fr"],
    }
    world.names = ["fuzzer", "other"]
    r = client.post("/api/notify/settings", json={"turn": True}, headers=mine)
    assert r.status_code == 200, r.text
    with app.state.service.storage.engine.connect() as conn:
        world.unsub = conn.execute(text("SELECT unsub FROM mail_prefs")).scalar_one()
    return world


def _real_path(world: World, path: str, params: dict[str, Any], draw: Any) -> dict[str, Any]:
    """Path parameters with some replaced by real ids (a game, a puzzle, a player...)."""
    out = dict(params)
    for name in params:
        pool: list[str] = []
        if name in ("lesson", "ply", "lang"):
            pool = world.ids[name]
        elif name == "name":
            pool = world.names
        elif name == "id":
            pool = next((v for k, v in world.ids.items() if path.startswith(k)), [])
        if pool and draw(st.booleans()):
            out[name] = draw(st.sampled_from(pool))
    return out


def _real_body(world: World, body: Any, draw: Any) -> Any:
    """A JSON body with some of its known fields replaced by real values (a game, a player, a seat)."""
    if not isinstance(body, dict):
        return body
    out = dict(body)
    pools = {
        "game": world.ids["/api/games/"],
        "username": world.names,
        "token": world.tokens,
        "invite": world.invites,
    }
    for key, pool in pools.items():
        if key in out and draw(st.booleans()):
            out[key] = draw(st.sampled_from(pool))
    return out


def _send(world: World, case: Any, who: str) -> Any:
    """The case sent to the app, as ``who`` (anonymous, the session with or without its CSRF token)."""
    kw = case.as_transport_kwargs(base_url="http://testserver")
    headers = {str(k): str(v) for k, v in (kw.get("headers") or {}).items()}
    content: bytes | None = None
    if "json" in kw:
        content = json.dumps(kw["json"]).encode()
        headers.setdefault("Content-Type", "application/json")
    elif kw.get("data") is not None:
        data = kw["data"]
        content = (
            urlencode(data).encode()
            if isinstance(data, dict)
            else data
            if isinstance(data, bytes)
            else str(data).encode()
        )
    if who != "anonymous":
        headers["Cookie"] = f"jericho_session={world.session}"
        if who == "session":
            headers["X-CSRF-Token"] = world.csrf
    world.client.cookies.clear()  # only what this case sends: the cookies answers set are not kept
    return world.client.request(
        kw["method"], kw["url"], params=kw.get("params"), headers=headers, content=content, follow_redirects=False
    )


#: Tables a refused request may add to: a failed log-in, or a sign-up refused for a taken name, counts
#: in the throttle (that is what the throttle counts: attempts, against guessing and name probing); so
#: does a wrong password closing an account (issue 54: a stolen session cannot guess it freely).
REFUSED_MAY_WRITE = {
    ("POST", "/api/account/login"): {"auth_throttle"},
    ("POST", "/api/account/signup"): {"auth_throttle"},
    ("POST", "/api/account/close"): {"auth_throttle"},
}
#: Tables a thread of the app fills on its own, whatever the requests: the position index of the
#: games that ended (web/people/positionindex.py), not a request's doing.
BACKGROUND = {"game_positions", "positions_indexed"}


def _judge(op: Any, case: Any, response: Any, before: dict[str, int], after: dict[str, int]) -> list[str]:
    """What is wrong with one answer (empty: nothing)."""
    method, path, status = op.method.upper(), op.path, response.status_code
    wrong = []
    if status >= 500:
        wrong.append(f"{status}: {response.text[:300]}")
    if 400 <= status < 500:
        is_page = openapi.OPERATIONS[(method if method != "HEAD" else "GET", path)].tag == "pages"
        if not is_page and method != "HEAD":
            try:
                body = response.json()
            except ValueError:
                body = None
            if not (
                isinstance(body, dict) and isinstance(body.get("error"), str) and isinstance(body.get("message"), str)
            ):
                wrong.append(f"{status} without a JSON error and message: {response.text[:200]!r}")
            elif not body["message"]:
                wrong.append(f"{status} {body['error']}: an empty message")
        allowed = REFUSED_MAY_WRITE.get((method, path), set()) | BACKGROUND
        changed = {t: (before.get(t, 0), n) for t, n in after.items() if n != before.get(t, 0) and t not in allowed}
        if changed:
            wrong.append(f"refused with {status} but wrote rows: {changed}")
    documented = case.operation.definition.raw["responses"]
    if str(status) not in documented and status < 500:
        wrong.append(f"{status} is not a status the document lists ({', '.join(documented)}): {response.text[:200]!r}")
    return wrong


def _fuzz(world: World, op: Any, failures: dict[str, list[str]], seen: dict[str, Counter[str]]) -> None:
    """Fuzz one operation: ``EXAMPLES`` cases, each judged (:func:`_judge`); what is wrong goes to ``failures``."""
    label = f"{op.method.upper()} {op.path}"
    engine = world.app.state.service.storage.engine
    modes = [op.as_strategy(generation_mode=GenerationMode.POSITIVE)]
    if len(op.path_parameters) or len(op.query) or len(op.headers) or op.body:
        modes.append(op.as_strategy(generation_mode=GenerationMode.NEGATIVE))

    @settings(
        # HEAD is GET's endpoint without the body: a few examples find a HEAD that acts as a POST
        max_examples=EXAMPLES if op.method.upper() != "HEAD" else max(2, EXAMPLES // 4),
        deadline=None,
        database=None,
        derandomize=SEED is None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=st.one_of(modes), who=st.sampled_from(["session", "anonymous", "no_csrf"]), data=st.data())
    def fuzz(case: Any, who: str, data: Any) -> None:
        case.path_parameters = _real_path(world, op.path, case.path_parameters or {}, data.draw)
        if isinstance(case.query, dict) and "u" in case.query and data.draw(st.booleans()):
            case.query = {**case.query, "u": world.unsub}  # a mail's real unsubscribe secret
        if not isinstance(case.body, NotSet):
            case.body = _real_body(world, case.body, data.draw)
        before = _counts(engine)
        response = _send(world, case, who)
        after = _counts(engine) if 400 <= response.status_code < 500 else before
        seen[label][f"{who[:4]} {response.status_code}"] += 1
        for wrong in _judge(op, case, response, before, after):
            if len(failures[label]) < 3:
                failures[label].append(f"{wrong}\n    as {who}: {case.as_curl_command()}")
        if who != "anonymous" and not world.logged_in():
            world.login()  # a log-out (or a disabled account) ended the session: the next case logs in again

    if SEED is not None:
        fuzz = seed(int(SEED))(fuzz)
    fuzz()


@pytest.fixture()
def fuzz_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The fuzzing's database: SQLite (CI's run), or PostgreSQL with ``JERICHO_FUZZ_DB=postgresql``."""
    if os.environ.get("JERICHO_FUZZ_DB", "sqlite") != "postgresql":
        return str(tmp_path / "fuzz.sqlite3")
    import psycopg

    folder, port = request.getfixturevalue("postgres_socket")
    name = f"fuzz_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(host=folder, port=port, user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"postgresql+psycopg://postgres@/{name}?host={folder}&port={port}"


# the app's threads use `random` while Hypothesis draws (a game's id, a side): not the strategies' doing
@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")
def test_fuzz_every_operation(fuzz_db: str) -> None:
    limits = Limits(ai_queue=10**6, review_queue=10**6, creates_per_minute=10**6)
    app = create_app(
        fuzz_db,
        ai_processes=-1,  # no AI thinks: games wait for it, nothing runs behind the requests
        clock=lambda: T0,
        password_hasher=CHEAP,
        limits=limits,
        budgets=_generous(budgeting.from_limits(limits)),
    )

    async def idle() -> None:  # the background loops (ratings, mail, tournaments) stay still
        return None

    for loop in (app.state.ratings, app.state.notifier, app.state.tournaments):
        loop.run = idle
    failures: dict[str, list[str]] = defaultdict(list)
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    with TestClient(app, raise_server_exceptions=False) as client:
        world = _build_world(app, client)
        schema = schemathesis.openapi.from_dict(client.get(openapi.PATH).json())
        operations = [result.ok() for result in schema.get_all_operations()]
        for op in operations:
            _fuzz(world, op, failures, seen)
    report = "\n".join(f"{label}: {', '.join(f'{k}×{n}' for k, n in sorted(c.items()))}" for label, c in seen.items())
    assert not failures, "\n\n".join(f"{label}\n  " + "\n  ".join(w) for label, w in failures.items()) + "\n\n" + report
    assert len(seen) == len(operations) == sum(len(item) for item in schema.raw_schema["paths"].values()), report
    # the authenticated paths were reached: operations a logged-in client changed something with
    ok_logged = {label for label, c in seen.items() if any(k.startswith("sess 2") for k in c)}
    assert len(ok_logged) >= 40, report
