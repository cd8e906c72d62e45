"""An account's display preferences (issue 34, point 4): the board and piece themes, kept with the
account so that they follow the player into any browser.  A browser without an account keeps them
in ``localStorage`` alone (``static/looks.js``); a logged-in player's choice is written both there
and here, and read back from here on every page.

Table ``account_prefs`` (one row per account that chose); routes ``GET``/``POST /api/account/prefs``
(``{"board": ..., "pieces": ...}``, both optional on ``POST``; anything else is refused, naming the
choices)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, text
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from jericho_game.web.accounts.accounts import AccountService
from jericho_game.web.common import jsonin
from jericho_game.web.common.budget import free
from jericho_game.web.round.gameroom import ClientError
from jericho_game.web.storage.database import Storage

#: The board themes and the piece sets (style.css: ``[data-board]``, ``[data-pieces]``); the first is the default.
BOARDS = ("wood", "slate", "paper")
PIECES = ("classic", "bright", "deep")

_metadata = MetaData()
prefs_table = Table(
    "account_prefs",
    _metadata,
    Column("account", Integer, primary_key=True),
    Column("board", String(16), nullable=False),
    Column("pieces", String(16), nullable=False),
    Column("updated_at", Float, nullable=False),
)

# "INSERT ... ON CONFLICT ... DO UPDATE" reads the same on SQLite (3.24+) and PostgreSQL
_UPSERT = text(
    "INSERT INTO account_prefs (account, board, pieces, updated_at) VALUES (:a, :b, :p, :now) "
    "ON CONFLICT (account) DO UPDATE SET board = :b, pieces = :p, updated_at = :now"
)


class Prefs:
    """The ``account_prefs`` table (SQL only); :class:`Storage` lends its engines."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        storage.create_tables(_metadata)

    def get(self, account: int) -> dict[str, str]:
        """The account's themes (the defaults when it never chose)."""
        with self.storage.reader.connect() as conn:
            row = conn.execute(
                text("SELECT board, pieces FROM account_prefs WHERE account = :a"), {"a": account}
            ).first()
        board, pieces = (row[0], row[1]) if row is not None else (BOARDS[0], PIECES[0])
        return {"board": board if board in BOARDS else BOARDS[0], "pieces": pieces if pieces in PIECES else PIECES[0]}

    def set(self, account: int, body: dict[str, Any], now: float | None = None) -> dict[str, str]:
        """Change what ``body`` names; 400 ``bad_request`` (naming the choices) on anything else."""
        unknown = sorted(set(body) - {"board", "pieces"})
        if unknown:
            raise ClientError("bad_request", f"unknown preference {unknown[0]!r}: send 'board' and/or 'pieces'")
        for key, allowed in (("board", BOARDS), ("pieces", PIECES)):
            if key in body and body[key] not in allowed:
                raise ClientError("bad_request", f"'{key}' must be one of {', '.join(allowed)}")
        with self.storage.engine.begin() as conn:
            row = conn.execute(
                text("SELECT board, pieces FROM account_prefs WHERE account = :a"), {"a": account}
            ).first()
            board = body.get("board", row[0] if row is not None else BOARDS[0])
            pieces = body.get("pieces", row[1] if row is not None else PIECES[0])
            conn.execute(_UPSERT, {"a": account, "b": board, "p": pieces, "now": now or time.time()})
        return {"board": board, "pieces": pieces}


def prefs_routes(prefs: Prefs, accounts: AccountService) -> list[Route]:
    """``/api/account/prefs``: read (``GET``) or change (``POST``, with the session's CSRF token)."""

    async def blocking(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    @free("one row of the account's own settings", writes=("account_prefs",))
    async def endpoint(request: Request) -> Response:
        if request.method in ("GET", "HEAD"):  # HEAD is a GET without its body, never a change
            sess = await blocking(accounts.session_of, request)
        else:
            sess = await blocking(accounts.account_for_change, request)
        if sess is None:
            raise ClientError("not_logged_in", "log in first: this browser keeps its own themes", 401)
        if request.method in ("GET", "HEAD"):  # HEAD is a GET without its body, never a change
            data = await blocking(prefs.get, sess.account.id)
        else:
            body = await jsonin.read_object(request, 1024, ClientError)
            data = await blocking(prefs.set, sess.account.id, body)
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    return [Route("/api/account/prefs", endpoint, methods=["GET", "POST"])]
