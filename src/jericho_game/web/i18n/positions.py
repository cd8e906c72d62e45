"""A bad position text, said to a player (issue 52): what was wrong, in the page's language.

The engine names a bad field for developers (``towers: unknown cell 'z9'``,
:func:`jericho_game.position.parse_position`; docs/notation.md, section 2).  The analysis board's
position box and the game search's position filter show the error to players, who may never have
read the notation: :func:`explain` turns each of the engine's sentences into one that names the part
of the text at fault in plain words (``The towers: there is no cell z9 on the board.``), and
:func:`translate` says that sentence again in another language (:func:`jericho_game.web.i18n.error_text`
asks it), reading it back into its catalog message and values as :mod:`.reasons` does for the rules'
sentences.  A sentence of the engine that none of these patterns knows becomes the general
``This position text cannot be read.``
"""

from __future__ import annotations

import re

from jericho_game.web.i18n import catalog as i18n
from jericho_game.web.i18n.catalog import N_

GENERAL = N_("This position text cannot be read.")

#: The fields' names as the engine writes them, and as a player reads them.
FIELDS = {
    "south reserve": N_("South's reserve"),
    "north reserve": N_("North's reserve"),
}

_RESERVE = "(?P<field>south reserve|north reserve)"


def _q(name: str) -> str:
    """A value the engine quotes with repr(): the text as typed (one holding a quote is left unknown)."""
    return rf"'(?P<{name}>[^']*)'"


# (the engine's sentence, the player's sentence): each player's sentence holds the engine's values by
# name; {field} is one of FIELDS, said in the reader's language
RULES: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"position has (?P<n>\d+) fields, expected 7: .*"),
        N_(
            "A position text has 7 parts separated by spaces (the towers, South's reserve, North's reserve, "
            "whose turn it is, the last move, the passes and the result); this one has {n}."
        ),
    ),
    (
        re.compile(rf"towers: item {_q('item')} is not cell:pieces, e\.g\. d3:1G2Y"),
        N_("The towers: “{item}” should be a cell and its pieces, such as d3:1G2Y."),
    ),
    (re.compile(rf"towers: unknown cell {_q('cell')}"), N_("The towers: there is no cell “{cell}” on the board.")),
    (re.compile(r"towers: cell (?P<cell>\S+) is listed twice"), N_("The towers: cell {cell} is given twice.")),
    (
        re.compile(rf"towers: (?P<cell>\S+) has malformed pieces {_q('pieces')}"),
        N_("The towers: the pieces on {cell} should be a size and a colour each, such as 1G2Y, not “{pieces}”."),
    ),
    (
        re.compile(r"towers: (?P<cell>[^\s:]+): .*"),
        N_("The towers: a piece on {cell} is not a size from 1 to 5 followed by a colour R, Y, G, B or W."),
    ),
    (
        re.compile(r"towers: (?P<cell>\S+) holds two pieces of size (?P<size>\d)"),
        N_("The towers: {cell} holds two pieces of size {size}; a tower holds each size at most once."),
    ),
    (
        re.compile(r"towers: (?P<cell>\S+) holds two \w+ pieces"),
        N_("The towers: {cell} holds two pieces of the same colour; a tower holds each colour at most once."),
    ),
    (
        re.compile(r"towers: (?P<cell>\S+) holds (?P<n>\d+) pieces, at most 4 fit"),
        N_("The towers: {cell} holds {n} pieces; a tower holds at most 4."),
    ),
    (
        re.compile(rf"{_RESERVE}: no size (?P<size>\d) \(sizes run 1-5\), at character \d+"),
        N_("{field}: there is no size {size}; sizes run from 1 to 5."),
    ),
    (
        re.compile(rf"{_RESERVE}: expected a size digit before {_q('colour')}, at character \d+"),
        N_("{field}: “{colour}” needs its size before it, such as 3{colour}."),
    ),
    (
        re.compile(rf"{_RESERVE}: unknown colour {_q('colour')} \(colours are RYGBW\), at character \d+"),
        N_("{field}: “{colour}” is not a colour; the colours are R, Y, G, B and W."),
    ),
    (
        re.compile(rf"{_RESERVE}: piece (?P<piece>\S+) is listed twice"),
        N_("{field}: piece {piece} is given twice."),
    ),
    (
        re.compile(r"reserves: piece (?P<piece>\S+) appears (?P<n>\d+) times on the board and in the reserves, .*"),
        N_(
            "Piece {piece} appears {n} times on the board and in the reserves; "
            "there are two of each piece, one for each player."
        ),
    ),
    (
        re.compile(rf"turn: expected 'south' or 'north', not {_q('turn')}"),
        N_("Whose turn it is: write south or north, not “{turn}”."),
    ),
    (
        re.compile(rf"passes: expected 0, 1 or 2, not {_q('passes')}"),
        N_("The passes: write 0, 1 or 2, not “{passes}”."),
    ),
    (
        re.compile(rf"result: expected \*, south, north or draw, not {_q('result')}"),
        N_("The result: write * (the game goes on), south, north or draw, not “{result}”."),
    ),
    (
        re.compile(rf"last: {_q('last')} given, but passes is \d \(the last turn was a pass\)"),
        N_("The last move: “{last}” is given, but the passes say the last turn was a pass (write - instead)."),
    ),
    (
        re.compile(r"last: (?P<last>\S+) is not the top piece of the tower on (?P<cell>\S+)"),
        N_("The last move: {last} is not the top piece of the tower on {cell}."),
    ),
    (
        re.compile(r"last: (?P<last>\S+) was placed by the opponent, but \S+ is still in its reserve"),
        N_("The last move: {last} was placed by the side that just played, but that piece is still in its reserve."),
    ),
    (
        re.compile(r"last: .*"),
        N_("The last move: write a placement such as 5R@d2, or - when there is none."),
    ),
    (
        re.compile(r"result: both players passed, so the game is over and the result cannot be \*"),
        N_("The result: both players passed, so the game is over: write its result, not *."),
    ),
    (
        re.compile(r"result: after two passes the score (?P<south>\d+)-(?P<north>\d+) gives \w+"),
        N_("The result does not match the score after both players passed: South {south}, North {north}."),
    ),
    (
        re.compile(r"result: \w+ cannot have won while holding (?P<n>\d+) monoliths"),
        N_("The result: a side wins with seven monoliths, and the winner given holds {n}."),
    ),
    (
        re.compile(r"result: \w+ won by the seven-monolith rule, .*"),
        N_("The result: after a win by seven monoliths, the turn is the winner's."),
    ),
    (
        re.compile(r"result: a draw needs both players to have passed \(passes 2\)"),
        N_("The result: a game is drawn only after both players passed (passes 2)."),
    ),
]


def _match(sentence: str) -> tuple[str, dict[str, str]] | None:
    """The player's message and its values for one of the engine's sentences (None: unknown)."""
    for pattern, message in RULES:
        m = pattern.fullmatch(sentence.strip())
        if m is not None:
            return message, m.groupdict()
    return None


def _say(message: str, values: dict[str, str], lang: str) -> str:
    tr = i18n.translations(lang if lang in i18n.LANGUAGES else i18n.DEFAULT)
    if "field" in values:
        values = {**values, "field": tr.gettext(FIELDS[values["field"]])}
    return tr.gettext(message).format(**values)


def explain(sentence: str) -> str:
    """The engine's sentence about a bad position text (``str(PositionError)``), in English for a
    player: what was wrong, in plain words; the general sentence when the engine's is unknown."""
    found = _match(sentence)
    return GENERAL if found is None else _say(*found, i18n.DEFAULT)


# the player's sentences, as patterns: read back from the English text to say it in another language
_BACK: list[tuple[re.Pattern[str], str]] = []


def _back() -> list[tuple[re.Pattern[str], str]]:
    if not _BACK:
        for _, message in RULES:
            parts = re.split(r"\{(\w+)\}", message)
            rx = "".join(re.escape(p) if i % 2 == 0 else rf"(?P<{p}_{i}>.+?)" for i, p in enumerate(parts))
            _BACK.append((re.compile(rx), message))
    return _BACK


def translate(text: str, lang: str) -> str | None:
    """``text``, one of :func:`explain`'s sentences (maybe after the ``"position: "`` that names the
    search's filter), in ``lang``; None when it is none of them."""
    prefix, body = ("position: ", text[10:]) if text.startswith("position: ") else ("", text)
    if body == GENERAL:
        return prefix + i18n.translations(lang).gettext(GENERAL)
    for pattern, message in _back():
        m = pattern.fullmatch(body)
        if m is None:
            continue
        values = {k.rsplit("_", 1)[0]: v for k, v in m.groupdict().items()}
        if "field" in values:
            field = next((k for k, v in FIELDS.items() if v == values["field"]), None)
            if field is None:
                continue
            values["field"] = field
        return prefix + _say(message, values, lang)
    return None
