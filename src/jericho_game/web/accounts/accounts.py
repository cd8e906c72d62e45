"""Accounts: sign-up and log-in, server-side sessions, CSRF tokens and the login throttle.

Accounts are optional: nobody needs one to play.  An account is a username and a password
hashed with Argon2id (argon2-cffi).  Logging in creates a *session*: a random 256-bit secret in
an HttpOnly, SameSite=Lax cookie (Secure over https); the database keeps only its SHA-256, with
the account, an expiry and the session's CSRF token.  Everything lives in the database, so any
server process on the same database recognises a session, and "log out everywhere" deletes
every session of the account.

CSRF: a request that changes something and carries a live session cookie must also carry the
session's CSRF token in the ``X-CSRF-Token`` header (the page reads it from ``GET /api/account``,
which another site cannot read); otherwise it is refused with 403 ``csrf``.  Log-in and sign-up,
which have no session yet, use a double-submit token: the ``jericho_csrf`` cookie, repeated in
the header.  A plain cross-site form post can set neither header, so it is always refused.

The throttle (counters in the database, shared by every process; see :class:`ThrottlePolicy`
and docs/web.md, "Accounts") slows password guessing per account *and* address, per address and
per account, without ever locking the owner out for longer than one window; it also bounds every
log-in, successful or not, per address and per account, and an account's live sessions.  Password
checks run on a small bounded pool of their own (web/accounts/hashpool.py), new passwords follow
web/accounts/passwords.py, and ``next`` after logging in is a same-origin path (:func:`safe_next`).
Passwords are never logged, stored in clear or echoed in any answer.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote, urlsplit

from jericho_game.extras import missing_extra

try:
    from argon2 import PasswordHasher
    from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
    from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table, inspect, text
    from sqlalchemy.engine import Connection
    from sqlalchemy.exc import IntegrityError, OperationalError
    from starlette.requests import HTTPConnection, Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ImportError as exc:
    raise missing_extra("accounts", "web", exc) from exc

from jericho_game.web import i18n
from jericho_game.web.accounts.hashpool import HashPool
from jericho_game.web.accounts.passwords import password_problem
from jericho_game.web.common import jsonin
from jericho_game.web.common.budget import BudgetPolicy, Who, costs, free
from jericho_game.web.common.fairshare import address_of
from jericho_game.web.round.rooms import ClientError
from jericho_game.web.storage.database import Storage

__all__ = [
    "Account",
    "AccountService",
    "Session",
    "ThrottlePolicy",
    "SESSION_COOKIE",
    "DEVICE_COOKIE",
    "CSRF_COOKIE",
    "CSRF_HEADER",
    "account_metadata",
    "account_routes",
    "check_username",
    "check_password",
    "safe_next",
]

SESSION_COOKIE = "jericho_session"
DEVICE_COOKIE = "jericho_device"  # a browser that logged in to an account before: first in the password line
DEVICE_DAYS = 365
CSRF_COOKIE = "jericho_csrf"  # before logging in: the double-submit token of log-in and sign-up
CSRF_HEADER = "x-csrf-token"
SESSION_DAYS = 30
NAME_TTL = 60.0  # seconds a process shows an account's name without reading it again (name_of)

account_metadata = MetaData()

accounts_table = Table(
    "accounts",
    account_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("username", String(24), nullable=False),  # as typed at sign-up
    Column("username_key", String(24), nullable=False, unique=True),  # lower case: names are case-blind
    Column("password_hash", String(255), nullable=False),  # Argon2id, with its salt and parameters
    Column("admin", Integer, nullable=False, default=0),
    Column("disabled", Integer, nullable=False, default=0),
    Column("created_at", Float, nullable=False),
    # Glicko-2 (web/accounts/ratings.py): changed only by a rated game's update
    Column("rating", Float, nullable=False, default=1500.0),
    Column("rd", Float, nullable=False, default=350.0),
    Column("volatility", Float, nullable=False, default=0.06),
    Column("rated_games", Integer, nullable=False, default=0),
    # the site's language the player chose (web/i18n/__init__.py), put back at every log-in; older tables
    # get it by ALTER TABLE (AccountService._migrate)
    Column("language", String(8), nullable=True),
)

sessions_table = Table(
    "sessions",
    account_metadata,
    Column("id_hash", String(64), primary_key=True),  # SHA-256 of the cookie: a leaked table opens nothing
    Column("account_id", Integer, nullable=False),
    Column("csrf", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
)
Index("sessions_account", sessions_table.c.account_id)

throttle_table = Table(
    "auth_throttle",
    account_metadata,
    Column("key", String(300), primary_key=True),  # "pair:NAME|ADDR", "addr:ADDR", "acct:NAME", "signup:ADDR", ...
    Column("count", Integer, nullable=False),
    Column("window_start", Float, nullable=False),
    Column("blocked_until", Float, nullable=True),
)

#: Browsers that logged in to an account (issue 33): the device cookie's SHA-256.  A log-in that brings
#: one waits for its password check before any other (web/accounts/hashpool.py).
devices_table = Table(
    "login_devices",
    account_metadata,
    Column("id_hash", String(64), primary_key=True),
    Column("account_id", Integer, nullable=False),
    Column("used_at", Float, nullable=False),
)
Index("login_devices_account", devices_table.c.account_id)

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{2,23}$")


_NAME_CHAR = re.compile(r"[A-Za-z0-9_-]")
#: Names a new account cannot take: fixed segments of the addresses that hold a username
#: (``/api/people/{name}`` is matched after ``/api/people/timeline``, ``/follow`` and ``/block``), so a
#: player of that name could never be looked up.  Refused as taken.
RESERVED_NAMES = frozenset({"timeline", "follow", "block"})


def check_username(name: Any) -> str:
    """The username, or :class:`ClientError` ``bad_username`` saying what is wrong (never cut to
    fit): 3-24 ASCII letters, digits, ``_`` or ``-``, starting with a letter or digit (no look-alikes,
    no invisible characters, safe in a URL)."""
    if not isinstance(name, str):
        raise ClientError("bad_username", "send the username as text")
    if len(name) > 24:
        raise ClientError("bad_username", f"a username is at most 24 characters: this one has {len(name)}")
    if len(name) < 3:
        raise ClientError("bad_username", f"a username has at least 3 characters: this one has {len(name)}")
    bad = next((c for c in name if not _NAME_CHAR.fullmatch(c)), None)
    if bad is not None:
        raise ClientError(
            "bad_username", f"a username holds only letters a-z, digits, '_' and '-': {bad!r} is not allowed"
        )
    if not _NAME_RE.match(name):
        raise ClientError("bad_username", f"a username starts with a letter or a digit, not {name[0]!r}")
    return name


def check_password(password: Any, username: str | None = None) -> str:
    """The new password, or :class:`ClientError` ``bad_password`` saying why (web/accounts/passwords.py:
    10 to 256 characters, not a common password; never quoted back)."""
    problem = password_problem(password, username)
    if problem is not None:
        raise ClientError("bad_password", problem)
    assert isinstance(password, str)
    return password


# "/" then anything but a second "/" or a backslash (browsers read both "//host" and "/\\host" as
# another site), with no backslash, whitespace or control character anywhere: Chromium drops tabs
# and newlines from a URL, so "/\t/host" went to "//host" (the audit's payloads)
_SAFE_PATH = re.compile(r"/(?![/\\])[^\\\s\x00-\x1f\x7f]*")


def safe_next(value: Any) -> str:
    """``value`` when it is a same-origin path to go to after logging in, else ``"/"``: never an
    open redirect (the log-in page's script applies the same rule, ``safeNext`` in account.js)."""
    if not isinstance(value, str) or len(value) > 2000 or not _SAFE_PATH.fullmatch(value):
        return "/"
    if re.search(r"%(?![0-9A-Fa-f]{2})", value):
        return "/"  # a broken escape, which the page's decodeURIComponent refuses too
    try:
        decoded = unquote(value, errors="strict")  # "/%2F%2Fhost" or "/%5Chost" must not become another site
    except UnicodeDecodeError:
        return "/"
    if not _SAFE_PATH.fullmatch(decoded) or urlsplit(value).netloc or urlsplit(decoded).netloc:
        return "/"
    return value


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class ThrottlePolicy:
    """How log-in and sign-up attempts are limited (every counter is a database row).

    - One address on one account: ``pair_free`` failures in a row are free; each further failure
      locks that pair for 2, 4, 8 ... seconds, at most ``pair_max_lock`` (15 minutes).  A success
      clears it; so does a day without failures.
    - One address, all accounts: at most ``address_failures`` failed log-ins per ``window``.
    - One account, all addresses: after ``account_failures`` failures in a ``window`` (a
      distributed attack), the account refuses, until the window ends, every address that has
      itself failed on it; an address that has not (the owner's phone, another network) still
      logs in at once.  So nobody is ever locked out for longer than one window.
    - Sign-up: at most ``signups_per_address`` attempts per ``signup_window`` per address, and
      ``signups_per_name`` per name.
    - Every log-in, successful or not: at most ``address_logins`` attempts per ``login_window``
      per address, and ``account_logins`` successful log-ins per ``login_window`` per account (a
      stranger without the password cannot use these up: only a success counts).  An account
      keeps at most ``sessions_per_account`` live sessions: a new one ends the oldest.

    An attempt counts as a failure the moment it is admitted (before the slow password check, and
    before it waits for the password pool), so parallel attempts cannot slip through together and a
    ``503 busy`` of a full pool counts like a wrong password, per address and per account (issue 33);
    a success takes it back.  A refused attempt (429) does not check the password and does not count.
    The admission also sets the attempt's place in the password pool's line: a browser with the
    account's device cookie first, then addresses without recent failures, then failing ones.
    """

    pair_free: int = 5
    pair_max_lock: float = 900.0
    address_failures: int = 50
    account_failures: int = 100
    window: float = 900.0
    signups_per_address: int = 10
    signups_per_name: int = 10
    signup_window: float = 3600.0
    # every log-in, successful or not (issue 22: successful ones were unlimited, 200 of them left
    # 201 live sessions and each cost a 64 MiB Argon2 check)
    address_logins: int = 30  # log-in attempts per address per login_window
    account_logins: int = 20  # successful log-ins per account per login_window
    login_window: float = 600.0
    sessions_per_account: int = 10  # live sessions of one account; a new one ends the oldest


@dataclass(frozen=True)
class Account:
    """A stored account (never its password hash outside this module)."""

    id: int
    username: str
    admin: bool
    rating: float
    rd: float
    rated_games: int
    language: str | None = None  # the player's language (en, fr), None until chosen: private

    def public(self) -> dict[str, Any]:
        """What anyone may see of the account."""
        return {
            "username": self.username,
            "admin": self.admin,
            "rating": round(self.rating),
            "rd": round(self.rd),
            "rated_games": self.rated_games,
        }


@dataclass(frozen=True)
class Session:
    """A live session: the account it logs in, and its CSRF token."""

    account: Account
    csrf: str


class Throttled(ClientError):
    """Too many attempts: try again in ``retry_after`` seconds."""

    def __init__(self, why: str, retry_after: float) -> None:
        wait = max(1, int(retry_after + 0.999))
        super().__init__("rate_limited", f"{why}: try again in {wait} s", 429)
        self.retry_after = wait


_ACCOUNT_COLUMNS = "id, username, admin, rating, rd, rated_games, language"
#: A sign-up's place in the password pool's line (web/accounts/hashpool.py): after the log-ins of
#: address groups without failures, before those of groups that failed.
SIGNUP = (1,)


def _account(row: Any) -> Account:
    lang = row[6] if row[6] in i18n.LANGUAGES else None
    return Account(int(row[0]), row[1], bool(row[2]), float(row[3]), float(row[4]), int(row[5]), lang)


class AccountService:
    """Accounts, sessions and the throttle over one :class:`Storage` (its engine, its own tables).

    Blocking methods (they hash passwords or write): the transport runs them off the event loop."""

    def __init__(
        self,
        storage: Storage,
        *,
        hasher: PasswordHasher | None = None,
        clock: Callable[[], float] = time.time,
        signup: bool = True,
        policy: ThrottlePolicy | None = None,
        budget: BudgetPolicy | None = None,
    ) -> None:
        self.storage = storage
        # sign-ups spend the budget `signup`, a password check holds one of `login` (web/common/budget.py)
        self.budget = budget if budget is not None else BudgetPolicy(storage, clock=clock)
        self.hasher = hasher or PasswordHasher()  # RFC 9106's low-memory profile: Argon2id, 64 MiB, t=3
        self.now = clock
        self.signup_open = signup
        self.policy = policy or ThrottlePolicy()
        self._names: dict[int, tuple[str, float]] = {}  # name and when read (name_of)
        self._dummy_hash: str | None = None
        # log-in and sign-up hash on a small bounded pool of their own (web/accounts/hashpool.py)
        self.hash_pool = HashPool(workers=2, queue=8)
        storage.create_tables(account_metadata)
        self._migrate()

    def _migrate(self) -> None:
        """Add the columns that account tables written by older versions lack (several processes
        may start at once: PostgreSQL's IF NOT EXISTS, SQLite's "duplicate column" ignored)."""
        have = {c["name"] for c in inspect(self.storage.engine).get_columns("accounts")}
        if "language" in have:
            return
        try:
            with self.storage.engine.begin() as conn:
                exists = "IF NOT EXISTS " if self.storage.postgres else ""
                conn.exec_driver_sql(f"ALTER TABLE accounts ADD COLUMN {exists}language VARCHAR(8)")
        except OperationalError as exc:
            if "duplicate column" not in str(exc).lower():
                raise

    @property
    def _dummy(self) -> str:
        """Checked when the name is unknown, so a wrong name costs as long as a wrong password."""
        if self._dummy_hash is None:
            self._dummy_hash = self.hasher.hash(secrets.token_urlsafe(16))
        return self._dummy_hash

    # -- throttle ---------------------------------------------------------------------------
    def _counter(self, conn: Connection, key: str, now: float, window: float) -> dict[str, Any]:
        """The row of ``key`` locked for this transaction, its window restarted when over."""
        conn.execute(
            text(
                "INSERT INTO auth_throttle (key, count, window_start, blocked_until) VALUES (:k, 0, :now, NULL) "
                "ON CONFLICT (key) DO NOTHING"
            ),
            {"k": key, "now": now},
        )
        lock = " FOR UPDATE" if self.storage.postgres else ""
        row = conn.execute(
            text("SELECT count, window_start, blocked_until FROM auth_throttle WHERE key = :k" + lock), {"k": key}
        ).one()
        out = {"key": key, "count": int(row[0]), "start": float(row[1]), "blocked": row[2]}
        if now - out["start"] >= window:
            out.update(count=0, start=now, blocked=None)
        return out

    def _put(self, conn: Connection, c: dict[str, Any]) -> None:
        conn.execute(
            text("UPDATE auth_throttle SET count = :n, window_start = :s, blocked_until = :b WHERE key = :k"),
            {"n": c["count"], "s": c["start"], "b": c["blocked"], "k": c["key"]},
        )

    def _admit_login(self, key: str, address: str, device: str | None = None) -> tuple[int, int, int]:
        """Refuse (:class:`Throttled`) or admit one log-in attempt, counted as a failure until it succeeds;
        its priority in the password pool's line (web/accounts/hashpool.py), the smallest first: (1 when
        the address group has failed log-ins in the window or on this account, else 0; the log-ins
        the group asked in the login window before this one; 0 for a browser known to the account by
        its device cookie, else 1).  Issue 51: a known device came first whatever its address did, so
        20 addresses logging in to accounts of their own with their device cookies kept honest
        log-ins out; now the quietest address group goes first."""
        p, now = self.policy, self.now()
        with self.storage.engine.begin() as conn:
            # a pair's window is a day: its failures in a row are forgotten after a quiet day
            pair = self._counter(conn, f"pair:{key}|{address}", now, 86400.0)
            addr = self._counter(conn, f"addr:{address}", now, p.window)
            acct = self._counter(conn, f"acct:{key}", now, p.window)
            if pair["blocked"] is not None and pair["blocked"] > now:
                raise Throttled("too many wrong passwords for this account from your address", pair["blocked"] - now)
            if addr["count"] >= p.address_failures:
                raise Throttled("too many failed log-ins from your address", addr["start"] + p.window - now)
            if acct["count"] >= p.account_failures and pair["count"] > 0:
                raise Throttled(
                    "this account is under attack and your address has failed on it", acct["start"] + p.window - now
                )
            tries = self._counter(conn, f"logins:{address}", now, p.login_window)
            if tries["count"] >= p.address_logins:
                raise Throttled("too many log-ins from your address", tries["start"] + p.login_window - now)
            ok = self._counter(conn, f"ok:{key}", now, p.login_window)
            if ok["count"] >= p.account_logins:
                raise Throttled("too many log-ins to this account", ok["start"] + p.login_window - now)
            failed = 0 if addr["count"] == 0 and pair["count"] == 0 else 1
            known = bool(device) and self._known_device(conn, key, device or "")
            priority = (failed, tries["count"], 0 if known else 1)
            tries["count"] += 1
            self._put(conn, tries)
            pair["count"] += 1
            if pair["count"] > p.pair_free:
                pair["blocked"] = now + min(2.0 ** (pair["count"] - p.pair_free), p.pair_max_lock)
            pair["start"] = now
            addr["count"] += 1
            acct["count"] += 1
            for c in (pair, addr, acct):
                self._put(conn, c)
            if secrets.randbelow(100) == 0:  # now and then, forget long-quiet counters
                conn.execute(
                    text(
                        "DELETE FROM auth_throttle WHERE window_start < :old AND (blocked_until IS NULL "
                        "OR blocked_until < :now)"
                    ),
                    {"old": now - 2 * 86400.0, "now": now},
                )
        return priority

    def _known_device(self, conn: Connection, key: str, device: str) -> bool:
        if not re.fullmatch(r"[A-Za-z0-9_-]{32,64}", device):
            return False
        row = conn.execute(
            text(
                "SELECT 1 FROM login_devices d JOIN accounts a ON a.id = d.account_id "
                "WHERE d.id_hash = :h AND a.username_key = :k"
            ),
            {"h": _hash_token(device), "k": key},
        ).first()
        return row is not None

    def remember_device(self, account_id: int, device: str | None) -> str:
        """After a successful log-in: the browser's device token (kept if it is already this account's,
        else a new one), stored as its SHA-256; an account keeps its 20 most recent devices."""
        now = self.now()
        with self.storage.engine.begin() as conn:
            if device and re.fullmatch(r"[A-Za-z0-9_-]{32,64}", device):
                n = conn.execute(
                    text("UPDATE login_devices SET used_at = :t WHERE id_hash = :h AND account_id = :a"),
                    {"t": now, "h": _hash_token(device), "a": account_id},
                ).rowcount
                if n == 1:
                    return device
            token = secrets.token_urlsafe(32)
            conn.execute(
                text("INSERT INTO login_devices (id_hash, account_id, used_at) VALUES (:h, :a, :t)"),
                {"h": _hash_token(token), "a": account_id, "t": now},
            )
            conn.execute(
                text(
                    "DELETE FROM login_devices WHERE account_id = :a AND id_hash NOT IN (SELECT id_hash FROM "
                    "login_devices WHERE account_id = :a ORDER BY used_at DESC LIMIT 20)"
                ),
                {"a": account_id},
            )
        return token

    def _admit_signup(self, key: str, address: str) -> None:
        p, now = self.policy, self.now()
        with self.storage.engine.begin() as conn:
            addr = self._counter(conn, f"signup:{address}", now, p.signup_window)
            name = self._counter(conn, f"signup-name:{key}", now, p.signup_window)
            if addr["count"] >= p.signups_per_address:
                raise Throttled("too many sign-ups from your address", addr["start"] + p.signup_window - now)
            if name["count"] >= p.signups_per_name:
                raise Throttled("too many sign-ups for this name", name["start"] + p.signup_window - now)
            addr["count"] += 1
            name["count"] += 1
            self._put(conn, addr)
            self._put(conn, name)

    def signup_budget(self, who: Who) -> None:
        """Refuse at once (the budget ``signup``'s :class:`OverBudget`, nothing changed) a sign-up that
        its address group or the server could not spend, before its password is hashed; the budget
        is spent, exactly, in the account's own transaction (:meth:`create_account`)."""
        self.budget.judge("signup", self.budget.spent("signup", who))

    # -- accounts ---------------------------------------------------------------------------
    def create_account(self, username: str, password: str, *, admin: bool = False, who: Who | None = None) -> Account:
        """Store a new account (``jericho user add`` and sign-up); 409 ``username_taken``.  ``who``: the
        client of a sign-up, which spends the budget ``signup`` in the same transaction (issue 51;
        ``jericho user add`` spends none)."""
        check_username(username)
        if username.lower() in RESERVED_NAMES:
            raise ClientError("username_taken", f"the username {username!r} is taken (the site's own)", 409)
        check_password(password, username)
        hashed = self.hasher.hash(password)
        try:
            with self.storage.engine.begin() as conn:
                if who is not None:
                    self.budget.ask(conn, "signup", who)
                result = conn.execute(
                    accounts_table.insert().values(
                        username=username,
                        username_key=username.lower(),
                        password_hash=hashed,
                        admin=int(admin),
                        disabled=0,
                        created_at=self.now(),
                        rating=1500.0,
                        rd=350.0,
                        volatility=0.06,
                        rated_games=0,
                    )
                )
                new_id = int(result.inserted_primary_key[0])
        except IntegrityError:
            raise ClientError("username_taken", f"the username {username!r} is taken", 409) from None
        found = self.get(new_id)
        assert found is not None
        return found

    def get(self, account_id: int) -> Account | None:
        """The account ``account_id``, if any."""
        with self.storage.reader.connect() as conn:
            row = conn.execute(
                text(f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE id = :id"), {"id": account_id}
            ).first()
        return _account(row) if row else None

    def find(self, username: str) -> Account | None:
        """The account named ``username`` (any case), if any."""
        if not isinstance(username, str) or len(username) > 24:
            return None
        with self.storage.reader.connect() as conn:
            row = conn.execute(
                text(f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE username_key = :k"), {"k": username.lower()}
            ).first()
        return _account(row) if row else None

    def set_language(self, account_id: int, language: Any) -> str:
        """Remember the account's language (one of :data:`i18n.LANGUAGES`); 400 ``bad_request`` else."""
        if language not in i18n.LANGUAGES:
            raise ClientError("bad_request", f"the language must be one of {', '.join(i18n.LANGUAGES)}")
        with self.storage.engine.begin() as conn:
            conn.execute(text("UPDATE accounts SET language = :l WHERE id = :id"), {"l": language, "id": account_id})
        return str(language)

    def name_of(self, account_id: int) -> str | None:
        """An account's username (cached for :data:`NAME_TTL` seconds: a name changes only when its
        account is closed, web/site/owndata.py, and another process then shows the new one soon)."""
        cached = self._names.get(account_id)
        if cached is not None and self.now() - cached[1] < NAME_TTL:
            return cached[0]
        acc = self.get(account_id)
        if acc is None:
            return None
        self._names[account_id] = (acc.username, self.now())
        return acc.username

    def forget_name(self, account_id: int) -> None:
        """Drop this process's cached name of an account (it was just closed)."""
        self._names.pop(account_id, None)

    def set_admin(self, username: str, admin: bool) -> Account:
        """Make an account an admin or not (``jericho user add --admin`` on an existing name)."""
        with self.storage.engine.begin() as conn:
            n = conn.execute(
                text("UPDATE accounts SET admin = :a WHERE username_key = :k"),
                {"a": int(admin), "k": username.lower()},
            ).rowcount
        if n != 1:
            raise ClientError("unknown_account", f"no account is named {username[:24]!r}", 404)
        found = self.find(username)
        assert found is not None
        return found

    def set_disabled(self, username: str, disabled: bool) -> None:
        """Disable (no log-in, every session ended) or enable an account."""
        acc = self.find(username)
        if acc is None:
            raise ClientError("unknown_account", f"no account is named {username[:24]!r}", 404)
        with self.storage.engine.begin() as conn:
            conn.execute(text("UPDATE accounts SET disabled = :d WHERE id = :id"), {"d": int(disabled), "id": acc.id})
            if disabled:
                conn.execute(text("DELETE FROM sessions WHERE account_id = :id"), {"id": acc.id})

    def set_password(self, username: str, password: str) -> None:
        """Give an account a new password and end all its sessions (``jericho user passwd``)."""
        acc = self.find(username)
        if acc is None:
            raise ClientError("unknown_account", f"no account is named {username[:24]!r}", 404)
        hashed = self.hasher.hash(check_password(password, acc.username))
        with self.storage.engine.begin() as conn:
            conn.execute(text("UPDATE accounts SET password_hash = :h WHERE id = :id"), {"h": hashed, "id": acc.id})
            conn.execute(text("DELETE FROM sessions WHERE account_id = :id"), {"id": acc.id})

    def list_accounts(self) -> list[Account]:
        """Every account, by name (``jericho user list``)."""
        with self.storage.reader.connect() as conn:
            rows = conn.execute(text(f"SELECT {_ACCOUNT_COLUMNS} FROM accounts ORDER BY username_key")).all()
        return [_account(r) for r in rows]

    # -- sign-up, log-in, sessions ----------------------------------------------------------
    def signup(self, username: Any, password: Any, address: str) -> tuple[Session, str]:
        """Create an account and log it in: the session and its cookie value."""
        if not self.signup_open:
            raise ClientError("signup_closed", "sign-up is disabled on this server: ask its admin for an account", 403)
        check_username(username)
        check_password(password, username)
        self._admit_signup(username.lower(), address)
        acc = self.create_account(username, password, who=Who(address))
        return self._new_session(acc)

    def login(self, username: Any, password: Any, address: str) -> tuple[Session, str]:
        """Check a password (throttled) and open a session: the session and its cookie value."""
        self.admit_login(username, password, address)
        return self.check_login(username, password, address)

    def admit_login(
        self, username: Any, password: Any, address: str, device: str | None = None
    ) -> tuple[int, int, int]:
        """The throttle's half of a log-in (the route runs it before the password pool): refused
        (:class:`Throttled`) or counted as a failure until it succeeds; the attempt's priority in the
        password pool's line (:meth:`_admit_login`)."""
        if not isinstance(username, str) or not isinstance(password, str) or len(password) > 256:
            raise ClientError("bad_login", "send a username and a password")
        return self._admit_login(username.lower()[:24], address, device)

    def check_login(self, username: str, password: str, address: str) -> tuple[Session, str]:
        """The password's half of an admitted log-in (:meth:`admit_login`): the session and its cookie."""
        key = username.lower()[:24]
        with self.storage.reader.connect() as conn:
            row = conn.execute(
                text("SELECT id, password_hash, disabled FROM accounts WHERE username_key = :k"), {"k": key}
            ).first()
        stored = row[1] if row is not None else self._dummy
        try:
            ok = self.hasher.verify(stored, password) and row is not None and not row[2]
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            ok = False
        if not ok:
            raise ClientError("bad_login", "wrong username or password", 401)
        with self.storage.engine.begin() as conn:
            # successful log-ins per account: checked again here, where parallel ones are serialised
            p, now = self.policy, self.now()
            ok = self._counter(conn, f"ok:{key}", now, p.login_window)
            if ok["count"] >= p.account_logins:
                raise Throttled("too many log-ins to this account", ok["start"] + p.login_window - now)
            ok["count"] += 1
            self._put(conn, ok)
            # the admitted attempt was counted as a failure: take it back
            conn.execute(text("DELETE FROM auth_throttle WHERE key = :k"), {"k": f"pair:{key}|{address}"})
            for k in (f"addr:{address}", f"acct:{key}"):
                conn.execute(text("UPDATE auth_throttle SET count = count - 1 WHERE key = :k AND count > 0"), {"k": k})
            if self.hasher.check_needs_rehash(stored):
                conn.execute(
                    text("UPDATE accounts SET password_hash = :h WHERE id = :id"),
                    {"h": self.hasher.hash(password), "id": row[0]},
                )
        acc = self.get(int(row[0]))
        assert acc is not None
        return self._new_session(acc)

    def _new_session(self, acc: Account) -> tuple[Session, str]:
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(24)
        now = self.now()
        with self.storage.engine.begin() as conn:
            if self.storage.postgres:  # one account's new sessions one at a time: the cap holds
                conn.execute(text("SELECT id FROM accounts WHERE id = :a FOR UPDATE"), {"a": acc.id})
            conn.execute(
                text("DELETE FROM sessions WHERE account_id = :a AND expires_at < :now"), {"a": acc.id, "now": now}
            )
            # at most sessions_per_account live sessions: this one and the newest others
            others = conn.execute(
                text("SELECT id_hash, created_at FROM sessions WHERE account_id = :a ORDER BY created_at DESC"),
                {"a": acc.id},
            ).all()
            for old, _ in others[max(0, self.policy.sessions_per_account - 1) :]:
                conn.execute(text("DELETE FROM sessions WHERE id_hash = :h"), {"h": old})
            # strictly after the account's newest session, so "the oldest" is always well defined
            stamp = max(now, float(others[0][1]) + 1e-6) if others else now
            conn.execute(
                sessions_table.insert().values(
                    id_hash=_hash_token(token),
                    account_id=acc.id,
                    csrf=csrf,
                    created_at=stamp,
                    expires_at=now + SESSION_DAYS * 86400.0,
                )
            )
        return Session(acc, csrf), token

    def session(self, token: str | None) -> Session | None:
        """The live session of a cookie value (None: no cookie, unknown, expired, or a disabled account)."""
        if not token or len(token) > 100:
            return None
        with self.storage.reader.connect() as conn:
            row = conn.execute(
                text(
                    "SELECT a.id, a.username, a.admin, a.rating, a.rd, a.rated_games, a.language, s.csrf "
                    "FROM sessions s "
                    "JOIN accounts a ON a.id = s.account_id "
                    "WHERE s.id_hash = :h AND s.expires_at > :now AND a.disabled = 0"
                ),
                {"h": _hash_token(token), "now": self.now()},
            ).first()
        return Session(_account(row), row[7]) if row else None

    def logout(self, token: str) -> None:
        """End one session."""
        with self.storage.engine.begin() as conn:
            conn.execute(text("DELETE FROM sessions WHERE id_hash = :h"), {"h": _hash_token(token)})

    def logout_everywhere(self, account_id: int) -> int:
        """End every session of the account (every browser, every server process); how many ended."""
        with self.storage.engine.begin() as conn:
            n = conn.execute(text("DELETE FROM sessions WHERE account_id = :a"), {"a": account_id}).rowcount
        return int(n)

    # -- requests -----------------------------------------------------------------------------
    def session_of(self, conn: HTTPConnection) -> Session | None:
        """The session of a request or WebSocket by its cookie.  A WebSocket from another site's page
        (its ``Origin`` is not this host) gets none: cookies must not act for a visitor there."""
        if conn.scope["type"] == "websocket":
            origin = conn.headers.get("origin")
            if origin and urlsplit(origin).netloc != conn.headers.get("host"):
                return None
        return self.session(conn.cookies.get(SESSION_COOKIE))

    def account_for_change(self, request: Request) -> Session | None:
        """The session a state-changing request acts for: None without a live session cookie;
        403 ``csrf`` when the cookie is live but the request lacks the session's CSRF token."""
        sess = self.session_of(request)
        if sess is not None and not _same(request.headers.get(CSRF_HEADER), sess.csrf):
            raise ClientError(
                "csrf", "this request carries your session but not its CSRF token: reload the page and try again", 403
            )
        return sess


def _same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(str(a).encode(), str(b).encode())


def _address(request: Request) -> str:
    # uvicorn has already replaced the peer by X-Forwarded-For when the proxy is trusted
    # (--forwarded-allow-ips); otherwise no client can choose the address it is counted against.
    # Counted by its group (issue 33): an IPv6 /64, an IPv4 /--ipv4-prefix
    return address_of(request)


async def _body(request: Request, limit: int = 4096) -> dict[str, Any]:
    return await jsonin.read_object(request, limit, ClientError)


def _set_session_cookie(request: Request, response: Response, token: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=SESSION_DAYS * 86400,
        path="/",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


def account_routes(accounts: AccountService, static: Any) -> list[Route]:
    """The account endpoints (``/api/account/...``); their pages are in :mod:`jericho_game.web.site.pages`."""

    async def blocking(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    def pre_session_csrf(request: Request) -> None:
        """Log-in and sign-up: the double-submit token (cookie and header must match), or the token of
        the session already open (logging in as someone else)."""
        sent = request.headers.get(CSRF_HEADER)
        if _same(sent, request.cookies.get(CSRF_COOKIE)):
            return
        sess = accounts.session_of(request)
        if sess is None or not _same(sent, sess.csrf):
            raise ClientError(
                "csrf", "this form lacks its CSRF token: open the page again (cookies must be enabled)", 403
            )

    def answer(request: Request, sess: Session, token: str, status: int = 200) -> Response:
        response = JSONResponse(
            {
                "account": sess.account.public(),
                "language": sess.account.language,
                "csrf": sess.csrf,
                "session_cap": accounts.policy.sessions_per_account,
            },
            status_code=status,
        )
        if sess.account.language:  # the account's language follows it into a new browser
            response.set_cookie(i18n.COOKIE, sess.account.language, max_age=365 * 86400, samesite="lax")
        old = request.cookies.get(SESSION_COOKIE)
        if old:
            accounts.logout(old)  # a new session id at every log-in: a planted cookie is worth nothing
        _set_session_cookie(request, response, token)
        return response

    @free("the visitor's own session or its log-in form's CSRF token (a cookie, no row)")
    async def me(request: Request) -> Response:
        sess = await blocking(accounts.session_of, request)
        if sess is not None:
            return JSONResponse(
                {
                    "account": sess.account.public(),
                    "language": sess.account.language,
                    "csrf": sess.csrf,
                    "signup": accounts.signup_open,
                },
                headers={"Cache-Control": "no-store"},
            )
        csrf = request.cookies.get(CSRF_COOKIE) or ""
        fresh = not re.fullmatch(r"[A-Za-z0-9_-]{32,64}", csrf)
        if fresh:
            csrf = secrets.token_urlsafe(32)
        response = JSONResponse(
            {"account": None, "csrf": csrf, "signup": accounts.signup_open}, headers={"Cache-Control": "no-store"}
        )
        if fresh:
            response.set_cookie(
                CSRF_COOKIE, csrf, path="/", httponly=True, samesite="lax", secure=request.url.scheme == "https"
            )
        return response

    @costs("signup", "login", methods=("POST",))
    async def signup(request: Request) -> Response:
        who = Who.of(request)
        # one password check at a time per address group (issue 51), taken before anything else
        with accounts.budget.hold("login", who):
            pre_session_csrf(request)
            data = await _body(request)
            await blocking(accounts.signup_budget, who)  # refused before the hash (issue 51: puppets)
            sess, token = await accounts.hash_pool.run(
                accounts.signup, data.get("username"), data.get("password"), _address(request), priority=SIGNUP
            )
        # a new account keeps the language its pages were read in
        lang = await blocking(accounts.set_language, sess.account.id, i18n.request_language(request))
        sess = Session(replace(sess.account, language=lang), sess.csrf)
        return answer(request, sess, token, 201)

    @costs("login", methods=("POST",))
    async def login(request: Request) -> Response:
        # one password check at a time per address group (issue 51: a group cannot hold the line's
        # places), refused at once before the throttle counts anything
        with accounts.budget.hold("login", Who.of(request)):
            pre_session_csrf(request)
            data = await _body(request)
            username, password, address = data.get("username"), data.get("password"), _address(request)
            device = request.cookies.get(DEVICE_COOKIE)
            # the throttle first, off the password pool (issue 33): a refused attempt takes no place in
            # its line, an admitted one counts as a failure until it succeeds (a `busy` below too), and
            # gets its place in the line: quiet address groups first, failing and busy ones last
            priority = await blocking(accounts.admit_login, username, password, address, device)
            # the password check on its own small pool: a burst of log-ins waits there (or is told
            # `busy`) and never holds up /healthz or anybody else's request
            sess, token = await accounts.hash_pool.run(
                accounts.check_login, username, password, address, priority=priority
            )
            device = await blocking(accounts.remember_device, sess.account.id, device)
        response = answer(request, sess, token)
        response.set_cookie(
            DEVICE_COOKIE,
            device,
            max_age=DEVICE_DAYS * 86400,
            path="/",
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )
        return response

    @free("ends the caller's own session (deletes its row)", methods=("POST",))
    async def logout(request: Request) -> Response:
        sess = await blocking(accounts.account_for_change, request)
        if sess is None:
            # no live session came with the request: touch no cookie (another site's form post
            # arrives without the Lax cookie, and must not be able to log the visitor out)
            return JSONResponse({"ok": True, "sessions_ended": 0})
        await blocking(accounts.logout, request.cookies.get(SESSION_COOKIE))
        response = JSONResponse({"ok": True, "sessions_ended": 1})
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
        return response

    @free("ends the caller's own sessions (deletes their rows)", methods=("POST",))
    async def logout_all(request: Request) -> Response:
        sess = await blocking(accounts.account_for_change, request)
        if sess is None:
            raise ClientError("not_logged_in", "log in first", 401)
        ended = await blocking(accounts.logout_everywhere, sess.account.id)
        response = JSONResponse({"ok": True, "sessions_ended": ended})
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
        return response

    @free("the caller's own account's language (one column of its row)", methods=("POST",))
    async def language(request: Request) -> Response:
        """The header's language switch, for a logged-in player: remembered on the account."""
        sess = await blocking(accounts.account_for_change, request)
        if sess is None:
            raise ClientError("not_logged_in", "log in first", 401)
        data = await _body(request)
        lang = await blocking(accounts.set_language, sess.account.id, data.get("language"))
        response = JSONResponse({"ok": True, "language": lang})
        response.set_cookie(i18n.COOKIE, lang, max_age=365 * 86400, samesite="lax")
        return response

    @free("an admin disables or enables one account (one column of its row)", methods=("POST",))
    async def admin_disable(request: Request) -> Response:
        sess = await blocking(accounts.account_for_change, request)
        if sess is None or not sess.account.admin:
            raise ClientError("not_admin", "only an admin may disable accounts", 403)
        data = await _body(request)
        name, disabled = data.get("username"), data.get("disabled", True)
        if not isinstance(name, str) or not isinstance(disabled, bool):
            raise ClientError("bad_request", "send {'username': NAME, 'disabled': true/false}")
        await blocking(accounts.set_disabled, name, disabled)
        return JSONResponse({"ok": True, "username": name, "disabled": disabled})

    return [
        Route("/api/account", me),
        Route("/api/account/signup", signup, methods=["POST"]),
        Route("/api/account/login", login, methods=["POST"]),
        Route("/api/account/logout", logout, methods=["POST"]),
        Route("/api/account/logout-all", logout_all, methods=["POST"]),
        Route("/api/account/language", language, methods=["POST"]),
        Route("/api/admin/disable", admin_disable, methods=["POST"]),
    ]
