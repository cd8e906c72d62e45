"""People (issue 34, point 1): follow a player, block one, challenge one by name.

- **Follow.** ``POST /api/people/follow`` ``{"username", "follow": bool}``: a row of ``follows``.
  A profile shows the player's followers and who they follow (``GET /api/people/{name}``); the
  account's own page lists the followed players who are **online**: an account is online while
  one of its pages was open in the last :attr:`PeoplePolicy.online_ttl` seconds (each page holds
  the people feed, web/people/feed.py, whose process stamps ``people_seen`` every few seconds, as
  ``GET /api/challenges`` does: the database, so every server process sees the same).
- **Block.** ``POST /api/people/block`` ``{"username", "block": bool}``: the blocked player can no
  longer challenge the blocker, invite them by mail (web/social/notify.py asks :meth:`blocked`),
  nor write to them in a game's players' chat (web/social/chat.py); and, either way round (issue
  51), neither follows or challenges the other, joins the other's public seek (the lobby does not
  offer it: :meth:`avoids`, read by the room service) or reads the other's lines in any chat view.
  Blocking also ends the follows both ways and cancels the pending challenges between the two;
  the relation (``GET /api/people/{name}``) says ``can_follow`` and ``can_challenge`` false.
- **Who may challenge me** (issue 51): ``GET``/``POST /api/challenges/settings``
  ``{"challenges": "all" | "follows" | "nobody"}``, a row of ``people_prefs``; a challenge the
  setting does not take is refused with ``challenges_closed``.
- **Challenge.** ``POST /api/challenges`` ``{"username", "clock", "increment" | "per_move_days",
  "rated", "side"}`` (the time control as ``POST /api/games`` takes it): a pending row of
  ``challenges``, and an invitation mail when the challenged player takes invitations.  The
  challenged player accepts (``POST /api/challenges/{id}/accept``) or declines (``.../decline``);
  the challenger may cancel (``.../cancel``).  Accepting creates the game through the game
  round's own service (``GameService.create`` for the challenger's seat, then ``join`` for the
  challenged one, both bound to their accounts), so a challenge game is an online game like any
  other: the same clocks, ratings, chat, endings.
- **Limits**: the budgets of the one policy (issue 51, :mod:`jericho_game.web.common.budget`),
  asked in the transaction that adds the row: ``challenge.pending`` (pending challenges an account
  has sent, and one player has received, at once: counted in ``challenges``), ``challenge``
  (challenges sent per address group, account, pair, and received per player, an hour) and
  ``follow`` (follows made, and received by one player, an hour); a challenge's mail asks
  ``mail.challenge`` (past it the challenge is made, its mail not sent).  One pending challenge per
  pair (a unique key).
- **In real time** (issue 52): every change of a challenge (sent, accepted, declined with its
  reason, cancelled, expired) and every block is announced to both players' open pages by the
  changing transaction (web/people/feed.py: a hint; the page reads the API).  A correspondence
  challenge expires unanswered after :attr:`PeoplePolicy.expires_after` (a day); a real-time one
  after :attr:`PeoplePolicy.realtime_expires_after` (5 minutes), and as soon as its challenger has
  had no page open for :attr:`PeoplePolicy.left_after` (20 s, as lichess): ``status`` ``expired``
  with ``reason`` ``unanswered`` or ``left``.  Every process sweeps for them every few seconds
  (:meth:`PeopleService.sweep`); an answer to one found due before a sweep is refused with
  ``challenge_expired`` (so a game never starts for a challenger who is gone).

Accepting is safe on any number of processes: the game is created first, then the challenge is
moved from ``pending`` to ``accepted`` with the game's id by a compare-and-set; the loser of a race
aborts the game it made (no result: it never started).  A process killed between the two leaves a
waiting game nobody was told of and the challenge still pending (accept again); killed after the
compare-and-set, the challenged player's next accept takes the seat (:meth:`accept` is idempotent).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table, UniqueConstraint, text
from sqlalchemy.engine import Connection

from jericho_game.web import i18n
from jericho_game.web.accounts.accounts import Account, AccountService
from jericho_game.web.common.budget import Budget, BudgetPolicy, Counts, Who, costs, free
from jericho_game.web.round import timecontrol
from jericho_game.web.round.gameroom import ClientError
from jericho_game.web.storage.database import GAMES_CHANNEL, Storage

if TYPE_CHECKING:
    from jericho_game.web.round.rooms import Change, GameService
    from jericho_game.web.social.notify import Notifier

__all__ = ["PeoplePolicy", "PeopleService", "people_metadata", "SIDES", "CHALLENGERS"]

SIDES = ("south", "north", "random")
#: Who may challenge an account: everyone, the players it follows, nobody.
CHALLENGERS = ("all", "follows", "nobody")
STATUSES = ("pending", "accepted", "declined", "cancelled", "expired")

people_metadata = MetaData()

follows_table = Table(
    "follows",
    people_metadata,
    Column("follower", Integer, primary_key=True),
    Column("followed", Integer, primary_key=True),
    Column("at", Float, nullable=False),
)
Index("follows_followed", follows_table.c.followed)

blocks_table = Table(
    "blocks",
    people_metadata,
    Column("blocker", Integer, primary_key=True),
    Column("blocked", Integer, primary_key=True),
    Column("at", Float, nullable=False),
)

challenges_table = Table(
    "challenges",
    people_metadata,
    Column("id", String(16), primary_key=True),
    Column("challenger", Integer, nullable=False),
    Column("challenged", Integer, nullable=False),
    Column("status", String(12), nullable=False),  # pending, accepted, declined, cancelled, expired
    # "challenger:challenged" while pending, else NULL: at most one pending challenge per pair
    Column("pending_pair", String(40), nullable=True),
    Column("side", String(8), nullable=False),  # the challenger's side: south, north or random
    Column("clock", Float, nullable=True),  # minutes per side (None: none)
    Column("increment", Float, nullable=True),
    Column("per_move_days", Integer, nullable=True),
    Column("rated", Integer, nullable=False, default=0),
    Column("created_at", Float, nullable=False),
    Column("decided_at", Float, nullable=True),
    Column("reason", String(16), nullable=True),  # a decline's reason (later, casual, rated, timecontrol)
    Column("game_id", String(32), nullable=True),
    UniqueConstraint("pending_pair", name="challenges_one_pending_per_pair"),
)
Index("challenges_challenger", challenges_table.c.challenger, challenges_table.c.created_at)
Index("challenges_challenged", challenges_table.c.challenged, challenges_table.c.status)

seen_table = Table(  # when an account's pages last asked the server (online = recently)
    "people_seen",
    people_metadata,
    Column("account", Integer, primary_key=True),
    Column("at", Float, nullable=False),
)

prefs_table = Table(  # an account's own choices here (absent: the defaults)
    "people_prefs",
    people_metadata,
    Column("account", Integer, primary_key=True),
    Column("challenges", String(8), nullable=False),  # who may challenge it: CHALLENGERS
)

DECLINE_REASONS = ("generic", "later", "timecontrol", "rated", "casual")
#: Why a challenge expired (its ``reason``): nobody answered in time, or its challenger left.
EXPIRY_REASONS = ("unanswered", "left")

#: issue 52: "account N's challenges or relations changed" on the broker (``"~people:N -5"`` on the
#: games channel, sent in the changing transaction): a hint for that account's open pages, which
#: then read the state from the API (web/people/feed.py); no game id has a ``~``.
PEOPLE_KEY = "~people:"
PEOPLE_CHANGED = -5
_NOTIFY = text("SELECT pg_notify(:channel, :payload)")
# the pending challenges (the unique key is set exactly while pending) with their challenger's last page
_PENDING = text(
    "SELECT c.*, s.at AS seen_at FROM challenges c LEFT JOIN people_seen s ON s.account = c.challenger "
    "WHERE c.pending_pair IS NOT NULL"
)


@dataclass(frozen=True)
class PeoplePolicy:
    """The timing of challenges and the lengths of lists (docs/web.md, "People"); how many challenges
    and follows one may send or receive are budgets (``challenge``, ``challenge.pending``, ``follow``)."""

    expires_after: float = 24 * 3600.0  # seconds a correspondence challenge waits for an answer
    # issue 52: a real-time challenge (not correspondence) is for two people at their screens: it
    # waits this long for an answer, and only while its challenger has a page open (no page for
    # ``left_after`` seconds: expired, as on lichess)
    realtime_expires_after: float = 300.0
    left_after: float = 20.0
    online_ttl: float = 60.0  # an account is online this long after its pages last asked the server
    max_follows: int = 400  # players one account may follow
    list_limit: int = 200  # names a followers/following list returns


def _challenge_json(row: Any, names: Callable[[int], str | None], expires_at: float | None = None) -> dict[str, Any]:
    return {
        "id": row.id,
        "from": names(int(row.challenger)),
        "to": names(int(row.challenged)),
        "status": row.status,
        "side": row.side,
        "clock": row.clock,
        "increment": row.increment,
        "per_move_days": row.per_move_days,
        "rated": bool(row.rated),
        "created_at": row.created_at,
        "decided_at": row.decided_at,
        "reason": row.reason,  # declined: DECLINE_REASONS; expired: EXPIRY_REASONS
        "game": row.game_id,
        "expires_at": expires_at,  # while pending: when it expires unanswered
    }


class PeopleService:
    """Follows, blocks and challenges over one :class:`Storage` (SQL), the accounts and the game round."""

    def __init__(
        self,
        storage: Storage,
        accounts: AccountService,
        service: GameService,
        notifier: Notifier | None = None,
        *,
        policy: PeoplePolicy | None = None,
        clock: Callable[[], float] | None = None,
        budget: BudgetPolicy | None = None,
    ) -> None:
        self.storage = storage
        self.accounts = accounts
        self.service = service
        self.notifier = notifier
        self.policy = policy or PeoplePolicy()
        self.now = clock or service.now
        # issue 51: the one budget policy (web/common/budget.py), the room service's by default
        self.budget = budget if budget is not None else service.budget
        self.budget.live("challenge.pending", self._count_pending)
        # issue 52: tells this process's open pages of these accounts that something changed, after
        # the commit (set by the people feed, web/people/feed.py; callable from any thread); on
        # PostgreSQL the NOTIFY of the changing transaction does it on every process instead
        self.hint: Callable[[list[int]], None] = lambda accounts: None
        storage.create_tables(people_metadata)

    # -- helpers --------------------------------------------------------------------------------
    def _target(self, username: Any, me: int) -> Account:
        if not isinstance(username, str) or not username.strip() or len(username) > 64:
            raise ClientError("bad_request", "send 'username': the player's name")
        acc = self.accounts.find(username.strip())
        if acc is None:
            raise ClientError("unknown_account", f"there is no player named {username.strip()[:30]!r}", 404)
        if acc.id == me:
            raise ClientError("not_yourself", "that is you: choose another player", 409)
        return acc

    def _lock(self, conn: Connection, key: str) -> None:
        if self.storage.postgres:  # one account's changes on several processes take turns
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": key})

    def _name(self, account_id: int) -> str | None:
        return self.accounts.name_of(account_id)

    # -- what open pages are told (issue 52) ------------------------------------------------------
    def _announce(self, conn: Connection, accounts: set[int]) -> None:
        """In the changing transaction: PostgreSQL's NOTIFY reaches every process at the commit (and
        never for a change rolled back); one per account, whose pages then read the API."""
        if self.storage.postgres:
            for a in sorted(accounts):
                conn.execute(_NOTIFY, {"channel": GAMES_CHANNEL, "payload": f"{PEOPLE_KEY}{a} {PEOPLE_CHANGED}"})

    def _told(self, accounts: set[int]) -> None:
        """After the commit, on SQLite (one process): this process's pages of ``accounts``."""
        if accounts and not self.storage.postgres:
            self.hint(sorted(accounts))

    def expires_at(self, row: Any) -> float:
        """When a challenge expires unanswered (its challenger may leave before: :meth:`_due`)."""
        wait = self.policy.expires_after if row.per_move_days is not None else self.policy.realtime_expires_after
        return float(row.created_at) + wait

    def _due(self, row: Any, seen_at: float | None, now: float) -> str | None:
        """Why a pending challenge is over at ``now`` (``unanswered``, ``left``), None while it stands;
        ``seen_at``: when a page of its challenger was last open (``people_seen``)."""
        if now >= self.expires_at(row):
            return "unanswered"
        if row.per_move_days is None and (seen_at is None or seen_at < now - self.policy.left_after):
            return "left"  # a real-time challenge needs its challenger there (lichess: 20 s)
        return None

    @staticmethod
    def _close(conn: Connection, cid: str, status: str, now: float, reason: str | None) -> bool:
        """Move a pending challenge to ``status`` (compare-and-set: False when no longer pending)."""
        done = conn.execute(
            text(
                "UPDATE challenges SET status = :s, pending_pair = NULL, decided_at = :t, reason = :r "
                "WHERE id = :i AND status = 'pending'"
            ),
            {"s": status, "t": now, "r": reason, "i": cid},
        ).rowcount
        return bool(done)

    def _json(self, row: Any) -> dict[str, Any]:
        return _challenge_json(row, self._name, self.expires_at(row) if row.status == "pending" else None)

    @staticmethod
    def is_blocked(conn: Connection, blocker: int, blocked: int) -> bool:
        """Whether ``blocker`` blocked ``blocked`` (inside any transaction)."""
        row = conn.execute(
            text("SELECT 1 FROM blocks WHERE blocker = :a AND blocked = :b"), {"a": blocker, "b": blocked}
        ).first()
        return row is not None

    def blocked(self, blocker: int | None, blocked: int | None) -> bool:
        """Whether account ``blocker`` blocked account ``blocked`` (None: an anonymous player: never)."""
        if blocker is None or blocked is None:
            return False
        with self.storage.reader.connect() as conn:
            return self.is_blocked(conn, blocker, blocked)

    def blocked_by(self, accounts: list[int]) -> dict[int, set[int]]:
        """For each of ``accounts``: the accounts it blocked."""
        out: dict[int, set[int]] = {a: set() for a in accounts}
        if not accounts:
            return out
        with self.storage.reader.connect() as conn:
            rows = conn.execute(blocks_table.select().where(blocks_table.c.blocker.in_(sorted(set(accounts))))).all()
        for r in rows:
            out[int(r.blocker)].add(int(r.blocked))
        return out

    def avoids(self, accounts: list[int], conn: Connection | None = None) -> dict[int, set[int]]:
        """For each of ``accounts``: the accounts it blocked and those that blocked it (a block keeps
        the two apart both ways: seeks, chat views); read in ``conn`` when given (a join's transaction)."""
        out: dict[int, set[int]] = {a: set() for a in accounts}
        if not accounts:
            return out
        wanted = sorted(set(accounts))
        query = blocks_table.select().where(blocks_table.c.blocker.in_(wanted) | blocks_table.c.blocked.in_(wanted))
        if conn is not None:
            rows = conn.execute(query).all()
        else:
            with self.storage.reader.connect() as reader:
                rows = reader.execute(query).all()
        for r in rows:
            if r.blocker in out:
                out[int(r.blocker)].add(int(r.blocked))
            if r.blocked in out:
                out[int(r.blocked)].add(int(r.blocker))
        return out

    def _count_pending(self, conn: Connection, b: Budget, who: Who, recipient: str | None, now: float) -> Counts:
        """The ``challenge.pending`` budget's count, in ``challenges``: the pending challenges (not
        yet expired) ``who``'s account has sent, and ``recipient`` (an account's id) has received."""
        sql = (  # not yet expired unanswered (a correspondence one after a day, a real-time one in minutes)
            "SELECT count(*) FROM challenges WHERE status = 'pending' AND ((per_move_days IS NOT NULL "
            "AND created_at >= :old) OR (per_move_days IS NULL AND created_at >= :rt)) AND "
        )
        ages = {"old": now - self.policy.expires_after, "rt": now - self.policy.realtime_expires_after}
        out = Counts()
        if b.per_account is not None and who.account is not None:
            out.account = float(conn.execute(text(sql + "challenger = :a"), {**ages, "a": who.account}).scalar_one())
        if b.per_recipient is not None and recipient is not None:
            out.recipient = float(
                conn.execute(text(sql + "challenged = :r"), {**ages, "r": int(recipient)}).scalar_one()
            )
        return out

    # -- who may challenge me ----------------------------------------------------------------------
    @staticmethod
    def _challengers(conn: Connection, account: int) -> str:
        row = conn.execute(text("SELECT challenges FROM people_prefs WHERE account = :a"), {"a": account}).first()
        return str(row[0]) if row is not None else "all"

    def _takes_challenge(self, conn: Connection, target: int, me: int) -> str | None:
        """Why ``target``'s setting refuses a challenge from ``me`` (None: it takes it)."""
        who = self._challengers(conn, target)
        if who == "nobody":
            return "takes no challenges"
        if (
            who == "follows"
            and not conn.execute(
                text("SELECT 1 FROM follows WHERE follower = :t AND followed = :m"), {"t": target, "m": me}
            ).first()
        ):
            return "takes challenges only from the players they follow"
        return None

    def settings(self, me: int) -> dict[str, Any]:
        """``me``'s choices here: ``{"challenges": "all" | "follows" | "nobody"}``."""
        with self.storage.reader.connect() as conn:
            return {"challenges": self._challengers(conn, me)}

    def set_settings(self, me: int, body: dict[str, Any]) -> dict[str, Any]:
        """Change ``me``'s choices (the body of ``POST /api/challenges/settings``); the choices after."""
        unknown = set(body) - {"challenges"}
        if unknown:
            raise ClientError("bad_request", f"unknown field(s): {', '.join(sorted(map(str, unknown)))[:200]}")
        who = body.get("challenges")
        if who not in CHALLENGERS:
            raise ClientError("bad_request", "challenges must be all, follows or nobody")
        with self.storage.engine.begin() as conn:
            self._lock(conn, f"jericho-people:{me}")
            conn.execute(text("DELETE FROM people_prefs WHERE account = :a"), {"a": me})
            conn.execute(prefs_table.insert().values(account=me, challenges=who))
        return self.settings(me)

    # -- follows and blocks -----------------------------------------------------------------------
    def follow(self, me: int, username: Any, on: Any, who: Who | None = None) -> dict[str, Any]:
        """Follow (``on`` true) or unfollow a player; the relation afterwards.  A new follow spends
        the ``follow`` budget of ``who`` (the client; default: ``me`` alone) towards the player."""
        if not isinstance(on, bool):
            raise ClientError("bad_request", "'follow' must be true or false")
        target = self._target(username, me)
        with self.storage.engine.begin() as conn:
            self._lock(conn, f"jericho-people:{me}")
            had = conn.execute(
                text("DELETE FROM follows WHERE follower = :a AND followed = :b"), {"a": me, "b": target.id}
            ).rowcount
            if on:
                if self.is_blocked(conn, me, target.id):
                    raise ClientError("blocking", f"you blocked {target.username}: unblock them first", 409)
                if self.is_blocked(conn, target.id, me):
                    raise ClientError("blocked", f"{target.username} does not take follows from you", 403)
                n = conn.execute(text("SELECT count(*) FROM follows WHERE follower = :a"), {"a": me}).scalar_one()
                if int(n) >= self.policy.max_follows:
                    raise ClientError(
                        "too_many_follows", f"you follow {n} players, the most there can be: unfollow one first", 429
                    )
                if not had:  # following again someone one follows costs nothing
                    self.budget.ask(conn, "follow", who or Who("local", me), recipient=target.id)
                conn.execute(follows_table.insert().values(follower=me, followed=target.id, at=self.now()))
        return self.relation(me, target.username)

    def block(self, me: int, username: Any, on: Any) -> dict[str, Any]:
        """Block (``on`` true) or unblock a player; blocking ends the follows both ways and cancels
        the pending challenges between the two."""
        if not isinstance(on, bool):
            raise ClientError("bad_request", "'block' must be true or false")
        target = self._target(username, me)
        now = self.now()
        with self.storage.engine.begin() as conn:
            self._lock(conn, f"jericho-people:{me}")
            conn.execute(text("DELETE FROM blocks WHERE blocker = :a AND blocked = :b"), {"a": me, "b": target.id})
            if on:
                conn.execute(blocks_table.insert().values(blocker=me, blocked=target.id, at=now))
                conn.execute(
                    text(
                        "DELETE FROM follows WHERE (follower = :a AND followed = :b) "
                        "OR (follower = :b AND followed = :a)"
                    ),
                    {"a": me, "b": target.id},
                )
                conn.execute(
                    text(
                        "UPDATE challenges SET status = 'cancelled', pending_pair = NULL, decided_at = :t "
                        "WHERE status = 'pending' AND ((challenger = :a AND challenged = :b) "
                        "OR (challenger = :b AND challenged = :a))"
                    ),
                    {"a": me, "b": target.id, "t": now},
                )
            # both players' open pages read again what they may do (issue 52: the blocked player's
            # view of the blocker drops Follow and Challenge at once) and their challenges
            self._announce(conn, {me, target.id})
        self._told({me, target.id})
        return self.relation(me, target.username)

    def relation(self, me: int | None, username: Any) -> dict[str, Any]:
        """A player's people page: followers and following (names), and what ``me`` is to them."""
        if not isinstance(username, str) or len(username) > 64:
            raise ClientError("unknown_account", "there is no such player", 404)
        acc = self.accounts.find(username)
        if acc is None:
            raise ClientError("unknown_account", f"there is no player named {username[:30]!r}", 404)
        limit = self.policy.list_limit
        with self.storage.reader.connect() as conn:
            followers = conn.execute(
                text(
                    "SELECT a.username FROM follows f JOIN accounts a ON a.id = f.follower "
                    "WHERE f.followed = :b ORDER BY a.username LIMIT :n"
                ),
                {"b": acc.id, "n": limit},
            ).all()
            following = conn.execute(
                text(
                    "SELECT a.username FROM follows f JOIN accounts a ON a.id = f.followed "
                    "WHERE f.follower = :b ORDER BY a.username LIMIT :n"
                ),
                {"b": acc.id, "n": limit},
            ).all()
            counts = conn.execute(
                text(
                    "SELECT (SELECT count(*) FROM follows WHERE followed = :b), "
                    "(SELECT count(*) FROM follows WHERE follower = :b)"
                ),
                {"b": acc.id},
            ).one()
            mine: dict[str, Any] = {}
            if me is not None and me != acc.id:
                mine = {
                    "following": conn.execute(
                        text("SELECT 1 FROM follows WHERE follower = :a AND followed = :b"), {"a": me, "b": acc.id}
                    ).first()
                    is not None,
                    "followed_by": conn.execute(
                        text("SELECT 1 FROM follows WHERE follower = :b AND followed = :a"), {"a": me, "b": acc.id}
                    ).first()
                    is not None,
                    "blocking": self.is_blocked(conn, me, acc.id),
                }
                # issue 51: what would fail is not offered (a block holds both ways)
                apart = mine["blocking"] or self.is_blocked(conn, acc.id, me)
                mine["can_follow"] = not apart
                mine["can_challenge"] = not apart and self._takes_challenge(conn, acc.id, me) is None
            seen = conn.execute(text("SELECT at FROM people_seen WHERE account = :a"), {"a": acc.id}).first()
        online = seen is not None and seen[0] > self.now() - self.policy.online_ttl
        return {
            "username": acc.username,
            "online": online,
            "followers": [r[0] for r in followers],
            "following": [r[0] for r in following],
            "followers_count": int(counts[0]),
            "following_count": int(counts[1]),
            "me": mine or None,  # None: not logged in, or one's own page
        }

    def seen(self, me: int) -> None:
        """Stamp ``me`` as online now (written at most every 5 s: a client of the API keeps its
        real-time challenges by asking ``GET /api/challenges`` more often than ``left_after``)."""
        now = self.now()
        with self.storage.engine.begin() as conn:
            done = conn.execute(
                text("UPDATE people_seen SET at = :t WHERE account = :a AND at < :soon"),
                {"a": me, "t": now, "soon": now - 5},
            ).rowcount
            if (
                not done
                and conn.execute(text("SELECT 1 FROM people_seen WHERE account = :a"), {"a": me}).first() is None
            ):
                try:
                    with conn.begin_nested():
                        conn.execute(seen_table.insert().values(account=me, at=now))
                except Exception:  # noqa: BLE001 - another process stamped it first: fine
                    pass

    def _stamp(self, conn: Connection, accounts: list[int], now: float) -> None:
        """Stamp ``accounts`` as having a page open now (in ``conn``'s transaction)."""
        if not accounts:
            return
        conn.execute(seen_table.update().where(seen_table.c.account.in_(accounts)).values(at=now))
        have = {int(r[0]) for r in conn.execute(seen_table.select().where(seen_table.c.account.in_(accounts))).all()}
        for a in accounts:
            if a not in have:
                try:
                    with conn.begin_nested():
                        conn.execute(seen_table.insert().values(account=a, at=now))
                except Exception:  # noqa: BLE001 - another process stamped it first: fine
                    pass

    def present(self, accounts: list[int], at: float | None = None) -> None:
        """Stamp ``accounts`` as having a page open at ``at`` (default: now): the people feed, at each
        page's socket opening and closing and every few seconds while open (web/people/feed.py)."""
        wanted = sorted(set(accounts))
        if wanted:
            with self.storage.engine.begin() as conn:
                self._stamp(conn, wanted, self.now() if at is None else at)

    def sweep(self, present: list[int] | None = None) -> list[int]:
        """Stamp ``present`` (the accounts with a page open on this process), then expire the pending
        challenges that are due (:meth:`_due`: their challenger left, or unanswered in time), telling
        both players' pages.  Every process does it every few seconds; each expiry is a
        compare-and-set, so one process makes it and tells it.  Returns the accounts told."""
        if present:
            self.present(present)
        with self.storage.engine.begin() as conn:
            told = self._expire(conn, self.now())
        self._told(told)
        return sorted(told)

    def online(self, me: int) -> list[dict[str, Any]]:
        """The players ``me`` follows who are online now, by name."""
        with self.storage.reader.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT a.username FROM follows f JOIN people_seen s ON s.account = f.followed "
                    "JOIN accounts a ON a.id = f.followed WHERE f.follower = :a AND s.at > :t ORDER BY a.username"
                ),
                {"a": me, "t": self.now() - self.policy.online_ttl},
            ).all()
        return [{"username": r[0]} for r in rows]

    # -- challenges -----------------------------------------------------------------------------
    def challenge(self, me: int, body: dict[str, Any], who: Who | None = None) -> dict[str, Any]:
        """Send a challenge (the body of ``POST /api/challenges``) from the client ``who`` (default:
        ``me`` alone); the stored challenge."""
        fields = {"username", "clock", "increment", "per_move_days", "rated", "side"}
        unknown = set(body) - fields
        if unknown:
            raise ClientError("bad_request", f"unknown field(s): {', '.join(sorted(map(str, unknown)))[:200]}")
        target = self._target(body.get("username"), me)
        side = body.get("side", "random")
        if side not in SIDES:
            raise ClientError("bad_request", "side must be south, north or random")
        rated = body.get("rated", False)
        if not isinstance(rated, bool):
            raise ClientError("bad_request", "rated must be true or false")
        try:
            control = timecontrol.parse(body, "online", self.service.min_clock)
        except ValueError as exc:
            raise ClientError("bad_request", str(exc)) from None
        now = self.now()
        cid = secrets.token_urlsafe(9).replace("-", "x").replace("_", "y")[:12]
        client = who or Who("local", me)
        with self.storage.engine.begin() as conn:
            self._lock(conn, f"jericho-challenge:{me}")
            if self.is_blocked(conn, target.id, me):
                raise ClientError("blocked", f"{target.username} does not take challenges from you", 403)
            if self.is_blocked(conn, me, target.id):
                raise ClientError("blocking", f"you blocked {target.username}: unblock them first", 409)
            closed = self._takes_challenge(conn, target.id, me)
            if closed is not None:
                raise ClientError("challenges_closed", f"{target.username} {closed}; nothing was sent", 403)
            self._stamp(conn, [me], now)  # the challenger is here: the one sending it
            told = self._expire(conn, now)
            pair = f"{me}:{target.id}"
            if conn.execute(text("SELECT 1 FROM challenges WHERE pending_pair = :p"), {"p": pair}).first():
                raise ClientError(
                    "already_challenged", f"you already challenged {target.username}: wait for the answer", 409
                )
            # issue 51: what the challenger sends and what the challenged player receives, at once and an hour
            self.budget.ask(conn, "challenge.pending", client, recipient=target.id)
            self.budget.ask(conn, "challenge", client, recipient=target.id)
            row = {
                "id": cid,
                "challenger": me,
                "challenged": target.id,
                "status": "pending",
                "pending_pair": pair,
                "side": side,
                "clock": control.clock / 60.0 if control.clock and control.per_move_days is None else None,
                "increment": control.increment,
                "per_move_days": control.per_move_days,
                "rated": int(rated),
                "created_at": now,
            }
            conn.execute(challenges_table.insert().values(**row))
            self._mail(conn, me, target.id, cid, client)
            told |= {me, target.id}  # every open page of both (the challenger's other tabs: "Sent")
            self._announce(conn, told)
        self._told(told)
        if self.notifier is not None:
            self.notifier.wake()
        return self.get(cid)

    def _mail(self, conn: Connection, me: int, target: int, cid: str, who: Who) -> None:
        """The challenge's mail, in its transaction, when the challenged player takes invitations and
        the ``mail.challenge`` budget of ``who`` allows it (past it the challenge stands, unmailed)."""
        n = self.notifier
        if n is None:
            return
        p = n.mailable(conn, target, "invite")
        if p is None:
            return
        tr = i18n.translations(p["lang"])
        name = self._name(me) or "?"
        link = f"{n.site_of(p)}/challenges#{cid}"
        subject = tr.gettext("Jericho: {name} challenges you to a game").format(name=name)
        body = tr.gettext("{name} challenges you to a game of Jericho.\n\nAccept or decline it here: {link}").format(
            name=name, link=link
        )
        n.queue(
            conn, p, "invite", subject, body, dedupe=f"challenge:{cid}", sender=me, who=who, budget="mail.challenge"
        )

    def _expire(self, conn: Connection, now: float) -> set[int]:
        """Expire the pending challenges due at ``now`` (in ``conn``'s transaction, announced in it);
        the accounts to tell."""
        told: set[int] = set()
        for r in conn.execute(_PENDING).all():
            why = self._due(r, r.seen_at, now)
            if why is not None and self._close(conn, r.id, "expired", now, why):
                told |= {int(r.challenger), int(r.challenged)}
        self._announce(conn, told)
        return told

    def _expire_one(self, row: Any, now: float) -> None:
        """Refuse an answer to a challenge found due (:meth:`_due`), expiring it first (committed,
        and told) when no sweep has yet."""
        with self.storage.engine.begin() as conn:
            seen = conn.execute(text("SELECT at FROM people_seen WHERE account = :a"), {"a": row.challenger}).first()
            why = self._due(row, None if seen is None else float(seen[0]), now)
            if why is None:
                return
            won = self._close(conn, row.id, "expired", now, why)
            told = {int(row.challenger), int(row.challenged)} if won else set()
            self._announce(conn, told)
        self._told(told)
        name = self._name(int(row.challenger)) or "?"
        detail = f"{name} left" if why == "left" else "nobody answered it in time"
        raise ClientError("challenge_expired", f"this challenge expired: {detail}", 409)

    def _row(self, conn: Connection, cid: Any) -> Any:
        if not isinstance(cid, str) or not 1 <= len(cid) <= 16:
            raise ClientError("unknown_challenge", "there is no such challenge", 404)
        row = conn.execute(challenges_table.select().where(challenges_table.c.id == cid)).first()
        if row is None:
            raise ClientError("unknown_challenge", "there is no such challenge", 404)
        return row

    def get(self, cid: str) -> dict[str, Any]:
        """One challenge as the API shows it."""
        with self.storage.reader.connect() as conn:
            return self._json(self._row(conn, cid))

    def mine(self, me: int) -> dict[str, Any]:
        """``me``'s challenges: ``incoming`` and ``outgoing`` pending ones, and ``recent`` answered
        ones (the last day: the page tells the challenger "accepted, play" once), newest first;
        with the followed players online (``online``) and the server's time (``now``: what the
        page compares ``decided_at`` with).  Stamps ``me`` online.  A challenge found due and not
        yet swept is shown expired (:meth:`_due`)."""
        now = self.now()
        self.seen(me)
        with self.storage.reader.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT c.*, s.at AS seen_at FROM challenges c LEFT JOIN people_seen s "
                    "ON s.account = c.challenger WHERE (c.challenger = :a OR c.challenged = :a) "
                    "AND (c.status = 'pending' OR c.decided_at > :day) ORDER BY c.created_at DESC LIMIT 200"
                ),
                {"a": me, "day": now - 86400},
            ).all()
        incoming: list[dict[str, Any]] = []
        outgoing: list[dict[str, Any]] = []
        recent: list[dict[str, Any]] = []
        for r in rows:
            j = self._json(r)
            why = self._due(r, r.seen_at, now) if r.status == "pending" else None
            if why is not None:
                j.update(status="expired", reason=why, decided_at=now, expires_at=None)
            if j["status"] == "pending":
                (incoming if r.challenged == me else outgoing).append(j)
            else:
                recent.append(j)
        return {
            "incoming": incoming,
            "outgoing": outgoing,
            "recent": recent,
            "online": self.online(me),
            "now": now,
        }

    def decide(self, me: int, cid: Any, status: str, reason: Any = None) -> dict[str, Any]:
        """Decline (the challenged player) or cancel (the challenger) a pending challenge."""
        if status == "declined":
            if reason is None:
                reason = "generic"
            if reason not in DECLINE_REASONS:
                raise ClientError("bad_request", f"reason must be one of {', '.join(DECLINE_REASONS)}")
        now = self.now()
        with self.storage.reader.connect() as conn:
            row = self._row(conn, cid)
        who = row.challenged if status == "declined" else row.challenger
        if me not in (row.challenger, row.challenged):
            raise ClientError("unknown_challenge", "there is no such challenge", 404)
        if who != me:
            what = "decline" if status == "declined" else "cancel"
            raise ClientError("not_yours", f"only the other player can {what} this challenge", 403)
        if row.status == "pending" and status == "declined":
            self._expire_one(row, now)  # an answer to a challenge already over is refused as such
        with self.storage.engine.begin() as conn:
            if not self._close(conn, str(cid), status, now, reason if status == "declined" else None):
                fresh = self._row(conn, cid)
                raise ClientError("not_pending", f"this challenge was already {fresh.status}", 409)
            told = {int(row.challenger), int(row.challenged)}
            self._announce(conn, told)
        self._told(told)
        return self.get(str(cid))

    def accept(self, me: int, cid: Any, client: str = "?") -> tuple[dict[str, Any], Change | None]:
        """Accept a challenge sent to ``me``: the game is created by the game round's service, the
        challenge marked accepted with it (compare-and-set), and ``me`` seated.  Returns the
        challenge and the join's change (None when ``me`` was already seated)."""
        from jericho_game.web.round.endings import abort  # the round's endings import the room service

        now = self.now()
        with self.storage.reader.connect() as conn:
            row = self._row(conn, cid)
            if row.challenged != me:
                if row.challenger == me:
                    raise ClientError("not_yours", "only the challenged player can accept this challenge", 403)
                raise ClientError("unknown_challenge", "there is no such challenge", 404)
            if self.is_blocked(conn, me, row.challenger) or self.is_blocked(conn, row.challenger, me):
                raise ClientError("blocked", "one of you blocked the other: this challenge cannot be played", 403)
        if row.status == "accepted" and row.game_id:
            return self.get(row.id), self._seat(row.game_id, me)  # a second accept: the same game
        if row.status != "pending":
            raise ClientError("not_pending", f"this challenge was already {row.status}", 409)
        # issue 52: never a game its challenger is not there for (a real-time one: the clock would run)
        self._expire_one(row, now)
        side = row.side if row.side != "random" else random.choice(("south", "north"))
        spec: dict[str, Any] = {"mode": "online", "side": side, "rated": bool(row.rated)}
        if row.per_move_days is not None:
            spec["per_move_days"] = int(row.per_move_days)
        elif row.clock:
            spec["clock"] = row.clock
            if row.increment:
                spec["increment"] = row.increment
        room, reply = self.service.create(spec, f"challenge:{row.challenger}", int(row.challenger))
        game_id = room.rec.id
        with self.storage.engine.begin() as conn:
            won = conn.execute(
                text(
                    "UPDATE challenges SET status = 'accepted', pending_pair = NULL, decided_at = :t, game_id = :g "
                    "WHERE id = :i AND status = 'pending'"
                ),
                {"t": now, "g": game_id, "i": row.id},
            ).rowcount
            told = {int(row.challenger), int(row.challenged)} if won else set()
            self._announce(conn, told)  # the challenger's pages go to the game
        self._told(told)
        if not won:  # answered meanwhile (another tab, another process): this game never starts
            abort(self.service, game_id, frozenset({reply["side"]}))
            fresh = self.get(row.id)
            if fresh["status"] == "accepted" and fresh["game"]:
                return fresh, self._seat(fresh["game"], me)
            raise ClientError("not_pending", f"this challenge was already {fresh['status']}", 409)
        return self.get(row.id), self._seat(game_id, me, reply.get("invite"))

    def _seat(self, game_id: str, me: int, invite: str | None = None) -> Change | None:
        rec = self.storage.load(game_id)
        if rec is None:
            raise ClientError("unknown_game", "the challenge's game is gone", 404)
        if me in (rec.south_account, rec.north_account):
            return None
        try:
            change, _ = self.service.join(game_id, invite or rec.invite, me)
        except ClientError as exc:
            # two accepts at once (two tabs, two processes) both seat ``me``: the one that loses the
            # seat finds ``me`` already in it, which is what both asked for
            if exc.code != "seat_taken":
                raise
            rec = self.storage.load(game_id)
            if rec is None or me not in (rec.south_account, rec.north_account):
                raise
            return None
        return change


def people_routes(people: PeopleService, after: Callable[[Change], None]) -> list[Any]:
    """``/api/people/...`` and ``/api/challenges...``; ``after``: the transport's fan-out of a game
    change (the join that starts a challenge's game)."""
    import asyncio

    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from jericho_game.web.common import jsonin

    accounts = people.accounts

    async def blocking(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    async def me_for_change(request: Request) -> int:
        sess = await blocking(accounts.account_for_change, request)  # 403 csrf without the token
        if sess is None:
            raise ClientError("not_logged_in", "log in first: follows and challenges belong to an account", 401)
        return int(sess.account.id)

    async def me_reading(request: Request) -> int | None:
        sess = await blocking(accounts.session_of, request)
        return None if sess is None else int(sess.account.id)

    def answer(data: Any, status: int = 200) -> Response:
        return JSONResponse(data, status_code=status, headers={"Cache-Control": "private, no-store"})

    @free("one player's page: two lists of at most PeoplePolicy.list_limit names", methods=("GET", "HEAD"))
    async def person(request: Request) -> Response:
        me = await me_reading(request)
        return answer(await blocking(people.relation, me, request.path_params["name"]))

    @costs("follow", methods=("POST",))
    async def follow(request: Request) -> Response:
        me = await me_for_change(request)
        body = await jsonin.read_object(request, 4096, ClientError)
        who = Who.of(request, me)
        return answer(await blocking(people.follow, me, body.get("username"), body.get("follow"), who))

    @free("one row of the caller's own (and fewer follows and challenges)", methods=("POST",), writes=("blocks",))
    async def block(request: Request) -> Response:
        me = await me_for_change(request)
        body = await jsonin.read_object(request, 4096, ClientError)
        return answer(await blocking(people.block, me, body.get("username"), body.get("block")))

    @free(
        "the caller's own challenges (the latest 200); stamps it online",
        methods=("GET", "HEAD"),
        writes=("people_seen",),
    )
    @costs("challenge.pending", "challenge", "mail.challenge", "mail", methods=("POST",))
    async def challenges(request: Request) -> Response:
        if request.method in ("GET", "HEAD"):  # HEAD is a GET without its body, never a change
            me = await me_reading(request)
            if me is None:
                raise ClientError("not_logged_in", "log in first: challenges belong to an account", 401)
            return answer(await blocking(people.mine, me))
        me = await me_for_change(request)
        body = await jsonin.read_object(request, 4096, ClientError)
        return answer(await blocking(people.challenge, me, body, Who.of(request, me)), 201)

    @free("the caller's own choice, one row", methods=("GET", "HEAD", "POST"), writes=("people_prefs",))
    async def settings(request: Request) -> Response:
        if request.method in ("GET", "HEAD"):
            me = await me_reading(request)
            if me is None:
                raise ClientError("not_logged_in", "log in first: settings belong to an account", 401)
            return answer(await blocking(people.settings, me))
        me = await me_for_change(request)
        body = await jsonin.read_object(request, 4096, ClientError)
        return answer(await blocking(people.set_settings, me, body))

    # accepting creates the game through the room service, which asks its game.create budget (the
    # challenger's, who sent it); declining and cancelling change the challenge's own row
    @costs("game.create", methods=("POST",))
    async def act(request: Request) -> Response:
        me = await me_for_change(request)
        body = await jsonin.read_object(request, 4096, ClientError)  # empty: {}
        cid, what = request.path_params["id"], request.path_params["what"]
        if what == "accept":
            client = request.client.host if request.client else "?"
            data, change = await blocking(people.accept, me, cid, client)
            if change is not None:
                after(change)
            return answer(data)
        if what == "decline":
            return answer(await blocking(people.decide, me, cid, "declined", body.get("reason")))
        if what == "cancel":
            return answer(await blocking(people.decide, me, cid, "cancelled"))
        raise ClientError("not_found", "a challenge can be accepted, declined or cancelled", 404)

    return [
        Route("/api/people/follow", follow, methods=["POST"]),
        Route("/api/people/block", block, methods=["POST"]),
        Route("/api/people/{name}", person),
        Route("/api/challenges", challenges, methods=["GET", "POST"]),
        Route("/api/challenges/settings", settings, methods=["GET", "POST"]),
        Route("/api/challenges/{id}/{what}", act, methods=["POST"]),
    ]
