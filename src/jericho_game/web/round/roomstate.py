"""The game room's state as the clients see it: the public state, the replay, the record's tags.

Rendering only: nothing here decides or writes.  The state is two parts (docs/web.md, "Design"):

- the *board* (:meth:`StateView.board`): everything that changes only with the stored version
  (the moves, the result, the legal placements, the position's parts), serialized once per
  version and kept with the room; the position's fragments come from :mod:`jericho_game.web.round.render`;
- the *live* part (:meth:`StateView.live`): what changes without a new version (who is
  connected, the clocks, the AI's place in the queue), rendered each time.

Never a token: the state is what anyone watching may see.
"""

from __future__ import annotations

import json
import time
from typing import Any

from jericho_game.game import Game
from jericho_game.moves import Move
from jericho_game.pieces import Side
from jericho_game.web.round import render
from jericho_game.web.round.gameroom import NO_RESULT, SIDE_NAMES, SIDES, Room, RoomService, both_moved
from jericho_game.web.storage.database import GameRecord

__all__ = ["StateView", "legal_by_piece", "confrontations"]

_RESULT_TOKENS: dict[str | None, str] = {"south": "1-0", "north": "0-1", "draw": "1/2-1/2", None: "*"}
_PIECE_TEXT: dict[Any, str] = {}


def _p(piece: Any) -> str:
    # a piece's notation, memoized: rendering a state names hundreds of pieces
    s = _PIECE_TEXT.get(piece)
    if s is None:
        s = _PIECE_TEXT[piece] = str(piece)
    return s


def legal_by_piece(moves: list[Move]) -> dict[str, list[str]]:
    """Placements grouped for the page: piece notation -> cells (passes left out)."""
    legal: dict[str, list[str]] = {}
    prev: Any = None
    cells: list[str] = []
    for m in moves:  # moves come grouped by piece: name each piece once, not once per cell
        piece = m.piece
        if piece is None or m.cell is None:
            continue
        if piece is not prev:
            prev, cells = piece, legal.setdefault(_p(piece), [])
        cells.append(m.cell)
    return legal


def confrontations(game: Game) -> dict[str, dict[str, Any]]:
    """Each alignment's champions, leader and the deciding comparison in words, for the page."""
    return {a.name: render.confrontation_body(game.confrontation(a.name)) for a in game.topology.alignments}


class StateView:
    """Renders a room of ``service`` (whose reading of a room — status, outcome, clocks — it uses)."""

    def __init__(self, service: RoomService) -> None:
        self.svc = service

    def board(self, room: Room) -> str:
        """The part of the public state that only changes with the version, serialized once."""
        if room.board_json is not None and room.board_version == room.version:
            return room.board_json
        rec, game = room.rec, room.game
        result, reason = self.svc.outcome(room)
        status = self.svc.status(room)
        legal = "{}"  # the legal placements by piece, as JSON text (render.legal_json)
        pass_only = False
        if status == "playing":
            legal = render.legal_json(game)
            pass_only = legal == "{}"  # playing, yet no placement: passing is forced
        threat = game.seven_threat()
        board = {
            "id": rec.id,
            "mode": rec.mode,
            "status": status,
            "ply": len(rec.moves),
            "version": rec.version,
            "moves": list(rec.moves),
            "turn": game.turn.value,
            "score": list(game.score()),
            "pass_only": pass_only,
            "last": rec.moves[-1] if rec.moves else None,
            "threat": threat.value if threat and status != "over" else None,
            "result": result,
            "reason": reason,
            "can_undo": status == "playing" and self._has_own_move(room),
            "rematch_of": rec.rematch_of,
            "rematch_id": rec.rematch_id,
            "public": rec.public,
            "names": {s: rec.meta.get("names", {}).get(s) for s in SIDES},
            "offer": rec.meta.get("offer") if status == "playing" else None,
            "answer": rec.meta.get("answer"),  # the last offer's answer (web/round/endings.py)
            "can_abort": rec.mode == "online" and status != "over" and not both_moved(rec),
            # accounts: the username each seat is bound to (None: anonymous), and whether it is rated
            "accounts": {s: self._account_of(rec, s) for s in SIDES},
            "rated": rec.rated,
            # issue 23: the time control, and when the side to move's clock reaches zero (wall time)
            "increment": rec.increment,
            "per_move_days": rec.per_move_days,
            "deadline": rec.deadline if status == "playing" else None,
            # issue 52: an aborted game whose first move did not come says whose it was
            "no_start": rec.meta.get("no_start") if reason == "aborted" else None,
            # issue 52: a tournament's game names it (the game page's link back and its end screen)
            "tournament": rec.meta.get("tournament"),
        }
        # the position's parts (towers, reserves, leaders, confrontations) come from fragments
        # rendered once and memoized, and only the parts a move changed are looked up again
        # (web/round/render.py): they were most of a state's cost
        rendered = room.rendered = render.position_json(game, room.prior)
        room.prior = None
        room.board_json = json.dumps(board, separators=(",", ":"))[1:-1] + ',"legal":' + legal + "," + rendered.text
        room.board_version = room.version
        return room.board_json

    def _account_of(self, rec: GameRecord, side: str) -> str | None:
        account_id = getattr(rec, f"{side}_account")
        return None if account_id is None else self.svc.account_name(account_id)

    def live(self, room: Room) -> dict[str, Any]:
        """The part of the public state that changes without a new version (presence, clocks, AI queue)."""
        rec = room.rec
        seats = {}
        for s in SIDES:
            if rec.mode == "ai" and rec.ai_side == s:
                seats[s] = {"kind": "ai", "level": rec.ai_level, "present": True}
            elif rec.mode == "online" and not getattr(rec, f"{s}_token"):
                seats[s] = {"kind": "open", "present": False}
            else:
                seats[s] = {"kind": "human", "present": bool(room.present[s])}
                since = room.present.get("away", {}).get(s)
                # only where it matters (a claim is possible): the state stays still otherwise
                claimable = rec.mode == "online" and rec.clock is None and self.svc.status(room) == "playing"
                if claimable and not room.present[s] and since is not None:
                    seats[s]["away_for"] = round(max(0.0, self.svc.now() - since), 1)
        clock = None
        if rec.clock is not None:
            clock = {
                "initial": rec.clock,
                "south": max(0.0, self.svc.time_left(room, "south")),
                "north": max(0.0, self.svc.time_left(room, "north")),
                "running": self.svc.clock_side(room),
                "increment": rec.increment,
            }
        place = room.ai_place if self.svc.ai_to_move(room) else None
        ai = None if place is None else {"status": "thinking" if place == 0 else "queued", "position": place}
        return {
            "seats": seats,
            "clock": clock,
            "ai_thinking": place is not None,
            "ai": ai,
            "watchers": room.present["watchers"],
            # an untimed online game: a player may claim once the opponent has been away this long
            "claim_after": self.svc.claim_after if rec.mode == "online" and rec.clock is None else None,
            # issue 52: the side whose first move is awaited and the seconds left before the abort
            "first_move": self.svc.first_move(room),
        }

    def state_json(self, room: Room) -> str:
        """The public state as JSON text (never a token)."""
        live = json.dumps(self.live(room), separators=(",", ":"))[1:-1]
        return "{" + self.board(room) + "," + live + "}"

    def public_state(self, room: Room) -> dict[str, Any]:
        """Everything anyone may see about a game (never a token), as a dict."""
        result: dict[str, Any] = json.loads(self.state_json(room))
        return result

    def _has_own_move(self, room: Room) -> bool:
        """Whether undo has something to take back: a move (not a forced pass) of a person, in a
        game with undo (against the AI, the AI's own opening move is not the person's to undo)."""
        rec, n = room.rec, len(room.rec.moves)
        if rec.mode == "hotseat":
            return any(m != "pass" for m in rec.moves)
        if rec.mode != "ai":
            return False
        turn = room.game.turn
        return any(
            m != "pass" and (turn.other if (n - 1 - i) % 2 == 0 else turn).value != rec.ai_side
            for i, m in enumerate(rec.moves)
        )

    def replay_frames(self, room: Room) -> dict[str, Any]:
        """Every position of the game from the start, for stepping through it."""
        rec = room.rec
        game = Game.from_position(rec.start_position) if rec.start_position else Game()
        frames = []

        def frame(move: str | None) -> dict[str, Any]:
            return {
                "ply": len(game.history),
                "move": move,
                "towers": {c: [_p(p) for p in t] for c, t in game.towers().items() if t},
                "leaders": {k: (str(v) if v is not None else None) for k, v in game.leaders().items()},
                "score": list(game.score()),
                "turn": game.turn.value,
            }

        frames.append(frame(None))
        for mv in rec.moves:
            game.play(mv)
            frames.append(frame(mv))
        return {"id": rec.id, "frames": frames, "result": self.svc.outcome(room)[0]}

    def record_tags(self, room: Room) -> dict[str, str]:
        """The tags of the game record for download."""
        rec = room.rec
        result, reason = self.svc.outcome(room)
        given = rec.meta.get("names", {})
        names = {s: "AI " + (rec.ai_level or "") if rec.ai_side == s else given.get(s) or "Human" for s in SIDES}
        tags = {
            "Event": f"Jericho web game ({rec.mode})",
            "Site": "jericho serve",
            "Date": time.strftime("%Y.%m.%d", time.gmtime(rec.created_at)),
            "South": names["south"],
            "North": names["north"],
            "Result": _RESULT_TOKENS[result],
            "GameId": rec.id,
        }
        if reason and (result or reason in NO_RESULT):
            loser = "South" if result == "north" else "North"
            away = SIDE_NAMES[Side(rec.meta.get("claimed_by") or "south").other.value]
            tags["Termination"] = {
                "seven": "seven monoliths held through a full turn",
                "exhaustion": "both players passed",
                "resign": f"{loser} resigned",
                "time": f"{loser} lost on time",
                "agreed": "draw agreed",
                "claim": f"{away} left the game; "
                + (f"{SIDE_NAMES[result]} claimed the win" if result in SIDES else "a draw was claimed"),
                "aborted": (
                    f"aborted: {SIDE_NAMES[rec.meta['no_start']]}'s first move did not come in time (no result)"
                    if rec.meta.get("no_start") in SIDE_NAMES
                    else "aborted before both sides had moved (no result)"
                ),
                "expired": "nobody took the open seat (no result)",
            }.get(reason, reason)
        takebacks = rec.meta.get("takebacks")
        if takebacks:
            tags["Takebacks"] = "; ".join(f"{SIDE_NAMES[t['by']]} at ply {t['ply']}" for t in takebacks)
        return tags
