"""The HTTP API described as an OpenAPI 3.1 document, built from the app's routes (issue 51).

``GET /api/openapi.json`` serves :func:`document` of the running app: every HTTP route of
``app.routes`` (the WebSocket routes are described in docs/web.md, "WebSocket protocol", and the
``/static`` files are files) with each of its methods, described by :data:`OPERATIONS`, the table
below, keyed by ``(method, path)`` exactly as the route declares it.  ``HEAD`` is described from
``GET`` (Starlette answers it with the ``GET`` endpoint, without the body).

The descriptions live in one table rather than beside each endpoint: the endpoints are spread
over fifteen modules whose route functions are nested in builders (``account_routes()``, ...),
and one table is one place to read the API whole.  It cannot drift: a route without a description
is an error (:func:`document` raises; the served document lists it as not described yet rather
than answering 500), and ``tests/web/site/test_openapi.py`` checks that the document holds every
route and method of the app and nothing else, each described, that it is valid OpenAPI 3.1, and
fuzzes every operation with schemathesis against the live app (the statuses it answers must be
the document's).

What an operation says: its summary, path and query parameters with their JSON schemas, the JSON
(or form) body it reads, its success answer, the refusals it may answer (each an error body
``{"error": code, "message": text}``, :data:`ERROR`), and whether a session is read or, for a
change, the session with its CSRF token (web/accounts/accounts.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from jericho_game import __version__
from jericho_game.ai.puzzles import THEMES
from jericho_game.web.accounts.prefs import BOARDS, PIECES
from jericho_game.web.common.budget import free
from jericho_game.web.people.gamesearch import RESULTS, SPEED_CHOICES
from jericho_game.web.round.gameroom import MODES, SIDES
from jericho_game.web.round.timecontrol import MAX_INCREMENT, MIN_INCREMENT
from jericho_game.web.social.notify import KINDS as MAIL_KINDS
from jericho_game.web.tournaments.tournaments import KINDS as TOURNAMENT_KINDS

__all__ = ["ERROR", "OPERATIONS", "Op", "PATH", "document", "missing", "routes"]

PATH = "/api/openapi.json"

#: The body of every refusal (web/common/errors.py ``ClientError``, the app's handlers).
ERROR: dict[str, Any] = {
    "type": "object",
    "required": ["error", "message"],
    "properties": {
        "error": {"type": "string", "description": "a code for programs, the same in every language"},
        "message": {"type": "string", "description": "what was wrong, in the request's language"},
    },
}

# -- small schema helpers ------------------------------------------------------------------------

STR = {"type": "string"}
BOOL = {"type": "boolean"}
MOVES = {"type": "array", "items": {"type": "string", "maxLength": 32}, "description": "moves in notation"}
NAME = {"type": "string", "maxLength": 64, "description": "a player's username"}
GAME_ID = {"type": "string", "description": "a game's id"}
CLOCK = {
    "anyOf": [{"type": "null"}, {"const": 0}, {"type": "number", "minimum": 1, "maximum": 180}],
    "description": "minutes per side, from the server's --min-clock (1) to 180 (null or 0: no clock)",
}
USERNAME = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{2,23}$", "description": "3 to 24 characters"}
INCREMENT = {
    "type": ["integer", "null"],
    "minimum": 0,
    "maximum": MAX_INCREMENT,
    "description": f"whole seconds added per move, {MIN_INCREMENT} to {MAX_INCREMENT} (0 or null: none)",
}
DAYS = {"enum": [None, 1, 2, 3, 5, 7, 14], "description": "days per move: a correspondence game"}
SEATS = {
    "type": "object",
    "additionalProperties": {"type": "string", "maxLength": 200},
    "description": "game id -> seat token, the seats this browser keeps",
}
GAMES_HELD = {"type": "object", "required": ["games"], "properties": {"games": SEATS}}


def obj(props: Mapping[str, Any], required: Iterable[str] = (), closed: bool = False) -> dict[str, Any]:
    """A JSON object schema (``closed``: no other field is accepted)."""
    out: dict[str, Any] = {"type": "object", "properties": dict(props)}
    if required:
        out["required"] = list(required)
    if closed:
        out["additionalProperties"] = False
    return out


def enum(*values: Any) -> dict[str, Any]:
    return {"enum": list(values)}


# -- what an operation is ------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """One route and method, described.

    ``session``: ``""`` (none is read), ``"read"`` (the session cookie says who asks, if any) or
    ``"change"`` (a live session cookie must come with its ``X-CSRF-Token``: 403 ``csrf``).
    ``errors``: status -> the codes it answers (each with the :data:`ERROR` body); a JSON body
    adds 400 ``bad_json``/``bad_request`` and 413 ``too_large``, ``"change"`` adds 403 ``csrf``.
    ``media``: the success answer's type (``""``: none, a redirect)."""

    summary: str
    tag: str
    query: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    path: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    headers: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    form: dict[str, Any] | None = None
    ok: int = 200
    media: str = "application/json"
    errors: Mapping[int, str] = field(default_factory=dict)
    session: str = ""


def page(summary: str, errors: Mapping[int, str] | None = None) -> Op:
    """A page of the site: HTML in the request's language (``?lang=en|fr`` is remembered)."""
    return Op(
        summary,
        "pages",
        query={"lang": {**enum("en", "fr"), "description": "the page's language (remembered in a cookie)"}},
        media="text/html",
        errors=errors or {},
    )


_GAME_404 = {404: "unknown_game"}
_LOGIN = {401: "not_logged_in"}

#: Every route and method of the app, described; ``HEAD`` comes from ``GET``.
OPERATIONS: dict[tuple[str, str], Op] = {
    # -- the site's pages (web/site/pages.py) --
    ("GET", "/"): page("The home page: a new game against the AI, a friend or on this screen"),
    ("GET", "/g/{id}"): page("A game's page (the board, the clocks, the chat); the game is read by its script"),
    ("GET", "/rules"): page("The rules"),
    ("GET", "/learn"): page("The tutorial"),
    ("GET", "/games"): page("My games: the games this browser or account holds"),
    ("GET", "/login"): Op(
        "The log-in page; a `next` that would leave the site is dropped (303 to the page without it)",
        "pages",
        query={"next": {"type": "string", "description": "a path of this site to go to afterwards"}},
        media="text/html",
        errors={303: "redirect"},
    ),
    ("GET", "/signup"): Op(
        "The sign-up page; a `next` that would leave the site is dropped (303 to the page without it)",
        "pages",
        query={"next": {"type": "string", "description": "a path of this site to go to afterwards"}},
        media="text/html",
        errors={303: "redirect"},
    ),
    ("GET", "/leaderboard"): page("The leaderboard"),
    ("GET", "/players/{name}"): page("A player's profile page"),
    ("GET", "/players/{name}/games"): page("A player's games: search and export"),
    ("GET", "/players/{name}/stats"): page("A player's statistics"),
    ("GET", "/analysis"): page("The analysis board"),
    ("GET", "/puzzles"): page("The puzzles"),
    ("GET", "/puzzles/{id}"): page("One puzzle"),
    ("GET", "/settings"): page("An account's settings (notifications, themes)"),
    ("GET", "/unsubscribe"): page("Where a mail's unsubscribe link leads: asks before it unsubscribes"),
    ("GET", "/offline"): page("What the service worker shows when a page cannot be fetched"),
    ("GET", "/challenges"): page("An account's challenges"),
    ("GET", "/tournaments"): page("The tournaments"),
    ("GET", "/tournaments/{id}"): page("One tournament"),
    ("GET", "/manifest.webmanifest"): Op(
        "The web app manifest, in the request's language", "pages", media="application/manifest+json"
    ),
    ("GET", "/sw.js"): Op(
        "The service worker (this release's version and static files)", "pages", media="text/javascript"
    ),
    ("GET", "/i18n/{lang}.json"): Op(
        "The page scripts' translations of a language",
        "pages",
        path={"lang": {"type": "string", "description": "en or fr"}},
        errors={404: "an HTML page: no such language"},
    ),
    # -- about the server (web/server.py) --
    ("GET", "/healthz"): Op(
        "Whether the server and its database answer: `{ok, database, pid}`",
        "server",
        errors={503: "the database is unreachable: `{ok: false, database}`"},
    ),
    ("GET", PATH): Op("This document: the HTTP API in OpenAPI 3.1, built from the app's routes", "server"),
    ("GET", "/api/rules.md"): Op("The rules, in the request's language (Markdown)", "server", media="text/markdown"),
    ("GET", "/api/topology"): Op("The board: cells, alignments, triangles, outline", "server"),
    ("GET", "/api/levels"): Op("The AI levels offered, the default one and their Elo", "server"),
    # -- games (web/round/rooms.py, web/server.py) --
    ("POST", "/api/games"): Op(
        "Create a game: against the AI, online with an invite (public: listed in the lobby) or hot-seat",
        "games",
        body=obj(
            {
                "mode": enum(*MODES),
                "side": enum(*SIDES, "random"),
                "level": {"type": "string", "maxLength": 200, "description": "an AI level of /api/levels"},
                "clock": CLOCK,
                "increment": INCREMENT,
                "per_move_days": DAYS,
                "rated": BOOL,
                "name": {"type": ["string", "null"], "maxLength": 40, "description": "your name"},
                "public": BOOL,
            },
            closed=True,
        ),
        ok=201,
        errors={
            400: "bad_request (naming the field), bad_name",
            403: "login_required (a rated game)",
            409: "name_required",
            429: "rate_limited, ai_games, ai_quota, seek_quota, correspondence_quota",
        },
        session="change",
    ),
    ("GET", "/api/games/{id}"): Op("A game's public state", "games", errors=_GAME_404),
    ("POST", "/api/games/{id}/join"): Op(
        "Take an online game's free seat, with its invite code (a public game: a name alone)",
        "games",
        body=obj({"invite": {"type": ["string", "null"]}, "name": {"type": ["string", "null"], "maxLength": 40}}),
        errors={
            400: "bad_name, not_online",
            403: "bad_invite, login_required",
            404: "unknown_game",
            409: "seat_taken, game_over, same_account, name_required",
            429: "rate_limited",
        },
        session="change",
    ),
    ("GET", "/api/games/{id}/record"): Op(
        "The game's record (a `.jgn` download)", "games", media="text/plain", errors=_GAME_404
    ),
    ("GET", "/api/games/{id}/replay"): Op(
        "The game's positions, from the start: `{frames}`", "games", errors=_GAME_404
    ),
    ("GET", "/api/lobby"): Op("The lobby: open seeks and the public games being played", "games"),
    ("POST", "/api/mygames"): Op(
        "The games of these seats (and of the session's account), newest first",
        "games",
        body=GAMES_HELD,
        errors={413: "too_many"},
        session="read",
    ),
    ("POST", "/api/mygames/record"): Op(
        "The records of the same games, one `.jgn` file",
        "games",
        body=GAMES_HELD,
        media="text/plain",
        errors={413: "too_many"},
        session="read",
    ),
    ("POST", "/api/yourturn"): Op(
        "Every online game going that waits for this player's move (these seats and the session's account)",
        "games",
        body=obj({"games": SEATS}),
        errors={413: "too_many"},
        session="read",
    ),
    ("GET", "/api/games/{id}/ratings"): Op("What a rated game did to both players' ratings", "games", errors=_GAME_404),
    ("GET", "/api/games/{id}/chat"): Op(
        "A game's chat as a spectator reads it (a seat's token hides whom that player muted)",
        "games",
        headers={"X-Seat-Token": {"type": "string", "description": "the reader's seat token"}},
        errors=_GAME_404,
        session="read",
    ),
    # -- game review (web/learn/review.py) --
    ("GET", "/api/games/{id}/review"): Op(
        "A game's review (`status: none` when nobody asked for one)", "review", errors=_GAME_404
    ),
    ("POST", "/api/games/{id}/review"): Op(
        "Ask for a finished game's review (no body)",
        "review",
        ok=202,
        errors={
            404: "unknown_game",
            409: "review_exists (with `review`), not_over",
            429: "review_quota",
        },
        session="read",
    ),
    ("GET", "/api/games/{id}/review/record"): Op(
        "The record annotated with the review (`.jgn`)",
        "review",
        media="text/plain",
        errors={404: "unknown_game", 409: "review_not_done"},
    ),
    ("GET", "/api/games/{id}/review/line/{ply}"): Op(
        "The AI's line in position `ply` of a reviewed game, as board frames",
        "review",
        path={"ply": {"type": "integer", "minimum": 0, "maximum": 999999}},
        errors={400: "bad_request (not a position number)", 404: "unknown_game, no_line"},
    ),
    # -- the analysis board and the tutorial (web/learn/analysis_board.py, web/learn/tutorial.py) --
    ("POST", "/api/analysis/load"): Op(
        "Where an analysis starts: exactly one of a position text, a `.jgn` record or a game's id",
        "learn",
        body=obj({"position": STR, "record": STR, "game": GAME_ID}),
        errors={400: "bad_position, bad_record", 404: "unknown_game"},
    ),
    ("POST", "/api/analysis/view"): Op(
        "The position after `moves` from `start`, as the board draws it",
        "learn",
        body=obj({"start": {"type": ["string", "null"], "maxLength": 400}, "moves": MOVES}),
        errors={400: "bad_position, illegal_move"},
    ),
    ("POST", "/api/analysis/record"): Op(
        "A line (`moves`) or a whole tree of variations (`tree`) as a `.jgn` record",
        "learn",
        body=obj(
            {
                "start": {"type": ["string", "null"], "maxLength": 400},
                "moves": MOVES,
                "tree": {
                    "type": "array",
                    "items": obj({"move": STR, "children": {"type": "array"}}, required=["move"]),
                    "description": 'nodes {"move", "children": [nodes]}, the first child the main line',
                },
            }
        ),
        media="text/plain",
        errors={400: "bad_position, illegal_move"},
    ),
    ("POST", "/api/preview"): Op(
        "What a piece of each size placed on each cell would make change hands, after `moves`",
        "learn",
        body=obj({"moves": MOVES}),
        errors={400: "illegal"},
    ),
    ("GET", "/api/tutorial"): Op("The tutorial's lessons", "learn"),
    ("GET", "/api/tutorial/{lesson}"): Op("A lesson's starting position", "learn", errors={404: "not_found"}),
    ("POST", "/api/tutorial/{lesson}"): Op(
        "Try a move in a lesson: the engine's verdict, the tutor's reply, the lesson's feedback",
        "learn",
        body=obj({"moves": MOVES, "try": {"type": "string", "maxLength": 32}}, required=["try"]),
        errors={400: "illegal", 404: "not_found"},
    ),
    # -- puzzles (web/learn/puzzles.py) --
    ("GET", "/api/puzzles/next"): Op(
        "A puzzle the solver has not tried, near its rating (no solution)",
        "puzzles",
        query={
            "skip": {"type": "string", "description": "a puzzle id not to give"},
            "rating": {"type": "number", "description": "an anonymous browser's own rating"},
            "theme": enum(*THEMES),
            "above": {"type": "number", "description": "a streak: a puzzle at least 25 above this"},
        },
        errors={400: "bad_request (a theme or a rating)", 404: "no_puzzle"},
        session="read",
    ),
    ("GET", "/api/puzzles/{id}"): Op(
        "One puzzle (no solution)", "puzzles", errors={404: "unknown_puzzle"}, session="read"
    ),
    ("POST", "/api/puzzles/streak"): Op(
        "Keep a streak just ended on the account (its best)",
        "puzzles",
        body=obj({"puzzles": {"type": "array", "items": {"type": "string", "maxLength": 16}}}, required=["puzzles"]),
        errors={**_LOGIN, 404: "unknown_puzzle", 409: "bad_streak"},
        session="change",
    ),
    ("POST", "/api/puzzles/{id}/try"): Op(
        "Try a move of a puzzle's line",
        "puzzles",
        body=obj({"moves": MOVES, "try": {"type": "string", "maxLength": 32}}, required=["try"]),
        errors={404: "unknown_puzzle", 429: "puzzle_rate"},
        session="change",
    ),
    ("POST", "/api/puzzles/{id}/result"): Op(
        "End an attempt (the last move, or giving up): the solution, and the rating's change",
        "puzzles",
        body=obj(
            {"moves": {**MOVES, "maxItems": 8}, "hints": {"type": "integer", "minimum": 0, "maximum": 10}},
            required=["moves"],
        ),
        errors={404: "unknown_puzzle", 429: "puzzle_rate"},
        session="change",
    ),
    ("POST", "/api/puzzles/{id}/hint"): Op(
        "A hint: the cell (level 2), or the piece and the cell (level 3)",
        "puzzles",
        body=obj({"moves": MOVES, "level": enum(2, 3)}, required=["level"]),
        errors={404: "unknown_puzzle", 429: "puzzle_rate"},
        session="change",
    ),
    # -- accounts (web/accounts/accounts.py, prefs.py, ratings.py) --
    ("GET", "/api/account"): Op(
        "Who is logged in, and the CSRF token to send as `X-CSRF-Token`", "accounts", session="read"
    ),
    ("POST", "/api/account/signup"): Op(
        "Create an account and log in (the double-submit `jericho_csrf` cookie repeated in `X-CSRF-Token`)",
        "accounts",
        body=obj(
            {"username": USERNAME, "password": {"type": "string", "description": "not a common or weak one"}},
            required=["username", "password"],
        ),
        ok=201,
        errors={
            400: "bad_username, bad_password",
            403: "csrf, signup_closed",
            409: "username_taken",
            429: "rate_limited",
            503: "busy (the password checks' line is full)",
        },
    ),
    ("POST", "/api/account/login"): Op(
        "Log in (the double-submit `jericho_csrf` cookie repeated in `X-CSRF-Token`)",
        "accounts",
        body=obj({"username": STR, "password": STR}, required=["username", "password"]),
        errors={
            401: "bad_login",
            403: "csrf",
            429: "rate_limited",
            503: "busy (the password checks' line is full)",
        },
    ),
    ("POST", "/api/account/logout"): Op("End this session", "accounts", session="change"),
    ("POST", "/api/account/logout-all"): Op(
        "End every session of the account", "accounts", errors=_LOGIN, session="change"
    ),
    ("POST", "/api/account/language"): Op(
        "Remember the account's language",
        "accounts",
        body=obj({"language": enum("en", "fr")}, required=["language"]),
        errors=_LOGIN,
        session="change",
    ),
    # issue 54: an account's own data (web/site/owndata.py)
    ("GET", "/api/account/data"): Op(
        "Everything the site holds about the account, as one zip (games as .jgn, ratings, puzzles, chat, settings)",
        "accounts",
        media="application/zip",
        errors={**_LOGIN, 429: "search_busy (an export of this client runs)"},
        session="read",
    ),
    ("POST", "/api/account/close"): Op(
        "Close the account, its password confirming: its games keep the name 'closed account', the rest is erased",
        "accounts",
        body=obj({"password": STR}, required=["password"]),
        errors={
            401: "not_logged_in, wrong_password",
            404: "unknown_account (already closed)",
            429: "rate_limited",
            503: "busy (the password checks' line is full)",
        },
        session="change",
    ),
    ("POST", "/api/admin/disable"): Op(
        "Disable (or enable) an account: admins only",
        "accounts",
        body=obj({"username": STR, "disabled": BOOL}, required=["username"]),
        errors={403: "not_admin", 404: "unknown_account"},
        session="change",
    ),
    ("GET", "/api/account/prefs"): Op(
        "The account's board and piece themes", "accounts", errors=_LOGIN, session="read"
    ),
    ("POST", "/api/account/prefs"): Op(
        "Change the account's themes",
        "accounts",
        body=obj({"board": enum(*BOARDS), "pieces": enum(*PIECES)}, closed=True),
        errors=_LOGIN,
        session="change",
    ),
    ("GET", "/api/leaderboard"): Op("Accounts with an established rating, best first", "accounts"),
    ("GET", "/api/players/{name}"): Op(
        "A player's profile: rating, its history, latest games",
        "accounts",
        errors={404: "unknown_account"},
        session="read",
    ),
    # -- a player's games and statistics (web/people/gamesearch.py, playerstats.py) --
    ("GET", "/api/players/{name}/games"): Op(
        "A page of the player's games chosen by the filters",
        "people",
        query={
            "opponent": NAME,
            "result": enum(*RESULTS),
            "side": enum(*SIDES),
            "rated": enum("yes", "no"),
            "speed": enum(*SPEED_CHOICES),
            "mode": enum(*MODES),
            "level": {"type": "string", "maxLength": 100},
            "from": {"type": "string", "format": "date"},
            "to": {"type": "string", "format": "date"},
            "position": {"type": "string", "maxLength": 400},
            "before": {"type": "string", "description": "the previous page's `next`"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        },
        errors={400: "bad_filter", 404: "unknown_account", 429: "search_busy"},
        session="read",
    ),
    ("GET", "/api/players/{name}/games.jgn"): Op(
        "The games the same filters choose (200 at most) as one `.jgn` file",
        "people",
        query={
            "opponent": NAME,
            "result": enum(*RESULTS),
            "side": enum(*SIDES),
            "rated": enum("yes", "no"),
            "speed": enum(*SPEED_CHOICES),
            "mode": enum(*MODES),
            "level": {"type": "string", "maxLength": 100},
            "from": {"type": "string", "format": "date"},
            "to": {"type": "string", "format": "date"},
            "position": {"type": "string", "maxLength": 400},
        },
        media="text/plain",
        errors={400: "bad_filter", 404: "unknown_account", 429: "search_busy"},
        session="read",
    ),
    ("GET", "/api/players/{name}/stats"): Op(
        "A player's statistics", "people", errors={404: "unknown_account", 429: "search_busy"}, session="read"
    ),
    # -- people (web/people/people.py) --
    ("GET", "/api/people/{name}"): Op(
        "What the session's account and this player are to each other (follows, blocks)",
        "people",
        errors={404: "unknown_account"},
        session="read",
    ),
    ("GET", "/api/people/timeline"): Op(
        "The timeline of the players the account follows: games finished, tournaments won, best puzzle "
        "streaks, newest first (at most 20, of the last 7 days)",
        "people",
        errors=_LOGIN,
        session="read",
    ),
    ("POST", "/api/people/follow"): Op(
        "Follow (or stop following) a player",
        "people",
        body=obj({"username": NAME, "follow": BOOL}, required=["username", "follow"]),
        errors={**_LOGIN, 403: "blocked", 404: "unknown_account", 409: "blocking, not_yourself", 429: "rate_limited"},
        session="change",
    ),
    ("POST", "/api/people/block"): Op(
        "Block (or unblock) a player",
        "people",
        body=obj({"username": NAME, "block": BOOL}, required=["username", "block"]),
        errors={**_LOGIN, 404: "unknown_account", 409: "not_yourself"},
        session="change",
    ),
    ("GET", "/api/challenges/settings"): Op(
        "Who may challenge the account: all, the players it follows, or nobody",
        "people",
        errors=_LOGIN,
        session="read",
    ),
    ("POST", "/api/challenges/settings"): Op(
        "Choose who may challenge the account",
        "people",
        body=obj({"challenges": enum("all", "follows", "nobody")}, required=["challenges"], closed=True),
        errors=_LOGIN,
        session="change",
    ),
    ("GET", "/api/challenges"): Op(
        "The account's challenges, sent and received", "people", errors=_LOGIN, session="read"
    ),
    ("POST", "/api/challenges"): Op(
        "Challenge a player to an online game",
        "people",
        body=obj(
            {
                "username": NAME,
                "clock": CLOCK,
                "increment": INCREMENT,
                "per_move_days": DAYS,
                "rated": BOOL,
                "side": enum(*SIDES, "random"),
            },
            required=["username"],
            closed=True,
        ),
        ok=201,
        errors={
            **_LOGIN,
            403: "blocked",
            404: "unknown_account",
            409: "blocking, already_challenged, not_yourself",
            429: "too_many_challenges, rate_limited",
        },
        session="change",
    ),
    ("POST", "/api/challenges/{id}/{what}"): Op(
        "Accept, decline or cancel a challenge (`what`)",
        "people",
        path={"what": enum("accept", "decline", "cancel")},
        body=obj({"reason": enum("generic", "later", "timecontrol", "rated", "casual")}),
        errors={
            **_LOGIN,
            403: "not_yours, blocked",
            404: "unknown_challenge, not_found",
            409: "not_pending, challenge_expired",
        },
        session="change",
    ),
    # -- notifications (web/social/notify.py) --
    ("GET", "/api/notify/settings"): Op(
        "The account's e-mail address and notification switches", "notifications", errors=_LOGIN, session="read"
    ),
    ("POST", "/api/notify/settings"): Op(
        "Change the address (a new one gets a confirmation mail) and/or the switches",
        "notifications",
        body=obj(
            {"email": {"type": ["string", "null"], "maxLength": 254}, **{k: BOOL for k in MAIL_KINDS}}, closed=True
        ),
        errors={**_LOGIN, 400: "bad_email", 409: "email_off", 429: "too_soon, mail_quota"},
        session="change",
    ),
    ("GET", "/api/notify/confirm"): Op(
        "A confirmation mail's link: 303 to the settings page, which says whether it worked",
        "notifications",
        query={"token": STR},
        ok=303,
        media="",
    ),
    ("GET", "/api/notify/unsubscribe"): Op(
        "A mail's unsubscribe link: 303 to the page that asks (a GET changes nothing)",
        "notifications",
        query={"u": STR, "kind": STR},
        ok=303,
        media="",
    ),
    ("POST", "/api/notify/unsubscribe"): Op(
        "Unsubscribe (RFC 8058's one click, or the page's button: then 303 to the settings)",
        "notifications",
        query={"u": STR, "kind": STR},
        form=obj({"u": STR, "kind": STR, "confirm": STR}),
        errors={303: "the page's button: to the settings", 404: "bad_link"},
    ),
    ("POST", "/api/notify/invite"): Op(
        "Invite a player by name to an online game (a mail if they take mail)",
        "notifications",
        body=obj({"game": GAME_ID, "token": STR, "username": NAME}, required=["game"]),
        errors={
            **_LOGIN,
            403: "not_your_game",
            404: "unknown_game, unknown_account",
            409: "seat_taken",
            429: "mail_quota",
        },
        session="change",
    ),
    # -- the chat's reports (web/social/chat.py) --
    ("GET", "/api/admin/chat/reports"): Op(
        "The chat's reported messages: admins only",
        "chat",
        query={"page": {"type": "integer", "minimum": 1, "maximum": 10**6}},
        errors={400: "bad_request", 403: "not_admin"},
        session="read",
    ),
    ("POST", "/api/admin/chat/reports/close"): Op(
        "Close the reports of a message: admins only",
        "chat",
        body=obj({"message": {"type": "integer"}}, required=["message"]),
        errors={403: "not_admin"},
        session="change",
    ),
    # -- tournaments (web/tournaments/tournaments.py) --
    ("GET", "/api/tournaments"): Op("The tournaments: starting, running and finished", "tournaments"),
    ("POST", "/api/tournaments"): Op(
        "Create an arena or a Swiss tournament",
        "tournaments",
        body=obj(
            {
                "kind": enum(*TOURNAMENT_KINDS),
                "name": {"type": "string", "minLength": 2, "maxLength": 60},
                "clock": {"type": "number", "minimum": 1, "maximum": 180, "description": "minutes per side"},
                "increment": INCREMENT,
                "rated": BOOL,
                "berserk": {"type": "boolean", "description": "arenas only"},
                "minutes": {"type": "integer", "minimum": 1, "maximum": 360, "description": "an arena's length"},
                "rounds": {"type": "integer", "minimum": 1, "maximum": 15, "description": "a Swiss's rounds"},
                "starts_in": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 7 * 24 * 60,
                    "description": "minutes from now",
                },
            },
            required=["name", "clock"],
            closed=True,
        ),
        ok=201,
        errors={**_LOGIN, 429: "too_many_tournaments"},
        session="change",
    ),
    ("GET", "/api/tournaments/{id}"): Op(
        "One tournament: its players, standings, games",
        "tournaments",
        errors={404: "unknown_tournament"},
        session="read",
    ),
    ("POST", "/api/tournaments/{id}/join"): Op(
        "Join a tournament",
        "tournaments",
        errors={
            **_LOGIN,
            403: "login_required",
            404: "unknown_tournament",
            409: "finished",
            429: "tournament_join_quota",
        },
        session="change",
    ),
    ("POST", "/api/tournaments/{id}/withdraw"): Op(
        "Withdraw from a tournament", "tournaments", errors={**_LOGIN, 404: "unknown_tournament"}, session="change"
    ),
    ("POST", "/api/tournaments/{id}/feature"): Op(
        "Feature a tournament (or not): admins only",
        "tournaments",
        body=obj({"featured": BOOL}, required=["featured"]),
        errors={**_LOGIN, 403: "not_admin", 404: "unknown_tournament"},
        session="change",
    ),
    ("POST", "/api/tournaments/{id}/berserk"): Op(
        "Berserk a game of yours in an arena: half your clock, before your first move",
        "tournaments",
        body=obj({"game": GAME_ID}, required=["game"]),
        errors={**_LOGIN, 403: "not_your_game", 404: "unknown_tournament", 409: "no_berserk, too_late"},
        session="change",
    ),
    # -- a tournament's chat (web/tournaments/chat.py) --
    ("GET", "/api/tournaments/{id}/chat"): Op(
        "A tournament's chat: its latest lines after `after` (a seq), without those of players the reader "
        "blocked or who blocked the reader; `seq`: the room's last",
        "tournaments",
        query={"after": {"type": "integer", "minimum": 0, "maximum": 999999999}},
        errors={400: "bad_request", 404: "unknown_tournament"},
        session="read",
    ),
    ("POST", "/api/tournaments/{id}/chat"): Op(
        "Write a line in a tournament's chat (accounts: its players and visitors)",
        "tournaments",
        body=obj({"text": STR}, required=["text"]),
        ok=201,
        errors={
            400: "bad_message, chat_text, chat_too_long",
            403: "login_required, chat_muted",
            404: "unknown_tournament",
            429: "rate_limited",
        },
        session="change",
    ),
    ("POST", "/api/tournaments/{id}/chat/report"): Op(
        "Report a line of a tournament's chat to the admins (accounts only)",
        "tournaments",
        body=obj({"id": {"type": "integer"}, "reason": STR}, required=["id"]),
        errors={
            400: "bad_request, bad_message, chat_text, chat_too_long",
            403: "login_required",
            404: "unknown_tournament, unknown_message",
            429: "rate_limited",
        },
        session="change",
    ),
    ("POST", "/api/tournaments/{id}/{what}"): Op(
        "Any other action on a tournament: 404 `not_found`",
        "tournaments",
        errors={**_LOGIN, 404: "not_found"},
        session="change",
    ),
}


# -- the document ----------------------------------------------------------------------------------

_REASONS = {
    200: "OK",
    201: "Created",
    202: "Accepted",
    303: "See Other",
    400: "Bad request",
    401: "Not logged in",
    403: "Forbidden",
    404: "Not found",
    409: "Conflict",
    413: "Too large",
    429: "Too many",
    503: "Unavailable",
}


def routes(app_routes: Iterable[Any]) -> list[tuple[str, str, Route]]:
    """The app's HTTP routes as (method, path, route), ``HEAD`` left out (it is ``GET``'s): every
    :class:`Route`; mounts (``/static``) and WebSocket routes are not the HTTP API."""
    out = []
    for route in app_routes:
        if type(route) is not Route:
            continue
        for method in sorted(route.methods or ()):
            if method != "HEAD":
                out.append((method, route.path, route))
    return out


def missing(app_routes: Iterable[Any]) -> list[str]:
    """The routes and methods of the app that :data:`OPERATIONS` does not describe."""
    return [f"{m} {p}" for m, p, _ in routes(app_routes) if (m, p) not in OPERATIONS]


def _parameters(op: Op, route: Route) -> list[dict[str, Any]]:
    params = []
    for name in route.param_convertors:
        schema = op.path.get(name, {"type": "string"})
        params.append({"name": name, "in": "path", "required": True, "schema": schema})
    for name, schema in op.query.items():
        params.append({"name": name, "in": "query", "required": False, "schema": schema})
    for name, schema in op.headers.items():
        params.append({"name": name, "in": "header", "required": False, "schema": schema})
    return params


def _content(method: str, media: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A response's ``content`` (none for ``HEAD``, which answers the headers alone)."""
    return {} if method == "HEAD" or not media else {"content": {media: {"schema": schema}}}


def _responses(method: str, op: Op, route: Route) -> dict[str, Any]:
    ok_schema: dict[str, Any] = {"type": "object"} if "json" in op.media else {"type": "string"}
    responses: dict[str, Any] = {
        str(op.ok): {"description": _REASONS.get(op.ok, "OK"), **_content(method, op.media, ok_schema)}
    }
    errors = dict(op.errors)

    def add(status: int, codes: str) -> None:
        errors[status] = ", ".join(x for x in (codes, errors.get(status, "")) if x)

    add(400, "bad_request (a NUL character in the path or query: web/site/httpguard.py)")
    if op.body is not None:
        add(400, "bad_json, bad_request")
        add(413, "too_large")
    if op.session == "change":
        add(403, "csrf")
    for status, codes in sorted(errors.items()):
        said = f"{_REASONS.get(status, 'Error')}: {codes}" if codes else _REASONS.get(status, "Error")
        if status == 303:
            responses["303"] = {"description": said}
        elif op.tag == "pages" and status != 400:  # a page's refusal is a page (a NUL's is the API's)
            responses[str(status)] = {"description": said, **_content(method, "text/html", {"type": "string"})}
        elif status == 503 and route.path == "/healthz":  # its own answer, not an error code
            responses["503"] = {"description": said, **_content(method, "application/json", {"type": "object"})}
        else:
            ref = {"$ref": "#/components/schemas/Error"}
            responses[str(status)] = {"description": said, **_content(method, "application/json", ref)}
    return responses


def _operation(method: str, op: Op, route: Route) -> dict[str, Any]:
    out: dict[str, Any] = {
        "summary": op.summary,
        "operationId": f"{method.lower()} {route.path}",
        "tags": [op.tag],
        "responses": _responses(method, op, route),
    }
    params = _parameters(op, route)
    if params:
        out["parameters"] = params
    if method != "HEAD" and (op.body is not None or op.form is not None):
        content: dict[str, Any] = {}
        if op.body is not None:
            content["application/json"] = {"schema": op.body}
        if op.form is not None:
            content["application/x-www-form-urlencoded"] = {"schema": op.form}
        out["requestBody"] = {"required": False, "content": content}
    if op.session == "read":
        out["security"] = [{}, {"session": []}]
    elif op.session == "change":
        out["security"] = [{}, {"session": [], "csrf": []}]
    return out


def document(app_routes: Iterable[Any], server: str | None = None, strict: bool = True) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the routes ``app_routes`` (an app's ``app.routes``).

    ``strict``: raise :class:`LookupError` naming any route and method :data:`OPERATIONS` does not
    describe (the tests); else such a route is listed as not described yet (the served document:
    a route added without its description must not make ``GET /api/openapi.json`` fail)."""
    found = routes(app_routes)
    lacking = [f"{m} {p}" for m, p, _ in found if (m, p) not in OPERATIONS]
    if lacking and strict:
        raise LookupError(
            f"routes without a description in jericho_game.web.site.openapi.OPERATIONS: {', '.join(lacking)}"
        )
    paths: dict[str, dict[str, Any]] = {}
    for method, path, route in found:
        op = OPERATIONS.get((method, path)) or Op("Not described yet (web/site/openapi.py, OPERATIONS)", "undescribed")
        item = paths.setdefault(path, {})
        item[method.lower()] = _operation(method, op, route)
        if method == "GET" and "HEAD" in (route.methods or ()):
            head = _operation("HEAD", op, route)
            head["operationId"] = f"head {path}"
            head["summary"] = f"{op.summary} (the headers alone)"
            item["head"] = head
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Jericho",
            "version": __version__,
            "description": (
                "The HTTP API of `jericho serve` (docs/web.md, 'HTTP API'). Every refusal is JSON "
                '`{"error": code, "message": text}` (a page\'s is an HTML page); a request that changes '
                "something for a logged-in account sends the session's CSRF token in `X-CSRF-Token`. "
                "The WebSocket protocols (`/ws/{id}`, `/ws/analysis`, `/lobby/ws`) are described in "
                "docs/web.md, 'WebSocket protocol'."
            ),
        },
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR},
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "cookie", "name": "jericho_session"},
                "csrf": {"type": "apiKey", "in": "header", "name": "X-CSRF-Token"},
            },
        },
    }
    if server is not None:
        doc["servers"] = [{"url": server}]
    return doc


@free("the API's description", methods=("GET", "HEAD"))
async def openapi_json(request: Request) -> Response:
    """``GET /api/openapi.json``: :func:`document` of this app, built once per app."""
    cached = getattr(request.app.state, "openapi", None)
    if cached is None:
        cached = request.app.state.openapi = document(request.app.routes, strict=False)
    return JSONResponse(cached, headers={"Cache-Control": "no-cache"})
