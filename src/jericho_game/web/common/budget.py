"""One budget policy for every costly action (issue 51; docs/web.md, "Budgets").

Every action that costs the server or another person declares here what it may spend, in
:data:`BUDGETS`: per client group (an IPv6 /64, an IPv4 address or /N:
:func:`jericho_game.web.common.fairshare.client_group`), per account, per recipient (the person or
thing it reaches), per pair (one client towards one recipient) and in total.  Whatever spends one
asks :class:`BudgetPolicy` first, so a limit, its refusal and its count live in one place, and a
new feature cannot forget a case that an older one remembered.

Three ways of counting, each where its truth lives:

- ``ledger``: one row of ``budget_spend`` per action, written in the transaction that does the
  action and counted over a sliding window (mails, challenges, follows, sign-ups, joins): every
  process sees every other's.
- ``live``: what lasts (an AI game being played, a review waiting, an open seek): counted in the
  feature's own tables, in the transaction that adds one, by a counter the feature registers
  (:meth:`BudgetPolicy.live`) or hands over (``counts=``).
- ``process``: work that runs on this process's own threads (a position search, an export): held
  while it runs (:meth:`BudgetPolicy.hold`, :meth:`BudgetPolicy.run`) and counted in memory, per
  process, as the WebSocket connections are (:class:`jericho_game.web.common.fairshare.SocketCaps`):
  it is this process's CPU it takes, and it runs on a small pool of its own, never the shared one.

Every route declares what it costs: :func:`costs` names the budgets a route asks, :func:`free`
says why a route costs nothing worth a budget.  ``tests/web/common/test_budget_routes.py`` walks
every route of the app and fails on one that declares nothing, on a costly one that is not refused
when its budgets are zero (:func:`zeroed`), and on a free one that writes more than it says.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table, text
from sqlalchemy.engine import Connection

from jericho_game.web.common.errors import ClientError
from jericho_game.web.common.fairshare import address_of

__all__ = [
    "BUDGETS",
    "Budget",
    "BudgetPolicy",
    "Counts",
    "Declared",
    "OverBudget",
    "Who",
    "costs",
    "declared",
    "free",
    "zeroed",
]

HOUR = 3600.0
DAY = 24 * HOUR

#: The scopes a budget may limit, in the order they are judged (the narrowest first: the refusal
#: names the most particular limit reached).
SCOPES = ("pair", "recipient", "account", "group", "total")
_SAYS = {
    "pair": "from you to this {recipient}",
    "recipient": "to this {recipient}",
    "account": "by your account",
    "group": "from your address",
    "client": "from your address or account",
    "total": "on this server",
}


@dataclass(frozen=True)
class Budget:
    """What one kind of costly action may spend.  A limit of None is no limit in that scope; counts
    and limits are in ``unit`` (games, mails, seconds of thought...)."""

    kind: str
    action: str  # what is counted, for people: "AI games being played"
    counted: str  # "ledger", "live" or "process" (see the module's docstring)
    unit: str
    per_group: float | None = None
    per_account: float | None = None
    per_recipient: float | None = None
    per_pair: float | None = None
    total: float | None = None
    window: float | None = None  # ledger: seconds counted back from now
    code: str = "over_budget"
    status: int = 429
    hint: str = "wait a while and try again"
    recipient: str = "player"  # what a recipient is, for the message: "player", "tournament"
    setting: str = ""  # where an operator changes it (a flag of `jericho serve`, or the field here)
    on_excess: str = ""  # what happens past it, for the docs' table (default: refused, nothing changed)

    def limit(self, scope: str) -> float | None:
        """The limit of ``scope`` (one of :data:`SCOPES`)."""
        value: float | None = getattr(self, "total" if scope == "total" else f"per_{scope}")
        return value

    def when(self) -> str:
        """The period a count covers, for people: "at once", "in the last hour"..."""
        if self.window is None:
            return "at once"
        if self.window % DAY == 0:
            days = int(self.window // DAY)
            return "in the last day" if days == 1 else f"in the last {days} days"
        if self.window % HOUR == 0:
            hours = int(self.window // HOUR)
            return "in the last hour" if hours == 1 else f"in the last {hours} hours"
        if self.window % 60 == 0:
            return f"in the last {self.window / 60:g} minutes"
        return f"in the last {self.window:g} seconds"


@dataclass(frozen=True)
class Who:
    """Who asks: the client group of its address and, when logged in, its account."""

    group: str
    account: int | None = None

    @classmethod
    def of(cls, conn: Any, account: int | None = None) -> Who:
        """The client of a request or WebSocket (:func:`fairshare.address_of`) with ``account``."""
        return cls(address_of(conn), account)


@dataclass
class Counts:
    """How much a client has spent of one budget, scope by scope (None: not counted there)."""

    group: float | None = None
    account: float | None = None
    recipient: float | None = None
    pair: float | None = None
    total: float | None = None

    def of(self, scope: str) -> float | None:
        value: float | None = getattr(self, scope)
        return value


class OverBudget(ClientError):
    """A request past one of its budgets: nothing was changed.  ``kind`` names the budget and
    ``scope`` the limit reached (:data:`SCOPES`)."""

    def __init__(self, budget: Budget, scope: str, have: float, limit: float) -> None:
        says = _SAYS[scope].format(recipient=budget.recipient)
        amount = f"{have:g} {budget.unit}" if budget.unit else f"{have:g}"
        message = (
            f"{budget.action} {says} {budget.when()}: {amount}, the most there may be is {limit:g}; "
            f"{budget.hint}; nothing was changed"
        )
        super().__init__(budget.code, message[:1].upper() + message[1:], budget.status)
        self.kind = budget.kind
        self.scope = scope
        self.have = have
        self.limit = limit


# -- the table of every budget ------------------------------------------------------------------------

_B = Budget
#: Every costly action's budget, by kind.  docs/web.md, "Budgets", holds this table (a test checks).
BUDGETS: dict[str, Budget] = {
    b.kind: b
    for b in [
        # -- games (web/round/rooms.py) --
        _B(
            "game.create",
            "new games",
            "ledger",
            "games",
            per_group=60,
            window=60.0,
            code="rate_limited",
            hint="wait a minute",
            setting="`--max-creates-per-minute`",
        ),
        # -- the AI (web/round/rooms.py; the lanes' admission is fairshare.AIBudget) --
        _B(
            "ai.game",
            "AI games being played",
            "live",
            "games",
            per_group=4,
            per_account=4,
            code="ai_games",
            hint="finish, resign or abort one of them first",
            setting="`--ai-games-per-client`",
            on_excess="`ai_games` (429), nothing created; a game whose player has not moved in 60 s counts no more "
            "and is aborted",
        ),
        _B(
            "ai.share",
            "share of a lane's AI thought held by your games",
            "live",
            "of the lane",
            per_group=0.5,
            per_account=0.5,
            code="ai_full",
            status=503,
            hint="choose an easier level or try again in a few minutes",
            setting="`BUDGETS['ai.share']` (a share of the lane's room, `--ai-budget` per slot)",
            on_excess="`ai_full` (503), nothing created: one client holds at most half a lane (and always one game)",
        ),
        _B(
            "ai.wait",
            "games waiting for the AI's reply",
            "live",
            "games",
            per_group=2,
            per_account=2,
            code="ai_quota",
            hint="wait for a reply, then play",
            setting="`--ai-per-client`",
        ),
        _B(
            "review",
            "game reviews waiting or running",
            "live",
            "reviews",
            per_group=2,
            per_account=2,
            total=16,
            code="review_quota",
            hint="wait for one to finish",
            setting="`--reviews-per-client`, `Limits.review_queue` (total: `busy`, 503)",
        ),
        _B(
            "analysis",
            "analysis board streams started",
            "ledger",
            "streams",
            per_group=240,
            per_account=240,
            window=HOUR,
            code="rate_limited",
            hint="wait a while before analysing again",
            setting="`BUDGETS['analysis']` (one stream runs per client: a new one replaces the old)",
        ),
        # -- searching and exporting (web/people/gamesearch.py): on this process's threads --
        _B(
            "search",
            "game searches running",
            "process",
            "searches",
            per_group=1,
            per_account=1,
            total=2,
            code="search_busy",
            hint="wait for your search to finish",
            setting="`BUDGETS['search']` (per server process)",
        ),
        _B(
            "export",
            "game exports running",
            "process",
            "exports",
            per_group=1,
            per_account=1,
            total=2,
            code="search_busy",
            hint="wait for your download to finish",
            setting="`BUDGETS['export']` (per server process)",
        ),
        # -- mail (web/social/notify.py): every kind counts in the server's hourly budget too --
        _B(
            "mail",
            "mails queued",
            "ledger",
            "mails",
            total=1000,
            window=HOUR,
            code="mail_budget",
            status=503,
            hint="try again later",
            setting="`BUDGETS['mail']`",
            on_excess="`mail_budget` (503), nothing changed; a turn or challenge mail is dropped, its move or "
            "challenge kept",
        ),
        _B(
            "mail.challenge",
            "challenge mails",
            "ledger",
            "mails",
            per_group=30,
            per_account=20,
            per_recipient=10,
            window=HOUR,
            code="mail_recipient_quota",
            setting="`BUDGETS['mail.challenge']`",
            on_excess="the challenge is made, its mail not sent",
        ),
        _B(
            "mail.confirm",
            "confirmation mails",
            "ledger",
            "mails",
            per_account=5,
            per_recipient=3,
            window=DAY,
            code="mail_recipient_quota",
            hint="wait until tomorrow",
            recipient="address",
            setting="`BUDGETS['mail.confirm']`",
            on_excess="`mail_recipient_quota` (429; per account `mail_account_quota`), nothing changed",
        ),
        _B(
            "mail.invite",
            "invitations by mail",
            "ledger",
            "invitations",
            per_account=20,
            per_recipient=10,
            window=HOUR,
            code="mail_recipient_quota",
            hint="share the game's link instead, or try later",
            setting="`BUDGETS['mail.invite']`",
            on_excess="`mail_recipient_quota` (429; per account `rate_limited`), nothing sent; counted whether or not "
            "the player takes mail (which is not told)",
        ),
        _B(
            "mail.sender",
            "confirmation and invitation mails asked for",
            "ledger",
            "mails",
            per_group=30,
            window=HOUR,
            code="mail_sender_quota",
            setting="`BUDGETS['mail.sender']`",
        ),
        # -- people (web/people/people.py) --
        _B(
            "challenge",
            "challenges sent",
            "ledger",
            "challenges",
            per_group=40,
            per_account=20,
            per_recipient=30,
            per_pair=6,
            window=HOUR,
            code="rate_limited",
            setting="`BUDGETS['challenge']`",
        ),
        _B(
            "challenge.pending",
            "challenges waiting for an answer",
            "live",
            "challenges",
            per_account=5,
            per_recipient=10,
            code="too_many_challenges",
            hint="cancel one or wait for the answers",
            setting="`BUDGETS['challenge.pending']`",
        ),
        _B(
            "follow",
            "follows",
            "ledger",
            "follows",
            per_group=100,
            per_account=60,
            per_recipient=30,
            window=HOUR,
            code="rate_limited",
            setting="`BUDGETS['follow']` (and `PeoplePolicy.max_follows` followed at most)",
        ),
        # -- the games' chat (web/social/chat.py) --
        _B(
            "chat.message",
            "chat messages",
            "ledger",
            "messages",
            per_group=20,
            per_account=10,
            per_pair=5,
            window=10.0,
            code="rate_limited",
            hint="wait a moment",
            recipient="game",
            setting="`BUDGETS['chat.message']` (pair: an author in one game; group: anonymous authors only)",
            on_excess="`rate_limited`, nothing sent",
        ),
        _B(
            "chat.report",
            "chat reports",
            "ledger",
            "reports",
            per_group=20,
            per_account=10,
            per_pair=10,
            window=HOUR,
            code="rate_limited",
            hint="wait",
            recipient="game",
            setting="`BUDGETS['chat.report']` (pair: an anonymous player's reports in its game)",
            on_excess="`rate_limited`, nothing stored",
        ),
        # -- accounts (web/accounts/accounts.py) --
        _B(
            "signup",
            "accounts created",
            "ledger",
            "accounts",
            per_group=5,
            total=300,
            window=HOUR,
            code="rate_limited",
            hint="try again in an hour",
            setting="`BUDGETS['signup']`",
        ),
        _B(
            "login",
            "password checks (log-in, sign-up) waiting or running",
            "process",
            "checks",
            per_group=1,
            code="rate_limited",
            hint="wait for the answer to the first",
            setting="`BUDGETS['login']` (per server process; the checks' own pool: `HashPool(workers, queue)`)",
            on_excess="`rate_limited` (429) at once, nothing checked or counted; the pool's line serves quiet "
            "address groups first",
        ),
        # -- tournaments (web/tournaments/tournaments.py) --
        _B(
            "tournament.create",
            "tournaments created",
            "ledger",
            "tournaments",
            per_group=6,
            per_account=6,
            total=200,
            window=DAY,
            code="too_many_tournaments",
            setting="`BUDGETS['tournament.create']` (and 3 not yet finished per account: "
            "`TournamentPolicy.open_per_account`)",
        ),
        _B(
            "tournament.join",
            "players joined to one tournament",
            "ledger",
            "players",
            per_pair=3,
            per_group=60,
            window=DAY,
            code="tournament_join_quota",
            recipient="tournament",
            setting="`BUDGETS['tournament.join']`",
        ),
        # -- the lobby and correspondence (web/round/rooms.py, web/round/correspondence.py) --
        _B(
            "seek",
            "open seeks in the lobby",
            "live",
            "seeks",
            per_group=3,
            per_account=3,
            code="seek_quota",
            hint="wait for an opponent or cancel one",
            setting="`--seeks-per-client`",
        ),
        # -- puzzles (web/learn/puzzles.py) --
        _B(
            "puzzle.rated",
            "rated puzzle attempts",
            "ledger",
            "attempts",
            per_group=60,
            per_account=30,
            window=600.0,
            code="puzzle_rate",
            setting="`BUDGETS['puzzle.rated']`",
            on_excess="`puzzle_rate` (429), nothing rated",
        ),
    ]
}


def zeroed(budgets: Mapping[str, Budget] = BUDGETS) -> dict[str, Budget]:
    """Every budget with every limit it sets at zero: any action that asks is refused (the route
    walk's way of seeing which routes ask)."""
    limits = ("per_group", "per_account", "per_recipient", "per_pair", "total")
    out = {}
    for kind, b in budgets.items():
        zero: dict[str, Any] = {f.name: 0 for f in fields(b) if f.name in limits and getattr(b, f.name) is not None}
        out[kind] = replace(b, **zero)
    return out


# -- the ledger --------------------------------------------------------------------------------------

budget_metadata = MetaData()
spend_table = Table(
    "budget_spend",
    budget_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(32), nullable=False),
    Column("grp", String(64), nullable=False),
    Column("account", Integer, nullable=True),
    Column("recipient", String(64), nullable=True),
    Column("cost", Float, nullable=False),
    Column("at", Float, nullable=False),
)
Index("budget_spend_group", spend_table.c.kind, spend_table.c.grp, spend_table.c.at)
Index("budget_spend_account", spend_table.c.kind, spend_table.c.account, spend_table.c.at)
Index("budget_spend_recipient", spend_table.c.kind, spend_table.c.recipient, spend_table.c.at)
Index("budget_spend_at", spend_table.c.at)

_SUM = "SELECT COALESCE(SUM(cost), 0) FROM budget_spend WHERE kind = :kind AND at > :since"
_PRUNE_EVERY = 200  # asks between two deletions of rows older than every window

#: A live counter: (connection, kind's budget, who, recipient, now) -> counts.
LiveCounter = Callable[[Connection, Budget, Who, "str | None", float], Counts]

F = TypeVar("F", bound=Callable[..., Any])


class BudgetPolicy:
    """Asked before every costly action; refuses with :class:`OverBudget` (nothing changed).

    ``storage``: the :class:`jericho_game.web.storage.database.Storage` whose database holds the
    ledger (its table is created here when missing); ``budgets``: the table (default
    :data:`BUDGETS`); ``clock``: wall time (tests fake it)."""

    def __init__(
        self,
        storage: Any,
        budgets: Mapping[str, Budget] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.storage = storage
        self.budgets: dict[str, Budget] = dict(BUDGETS if budgets is None else budgets)
        self.clock = clock
        self.refused: Counter[str] = Counter()  # refusals by kind, since the process started
        self._live: dict[str, LiveCounter] = {}
        self._held: dict[str, Counter[Any]] = {}
        self._lock = threading.RLock()  # judge() counts a refusal under it, inside take()
        self._pools: dict[str, ThreadPoolExecutor] = {}
        self._asks = 0
        budget_metadata.create_all(storage.engine)

    # -- the table -------------------------------------------------------------------------------
    def __getitem__(self, kind: str) -> Budget:
        try:
            return self.budgets[kind]
        except KeyError:
            raise KeyError(f"no budget {kind!r}: declare it in jericho_game.web.common.budget.BUDGETS") from None

    def live(self, kind: str, counter: LiveCounter) -> None:
        """Register how a ``live`` budget is counted (in the feature's own tables)."""
        if self[kind].counted != "live":
            raise ValueError(f"budget {kind!r} is counted by {self[kind].counted}, not live")
        self._live[kind] = counter

    # -- asking ------------------------------------------------------------------------------------
    def judge(self, kind: str, counts: Counts, cost: float = 1.0) -> None:
        """Refuse (:class:`OverBudget`) when ``cost`` more would pass a limit of ``kind``, given
        what is already spent (``counts``)."""
        b = self[kind]
        for scope in SCOPES:
            limit, have = b.limit(scope), counts.of(scope)
            if limit is None or have is None:
                continue
            if have + cost > limit + 1e-9:
                with self._lock:
                    self.refused[kind] += 1
                raise OverBudget(b, scope, have, limit)

    def refuse(self, kind: str, scope: str, have: float, limit: float) -> OverBudget:
        """The refusal of ``kind`` for a count a feature made itself (counted among the refusals)."""
        with self._lock:
            self.refused[kind] += 1
        return OverBudget(self[kind], scope, have, limit)

    def ask(
        self,
        conn: Connection,
        kind: str,
        who: Who,
        *,
        recipient: str | int | None = None,
        cost: float = 1.0,
        counts: Counts | None = None,
    ) -> None:
        """Spend ``cost`` of ``kind`` for ``who`` (towards ``recipient``) in the transaction ``conn``
        of the action, or refuse with :class:`OverBudget` having written nothing.  A ledger budget
        writes its row here; a live one is counted by its registered counter or ``counts``."""
        b = self[kind]
        to = None if recipient is None else str(recipient)[:64]
        if b.counted == "process":
            raise ValueError(f"budget {kind!r} is held while it runs: use hold() or run()")
        if self.storage.postgres:  # asks of one kind on every process are counted one after another
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": "jericho-budget:" + kind})
        now = self.clock()
        if counts is None:
            if b.counted == "ledger":
                counts = self._ledger(conn, b, who, to, now)
            else:
                counter = self._live.get(kind)
                if counter is None:
                    raise LookupError(f"live budget {kind!r} has no counter: its feature registers one")
                counts = counter(conn, b, who, to, now)
        self.judge(kind, counts, cost)
        if b.counted == "ledger":
            conn.execute(
                spend_table.insert().values(
                    kind=kind, grp=who.group[:64], account=who.account, recipient=to, cost=cost, at=now
                )
            )
            self._prune(conn, now)

    def _ledger(self, conn: Connection, b: Budget, who: Who, to: str | None, now: float) -> Counts:
        since = now - float(b.window or HOUR)
        params: dict[str, Any] = {"kind": b.kind, "since": since, "g": who.group[:64], "a": who.account, "r": to}

        def total(where: str) -> float:
            return float(conn.execute(text(f"{_SUM} AND {where}" if where else _SUM), params).scalar_one())

        out = Counts()
        if b.per_group is not None:
            out.group = total("grp = :g")
        if b.per_account is not None and who.account is not None:
            out.account = total("account = :a")
        if b.per_recipient is not None and to is not None:
            out.recipient = total("recipient = :r")
        if b.per_pair is not None and to is not None:
            mine = "(grp = :g OR account = :a)" if who.account is not None else "grp = :g"
            out.pair = total(f"recipient = :r AND {mine}")
        if b.total is not None:
            out.total = total("")
        return out

    def _prune(self, conn: Connection, now: float) -> None:
        self._asks += 1
        if self._asks % _PRUNE_EVERY == 0:
            self.prune(conn)

    def prune(self, conn: Connection | None = None) -> int:
        """Delete the ledger's rows older than every window (done every few hundred asks); how many."""
        longest = max((b.window or 0.0) for b in self.budgets.values())
        sql, old = text("DELETE FROM budget_spend WHERE at < :old"), {"old": self.clock() - longest}
        if conn is not None:
            return int(conn.execute(sql, old).rowcount)
        with self.storage.engine.begin() as c:
            return int(c.execute(sql, old).rowcount)

    def spent(self, kind: str, who: Who, recipient: str | int | None = None) -> Counts:
        """What ``who`` has spent of the ledger budget ``kind`` (for pages and tests)."""
        b = self[kind]
        with self.storage.engine.connect() as conn:
            return self._ledger(conn, b, who, None if recipient is None else str(recipient)[:64], self.clock())

    # -- work held while it runs on this process --------------------------------------------------
    @contextmanager
    def hold(self, kind: str, who: Who) -> Iterator[None]:
        """Hold one of ``kind`` (a ``process`` budget) for ``who`` while the block runs, or refuse."""
        release = self.take(kind, who)
        try:
            yield
        finally:
            release()

    def take(self, kind: str, who: Who) -> Callable[[], None]:
        """Take one of ``kind`` (a ``process`` budget) for ``who``, or refuse; the function that gives
        it back (once, whoever calls it)."""
        b = self[kind]
        if b.counted != "process":
            raise ValueError(f"budget {kind!r} is counted by {b.counted}: use ask()")
        keys = [("group", who.group)] + ([("account", who.account)] if who.account is not None else [])
        with self._lock:
            held = self._held.setdefault(kind, Counter())
            counts = Counts(
                group=float(held[("group", who.group)]),
                account=float(held[("account", who.account)]) if who.account is not None else None,
                total=float(held["total"]),
            )
            self.judge(kind, counts)  # under the lock: two takes at once cannot both pass the last place
            for key in (*keys, "total"):
                held[key] += 1
        given = threading.Event()

        def release() -> None:
            with self._lock:
                if given.is_set():
                    return
                given.set()
                for key in (*keys, "total"):
                    held[key] -= 1
                    if held[key] <= 0:
                        del held[key]

        return release

    def executor(self, kind: str) -> ThreadPoolExecutor:
        """The threads of a ``process`` budget: as many as its total, apart from the shared pool (a
        slow search never holds a thread a move or a page needs)."""
        with self._lock:
            pool = self._pools.get(kind)
            if pool is None:
                size = max(1, int(self[kind].total or 1))
                pool = self._pools[kind] = ThreadPoolExecutor(size, thread_name_prefix=f"budget-{kind}")
            return pool

    async def run(self, kind: str, who: Who, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on ``kind``'s own threads, held in its budget until the thread is done (or
        refused): a client that goes away mid-way cannot start another while the first still runs."""
        release = self.take(kind, who)
        try:
            work = self.executor(kind).submit(fn, *args)
        except BaseException:
            release()
            raise
        work.add_done_callback(lambda _: release())
        return await asyncio.wrap_future(work)

    def close(self) -> None:
        """Stop the budgets' own threads (those running finish first)."""
        for pool in self._pools.values():
            pool.shutdown(wait=True)
        self._pools.clear()


# -- what each route costs -----------------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    """What a route costs, per method: the budgets it asks (empty: free, with ``why``)."""

    kinds: dict[str, tuple[str, ...]] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    writes: dict[str, tuple[str, ...]] = field(default_factory=dict)


ALL_METHODS = ("GET", "HEAD", "POST", "WS")


def _declare(fn: Any, methods: tuple[str, ...], kinds: tuple[str, ...], why: str, writes: tuple[str, ...]) -> None:
    old: Declared = getattr(fn, "__budget__", Declared())
    new = Declared(dict(old.kinds), dict(old.why), dict(old.writes))
    for m in methods:
        new.kinds[m] = kinds
        new.why[m] = why
        new.writes[m] = writes
    fn.__budget__ = new


def costs(*kinds: str, methods: tuple[str, ...] = ALL_METHODS) -> Callable[[F], F]:
    """Declare that a route's ``methods`` spend ``kinds`` (each a key of :data:`BUDGETS`): they ask
    the policy before they spend."""
    unknown = [k for k in kinds if k not in BUDGETS]
    if unknown or not kinds:
        raise ValueError(f"costs() names budgets of BUDGETS, not {unknown or 'none'}")

    def mark(fn: F) -> F:
        _declare(fn, methods, kinds, "", ())
        return fn

    return mark


def free(why: str, *, methods: tuple[str, ...] = ALL_METHODS, writes: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Declare that a route's ``methods`` cost nothing worth a budget, and ``why`` (bounded reads,
    one row of the caller's own...); ``writes``: the tables it may add rows to (the caller's own
    settings, its session)."""
    if not why:
        raise ValueError("free() says why the route costs nothing")

    def mark(fn: F) -> F:
        _declare(fn, methods, (), why, writes)
        return fn

    return mark


def declared(endpoint: Any) -> Declared | None:
    """What a route's endpoint declared (:func:`costs`, :func:`free`), or None."""
    found: Declared | None = getattr(endpoint, "__budget__", None)
    if found is None:  # a bound method's function
        found = getattr(getattr(endpoint, "__func__", None), "__budget__", None)
    return found


def from_limits(limits: Any, base: Mapping[str, Budget] = BUDGETS) -> dict[str, Budget]:
    """The table with an operator's flags applied (:class:`jericho_game.web.common.limits.Limits`:
    ``--ai-games-per-client``, ``--ai-per-client``, ``--reviews-per-client``, ``--seeks-per-client``,
    ``review_queue``), so each limit has one home whatever sets it."""
    out = dict(base)

    def per_client(kind: str, n: float | None, **more: Any) -> None:
        if kind in out:
            out[kind] = replace(out[kind], per_group=n, per_account=n, **more)

    if "game.create" in out and getattr(limits, "creates_per_minute", None) is not None:
        out["game.create"] = replace(out["game.create"], per_group=limits.creates_per_minute)
    per_client("ai.game", getattr(limits, "ai_games_per_client", None))
    per_client("ai.wait", getattr(limits, "ai_per_client", None))
    per_client("review", getattr(limits, "reviews_per_client", None), total=getattr(limits, "review_queue", None))
    per_client("seek", getattr(limits, "seeks_per_client", None))
    return out


def per_client(budgets: Mapping[str, Budget], kind: str) -> int | None:
    """A budget's per-client limit as an int (None: none), for the features that count it themselves."""
    b = budgets.get(kind)
    value = None if b is None else b.per_group if b.per_group is not None else b.per_account
    return None if value is None else int(value)


def markdown_table(budgets: Mapping[str, Budget] = BUDGETS) -> str:
    """The table of docs/web.md, "Budgets": one row per budget (a test keeps the two equal)."""

    def cell(value: float | None) -> str:
        return "—" if value is None else f"{value:g}"

    head = (
        "| budget | what is counted | counted in | per address group | per account | per recipient | per pair | "
        "in total | over | on excess | set by |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|"
    )
    rows = [head]
    for b in budgets.values():
        excess = b.on_excess or f"`{b.code}` ({b.status}), nothing changed"
        if f"`{b.code}`" not in excess:
            excess = f"`{b.code}` ({b.status}): {excess}"
        limits = " | ".join(cell(b.limit(s)) for s in ("group", "account", "recipient", "pair", "total"))
        what = f"{b.action} ({b.unit})"
        rows.append(f"| `{b.kind}` | {what} | {b.counted} | {limits} | {b.when()} | {excess} | {b.setting} |")
    return "\n".join(rows)


#: The limits an operator may set with ``jericho serve --budget KIND.SCOPE=N`` (``window`` in seconds).
SETTABLE = {"group": "per_group", "account": "per_account", "recipient": "per_recipient", "pair": "per_pair"}
SETTABLE.update(total="total", window="window")


def with_settings(budgets: Mapping[str, Budget], settings: list[str]) -> dict[str, Budget]:
    """The table with ``jericho serve --budget`` settings applied, each ``KIND.SCOPE=N`` (``none``:
    no limit in that scope), e.g. ``signup.group=20`` or ``search.total=4``; :class:`ValueError`
    naming what is wrong."""
    out = dict(budgets)
    for item in settings:
        name, sep, value = item.partition("=")
        kind, dot, scope = name.strip().rpartition(".")
        if not sep or not dot:
            raise ValueError(f"--budget takes KIND.SCOPE=N (e.g. signup.group=20), not {item[:60]!r}")
        if kind not in out:
            raise ValueError(f"--budget {item[:60]!r}: no budget {kind[:40]!r}; the budgets are {', '.join(out)}")
        if scope not in SETTABLE:
            raise ValueError(f"--budget {item[:60]!r}: the scope is one of {', '.join(SETTABLE)}, not {scope[:20]!r}")
        text_value = value.strip().lower()
        number: float | None
        if text_value == "none":
            number = None
        else:
            try:
                number = float(text_value)
            except ValueError:
                raise ValueError(f"--budget {item[:60]!r}: {value[:20]!r} is no number (or none)") from None
            if not number >= 0 or number == float("inf"):
                raise ValueError(f"--budget {item[:60]!r}: a limit is a number from 0 up")
        if scope == "window" and (number is None or number <= 0 or out[kind].counted != "ledger"):
            raise ValueError(f"--budget {item[:60]!r}: only a ledger budget has a window, of more than 0 seconds")
        changed: dict[str, Any] = {SETTABLE[scope]: number}
        out[kind] = replace(out[kind], **changed)
    return out
