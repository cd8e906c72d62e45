"""The rules engine's own sentences, in the player's language (docs/web.md, "Languages").

The engine explains itself in English (why a move is refused, why a tower wins a confrontation:
:meth:`jericho_game.Game.why_illegal`, :meth:`jericho_game.Game.confrontation`) and stays free
of UI text.  Its sentences come from a small fixed grammar, so the web app reads each one back
into a catalog message and its values (a side, a cell, a tower, a size) and says it again in the
page's language: :func:`translate`.  The page scripts do the same for the confrontations of a
game's state (``static/reasons.js``, the same messages; ``tests/web/i18n/test_reasons.py`` keeps the
two equal on every sentence the engine can write).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from jericho_game.web.i18n import catalog as i18n
from jericho_game.web.i18n.catalog import N_

_SIDE = r"(South|North|south|north)"
_TOWER = r"(\S+)"
_HEAD = rf"{_SIDE} {_TOWER} vs {_SIDE} {_TOWER}: "
_HEAD_ARGS = ("a", "ta", "b", "tb")

# (pattern, message, names of its groups): the engine's sentences, most specific first
RULES: list[tuple[re.Pattern[str], str, tuple[str, ...]]] = [
    (re.compile("no tower on this alignment: nobody leads"), N_("no tower on this alignment: nobody leads"), ()),
    (
        re.compile(rf"{_SIDE} has no tower on this alignment: nobody leads"),
        N_("{side} has no tower on this alignment: nobody leads"),
        ("side",),
    ),
    (
        re.compile(_HEAD + "a side has no tower, nobody leads"),
        N_("{a} {ta} vs {b} {tb}: a side has no tower, nobody leads"),
        _HEAD_ARGS,
    ),
    (
        re.compile(_HEAD + rf"{_SIDE} leads, a tower of two or more pieces beats a single piece"),
        N_("{a} {ta} vs {b} {tb}: {win} leads, a tower of two or more pieces beats a single piece"),
        (*_HEAD_ARGS, "win"),
    ),
    (
        re.compile(_HEAD + rf"{_SIDE} leads, equal sizes down to the shorter tower's base and {_SIDE}'s is taller"),
        N_("{a} {ta} vs {b} {tb}: {win} leads, equal sizes down to the shorter tower's base and {win}'s is taller"),
        (*_HEAD_ARGS, "win", "win"),
    ),
    (
        re.compile(_HEAD + rf"{_SIDE} leads, (top piece|\d\w\w piece from the top) size (\d) beats (\d)"),
        N_("{a} {ta} vs {b} {tb}: {win} leads, {which} size {big} beats {small}"),
        (*_HEAD_ARGS, "win", "which", "big", "small"),
    ),
    (
        re.compile(_HEAD + "equal sizes all the way down: equally strong, nobody leads"),
        N_("{a} {ta} vs {b} {tb}: equal sizes all the way down: equally strong, nobody leads"),
        _HEAD_ARGS,
    ),
    # why a move is refused (Game.why_illegal)
    (
        re.compile(r"the game is over \(it was drawn\): no more moves"),
        N_("the game is over (it was drawn): no more moves"),
        (),
    ),
    (
        re.compile(rf"the game is over \({_SIDE} won\): no more moves"),
        N_("the game is over ({side} won): no more moves"),
        ("side",),
    ),
    (
        re.compile(rf"{_SIDE} cannot pass: a placement is available \(e\.g\. (\S+)\)"),
        N_("{side} cannot pass: a placement is available (e.g. {move})"),
        ("side", "move"),
    ),
    (
        re.compile(rf"(\S+): piece (\S+) is not in {_SIDE}'s reserve \(already placed\)"),
        N_("{move}: piece {piece} is not in {side}'s reserve (already placed)"),
        ("move", "piece", "side"),
    ),
    (
        re.compile(r"(\S+): tower full, the tower on (\w+) already has 4 pieces"),
        N_("{move}: tower full, the tower on {cell} already has 4 pieces"),
        ("move", "cell"),
    ),
    (
        re.compile(r"(\S+): size clash, the tower on (\w+) already holds a size-(\d) piece \((\w+)\)"),
        N_("{move}: size clash, the tower on {cell} already holds a size-{size} piece ({piece})"),
        ("move", "cell", "size", "piece"),
    ),
    (
        re.compile(
            r"(\S+): colour clash, the tower on (\w+) already holds a (red|yellow|green|blue|white) piece \((\w+)\)"
        ),
        N_("{move}: colour clash, the tower on {cell} already holds {a_colour_piece} ({piece})"),
        ("move", "cell", "a_colour_piece", "piece"),
    ),
    (
        re.compile(
            rf"(\S+): asymmetry rule, it copies {_SIDE}'s (\S+) "
            r"\(same piece, identical tower, on shared alignment ([\w, -]+)\)"
        ),
        N_(
            "{move}: asymmetry rule, it copies {side}'s {copied} (same piece, identical tower, on shared alignment {shared})"  # noqa: E501
        ),
        ("move", "side", "copied", "shared"),
    ),
    (
        re.compile(r"malformed move ('[^']*'|\"[^\"]*\"): expected a piece, '@' and a cell, e\.g\. 5R@d2, or 'pass'"),
        N_("malformed move {text}: expected a piece, '@' and a cell, e.g. 5R@d2, or 'pass'"),
        ("text",),
    ),
    (
        re.compile(r"unknown cell ('[^']*'|\"[^\"]*\") in (\S+): the cells are ([\w ]+)"),
        N_("unknown cell {cell} in {move}: the cells are {cells}"),
        ("cell", "move", "cells"),
    ),
    (
        re.compile(r"malformed move ('[^']*'|\"[^\"]*\"): no piece of size (\S+): sizes run 1-5"),
        N_("malformed move {text}: no piece of size {size}: sizes run 1-5"),
        ("text", "size"),
    ),
    (
        re.compile(
            r"malformed move ('[^']*'|\"[^\"]*\"): unknown colour ('[^']*'|\"[^\"]*\"): colours are R, Y, G, B, W"
        ),
        N_("malformed move {text}: unknown colour {colour}: colours are R, Y, G, B, W"),
        ("text", "colour"),
    ),
    (
        re.compile(r"malformed move ('[^']*'|\"[^\"]*\"): ('[^']*'|\"[^\"]*\") is not a cell name like c2"),
        N_("malformed move {text}: {cell} is not a cell name like c2"),
        ("text", "cell"),
    ),
]

# Words inside the sentences, said again in the language: the sides, the rows of a tower, an
# empty tower, a piece of a colour (French agrees the colour with "pièce").
WORDS = {
    "South": N_("South"),
    "North": N_("North"),
    "(empty)": N_("(empty)"),
    "top piece": N_("top piece"),
    "2nd piece from the top": N_("2nd piece from the top"),
    "3rd piece from the top": N_("3rd piece from the top"),
    "4th piece from the top": N_("4th piece from the top"),
}
A_COLOUR_PIECE = {
    "red": N_("a red piece"),
    "yellow": N_("a yellow piece"),
    "green": N_("a green piece"),
    "blue": N_("a blue piece"),
    "white": N_("a white piece"),
}


def translate(text: str, lang: str) -> str | None:
    """``text``, a sentence of the engine, in ``lang``; None when it is not one of its sentences.
    English gets the sentence itself, its sides capitalised (``south`` -> ``South``)."""
    for pattern, message, names in RULES:
        m = pattern.fullmatch(text.strip())
        if m is None:
            continue
        tr = i18n.translations(lang if lang in i18n.LANGUAGES else i18n.DEFAULT)
        word: Callable[[str], str] = tr.gettext
        values: dict[str, str] = {}
        for name, value in zip(names, m.groups(), strict=True):
            if name in ("side", "a", "b", "win"):
                value = word(value.capitalize())
            elif name in ("ta", "tb", "which") and value in WORDS:
                value = word(value)
            elif name == "a_colour_piece":
                value = word(A_COLOUR_PIECE[value])
            values[name] = value
        return tr.gettext(message).format(**values)
    return None
