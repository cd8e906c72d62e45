"""Game records: a PGN-like text format for whole games (documented in docs/notation.md).

A record is a block of tag pairs followed by numbered move text and a result token::

    [Event "Club night"]
    [Site "Lyon"]
    [Date "2026.11.29"]
    [South "Ada"]
    [North "Brice"]
    [Result "1-0"]

    1. 5R@d2 1G@d3 2. 2Y@d3 {North now leads d} pass 3. ... 1-0

* Tag pairs are ``[Name "value"]``, one per line; in values ``\\"`` is a quote and
  ``\\\\`` a backslash.  ``Position`` holds the position text (see :mod:`jericho_game.position`)
  when the game did not start from the standard start.  Any other tag is kept as is.
* Move text: ``N.`` before South's move of turn ``N`` and ``N...`` before a North move
  that does not follow a South move of the same turn (the first move of a game that
  starts with North to move).  Move numbers are optional when reading but must be right
  when present.  Passes are written ``pass``.  ``{comments}`` and ``;`` comments to the
  end of the line are skipped.
* Variations: ``( ... )`` after a move holds moves played instead of it, from the position
  before it (nested variations allowed), as in PGN: ``1. 5R@d2 1G@d3 (1... 4B@c3 2. 3W@e2)
  2. 2Y@d3 *``.  They are read into :attr:`Record.variations`; the main line is the game.
* The result token is ``1-0`` (South won), ``0-1`` (North won), ``1/2-1/2`` (draw) or
  ``*`` (unfinished).  It must equal the ``Result`` tag.  When the game ended by the
  rules it must be that outcome; when it did not, ``*`` means the game was left
  unfinished and any other result means it was stopped off the board (resignation,
  agreement, time), which a ``Termination`` tag may describe.

:func:`read_record` raises :class:`jericho_game.RecordError` with the 1-based line and column
of the offending token on any corrupt record.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from jericho_game.errors import IllegalMoveError, PositionError, RecordError
from jericho_game.game import Game
from jericho_game.moves import Move, parse_move
from jericho_game.pieces import Side

__all__ = [
    "RESULTS",
    "decode_text",
    "load_file",
    "move_label",
    "move_number",
    "Record",
    "Variation",
    "read_record",
    "read_records",
    "result_token",
    "write_record",
]

RESULTS: dict[str, str | None] = {"1-0": "south", "0-1": "north", "1/2-1/2": "draw", "*": None}
"""Result token → winner (``"south"``, ``"north"``, ``"draw"``), ``None`` for unfinished."""

_TOKEN_OF: dict[str | None, str] = {v: k for k, v in RESULTS.items()}

ROSTER: tuple[str, ...] = ("Event", "Site", "Date", "South", "North", "Result")
"""The tags every written record carries, in this order (then ``Position``, then the rest)."""

_TAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_LINE_WIDTH = 79


def result_token(outcome: str | None) -> str:
    """The result token of an outcome (``"south"`` → ``"1-0"`` …, ``None`` → ``"*"``)."""
    try:
        return _TOKEN_OF[outcome]
    except KeyError:
        raise ValueError(f"unknown outcome {outcome!r}: expected south, north, draw or None") from None


@dataclass
class Variation:
    """Moves played instead of the move numbered ``ply`` (1 = a game's first move) of the line it
    branches from, from the position before that move; ``variations`` branch from its own moves."""

    ply: int
    moves: list[Move] = field(default_factory=list)
    variations: list[Variation] = field(default_factory=list)


@dataclass
class Record:
    """One game read from (or ready to be written as) a record.

    ``tags`` holds every tag pair in file order (``Result`` and, for games that did not
    start from the standard start, ``Position`` included); ``game`` is the game after
    all the moves; ``moves`` lists them; ``variations`` holds the variations of the main line
    (``( ... )`` in the move text).
    """

    tags: dict[str, str]
    game: Game
    moves: list[Move] = field(default_factory=list)
    variations: list[Variation] = field(default_factory=list)

    @property
    def result(self) -> str:
        """The result token: ``1-0``, ``0-1``, ``1/2-1/2`` or ``*``."""
        return self.tags.get("Result", result_token(self.game.outcome()))

    @property
    def winner(self) -> str | None:
        """``"south"``, ``"north"``, ``"draw"`` or ``None`` (unfinished), from the result."""
        return RESULTS[self.result]

    @property
    def ended_by_rules(self) -> bool:
        """True when the game ended on the board (seven monoliths or two passes)."""
        return self.game.is_over()

    def to_text(self) -> str:
        """The record as text; reading it back gives an equal record."""
        return write_record(self.game, self.tags, self.variations)


# -- writing ---------------------------------------------------------------------------


def _quote(value: str) -> str:
    if any(ch in value for ch in "\n\r"):
        raise RecordError(f"tag value {value!r} holds a line break, which a record cannot store")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_record(game: Game, tags: Mapping[str, str] | None = None, variations: list[Variation] | None = None) -> str:
    """Write ``game`` as record text.

    ``tags`` adds or overrides tag pairs.  Missing roster tags get defaults (``?`` and
    today's date).  ``Result`` is the game's outcome when it ended by the rules (a
    different ``Result`` raises :class:`RecordError`); for an unfinished game it defaults
    to ``*`` and may be set to a decisive result or a draw (resignation, agreement).
    ``Position`` is the game's start position; a different one raises.  ``variations`` (of the
    game's moves) are written in parentheses after the move each replaces; an illegal move in one
    raises :class:`RecordError`.
    """
    given = dict(tags or {})
    for name in given:
        if not isinstance(name, str) or not _TAG_NAME.fullmatch(name):
            raise RecordError(f"bad tag name {name!r}: use letters, digits and _ starting with a letter")
    outcome = game.outcome()
    result = given.get("Result")
    if result is None:
        result = result_token(outcome)
    elif result not in RESULTS:
        raise RecordError(f"bad Result {result!r}: expected one of {', '.join(RESULTS)}")
    elif outcome is not None and RESULTS[result] != outcome:
        raise RecordError(f"Result {result} contradicts the game, which ended by the rules: {_outcome_words(outcome)}")
    start = game.start_position
    if "Position" in given:
        if start is None or _normal_position(given["Position"]) != start:
            raise RecordError(
                f"Position tag {given['Position']!r} is not where the game started ({start or 'the standard start'})"
            )
    defaults = {
        "Event": "?",
        "Site": "?",
        "Date": datetime.date.today().strftime("%Y.%m.%d"),
        "South": "?",
        "North": "?",
    }
    ordered: dict[str, str] = {}
    for name in ROSTER:
        ordered[name] = result if name == "Result" else given.get(name, defaults.get(name, "?"))
    if start is not None:
        ordered["Position"] = start
    for name, value in given.items():
        if name not in ordered:
            ordered[name] = value
    lines = [f"[{name} {_quote(str(value))}]" for name, value in ordered.items()]
    lines.append("")
    lines.extend(_wrap(_movetext_tokens(game, result, variations or [])))
    return "\n".join(lines) + "\n"


def _normal_position(text: str) -> str | None:
    try:
        return Game.from_position(text).start_position
    except PositionError:
        return None


def move_number(ply: int, first: str = "south") -> tuple[int, str]:
    """The number and the mover of the ``ply``-th move of a game (1 = its first move) whose first
    move is ``first``'s: the numbering of the move text, where one numbered move is a South move
    and the North move after it (a game starting with North to move begins ``1...``).

    >>> move_number(31), move_number(32), move_number(1, "north"), move_number(2, "north")
    ((16, 'south'), (16, 'north'), (1, 'north'), (2, 'south'))"""
    if ply < 1:
        raise ValueError(f"ply must be at least 1, got {ply}")
    if first not in ("south", "north"):
        raise ValueError(f"first must be 'south' or 'north', got {first!r}")
    k = ply if first == "south" else ply + 1  # as if a South move came before a North start
    return (k + 1) // 2, "south" if k % 2 else "north"


def move_label(ply: int, first: str = "south") -> str:
    """The ``ply``-th move's number as the move text writes it before a South move: ``"16."``
    for South, ``"16..."`` for North (every page of the web app labels moves so)."""
    number, side = move_number(ply, first)
    return f"{number}." if side == "south" else f"{number}..."


def _movetext_tokens(game: Game, result: str, variations: list[Variation]) -> list[str]:
    start = game.start_position
    origin = Game() if start is None else Game.from_position(start)
    out = _line_tokens(origin, list(game.history), 1, variations)
    out.append(result)
    return out


def _line_tokens(before: Game, moves: list[Move], first_ply: int, variations: list[Variation]) -> list[str]:
    """The tokens of a line of ``moves`` played from ``before`` (whose next move is numbered
    ``first_ply``), with its variations in parentheses after the moves they replace."""
    out: list[str] = []
    branches: dict[int, list[Variation]] = {}
    for v in variations:
        if not first_ply <= v.ply < first_ply + len(moves):
            raise RecordError(f"a variation at move {v.ply} is outside its line (moves {first_ply}..)")
        branches.setdefault(v.ply, []).append(v)
    game = before.copy()
    numbered = True  # the first move of a line, and a move after a variation, carry their number
    for k, move in enumerate(moves):
        ply = first_ply + k
        label = _label_here(game, ply)
        # a move number stays on the same line as its move
        if game.turn is Side.SOUTH or numbered:
            out.append(f"{label} {move}")
        else:
            out.append(str(move))
        numbered = False
        branch_from = game.copy() if ply in branches else None
        try:
            game.play(move)
        except IllegalMoveError as exc:
            raise RecordError(f"illegal move {label} {move}: {exc}") from None
        for v in branches.get(ply, []):
            assert branch_from is not None
            inner = _line_tokens(branch_from, list(v.moves), ply, v.variations)
            if not inner:
                raise RecordError(f"an empty variation at move {ply}")
            inner[0] = "(" + inner[0]
            inner[-1] = inner[-1] + ")"
            out.extend(inner)
            numbered = True
    return out


def _label_here(game: Game, ply: int) -> str:
    """The number of the ``ply``-th move of a game, which ``game`` (the position before it) is to play."""
    # the side to move and the ply fix the number: plies of one side alternate with the other's
    first = game.turn.value if ply % 2 else game.turn.other.value
    return move_label(ply, first)


def _wrap(tokens: list[str]) -> list[str]:
    lines: list[str] = []
    line = ""
    for tok in tokens:
        if line and len(line) + 1 + len(tok) > _LINE_WIDTH:
            lines.append(line)
            line = tok
        else:
            line = f"{line} {tok}" if line else tok
    lines.append(line)
    return lines


def _outcome_words(outcome: str) -> str:
    return "a draw" if outcome == "draw" else f"{outcome} won"


# -- reading ---------------------------------------------------------------------------


class _Scanner:
    """Walks the text keeping 1-based line and column numbers."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.col = 1

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def advance(self, n: int = 1) -> str:
        chunk = self.text[self.pos : self.pos + n]
        for ch in chunk:
            if ch == "\n":
                self.line += 1
                self.col = 1
            else:
                self.col += 1
        self.pos += len(chunk)
        return chunk

    def where(self) -> tuple[int, int]:
        return self.line, self.col

    def error(self, message: str, where: tuple[int, int] | None = None) -> RecordError:
        line, col = where or self.where()
        return RecordError(message, line, col)

    def skip_space_and_comments(self) -> None:
        while not self.at_end():
            ch = self.peek()
            if ch.isspace() or ch == "\ufeff":
                self.advance()
            elif ch == "{":
                start = self.where()
                end = self.text.find("}", self.pos)
                if end < 0:
                    raise self.error("unterminated comment: '{' has no closing '}'", start)
                self.advance(end + 1 - self.pos)
            elif ch == ";":
                end = self.text.find("\n", self.pos)
                self.advance((len(self.text) if end < 0 else end) - self.pos)
            else:
                return

    def word(self) -> str:
        """The run of characters up to whitespace, a comment, a bracket or a parenthesis."""
        start = self.pos
        while not self.at_end() and not self.peek().isspace() and self.peek() not in "{};[]()":
            self.advance()
        return self.text[start : self.pos]


_MOVE_NUMBER = re.compile(r"([0-9]+)(\.\.\.|\.)")


def _shown(ch: str) -> str:
    """A character for an error message, naming the ends of lines and of the file."""
    return "end of file" if ch == "" else "end of line" if ch in ("\n", "\r") else ch


def _read_tag(sc: _Scanner, tags: dict[str, str], places: dict[str, tuple[int, int]]) -> None:
    sc.advance()  # '['
    while sc.peek() in (" ", "\t"):
        sc.advance()
    name_at = sc.where()
    m = _TAG_NAME.match(sc.text, sc.pos)
    if m is None:
        shown = sc.peek() or "end of file"
        raise sc.error(f"bad tag: expected a tag name after '[', found {shown!r}", name_at)
    name = m.group()
    sc.advance(len(name))
    if name in tags:
        raise sc.error(f"duplicate tag {name!r} (first given on line {places[name][0]})", name_at)
    while sc.peek() in (" ", "\t"):
        sc.advance()
    if sc.peek() != '"':
        shown = _shown(sc.peek())
        raise sc.error(f'bad tag {name}: expected a quoted value like [{name} "..."], found {shown!r}')
    value_at = sc.where()
    sc.advance()
    chars: list[str] = []
    while True:
        ch = sc.peek()
        if ch in ("", "\n", "\r"):
            raise sc.error(f"bad tag {name}: the value's closing quote is missing", value_at)
        sc.advance()
        if ch == '"':
            break
        if ch == "\\":
            nxt = sc.peek()
            if nxt not in ('"', "\\"):
                raise sc.error(f'bad tag {name}: unknown escape "\\{nxt}" (only \\" and \\\\)')
            sc.advance()
            chars.append(nxt)
        else:
            chars.append(ch)
    while sc.peek() in (" ", "\t"):
        sc.advance()
    if sc.peek() != "]":
        shown = _shown(sc.peek())
        raise sc.error(f"bad tag {name}: expected ']' after the value, found {shown!r}")
    sc.advance()
    tags[name] = "".join(chars)
    places[name] = value_at


@dataclass
class _Line:
    """A line being read: the main line, or a variation (``opened``: where its '(' is)."""

    start: Game  # the position before the line's first move
    game: Game  # the position now
    first_ply: int
    moves: list[Move] = field(default_factory=list)
    variations: list[Variation] = field(default_factory=list)
    opened: tuple[int, int] = (0, 0)


def _read_one(sc: _Scanner) -> Record:
    """Read one game starting at the scanner's position (after skipped space)."""
    tags: dict[str, str] = {}
    places: dict[str, tuple[int, int]] = {}
    sc.skip_space_and_comments()
    while sc.peek() == "[":
        _read_tag(sc, tags, places)
        sc.skip_space_and_comments()

    result_tag = tags.get("Result")
    if result_tag is not None and result_tag not in RESULTS:
        raise sc.error(f"bad Result tag {result_tag!r}: expected one of {', '.join(RESULTS)}", places["Result"])
    if "Position" in tags:
        try:
            game = Game.from_position(tags["Position"])
        except PositionError as exc:
            raise sc.error(f"bad Position tag: {exc}", places["Position"]) from None
        tags["Position"] = game.start_position or tags["Position"]
    else:
        game = Game()

    lines = [_Line(game.copy(), game, 1)]  # the main line, then the variations open in it
    expect_number: str | None = None  # the number token just read, if any
    while True:
        line = lines[-1]
        game = line.game
        ply = line.first_ply + len(line.moves)  # the number of the next move, counted in plies
        sc.skip_space_and_comments()
        if sc.at_end():
            if len(lines) > 1:
                where = f"line {line.opened[0]}, column {line.opened[1]}"
                raise sc.error(f"truncated record: the variation opened at {where} has no ')'")
            if not tags and not game.history and expect_number is None:
                raise sc.error("empty record: no tags, no moves and no result token")
            raise sc.error("truncated record: the move text ends without a result token (1-0, 0-1, 1/2-1/2 or *)")
        at = sc.where()
        if sc.peek() in "[]}":
            what = "tag pair" if sc.peek() == "[" else repr(sc.peek())
            raise sc.error(f"unexpected {what} in the move text: the result token must end the moves first", at)
        if sc.peek() in "()":
            if expect_number is not None:
                raise sc.error(f"move number {expect_number} is followed by {sc.peek()!r}, not a move", at)
            if sc.advance() == "(":  # a variation: moves instead of the line's last move
                if not line.moves:
                    raise sc.error("a variation '(' must follow the move it replaces", at)
                before = line.start.copy()
                for mv in line.moves[:-1]:
                    before.play(mv)
                lines.append(_Line(before.copy(), before, ply - 1, opened=at))
                continue
            if len(lines) == 1:
                raise sc.error("')' closes no variation: there is no '(' before it", at)
            if not line.moves:
                raise sc.error("an empty variation '()': it must hold at least one move", at)
            lines.pop()
            lines[-1].variations.append(Variation(line.first_ply, line.moves, line.variations))
            continue
        tok = sc.word()
        if tok in RESULTS:
            if expect_number is not None:
                raise sc.error(f"move number {expect_number} is followed by the result, not a move", at)
            if len(lines) > 1:
                where = f"line {line.opened[0]}, column {line.opened[1]}"
                raise sc.error(f"the result token comes before the ')' of the variation opened at {where}", at)
            _check_result(sc, tok, at, tags, game)
            tags["Result"] = tok
            return Record(tags, game, game.history, lines[0].variations)
        m = _MOVE_NUMBER.match(tok)
        if m is not None:
            if expect_number is not None:
                raise sc.error(f"two move numbers in a row: {expect_number} then {m.group()}", at)
            want = _label_here(game, ply)
            digits = m.group(1)
            # a number too long for int() (Python caps the digits) cannot be the right one
            got = f"{int(digits)}{m.group(2)}" if len(digits) <= 12 else ""
            if got != want:
                side = game.turn
                raise sc.error(f"bad move number {m.group()}: {side}'s move here is numbered {want}", at)
            expect_number = m.group()
            rest = tok[m.end() :]
            if not rest:
                continue
            # "1.5R@d2": number glued to the move
            at = (at[0], at[1] + m.end())
            tok = rest
        expect_number = None
        try:
            move = parse_move(tok)
        except IllegalMoveError as exc:
            raise sc.error(f"expected a move, a move number or a result token, found {tok!r} ({exc})", at) from None
        mover = game.turn
        label = f"move {_label_here(game, ply)} {tok}"
        try:
            played = game.play(move)
        except IllegalMoveError as exc:
            raise sc.error(f"illegal {label} by {mover}: {exc}", at) from None
        line.moves.append(played)


def _check_result(sc: _Scanner, tok: str, at: tuple[int, int], tags: dict[str, str], game: Game) -> None:
    tag = tags.get("Result")
    if tag is not None and tag != tok:
        raise sc.error(f'result token {tok} disagrees with the Result tag "{tag}"', at)
    outcome = game.outcome()
    if outcome is not None and RESULTS[tok] != outcome:
        raise sc.error(
            f"result token {tok} contradicts the game, which ended by the rules: {_outcome_words(outcome)} "
            f"(score {game.score()[0]}-{game.score()[1]}), so the result is {result_token(outcome)}",
            at,
        )


def decode_text(text: str | bytes) -> str:
    """Record text from ``str`` or UTF-8 ``bytes``; :class:`RecordError` (with line and column) otherwise."""
    if isinstance(text, bytes):
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError as exc:
            prefix = text[: exc.start]
            line = prefix.count(b"\n") + 1
            col = exc.start - (prefix.rfind(b"\n") + 1) + 1
            raise RecordError(f"not UTF-8 text: byte 0x{text[exc.start]:02x} cannot be decoded", line, col) from None
    if not isinstance(text, str):
        raise RecordError(f"a record must be text, not {type(text).__name__}")
    return text


def read_record(text: str | bytes) -> Record:
    """Read exactly one game; raise :class:`RecordError` (line, column) on a corrupt record."""
    sc = _Scanner(decode_text(text))
    record = _read_one(sc)
    sc.skip_space_and_comments()
    if not sc.at_end():
        raise sc.error("text after the result token: a second game? (read it with read_records)")
    return record


def iter_records(text: str | bytes) -> Iterator[Record]:
    """Yield each game of a multi-game file in turn (an error stops at the bad game)."""
    sc = _Scanner(decode_text(text))
    sc.skip_space_and_comments()
    if sc.at_end():
        raise sc.error("empty record: no tags, no moves and no result token")
    while True:
        yield _read_one(sc)
        sc.skip_space_and_comments()
        if sc.at_end():
            return


def read_records(text: str | bytes) -> list[Record]:
    """Read every game of a file holding one or more records, one after another."""
    return list(iter_records(text))


def load_file(path: str) -> str:
    """The text of a record file (any encoding :func:`decode_text` reads).

    Raises :class:`RecordError` naming why the file cannot be read.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise RecordError(f"cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise RecordError(f"cannot read {path}: it is a directory") from None
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None
    return decode_text(data)
