"""``jericho play``: Jericho in the terminal, two people at one keyboard or a person against an AI.

The board is drawn as text (:func:`render_board`): North's camp on top (rows 4 and 3),
the centre band, South's camp below (rows 2 and 1).  Each tower lists its pieces
bottom to top with the top piece in brackets (and highlighted when colour is on);
on the tower of the last move the top piece is starred instead (``1G*2Y*``).
Monoliths are drawn on the holder's edge: a vertical one above (North) or below
(South) its column, a diagonal one at the corner where the holder's triangle of that diagonal sits.

The session (:class:`TerminalSession`) reads lines from an injectable input function
and writes to an injectable stream, so tests drive whole games.  Moves are typed in
notation (``5R@d2``, ``pass``); commands are ``undo``, ``moves``, ``save FILE``,
``resign``, ``board``, ``help`` and ``quit``.  Rules: docs/rules.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
from collections.abc import Callable
from typing import TextIO

from jericho_game.ai.base import Player, PlayerSpecError, make_player
from jericho_game.errors import IllegalMoveError, JerichoError, RecordError
from jericho_game.game import Game
from jericho_game.moves import Move
from jericho_game.pieces import COLOURS, SIZES, Piece, Side
from jericho_game.record import RESULTS, load_file, read_record, result_token, write_record

__all__ = [
    "TerminalSession",
    "add_arguments",
    "colour_wanted",
    "format_moves",
    "format_reserve",
    "format_tower",
    "render_board",
    "render_status",
    "run",
]

RULES_DOC = "docs/rules.md"
_ANSI = {"R": "31", "Y": "33", "G": "32", "B": "34", "W": "37"}
_CELL_W = 11
_COLUMNS = "abcdefg"


class _Paint:
    """Wraps text in ANSI escapes when colour is on; otherwise returns it unchanged."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, *codes: str) -> str:
        if not self.on or not codes:
            return text
        return f"\x1b[{';'.join(codes)}m{text}\x1b[0m"


def colour_wanted(stream: TextIO, no_color: bool = False) -> bool:
    """Colour only on a terminal, when ``--no-color`` is not given and NO_COLOR is unset."""
    if no_color or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def format_tower(pieces: list[Piece], colour: bool = False, last: bool = False) -> tuple[str, int]:
    """A tower as text, bottom to top, top piece in brackets; returns (text, visible width).

    With ``last`` (the tower of the last move) the top piece is starred instead, ``1G*2Y*``:
    same width, so a full tower (10 characters) always keeps a space from its neighbours.
    """
    paint = _Paint(colour)
    if not pieces:
        return paint(".", "2"), 1
    parts = [paint(str(p), _ANSI[p.colour.value]) for p in pieces[:-1]]
    top = pieces[-1]
    left, right = ("*", "*") if last else ("[", "]")
    parts.append(left + paint(str(top), _ANSI[top.colour.value], "1", "7") + right)
    width = 2 * len(pieces) + 2
    return "".join(parts), width


def format_reserve(pieces: list[Piece], colour: bool = False) -> str:
    """A reserve grouped by size, a dot for each colour already placed: ``1 RYGBW  2 RY.B.``."""
    paint = _Paint(colour)
    have = {(p.size, p.colour) for p in pieces}
    groups = []
    for size in SIZES:
        letters = "".join(paint(c.value, _ANSI[c.value]) if (size, c) in have else "." for c in COLOURS)
        groups.append(f"{size} {letters}")
    return "  ".join(groups)


def _centre(text: str, width: int, total: int) -> str:
    left = (total - width) // 2
    return " " * left + text + " " * max(0, total - width - left)


def _side_name(side: Side | str) -> str:
    return str(side).capitalize()


def _placement_before_start(game: Game) -> Move | None:
    """The opponent's placement recorded in the start position (LAST), while no move is played yet."""
    if game.history or game.start_position is None:
        return None
    last = game.start_position.split()[4]
    return None if last == "-" else Move.parse(last)


def render_board(game: Game, colour: bool = False) -> str:
    """The board as text: North's camp on top, the centre band, South's camp below."""
    paint = _Paint(colour)
    topo = game.topology
    leaders = game.leaders()
    cells = {c.name for c in topo.cells}
    last = game.last_move
    last_cell = last.cell if last is not None and not last.is_pass else None
    inherited = _placement_before_start(game)
    if inherited is not None:
        last_cell = inherited.cell
    margin = " " * 3

    def marker_row(side: Side) -> str:
        out = []
        for col in _COLUMNS:
            held = leaders.get(col) == side
            mark = "N" if side is Side.NORTH else "S"
            text = paint(mark, "1") if held else " "
            out.append(_centre(text, 1, _CELL_W))
        return margin + "".join(out).rstrip()

    def corner(side: Side, rising: bool) -> str:
        names = []
        for a in topo.alignments:
            if a.is_vertical or leaders.get(a.name) != side:
                continue
            # Rising diagonals (a1-g4 ...) run SW to NE, falling ones (g1-a4 ...) SE to NW.
            first, last_c = topo.cell(a.cells[0]), topo.cell(a.cells[-1])
            is_rising = (last_c.x - first.x) * (last_c.y - first.y) > 0
            if is_rising == rising:
                names.append(a.name)
        return " ".join(names) if names else "-"

    def cell_row(row: int) -> str:
        out = []
        for col in _COLUMNS:
            name = f"{col}{row}"
            if name not in cells:
                out.append(" " * _CELL_W)
                continue
            text, width = format_tower(game.tower(name), colour, last=name == last_cell)
            out.append(_centre(text, width, _CELL_W))
        return "".join(out).rstrip()

    header = margin + "".join(_centre(c, 1, _CELL_W) for c in _COLUMNS).rstrip()
    width = len(margin) + _CELL_W * len(_COLUMNS)

    def edge(side: Side, left: str, right: str) -> str:
        west = f"{left} ({_side_name(side)}): {corner(side, rising=side is Side.SOUTH)}"
        east = f"{right} ({_side_name(side)}): {corner(side, rising=side is Side.NORTH)}"
        middle = f"{_side_name(side)}'s edge"
        gap = width - len(west) - len(east)
        if gap < len(middle) + 2:
            return f"{west}  {east}"
        pad = (gap - len(middle)) // 2
        return west + " " * pad + middle + " " * (gap - len(middle) - pad) + east

    band = " North's camp above, South's camp below "
    dashes = (width - len(margin) - len(band)) // 2
    lines = [
        edge(Side.NORTH, "NW", "NE"),
        marker_row(Side.NORTH),
        header,
        " 4 " + cell_row(4),
        " 3 " + cell_row(3),
        margin + "-" * dashes + band + "-" * dashes,
        " 2 " + cell_row(2),
        " 1 " + cell_row(1),
        header,
        marker_row(Side.SOUTH),
        edge(Side.SOUTH, "SW", "SE"),
    ]
    return "\n".join(line.rstrip() for line in lines)


def render_status(game: Game, colour: bool = False, result: str | None = None) -> str:
    """Score, monoliths by holder, reserves, last move, whose turn and the seven warning."""
    paint = _Paint(colour)
    leaders = game.leaders()
    s, n = game.score()
    held = {side: [a for a, x in leaders.items() if x == side] for side in (Side.SOUTH, Side.NORTH)}
    free = [a for a, x in leaders.items() if x is None]
    lines = [
        f"Score: South {s} - North {n}   (7 monoliths kept through the opponent's turn win)",
        f"  South holds: {' '.join(held[Side.SOUTH]) or '-'}",
        f"  North holds: {' '.join(held[Side.NORTH]) or '-'}",
        f"  nobody:      {' '.join(free) or '-'}",
        f"South reserve ({len(game.reserve(Side.SOUTH)):2}): {format_reserve(game.reserve(Side.SOUTH), colour)}",
        f"North reserve ({len(game.reserve(Side.NORTH)):2}): {format_reserve(game.reserve(Side.NORTH), colour)}",
    ]
    history = game.history
    if history:
        mover = game.turn.other
        where = f"move {len(history)}, top piece starred on the board"
        lines.append(f"Last move: {_side_name(mover)} {history[-1]}  ({where})")
    elif (inherited := _placement_before_start(game)) is not None:
        # a game loaded from a position: the asymmetry rule still looks at this placement
        where = "made before the loaded position, top piece starred on the board"
        lines.append(f"Last move: {_side_name(game.turn.other)} {inherited}  ({where})")
    else:
        lines.append("Last move: none yet")
    outcome = game.outcome()
    if outcome is not None:
        lines.append(paint(f"Game over: {_describe_outcome(game)}", "1"))
    elif result is not None and result != "*":
        lines.append(paint(f"Game stopped: result {result} ({_describe_result(result)})", "1"))
    else:
        lines.append(f"To move: {_side_name(game.turn)}")
        threat = game.seven_threat()
        if threat is not None:
            if threat == game.turn.other:
                lines.append(
                    paint(
                        f"WARNING: {_side_name(threat)} holds {game.score()[threat.number]} monoliths. "
                        f"{_side_name(game.turn)} must bring them below 7 with this move, "
                        f"or {_side_name(threat)} wins.",
                        "1",
                        "31",
                    )
                )
            else:
                lines.append(
                    paint(
                        f"NOTE: {_side_name(threat)} holds {game.score()[threat.number]} monoliths; "
                        f"{_side_name(threat.other)} must break that on the next turn.",
                        "1",
                        "33",
                    )
                )
        if game.legal_moves() == [Move(None, None)]:
            lines.append(f"{_side_name(game.turn)} has no legal placement and must pass: type pass")
    return "\n".join(lines)


def _describe_outcome(game: Game) -> str:
    outcome = game.outcome()
    s, n = game.score()
    if game.state.passes >= 2:
        how = f"both players passed, score {s}-{n}"
    else:
        how = f"7 monoliths kept through the opponent's turn, score {s}-{n}"
    if outcome == "draw":
        return f"draw ({how})"
    return f"{_side_name(str(outcome))} wins ({how})"


def _describe_result(token: str) -> str:
    winner = RESULTS[token]
    if winner is None:
        return "unfinished"
    if winner == "draw":
        return "draw by agreement"
    return f"{_side_name(winner)} wins off the board: {_side_name(Side(winner).other)} resigned or lost by agreement"


HELP = f"""\
Jericho in brief (full rules: {RULES_DOC}, notation: docs/notation.md)
  Each turn, place one piece from your reserve on any cell of EITHER camp: on an empty
  cell, or on a tower of 1-3 pieces none of which has the same size or colour.
  A tower belongs to the camp it stands in.  Towers compare top down: 2+ pieces beat
  1 piece, then the larger top size, then the next piece down...; sizes equal down to
  the shorter one's base: the taller wins; same sizes all the way: equally strong.
  On each of the 13 alignments, each side's strongest tower in its own camp confronts
  the other's; the stronger holds that alignment's monolith (equally strong, or a side
  with no tower on it: nobody holds it).
  You may not copy the opponent's last placement (same piece, identical tower, on an
  alignment through their cell).  Pass only when no placement is possible.
  Win: hold 7+ monoliths and still hold 7+ after the opponent's reply.  When both
  players pass in a row, more monoliths wins; equal is a draw.
Moves: PIECE@CELL, e.g. 5R@d2 (size 1-5, colour R Y G B W, cells a1-g4 without d1/d4),
  or pass.
Commands:
  moves [PIECE|CELL]  legal moves, pieces with the cells they may go to
  undo                take back the last move (against the AI: back to your turn)
  save FILE           write the game as a record (jericho show/check FILE read it)
  resign              give up the game (the record keeps the result)
  board               draw the board again
  help                this text
  quit                leave (also Ctrl-D or Ctrl-C)"""


def format_moves(game: Game, only: str | None = None) -> str:
    """The legal moves, pieces with the same target cells grouped on one line."""
    moves = game.legal_moves()
    if not moves:
        return "No legal moves: the game is over."
    if moves[0].is_pass:
        return "No placement is possible: you must pass (type pass)."
    by_piece: dict[Piece, list[str]] = {}
    for m in moves:
        assert m.piece is not None and m.cell is not None
        by_piece.setdefault(m.piece, []).append(m.cell)
    all_cells = [c.name for c in game.topology.cells]
    if only:
        key = only.strip()
        cell_key = key.lower()
        if cell_key in all_cells:
            pieces = [str(p) for p, cells in by_piece.items() if cell_key in cells]
            if not pieces:
                return f"Nothing can be placed on {cell_key} now."
            return f"On {cell_key}: {' '.join(pieces)}"
        try:
            piece = Piece.parse(key)
        except ValueError as exc:
            if re.fullmatch(r"[a-z][0-9]", cell_key):  # looks like a cell: say so, not "malformed piece"
                return f"moves: there is no cell {cell_key} (the cells are {' '.join(all_cells)})"
            return f"moves: {key!r} is neither a piece (like 3G) nor a cell (like c2): {exc}"
        if piece not in by_piece:
            return f"{piece} cannot be placed now (not in the reserve, or nowhere it fits)."
        return f"{piece}: {' '.join(by_piece[piece])}"
    groups: dict[tuple[str, ...], list[str]] = {}
    for piece, cells in by_piece.items():
        groups.setdefault(tuple(cells), []).append(str(piece))
    lines = [f"{len(moves)} legal moves ({_side_name(game.turn)} to move):"]
    for targets, pieces in groups.items():
        missing = [c for c in all_cells if c not in targets]
        if not missing:
            where = "any cell"
        elif len(missing) <= 6:
            where = f"any cell except {' '.join(missing)}"
        else:
            where = " ".join(targets)
        lines.append(f"  {' '.join(pieces)}: {where}")
    return "\n".join(lines)


class TerminalSession:
    """One game at the terminal; :meth:`run` loops until the players quit.

    ``input_fn(prompt)`` returns one line (raising ``EOFError`` at the end of input) and
    ``out`` receives everything printed.  With ``opponent`` set, that player plays the
    side that is not ``human``.
    """

    def __init__(
        self,
        game: Game | None = None,
        *,
        input_fn: Callable[[str], str] = input,
        out: TextIO | None = None,
        colour: bool = False,
        opponent: Player | None = None,
        opponent_name: str | None = None,
        human: Side = Side.SOUTH,
        tags: dict[str, str] | None = None,
        result: str | None = None,
    ) -> None:
        self.game = game if game is not None else Game()
        self.input_fn = input_fn
        self.out = out if out is not None else sys.stdout
        self.colour = colour
        self.opponent = opponent
        self.opponent_name = opponent_name or (opponent.name if opponent is not None else None)
        self.human = Side(human)
        self.result: str | None = result if result and result != "*" else None
        self._start_turn = Game.from_position(self.game.start_position).turn if self.game.start_position else Side.SOUTH
        self.tags = dict(tags or {})
        for name in ("Result", "Position"):
            self.tags.pop(name, None)
        if opponent is not None:
            ai = f"{self.opponent_name} (AI)"
            self.tags.setdefault("South" if self.human is Side.NORTH else "North", ai)
            self.tags.setdefault(str(self.human).capitalize(), "human")
        self.tags.setdefault("Event", "Jericho terminal game")
        self.tags.setdefault("Site", "terminal")
        self.tags.setdefault("Date", datetime.date.today().strftime("%Y.%m.%d"))

    # -- output ------------------------------------------------------------------------
    def say(self, text: str = "") -> None:
        """Print a line (or lines) to the session's output."""
        self.out.write(text + "\n")
        self.out.flush()

    def show(self) -> None:
        """Draw the board and the status lines."""
        self.say()
        self.say(render_board(self.game, self.colour))
        self.say(render_status(self.game, self.colour, self.result))

    # -- state -------------------------------------------------------------------------
    def stopped(self) -> bool:
        """True once the game ended by the rules or by resignation."""
        return self.game.is_over() or self.result is not None

    def ai_to_move(self) -> bool:
        """Whether the AI should move now."""
        return self.opponent is not None and not self.stopped() and self.game.turn != self.human

    def _mover_of(self, index: int) -> Side:
        return self._start_turn if index % 2 == 0 else self._start_turn.other

    # -- main loop ---------------------------------------------------------------------
    def run(self) -> int:
        """Play until quit or end of input; returns the exit status (0, or 1 if the AI failed)."""
        if self.opponent is not None:
            self.say(f"You play {self.human}; {self.human.other} is {self.opponent_name}. Type help for help.")
        else:
            self.say("Two players at one terminal. Type help for the rules and commands, quit to leave.")
        self.show()
        while True:
            try:
                if self.ai_to_move():
                    if not self._ai_move():
                        return 1
                    continue
                line = self.input_fn(self._prompt())
            except (EOFError, KeyboardInterrupt):
                self.say("\nbye")
                return 0
            if not self.handle(line):
                return 0

    def _prompt(self) -> str:
        if self.stopped():
            return "game over (undo, save FILE, quit)> "
        who = _side_name(self.game.turn)
        if self.opponent is not None:
            who += " (you)"
        return f"{who} to move> "

    def _ai_move(self) -> bool:
        assert self.opponent is not None
        side = self.game.turn
        self.say(f"{_side_name(side)} ({self.opponent_name}) is thinking...")
        try:
            move = self.opponent.choose_move(self.game.copy(), None)
        except (KeyboardInterrupt, EOFError):
            raise
        except Exception as exc:  # an AI bug must not lose the player's game
            self.say(f"the AI failed: {type(exc).__name__}: {exc}. Save the game with a new session if needed.")
            return False
        why = self.game.why_illegal(move)
        if why is not None:
            self.say(f"the AI chose an illegal move {move}: {why}")
            return False
        self.game.play(move)
        self.say(f"{_side_name(side)} ({self.opponent_name}) plays {move}")
        self.show()
        return True

    def handle(self, line: str) -> bool:
        """Carry out one input line; returns False when the session should end."""
        text = line.strip()
        if not text:
            return True
        word, _, rest = text.partition(" ")
        command = word.lower()
        rest = rest.strip()
        if command in ("quit", "exit", "q"):
            self.say("bye")
            return False
        if command in ("help", "?", "h"):
            self.say(HELP)
        elif command == "board":
            self.show()
        elif command == "moves":
            self.say(format_moves(self.game, rest or None) if not self.result else "The game is over.")
        elif command == "undo":
            self._undo()
        elif command == "save":
            self._save(rest)
        elif command == "resign":
            self._resign()
        else:
            self._move(text)
        return True

    def _move(self, text: str) -> None:
        if self.result is not None:
            self.say(f"the game is over (result {self.result}): no more moves; undo takes back the resignation")
            return
        if self.opponent is not None and self.game.turn != self.human:
            self.say("it is the AI's turn")  # pragma: no cover - the loop moves for the AI first
            return
        side = self.game.turn
        try:
            move = self.game.play(text)
        except IllegalMoveError as exc:
            self.say(f"illegal: {exc}")
            if text.lower().startswith(("undo", "save", "moves", "help", "quit")):
                return
            self.say("(type help for the commands, moves for the legal moves)")
            return
        self.say(f"{_side_name(side)} plays {move}")
        self.show()

    def _undo(self) -> None:
        if self.result is not None:
            self.result = None
            self.say("resignation taken back; play on")
            self.show()
            return
        history = self.game.history
        if not history:
            self.say("nothing to undo: no move has been played")
            return
        if self.opponent is None:
            move = self.game.undo()
            self.say(f"took back {move}")
        else:
            mine = [i for i in range(len(history)) if self._mover_of(i) == self.human]
            if not mine:
                self.say("nothing to undo: you have not moved yet")
                return
            taken = [str(self.game.undo()) for _ in range(len(history) - mine[-1])]
            self.say(f"took back {' '.join(reversed(taken))}")
        self.show()

    def _resign(self) -> None:
        if self.stopped():
            self.say("the game is already over")
            return
        loser = self.human if self.opponent is not None else self.game.turn
        self.result = result_token(str(loser.other))
        self.say(f"{_side_name(loser)} resigns: {_side_name(loser.other)} wins ({self.result})")
        self.say("save FILE keeps the record; undo takes the resignation back")

    def _save(self, path: str) -> None:
        if not path:
            self.say("save needs a file name: save FILE")
            return
        tags = dict(self.tags)
        if self.result is not None:
            tags["Result"] = self.result
            tags["Termination"] = "resignation"
        else:
            tags.pop("Termination", None)
        try:
            text = write_record(self.game, tags)
            with open(os.path.expanduser(path), "w", encoding="utf-8") as fh:
                fh.write(text)
        except (OSError, RecordError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.say(f"could not save to {path}: {reason}")
            return
        self.say(f"saved {len(self.game.history)} moves to {path}")


# -- the command ---------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser, name: str = "play") -> None:
    """Options of ``jericho play``."""
    parser.description = (
        "Play Jericho in the terminal: two people at one keyboard, or a person against an AI "
        f"(--vs). Type moves like 5R@d2; type help in the game for the commands. Rules: {RULES_DOC}"
    )
    parser.add_argument(
        "--vs", metavar="LEVEL", help="play against an AI: random, easy … expert, master (or any player spec)"
    )
    parser.add_argument(
        "--side", choices=["south", "north"], default="south", help="your side against the AI (default south)"
    )
    parser.add_argument("--seed", type=int, default=None, help="seed for the AI's random choices")
    parser.add_argument("--load", metavar="FILE", help="continue a game saved with save FILE")
    parser.add_argument("--no-color", action="store_true", help="plain text, no ANSI colour (NO_COLOR also works)")


def run(args: argparse.Namespace) -> int:
    """Run ``jericho play``."""
    out = sys.stdout
    opponent: Player | None = None
    name: str | None = getattr(args, "vs", None)
    if name:
        try:
            opponent = make_player(name, seed=getattr(args, "seed", None))
        except PlayerSpecError as exc:
            print(f"jericho play: --vs {name}: {exc}", file=sys.stderr)
            return 2
        except ImportError as exc:
            print(f"jericho play: --vs {name}: this player is not available ({exc})", file=sys.stderr)
            return 2
    game: Game | None = None
    tags: dict[str, str] | None = None
    result: str | None = None
    load = getattr(args, "load", None)
    if load:
        try:
            record = read_record(load_file(load))
        except (OSError, JerichoError) as exc:
            print(f"jericho play: --load: {exc}", file=sys.stderr)
            return 1
        game, tags, result = record.game, dict(record.tags), record.result
    try:
        import readline  # noqa: F401  - line editing and history for input(), where available
    except ImportError:  # pragma: no cover - e.g. Windows
        pass
    session = TerminalSession(
        game,
        input_fn=input,
        out=out,
        colour=colour_wanted(out, getattr(args, "no_color", False)),
        opponent=opponent,
        opponent_name=name,
        human=Side(getattr(args, "side", "south") or "south"),
        tags=tags,
        result=result,
    )
    return session.run()
