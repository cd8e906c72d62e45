"""The free analysis board (``/analysis``): any position, moves for both sides, the AI's evaluation.

Stateless like the tutorial (web/learn/tutorial.py): the page keeps the tree of moves and sends the
start and the path to the position it shows; nothing is stored.

- ``POST /api/analysis/load`` — where to start: ``{"position": TEXT}`` (a position text,
  docs/notation.md §2), ``{"record": TEXT}`` (a ``.jgn`` record: its start and moves become the
  main line) or ``{"game": ID}`` (a game of this server: its start and moves) → ``{"start",
  "moves"}``.  Bad input gets a coded error naming what was wrong (``bad_position``,
  ``bad_record``, ``unknown_game``).
- ``POST /api/analysis/view`` — ``{"start", "moves"}`` → the position after them as the board
  draws it (:func:`jericho_game.web.learn.tutorial.view`), its position text and the moves' labels;
  ``illegal_move`` names the first move that is not legal and why.
- The AI's evaluation of a position streams over the WebSocket ``/ws/analysis``
  (:mod:`jericho_game.web.learn.analysis_stream`).
- ``POST /api/analysis/record`` — ``{"start", "moves"}`` → the line as a ``.jgn`` record, or
  ``{"start", "tree"}`` → the whole tree: its main line (first children) with the other moves as
  variations in parentheses (docs/notation.md §3.2).  ``load`` of a record with variations gives
  its ``tree`` too.  A tree is a list of nodes ``{"move", "children": [nodes]}``, the first child
  of each node being the main line; at most :data:`MAX_NODES` nodes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from jericho_game.errors import IllegalMoveError, JerichoError, PositionError, RecordError
from jericho_game.game import Game
from jericho_game.moves import parse_move
from jericho_game.record import Variation, move_label, read_record, write_record
from jericho_game.web import i18n
from jericho_game.web.common.budget import free
from jericho_game.web.common.jsonin import BadRequest, read_object
from jericho_game.web.i18n import positions
from jericho_game.web.learn.tutorial import view

__all__ = ["AnalysisBoard", "BadRequest"]

MAX_BODY = 32_768  # a pasted record of a long game, or a tree of variations, fits
MAX_MOVES = 200
MAX_NODES = 600  # moves in a whole tree of variations


def _start(data: dict[str, Any]) -> Game:
    start = data.get("start")
    if start is None or start == "":
        return Game()
    if not isinstance(start, str) or len(start) > 400:
        raise BadRequest("bad_position", "'start' must be a position text (docs/notation.md) or null")
    try:
        return Game.from_position(start)
    except PositionError as exc:
        raise BadRequest("bad_position", positions.explain(str(exc))) from None  # said to a player: issue 52


def _replay(data: dict[str, Any]) -> tuple[Game, list[str]]:
    """The game of ``data``'s start and moves; ``illegal_move`` names the first bad move."""
    game = _start(data)
    moves = data.get("moves", [])
    if not isinstance(moves, list) or len(moves) > MAX_MOVES or not all(isinstance(m, str) for m in moves):
        raise BadRequest("bad_request", f"'moves' must be a list of at most {MAX_MOVES} moves in notation")
    first = game.turn.value
    for i, mv in enumerate(moves):
        reason = game.why_illegal(mv) if len(mv) <= 16 else "it is too long to be a move"
        if reason is not None:
            label = move_label(i + 1, first)
            raise BadRequest("illegal_move", f"move {label} {mv[:16]!r} cannot be played: {reason}")
        game.play(mv)
    return game, [str(m) for m in game.history[len(game.history) - len(moves) :]]


def _to_tree(moves: list[str], variations: list[Variation], first_ply: int) -> list[dict[str, Any]]:
    """A line and its variations as tree nodes (the line's moves first among their siblings)."""
    top: list[dict[str, Any]] = []
    siblings = top
    for k, mv in enumerate(moves):
        node: dict[str, Any] = {"move": mv, "children": []}
        siblings.append(node)
        for v in variations:
            if v.ply == first_ply + k:
                siblings.extend(_to_tree([str(m) for m in v.moves], v.variations, v.ply))
        siblings = node["children"]
    return top


def _from_tree(nodes: Any, first_ply: int, budget: list[int]) -> tuple[list[str], list[Variation]]:
    """The main line (first children) of tree ``nodes`` and the other moves as variations."""
    moves: list[str] = []
    variations: list[Variation] = []
    ply = first_ply
    while nodes:
        if not isinstance(nodes, list) or not all(isinstance(n, dict) for n in nodes):
            raise BadRequest("bad_request", 'a tree is a list of nodes {"move", "children"}')
        budget[0] -= len(nodes)
        if budget[0] < 0:
            raise BadRequest("bad_request", f"the tree holds more than {MAX_NODES} moves")
        main, *others = nodes
        for node in nodes:
            if not isinstance(node.get("move"), str) or len(node["move"]) > 16:
                raise BadRequest("bad_request", "each node's 'move' must be a move in notation")
        moves.append(main["move"])
        for other in others:
            alt, deeper = _from_tree([other], ply, budget)
            try:
                variations.append(Variation(ply, [parse_move(m) for m in alt], deeper))
            except IllegalMoveError as exc:
                raise BadRequest("illegal_move", f"a variation's move cannot be read: {exc}") from None
        nodes = main.get("children") or []
        ply += 1
    return moves, variations


class AnalysisBoard:
    """The routes; ``games`` looks a game up by id (``start_position``, ``moves``) for ``load``."""

    def __init__(self, find_game: Callable[[str], tuple[str | None, list[str]]]) -> None:
        self.find_game = find_game

    def load(self, data: dict[str, Any]) -> dict[str, Any]:
        """Where a new analysis starts (see the module)."""
        given = [k for k in ("position", "record", "game") if data.get(k) not in (None, "")]
        if len(given) != 1:
            raise BadRequest("bad_request", "give exactly one of 'position', 'record' or 'game'")
        kind = given[0]
        value = data[kind]
        if not isinstance(value, str):
            raise BadRequest("bad_request", f"'{kind}' must be text")
        if kind == "position":
            try:
                game = Game.from_position(value.strip())
            except PositionError as exc:
                raise BadRequest("bad_position", positions.explain(str(exc))) from None
            return {"start": game.position(), "moves": []}
        if kind == "record":
            try:
                rec = read_record(value)
            except RecordError as exc:
                raise BadRequest("bad_record", f"not a game record: {exc}") from None
            moves = [str(m) for m in rec.moves]
            tree = _to_tree(moves, rec.variations, 1)
            return {"start": rec.tags.get("Position"), "moves": moves, "tree": tree}
        start, moves = self.find_game(value)
        return {"start": start, "moves": moves}

    def view(self, data: dict[str, Any]) -> dict[str, Any]:
        """The position after the path, as the board draws it."""
        game, moves = _replay(data)
        first = _start(data).turn.value
        return {
            "position": game.position(),
            "ply": len(moves),
            "labels": [move_label(i + 1, first) for i in range(len(moves))],
            "first": first,
            "game": view(game),
        }

    def record(self, data: dict[str, Any]) -> str:
        """The path, or the whole tree with its variations, as a ``.jgn`` record."""
        tags = {"Event": "Jericho analysis", "Site": "jericho serve"}
        if "tree" not in data:
            game, _ = _replay(data)
            return write_record(game, tags)
        moves, variations = _from_tree(data["tree"], 1, [MAX_NODES])
        game, _ = _replay({"start": data.get("start"), "moves": moves})
        try:
            return write_record(game, tags, variations)
        except RecordError as exc:
            raise BadRequest("illegal_move", f"a variation cannot be played: {exc}") from None

    def routes(self) -> list[Route]:
        """The analysis board's API (see the module); its page, ``/analysis``, is in
        :mod:`jericho_game.web.site.pages`."""

        def guard(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
            @functools.wraps(handler)  # keeps what the handler declared (its budget: web/common/budget.py)
            async def wrapped(request: Request) -> Response:
                try:
                    return await handler(request)  # type: ignore[no-any-return]
                except BadRequest as exc:
                    code, message, status = exc.code, exc.message, exc.status
                except (IllegalMoveError, JerichoError) as exc:
                    code, message, status = "bad_request", str(exc), 400
                # the message in the request's language, as the other endpoints' (web/i18n/__init__.py)
                text = i18n.error_text(code, message, i18n.request_language(request))
                return JSONResponse({"error": code, "message": text}, status_code=status)

            return wrapped

        @free("a bounded engine replay of one path of moves (a body of at most 4 KiB)")
        async def load(request: Request) -> Response:
            return JSONResponse(self.load(await read_object(request, MAX_BODY)))

        @free("a bounded engine replay of one path of moves (a body of at most 4 KiB)")
        async def show(request: Request) -> Response:
            return JSONResponse(self.view(await read_object(request, MAX_BODY)))

        @free("a bounded engine replay of one path of moves (a body of at most 4 KiB)")
        async def record(request: Request) -> Response:
            text = self.record(await read_object(request, MAX_BODY))
            headers = {"Content-Disposition": 'attachment; filename="jericho-analysis.jgn"'}
            return PlainTextResponse(text, headers=headers)

        return [
            Route("/api/analysis/load", guard(load), methods=["POST"]),
            Route("/api/analysis/view", guard(show), methods=["POST"]),
            Route("/api/analysis/record", guard(record), methods=["POST"]),
        ]
