"""Tournaments (issue 34, point 2): arenas and Swiss tournaments, run by every server process.

- **Create** (``POST /api/tournaments``, any account): ``kind`` ``arena`` (``minutes`` long, pairing
  as soon as players are free, web/tournaments/arena.py) or ``swiss`` (``rounds``, pairing by score
  with no repeat, web/tournaments/swiss.py), the time control (``clock`` minutes and ``increment``,
  as ``POST /api/games`` takes them), ``rated``, ``berserk`` (arenas), ``starts_in`` minutes from
  now (0: at once).  It asks the budget ``tournament.create`` (web/common/budget.py: per address
  group, per account and in total, a day) beside :attr:`TournamentPolicy.open_per_account`.  An
  admin may feature one on the home page (``.../feature``).
- **List** (``GET /api/tournaments``): the featured ones by their own query; the others most
  players first, at most :attr:`TournamentPolicy.list_per_creator` of one creator and
  :attr:`TournamentPolicy.list_per_group` of one creator's address group (issue 51, finding 4: a
  flood of 120 arenas from 4 addresses hid every other tournament).
- **Join** (``.../join``) while it is scheduled or running: a new seat asks the budget
  ``tournament.join`` (per pair, one address group into one tournament, and per group a day), so
  one address group cannot fill a tournament; the creator's own join asks nothing and their seat is
  kept (others fill at most ``max_players - 1`` seats before the creator has joined).  **Withdraw**
  (``.../withdraw``): an arena player pauses (is paired no more until they join again, which takes
  no new seat), a Swiss player leaves the next rounds.  A player is *in* until they withdraw, as in
  lichess's arena, whether or not a page of theirs is open (issue 52): each pairing is pushed to
  every open page of its players (``/ws/tournaments``, web/tournaments/push.py), which go to the
  game by themselves; a player whose first move does not come (the game aborted,
  ``timecontrol.FIRST_MOVE``) is paused, so one who left is not paired again and again.
- **Blocks**: two players of whom one blocked the other (the people's table ``blocks``, read here)
  are never paired in an arena, and in a Swiss round only when no other pairing exists.
- **Games** are online games created by the game round's service (``GameService.create`` for the
  South player, ``join`` for the North one, both bound to their accounts): watchable, with chat,
  clocks and ratings as any other (a rated tournament's games are rated games).  A game's result
  is written into the tournament in the transaction that ends the game (the round's ``on_finish``
  hook): a finished game is counted exactly once, whichever process ends it.

**Several processes, kill -9.**  Every process looks at the running tournaments every
:attr:`TournamentPolicy.tick` seconds; a pairing is decided in one transaction that holds the
tournament's row lock (PostgreSQL ``FOR UPDATE``, SQLite's single writer), and each paired player
takes a row of ``tournament_slots`` whose primary key (tournament, account, slot) admits one game
per player at a time (slot ``busy``, arenas) or one per round (slot ``r3``, Swiss): two processes
cannot pair a player twice.  The game is then made and joined; a process killed in between leaves
a pairing without a game, whose game the next look (any process) makes after
:attr:`TournamentPolicy.stale` seconds (a compare-and-set ties one game to a pairing: a second one
made by a slow process is aborted); a game made but not joined is joined by the next look.  An
aborted game (no result) counts as a loss for both, except that when a player's first move did
not come (issue 52) the other player's streak is kept.  A game of fewer than
:data:`arena.MIN_PLIES` plies gives nobody points (arena.points).

A Swiss round is computed outside the tournament's lock (issue 51, finding 13: a round took up to
3 s, and on SQLite the database's one writer was held meanwhile): the standings are read, the
round computed, then the lock taken and the standings read again; the round is written only if
nothing changed (a join, a withdrawal, a result), else computed again.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    inspect,
    text,
)
from sqlalchemy.engine import Connection

from jericho_game.web.accounts.accounts import AccountService
from jericho_game.web.common.budget import BudgetPolicy, Who, costs, free
from jericho_game.web.people.people import blocks_table
from jericho_game.web.round import timecontrol
from jericho_game.web.round.gameroom import ClientError
from jericho_game.web.storage.database import GAMES_CHANNEL, GameRecord, Storage, Tx
from jericho_game.web.tournaments import arena, swiss

if TYPE_CHECKING:
    from jericho_game.web.round.rooms import Change, GameService

__all__ = ["TournamentPolicy", "TournamentService", "tournament_metadata", "tournament_routes"]

log = logging.getLogger("jericho_game.web")

KINDS = ("arena", "swiss")

#: The broker version of "tournament T has new games" (its id in the game id's place; -1 the AI
#: queue, -2 a review, -3 presence, -4 chat; 34 for the tournaments' issue): web/tournaments/push.py.
TOURNAMENT_PAIRED = -34

tournament_metadata = MetaData()

tournaments_table = Table(
    "tournaments",
    tournament_metadata,
    Column("id", String(16), primary_key=True),
    Column("kind", String(8), nullable=False),
    Column("name", String(80), nullable=False),
    Column("creator", Integer, nullable=False),
    Column("creator_group", String(64), nullable=True),  # the creator's address group (the listing's caps)
    Column("created_at", Float, nullable=False),
    Column("starts_at", Float, nullable=False),
    Column("minutes", Integer, nullable=True),  # an arena's length
    Column("rounds", Integer, nullable=True),  # a Swiss tournament's rounds
    Column("round", Integer, nullable=False, default=0),  # the Swiss round paired last
    Column("clock", Float, nullable=False),  # minutes per side
    Column("increment", Float, nullable=True),
    Column("rated", Integer, nullable=False, default=0),
    Column("berserk", Integer, nullable=False, default=0),
    Column("featured", Integer, nullable=False, default=0),
    Column("status", String(12), nullable=False),  # scheduled, running, finished
    Column("ended_at", Float, nullable=True),
)
Index("tournaments_status", tournaments_table.c.status, tournaments_table.c.starts_at)

players_table = Table(
    "tournament_players",
    tournament_metadata,
    Column("tournament", String(16), nullable=False),
    Column("account", Integer, nullable=False),
    Column("joined_at", Float, nullable=False),
    Column("rating", Float, nullable=False),  # at joining: the pairing's order among equal scores
    Column("score", Float, nullable=False, default=0),  # arena: points; Swiss: 1 a win, 0.5 a draw
    Column("games", Integer, nullable=False, default=0),
    Column("streak", Integer, nullable=False, default=0),  # wins in a row (arena: fire from 2)
    Column("souths", Integer, nullable=False, default=0),
    Column("norths", Integer, nullable=False, default=0),
    Column("had_bye", Integer, nullable=False, default=0),
    Column("withdrawn", Integer, nullable=False, default=0),
    Column("seen_at", Float, nullable=True),  # unused since issue 52 (pairing asked for an open page)
    PrimaryKeyConstraint("tournament", "account"),
)
# a player's tournaments (the push socket asks whether its account is in one: web/tournaments/push.py)
Index("tournament_players_account", players_table.c.account)

pairings_table = Table(
    "tournament_pairings",
    tournament_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tournament", String(16), nullable=False),
    Column("round", Integer, nullable=False),  # Swiss: the round; arena: 0
    Column("south", Integer, nullable=False),
    Column("north", Integer, nullable=True),  # None: a bye (Swiss)
    Column("game_id", String(32), nullable=True),
    Column("status", String(10), nullable=False),  # creating (no game yet), playing, done
    Column("created_at", Float, nullable=False),
    Column("done_at", Float, nullable=True),
    Column("result", String(8), nullable=True),  # south, north, draw; None: none (aborted)
    Column("south_points", Float, nullable=True),
    Column("north_points", Float, nullable=True),
    Column("berserk_south", Integer, nullable=False, default=0),
    Column("berserk_north", Integer, nullable=False, default=0),
)
Index("tournament_pairings_game", pairings_table.c.game_id)
Index("tournament_pairings_t", pairings_table.c.tournament, pairings_table.c.status)

slots_table = Table(  # one game per player at a time (arena: "busy") or per round (Swiss: "r3")
    "tournament_slots",
    tournament_metadata,
    Column("tournament", String(16), nullable=False),
    Column("account", Integer, nullable=False),
    Column("slot", String(8), nullable=False),
    Column("pairing", Integer, nullable=False),
    PrimaryKeyConstraint("tournament", "account", "slot"),
)


@dataclass(frozen=True)
class TournamentPolicy:
    """The tournaments' limits and timing (docs/web.md, "Limits")."""

    tick: float = 1.0  # seconds between a process's looks at the running tournaments
    stale: float = 15.0  # seconds after which any process makes the game of a pairing left without one
    open_per_account: int = 3  # tournaments not yet finished that one account created
    max_players: int = 200
    max_minutes: int = 360  # an arena's longest duration
    max_rounds: int = 15
    max_start_in: int = 7 * 24 * 60  # minutes: the furthest start
    list_size: int = 100  # tournaments listed (not finished), the most players first
    list_per_creator: int = 3  # of them, at most this many of one creator account...
    list_per_group: int = 6  # ...and of one creator address group (issue 51, finding 4)
    list_featured: int = 10  # featured tournaments listed (their own query)
    pair_tries: int = 3  # a Swiss round computed again when the standings changed meanwhile
    # the push sockets (``/ws/tournaments``, web/tournaments/push.py), per server process: one per
    # open page of a player in a tournament
    push_per_address: int = 16
    push_per_account: int = 8
    push_sockets: int = 5000


def _clean_name(raw: Any) -> str:
    if not isinstance(raw, str):
        raise ClientError("bad_request", "name must be text: the tournament's name")
    name = " ".join(unicodedata.normalize("NFC", raw).split())
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    if not 2 <= len(name) <= 60:
        raise ClientError("bad_request", "a tournament's name has 2 to 60 characters")
    return name


def _int_in(body: dict[str, Any], field: str, lo: int, hi: int, default: int | None = None) -> int:
    v = body.get(field, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ClientError("bad_request", f"{field} must be a whole number from {lo} to {hi}")
    return v


#: A Swiss round for which no pairing exists (swiss.pair_round said so): the tournament ends.
NO_PAIRING = swiss.Pairing([], None)


@dataclass(frozen=True)
class _SwissState:
    """A Swiss tournament's standings as the pairing reads them; ``key`` compares two readings."""

    entrants: list[swiss.Entrant]
    unfinished: int
    blocked: set[frozenset[int]]
    key: tuple[Any, ...]


@dataclass(frozen=True)
class _Plan:
    """What was computed outside the lock: the Swiss standings' key and the round's pairing
    (None: none computed; :data:`NO_PAIRING`: none exists).  An arena's plan is empty."""

    key: tuple[Any, ...] | None
    pairing: swiss.Pairing | None


class TournamentService:
    """Tournaments over one :class:`Storage`, the accounts and the game round's service."""

    def __init__(
        self,
        storage: Storage,
        accounts: AccountService,
        service: GameService,
        *,
        policy: TournamentPolicy | None = None,
        clock: Callable[[], float] | None = None,
        budget: BudgetPolicy | None = None,
    ) -> None:
        self.storage = storage
        self.accounts = accounts
        self.service = service
        self.policy = policy or TournamentPolicy()
        self.now = clock or service.now
        # issue 51: creation and joins ask the one budget policy (web/common/budget.py)
        self.budget = budget if budget is not None else BudgetPolicy(storage, clock=self.now)
        self.after: Callable[[Change], None] = lambda change: None  # the transport's fan-out
        # this process's push sockets hear of a tournament's new games (web/tournaments/push.py sets
        # it; called from the pairing's thread; on PostgreSQL the NOTIFY reaches every process instead)
        self.on_paired: Callable[[str], None] = lambda tid: None
        self.push: Any = None  # the push sockets (web/tournaments/push.py's TournamentPush.install)
        storage.create_tables(tournament_metadata)
        self._migrate()
        # the people's blocks are read by the pairing (web/people/people.py owns the table)
        try:
            blocks_table.create(storage.engine, checkfirst=True)
        except Exception:  # noqa: BLE001 - another process created it at the same moment
            pass
        service.on_finish.append(self.on_finish)

    def _migrate(self) -> None:
        """Add the columns that databases written by older versions lack."""
        have = {c["name"] for c in inspect(self.storage.engine).get_columns("tournaments")}
        if "creator_group" not in have:  # issue 51
            try:
                with self.storage.engine.begin() as conn:
                    conn.exec_driver_sql("ALTER TABLE tournaments ADD COLUMN creator_group VARCHAR(64)")
            except Exception:  # noqa: BLE001 - another process added it at the same moment
                pass
        try:  # issue 52: a database made before the index was declared gets it too
            with self.storage.engine.begin() as conn:
                conn.exec_driver_sql(
                    "CREATE INDEX IF NOT EXISTS tournament_players_account ON tournament_players (account)"
                )
        except Exception:  # noqa: BLE001 - another process created it at the same moment
            pass

    # -- creating, joining -----------------------------------------------------------------------
    def create(self, me: int, body: dict[str, Any], who: Who | None = None) -> dict[str, Any]:
        """A new tournament from the body of ``POST /api/tournaments``; ``who``: the client (its
        address group and account), which the budget ``tournament.create`` counts."""
        who = who if who is not None else Who("?", me)
        fields = {"kind", "name", "clock", "increment", "rated", "berserk", "minutes", "rounds", "starts_in"}
        unknown = set(body) - fields
        if unknown:
            raise ClientError("bad_request", f"unknown field(s): {', '.join(sorted(map(str, unknown)))[:200]}")
        kind = body.get("kind", "arena")
        if kind not in KINDS:
            raise ClientError("bad_request", "kind must be arena or swiss")
        name = _clean_name(body.get("name"))
        p = self.policy
        if body.get("clock") in (None, 0, False):
            raise ClientError("bad_request", "a tournament needs a clock: minutes per side")
        try:
            control = timecontrol.parse(
                {"clock": body.get("clock"), "increment": body.get("increment")}, "online", self.service.min_clock
            )
        except ValueError as exc:
            raise ClientError("bad_request", str(exc)) from None
        rated, berserk = body.get("rated", True), body.get("berserk", False)
        if not isinstance(rated, bool) or not isinstance(berserk, bool):
            raise ClientError("bad_request", "rated and berserk must be true or false")
        if berserk and kind != "arena":
            raise ClientError("bad_request", "berserk is for arenas")
        minutes = _int_in(body, "minutes", 1, p.max_minutes, 60) if kind == "arena" else None
        rounds = _int_in(body, "rounds", 1, p.max_rounds, 5) if kind == "swiss" else None
        starts_in = body.get("starts_in", 0)  # minutes (a fraction too: 0.5 is half a minute)
        if (
            isinstance(starts_in, bool)
            or not isinstance(starts_in, int | float)
            or not 0 <= starts_in <= p.max_start_in
        ):
            raise ClientError("bad_request", f"starts_in must be minutes from now, 0 to {p.max_start_in}")
        now = self.now()
        tid = secrets.token_urlsafe(8).replace("-", "x").replace("_", "y")[:10]
        assert control.clock is not None
        with self.storage.engine.begin() as conn:
            if self.storage.postgres:
                conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": f"jericho-tcreate:{me}"})
            n = conn.execute(
                text("SELECT count(*) FROM tournaments WHERE creator = :a AND status != 'finished'"), {"a": me}
            ).scalar_one()
            if int(n) >= p.open_per_account:
                raise ClientError(
                    "too_many_tournaments",
                    f"you already run {n} tournaments (the most is {p.open_per_account}): wait until one ends",
                    429,
                )
            self.budget.ask(conn, "tournament.create", who)
            conn.execute(
                tournaments_table.insert().values(
                    id=tid,
                    kind=kind,
                    name=name,
                    creator=me,
                    creator_group=who.group[:64],
                    created_at=now,
                    starts_at=now + 60 * starts_in,
                    minutes=minutes,
                    rounds=rounds,
                    round=0,
                    clock=control.clock / 60.0,
                    increment=control.increment,
                    rated=int(rated),
                    berserk=int(berserk),
                    featured=0,
                    status="scheduled",
                )
            )
        return self.show(tid, me)

    def _tournament(self, conn: Connection, tid: Any, lock: bool = False) -> Any:
        if not isinstance(tid, str) or not re.fullmatch(r"[A-Za-z0-9]{1,16}", tid):
            raise ClientError("unknown_tournament", "there is no such tournament", 404)
        sql = "SELECT * FROM tournaments WHERE id = :t" + (" FOR UPDATE" if lock and self.storage.postgres else "")
        row = conn.execute(text(sql), {"t": tid}).first()
        if row is None:
            raise ClientError("unknown_tournament", "there is no such tournament", 404)
        return row

    def join(self, me: int, tid: Any, who: Who | None = None) -> dict[str, Any]:
        """Join a scheduled or running tournament (again, after a withdrawal: no new seat).  A new
        seat asks the budget ``tournament.join`` for ``who`` (per address group into this
        tournament, and per group a day), except the creator's, whose seat is kept for them: others
        fill at most ``max_players - 1`` seats until the creator joins."""
        who = who if who is not None else Who("?", me)
        acc = self.accounts.get(me)
        if acc is None:
            raise ClientError("not_logged_in", "log in first", 401)
        now = self.now()
        with self.storage.engine.begin() as conn:
            t = self._tournament(conn, tid, lock=True)
            if t.status == "finished":
                raise ClientError("tournament_over", "this tournament is over", 409)
            if t.kind == "swiss" and t.status == "running" and t.round >= (t.rounds or 0):
                raise ClientError("tournament_over", "this tournament is playing its last round", 409)
            had = conn.execute(
                text("SELECT withdrawn FROM tournament_players WHERE tournament = :t AND account = :a"),
                {"t": t.id, "a": me},
            ).first()
            if had is not None:
                conn.execute(
                    text(
                        "UPDATE tournament_players SET withdrawn = 0, seen_at = :n "
                        "WHERE tournament = :t AND account = :a"
                    ),
                    {"t": t.id, "a": me, "n": now},
                )
            else:
                n, creator_in = conn.execute(
                    text(
                        "SELECT count(*), COALESCE(SUM(CASE WHEN account = :c THEN 1 ELSE 0 END), 0) "
                        "FROM tournament_players WHERE tournament = :t"
                    ),
                    {"t": t.id, "c": int(t.creator)},
                ).one()
                creator = me == int(t.creator)
                seats = self.policy.max_players - (0 if creator or int(creator_in) else 1)
                if int(n) >= seats:
                    kept = "" if seats == self.policy.max_players else " (one more seat is kept for its creator)"
                    raise ClientError("tournament_full", f"this tournament is full ({n} players{kept})", 409)
                if not creator:  # the creator paid for the tournament: their seat asks nothing more
                    self.budget.ask(conn, "tournament.join", who, recipient=t.id)
                conn.execute(
                    players_table.insert().values(
                        tournament=t.id,
                        account=me,
                        joined_at=now,
                        rating=acc.rating,
                        score=0,
                        games=0,
                        streak=0,
                        souths=0,
                        norths=0,
                        had_bye=0,
                        withdrawn=0,
                        seen_at=now,
                    )
                )
        return self.show(str(tid), me)

    def withdraw(self, me: int, tid: Any) -> dict[str, Any]:
        """Pause in an arena, leave the next rounds of a Swiss tournament."""
        with self.storage.engine.begin() as conn:
            t = self._tournament(conn, tid)
            done = conn.execute(
                text("UPDATE tournament_players SET withdrawn = 1 WHERE tournament = :t AND account = :a"),
                {"t": t.id, "a": me},
            ).rowcount
            if not done:
                raise ClientError("not_joined", "you have not joined this tournament", 409)
        return self.show(str(tid), me)

    def feature(self, me: int, tid: Any, on: Any) -> dict[str, Any]:
        """An admin features a tournament on the home page (or stops)."""
        acc = self.accounts.get(me)
        if acc is None or not acc.admin:
            raise ClientError("not_admin", "only an admin may feature a tournament", 403)
        if not isinstance(on, bool):
            raise ClientError("bad_request", "'featured' must be true or false")
        with self.storage.engine.begin() as conn:
            t = self._tournament(conn, tid)
            conn.execute(text("UPDATE tournaments SET featured = :f WHERE id = :t"), {"f": int(on), "t": t.id})
        return self.show(str(tid), me)

    # -- reading --------------------------------------------------------------------------------
    def _summary(self, t: Any, players: int) -> dict[str, Any]:
        now = self.now()
        ends_at = t.starts_at + 60 * t.minutes if t.kind == "arena" else None
        return {
            "id": t.id,
            "kind": t.kind,
            "name": t.name,
            "creator": self.accounts.name_of(int(t.creator)),
            "status": t.status,
            "starts_at": t.starts_at,
            "starts_in": max(0.0, round(t.starts_at - now, 1)),
            "ends_at": ends_at,
            # issue 52: the page counts down from these (seconds from now: the browser's clock may be off)
            "ends_in": max(0.0, round(ends_at - now, 1)) if ends_at is not None and t.status != "finished" else None,
            "minutes": t.minutes,
            "rounds": t.rounds,
            "round": t.round,
            "clock": t.clock,
            "increment": t.increment,
            "rated": bool(t.rated),
            "berserk": bool(t.berserk),
            "featured": bool(t.featured),
            "players": players,
        }

    def listing(self) -> dict[str, Any]:
        """The tournaments: ``featured`` (not finished, their own query), ``running`` and
        ``scheduled`` (featured first, then the most players, then the earliest start) and
        ``finished`` (the latest); at most :attr:`TournamentPolicy.list_per_creator` of one
        creator and :attr:`TournamentPolicy.list_per_group` of one creator address group among
        those listed (a featured one always is)."""
        p = self.policy
        count = "(SELECT count(*) FROM tournament_players p WHERE p.tournament = t.id)"
        with self.storage.reader.connect() as conn:
            featured = conn.execute(
                text(
                    f"SELECT t.*, {count} AS n FROM tournaments t "
                    "WHERE t.featured = 1 AND t.status != 'finished' ORDER BY t.starts_at, t.id LIMIT :lim"
                ),
                {"lim": p.list_featured},
            ).all()
            rows = self._capped(conn, "t.status != 'finished'", "n DESC, starts_at, id", p.list_size, count)
            old = self._capped(conn, "t.status = 'finished'", "ended_at DESC, id", 20, count)
        out: dict[str, list[dict[str, Any]]] = {"featured": [], "running": [], "scheduled": [], "finished": []}
        out["featured"] = [self._summary(r, int(r.n)) for r in featured]
        for r in rows:
            out[r.status].append(self._summary(r, int(r.n)))
        out["finished"] = [self._summary(r, int(r.n)) for r in old]
        return out

    def _capped(self, conn: Connection, where: str, order: str, limit: int, count: str) -> list[Any]:
        """Tournaments ``where``, in ``order`` (featured first), at most ``limit``, with at most
        :attr:`TournamentPolicy.list_per_creator` of one creator and
        :attr:`TournamentPolicy.list_per_group` of one creator address group (ranked in ``order``
        within each; a tournament made before the group was kept counts as its creator's own)."""
        group = "COALESCE(x.creator_group, CAST(x.creator AS VARCHAR(16)))"
        sql = (
            "SELECT * FROM ("
            f"SELECT x.*, ROW_NUMBER() OVER (PARTITION BY x.creator ORDER BY {order}) AS nth_creator, "
            f"ROW_NUMBER() OVER (PARTITION BY {group} ORDER BY {order}) AS nth_group "
            f"FROM (SELECT t.*, {count} AS n FROM tournaments t WHERE {where}) x"
            ") y WHERE (nth_creator <= :pc AND nth_group <= :pg) OR featured = 1 "
            f"ORDER BY featured DESC, {order} LIMIT :lim"
        )
        p = self.policy
        return list(conn.execute(text(sql), {"pc": p.list_per_creator, "pg": p.list_per_group, "lim": limit}).all())

    def show(self, tid: str, me: int | None = None) -> dict[str, Any]:
        """A tournament's page: its summary, ``standings`` (ranked, with tie-breaks for Swiss),
        ``games`` (the latest pairings) and ``me`` (the viewer's place and game).  A read only: since
        issue 52 a player is paired whether or not this page is open."""
        with self.storage.reader.connect() as conn:
            t = self._tournament(conn, tid)
            players = conn.execute(  # the rating as it is now (issue 52: not the one at joining)
                text(
                    "SELECT p.*, a.username, a.rating AS live_rating FROM tournament_players p "
                    "JOIN accounts a ON a.id = p.account WHERE p.tournament = :t"
                ),
                {"t": tid},
            ).all()
            pairings = conn.execute(
                text("SELECT * FROM tournament_pairings WHERE tournament = :t AND status != 'void' ORDER BY id DESC"),
                {"t": tid},
            ).all()
        names = {int(p.account): p.username for p in players}
        scores = {int(p.account): float(p.score) for p in players}
        breaks: dict[int, tuple[float, float]] = {}
        if t.kind == "swiss":
            games = []
            for g in pairings:
                if g.status != "done" or g.north is None:
                    continue
                games.append((int(g.south), int(g.north), float(g.south_points or 0)))
                games.append((int(g.north), int(g.south), float(g.north_points or 0)))
            breaks = swiss.tie_breaks(scores, games)
        fire = t.kind == "arena"
        sheets = self._sheets(t.kind, list(pairings))
        ranked = sorted(
            players,
            key=lambda p: (
                -float(p.score),
                *(-x for x in breaks.get(int(p.account), (0.0, 0.0))),
                -float(p.live_rating),
                p.username,
            ),
        )
        standings = []
        for rank, p in enumerate(ranked, 1):
            row: dict[str, Any] = {
                "rank": rank,
                "username": p.username,
                "score": float(p.score),
                "games": int(p.games),
                "rating": round(float(p.live_rating)),
                "withdrawn": bool(p.withdrawn),
                "streak": int(p.streak),
                "sheet": sheets.get(int(p.account), []),
            }
            if fire:
                row["fire"] = int(p.streak) >= 2
            if t.kind == "swiss":
                row["buchholz"], row["sonneborn_berger"] = breaks.get(int(p.account), (0.0, 0.0))
            standings.append(row)
        games_out = [
            {
                "game": g.game_id,
                "round": g.round,
                "south": names.get(int(g.south)),
                "north": names.get(int(g.north)) if g.north is not None else None,
                "status": g.status,
                "result": g.result,
                "south_points": g.south_points,
                "north_points": g.north_points,
                "berserk": {"south": bool(g.berserk_south), "north": bool(g.berserk_north)},
            }
            for g in pairings[:100]
        ]
        mine: dict[str, Any] | None = None
        if me is not None and me in names:
            current = next(
                (g for g in pairings if g.status in ("creating", "playing") and me in (g.south, g.north)), None
            )
            p = next(x for x in players if int(x.account) == me)
            mine = {
                "joined": True,
                "withdrawn": bool(p.withdrawn),
                "game": current.game_id if current is not None else None,
                "side": ("south" if current.south == me else "north") if current is not None else None,
            }
        elif me is not None:
            mine = {"joined": False}
        summary = self._summary(t, len(players))
        podium = []
        if t.status == "finished":  # issue 52: the first three, with their games and wins
            for row in standings[:3]:
                won = sum(1 for x in row["sheet"] if x["result"] == "win")
                podium.append({k: row[k] for k in ("rank", "username", "score", "games", "rating")} | {"wins": won})
        return {
            **summary,
            "podium": podium,
            "standings": standings,
            "games": games_out,
            "me": mine,
            "tie_breaks": ["buchholz", "sonneborn_berger"] if t.kind == "swiss" else [],
        }

    @staticmethod
    def _sheets(kind: str, pairings: list[Any]) -> dict[int, list[dict[str, Any]]]:
        """Each player's finished games in order (lichess's score sheet): the ``points`` the game
        gave, its ``result`` for them (win, draw, loss; None: aborted or a bye), ``berserk``, and
        ``double`` (an arena game counted double: the player was on fire)."""
        base = {"win": 2.0, "draw": 1.0}
        out: dict[int, list[dict[str, Any]]] = {}
        for g in sorted(pairings, key=lambda g: int(g.id)):
            if g.status != "done":
                continue
            for side in ("south", "north"):
                account = getattr(g, side)
                if account is None:
                    continue
                pts = float(getattr(g, f"{side}_points") or 0)
                if g.north is None:
                    result = None  # a bye
                elif g.result is None:
                    result = None
                else:
                    result = "draw" if g.result == "draw" else "win" if g.result == side else "loss"
                double = kind == "arena" and result in base and pts >= 2 * base[result]
                out.setdefault(int(account), []).append(
                    {
                        "points": int(pts) if pts == int(pts) else pts,
                        "result": result,
                        "berserk": bool(getattr(g, f"berserk_{side}")),
                        "double": double,
                    }
                )
        return out

    # -- the push sockets (web/tournaments/push.py) --------------------------------------------------
    def fresh_games(self, tid: str | None, account: int | None) -> list[dict[str, Any]]:
        """The games paired less than :data:`timecontrol.FIRST_MOVE` ago, joined and not over, of
        tournament ``tid`` or of ``account``'s tournaments: ``{"type": "game", "game", "tournament",
        "name", "south", "north"}`` each (the accounts say whose pages it goes to)."""
        where, args = "p.tournament = :t", {"t": tid, "a": account, "since": self.now() - timecontrol.FIRST_MOVE}
        if tid is None:
            where = (
                "p.tournament IN (SELECT tournament FROM tournament_players WHERE account = :a) "
                "AND (p.south = :a OR p.north = :a)"
            )
        with self.storage.reader.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT p.tournament, p.game_id, p.south, p.north, t.name FROM tournament_pairings p "
                    "JOIN tournaments t ON t.id = p.tournament JOIN games g ON g.id = p.game_id "
                    f"WHERE {where} AND p.status = 'playing' AND p.created_at > :since "
                    "AND g.joined = 1 AND g.result IS NULL AND g.reason IS NULL ORDER BY p.id"
                ),
                args,
            ).all()
        return [
            {
                "type": "game",
                "game": r.game_id,
                "tournament": r.tournament,
                "name": r.name,
                "south": r.south,
                "north": r.north,
            }
            for r in rows
        ]

    def push_start(self, account: int) -> tuple[bool, list[dict[str, Any]]]:
        """Whether ``account`` is in a tournament not finished (and not withdrawn from), and its game
        paired just before (a page opened between two pages), for a push socket that opens."""
        with self.storage.reader.connect() as conn:
            inside = conn.execute(
                text(
                    "SELECT 1 FROM tournament_players p JOIN tournaments t ON t.id = p.tournament "
                    "WHERE p.account = :a AND p.withdrawn = 0 AND t.status != 'finished' LIMIT 1"
                ),
                {"a": account},
            ).first()
        if inside is None:
            return False, []
        games = self.fresh_games(None, account)
        for g in games:
            del g["south"], g["north"]
        return True, games

    # -- results (in the transaction that ends the game) -------------------------------------------
    def on_finish(self, tx: Tx, rec: GameRecord) -> None:
        """The round's hook: a tournament game ended (``rec.result`` set): its points, in its transaction."""
        conn = tx.conn
        g = conn.execute(
            text("SELECT * FROM tournament_pairings WHERE game_id = :g AND status = 'playing'"), {"g": rec.id}
        ).first()
        if g is None:
            return
        kind = conn.execute(text("SELECT kind FROM tournaments WHERE id = :t"), {"t": g.tournament}).scalar_one()
        self._record(conn, g, str(kind), rec.result, len(rec.moves))

    def _record(
        self, conn: Connection, g: Any, kind: str, result: str | None, plies: int, no_start: str | None = None
    ) -> None:
        """A pairing's game ended with ``result`` after ``plies``: each side's points, streak, games
        and sides played; the pairing done and its players free.  A game of fewer than
        :data:`arena.MIN_PLIES` plies gives nobody points (its winner's streak stays as it was), but
        is still a game played and frees both players.  ``no_start``: the side whose first move did
        not come (issue 52, the game aborted): nobody gets points, and the other side's streak stays
        as it was (they lost nothing at the board)."""
        got: dict[str, float] = {}
        if no_start in ("south", "north"):  # lichess pauses a player who does not start their game
            conn.execute(
                text("UPDATE tournament_players SET withdrawn = 1 WHERE tournament = :t AND account = :a"),
                {"t": g.tournament, "a": int(getattr(g, no_start))},
            )
        for side in ("south", "north"):
            account = int(getattr(g, side))
            me = conn.execute(
                text("SELECT streak FROM tournament_players WHERE tournament = :t AND account = :a"),
                {"t": g.tournament, "a": account},
            ).first()
            streak = int(me.streak) if me is not None else 0
            outcome = "draw" if result == "draw" else "win" if result == side else "loss"
            if no_start is not None:  # no game for the one who was there: a win too short to count
                outcome, plies = ("loss" if side == no_start else "win"), 0
            pts: float
            if kind == "arena":
                pts, after = arena.points(outcome, streak, bool(getattr(g, f"berserk_{side}")), plies)
            elif plies < arena.MIN_PLIES:  # too short to count (issue 51, finding 11), as in an arena
                pts, after = 0.0, (streak if outcome == "win" else 0)
            else:
                pts, after = {"win": 1.0, "draw": 0.5, "loss": 0.0}[outcome], (streak + 1 if outcome == "win" else 0)
            got[side] = float(pts)
            conn.execute(
                text(
                    f"UPDATE tournament_players SET score = score + :p, games = games + 1, streak = :s, "
                    f"{side}s = {side}s + 1 WHERE tournament = :t AND account = :a"
                ),
                {"p": pts, "s": after, "t": g.tournament, "a": account},
            )
        conn.execute(
            text(
                "UPDATE tournament_pairings SET status = 'done', done_at = :n, result = :r, south_points = :sp, "
                "north_points = :np WHERE id = :i"
            ),
            {"n": self.now(), "r": result, "sp": got["south"], "np": got["north"], "i": g.id},
        )
        conn.execute(text("DELETE FROM tournament_slots WHERE pairing = :i AND slot = 'busy'"), {"i": g.id})

    # -- berserk ---------------------------------------------------------------------------------
    def berserk(self, me: int, tid: Any, game_id: Any) -> Change:
        """Halve one's own clock before one's first move (arenas that allow it): +1 point for a win."""
        with self.storage.reader.connect() as conn:
            t = self._tournament(conn, tid)
            if not t.berserk:
                raise ClientError("no_berserk", "this tournament has no berserk", 409)
            g = conn.execute(
                text("SELECT * FROM tournament_pairings WHERE tournament = :t AND game_id = :g AND status = 'playing'"),
                {"t": t.id, "g": game_id if isinstance(game_id, str) else ""},
            ).first()
        if g is None or me not in (g.south, g.north):
            raise ClientError("not_your_game", "this is not your game in this tournament", 403)
        side = "south" if g.south == me else "north"
        from jericho_game.web.round.gameroom import Change as _Change

        def decide(tx: Tx, room: Any) -> Any:
            rec = room.rec
            mine = [i for i in range(len(rec.moves)) if (i % 2 == 0) == (side == "south")]
            if mine or rec.result is not None or rec.reason is not None:
                raise ClientError("too_late", "berserk is only before your first move", 409)
            done = tx.conn.execute(
                text(f"UPDATE tournament_pairings SET berserk_{side} = 1 WHERE id = :i AND berserk_{side} = 0"),
                {"i": g.id},
            ).rowcount
            if not done:
                return _Change(room)
            new = rec.copy()
            self.service._charge(new, room.game)
            setattr(new, f"{side}_time", float(getattr(new, f"{side}_time") or 0.0) / 2)
            return _Change(self.service.commits.commit(tx, room, new, room.game))

        change: Change = self.service.commits.write(str(game_id), decide)
        return change

    # -- pairing (every process, every tick) ------------------------------------------------------------
    def tick(self) -> list[Change]:
        """Start, pair, end the tournaments that are due; the joins' changes (to fan out)."""
        now = self.now()
        with self.storage.reader.connect() as conn:
            due = conn.execute(
                text(
                    "SELECT id FROM tournaments WHERE (status = 'scheduled' AND starts_at <= :n) OR status = 'running'"
                ),
                {"n": now},
            ).all()
        changes: list[Change] = []
        for (tid,) in due:
            try:
                changes += self.tick_one(str(tid))
            except Exception:  # noqa: BLE001 - the next tick (here or elsewhere) tries again
                log.exception("could not run tournament %s", tid)
        return changes

    def tick_one(self, tid: str) -> list[Change]:
        """One look at one tournament: recover, then pair what is due (in one locked transaction),
        then make and join the games."""
        changes = self._recover(tid)
        made = self._pair(tid)
        for pid, south, north, clock, increment, rated in made:
            change = self._make_game(tid, pid, south, north, clock, increment, rated)
            if change is not None:
                changes.append(change)
        if changes:  # the players' open pages go to their games (web/tournaments/push.py)
            self.announce(tid)
        return changes

    def announce(self, tid: str) -> None:
        """Tell every process's push sockets that ``tid`` has new games (they read which from the
        database): a ``NOTIFY`` on PostgreSQL, this process's hook on SQLite (one process)."""
        if self.storage.postgres:
            with self.storage.engine.begin() as conn:
                conn.execute(text("SELECT pg_notify(:c, :p)"), {"c": GAMES_CHANNEL, "p": f"{tid} {TOURNAMENT_PAIRED}"})
        else:
            self.on_paired(tid)

    def _pair(self, tid: str) -> list[tuple[int, int, int, float, float | None, bool]]:
        """Pair what is due in one tournament; the games to make ``(pairing, south, north, clock,
        increment, rated)``.  A Swiss round is computed first, outside the lock, from standings read
        then; it is written only if the standings under the lock are the same (else computed again,
        at most :attr:`TournamentPolicy.pair_tries` times: the next look tries again)."""
        for _ in range(self.policy.pair_tries):
            plan = self._plan(tid)
            if plan is None:
                return []
            made = self._pair_locked(tid, plan)
            if made is not None:
                return made
            log.info("tournament %s changed while its round was computed: computing it again", tid)
        return []

    def _plan(self, tid: str) -> _Plan | None:
        """What the locked pairing will need, computed without any lock: for a Swiss tournament
        due a round, its standings and the round's pairing (None: nothing to do now)."""
        now = self.now()
        with self.storage.reader.connect() as conn:
            t = self._tournament(conn, tid)
            if t.status == "finished" or t.starts_at > now:
                return None
            if t.kind == "arena":
                return _Plan(None, None)
            state = self._swiss_state(conn, t)
        if state.unfinished and t.status == "running":
            return None  # the round is being played
        if state.unfinished or t.round >= (t.rounds or 0) or len(state.entrants) < 2:
            return _Plan(state.key, None)  # the lock decides (start, finish)
        try:
            return _Plan(state.key, swiss.pair_round(state.entrants, int(t.round) + 1, state.blocked))
        except ValueError:
            return _Plan(state.key, NO_PAIRING)

    def _swiss_state(self, conn: Connection, t: Any) -> _SwissState:
        """A Swiss tournament's standings as its pairing sees them (and a key to compare them by)."""
        tid = str(t.id)
        players = conn.execute(
            text("SELECT * FROM tournament_players WHERE tournament = :t AND withdrawn = 0"), {"t": tid}
        ).all()
        unfinished = int(
            conn.execute(
                text(
                    "SELECT count(*) FROM tournament_pairings "
                    "WHERE tournament = :t AND status IN ('creating', 'playing')"
                ),
                {"t": tid},
            ).scalar_one()
        )
        entrants = self._entrants(conn, tid, list(players))
        blocked = self._blocked(conn, tid)
        key = (
            int(t.round),
            unfinished,
            tuple(
                (e.account, e.score, e.rating, e.had_bye, tuple(sorted(e.opponents)), tuple(e.colours))
                for e in sorted(entrants, key=lambda e: e.account)
            ),
            tuple(sorted(tuple(sorted(b)) for b in blocked)),
        )
        return _SwissState(entrants, unfinished, blocked, key)

    @staticmethod
    def _blocked(conn: Connection, tid: str) -> set[frozenset[int]]:
        """The pairs of a tournament's players where one blocked the other (the people's blocks)."""
        rows = conn.execute(
            text(
                "SELECT b.blocker, b.blocked FROM blocks b "
                "JOIN tournament_players p ON p.tournament = :t AND p.account = b.blocker "
                "JOIN tournament_players q ON q.tournament = :t AND q.account = b.blocked"
            ),
            {"t": tid},
        ).all()
        return {frozenset((int(a), int(b))) for a, b in rows}

    def _pair_locked(self, tid: str, plan: _Plan) -> list[tuple[int, int, int, float, float | None, bool]] | None:
        """The pairing decided and written in one transaction holding the tournament's lock; None
        when a Swiss tournament's standings are not those ``plan`` was computed from."""
        now = self.now()
        made: list[tuple[int, int, int, float, float | None, bool]] = []
        with self.storage.engine.begin() as conn:
            t = self._tournament(conn, tid, lock=True)
            if t.status == "finished" or t.starts_at > now:
                return []
            if t.status == "scheduled":
                conn.execute(text("UPDATE tournaments SET status = 'running' WHERE id = :t"), {"t": tid})
            pairs: list[tuple[int, int | None]] = []
            round_no = 0
            if t.kind == "arena":
                players = conn.execute(text("SELECT * FROM tournament_players WHERE tournament = :t"), {"t": tid}).all()
                unfinished = conn.execute(
                    text(
                        "SELECT count(*) FROM tournament_pairings "
                        "WHERE tournament = :t AND status IN ('creating', 'playing')"
                    ),
                    {"t": tid},
                ).scalar_one()
                if now >= t.starts_at + 60 * (t.minutes or 0):
                    if not unfinished:
                        self._finish(conn, tid, now)
                    return []
                busy = {
                    int(r[0])
                    for r in conn.execute(
                        text("SELECT account FROM tournament_slots WHERE tournament = :t AND slot = 'busy'"), {"t": tid}
                    ).all()
                }
                last = self._last_opponents(conn, tid)
                free = [
                    arena.Free(
                        int(x.account),
                        int(x.score),
                        float(x.rating),
                        int(x.souths),
                        int(x.norths),
                        last.get(int(x.account)),
                    )
                    for x in players
                    if not x.withdrawn and int(x.account) not in busy
                ]
                if len(free) >= 2:
                    pairs = [(s, n) for s, n in arena.pair_free(free, self._blocked(conn, tid))]
            else:
                state = self._swiss_state(conn, t)
                if state.key != plan.key:
                    return None  # a join, a withdrawal or a result meanwhile: compute again
                if state.unfinished:
                    return []
                if t.round >= (t.rounds or 0):
                    self._finish(conn, tid, now)
                    return []
                if len(state.entrants) < 2:
                    if t.round > 0 or now > t.starts_at + 3600:
                        self._finish(conn, tid, now)
                    return []
                pairing = plan.pairing
                if pairing is None:  # computed before the tournament was due a round: compute again
                    return None
                if pairing is NO_PAIRING:  # none exists (swiss.pair_round): it ends early
                    self._finish(conn, tid, now)
                    return []
                round_no = int(t.round) + 1
                pairs = [(s, n) for s, n in pairing.games]
                if pairing.bye is not None:
                    pairs.append((pairing.bye, None))
                conn.execute(
                    text("UPDATE tournaments SET round = :r WHERE id = :t AND round = :was"),
                    {"r": round_no, "t": tid, "was": t.round},
                )
            slot = "busy" if t.kind == "arena" else f"r{round_no}"
            # the time of the pairing, read after the free players were: a game whose end freed a
            # player committed before that read, so its end time is earlier than this one
            now = self.now()
            for south, north in pairs:
                bye = north is None
                key = conn.execute(
                    pairings_table.insert().values(
                        tournament=tid,
                        round=round_no,
                        south=south,
                        north=north,
                        game_id=None,
                        status="done" if bye else "creating",
                        created_at=now,
                        done_at=now if bye else None,
                        south_points=1.0 if bye else None,
                        north_points=None,
                        berserk_south=0,
                        berserk_north=0,
                    )
                ).inserted_primary_key
                assert key is not None
                pid = int(key[0])
                for account in (south, north):
                    if account is not None:  # the primary key refuses a second game for a player
                        conn.execute(
                            slots_table.insert().values(tournament=tid, account=account, slot=slot, pairing=pid)
                        )
                if bye:
                    conn.execute(
                        text(
                            "UPDATE tournament_players SET score = score + 1, had_bye = 1 "
                            "WHERE tournament = :t AND account = :a"
                        ),
                        {"t": tid, "a": south},
                    )
                else:
                    assert north is not None
                    made.append((pid, south, north, float(t.clock), t.increment, bool(t.rated)))
        return made

    @staticmethod
    def _last_opponents(conn: Connection, tid: str) -> dict[int, int]:
        last: dict[int, int] = {}
        rows = conn.execute(
            text(
                "SELECT south, north FROM tournament_pairings WHERE tournament = :t AND status != 'void' "
                "AND north IS NOT NULL ORDER BY id"
            ),
            {"t": tid},
        ).all()
        for s, n in rows:
            last[int(s)], last[int(n)] = int(n), int(s)
        return last

    @staticmethod
    def _entrants(conn: Connection, tid: str, players: list[Any]) -> list[swiss.Entrant]:
        rows = conn.execute(
            text(
                "SELECT south, north FROM tournament_pairings "
                "WHERE tournament = :t AND status = 'done' ORDER BY round, id"
            ),
            {"t": tid},
        ).all()
        out = {
            int(p.account): swiss.Entrant(int(p.account), float(p.score), float(p.rating), had_bye=bool(p.had_bye))
            for p in players
        }
        for s, n in rows:
            if int(s) in out:
                out[int(s)].colours.append("S" if n is not None else "-")
                if n is not None:
                    out[int(s)].opponents.add(int(n))
            if n is not None and int(n) in out:
                out[int(n)].colours.append("N")
                out[int(n)].opponents.add(int(s))
        return list(out.values())

    def _finish(self, conn: Connection, tid: str, now: float) -> None:
        conn.execute(
            text("UPDATE tournaments SET status = 'finished', ended_at = :n, featured = 0 WHERE id = :t"),
            {"n": now, "t": tid},
        )

    def _make_game(
        self, tid: str, pid: int, south: int, north: int, clock: float, increment: float | None, rated: bool
    ) -> Change | None:
        """Make a pairing's game through the round's service, tie it to the pairing, name its
        tournament in it (the game page's link back, issue 52), seat North."""
        from jericho_game.web.round.endings import abort

        spec: dict[str, Any] = {"mode": "online", "side": "south", "clock": clock, "rated": rated}
        if increment:
            spec["increment"] = increment
        room, reply = self.service.create(spec, f"tournament:{pid}", south)
        with self.storage.engine.begin() as conn:
            won = conn.execute(
                text(
                    "UPDATE tournament_pairings SET game_id = :g, status = 'playing' "
                    "WHERE id = :i AND status = 'creating'"
                ),
                {"g": room.rec.id, "i": pid},
            ).rowcount
        if not won:  # another process made this pairing's game meanwhile: this one never starts
            abort(self.service, room.rec.id, frozenset({"south"}))
            return None
        self._tag(tid, room.rec.id)
        change, _ = self.service.join(room.rec.id, reply["invite"], north)
        return change

    def _tag(self, tid: str, game_id: str) -> None:
        """Name the tournament in its game's record (``meta["tournament"]``, in the game's state:
        its id, name, kind and whether it allows berserk, which the game page offers): a versioned write
        of the round's pipeline, before anyone is at the board."""
        from jericho_game.web.round.gameroom import Change as _Change

        with self.storage.reader.connect() as conn:
            name, berserk, kind = conn.execute(
                text("SELECT name, berserk, kind FROM tournaments WHERE id = :t"), {"t": tid}
            ).one()

        def decide(tx: Tx, room: Any) -> Any:
            new = room.rec.copy()
            new.meta["tournament"] = {"id": tid, "name": str(name), "berserk": bool(berserk), "kind": str(kind)}
            return _Change(self.service.commits.commit(tx, room, new, room.game))

        self.service.commits.write(game_id, decide)

    def _recover(self, tid: str) -> list[Change]:
        """Make the games of the pairings a killed process left without one (the players stay paired:
        a Swiss round keeps its pairing); seat the North players of games made but not joined; end
        the pairings of games that ended with no result (aborted)."""
        now = self.now()
        changes: list[Change] = []
        with self.storage.reader.connect() as conn:
            t = self._tournament(conn, tid)
            stale = conn.execute(
                text(
                    "SELECT id, south, north FROM tournament_pairings WHERE tournament = :t AND status = 'creating' "
                    "AND created_at < :old"
                ),
                {"t": tid, "old": now - self.policy.stale},
            ).all()
        for pid, south, north in stale:  # the compare-and-set in _make_game lets one process make it
            change = self._make_game(tid, int(pid), int(south), int(north), float(t.clock), t.increment, bool(t.rated))
            if change is not None:
                changes.append(change)
        with self.storage.reader.connect() as conn:
            playing = conn.execute(
                text(
                    "SELECT p.id, p.game_id, p.north, g.joined, g.result, g.reason FROM tournament_pairings p "
                    "JOIN games g ON g.id = p.game_id WHERE p.tournament = :t AND p.status = 'playing'"
                ),
                {"t": tid},
            ).all()
        for pid, game_id, north, joined, result, reason in playing:
            if not joined and reason is None:
                rec = self.storage.load(game_id)
                if rec is not None and rec.invite and not rec.joined and float(rec.created_at) < now - 2:
                    try:
                        change, _ = self.service.join(game_id, rec.invite, int(north))
                        changes.append(change)
                    except ClientError:
                        pass  # joined meanwhile
            elif result is None and reason is not None:  # aborted: a loss for both, or a no-show's
                rec = self.storage.load(game_id)
                no_start = rec.meta.get("no_start") if rec is not None else None
                with self.storage.engine.begin() as conn:
                    g = conn.execute(
                        text(
                            "SELECT * FROM tournament_pairings WHERE id = :i AND status = 'playing'"
                            + (" FOR UPDATE" if self.storage.postgres else "")
                        ),
                        {"i": pid},
                    ).first()
                    if g is not None:
                        kind = conn.execute(text("SELECT kind FROM tournaments WHERE id = :t"), {"t": tid}).scalar_one()
                        self._record(conn, g, kind, None, 0, no_start)
        return changes

    async def run(self) -> None:
        """Every process: look at the tournaments every :attr:`TournamentPolicy.tick` seconds."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.policy.tick)
            try:
                changes = await loop.run_in_executor(None, self.tick)
            except Exception:  # noqa: BLE001 - the database is away: the next tick tries again
                log.exception("could not look at the tournaments")
                continue
            for change in changes:
                self.after(change)


def tournament_routes(tournaments: TournamentService) -> list[Any]:
    """``/api/tournaments``: the list, creation, one tournament, join, withdraw, feature, berserk."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket

    from jericho_game.web.common import jsonin

    accounts = tournaments.accounts

    async def blocking(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    async def me_for_change(request: Request) -> int:
        sess = await blocking(accounts.account_for_change, request)
        if sess is None:
            raise ClientError("not_logged_in", "log in first: tournaments are played by accounts", 401)
        return int(sess.account.id)

    async def me_reading(request: Request) -> int | None:
        sess = await blocking(accounts.session_of, request)
        return None if sess is None else int(sess.account.id)

    def answer(data: Any, status: int = 200) -> Response:
        return JSONResponse(data, status_code=status, headers={"Cache-Control": "no-store"})

    @free("a bounded read: at most 100 open, 20 finished and 10 featured tournaments", methods=("GET", "HEAD"))
    @costs("tournament.create", methods=("POST",))
    async def listing(request: Request) -> Response:
        if request.method in ("GET", "HEAD"):
            return answer(await blocking(tournaments.listing))
        me = await me_for_change(request)
        body = await jsonin.read_object(request, 4096, ClientError)
        return answer(await blocking(tournaments.create, me, body, Who.of(request, me)), 201)

    @free("one tournament's page (its latest 100 games and its standings)", methods=("GET", "HEAD"))
    async def one(request: Request) -> Response:
        me = await me_reading(request)
        return answer(await blocking(tournaments.show, request.path_params["id"], me))

    @costs("tournament.join", methods=("POST",))
    async def join(request: Request) -> Response:
        me = await me_for_change(request)
        await jsonin.read_object(request, 4096, ClientError)
        return answer(await blocking(tournaments.join, me, request.path_params["id"], Who.of(request, me)))

    @free("the player's own row marked withdrawn: nothing added", methods=("POST",))
    async def withdraw(request: Request) -> Response:
        me = await me_for_change(request)
        await jsonin.read_object(request, 4096, ClientError)
        return answer(await blocking(tournaments.withdraw, me, request.path_params["id"]))

    @free("admins only: one flag of one tournament", methods=("POST",))
    async def feature(request: Request) -> Response:
        me = await me_for_change(request)
        body = await jsonin.read_object(request, 4096, ClientError)
        return answer(await blocking(tournaments.feature, me, request.path_params["id"], body.get("featured")))

    @free("the player's own clock halved, once per game, before their first move", methods=("POST",))
    async def berserk(request: Request) -> Response:
        me = await me_for_change(request)
        body = await jsonin.read_object(request, 4096, ClientError)
        change = await blocking(tournaments.berserk, me, request.path_params["id"], body.get("game"))
        if change.committed:
            tournaments.after(change)
        return answer({"ok": True})

    @free("a push socket, held under its own per-process caps (fairshare.SocketCaps: TournamentPolicy.push_*)")
    async def push(websocket: WebSocket) -> None:
        assert tournaments.push is not None, "create_app installs the push sockets (TournamentPush.install)"
        await tournaments.push.serve(websocket)

    @free("an unknown action: refused, nothing written", methods=("POST",))
    async def unknown(request: Request) -> Response:
        raise ClientError("not_found", "a tournament can be joined, withdrawn from, featured or berserked", 404)

    return [
        WebSocketRoute("/ws/tournaments", push),  # before the games' /ws/{id}
        Route("/api/tournaments", listing, methods=["GET", "POST"]),
        Route("/api/tournaments/{id}", one),
        Route("/api/tournaments/{id}/join", join, methods=["POST"]),
        Route("/api/tournaments/{id}/withdraw", withdraw, methods=["POST"]),
        Route("/api/tournaments/{id}/feature", feature, methods=["POST"]),
        Route("/api/tournaments/{id}/berserk", berserk, methods=["POST"]),
        Route("/api/tournaments/{id}/{what}", unknown, methods=["POST"]),
    ]
