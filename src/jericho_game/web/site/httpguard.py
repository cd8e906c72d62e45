"""uvicorn's HTTP protocol with a request-head size limit and a request-head timeout.

uvicorn's default parser (httptools) accepts request headers of any size (2 MB were taken) and
waits forever for a request's headers to end (a slowloris client holds a connection and its
buffers with one byte every few seconds); its ``timeout_keep_alive`` only closes connections
that sit idle *between* requests.  :class:`GuardedHttpToolsProtocol` adds, per request:

- a **size limit** on the request line and headers (:data:`MAX_HEAD_BYTES`, 16 KiB, h11's own
  default): over it the client gets ``431 Request Header Fields Too Large`` and the connection
  is closed;
- a **timeout** (:data:`HEAD_TIMEOUT`, 10 s) from the connection's opening, or from the first
  byte of a further request, to the end of its headers: past it the connection is closed.

:func:`uvicorn_options` gives the options ``jericho serve`` passes to uvicorn: this protocol when
httptools is installed (uvicorn's choice otherwise too), else h11 with
``h11_max_incomplete_event_size`` set to the same limit, and ``timeout_keep_alive``.  A reverse
proxy in front (docs/web.md, "Deployment") should still enforce its own, shorter limits.

:class:`NulGuard`, an ASGI middleware of the app, refuses a request whose path or query holds a NUL
character (``%00``): no name, id or secret of this site holds one, and PostgreSQL's text cannot (a
``GET /api/people/a%00b`` answered 500; issue 51, found by fuzzing the API).  JSON bodies are
checked where they are read (:mod:`jericho_game.web.common.jsonin`).
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["HEAD_TIMEOUT", "KEEP_ALIVE", "MAX_HEAD_BYTES", "NulGuard", "uvicorn_options"]

MAX_HEAD_BYTES = 16 * 1024  # request line + headers of one request
HEAD_TIMEOUT = 10.0  # seconds from a request's first byte (or the connection's opening) to its headers' end
KEEP_ALIVE = 5  # seconds an idle keep-alive connection is kept (uvicorn's timeout_keep_alive)

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools is not installed: uvicorn uses h11 (see uvicorn_options)
    HttpToolsProtocol = None  # type: ignore[assignment,misc]


class _HeadTooLarge(Exception):
    pass


if HttpToolsProtocol is not None:
    __all__ += ["GuardedHttpToolsProtocol"]

    class GuardedHttpToolsProtocol(HttpToolsProtocol):  # type: ignore[misc,valid-type]
        """httptools' protocol with :data:`MAX_HEAD_BYTES` and :data:`HEAD_TIMEOUT` per request
        (class attributes, so a test can shorten them in a subclass)."""

        max_head_bytes = MAX_HEAD_BYTES
        head_timeout = HEAD_TIMEOUT

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._head_pending = True  # the connection's first request has not sent its headers yet
            self._head_bytes = 0
            self._head_timer: asyncio.TimerHandle | None = None
            self._head_too_large = False
            self._head_size = 0  # bytes of the current request's line and headers, as parsed

        def _arm(self) -> None:
            if self._head_timer is None:
                self._head_timer = self.loop.call_later(self.head_timeout, self._head_timed_out)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if self._head_pending and not self.transport.is_closing():
                self.transport.close()  # a slow (or silent) client: nothing was dispatched, nothing is lost

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._head_pending:
                self._arm()  # also the first byte of a further request on a kept-alive connection
                self._head_bytes += len(data)
            super().data_received(data)
            if self._head_pending and self._head_bytes > self.max_head_bytes and not self.transport.is_closing():
                self._head_too_large = True
                self.send_400_response("request headers too large")

        def on_message_begin(self) -> None:
            self._head_pending = True
            self._head_size = 0
            self._arm()
            super().on_message_begin()

        def on_url(self, url: bytes) -> None:
            self._count(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count(len(name) + len(value) + 4)
            super().on_header(name, value)

        def _count(self, n: int) -> None:
            # a head that arrives in one large read is caught here, before it is dispatched
            self._head_size += n
            if self._head_size > self.max_head_bytes:
                self._head_too_large = True
                raise _HeadTooLarge  # httptools turns it into a parser error: uvicorn answers and closes

        def on_headers_complete(self) -> None:
            self._head_pending = False
            self._head_bytes = 0
            self._disarm()
            super().on_headers_complete()

        def send_400_response(self, msg: str) -> None:
            if not self._head_too_large:
                super().send_400_response(msg)
                return
            body = b"request headers too large"
            self.transport.write(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
                b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body
            )
            self.transport.close()


def uvicorn_options() -> dict[str, Any]:
    """The HTTP options of ``jericho serve``'s uvicorn: the guarded protocol, the head limit (h11
    too) and the keep-alive timeout."""
    opts: dict[str, Any] = {"timeout_keep_alive": KEEP_ALIVE, "h11_max_incomplete_event_size": MAX_HEAD_BYTES}
    if HttpToolsProtocol is not None:
        opts["http"] = GuardedHttpToolsProtocol
    else:
        opts["http"] = "h11"
    return opts


class NulGuard:
    """ASGI middleware: 400 ``bad_request`` for an HTTP request whose path or query string holds a
    NUL character, before any route sees it (the message in the request's language)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not ("\x00" in scope.get("path", "") or b"%00" in scope.get("query_string", b"")):
            await self.app(scope, receive, send)
            return
        from starlette.requests import HTTPConnection
        from starlette.responses import JSONResponse

        from jericho_game.web import i18n

        message = "the address holds a NUL character (%00): no path or parameter of this site has one"
        lang = i18n.request_language(HTTPConnection(scope))
        body = {"error": "bad_request", "message": i18n.error_text("bad_request", message, lang)}
        await JSONResponse(body, status_code=400)(scope, receive, send)
