"""A tournament's chat (issue 52; docs/web.md, "Tournaments"): one room per tournament, on its page.

It is the games' chat (:mod:`jericho_game.web.social.chat`) with another key, not a second chat:
its messages are rows of ``chat_messages`` in room ``tournament`` keyed ``t:ID``, so they obey the
same rules and share the same limits and tools:

- **Who**: anyone reads (as on lichess, a tournament's chat is public); logged-in accounts write,
  the tournament's players and visitors alike; an anonymous visitor is refused ``login_required``.
  An account an admin muted site-wide (``jericho user mute``) is refused ``chat_muted``.
- **What**: one line of plain text, :attr:`ChatPolicy.max_chars` at most (:func:`clean_text`).
- **How much**: the ``chat.message`` budget, per author in this room (the pair: the account towards
  ``t:ID``) and per account across every room, games' and tournaments' together; reports ask
  ``chat.report`` and reach the admins' one queue (``GET /api/admin/chat/reports``; their
  ``game_id`` is ``t:ID`` and their ``room`` ``tournament``).
- **Blocks**: a line is hidden from a reader who blocked its author or whom its author blocked
  (the games' chat's ``_apart``).  There is no per-game opponent mute here: the block is a
  player's own tool in a room of many.

The page reads its room with the tournament every 3 s (``GET .../chat?after=SEQ``), as it reads
the standings: the database is the truth, and nothing is held in a process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from jericho_game.web.common.budget import costs, free
from jericho_game.web.round.gameroom import ClientError
from jericho_game.web.social.chat import TOURNAMENT_ROOM, Chat, ChatMessage, clean_text
from jericho_game.web.tournaments.tournaments import TournamentService

__all__ = ["TournamentChat", "room_key"]


def room_key(tid: str) -> str:
    """The ``chat_messages.game_id`` of a tournament's room."""
    return f"t:{tid}"


class TournamentChat:
    """The tournaments' rooms: reading, writing and reporting, through the games' chat's store."""

    def __init__(self, chat: Chat, tournaments: TournamentService) -> None:
        self.chat = chat
        self.tournaments = tournaments

    def _known(self, tid: Any) -> str:
        """The room of an existing tournament; ``unknown_tournament`` (404) otherwise."""
        with self.tournaments.storage.reader.connect() as conn:
            self.tournaments._tournament(conn, tid)
        return room_key(tid)

    def _seen(self, reader: int | None, messages: list[ChatMessage]) -> list[ChatMessage]:
        apart = self.chat._apart([reader], messages).get(reader, set())
        return [m for m in messages if m.account is None or m.account not in apart]

    def read(self, tid: Any, reader: int | None, after: int = 0) -> dict[str, Any]:
        """The room's messages after ``seq`` ``after`` (the latest :attr:`ChatPolicy.history` at most),
        without those of authors ``reader`` is apart from; ``seq``: the room's last, shown or not."""
        key = self._known(tid)
        messages = self.chat.store.messages(key, after, latest=self.chat.policy.history)
        last = messages[-1].seq if messages else after
        shown = [m.as_json() for m in self._seen(reader, messages)]
        return {"messages": shown, "seq": last, "writable": reader is not None}

    def post(self, tid: Any, account: int | None, address: str | None, raw: Any) -> ChatMessage:
        """Write ``raw`` in the room as ``account``: the games' chat's rules and ``chat.message`` budget."""
        body = clean_text(raw, self.chat.policy.max_chars)
        if account is None:
            raise ClientError("login_required", "log in to write in a tournament's chat (anyone may read it)", 403)
        key = self._known(tid)
        if self.chat.store.site_muted(account):
            raise ClientError("chat_muted", "an admin muted your chat on this site", 403)
        author = self.chat.account_name(account) or "?"
        return self.chat.store.post(
            key,
            TOURNAMENT_ROOM,
            side=None,
            account=account,
            author=author,
            address=address,
            body=body,
            ply=0,
            now=self.tournaments.now(),
        )

    def report(self, tid: Any, account: int | None, address: str | None, message_id: Any, reason: Any) -> bool:
        """Report a message of the room (accounts only): the ``chat.report`` budget, the admins' queue."""
        if not isinstance(message_id, int) or isinstance(message_id, bool):
            raise ClientError("bad_request", "send {'id': the number of the message}")
        if account is None:
            raise ClientError("login_required", "log in to report a chat message", 403)
        if reason is not None:
            reason = clean_text(reason, self.chat.policy.max_chars)
        key = self._known(tid)
        found = self.chat.store.message(message_id)
        if found is None or found.game_id != key or not self._seen(account, [found]):
            raise ClientError("unknown_message", f"there is no chat message {message_id} that you can read here", 404)
        return self.chat.store.report(found, f"account:{account}", reason, self.tournaments.now(), address=address)

    def routes(self, accounts: Any) -> list[Any]:
        """``GET``/``POST /api/tournaments/{id}/chat`` and ``POST /api/tournaments/{id}/chat/report``
        (listed before the tournaments' own routes: their ``{id}/{what}`` would take them)."""
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        from jericho_game.web.common import jsonin
        from jericho_game.web.common.fairshare import address_of

        async def blocking(fn: Callable[..., Any], *args: Any) -> Any:
            return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

        async def writer(request: Request) -> int | None:
            sess = await blocking(accounts.account_for_change, request)
            return None if sess is None else int(sess.account.id)

        @free("one tournament's room, at most ChatPolicy.history messages", methods=("GET", "HEAD"))
        @costs("chat.message", methods=("POST",))
        async def room(request: Request) -> Response:
            tid = request.path_params["id"]
            if request.method in ("GET", "HEAD"):
                raw = request.query_params.get("after", "0")
                if not raw.isdigit() or len(raw) > 9:
                    raise ClientError("bad_request", "after must be a whole number: the last seq the page has")
                sess = await blocking(accounts.session_of, request)
                reader = None if sess is None else int(sess.account.id)
                data = await blocking(self.read, tid, reader, int(raw))
                return JSONResponse(data, headers={"Cache-Control": "private, no-store"})
            me = await writer(request)
            body = await jsonin.read_object(request, 4096, ClientError)
            msg = await blocking(self.post, tid, me, address_of(request), body.get("text"))
            return JSONResponse(msg.as_json(), status_code=201)

        @costs("chat.report", methods=("POST",))
        async def report(request: Request) -> Response:
            me = await writer(request)
            body = await jsonin.read_object(request, 4096, ClientError)
            tid = request.path_params["id"]
            await blocking(self.report, tid, me, address_of(request), body.get("id"), body.get("reason"))
            return JSONResponse({"reported": body.get("id")})

        return [
            Route("/api/tournaments/{id}/chat", room, methods=["GET", "HEAD", "POST"]),
            Route("/api/tournaments/{id}/chat/report", report, methods=["POST"]),
        ]
