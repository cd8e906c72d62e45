"""Reading JSON from clients: one parser and one set of errors for every body and message.

``json.loads`` raises more than ``JSONDecodeError``: an integer of more than 4,300 digits is a
plain ``ValueError`` (CPython's guard against quadratic int parsing), deep nesting is a
``RecursionError``, and it accepts ``NaN`` / ``Infinity``, which are not JSON and which no field
of this app means.  Every caller catches :data:`JSON_ERRORS` and answers 400 ``bad_json``
(1,000 bodies with a 5,000-digit number each gave 500s and a 6.5 KB traceback each before).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["JSON_ERRORS", "loads"]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads(raw: str | bytes) -> Any:
    """``json.loads`` that also refuses ``NaN``, ``Infinity`` and ``-Infinity`` (ValueError)."""
    return json.loads(raw, parse_constant=_no_constant)


# what loads may raise on a client's bytes: JSONDecodeError and UnicodeDecodeError are ValueErrors
JSON_ERRORS: tuple[type[BaseException], ...] = (ValueError, RecursionError, TypeError)
