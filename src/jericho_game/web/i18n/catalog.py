"""The catalogs and the language of a request: English and French, from gettext catalogs.

The catalogs are ``locale/{en,fr}/LC_MESSAGES/messages.po`` beside this module, read with Babel
when first needed and compiled in memory (no ``.mo`` file to build or to forget to rebuild).

The language of a request: the ``lang`` query parameter (a link can force it), then the
``jericho_lang`` cookie (the header's switch sets it), then ``Accept-Language``, then English.
"""

from __future__ import annotations

import gettext
import io
import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from jericho_game.extras import missing_extra

try:
    from babel.dates import format_date as _format_date
    from babel.dates import format_time, get_datetime_format
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    from babel.numbers import format_decimal
except ImportError as exc:  # pragma: no cover - the web extra brings Babel
    raise missing_extra("the web app's translations", "web", exc) from exc

LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "fr")
DEFAULT = "en"
COOKIE = "jericho_lang"
# The name of each language in itself: what the switch offers.
NATIVE = {"en": "English", "fr": "Français"}


def format_number(value: float, lang: str) -> str:
    """A number as ``lang`` writes it (Babel, CLDR): ``1,234.5`` in English, ``1 234,5`` in French."""
    return str(format_decimal(value, locale=lang if lang in LANGUAGES else DEFAULT))


def format_date(timestamp: float, lang: str, time: bool = True) -> str:
    """A Unix time as ``lang`` writes a date (and a time, UTC): ``2 déc. 2026, 06:40`` in French."""
    locale = lang if lang in LANGUAGES else DEFAULT
    when = datetime.fromtimestamp(timestamp, tz=UTC)
    day = str(_format_date(when, "medium", locale=locale))
    if not time:
        return day
    # the language's own way of joining a date and a time ("{1}, {0}"), the time without seconds
    joined = str(get_datetime_format("medium", locale=locale))
    return joined.replace("{1}", day).replace("{0}", str(format_time(when, "short", tzinfo=UTC, locale=locale)))


def N_(message: str) -> str:
    """Mark a string for extraction without translating it now (it is translated where shown)."""
    return message


@cache
def _catalog(lang: str) -> Any:
    with (LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po").open("rb") as f:
        return read_po(f, locale=lang)


@cache
def translations(lang: str) -> gettext.NullTranslations:
    """The compiled translations of ``lang`` (English: the catalog's empty strings mean "as written")."""
    if lang not in LANGUAGES:
        lang = DEFAULT
    buf = io.BytesIO()
    write_mo(buf, _catalog(lang))
    buf.seek(0)
    return gettext.GNUTranslations(buf)


@cache
def js_catalog(lang: str) -> dict[str, str]:
    """The translated messages that the page scripts use (those found in a ``.js`` file)."""
    if lang == DEFAULT:
        return {}  # the scripts are written in English: t() falls back to the message itself
    out: dict[str, str] = {}
    for msg in _catalog(lang):
        if msg.id and msg.string and not msg.fuzzy and any(loc.endswith(".js") for loc, _ in msg.locations):
            out[str(msg.id)] = str(msg.string)
    return out


_RANGE = re.compile(r"\s*([A-Za-z]{1,8})(?:-[A-Za-z0-9]{1,8})*\s*(?:;\s*q\s*=\s*([0-9.]{1,5}))?\s*")


def from_accept_language(header: str | None) -> str | None:
    """The best of :data:`LANGUAGES` for an ``Accept-Language`` header (by q value, then order), or None."""
    best: tuple[float, int, str] | None = None
    for i, part in enumerate((header or "")[:500].split(",")):
        m = _RANGE.fullmatch(part)
        if not m:
            continue
        try:
            q = float(m.group(2)) if m.group(2) else 1.0
        except ValueError:
            continue
        lang = m.group(1).lower()
        if lang in LANGUAGES and q > 0 and (best is None or (q, -i) > (best[0], best[1])):
            best = (q, -i, lang)
    return best[2] if best else None


def choose(query: str | None, cookie: str | None, accept: str | None) -> str:
    """The language of a request: query parameter, cookie, ``Accept-Language``, then English."""
    for wanted in (query, cookie):
        if wanted in LANGUAGES:
            return str(wanted)
    return from_accept_language(accept) or DEFAULT


def request_language(request: Any) -> str:
    """:func:`choose` for a Starlette request or WebSocket."""
    return choose(request.query_params.get("lang"), request.cookies.get(COOKIE), request.headers.get("accept-language"))


def connection_language(conn: Any) -> str:
    """:func:`request_language` of a WebSocket, or English for anything that is not a connection."""
    try:
        return request_language(conn)
    except (AttributeError, KeyError, TypeError):
        return DEFAULT
