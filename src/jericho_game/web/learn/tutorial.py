"""Read-only engine help for the page: the move preview and the interactive tutorial.

Nothing here is stored and nothing here needs a game of the server: every request carries
the moves (from the standard start, or from a lesson's position) and the engine replays them.

* ``POST /api/preview`` ``{"moves": [...]}`` → for every piece size and cell, the alignments
  that placing a piece of that size there would make change hands (``State.leader_changes``:
  tower strength depends on sizes only, so the colour does not matter).
* ``GET /api/tutorial`` → the lessons; ``GET /api/tutorial/{lesson}`` → a lesson's start;
  ``POST /api/tutorial/{lesson}`` ``{"moves": [...], "try": "5R@d2"}`` → the engine's verdict
  on the learner's move, the scripted reply, the lesson's feedback and the new position.

The lessons' texts and the tutor's feedback are in the request's language
(:mod:`jericho_game.web.i18n`), and so are the engine's own reasons quoted in them (why a move is
refused, why a tower wins: :mod:`jericho_game.web.i18n.reasons`).  The page itself is
:mod:`jericho_game.web.site.pages`'s ``/learn``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from jericho_game.errors import JerichoError
from jericho_game.game import Game
from jericho_game.moves import Move
from jericho_game.web import i18n
from jericho_game.web.common.budget import free
from jericho_game.web.common.jsonin import BadRequest, read_object
from jericho_game.web.i18n import N_, reasons
from jericho_game.web.round.roomstate import confrontations, legal_by_piece

MAX_BODY = 4096
MAX_MOVES = 120
SIDE_NAME = {"south": "South", "north": "North"}


def _side(x: int) -> str | None:
    return None if x < 0 else ("south", "north")[x]


def effects(game: Game) -> dict[str, dict[str, list[list[str | None]]]]:
    """Size (``"1"``..``"5"``) → cell → ``[alignment, old leader, new leader]`` for each
    alignment that a piece of that size placed on that cell would make change hands
    (cells whose tower is full are left out; empty lists are left out)."""
    state, t = game.state, game.tables
    out: dict[str, dict[str, list[list[str | None]]]] = {}
    if game.is_over():
        return out
    for size in range(5):
        per_cell: dict[str, list[list[str | None]]] = {}
        for c, name in enumerate(t.cell_names):
            if state.height[c] >= 4:
                continue
            changes = state.leader_changes(size, c)
            if changes:
                per_cell[name] = [[t.align_names[a], _side(old), _side(new)] for a, old, new in changes]
        out[str(size + 1)] = per_cell
    return out


def view(game: Game) -> dict[str, Any]:
    """What the page needs to draw a position (the same fields as the game state's)."""
    last = game.last_move
    return {
        "turn": game.turn.value,
        "towers": {cell: [str(p) for p in tower] for cell, tower in game.towers().items() if tower},
        "leaders": {a: (s.value if s else None) for a, s in game.leaders().items()},
        "score": list(game.score()),
        "reserves": {s: [str(p) for p in game.reserve(s)] for s in ("south", "north")},
        "legal": legal_by_piece(game.legal_moves()),
        "last": str(last) if last else None,
        "outcome": game.outcome(),
        "threat": (lambda t: t.value if t else None)(game.seven_threat()),
        "confrontations": confrontations(game),
        "effects": effects(game),
    }


# -- lessons ---------------------------------------------------------------------------------

Check = Callable[[Game, Game, Move], tuple[bool, str]]


@dataclass(frozen=True)
class Lesson:
    """One short lesson: a position (moves from the start, or a position text), what to do,
    and a check of the learner's move that says whether it did it, and why."""

    id: str
    title: str
    text: str
    goal: str
    check: Check
    moves: tuple[str, ...] = ()
    position: str | None = None
    hint: str = ""
    reply: bool = False  # the tutor answers for North (the reply that hurts South most)

    def start(self) -> Game:
        game = Game.from_position(self.position) if self.position else Game()
        for m in self.moves:
            game.play(m)
        return game


# The feedback's language: set by the request handler, read by the lesson checks below (which
# keep the simple signature of a Check).
_lang: ContextVar[str] = ContextVar("tutorial_lang", default=i18n.DEFAULT)


def _(message: str, **args: object) -> str:
    """``message`` in the request's language, its {placeholders} filled in (numbers as the language
    writes them)."""
    lang = _lang.get()
    said = {
        k: i18n.format_number(v, lang) if isinstance(v, int | float) and not isinstance(v, bool) else v
        for k, v in args.items()
    }
    return i18n.translations(lang).gettext(message).format(**said)


def _placed(before: Game, after: Game, move: Move) -> tuple[bool, str]:
    return True, _(
        "You placed {piece} on {cell}. It starts a tower; the tower belongs to the camp it "
        "stands in (South: rows 1–2, North: rows 3–4), whoever put the pieces there.",
        piece=move.piece,
        cell=move.cell,
    )


def _stacked_on_c2(before: Game, after: Game, move: Move) -> tuple[bool, str]:
    if move.cell == "c2":
        tower = " / ".join(str(p) for p in after.tower("c2"))
        return True, _("Yes: c2 is now {tower}, bottom to top, every size and every colour different.", tower=tower)
    return False, _("That went elsewhere: the lesson asks you to stack on c2.")


def _won_d(before: Game, after: Game, move: Move) -> tuple[bool, str]:
    c = after.confrontation("d")
    if after.leaders()["d"] == "south":
        why = reasons.translate(c.reason, _lang.get()) or c.reason
        return True, _("South leads d again. {reason}.", reason=f"{why[0].upper()}{why[1:]}")
    return False, _(
        "Not yet: {reason}. Compare from the top down.", reason=reasons.translate(c.reason, _lang.get()) or c.reason
    )


def _two_at_once(before: Game, after: Game, move: Move) -> tuple[bool, str]:
    gained = after.score()[0] - before.score()[0]
    if gained >= 2:
        return True, _("Two monoliths with one piece: {move} wins b and the diagonal a1-g4 at once.", move=move)
    won = _("That won 1 monolith.") if gained == 1 else _("That won {n} monoliths.", n=gained)
    return False, won + " " + _("Find the cell on both lines, and a piece larger than both North towers.")


def _asymmetry(before: Game, after: Game, move: Move) -> tuple[bool, str]:
    if str(move.piece) == "3B":
        return True, _(
            "Right: {move} is allowed, because {cell} shares no alignment with c3.", move=move, cell=move.cell
        )
    return False, _("A legal move, but the lesson is about your 3B: place 3B where the rule allows it.")


def _seven(before: Game, after: Game, move: Move) -> tuple[bool, str]:
    if after.outcome() == "south":
        return True, _("North could not bring you below 7: you held 7 monoliths through North's turn and win.")
    s = after.score()[0]
    if s == 1:
        return False, _("North's reply left you 1 monolith: 7 must survive the reply.")
    return False, _("North's reply left you {n} monoliths: 7 must survive the reply.", n=s)


def _passes(before: Game, after: Game, move: Move) -> tuple[bool, str]:
    s, n = after.score()
    if after.outcome() == "south":
        return True, _(
            "Both players passed and the game ended: you hold more monoliths ({s} to {n}) and win.", s=s, n=n
        )
    if after.outcome() == "draw":
        return False, _(
            "Both players passed and the game ended {s} to {n}: a draw. Look for the cell that gains.", s=s, n=n
        )
    return False, _(
        "Both players passed and the game ended {s} to {n}: a loss. Look for the cell that gains.", s=s, n=n
    )


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "placing",
        N_("1. Placing a piece"),
        N_("Each turn you take one piece from your tray and put it on any cell, in either camp. Pieces never move."),
        N_("Pick a piece from your tray, then a cell."),
        _placed,
    ),
    Lesson(
        "clashes",
        N_("2. Size and colour clashes"),
        N_(
            "You may stack on a tower of 1 to 3 pieces, but only a piece whose size and colour are both new to "
            "that tower. c2 holds 3G (size 3, green)."
        ),
        N_("Stack a piece on c2. Try 3R or 5G first to see the refusal."),
        _stacked_on_c2,
        moves=("3G@c2", "2R@c3"),
    ),
    Lesson(
        "stronger",
        N_("3. Which tower is stronger"),
        N_(
            "Towers compare from the top down: two or more pieces beat one piece; then the larger top piece "
            "wins, then the piece below. North's 1G/2Y on d3 beats your single 5R on d2."
        ),
        N_("Win the column d back."),
        _won_d,
        moves=("5R@d2", "1G@d3", "2Y@d3", "1B@a4"),
        hint=N_("Stack on your own tower d2: it then has two pieces too, and the top decides."),
    ),
    Lesson(
        "monoliths",
        N_("4. Confrontations and monoliths"),
        N_(
            "On each of the 13 lines, your best tower in your camp confronts North's best tower in theirs; the "
            "stronger one wins that line's monolith. A cell lies on up to two lines. The badge on a cell shows "
            "what a move would change: +2 means two monoliths more for you."
        ),
        N_("Win two monoliths with one piece."),
        _two_at_once,
        moves=("1Y@e1", "2W@b3", "1B@c1", "3R@f3"),
        hint=N_("b2 lies on the column b and on the diagonal a1-g4."),
    ),
    Lesson(
        "asymmetry",
        N_("5. The asymmetry rule"),
        N_(
            "You may not copy North's last placement: the same piece, building the same tower, on a cell that "
            "shares a line with North's cell. North has just put 3B on c3."
        ),
        N_("Try 3B on c2 (refused), then place your 3B where the rule allows it."),
        _asymmetry,
        moves=("5R@d2", "3B@c3"),
    ),
    Lesson(
        "seven",
        N_("6. Seven monoliths win"),
        N_(
            "Hold 7 of the 13 monoliths, and still hold 7 after your opponent's reply, and you win. The tutor "
            "answers for North with the reply that hurts you most. You hold 6."
        ),
        N_("Reach 7 or more so that North's best reply cannot bring you below 7."),
        _seven,
        position=(
            "e1:3B,g1:4Y5G,a2:4W,b2:3W,c2:3G1R5B4W,f2:1Y,c3:4G,g3:5Y3R,b4:2Y,f4:3W,g4:2W "
            "1YGBW2RGB3RYGB4RYB5RYW 1RGBW2RYGBW3Y4RGB5RGBW south 1Y@f2 0 *"
        ),
        hint=N_(
            "Win two monoliths at once, to reach 8: one reply can then take only one back. A small piece on "
            "a4 gives North a weak tower that loses both of its lines."
        ),
        reply=True,
    ),
    Lesson(
        "passes",
        N_("7. The end by passes"),
        N_(
            "A player who cannot place passes. When both pass one after the other, the game ends and the player "
            "holding more monoliths wins. North has nothing left to place; this is your last piece."
        ),
        N_("Place your last piece so that you finish ahead."),
        _passes,
        position=(
            "a1:1R2W4Y,b1:5R,c1:2R1G,e1:2Y4B5G,f1:4W5B,g1:2B4Y3R,a2:1G2W3B,b2:3Y,c2:2G5W1Y,d2:5Y2B,e2:5W4B3G,"
            "f2:3R4G1Y,a3:2R4G3W,b3:3G,c3:5G2Y,d3:3W5R,f3:3Y,a4:5B1W,b4:1B4W,c4:2G1W,e4:1B4R5Y,g4:3B4R "
            "1R - south - 0 *"
        ),
        hint=N_("It is 5 to 5. Look for a badge +1: putting your 1R on top of a North tower can make it weaker."),
        reply=True,
    ),
)
BY_ID = {lesson.id: lesson for lesson in LESSONS}


def _lesson(request: Request) -> Lesson:
    lesson = BY_ID.get(request.path_params["lesson"])
    if lesson is None:
        raise BadRequest("not_found", f"no lesson {request.path_params['lesson'][:40]!r}: see /api/tutorial", 404)
    return lesson


def _replay(start: Game, moves: Any) -> Game:
    if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
        raise BadRequest("bad_request", "'moves' must be a list of moves in notation, e.g. [\"5R@d2\"]")
    if len(moves) > MAX_MOVES:
        raise BadRequest("bad_request", f"at most {MAX_MOVES} moves")
    for i, m in enumerate(moves):
        try:
            start.play(m)
        except JerichoError as exc:
            raise BadRequest("illegal", f"move {i + 1} ({m[:16]!r}) cannot be replayed: {exc}") from None
    return start


def _auto_passes(game: Game) -> None:
    """Play forced passes, as the server does for a player who cannot place."""
    while not game.is_over():
        legal = game.legal_moves()
        if len(legal) == 1 and legal[0].piece is None:
            game.play(legal[0])
        else:
            return


def _hardest_reply(game: Game) -> None:
    """North's reply that leaves South the fewest monoliths (the tutor plays to break a seven)."""
    _auto_passes(game)
    if game.is_over() or game.turn.value != "north":
        return
    best: tuple[int, int] | None = None
    best_move = None
    for i, m in enumerate(game.legal_moves()):
        game.play(m)
        key = (game.score()[0], i)
        game.undo()
        if best is None or key < best:
            best, best_move = key, m
    if best_move is not None:
        game.play(best_move)
    _auto_passes(game)


def _guard(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
    @functools.wraps(handler)  # keeps what the handler declared (its budget: web/common/budget.py)
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)  # type: ignore[no-any-return]
        except BadRequest as exc:
            message = i18n.error_text(exc.code, exc.message, i18n.request_language(request))
            return JSONResponse({"error": exc.code, "message": message}, status_code=exc.status)

    return wrapped


@_guard
@free("stateless engine help: a replay of at most 4 KiB of moves, nothing stored")
async def preview(request: Request) -> Response:
    data = await read_object(request, MAX_BODY)
    game = _replay(Game(), data.get("moves", []))
    return JSONResponse({"ply": len(game.history), "effects": effects(game)})


@_guard
@free("stateless engine help: a replay of at most 4 KiB of moves, nothing stored")
async def lessons(request: Request) -> Response:
    tr = i18n.translations(i18n.request_language(request)).gettext
    return JSONResponse(
        {
            "lessons": [
                {
                    "id": x.id,
                    "title": tr(x.title),
                    "text": tr(x.text),
                    "goal": tr(x.goal),
                    "hint": tr(x.hint) if x.hint else "",
                }
                for x in LESSONS
            ]
        }
    )


@_guard
@free("stateless engine help: a replay of at most 4 KiB of moves, nothing stored")
async def lesson_start(request: Request) -> Response:
    lesson = _lesson(request)
    return JSONResponse({"id": lesson.id, "moves": [], "game": view(lesson.start())})


@_guard
@free("stateless engine help: a replay of at most 4 KiB of moves, nothing stored")
async def lesson_try(request: Request) -> Response:
    lesson = _lesson(request)
    _lang.set(i18n.request_language(request))  # the feedback's language (this request's task only)
    data = await read_object(request, MAX_BODY)
    game = _replay(lesson.start(), data.get("moves", []))
    attempt = data.get("try")
    if not isinstance(attempt, str) or len(attempt) > 32:
        raise BadRequest("bad_request", "'try' must be a move in notation, e.g. \"5R@d2\"")
    reason = game.why_illegal(attempt)
    if reason is not None:
        sides = reasons.translate(reason, _lang.get()) or reason.replace("south", "South").replace("north", "North")
        refused = _("Refused: {reason}.", reason=sides)
        return JSONResponse({"legal": False, "done": False, "feedback": refused, "game": view(game)})
    before = game.copy()
    played = game.play(attempt)
    after_move = game.copy()
    if lesson.reply:
        _hardest_reply(game)
    done, feedback = lesson.check(before, game if lesson.reply else after_move, played)
    moves = [str(m) for m in game.history[len(lesson.start().history) :]]
    return JSONResponse({"legal": True, "done": done, "feedback": feedback, "moves": moves, "game": view(game)})


routes = [
    Route("/api/preview", preview, methods=["POST"]),
    Route("/api/tutorial", lessons),
    Route("/api/tutorial/{lesson}", lesson_start),
    Route("/api/tutorial/{lesson}", lesson_try, methods=["POST"]),
]
