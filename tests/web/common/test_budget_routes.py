"""Every route of the app asks the one budget policy, or says why it costs nothing (issue 51 point 1).

The walk: every route and method of the app (pages, the API, the WebSockets) declares what it costs
(:func:`jericho_game.web.common.budget.costs` / :func:`free`); each has an example request here that
would succeed; with every budget at zero (:func:`zeroed`) each costly example is refused with one of
its budgets' codes and writes nothing, and each free one, with the normal budgets, is answered below
500 and adds rows to no table but those it names.  A new route that declares nothing, or costs
without asking, fails here.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from starlette.routing import Mount, Route, WebSocketRoute

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.accounts.accounts import CSRF_HEADER, SESSION_COOKIE, AccountService  # noqa: E402
from jericho_game.web.common.budget import BUDGETS, BudgetPolicy, declared, from_limits, zeroed  # noqa: E402
from jericho_game.web.common.limits import Limits  # noqa: E402
from jericho_game.web.people.positionindex import PositionIndexer  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.storage.database import GameRecord  # noqa: E402

PW = "correct horse battery staple 42"
FAST = Limits(rate=1000.0, burst=1000)


def app_routes(app: Any) -> list[tuple[str, str, Any]]:
    """(method, path, endpoint) of every route of ``app`` (WebSockets as method ``WS``; the static
    files' mount, which serves files from the package and nothing else, left out)."""
    out = []
    for r in app.routes:
        if isinstance(r, Route):
            out += [(m, r.path, r.endpoint) for m in sorted(r.methods or ())]
        elif isinstance(r, WebSocketRoute):
            out.append(("WS", r.path, r.endpoint))
        else:
            assert isinstance(r, Mount) and r.path == "/static", r
    return out


# -- a world to walk in: an account, its session, games of every kind ------------------------------------


@dataclass
class World:
    """A client of one app, logged in as ``ada`` (an admin), with games stored beside it."""

    client: TestClient
    csrf: str
    ids: dict[str, str] = field(default_factory=dict)

    @property
    def app(self) -> Any:
        return self.client.app

    def post(self, path: str, body: Any = None) -> Any:
        return self.client.post(path, json={} if body is None else body, headers={CSRF_HEADER: self.csrf})


def _world(client: TestClient) -> World:
    app: Any = client.app
    storage = app.state.service.storage
    accounts: AccountService = app.state.accounts
    ada = accounts.find("ada") or accounts.create_account("ada", PW, admin=True)
    bob = accounts.find("bob") or accounts.create_account("bob", PW)
    sess, token = accounts._new_session(ada)
    client.cookies.set(SESSION_COOKIE, token)
    world = World(client, sess.csrf)
    # games written by the storage itself: with every budget at zero, the API creates none
    over = GameRecord(id="overgame", mode="online", south_account=ada.id, north_account=bob.id, joined=1)
    over.south_token, over.north_token = "s" * 24, "n" * 24
    over.moves, over.result, over.reason = ["5R@d2", "1G@d3"], "south", "resign"
    storage.create(over)
    ai = GameRecord(id="aigame", mode="ai", ai_side="north", ai_level="easy", south_account=ada.id)
    ai.south_token, ai.north_token, ai.address = "a" * 24, "b" * 24, "testclient"
    storage.create(ai)
    seek = GameRecord(id="seekgame", mode="online", north_account=bob.id, public=True)
    seek.north_token, seek.invite, seek.address = "c" * 24, "i" * 24, "10.9.9.9"
    seek.meta = {"names": {"north": "bob"}}
    storage.create(seek)
    invite = GameRecord(id="invitegame", mode="online", south_account=ada.id)
    invite.south_token, invite.invite, invite.address = "v" * 24, "w" * 24, "testclient"
    storage.create(invite)
    carol = accounts.find("carol") or accounts.create_account("carol", PW)
    # bob's challenge to ada, waiting for her answer: a correspondence one, which stands while bob has
    # no page open (a real-time one expires 20 s after its challenger leaves: issue 52)
    with storage.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO challenges (id, challenger, challenged, status, pending_pair, side, per_move_days, "
                "rated, created_at) VALUES ('chal1', :b, :a, 'pending', :pair, 'random', 3, 0, :now)"
            ),
            {"a": ada.id, "b": bob.id, "pair": f"{bob.id}:{ada.id}", "now": time.time()},
        )
    # bob's arena, made past the budgets (they may be zero here)
    tournaments = app.state.tournaments
    kept = tournaments.budget
    tournaments.budget = BudgetPolicy(storage)
    try:
        arena = tournaments.create(bob.id, {"name": "Walk cup", "clock": 3, "minutes": 30, "starts_in": 60})
    finally:
        tournaments.budget = kept
    world.ids.update(over="overgame", ai="aigame", seek="seekgame", bob=str(bob.id), carol=str(carol.id))
    world.ids["arena"] = arena["id"]
    # a line of bob's in the arena's chat (issue 52), written past the budgets: the report's example
    store = app.state.chat.store
    store.budget = BudgetPolicy(storage)
    try:
        line = store.post(
            f"t:{arena['id']}",
            "tournament",
            side=None,
            account=bob.id,
            author="bob",
            address="10.9.9.9",
            body="good luck",
            ply=0,
            now=time.time(),
        )
    finally:
        store.budget = app.state.chat.budget
    world.ids["tchat"] = str(line.id)
    client.get("/api/puzzles/next")  # ada's row of the puzzle served to her exists before the walk
    indexer = PositionIndexer(storage)  # the finished game indexed now, not by the app's next round
    while indexer.round():
        pass
    quiet(world)
    return world


def quiet(w: World, settle: float = 0.3) -> None:
    """Wait until the app's background tasks (the position index, presence beats) stop adding rows,
    so that what a request adds is the request's."""
    last = row_counts(w)
    for _ in range(100):
        time.sleep(settle)
        now = row_counts(w)
        if now == last:
            return
        last = now
    raise AssertionError("the app's tables never stopped growing")


@pytest.fixture(scope="module")
def walk_apps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, World]]:
    """Two apps: budgets as shipped, and every budget at zero."""
    out = {}
    clients = []
    for name, table in (("normal", None), ("zero", zeroed(from_limits(FAST)))):
        db = str(tmp_path_factory.mktemp(name) / "games.sqlite3")
        # with mail on (to a port nothing listens on: the mails wait in the outbox), as a server with --smtp
        app = create_app(
            db, ai_processes=0, limits=FAST, budgets=table, smtp="smtp://127.0.0.1:9", public_url="http://example.org"
        )
        client = TestClient(app)
        client.__enter__()
        clients.append(client)
        out[name] = _world(client)
    yield out
    for client in clients:
        client.__exit__(None, None, None)


# -- an example request of every route -------------------------------------------------------------------

Example = Callable[[World], Any]


@contextmanager
def as_client(w: World, token: str | None) -> Iterator[str]:
    """``w``'s client with another session cookie (``None``: none) for one request; its CSRF token
    (before a log-in: the double-submit token that ``GET /api/account`` hands out)."""
    kept = w.client.cookies.get(SESSION_COOKIE)
    w.client.cookies.delete(SESSION_COOKIE)
    try:
        if token is not None:
            w.client.cookies.set(SESSION_COOKIE, token)
        yield str(w.client.get("/api/account").json()["csrf"])
    finally:
        w.client.cookies.delete(SESSION_COOKIE)
        if kept is not None:
            w.client.cookies.set(SESSION_COOKIE, kept)


def _anonymous(method: str, path: str, body: Any) -> Example:
    def run(w: World) -> Any:
        with as_client(w, None) as csrf:
            return w.client.request(method, path, json=body, headers={CSRF_HEADER: csrf})

    return run


def _other_session(path: str) -> Example:
    """``path`` posted with a second session of ada's (a log-out must not end the walk's own)."""

    def run(w: World) -> Any:
        accounts = w.app.state.accounts
        sess, token = accounts._new_session(accounts.find("ada"))
        with as_client(w, token):
            return w.client.post(path, json={}, headers={CSRF_HEADER: sess.csrf})

    return run


def _puzzle(what: str, body: dict[str, Any]) -> Example:
    """A first, rated attempt at the puzzle served to ada over 10 s ago (a rated attempt asks the budget)."""

    def run(w: World) -> Any:
        puzzle = w.client.get("/api/puzzles/next").json()
        with w.app.state.service.storage.engine.begin() as conn:
            conn.execute(text("UPDATE puzzle_served SET served_at = served_at - 60"))
        if what == "try":
            body["try"] = _a_wrong_or_right_move(puzzle)
        return w.post(f"/api/puzzles/{puzzle['id']}/{what}", body)

    return run


def _a_wrong_or_right_move(puzzle: dict[str, Any]) -> str:
    from jericho_game.game import Game

    return str(Game.from_position(puzzle["position"]).legal_moves()[0])


def _ws(path: str, *messages: dict[str, Any], want: str = "error") -> Example:
    """Connect to ``path``, send ``messages``, and answer the first message of type ``want``."""

    def run(w: World) -> Any:
        with w.client.websocket_connect(path) as ws:
            for m in messages:
                ws.send_text(json.dumps(m))
            for _ in range(200):
                msg = json.loads(ws.receive_text())
                if msg.get("type") == want:
                    return msg
        raise AssertionError(f"no {want} message on {path}")

    return run


def _first(path: str) -> Example:
    """Connect to ``path`` and answer its first message, whatever its type."""

    def run(w: World) -> Any:
        with w.client.websocket_connect(path) as ws:
            return json.loads(ws.receive_text())

    return run


EXAMPLES: dict[tuple[str, str], Example] = {
    # pages and their files
    **{("GET", p): (lambda w, p=p: w.client.get(p.replace("{id}", "overgame").replace("{name}", "ada")
                                                 .replace("{lang}", "fr")))
       for p in ("/", "/g/{id}", "/rules", "/learn", "/games", "/login", "/signup", "/leaderboard",
                 "/players/{name}", "/players/{name}/games", "/players/{name}/stats", "/analysis", "/puzzles",
                 "/settings", "/unsubscribe", "/puzzles/{id}", "/offline", "/challenges", "/tournaments",
                 "/tournaments/{id}", "/manifest.webmanifest", "/sw.js", "/i18n/{lang}.json")},
    ("GET", "/healthz"): lambda w: w.client.get("/healthz"),
    ("GET", "/api/rules.md"): lambda w: w.client.get("/api/rules.md"),
    ("GET", "/api/topology"): lambda w: w.client.get("/api/topology"),
    ("GET", "/api/levels"): lambda w: w.client.get("/api/levels"),
    ("GET", "/api/openapi.json"): lambda w: w.client.get("/api/openapi.json"),
    # games
    ("POST", "/api/games"): lambda w: w.post("/api/games", {"mode": "ai", "level": "easy"}),
    ("GET", "/api/games/{id}"): lambda w: w.client.get("/api/games/overgame"),
    ("POST", "/api/games/{id}/join"): lambda w: w.post("/api/games/seekgame/join", {"invite": "i" * 24}),
    ("GET", "/api/games/{id}/record"): lambda w: w.client.get("/api/games/overgame/record"),
    ("GET", "/api/games/{id}/replay"): lambda w: w.client.get("/api/games/overgame/replay"),
    ("GET", "/api/lobby"): lambda w: w.client.get("/api/lobby"),
    ("POST", "/api/mygames"): lambda w: w.post("/api/mygames", {"games": {"overgame": "s" * 24}}),
    ("POST", "/api/mygames/record"): lambda w: w.post("/api/mygames/record", {"games": {"overgame": "s" * 24}}),
    ("WS", "/lobby/ws"): _ws("/lobby/ws", {"type": "hello"}, want="lobby"),
    ("WS", "/ws/{id}"): _ws("/ws/aigame", {"type": "hello", "token": "a" * 24}, {"type": "move", "move": "5R@d2",
                                                                                   "ply": 0}),
    # review and analysis
    ("GET", "/api/games/{id}/review"): lambda w: w.client.get("/api/games/overgame/review"),
    ("POST", "/api/games/{id}/review"): lambda w: w.post("/api/games/overgame/review"),
    ("GET", "/api/games/{id}/review/record"): lambda w: w.client.get("/api/games/overgame/review/record"),
    ("GET", "/api/games/{id}/review/line/{ply}"): lambda w: w.client.get("/api/games/overgame/review/line/1"),
    ("POST", "/api/analysis/load"): lambda w: w.post("/api/analysis/load", {"moves": ["5R@d2"]}),
    ("POST", "/api/analysis/view"): lambda w: w.post("/api/analysis/view", {"moves": ["5R@d2"]}),
    ("POST", "/api/analysis/record"): lambda w: w.post("/api/analysis/record", {"moves": ["5R@d2"]}),
    ("WS", "/ws/analysis"): _ws("/ws/analysis", {"type": "analyse", "id": 1, "moves": ["5R@d2"]}),
    # issue 52: the tournaments' push socket answers once (ready, idle, or not_logged_in: an error)
    ("WS", "/ws/tournaments"): lambda w: _first("/ws/tournaments")(w),
    ("POST", "/api/preview"): lambda w: w.post("/api/preview", {"moves": ["5R@d2"]}),
    ("GET", "/api/tutorial"): lambda w: w.client.get("/api/tutorial"),
    ("GET", "/api/tutorial/{lesson}"): lambda w: w.client.get("/api/tutorial/placing"),
    ("POST", "/api/tutorial/{lesson}"): lambda w: w.post("/api/tutorial/placing", {"moves": [], "try": "5R@d2"}),
    # accounts and ratings
    ("GET", "/api/account/prefs"): lambda w: w.client.get("/api/account/prefs"),
    ("POST", "/api/account/prefs"): lambda w: w.post("/api/account/prefs", {"board": "classic"}),
    ("GET", "/api/account"): lambda w: w.client.get("/api/account"),
    ("POST", "/api/account/signup"): _anonymous("POST", "/api/account/signup", {"username": "dora", "password": PW}),
    ("POST", "/api/account/login"): _anonymous("POST", "/api/account/login", {"username": "bob", "password": PW}),
    ("POST", "/api/account/logout"): _other_session("/api/account/logout"),
    ("POST", "/api/account/logout-all"): _other_session("/api/account/logout-all"),
    ("POST", "/api/account/language"): lambda w: w.post("/api/account/language", {"language": "en"}),
    ("POST", "/api/admin/disable"): lambda w: w.post("/api/admin/disable", {"username": "carol", "disabled": False}),
    ("GET", "/api/leaderboard"): lambda w: w.client.get("/api/leaderboard"),
    ("GET", "/api/players/{name}"): lambda w: w.client.get("/api/players/bob"),
    ("GET", "/api/games/{id}/ratings"): lambda w: w.client.get("/api/games/overgame/ratings"),
    # mail
    ("GET", "/api/notify/settings"): lambda w: w.client.get("/api/notify/settings"),
    ("POST", "/api/notify/settings"): lambda w: w.post("/api/notify/settings", {"email": "ada@example.org"}),
    ("GET", "/api/notify/confirm"): lambda w: w.client.get("/api/notify/confirm?token=" + "x" * 30),
    ("GET", "/api/notify/unsubscribe"): lambda w: w.client.get("/api/notify/unsubscribe?u=x&kind=invite"),
    ("POST", "/api/notify/unsubscribe"): lambda w: w.client.post("/api/notify/unsubscribe?u=x&kind=invite"),
    ("POST", "/api/notify/invite"): lambda w: w.post("/api/notify/invite",
                                                    {"game": "invitegame", "token": "v" * 24, "username": "bob"}),
    # issue 54: an account's own data (web/site/owndata.py); closing is a costly example only, run with the
    # budgets at zero (refused): a wrong password besides, so that ada stays open should it pass
    ("GET", "/api/account/data"): lambda w: w.client.get("/api/account/data"),
    ("POST", "/api/account/close"): lambda w: w.post("/api/account/close", {"password": "not ada's password"}),
    ("POST", "/api/yourturn"): lambda w: w.post("/api/yourturn", {"games": {"overgame": "s" * 24}}),
    # puzzles
    ("GET", "/api/puzzles/next"): lambda w: w.client.get("/api/puzzles/next"),
    ("GET", "/api/puzzles/{id}"): lambda w: w.client.get(
        "/api/puzzles/" + w.client.get("/api/puzzles/next").json()["id"]),
    ("POST", "/api/puzzles/streak"): lambda w: w.post("/api/puzzles/streak", {"puzzles": []}),
    ("POST", "/api/puzzles/{id}/try"): _puzzle("try", {"moves": []}),
    ("POST", "/api/puzzles/{id}/result"): _puzzle("result", {"moves": [], "hints": 0}),
    ("POST", "/api/puzzles/{id}/hint"): _puzzle("hint", {"moves": [], "level": 2}),
    # chat
    ("GET", "/api/games/{id}/chat"): lambda w: w.client.get("/api/games/overgame/chat"),
    ("GET", "/api/admin/chat/reports"): lambda w: w.client.get("/api/admin/chat/reports"),
    ("POST", "/api/admin/chat/reports/close"): lambda w: w.post("/api/admin/chat/reports/close", {"message": 1}),
    # people
    ("POST", "/api/people/follow"): lambda w: w.post("/api/people/follow", {"username": "bob", "follow": True}),
    ("POST", "/api/people/block"): lambda w: w.post("/api/people/block", {"username": "carol", "block": True}),
    ("GET", "/api/people/{name}"): lambda w: w.client.get("/api/people/bob"),
    ("GET", "/api/people/timeline"): lambda w: w.client.get("/api/people/timeline"),
    ("GET", "/api/challenges"): lambda w: w.client.get("/api/challenges"),
    ("POST", "/api/challenges"): lambda w: w.post("/api/challenges", {"username": "bob", "clock": 5}),
    ("GET", "/api/challenges/settings"): lambda w: w.client.get("/api/challenges/settings"),
    ("POST", "/api/challenges/settings"): lambda w: w.post("/api/challenges/settings", {"challenges": "all"}),
    ("POST", "/api/challenges/{id}/{what}"): lambda w: w.post("/api/challenges/chal1/accept"),
    # a player's games
    ("GET", "/api/players/{name}/games"): lambda w: w.client.get("/api/players/ada/games"),
    ("GET", "/api/players/{name}/games.jgn"): lambda w: w.client.get("/api/players/ada/games.jgn"),
    ("GET", "/api/players/{name}/stats"): lambda w: w.client.get("/api/players/ada/stats"),
    # tournaments
    ("GET", "/api/tournaments"): lambda w: w.client.get("/api/tournaments"),
    ("POST", "/api/tournaments"): lambda w: w.post("/api/tournaments", {"name": "Ada cup", "clock": 3, "minutes": 30}),
    ("GET", "/api/tournaments/{id}"): lambda w: w.client.get("/api/tournaments/" + w.ids["arena"]),
    ("POST", "/api/tournaments/{id}/join"): lambda w: w.post(f"/api/tournaments/{w.ids['arena']}/join"),
    ("POST", "/api/tournaments/{id}/withdraw"): lambda w: w.post(f"/api/tournaments/{w.ids['arena']}/withdraw"),
    ("POST", "/api/tournaments/{id}/feature"): lambda w: w.post(f"/api/tournaments/{w.ids['arena']}/feature",
                                                                {"featured": True}),
    ("POST", "/api/tournaments/{id}/berserk"): lambda w: w.post(f"/api/tournaments/{w.ids['arena']}/berserk",
                                                                {"game": "overgame"}),
    # the tournaments' chat (web/tournaments/chat.py)
    ("GET", "/api/tournaments/{id}/chat"): lambda w: w.client.get(f"/api/tournaments/{w.ids['arena']}/chat"),
    ("POST", "/api/tournaments/{id}/chat"): lambda w: w.post(f"/api/tournaments/{w.ids['arena']}/chat",
                                                             {"text": "hello"}),
    ("POST", "/api/tournaments/{id}/chat/report"): lambda w: w.post(f"/api/tournaments/{w.ids['arena']}/chat/report",
                                                                    {"id": int(w.ids["tchat"])}),
    ("POST", "/api/tournaments/{id}/{what}"): lambda w: w.post(f"/api/tournaments/{w.ids['arena']}/dance"),
}  # fmt: skip


def _head(example: Example) -> Example:
    def run(w: World) -> Any:
        response = example(w)
        return w.client.request("HEAD", str(response.url))

    return run


def example_of(method: str, path: str) -> Example | None:
    """The example of a route and method (HEAD: its GET's, sent as HEAD)."""
    if method == "HEAD":
        get = EXAMPLES.get(("GET", path))
        return None if get is None else _head(get)
    return EXAMPLES.get((method, path))


# -- counting what a request wrote -------------------------------------------------------------------------


def row_counts(w: World) -> dict[str, int]:
    engine = w.app.state.service.storage.engine
    with engine.connect() as conn:
        tables = [r[0] for r in conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'table'"))]
        return {t: int(conn.execute(text(f'SELECT count(*) FROM "{t}"')).scalar_one()) for t in tables}


def grown(before: dict[str, int], after: dict[str, int]) -> set[str]:
    return {t for t, n in after.items() if n > before.get(t, 0)}


def status_and_code(answer: Any) -> tuple[int, str | None]:
    """(HTTP status, error code) of an HTTP response, or (4xx, code) of a WebSocket error message."""
    if isinstance(answer, dict):
        return (429 if answer.get("type") == "error" else 200), answer.get("code")
    try:
        body = answer.json()
    except ValueError:
        body = {}
    return answer.status_code, body.get("error") if isinstance(body, dict) else None


# -- the walk ---------------------------------------------------------------------------------------------


def test_every_route_declares_what_it_costs(walk_apps: dict[str, World]) -> None:
    missing, unknown = [], []
    for method, path, endpoint in app_routes(walk_apps["normal"].app):
        d = declared(endpoint)
        if d is None or method not in d.kinds:
            missing.append(f"{method} {path}")
            continue
        unknown += [f"{method} {path}: {k}" for k in d.kinds[method] if k not in BUDGETS]
        if not d.kinds[method] and not d.why[method]:
            missing.append(f"{method} {path} (free without a reason)")
    assert missing == [], f"routes that declare no budget (web/common/budget.py costs/free): {missing}"
    assert unknown == []


def test_every_route_has_an_example_here(walk_apps: dict[str, World]) -> None:
    without = [f"{m} {p}" for m, p, _ in app_routes(walk_apps["normal"].app) if example_of(m, p) is None]
    assert without == [], f"add an example request to EXAMPLES for: {without}"


def _declared(w: World, costly: bool) -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    """(method, path, kinds, writes) of the app's costly or free routes."""
    out = []
    for method, path, endpoint in app_routes(w.app):
        d = declared(endpoint)
        if d is not None and method in d.kinds and bool(d.kinds[method]) == costly:
            out.append((method, path, d.kinds[method], d.writes[method]))
    return out


def test_every_costly_route_asks_its_budget(walk_apps: dict[str, World]) -> None:
    """With every budget at zero, each costly route's example is refused with one of its budgets'
    codes, and nothing is written."""
    w = walk_apps["zero"]
    wrong = []
    costly = _declared(w, costly=True)
    assert len(costly) >= 5
    for method, path, kinds, _ in costly:
        example = example_of(method, path)
        if example is None:
            continue  # test_every_route_has_an_example_here names it
        codes = {BUDGETS[k].code for k in kinds if k in BUDGETS}
        before = row_counts(w)
        status, code = status_and_code(example(w))
        if status not in (429, 503) or (code not in codes and method != "HEAD"):  # a HEAD answer has no body
            wrong.append(f"{method} {path}: {status} {code}, expected one of {sorted(codes)}")
        elif grown(before, row_counts(w)):
            wrong.append(f"{method} {path}: refused, but wrote to {sorted(grown(before, row_counts(w)))}")
    assert wrong == [], "costly routes that do not ask their budget:\n" + "\n".join(wrong)


def test_every_free_route_writes_only_what_it_says(walk_apps: dict[str, World]) -> None:
    """With the budgets as shipped, each free route's example is answered below 500 and adds rows to
    no table but those it names."""
    w = walk_apps["normal"]
    wrong = []
    free = _declared(w, costly=False)
    assert len(free) >= 20
    for method, path, _, writes in free:
        example = example_of(method, path)
        if example is None:
            continue
        before = row_counts(w)
        status, code = status_and_code(example(w))
        added = grown(before, row_counts(w)) - set(writes)
        if status >= 500 or added:
            wrong.append(f"{method} {path}: {status} {code}, rows added to {sorted(added)}")
    assert wrong == [], "free routes that fail or write more than they say:\n" + "\n".join(wrong)


def test_the_walk_fails_on_a_route_that_declares_nothing(tmp_path: Path) -> None:
    """The walk can fail: a route added without a declaration is found."""

    async def sneaky(request: Any) -> Any:  # costs, and says nothing
        raise AssertionError

    app = create_app(str(tmp_path / "g.sqlite3"), ai_processes=-1)
    app.router.routes.append(Route("/api/sneaky", sneaky, methods=["POST"]))
    assert "POST /api/sneaky" in [f"{m} {p}" for m, p, e in app_routes(app) if declared(e) is None]
