"""Unexpected errors: a 500 that carries the security headers, one log line, few tracebacks.

Starlette's own last-resort handler sits outside every middleware, so its 500 went out without
the security headers, and it re-raises, so uvicorn logged a second full traceback: 1,000 bad
bodies wrote 3.8 MB of log in 1.2 s.  :class:`InternalErrors` sits inside the security-headers
middleware and catches what the routes let through: the client gets a short JSON 500 (with the
headers), the log gets one line per error and a full traceback at most once per
``traceback_every`` seconds per process, and nothing is re-raised.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["InternalErrors"]

log = logging.getLogger("jericho_game.web")

_BODY = json.dumps({"error": "internal", "message": "internal server error: the game is safe, try again"}).encode()


def _body_for(scope: Scope) -> bytes:
    """The 500's body in the request's language (English when even that cannot be told)."""
    try:
        from starlette.requests import HTTPConnection

        from jericho_game.web import i18n

        lang = i18n.request_language(HTTPConnection(scope))
        if lang == i18n.DEFAULT:
            return _BODY
        message = json.loads(_BODY)["message"]
        return json.dumps({"error": "internal", "message": i18n.error_text("internal", message, lang)}).encode()
    except Exception:  # noqa: BLE001 - the last resort must answer whatever happens
        return _BODY


class InternalErrors:
    """ASGI middleware: an exception escaping the app becomes a 500 and a rate-limited log entry."""

    def __init__(self, app: ASGIApp, traceback_every: float = 60.0) -> None:
        self.app = app
        self.traceback_every = traceback_every
        self._last_traceback = -float("inf")
        self.suppressed = 0  # tracebacks left out since the last one logged

    def _log(self, scope: Scope, exc: BaseException) -> None:
        where = f"{scope.get('method', scope['type'])} {str(scope.get('path', ''))[:100]}"
        now = time.monotonic()
        if now - self._last_traceback >= self.traceback_every:
            self._last_traceback = now
            extra = f" ({self.suppressed} tracebacks left out before this one)" if self.suppressed else ""
            self.suppressed = 0
            log.error("internal error on %s: %s: %.200s%s", where, type(exc).__name__, exc, extra, exc_info=exc)
        else:
            self.suppressed += 1
            log.error("internal error on %s: %s: %.200s", where, type(exc).__name__, exc)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:  # noqa: BLE001 - the last resort: answer, log briefly, go on
            self._log(scope, exc)
            if started:
                return  # part of an answer went out: the connection ends short, the client retries
            body = _body_for(scope)
            headers: list[Any] = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 500, "headers": headers})
            await send({"type": "http.response.body", "body": body})
