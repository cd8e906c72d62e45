"""A player's games, searched (issue 34): filters, a position search, pages, and the ``.jgn`` export.

``GET /api/players/{name}/games`` answers one page of the player's games, newest first, chosen by
query parameters (lichess's "advanced search"):

- ``opponent`` (a username), ``result`` (``won``, ``lost``, ``draw``, ``ongoing``), ``side``
  (``south``, ``north``), ``rated`` (``yes``, ``no``), ``speed`` (:data:`SPEEDS`, lichess's
  bounds on the estimated duration *clock + 40 x increment*), ``mode`` (``ai``, ``online``,
  ``hotseat``), ``level`` (an AI level: ``easy``, ``mcts:sims=200``...), ``from`` / ``to``
  (``YYYY-MM-DD``, UTC, both days included);
- ``position``: a position text (docs/notation.md, the analysis board's position box): only the
  games that passed through it (its board, both reserves and the side to move; the last move,
  passes and result fields are not compared);
- ``before`` (the ``next`` of the previous page) and ``limit`` (at most :data:`MAX_PAGE`).

Every filter is a parameterised SQL condition, the same text on SQLite and PostgreSQL.  Paging is
by key, ``(created_at, id)`` descending: a page never repeats or skips a game when new games arrive.
A bad value is a 400 ``bad_filter`` whose message names the parameter.

The position search is a query of the position index (:mod:`jericho_game.web.people.positionindex`:
the positions every finished game passed through, filled by a thread of each server process, never by
a move): the games the other filters keep that are indexed and passed through the position are found
by one SQL statement.  The few games not indexed yet (still playing, or ended within the indexer's
last round) are replayed, each only as far as the position can lie (the board's pieces only grow: a
game stops replaying once it has placed more pieces than the position holds), at most
:data:`MAX_SCAN` of them per request; a page that reached that bound says so (``scan_limited``) and
its ``next`` continues where it stopped.  Either way the answer is the replay's: the same games, in
the same order, on the same pages.  Measured cost: docs/web.md, "A player's games and statistics".

``GET /api/players/{name}/games.jgn`` takes the same filters and answers the selection (at most
:data:`MAX_EXPORT` games, oldest first) as one ``.jgn`` text, records one after the other as
``jericho records`` reads them.

Only the owner sees all their games; anybody else sees the public and rated ones, as on the profile
(:meth:`jericho_game.web.accounts.ratings.Ratings.profile`).
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from jericho_game.errors import JerichoError
from jericho_game.game import Game
from jericho_game.web.accounts.accounts import AccountService
from jericho_game.web.common.budget import BudgetPolicy
from jericho_game.web.i18n import positions
from jericho_game.web.people.positionindex import PositionIndexer, position_hash, position_key
from jericho_game.web.round.gameroom import GAME_ID, ClientError
from jericho_game.web.round.mygames import moves_of
from jericho_game.web.round.rooms import GameService
from jericho_game.web.storage.database import Storage, record_from_row

__all__ = [
    "MAX_EXPORT",
    "MAX_PAGE",
    "MAX_SCAN",
    "SPEEDS",
    "Filters",
    "GameSearch",
    "position_key",
    "speed_of",
]

MAX_PAGE = 100  # games per page at most (lichess's search pages hold 20 to 100)
DEFAULT_PAGE = 20
MAX_SCAN = 200  # games not in the position index replayed per request at most by a position search
MAX_EXPORT = 200  # games in one .jgn export at most
#: A replay or an export rests this many times as long as each slice of :data:`SLICE` seconds of its
#: work took: it runs on a thread of its budget, but holds the interpreter's lock while it works, and
#: the event loop and the moves' threads need that lock too (0: no rest).
PACE = 1.0
SLICE = 0.005
#: speed -> estimated duration bounds in seconds [low, high) (lichess: ultrabullet and bullet are one here)
SPEEDS: dict[str, tuple[float, float]] = {
    "bullet": (0.0, 180.0),
    "blitz": (180.0, 480.0),
    "rapid": (480.0, 1500.0),
    "classical": (1500.0, float("inf")),
}
SPEED_CHOICES = (*SPEEDS, "correspondence", "none")
RESULTS = ("won", "lost", "draw", "ongoing")
MODES = ("ai", "online", "hotseat")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_LEVEL = re.compile(r"^[A-Za-z0-9_:=.,-]{1,100}$")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,24}$")  # a username (web/accounts/accounts.py: check_username)

# the player's side and opponent in a game: the south seat when it is theirs (hot-seat: both are)
_SIDE = "(CASE WHEN g.south_account = :me THEN 'south' ELSE 'north' END)"
_OPP = "(CASE WHEN g.south_account = :me THEN g.north_account ELSE g.south_account END)"
_DURATION = "(COALESCE(g.clock, 0) + 40 * COALESCE(g.increment, 0))"


def _bad(param: str, why: str) -> ClientError:
    return ClientError("bad_filter", f"{param}: {why}", 400)


def _choice(q: Mapping[str, str], param: str, choices: tuple[str, ...]) -> str | None:
    value = q.get(param, "")
    if value == "":
        return None
    if value not in choices:
        raise _bad(param, f"one of {', '.join(choices)}, not {value[:20]!r}")
    return value


def _day(q: Mapping[str, str], param: str, end: bool) -> float | None:
    value = q.get(param, "")
    if value == "":
        return None
    try:
        if not _DATE.match(value):
            raise ValueError
        start = calendar.timegm(time.strptime(value, "%Y-%m-%d"))
    except ValueError:
        raise _bad(param, f"a date as YYYY-MM-DD, not {value[:20]!r}") from None
    return float(start + 86400 if end else start)  # "to" includes its whole day


def _pieces(position: str) -> int:
    """Pieces on the board of a position text (each piece is one size digit in the towers field)."""
    towers = position.split()[0]
    if towers == "-":
        return 0
    return sum(ch.isdigit() for item in towers.split(",") for ch in item.split(":", 1)[1])


def speed_of(clock: float | None, increment: float | None, per_move_days: int | None) -> str:
    """A game's speed: :data:`SPEEDS` by clock + 40 x increment, ``correspondence`` or ``none`` (no clock)."""
    if per_move_days is not None:
        return "correspondence"
    if clock is None:
        return "none"
    duration = clock + 40 * (increment or 0)
    return next(name for name, (low, high) in SPEEDS.items() if low <= duration < high)


@dataclass(frozen=True)
class Filters:
    """A search's filters, checked (:meth:`parse`)."""

    opponent: str | None = None
    result: str | None = None
    side: str | None = None
    rated: bool | None = None
    speed: str | None = None
    mode: str | None = None
    level: str | None = None
    since: float | None = None  # "from", included
    until: float | None = None  # the day after "to", excluded
    position: str | None = None  # the position text, as the engine writes it
    before: tuple[float, str] | None = None  # the page's key: games strictly older than it
    limit: int = DEFAULT_PAGE

    @classmethod
    def parse(cls, q: Mapping[str, str], most: int = MAX_PAGE) -> Filters:
        """The filters of a query string; :class:`ClientError` ``bad_filter`` (400) naming the parameter."""
        opponent = q.get("opponent", "").strip() or None
        if opponent is not None and not _NAME.match(opponent):
            raise _bad("opponent", "a player's username")
        rated_text = _choice(q, "rated", ("yes", "no"))
        level = q.get("level", "") or None
        if level is not None and not _LEVEL.match(level):
            raise _bad("level", "an AI level (easy, medium, hard, mcts:sims=200 ...)")
        position = q.get("position", "").strip() or None
        if position is not None:
            if len(position) > 400:
                raise _bad("position", "at most 400 characters")
            try:
                position = Game.from_position(position).position()
            except (JerichoError, ValueError) as exc:
                raise _bad("position", positions.explain(str(exc))) from None  # said to a player: issue 52
        before = None
        if q.get("before"):
            stamp, _, gid = q["before"].partition("~")
            try:
                at = float(stamp)
            except ValueError:
                at = float("nan")
            if at != at or not GAME_ID.match(gid):  # nan: not a number
                raise _bad("before", "the next key of the previous page")
            before = (at, gid)
        limit = DEFAULT_PAGE
        if q.get("limit"):
            try:
                limit = int(q["limit"])
            except ValueError:
                raise _bad("limit", f"a whole number from 1 to {most}") from None
            if not 1 <= limit <= most:
                raise _bad("limit", f"a whole number from 1 to {most}")
        since, until = _day(q, "from", False), _day(q, "to", True)
        if since is not None and until is not None and since >= until:
            raise _bad("from", "a day no later than to")
        return cls(
            opponent=opponent,
            result=_choice(q, "result", RESULTS),
            side=_choice(q, "side", ("south", "north")),
            rated=None if rated_text is None else rated_text == "yes",
            speed=_choice(q, "speed", SPEED_CHOICES),
            mode=_choice(q, "mode", MODES),
            level=level,
            since=since,
            until=until,
            position=position,
            before=before,
            limit=limit,
        )

    def where(self, opponent_id: int | None) -> tuple[list[str], dict[str, Any]]:
        """The SQL conditions (on ``games g``, ``:me`` the player) and their parameters."""
        conds: list[str] = []
        params: dict[str, Any] = {}
        if self.opponent is not None:
            conds.append(f"{_OPP} = :opp AND g.mode <> 'hotseat'")
            params["opp"] = opponent_id if opponent_id is not None else -1  # nobody has that name: no game
        if self.result == "won":
            conds.append(f"g.result = {_SIDE} AND g.mode <> 'hotseat'")
        elif self.result == "lost":
            conds.append(f"g.result IN ('south', 'north') AND g.result <> {_SIDE} AND g.mode <> 'hotseat'")
        elif self.result == "draw":
            conds.append("g.result = 'draw'")
        elif self.result == "ongoing":
            conds.append("g.result IS NULL AND g.reason IS NULL")
        if self.side is not None:
            conds.append(f"{_SIDE} = :side AND g.mode <> 'hotseat'")
            params["side"] = self.side
        if self.rated is not None:
            conds.append("g.rated = :rated")
            params["rated"] = int(self.rated)
        if self.speed == "correspondence":
            conds.append("g.per_move_days IS NOT NULL")
        elif self.speed == "none":
            conds.append("g.clock IS NULL")
        elif self.speed is not None:
            low, high = SPEEDS[self.speed]
            conds.append(f"g.per_move_days IS NULL AND g.clock IS NOT NULL AND {_DURATION} >= :slow")
            params["slow"] = low
            if high != float("inf"):
                conds.append(f"{_DURATION} < :shigh")
                params["shigh"] = high
        if self.mode is not None:
            conds.append("g.mode = :mode")
            params["mode"] = self.mode
        if self.level is not None:
            conds.append("g.mode = 'ai' AND g.ai_level = :level")
            params["level"] = self.level
        if self.since is not None:
            conds.append("g.created_at >= :since")
            params["since"] = self.since
        if self.until is not None:
            conds.append("g.created_at < :until")
            params["until"] = self.until
        if self.before is not None:
            conds.append("(g.created_at < :bat OR (g.created_at = :bat AND g.id < :bid))")
            params["bat"], params["bid"] = self.before
        return conds, params


def passes_through(start: str | None, moves: list[str], position: str) -> bool:
    """Whether the game of ``start`` and ``moves`` was ever in ``position`` (its :func:`position_key`).

    Replays only while the game holds no more pieces on the board than the position: pieces are only
    ever added, so the position cannot come later."""
    key, pieces = position_key(position), _pieces(position)
    game = Game.from_position(start) if start else Game()
    placed = _pieces(game.position())
    if placed == pieces and position_key(game.position()) == key:
        return True
    for move in moves:
        if placed > pieces:
            return False
        try:
            game.play(move)
        except (JerichoError, ValueError):
            return False  # a stored record the engine refuses: it cannot match
        if move != "pass":
            placed += 1
            if placed == pieces and position_key(game.position()) == key:
                return True
        elif placed == pieces and position_key(game.position()) == key:
            return True
    return False


class GameSearch:
    """Searches a player's games (:meth:`page`), exports them (:meth:`export`).

    ``budget``: the budget policy whose ``search`` and ``export`` budgets the routes run these in
    (:func:`jericho_game.web.people.playerstats.games_routes`; default: one of its own);
    ``indexer``: the position index's filler (:meth:`start` and :meth:`close` run and stop it)."""

    def __init__(
        self,
        storage: Storage,
        accounts: AccountService,
        games: GameService | None = None,
        budget: BudgetPolicy | None = None,
    ) -> None:
        self.storage = storage
        self.accounts = accounts
        self.games = games
        self.budget = budget if budget is not None else BudgetPolicy(storage)
        self.indexer = PositionIndexer(storage)

    def start(self) -> None:
        """Start filling the position index (a thread of its own)."""
        self.indexer.start()

    def close(self) -> None:
        """Stop filling the position index (before the storage closes)."""
        self.indexer.stop()

    def _player(self, username: str) -> Any:
        acc = self.accounts.find(username)
        if acc is None:
            raise ClientError("unknown_account", f"no player is named {username[:24]!r}", 404)
        return acc

    def _query(
        self, me: int, owner: bool, f: Filters, limit: int, position: str | None = None
    ) -> list[tuple[Any, int | None]]:
        """The games the SQL filters keep, newest first: (record, its plies when known).

        With ``position`` (its :func:`position_hash`), only the games that the position index says
        passed through it, and the games not in the index (their plies None: the caller replays them)."""
        opp_id = None
        if f.opponent is not None:
            opp = self.accounts.find(f.opponent)
            opp_id = opp.id if opp is not None else None
        conds, params = f.where(opp_id)
        conds.insert(0, "(g.south_account = :me OR g.north_account = :me)")
        if not owner:  # as the profile: a stranger never learns the id of a private game
            conds.append("(g.public = 1 OR g.rated = 1)")
        params.update(me=me, n=limit)
        join, plies = "", "NULL AS plies_"
        if position is not None:
            join, plies = " LEFT JOIN positions_indexed x ON x.game_id = g.id", "x.plies AS plies_"
            conds.append(
                "(x.game_id IS NULL OR EXISTS "
                "(SELECT 1 FROM game_positions p WHERE p.pkey = :pkey AND p.game_id = g.id))"
            )
            params["pkey"] = position
        sql = (
            f"SELECT g.*, {plies} FROM games g{join} WHERE {' AND '.join(conds)} "
            "ORDER BY g.created_at DESC, g.id DESC LIMIT :n"
        )
        with self.storage.reader.connect() as conn:
            out = []
            for r in conn.execute(text(sql), params).mappings():
                row = dict(r)
                known = row.pop("plies_")
                out.append((record_from_row(row), None if known is None else int(known)))
        return out

    def _moves(self, ids: list[str], with_moves: bool) -> tuple[dict[str, list[str]], dict[str, int]]:
        """The moves of the games ``ids`` (``with_moves``), else how many each has."""
        moves: dict[str, list[str]] = {g: [] for g in ids}
        counts: dict[str, int] = {}
        with self.storage.reader.connect() as conn:
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                names = ", ".join(f":g{k}" for k in range(len(chunk)))
                chunk_params = {f"g{k}": g for k, g in enumerate(chunk)}
                if with_moves:
                    sql = f"SELECT game_id, move FROM moves WHERE game_id IN ({names}) ORDER BY game_id, ply"
                    for gid, mv in conn.execute(text(sql), chunk_params):
                        moves[gid].append(mv)
                else:
                    sql = f"SELECT game_id, count(*) FROM moves WHERE game_id IN ({names}) GROUP BY game_id"
                    counts.update((str(g), int(n)) for g, n in conn.execute(text(sql), chunk_params))
        return moves, counts

    def _select(
        self, me: int, owner: bool, f: Filters, want: int
    ) -> tuple[list[tuple[Any, int]], tuple[float, str] | None, int]:
        """Up to ``want`` games (record, plies); the key to continue from (None: nothing more matches);
        how many games a position search replayed (those not in the position index)."""
        if f.position is None:
            rows = self._query(me, owner, f, want + 1)
            _moves, counts = self._moves([rec.id for rec, _ in rows[:want]], with_moves=False)
            page = [(rec, counts.get(rec.id, 0)) for rec, _ in rows[:want]]
            more = len(rows) > want
            return page, (page[-1][0].created_at, page[-1][0].id) if more else None, 0
        key = position_hash(f.position)
        found: list[tuple[Any, int]] = []
        replayed = 0
        cursor = f.before
        batch = want + 1  # the indexed games that match cost one row each: the first batch may be enough
        pace = _Pacer()
        while True:
            chunk = self._query(me, owner, _with(f, cursor), batch, position=key)
            # the games not indexed yet are replayed, as many as the bound leaves
            unknown = [rec.id for rec, plies in chunk if plies is None][: MAX_SCAN - replayed]
            moves, _counts = self._moves(unknown, with_moves=True)
            for rec, known in chunk:
                if known is None:
                    if replayed == MAX_SCAN:
                        return found, cursor, replayed  # the bound on replays: the next page goes on from here
                    replayed += 1
                    pace()
                    if not passes_through(rec.start_position, moves[rec.id], f.position):
                        cursor = (rec.created_at, rec.id)
                        continue
                    known = len(moves[rec.id])
                cursor = (rec.created_at, rec.id)
                found.append((rec, known))
                if len(found) == want:
                    return found, cursor, replayed  # more may match after this one
            if len(chunk) < batch:
                return found, None, replayed  # every candidate was looked at
            batch = 200

    def _row(self, rec: Any, plies: int, me: int) -> dict[str, Any]:
        hotseat = rec.mode == "hotseat"
        side = "south" if rec.south_account == me else "north"
        other = rec.north_account if side == "south" else rec.south_account
        outcome = None
        if rec.result == "draw":
            outcome = "draw"
        elif rec.result in ("south", "north"):
            outcome = f"{rec.result} won" if hotseat else "won" if rec.result == side else "lost"
        if rec.mode == "ai":
            opponent: dict[str, Any] = {"kind": "ai", "name": None, "level": rec.ai_level}
        elif hotseat:
            opponent = {"kind": "hotseat", "name": None}
        else:
            name = self.accounts.name_of(int(other)) if other is not None else None
            opponent = {"kind": "human" if other is not None else "anonymous", "name": name}
        return {
            "id": rec.id,
            "date": rec.created_at,
            "mode": rec.mode,
            "side": "both" if hotseat else side,
            "opponent": opponent,
            "status": "over" if rec.result or rec.reason else "playing",
            "result": outcome,
            "reason": rec.reason,
            "rated": bool(rec.rated),
            "speed": speed_of(rec.clock, rec.increment, rec.per_move_days),
            "clock": rec.clock / 60.0 if rec.clock else None,
            "increment": rec.increment,
            "per_move_days": rec.per_move_days,
            "moves": moves_of(rec.start_position, plies),
        }

    def page(self, username: str, query: Mapping[str, str], viewer: int | None = None) -> dict[str, Any]:
        """One page of ``username``'s games chosen by ``query`` (the module's parameters), as JSON:
        ``games``, ``next`` (the ``before`` of the next page, None at the end), ``complete``, ``scanned``."""
        f = Filters.parse(query)
        acc = self._player(username)
        owner = viewer is not None and viewer == acc.id
        found, cursor, scanned = self._select(acc.id, owner, f, f.limit)
        return {
            "player": acc.username,
            "all_games": owner,  # False: only the public and rated games are searched
            "games": [self._row(rec, plies, acc.id) for rec, plies in found],
            "next": None if cursor is None else f"{cursor[0]!r}~{cursor[1]}",
            # a position search that stopped at MAX_SCAN replays before filling the page
            "scan_limited": f.position is not None and cursor is not None and len(found) < f.limit,
            "scanned": scanned,
            "limit": f.limit,
        }

    def export(
        self,
        username: str,
        query: Mapping[str, str],
        write: Callable[[Any, dict[str, str]], str],
        viewer: int | None = None,
    ) -> tuple[str, int]:
        """The games the filters choose (``before`` and the position included, at most :data:`MAX_EXPORT`,
        ``limit`` ignored), oldest first, as one ``.jgn`` text; and how many games it holds."""
        assert self.games is not None, "export needs the game service"
        f = Filters.parse({k: v for k, v in query.items() if k != "limit"})
        acc = self._player(username)
        owner = viewer is not None and viewer == acc.id
        found, _cursor, _scanned = self._select(acc.id, owner, f, MAX_EXPORT)
        # every game's moves in one query (a load per game cost two round trips and a transaction each)
        moves, _counts = self._moves([rec.id for rec, _plies in found], with_moves=True)
        texts = []
        pace = _Pacer()
        for rec, _plies in sorted(found, key=lambda r: (r[0].created_at, r[0].id)):
            pace()
            rec.moves = moves[rec.id]
            room = self.games.cache.build(rec)  # not cached: this runs off the event loop
            texts.append(write(room.game, self.games.record_tags(room)))
        return "\n".join(texts), len(texts)


class _Pacer:
    """Called between two units of CPU work (a game replayed, a record written): rests :data:`PACE`
    times as long as the work took once :data:`SLICE` seconds of it have gone by."""

    def __init__(self) -> None:
        self.since = time.perf_counter()

    def __call__(self) -> None:
        spent = time.perf_counter() - self.since
        if spent >= SLICE and PACE > 0:
            time.sleep(PACE * spent)
            self.since = time.perf_counter()


def _with(f: Filters, before: tuple[float, str] | None) -> Filters:
    return Filters(**{**f.__dict__, "before": before})
