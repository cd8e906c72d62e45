"""Position text: one line holding everything the rules need (grammar in docs/notation.md).

Seven space-separated fields::

    TOWERS SOUTH-RESERVE NORTH-RESERVE TURN LAST PASSES RESULT

* ``TOWERS`` — ``-`` for an empty board, else ``cell:pieces`` items joined by ``,`` in
  board order, pieces bottom to top: ``d2:5R,d3:1G2Y``.
* ``SOUTH-RESERVE`` / ``NORTH-RESERVE`` — ``-`` when empty, else groups of a size digit
  followed by its colours: ``1RYGBW2RY5W``.
* ``TURN`` — ``south`` or ``north``, the side to move.
* ``LAST`` — the placement just made by the opponent, which the asymmetry rule looks
  back at (``5R@d2``), or ``-`` after a pass or at the start.
* ``PASSES`` — consecutive passes just made: ``0``, ``1`` or ``2`` (2 only in a finished game).
* ``RESULT`` — ``*`` while the game goes on, else ``south``, ``north`` or ``draw``.

The seven-monolith rule looks back at the score before the mover's turn; at the start of
a turn that is exactly the score of the towers on the board, so it needs no field.
"""

from __future__ import annotations

from jericho_game.core import DRAW, N_PIECES, NO_OUTCOME, State, Tables
from jericho_game.errors import PositionError
from jericho_game.pieces import COLOURS, PIECES, parse_piece

__all__ = ["format_position", "parse_position", "START_POSITION"]

_COLOUR_ORDER = "".join(c.value for c in COLOURS)


def _format_reserve(mask: int) -> str:
    out = []
    for size in range(5):
        colours = "".join(_COLOUR_ORDER[k] for k in range(5) if mask >> (size * 5 + k) & 1)
        if colours:
            out.append(f"{size + 1}{colours}")
    return "".join(out) or "-"


def format_position(t: Tables, s: State) -> str:
    """The position text of a state."""
    towers = []
    for cell in t.topology.cells:
        c = t.cell_index[cell.name]
        x = s.code[c]
        if x:
            pieces = []
            while x:
                pieces.append(str(PIECES[(x & 31) - 1]))
                x >>= 5
            towers.append(f"{cell.name}:{''.join(pieces)}")
    last = "-"
    if s.last_cell >= 0:
        last = f"{PIECES[s.last_piece]}@{t.cell_names[s.last_cell]}"
    result = {NO_OUTCOME: "*", 0: "south", 1: "north", DRAW: "draw"}[s.outcome]
    return " ".join(
        [
            ",".join(towers) or "-",
            _format_reserve(s.reserve[0]),
            _format_reserve(s.reserve[1]),
            "south" if s.turn == 0 else "north",
            last,
            str(s.passes),
            result,
        ]
    )


def _parse_reserve(text: str, field: str) -> int:
    if text == "-":
        return 0
    mask = 0
    size = 0
    for i, ch in enumerate(text.upper()):
        if ch.isdigit():
            if ch not in "12345":
                raise PositionError(f"{field}: no size {ch} (sizes run 1-5), at character {i + 1}")
            size = int(ch)
            continue
        if size == 0:
            raise PositionError(f"{field}: expected a size digit before {ch!r}, at character {i + 1}")
        k = _COLOUR_ORDER.find(ch)
        if k < 0:
            raise PositionError(f"{field}: unknown colour {ch!r} (colours are RYGBW), at character {i + 1}")
        bit = 1 << ((size - 1) * 5 + k)
        if mask & bit:
            raise PositionError(f"{field}: piece {size}{ch} is listed twice")
        mask |= bit
    return mask


def parse_position(text: str, t: Tables, state: State) -> None:
    """Load a position text into ``state``; raise :class:`PositionError` naming the bad field."""
    if not isinstance(text, str):
        raise PositionError(f"a position must be text, not {type(text).__name__}")
    fields = text.split()
    names = ["towers", "south reserve", "north reserve", "turn", "last", "passes", "result"]
    if len(fields) != len(names):
        raise PositionError(f"position has {len(fields)} fields, expected {len(names)}: {', '.join(names)}")
    f_towers, f_south, f_north, f_turn, f_last, f_passes, f_result = fields

    towers: dict[int, list[int]] = {}
    count = [0] * N_PIECES
    if f_towers != "-":
        for item in f_towers.split(","):
            cell, sep, pieces_text = item.partition(":")
            cell = cell.lower()
            if not sep or not pieces_text:
                raise PositionError(f"towers: item {item!r} is not cell:pieces, e.g. d3:1G2Y")
            c = t.cell_index.get(cell)
            if c is None:
                raise PositionError(f"towers: unknown cell {cell!r}")
            if c in towers:
                raise PositionError(f"towers: cell {cell} is listed twice")
            if len(pieces_text) % 2:
                raise PositionError(f"towers: {cell} has malformed pieces {pieces_text!r}")
            plist: list[int] = []
            for i in range(0, len(pieces_text), 2):
                try:
                    piece = parse_piece(pieces_text[i : i + 2])
                except ValueError as exc:
                    raise PositionError(f"towers: {cell}: {exc}") from None
                if any(PIECES[q].size == piece.size for q in plist):
                    raise PositionError(f"towers: {cell} holds two pieces of size {piece.size}")
                if any(PIECES[q].colour == piece.colour for q in plist):
                    raise PositionError(f"towers: {cell} holds two {piece.colour.full_name} pieces")
                plist.append(piece.index)
                count[piece.index] += 1
            if len(plist) > 4:
                raise PositionError(f"towers: {cell} holds {len(plist)} pieces, at most 4 fit")
            towers[c] = plist

    south = _parse_reserve(f_south, "south reserve")
    north = _parse_reserve(f_north, "north reserve")
    for p in range(N_PIECES):
        total = count[p] + (south >> p & 1) + (north >> p & 1)
        if total != 2:
            raise PositionError(
                f"reserves: piece {PIECES[p]} appears {total} times on the board and in the "
                "reserves, but each player owns one (2 in all)"
            )

    turn_text = f_turn.lower()
    if turn_text not in ("south", "north"):
        raise PositionError(f"turn: expected 'south' or 'north', not {f_turn!r}")
    turn = 0 if turn_text == "south" else 1

    if f_passes not in ("0", "1", "2"):
        raise PositionError(f"passes: expected 0, 1 or 2, not {f_passes!r}")
    passes = int(f_passes)

    results = {"*": NO_OUTCOME, "south": 0, "north": 1, "draw": DRAW}
    if f_result.lower() not in results:
        raise PositionError(f"result: expected *, south, north or draw, not {f_result!r}")
    outcome = results[f_result.lower()]

    last: tuple[int, int] | None = None
    if f_last != "-":
        if passes:
            raise PositionError(f"last: {f_last!r} given, but passes is {passes} (the last turn was a pass)")
        piece_text, sep, cell = f_last.partition("@")
        try:
            piece = parse_piece(piece_text)
        except ValueError as exc:
            raise PositionError(f"last: {exc}") from None
        c = t.cell_index.get(cell.lower()) if sep else None
        if c is None:
            raise PositionError(f"last: {f_last!r} is not a placement on a known cell")
        if not towers.get(c) or towers[c][-1] != piece.index:
            raise PositionError(f"last: {f_last} is not the top piece of the tower on {cell.lower()}")
        opponent_reserve = north if turn == 0 else south
        if opponent_reserve >> piece.index & 1:
            raise PositionError(f"last: {f_last} was placed by the opponent, but {piece} is still in its reserve")
        last = (piece.index, c)

    state.load(towers, (south, north), turn, last, passes, outcome)
    s0, s1 = state.score
    if passes == 2 and outcome == NO_OUTCOME:
        raise PositionError("result: both players passed, so the game is over and the result cannot be *")
    if passes == 2:
        want = 0 if s0 > s1 else 1 if s1 > s0 else DRAW
        if outcome != want:
            raise PositionError(f"result: after two passes the score {s0}-{s1} gives {results_name(want)}")
    elif outcome in (0, 1) and state.score[outcome] < 7:
        raise PositionError(
            f"result: {results_name(outcome)} cannot have won while holding {state.score[outcome]} monoliths"
        )
    elif outcome in (0, 1) and turn != outcome:
        # the seven-monolith rule ends the game after the loser's turn, so the winner is to move
        raise PositionError(
            f"result: {results_name(outcome)} won by the seven-monolith rule, which ends the game after "
            f"{results_name(1 - outcome)}'s turn, so turn must be {results_name(outcome)}"
        )
    elif outcome == DRAW:
        raise PositionError("result: a draw needs both players to have passed (passes 2)")


def results_name(outcome: int) -> str:
    """``"south"``, ``"north"`` or ``"draw"`` for an engine outcome number."""
    return {0: "south", 1: "north", DRAW: "draw"}[outcome]


START_POSITION = "- 1RYGBW2RYGBW3RYGBW4RYGBW5RYGBW 1RYGBW2RYGBW3RYGBW4RYGBW5RYGBW south - 0 *"
