"""Fair endings of online games: draw offers, takeback requests, claims against an absent
opponent, abort; and the players' names.  Part of the game-room service (see rooms.py).

Each is a change like a move: ``CommitPipeline.write`` (web/round/commits.py) locks the game's row, the request is
checked against the game as stored (and, for a claim, against the presence table as stored:
never this process's memory), the game is written with its version bumped by compare-and-set.
The loser of a race gets a coded error; ``moved_on`` carries the fresh state.

- **Draw offer** (``offer`` ``draw``): stands until the opponent accepts (draw, reason
  ``agreed``) or declines, or makes a move; the offerer's own move leaves it standing.  A side
  may offer once per position (``offer_again``).  Offering while the opponent's offer stands
  accepts it.
- **Takeback request** (``offer`` ``takeback``): the requester's last move (and anything after
  it) is taken back if the opponent accepts; any move answers it (no).  Each accepted takeback
  is listed in the game (``meta.takebacks``) and its record (``[Takebacks "..."]``).
- **Claim** (``claim`` ``win``/``draw``): in an untimed game, once the opponent's seat has had no
  connection on any server process for ``claim_after`` seconds (reason ``claim``).
- **Abort** (``abort``): no result (reason ``aborted``), while not both sides have moved; it
  also withdraws a seek nobody has taken.
- Hot-seat and AI games keep plain undo: all of the above answer ``not_online`` there.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from jericho_game.pieces import Side
from jericho_game.web.round.correspondence import seek_expired, still_crowded_out
from jericho_game.web.round.gameroom import SIDE_NAMES, SIDES, Change, ClientError, Room, both_moved
from jericho_game.web.storage.database import Tx

if TYPE_CHECKING:
    from jericho_game.web.round.rooms import GameService

__all__ = [
    "OFFERS",
    "CLAIMS",
    "offer",
    "answer",
    "claim",
    "abort",
    "abort_unstarted",
    "expire_seek",
    "set_name",
    "fmt_time",
]

OFFERS = ("draw", "takeback")
CLAIMS = ("win", "draw")
_MAX_TAKEBACKS = 100  # kept in the game's meta; more is not a game any more


def fmt_time(seconds: float) -> str:
    """``4:05`` for 245 seconds."""
    s = max(0, int(seconds))
    return f"{s // 60}:{s % 60:02d}"


def _my_side(room: Room, seats: frozenset[str], action: str) -> str:
    """The one seat of an online player, or the right refusal."""
    if not seats:
        raise ClientError("not_a_player", f"spectators cannot {action}: open your seat link to play", 403)
    if room.rec.mode != "online":
        raise ClientError(
            "not_online", f"you cannot {action} here: that is for online games (use undo or resign instead)"
        )
    return next(iter(seats))


def _playing(svc: GameService, room: Room, action: str) -> None:
    status = svc.status(room)
    if status == "over":
        raise ClientError("game_over", f"the game is over: you cannot {action}")
    if status == "waiting":
        raise ClientError("waiting", f"the invited player has not joined yet: you cannot {action}")


def _what(what: Any, allowed: tuple[str, ...], field: str = "what") -> str:
    if what not in allowed:
        raise ClientError("bad_message", f"'{field}' must be {' or '.join(allowed)}, not {str(what)[:40]!r}")
    return str(what)


def _without_offer(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if k != "offer"}


def _takeback_game(room: Room, side: str) -> Any:
    """The game with ``side``'s last own move (and everything after it) taken back, or None."""
    game = room.game.copy()
    while game.history:
        last = game.history[-1]
        mover = game.turn.other.value  # a move flips the turn
        game.undo()
        if mover == side and not last.is_pass:
            return game
    return None


def offer(svc: GameService, game_id: str, seats: frozenset[str], what: Any) -> Change:
    """Offer a draw or request a takeback for the player's seat."""
    kind = _what(what, OFFERS)

    def decide(tx: Tx, room: Room) -> Change:
        me = _my_side(room, seats, f"offer a {kind}" if kind == "draw" else "ask for a takeback")
        _playing(svc, room, "offer a draw" if kind == "draw" else "ask for a takeback")
        rec = room.rec
        ply = len(rec.moves)
        standing = rec.meta.get("offer")
        if standing:
            if standing["by"] != me and standing["what"] == "draw" and kind == "draw":
                return _accept(svc, tx, room, me)  # both want a draw: agreed
            who = "your" if standing["by"] == me else SIDE_NAMES[standing["by"]] + "'s"
            noun = "draw offer" if standing["what"] == "draw" else "takeback request"
            raise ClientError("offer_pending", f"{who} {noun} is waiting for an answer first", 409)
        offered = rec.meta.get("offered", {})
        if offered.get(f"{kind}:{me}") == ply:
            noun = "a draw" if kind == "draw" else "a takeback"
            raise ClientError("offer_again", f"you already asked for {noun} in this position: wait for a move", 409)
        if kind == "takeback" and _takeback_game(room, me) is None:
            raise ClientError("nothing_to_undo", "there is no move of yours to take back")
        new = rec.copy()
        new.meta["offer"] = {"what": kind, "by": me, "ply": ply}
        new.meta["offered"] = {**offered, f"{kind}:{me}": ply}
        return Change(svc.commits.commit(tx, room, new, room.game))

    return svc.commits.write(game_id, decide)


def _accept(svc: GameService, tx: Tx, room: Room, me: str) -> Change:
    rec = room.rec
    standing = rec.meta["offer"]
    new = rec.copy()
    new.meta = _without_offer(new.meta)
    new.meta["answer"] = _answered(standing, me, True)
    svc._charge(new, room.game)
    if standing["what"] == "draw":
        new.result, new.reason, new.turn_started = "draw", "agreed", None
        return Change(svc.commits.commit(tx, room, new, room.game))
    game = _takeback_game(room, standing["by"])
    if game is None:  # cannot happen: the request was checked and any move since cleared it
        raise ClientError("nothing_to_undo", "there is no move to take back any more")
    taken = list(new.meta.get("takebacks", []))[-_MAX_TAKEBACKS + 1 :]
    new.meta["takebacks"] = [*taken, {"by": standing["by"], "ply": len(rec.moves), "to": len(game.history)}]
    return Change(svc.commits.commit(tx, room, new, game, plies=len(game.history)))


def answer(svc: GameService, game_id: str, seats: frozenset[str], what: Any, accept: bool) -> Change:
    """Accept or decline the opponent's standing offer of kind ``what`` (the offerer may decline
    their own offer: they withdraw it)."""
    kind = _what(what, OFFERS)
    verb = "accept" if accept else "decline"

    def decide(tx: Tx, room: Room) -> Change:
        me = _my_side(room, seats, f"{verb} an offer")
        _playing(svc, room, f"{verb} an offer")
        standing = room.rec.meta.get("offer")
        noun = "draw offer" if kind == "draw" else "takeback request"
        if not standing or standing["what"] != kind:
            raise ClientError(
                "no_offer",
                f"there is no {noun} to {verb} (it may have been withdrawn or answered by a move)",
                409,
                svc.public_state(room),
            )
        if accept and standing["by"] == me:
            raise ClientError("own_offer", f"you cannot accept your own {noun}: your opponent answers it")
        if accept:
            return _accept(svc, tx, room, me)
        new = room.rec.copy()
        new.meta = _without_offer(new.meta)
        new.meta["answer"] = _answered(standing, me, False)
        return Change(svc.commits.commit(tx, room, new, room.game))

    return svc.commits.write(game_id, decide)


def _answered(standing: dict[str, Any], me: str, accepted: bool) -> dict[str, Any]:
    """How an offer was answered, for the state (``answer``): the requester's page says so (issue 24:
    a declined draw or an accepted takeback went unsaid).  ``ply`` and ``what`` name the offer;
    ``by`` is who answered (the offerer: withdrawn)."""
    return {"what": standing["what"], "ply": standing["ply"], "to": standing["by"], "by": me, "accepted": accepted}


def claim(svc: GameService, game_id: str, seats: frozenset[str], what: Any) -> Change:
    """Claim the win (or a draw) against an opponent absent for ``svc.claim_after`` seconds."""
    kind = _what(what, CLAIMS)

    def decide(tx: Tx, room: Room) -> Change:
        me = _my_side(room, seats, "claim")
        _playing(svc, room, "claim")
        rec = room.rec
        if rec.clock is not None:
            raise ClientError("timed_game", "this game has a clock: an absent player's time runs out instead")
        opp = Side(me).other.value
        now = svc.now()
        seen = svc.storage.presence(rec.id, now, svc.presence_ttl, conn=tx.conn)
        if seen.present[opp]:
            raise ClientError("opponent_here", f"{SIDE_NAMES[opp]} is connected: there is nothing to claim")
        since = seen.away_since[opp]
        if since is None:  # never connected since joining: away since the game began
            since = float(rec.meta.get("joined_at") or rec.created_at)
        away = now - since
        if away < svc.claim_after:
            raise ClientError(
                "too_early",
                f"{SIDE_NAMES[opp]} has been away for {fmt_time(away)}: you can claim after "
                f"{fmt_time(svc.claim_after)} ({fmt_time(svc.claim_after - away)} from now)",
                409,
            )
        new = rec.copy()
        new.meta = _without_offer(new.meta)
        new.meta["claimed_by"] = me
        new.result = me if kind == "win" else "draw"
        new.reason, new.turn_started = "claim", None
        return Change(svc.commits.commit(tx, room, new, room.game))

    return svc.commits.write(game_id, decide)


def abort(svc: GameService, game_id: str, seats: frozenset[str]) -> Change:
    """End the game with no result, while not both sides have moved (a seek is withdrawn so)."""

    def decide(tx: Tx, room: Room) -> Change:
        _my_side(room, seats, "abort")
        if svc.status(room) == "over":
            raise ClientError("game_over", "the game is over: you cannot abort it")
        if both_moved(room.rec):
            raise ClientError("cannot_abort", "both sides have moved: offer a draw or resign instead")
        new = room.rec.copy()
        new.meta = _without_offer(new.meta)
        new.result, new.reason, new.turn_started = None, "aborted", None
        return Change(svc.commits.commit(tx, room, new, room.game))

    return svc.commits.write(game_id, decide)


#: Seconds a player with the game open may take over their first move against the AI before it is aborted.
ABANDONED_AFTER = 600.0


def abort_unstarted(svc: GameService, game_id: str) -> Change | None:
    """Abort an AI game (no result, reason ``aborted``) whose player has not made a move of their own
    although it has been their turn for ``svc.ai_first_move`` seconds with nobody at the seat (or
    :data:`ABANDONED_AFTER` seconds with the game open), as lichess aborts a game whose first move
    never comes (issue 51: it already counts in no budget after ``ai_first_move``); None when it does
    not qualify (checked under the game's lock)."""

    def decide(tx: Tx, room: Room) -> Change:
        rec = room.rec
        if rec.mode != "ai" or svc.status(room) == "over" or rec.ai_side is None:
            return Change(room)
        player = Side(rec.ai_side).other
        if room.game.turn != player or _has_moved(rec, player) or tx.has_job(room.version):
            return Change(room)
        # a game's updated_at is the storage's wall time; presence rows are stamped by the service's clock
        wall = time.time()
        if rec.updated_at > wall - svc.ai_first_move:
            return Change(room)
        # a player at the board may think about their first move as long as they like, up to the
        # long bound; one who left is let go after the short one
        if svc.storage.presence(rec.id, svc.now(), svc.presence_ttl, conn=tx.conn).present[player.value]:
            if rec.updated_at > wall - ABANDONED_AFTER:
                return Change(room)
        new = rec.copy()
        new.meta = _without_offer(new.meta)
        new.result, new.reason, new.turn_started = None, "aborted", None
        return Change(svc.commits.commit(tx, room, new, room.game))

    change = svc.commits.write(game_id, decide)
    return change if change.committed else None


def _has_moved(rec: Any, side: Side) -> bool:
    """Whether ``side`` has made a move of its own (not a forced pass) in ``rec``."""
    from jericho_game.game import Game

    turn = Side.SOUTH if not rec.start_position else Game.from_position(rec.start_position).turn
    for mv in rec.moves:
        if mv != "pass" and turn == side:
            return True
        turn = turn.other
    return False


def expire_seek(svc: GameService, game_id: str, crowded: bool = False) -> Change | None:
    """End an open public seek nobody took (reason ``expired``, no result) when its creator has been
    away ``svc.seek_idle`` seconds or it is ``svc.seek_max_age`` old, or (``crowded``) when it is an
    anonymous correspondence seek crowded out of the lobby's list (checked again under the lock:
    :func:`still_crowded_out`); None when it does not qualify."""

    def decide(tx: Tx, room: Room) -> Change:
        rec = room.rec
        if not rec.public or rec.joined or svc.status(room) != "waiting":
            return Change(room)
        now = svc.now()
        creator = "south" if rec.south_token else "north"
        seen = svc.storage.presence(rec.id, now, svc.presence_ttl, conn=tx.conn)
        since = seen.away_since[creator] if not seen.present[creator] else None
        listed = float(rec.meta.get("listed_at") or rec.created_at)
        if since is None and not seen.present[creator]:
            since = listed  # never connected
        if not seek_expired(rec, now, since, svc.seek_idle, svc.seek_max_age) and not (
            crowded and still_crowded_out(tx.conn, rec, svc.correspondence_seeks)
        ):
            return Change(room)
        new = rec.copy()
        new.result, new.reason = None, "expired"
        return Change(svc.commits.commit(tx, room, new, room.game))

    change = svc.commits.write(game_id, decide)
    return change if change.committed else None


def set_name(svc: GameService, game_id: str, seats: frozenset[str], name: Any) -> Change | None:
    """Give the player's seat(s) ``name`` where they have none yet (a name, once shown to the
    opponent, stays for the game); None when nothing changes.  Not in hot-seat games."""
    checked = svc.check_name(name)
    room = svc.room(game_id)
    if not seats or room.rec.mode == "hotseat":
        return None
    if all(room.rec.meta.get("names", {}).get(s) for s in seats):
        return None

    def decide(tx: Tx, fresh: Room) -> Change:
        names = dict(fresh.rec.meta.get("names", {}))
        todo = [s for s in seats if s in SIDES and not names.get(s)]
        if not todo:
            return Change(fresh)
        new = fresh.rec.copy()
        # a seat bound to an account takes the account's name, never a second one (issue 24)
        accounts = {s: getattr(fresh.rec, f"{s}_account") for s in todo}
        given = {s: (svc.account_name(a) if a is not None else None) or checked for s, a in accounts.items()}
        new.meta["names"] = {**names, **given}
        return Change(svc.commits.commit(tx, fresh, new, fresh.game))

    change = svc.commits.write(game_id, decide)
    return change if change.committed else None
