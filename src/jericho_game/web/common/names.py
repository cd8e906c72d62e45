"""Display names of players: what a name may hold, checked in one place.

A name is shown to the opponent, to spectators, in the lobby and in downloaded records
(``[South "..."]``), so it must read the same everywhere and hide nothing: after NFC
normalisation and trimming it is 1 to :data:`MAX_NAME` characters, runs of spaces become one
plain space, and it holds no control, format (bidi overrides and isolates, zero-width
characters, the byte order mark), line or paragraph separator, private-use, surrogate or
unassigned character, nor one of the letters that draw nothing (Hangul fillers, the braille
blank).  Anything printable is allowed otherwise, ``<script>`` included: the page renders names
only as text, never as HTML.
"""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["MAX_NAME", "NameError_", "check_name"]

MAX_NAME = 24
# categories that never belong in a name: controls, format (bidi, zero-width), separators
# other than the space, private use, surrogates, unassigned
_BANNED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"}
# letters and symbols that draw nothing, though their category says otherwise
_INVISIBLE = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u180e", "\u17b4", "\u17b5"}
_MAX_MARKS = 3  # combining marks in a row (more is "Zalgo" text that spills over other lines)


class NameError_(ValueError):  # noqa: N801 - NameError is a builtin
    """A refused display name: ``code`` (``bad_name``) and a message naming what was wrong."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.code = "bad_name"
        self.message = message


def check_name(raw: Any) -> str:
    """The name to store for ``raw``, or :class:`NameError_` saying what is wrong with it."""
    if not isinstance(raw, str):
        raise NameError_("a name must be text")
    if len(raw) > 200:
        raise NameError_(f"a name is at most {MAX_NAME} characters")
    name = unicodedata.normalize("NFC", raw)
    for i, ch in enumerate(name):
        cat = unicodedata.category(ch)
        if cat in _BANNED_CATEGORIES or ch in _INVISIBLE:
            what = unicodedata.name(ch, f"U+{ord(ch):04X}")
            raise NameError_(
                f"a name cannot hold control or invisible characters: character {i + 1} is "
                f"U+{ord(ch):04X} ({what.lower()})"
            )
    # every space (no-break, ideographic, ...) becomes a plain one; runs of them become one
    name = " ".join("".join(" " if unicodedata.category(c) == "Zs" else c for c in name).split())
    if not name:
        raise NameError_("a name needs at least one visible character")
    if len(name) > MAX_NAME:
        raise NameError_(f"a name is at most {MAX_NAME} characters (this one has {len(name)})")
    marks = 0
    for i, ch in enumerate(name):
        if unicodedata.category(ch) in ("Mn", "Me"):
            marks += 1
            if i == 0:
                raise NameError_("a name cannot start with a combining mark")
            if marks > _MAX_MARKS:
                raise NameError_(f"a name cannot stack more than {_MAX_MARKS} combining marks on one letter")
        else:
            marks = 0
    return name
