"""Reading JSON from clients: one parser and one set of errors for every body and message.

``json.loads`` raises more than ``JSONDecodeError``: an integer of more than 4,300 digits is a
plain ``ValueError`` (CPython's guard against quadratic int parsing), deep nesting is a
``RecursionError``, and it accepts ``NaN`` / ``Infinity``, which are not JSON and which no field
of this app means.  Every caller catches :data:`JSON_ERRORS` and answers 400 ``bad_json``
(1,000 bodies with a 5,000-digit number each gave 500s and a 6.5 KB traceback each before).

A NUL character (``"\\u0000"``) is valid JSON but no text of this app holds one, and PostgreSQL's
text cannot: a username or an id with one answered 500 (issue 51, found by fuzzing the API).
:func:`loads` refuses it (:class:`NulText`, a ``ValueError``), and :func:`read_object` answers 400
``bad_request`` naming it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.requests import Request

__all__ = ["JSON_ERRORS", "BadRequest", "NulText", "loads", "read_object"]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class NulText(ValueError):
    """A JSON text holding a NUL character, which no text of this app holds."""

    def __init__(self) -> None:
        super().__init__("text may not hold a NUL character (\\u0000)")


def _holds_nul(value: Any) -> bool:
    """Whether a parsed JSON value holds a NUL character in any string, key or value (iterative: a
    deeply nested value is walked without recursion)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if "\x00" in v:
                return True
        elif isinstance(v, dict):
            stack.extend(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def loads(raw: str | bytes) -> Any:
    """``json.loads`` that also refuses ``NaN``, ``Infinity`` and ``-Infinity``, and any string
    holding a NUL character (:class:`NulText`): each a ``ValueError``."""
    value = json.loads(raw, parse_constant=_no_constant)
    # a NUL can only be written \u0000 (raw control characters are not JSON), so most texts skip the
    # walk; bytes with a zero byte may be UTF-16 or UTF-32, which json.loads reads too: walked
    if isinstance(raw, bytes):
        suspect = b"\\u0000" in raw or b"\x00" in raw
    else:
        suspect = "\\u0000" in raw
    if suspect and _holds_nul(value):
        raise NulText()
    return value


# what loads may raise on a client's bytes: JSONDecodeError and UnicodeDecodeError are ValueErrors
JSON_ERRORS: tuple[type[BaseException], ...] = (ValueError, RecursionError, TypeError)


class BadRequest(Exception):
    """A request refused before any work: ``code``, a message naming what was wrong, an HTTP status."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


async def read_object(
    request: Request, max_body: int, error: Callable[[str, str, int], Exception] = BadRequest
) -> dict[str, Any]:
    """The request's body as a JSON object, read no further than ``max_body`` bytes.

    Raises ``error(code, message, status)`` (:class:`BadRequest` unless the caller's module has
    its own refusal, e.g. ``rooms.ClientError``): ``too_large`` (413) past the limit,
    ``bad_json`` when it is no JSON (or holds what :func:`loads` refuses), ``bad_request`` when
    it is not an object.  An empty (or blank) body is ``{}``."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body:
            raise error("too_large", f"request body too large: the limit is {max_body} bytes", 413)
    if not body.strip():
        return {}
    try:
        data = loads(body)
    except NulText as exc:
        raise error("bad_request", f"request body: {exc}", 400) from None
    except JSON_ERRORS as exc:
        raise error("bad_json", f"request body is not valid JSON ({str(exc)[:80]})", 400) from None
    if not isinstance(data, dict):
        raise error("bad_request", "request body must be a JSON object", 400)
    return data
