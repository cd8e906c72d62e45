"""Languages of the web app: English and French, from gettext catalogs (docs/web.md, "Translations").

The catalogs are ``locale/{en,fr}/LC_MESSAGES/messages.po`` beside this module, read with Babel
when first needed and compiled in memory (no ``.mo`` file to build or to forget to rebuild).  The
same catalogs serve the templates (:mod:`jericho_game.web.site.pages`), the page scripts (the messages
whose source is a ``.js`` file go into each page as a JSON blob, read by ``static/i18n.js``'s
``t()``) and the server's error messages (:func:`error_text`).

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


# The human text of each error code, for the languages other than English.  English keeps the
# server's own message (more precise: it names the value that was wrong); these say the same in
# general words, and the code stays the same in every language.
ERRORS = {
    "bad_request": N_("This request is not valid."),
    "bad_json": N_("The request is not valid JSON."),
    "bad_message": N_("This message is not understood."),
    "too_large": N_("The request is too large."),
    "too_many": N_("Too many requests: wait a moment and try again."),
    "rate_limited": N_("Too many requests: wait a moment and try again."),
    "busy": N_("The server is busy: try again in a moment."),
    "game_over": N_("The game is over."),
    "not_over": N_("The game is not over yet."),
    "not_a_player": N_("You are not playing in this game."),
    "not_your_turn": N_("It is not your turn."),
    "illegal": N_("This move is not allowed."),
    "waiting": N_("The game is waiting for an opponent."),
    "nothing_to_undo": N_("There is no move to take back."),
    "no_undo": N_("Taking back moves is not allowed in this game."),
    "unknown_game": N_("There is no game at this address."),
    "corrupt_game": N_("This game's record cannot be read."),
    "seat_taken": N_("This seat is already taken."),
    "bad_level": N_("This computer level is not available."),
    "moved_on": N_("The game moved on meanwhile: nothing was played."),
    "not_your_seat": N_("This seat belongs to another account: log in as its player to play it."),
    "no_offer": N_("There is no offer to answer."),
    "too_early": N_("Too early: wait a little longer."),
    "bad_username": N_("A username is 3 to 24 letters, digits, '_' or '-', starting with a letter or a digit."),
    "bad_invite": N_("This invitation is not valid, or it has already been used."),
    "bad_token": N_("This seat's key is not valid."),
    "name_required": N_("Choose a name first."),
    "timed_game": N_("Not possible in a game with a clock."),
    "not_online": N_("Only in an online game."),
    "opponent_here": N_("Your opponent is still here."),
    "own_offer": N_("You cannot answer your own offer."),
    "offer_pending": N_("An offer is already waiting for an answer."),
    "offer_again": N_("You made this offer a moment ago: wait before making it again."),
    "cannot_abort": N_("This game can no longer be cancelled."),
    "review_not_done": N_("The review is not finished yet."),
    "review_exists": N_("This game's review was already asked for: it is on its way."),
    "no_line": N_("The review has no line of the AI for this position."),
    "ai_quota": N_("You already have the most games waiting for the AI: wait for a reply; nothing was changed."),
    "seek_quota": N_("You already have the most open seeks in the lobby: wait for an opponent or cancel one."),
    "review_quota": N_("You already have the most reviews waiting: wait for one to finish; nothing was queued."),
    "unknown_puzzle": N_("There is no such puzzle."),
    "illegal_move": N_("This move is not allowed in this position."),
    "bad_position": N_("This position text cannot be read."),
    "bad_record": N_("This game record cannot be read."),
    "login_required": N_("Log in first."),
    "not_logged_in": N_("You are not logged in."),
    "bad_login": N_("Wrong username or password."),
    "bad_password": N_("This password is not accepted: at least 10 characters, and not a common password."),
    "username_taken": N_("This username is already taken."),
    "unknown_account": N_("There is no such player."),
    "signup_closed": N_("Sign-up is closed on this server."),
    "same_account": N_("You cannot play against yourself in a rated game."),
    "not_admin": N_("Only an administrator can do this."),
    "not_found": N_("There is no page at this address."),
    "bad_method": N_("This method is not allowed here."),
    "internal": N_("Server error: the game is safe, try again."),
    "full": N_("Too many connections: try again later."),
    "csrf": N_("The page is out of date: reload it and try again."),
    # the games' chat (web/social/chat.py)
    "chat_too_long": N_("This chat message is too long."),
    "chat_muted": N_("An administrator has muted your chat on this site."),
    "spectator_chat": N_("The spectators' chat opens to the players once the game is over."),
    "unknown_message": N_("There is no such chat message."),
    # e-mail notifications (web/social/notify.py)
    "bad_email": N_("This e-mail address is not valid."),
    "email_off": N_("This server sends no e-mail."),
    "too_soon": N_("A confirmation mail was sent a moment ago: wait a minute."),
    "not_your_game": N_("Only a player of this game can do this."),
    "not_invitable": N_("Only an online game waiting for its invited opponent can be sent by mail."),
    "bad_link": N_("This link is not valid."),
    "correspondence_quota": N_("You already have the most correspondence games going: finish one first."),
    "unavailable": N_("The engine is not available on this server."),
}


def error_text(code: str, message: str, lang: str) -> str:
    """The human text of an error for ``lang``: English keeps ``message``; another language gets
    ``message`` translated when the catalog has it word for word or it is one of the rules
    engine's sentences (:mod:`jericho_game.web.i18n.reasons`), else the code's general text."""
    if lang == DEFAULT or lang not in LANGUAGES:
        return message
    tr = translations(lang)
    translated = tr.gettext(message)
    if translated != message:
        return translated
    from jericho_game.web.i18n import reasons  # here: reasons imports this module

    engine = reasons.translate(message, lang)  # the rules engine's own sentence (why a move is refused)
    if engine is not None:
        return engine
    general = ERRORS.get(code)
    return tr.gettext(general) if general else message
