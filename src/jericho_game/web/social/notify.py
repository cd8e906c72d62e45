"""Notifications by e-mail: an account's address (confirmed by a link), its per-kind switches, the
one-click unsubscribe, and the mail outbox that a background job sends through SMTP with retries.

The in-page notices, the sound and the browser's notifications live in the page
(``static/notify.js``); this module is the server's half, and it is off unless the server was
started with ``--smtp URL``.

- **Address.** An account may add one e-mail address (``POST /api/notify/settings``); it is
  *unconfirmed* until the link of the confirmation mail is followed (``GET
  /api/notify/confirm?token=...``; the token is random, stored only as its SHA-256, valid
  :attr:`MailPolicy.confirm_hours`).  Only a confirmed address is ever mailed anything but the
  confirmation itself.
- **Kinds.** ``turn`` (a correspondence game waits for the player's move) and ``invite`` (a
  player invited this account to a game by name, ``POST /api/notify/invite``); each has a
  switch, on by default.
- **Unsubscribe.** Every mail carries a link made of the account's unsubscribe secret and the
  mail's kind that turns that kind off without logging in (``all``: every kind, and the address is
  forgotten): a ``POST`` does it (RFC 8058's one click: ``List-Unsubscribe-Post:
  List-Unsubscribe=One-Click``), a ``GET`` changes nothing and leads to the page ``/unsubscribe``,
  whose button POSTs (mail scanners follow every link of a mail: issue 33).
- **Budgets** (issue 51): every mail of any kind asks the one budget policy
  (:mod:`jericho_game.web.common.budget`) in the transaction that queues it: ``mail`` (the server's
  total an hour) and its kind's own: ``mail.confirm`` (per address and per account a day),
  ``mail.invite`` (per invitee and per sender an hour, counted whether or not the invitee takes
  mail), ``mail.sender`` (confirmations and invitations asked for from one address group an hour)
  and ``mail.challenge`` (web/people/people.py).  A confirmation or an invitation past its budget is
  refused with its code (nothing changed); a turn or challenge mail past it is not sent, and its
  move or challenge stands.
- **Outbox.** Nothing is ever sent from a request: a mail is a row of ``mail_outbox`` written in
  the transaction of whatever caused it (so it exists if and only if that change committed).
  Every server process runs :meth:`Notifier.run`, which claims due rows with a lease (``FOR
  UPDATE SKIP LOCKED`` on PostgreSQL), sends each on a thread, and marks it sent, or schedules
  a retry with a doubling delay (a 4xx answer or a connection failure), or gives up (a 5xx answer
  or :attr:`MailPolicy.max_attempts` tries).  A process killed between sending and marking leaves
  the row to be sent again once its lease runs out: at least once, never lost.
"""

from __future__ import annotations

import asyncio
import email.policy
import hashlib
import logging
import os
import re
import secrets
import smtplib
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any
from urllib.parse import parse_qs, parse_qsl, unquote, urlencode, urlsplit

from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table, Text, inspect, text
from sqlalchemy.engine import Connection
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from jericho_game.web import i18n
from jericho_game.web.accounts.accounts import AccountService
from jericho_game.web.common import jsonin
from jericho_game.web.common.budget import BudgetPolicy, OverBudget, Who, costs, free
from jericho_game.web.common.fairshare import address_of
from jericho_game.web.round.gameroom import ClientError, same_secret

__all__ = [
    "KINDS",
    "MailPolicy",
    "Notifier",
    "SmtpConfig",
    "check_email",
    "check_public_url",
    "notify_metadata",
    "notify_routes",
]

log = logging.getLogger("jericho_game.web")

KINDS = ("turn", "invite")  # the mails a player can switch off; the confirmation mail is always sent

notify_metadata = MetaData()

mail_prefs = Table(
    "mail_prefs",
    notify_metadata,
    Column("account_id", Integer, primary_key=True),
    Column("email", String(254), nullable=True),
    Column("confirmed", Integer, nullable=False, default=0),
    Column("confirm_hash", String(64), nullable=True),  # SHA-256 of the confirmation link's token
    Column("confirm_until", Float, nullable=True),
    Column("confirm_sent_at", Float, nullable=True),  # a new confirmation mail at most every minute
    Column("unsub", String(64), nullable=False),  # the secret of the one-click unsubscribe links
    Column("turn", Integer, nullable=False, default=1),
    Column("invite", Integer, nullable=False, default=1),
    Column("lang", String(8), nullable=False, default="en"),  # the language the mails are written in
    # the address the player used (kept for older databases); the links use --public-url only (issue 33)
    Column("site", String(300), nullable=False),
)
Index("mail_prefs_confirm", mail_prefs.c.confirm_hash)
Index("mail_prefs_unsub", mail_prefs.c.unsub)

mail_outbox = Table(
    "mail_outbox",
    notify_metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dedupe", String(200), nullable=True, unique=True),  # one mail per event (e.g. one invitation)
    Column("account_id", Integer, nullable=True),  # the recipient's account
    Column("sender_id", Integer, nullable=True),  # who caused it (an invitation's author)
    Column("sender_addr", String(64), nullable=True),  # the client address of the request that caused it (issue 33)
    Column("kind", String(16), nullable=False),  # confirm, turn, invite
    Column("to_addr", String(254), nullable=False),
    Column("subject", String(300), nullable=False),
    Column("body", Text, nullable=False),
    Column("unsubscribe", String(600), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("next_try", Float, nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("claimed_by", String(64), nullable=True),
    Column("lease_until", Float, nullable=True),
    Column("sent_at", Float, nullable=True),
    Column("failed_at", Float, nullable=True),  # given up: a permanent refusal, or too many tries
    Column("last_error", String(500), nullable=True),
)
Index("mail_outbox_due", mail_outbox.c.sent_at, mail_outbox.c.failed_at, mail_outbox.c.next_try)
Index("mail_outbox_created", mail_outbox.c.created_at)

# a practical address check: one @, no spaces or control characters (no header injection), a dot
# in the domain; the confirmation link is the real test
_EMAIL = re.compile(
    r"[^@\s\x00-\x1f\x7f<>,;:\"()\[\]\\]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+"
)


def check_email(value: Any) -> str:
    """The address, or :class:`ClientError` ``bad_email`` saying what is wrong with it."""
    if not isinstance(value, str) or len(value) > 254 or not _EMAIL.fullmatch(value.strip()):
        raise ClientError("bad_email", "an e-mail address looks like name@example.org (at most 254 characters)")
    return value.strip()


def check_public_url(value: str) -> str:
    """The site's public address (``--public-url``) without a trailing slash, or :class:`ValueError`."""
    if not re.fullmatch(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\s?#]*)?", value or ""):
        raise ValueError(
            f"--public-url must be the site's http(s) address, such as https://jericho.example.org, not {value[:60]!r}"
        )
    return value.rstrip("/")


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class MailPolicy:
    """How often mails are tried and how much a player may cause (docs/web.md, "Notifications")."""

    first_retry: float = 30.0  # seconds before the second try; doubled after every failure
    max_retry: float = 3600.0
    max_attempts: int = 8
    lease: float = 60.0  # a claimed mail is another process's again after this long
    poll: float = 5.0  # seconds between two looks at the outbox when nothing woke the sender
    confirm_hours: float = 48.0
    confirm_every: float = 60.0  # at most one confirmation mail a minute per account
    # How many mails each may cause (issue 33's floods) is a budget of the one policy (issue 51):
    # BUDGETS["mail"], ["mail.confirm"], ["mail.invite"], ["mail.sender"], ["mail.challenge"].


#: The codes a mail's budgets refuse with, where they differ from the budget's own (the codes of
#: issue 33's mail quotas, which clients know): a confirmation asked too often by one account, an
#: account sending too many invitations.
_CODES = {("mail.confirm", "account"): "mail_account_quota", ("mail.invite", "account"): "rate_limited"}

#: The headers a mail program reads as they are: folding ``List-Unsubscribe``'s one long URL made
#: Python's mail package encode it (RFC 2047, ``=?utf-8?q?=3Chttps...``), which no mail program
#: reads as a URL, so RFC 8058's one-click unsubscribe could not work (issue 51, finding 12).
_UNFOLDED = frozenset({"list-unsubscribe"})


class _MailPolicy(email.policy.EmailPolicy):
    """The SMTP policy (CRLF, lines folded at 78), except that the headers of :data:`_UNFOLDED`
    are written on one line as they are when they are ASCII (an ``<https://...>`` of at most
    600 characters: under RFC 5322's 998)."""

    def _plain(self, name: str, value: Any) -> str | None:
        text = f"{name}: {value}"
        if name.lower() in _UNFOLDED and text.isascii() and len(text) <= 998 and "\r" not in text and "\n" not in text:
            return text + self.linesep
        return None

    def fold(self, name: str, value: Any) -> str:
        return self._plain(name, value) or super().fold(name, value)

    def fold_binary(self, name: str, value: Any) -> bytes:
        plain = self._plain(name, value)
        return plain.encode("ascii") if plain is not None else super().fold_binary(name, value)


MAIL_POLICY = _MailPolicy(linesep="\r\n")


@dataclass(frozen=True)
class SmtpConfig:
    """Where mail goes: ``smtp://[user:password@]host[:port]`` (``smtp+starttls://`` upgrades the
    connection, ``smtps://`` is TLS from the start), with query parameters ``from`` (the sender
    address, default ``jericho@HOST``) and ``timeout`` (seconds, default 20).  The links in mails
    start with ``--public-url`` (issue 33; ``site=`` of earlier versions is refused, naming it)."""

    host: str
    port: int
    security: str  # "plain", "starttls" or "tls"
    user: str | None
    password: str | None
    sender: str
    timeout: float

    @classmethod
    def parse(cls, url: str) -> SmtpConfig:
        """The configuration of ``--smtp URL``; :class:`ValueError` naming what is wrong."""
        parts = urlsplit(url)
        security = {"smtp": "plain", "smtp+starttls": "starttls", "smtps": "tls"}.get(parts.scheme)
        if security is None:
            raise ValueError(
                f"--smtp must start with smtp://, smtp+starttls:// or smtps://, not {parts.scheme[:20]!r}://"
            )
        if not parts.hostname:
            raise ValueError("--smtp names no host (e.g. smtp://mail.example.org:587)")
        try:
            port = parts.port or (465 if security == "tls" else 587 if security == "starttls" else 25)
        except ValueError:
            raise ValueError("--smtp has a port that is not a number") from None
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if "site" in query:
            raise ValueError("--smtp: site= is no longer read: give the site's address as --public-url")
        unknown = set(query) - {"from", "timeout"}
        if unknown:
            raise ValueError(f"--smtp: unknown parameter(s) {', '.join(sorted(unknown))} (from, timeout)")
        sender = query.get("from") or f"jericho@{parts.hostname}"
        if "@" not in sender or any(c in sender for c in "\r\n"):
            raise ValueError(f"--smtp: from={sender[:60]!r} is not an address")
        try:
            timeout = float(query.get("timeout", 20))
        except ValueError:
            raise ValueError("--smtp: timeout must be seconds") from None
        return cls(
            host=parts.hostname,
            port=port,
            security=security,
            user=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            sender=sender,
            timeout=timeout,
        )

    def send(self, msg: EmailMessage) -> None:
        """Hand one message to the SMTP server (blocking: called on a thread)."""
        cls = smtplib.SMTP_SSL if self.security == "tls" else smtplib.SMTP
        with cls(self.host, self.port, timeout=self.timeout) as smtp:
            if self.security == "starttls":
                smtp.starttls()
            if self.user:
                smtp.login(self.user, self.password or "")
            smtp.send_message(msg)


class Notifier:
    """E-mail addresses and switches, the mails' queue and their sender (see the module's doc)."""

    def __init__(
        self,
        storage: Any,
        accounts: AccountService,
        smtp: SmtpConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
        policy: MailPolicy | None = None,
        public_url: str | None = None,
        budget: BudgetPolicy | None = None,
    ) -> None:
        self.storage = storage
        self.accounts = accounts
        self.smtp = smtp
        # issue 33: every link in a mail starts with the site's public address, never a request's Host
        if smtp is not None and not public_url:
            raise ValueError("--smtp needs --public-url: the links in mails are never built from a request's Host")
        self.public_url = check_public_url(public_url) if public_url else None
        self.now = clock
        self.policy = policy or MailPolicy()
        # issue 51: the one budget policy (web/common/budget.py) that every mail asks
        self.budget = budget if budget is not None else BudgetPolicy(storage, clock=clock)
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._wake: asyncio.Event | None = None
        # whether the first account blocked the second (web/people/people.py sets it): a blocked
        # player's invitations are not mailed (and the sender is not told)
        self.blocked: Callable[[Connection, int, int], bool] = lambda conn, blocker, blocked: False
        storage.create_tables(notify_metadata)
        self._migrate()

    def _migrate(self) -> None:
        """Add the columns that outboxes written by older versions lack (issue 33: ``sender_addr``)."""
        if "sender_addr" in {c["name"] for c in inspect(self.storage.engine).get_columns("mail_outbox")}:
            return
        try:
            with self.storage.engine.begin() as conn:
                conn.exec_driver_sql("ALTER TABLE mail_outbox ADD COLUMN sender_addr VARCHAR(64)")
        except Exception:  # noqa: BLE001 - another process added it at the same moment
            pass

    @property
    def enabled(self) -> bool:
        """Whether this server sends mail at all (``--smtp``)."""
        return self.smtp is not None

    # -- settings ------------------------------------------------------------------------------
    def _prefs(self, conn: Connection, account_id: int) -> dict[str, Any] | None:
        row = conn.execute(mail_prefs.select().where(mail_prefs.c.account_id == account_id)).mappings().first()
        return dict(row) if row is not None else None

    def settings(self, account_id: int) -> dict[str, Any]:
        """What ``GET /api/notify/settings`` answers: the address, whether it is confirmed, the switches."""
        with self.storage.reader.connect() as conn:
            p = self._prefs(conn, account_id)
        return {
            "email_enabled": self.enabled,
            "email": p["email"] if p else None,
            "confirmed": bool(p and p["email"] and p["confirmed"]),
            "kinds": {k: bool(p[k]) if p else True for k in KINDS},
        }

    def update(self, account_id: int, body: dict[str, Any], lang: str, address: str | None = None) -> dict[str, Any]:
        """Change the address (``"email"``: a new one is unconfirmed and gets a confirmation mail;
        null forgets it) and/or the switches (``"turn"``, ``"invite"``: true or false).  ``address``:
        the requesting client's address, which the mail quotas count (issue 33)."""
        unknown = set(body) - {"email", *KINDS}
        if unknown:
            raise ClientError("bad_request", f"unknown field(s): {', '.join(sorted(map(str, unknown)))}")
        for k in KINDS:
            if k in body and not isinstance(body[k], bool):
                raise ClientError("bad_request", f"{k} must be true or false")
        email = body.get("email")
        if "email" in body and email is not None:
            if not self.enabled:
                raise ClientError("email_off", "this server sends no e-mail (it was started without --smtp)", 409)
            email = check_email(email)
        now = self.now()
        site = self.public_url or ""  # never the request's address (issue 33)
        with self.storage.engine.begin() as conn:
            p = self._prefs(conn, account_id)
            if p is None:
                p = {"account_id": account_id, "unsub": secrets.token_urlsafe(24), "turn": 1, "invite": 1}
                p.update(email=None, confirmed=0, confirm_hash=None, confirm_until=None, confirm_sent_at=None)
                p.update(lang=lang, site=site)
                conn.execute(mail_prefs.insert().values(**p))
            changes: dict[str, Any] = {k: int(body[k]) for k in KINDS if k in body}
            changes["lang"], changes["site"] = lang, site
            token = None
            if "email" in body:
                if email is None:
                    changes.update(email=None, confirmed=0, confirm_hash=None, confirm_until=None)
                elif email != p["email"] or not p["confirmed"]:
                    sent = p.get("confirm_sent_at")
                    if sent is not None and now - sent < self.policy.confirm_every:
                        raise ClientError(
                            "too_soon",
                            f"a confirmation mail was sent less than {self.policy.confirm_every:g} s ago: "
                            "wait a minute; nothing was changed",
                            429,
                        )
                    who = Who(address or "?", account_id)
                    self._spend(conn, ("mail.confirm", "mail.sender"), who, email.lower())
                    token = secrets.token_urlsafe(24)
                    changes.update(
                        email=email,
                        confirmed=0,
                        confirm_hash=_hash(token),
                        confirm_until=now + self.policy.confirm_hours * 3600,
                        confirm_sent_at=now,
                    )
            conn.execute(mail_prefs.update().where(mail_prefs.c.account_id == account_id).values(**changes))
            if token is not None:
                p = {**p, **changes}
                self._queue_confirm(conn, p, token, address)
        self.wake()
        return self.settings(account_id)

    def confirm(self, token: str) -> bool:
        """Follow a confirmation link: the address is confirmed if the token is the latest, unexpired one."""
        if not token or len(token) > 100:
            return False
        with self.storage.engine.begin() as conn:
            n = conn.execute(
                mail_prefs.update()
                .where(mail_prefs.c.confirm_hash == _hash(token), mail_prefs.c.confirm_until >= self.now())
                .values(confirmed=1, confirm_hash=None, confirm_until=None)
            ).rowcount
        return bool(n == 1)

    def unsubscribe(self, secret: str, kind: str) -> bool:
        """A one-click unsubscribe: turn ``kind`` off (``all``: every kind, and forget the address)."""
        if kind not in (*KINDS, "all") or not secret or len(secret) > 100 or "\x00" in secret:
            return False  # no secret holds a NUL (a form's %00: PostgreSQL's text cannot hold one)
        values: dict[str, Any] = {kind: 0} if kind != "all" else {k: 0 for k in KINDS}
        if kind == "all":
            values.update(email=None, confirmed=0, confirm_hash=None, confirm_until=None)
        with self.storage.engine.begin() as conn:
            n = conn.execute(mail_prefs.update().where(mail_prefs.c.unsub == secret).values(**values)).rowcount
        return bool(n == 1)

    # -- queueing (inside the transaction of whatever caused the mail) ------------------------------
    def _site(self, p: dict[str, Any]) -> str:
        """The start of every link in a mail: ``--public-url`` (issue 33: never a request header)."""
        assert self.public_url is not None  # no mail is queued without --smtp, which needs it
        return self.public_url

    def _unsub_link(self, p: dict[str, Any], kind: str) -> str:
        return f"{self._site(p)}/api/notify/unsubscribe?{urlencode({'u': p['unsub'], 'kind': kind})}"

    def _put(
        self,
        conn: Connection,
        p: dict[str, Any],
        kind: str,
        subject: str,
        body: str,
        *,
        dedupe: str | None = None,
        sender: int | None = None,
        sender_addr: str | None = None,
    ) -> bool:
        unsub_kind = kind if kind in KINDS else "all"
        unsub = self._unsub_link(p, unsub_kind)
        tr = i18n.translations(p["lang"])
        footer = (
            tr.gettext("You get this mail because of your settings on Jericho.")
            if kind in KINDS
            else tr.gettext("If you did not ask for this, ignore this mail: nothing more will be sent.")
        )
        stop = (
            tr.gettext("Stop these mails (one click):")
            if kind in KINDS
            else tr.gettext("Never mail this address again (one click):")
        )
        body = f"{body}\n\n-- \n{footer}\n{stop} {unsub}\n"
        if self._queued(conn, dedupe):
            return False  # this event's mail exists already
        now = self.now()
        conn.execute(
            mail_outbox.insert().values(
                dedupe=dedupe,
                account_id=p["account_id"],
                sender_id=sender,
                sender_addr=sender_addr,
                kind=kind,
                to_addr=p["email"],
                subject=subject[:300],
                body=body,
                unsubscribe=unsub,
                created_at=now,
                next_try=now,
                attempts=0,
            )
        )
        return True

    def site_of(self, p: dict[str, Any]) -> str:
        """The site's address for the links of a mail to the account of preferences ``p``."""
        return self._site(p)

    def queue(
        self,
        conn: Connection,
        p: dict[str, Any],
        kind: str,
        subject: str,
        body: str,
        *,
        dedupe: str | None = None,
        sender: int | None = None,
        who: Who,
        budget: str,
    ) -> bool:
        """Queue a mail of ``kind`` to the account of preferences ``p`` (from :meth:`mailable`) in the
        transaction ``conn`` of whatever caused it (e.g. a challenge, web/people/people.py), if the
        budget ``budget`` (e.g. ``mail.challenge``) of ``who`` towards that account and the server's
        total allow it; whether it was queued.  Past a budget nothing is written and what caused the
        mail stands (the caller is not told: it is not theirs to know whether a player takes mail)."""
        if self._queued(conn, dedupe):
            return False
        try:
            with conn.begin_nested():  # a refusal by the second budget undoes the first's spending
                self._spend(conn, (budget,), who, p["account_id"])
        except OverBudget as exc:
            log.info("no %s mail to account %s: %s", kind, p["account_id"], exc.message)
            return False
        return self._put(conn, p, kind, subject, body, dedupe=dedupe, sender=sender, sender_addr=who.group)

    # -- mail floods (issues 33, 51): the budgets of the one policy ---------------------------------
    def _queued(self, conn: Connection, dedupe: str | None) -> bool:
        """Whether the mail of this event (``dedupe``) is in the outbox already."""
        if dedupe is None:
            return False
        return conn.execute(mail_outbox.select().where(mail_outbox.c.dedupe == dedupe)).first() is not None

    def _spend(
        self, conn: Connection, kinds: tuple[str, ...], who: Who, recipient: str | int | None, *, total: bool = True
    ) -> None:
        """Ask the budget policy for one mail (in the transaction ``conn`` that queues it): each of
        ``kinds`` from ``who`` towards ``recipient``, then (``total``) the server's ``mail``; refuse
        with :class:`OverBudget` (its code the mail quota's of issue 33, :data:`_CODES`) having
        written nothing of its own (docs/web.md, "Notifications")."""
        for kind in (*kinds, "mail") if total else kinds:
            try:
                self.budget.ask(conn, kind, who, recipient=None if kind == "mail" else recipient)
            except OverBudget as exc:
                exc.code = _CODES.get((kind, exc.scope), exc.code)
                raise

    def _queue_confirm(self, conn: Connection, p: dict[str, Any], token: str, address: str | None = None) -> None:
        tr = i18n.translations(p["lang"])
        link = f"{self._site(p)}/api/notify/confirm?{urlencode({'token': token})}"
        name = self.accounts.name_of(p["account_id"]) or "?"
        subject = tr.gettext("Confirm your e-mail address for Jericho")
        body = tr.gettext(
            "Hello {name},\n\nFollow this link to confirm that Jericho may write to this address:\n{link}\n\n"
            "The link works for {hours} hours."
        ).format(name=name, link=link, hours=round(self.policy.confirm_hours))
        self._put(conn, p, "confirm", subject, body, sender=p["account_id"], sender_addr=address)

    def mailable(self, conn: Connection, account_id: int, kind: str) -> dict[str, Any] | None:
        """The account's preferences when it takes mails of ``kind`` now (confirmed address, switch on,
        mail on this server), else None."""
        if not self.enabled:
            return None
        p = self._prefs(conn, account_id)
        if p is None or not p["email"] or not p["confirmed"] or not p[kind]:
            return None
        return p

    def queue_turn(self, conn: Connection, account_id: int, game_id: str, ply: int, opponent: str | None) -> bool:
        """Queue a "your turn" mail of a correspondence game (once per game and ply), if the account
        takes them; call it in the transaction of the move that made it the account's turn."""
        p = self.mailable(conn, account_id, "turn")
        if p is None:
            return False
        dedupe = f"turn:{game_id}:{ply}:{account_id}"
        if self._queued(conn, dedupe):
            return False
        try:  # the move is played; past the server's budget its mail is not sent (issue 33)
            self._spend(conn, (), Who("server"), None)
        except OverBudget:
            log.warning("the mail budget of this hour is spent: no turn mail for game %s", game_id)
            return False
        tr = i18n.translations(p["lang"])
        link = f"{self._site(p)}/g/{game_id}"
        who = opponent or tr.gettext("Your opponent")
        subject = tr.gettext("Jericho: your move against {name}").format(name=who)
        body = tr.gettext("{name} has moved: it is your turn.\n\nPlay it here: {link}").format(name=who, link=link)
        return self._put(conn, p, "turn", subject, body, dedupe=dedupe)

    def invite(self, sender: int, game_id: str, token: Any, username: Any, address: str | None = None) -> bool:
        """``sender`` (holding the creator's seat of a waiting invite-link game through ``token`` or
        its session) invites the account ``username``: an invitation mail with the join link, if
        that account takes invitations.  Whether it does is not told (an address is private)."""
        if not isinstance(username, str):
            raise ClientError("bad_request", "send {'game': ID, 'username': NAME}")
        target = self.accounts.find(username)
        if target is None:
            raise ClientError("unknown_account", f"there is no player named {username[:30]!r}", 404)
        if not isinstance(game_id, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", game_id):
            raise ClientError("unknown_game", "unknown game", 404)
        if token is not None and (not isinstance(token, str) or len(token) > 200):
            raise ClientError("bad_token", "token must be a string")
        rec = self.storage.load(game_id)
        if rec is None:
            raise ClientError("unknown_game", f"unknown game {game_id!r}: no game has this id", 404)
        seats = [
            s
            for s in ("south", "north")
            if getattr(rec, f"{s}_account") == sender
            or (token and getattr(rec, f"{s}_token") and same_secret(token, getattr(rec, f"{s}_token")))
        ]
        if not seats:
            raise ClientError("not_your_game", "only a player of this game may invite someone to it", 403)
        if rec.mode != "online" or rec.public or rec.joined or not rec.invite or rec.result or rec.reason:
            raise ClientError(
                "not_invitable", "only an online game waiting for its invited opponent can be sent by mail", 409
            )
        if target.id == sender:
            raise ClientError("bad_request", "you cannot invite yourself")
        me = self.accounts.name_of(sender) or "?"
        who = Who(address or "?", sender)
        with self.storage.engine.begin() as conn:
            if self.blocked(conn, sender, target.id):  # the sender's own block: as a challenge is refused
                raise ClientError("blocking", f"you blocked {target.username}: unblock them first", 409)
            # Every invitation counts in its budgets, mailed or not: a refusal that came only when
            # the invitee takes mail would tell the sender what is the invitee's to know.
            self._spend(conn, ("mail.invite", "mail.sender"), who, target.id, total=False)
            p = self.mailable(conn, target.id, "invite")
            if p is None or self.blocked(conn, target.id, sender):
                return False
            dedupe = f"invite:{rec.id}:{target.id}"
            if self._queued(conn, dedupe):
                return False  # this invitation's mail exists already
            self._spend(conn, (), who, None)  # the server's total: only what is queued
            tr = i18n.translations(p["lang"])
            link = f"{self._site(p)}/g/{rec.id}#invite={rec.invite}"
            subject = tr.gettext("Jericho: {name} invites you to a game").format(name=me)
            body = tr.gettext("{name} invites you to a game of Jericho.\n\nJoin it here: {link}").format(
                name=me, link=link
            )
            queued = self._put(conn, p, "invite", subject, body, dedupe=dedupe, sender=sender, sender_addr=address)
        self.wake()
        return queued

    # -- sending (the background job) -----------------------------------------------------------------
    def wake(self) -> None:
        """Tell this process's sender that a mail may be waiting (others find it at their next look)."""
        if self._wake is not None:
            loop = self._loop
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                self._wake.set()
            else:
                loop.call_soon_threadsafe(self._wake.set)

    def _claim(self) -> dict[str, Any] | None:
        now = self.now()
        lock = " FOR UPDATE SKIP LOCKED" if self.storage.postgres else ""
        with self.storage.engine.begin() as conn:
            row = (
                conn.execute(
                    text(
                        "SELECT id, to_addr, subject, body, unsubscribe, attempts FROM mail_outbox "
                        "WHERE sent_at IS NULL AND failed_at IS NULL AND next_try <= :now "
                        f"AND (lease_until IS NULL OR lease_until < :now) ORDER BY next_try, id LIMIT 1{lock}"
                    ),
                    {"now": now},
                )
                .mappings()
                .first()
            )
            if row is None:
                return None
            conn.execute(
                text(
                    "UPDATE mail_outbox SET claimed_by = :w, lease_until = :u, attempts = attempts + 1 WHERE id = :id"
                ),
                {"w": self.worker, "u": now + self.policy.lease, "id": row["id"]},
            )
        return dict(row)

    def _message(self, row: dict[str, Any]) -> EmailMessage:
        assert self.smtp is not None
        msg = EmailMessage(policy=MAIL_POLICY)
        msg["From"] = self.smtp.sender
        msg["To"] = row["to_addr"]
        msg["Subject"] = row["subject"]
        msg["Date"] = formatdate(localtime=False)
        msg["Message-ID"] = make_msgid(domain=self.smtp.sender.rsplit("@", 1)[-1])
        msg["List-Unsubscribe"] = f"<{row['unsubscribe']}>"
        msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"  # RFC 8058
        msg["Auto-Submitted"] = "auto-generated"
        msg.set_content(row["body"])
        return msg

    def _finish(self, row: dict[str, Any], error: BaseException | None, permanent: bool = False) -> None:
        now = self.now()
        with self.storage.engine.begin() as conn:
            if error is None:
                conn.execute(
                    text("UPDATE mail_outbox SET sent_at = :t, lease_until = NULL, last_error = NULL WHERE id = :id"),
                    {"t": now, "id": row["id"]},
                )
                return
            attempts = int(row["attempts"]) + 1
            permanent = permanent or (isinstance(error, smtplib.SMTPResponseException) and 500 <= error.smtp_code < 600)
            if isinstance(error, smtplib.SMTPRecipientsRefused):
                codes = [c for c, _ in error.recipients.values()]
                permanent = bool(codes) and all(500 <= c < 600 for c in codes)
            why = f"{type(error).__name__}: {error}"[:500]
            if permanent or attempts >= self.policy.max_attempts:
                conn.execute(
                    text("UPDATE mail_outbox SET failed_at = :t, lease_until = NULL, last_error = :e WHERE id = :id"),
                    {"t": now, "e": why, "id": row["id"]},
                )
                log.warning("mail %s given up after %d tries: %s", row["id"], attempts, why)
                return
            delay = min(self.policy.max_retry, self.policy.first_retry * 2 ** (attempts - 1))
            conn.execute(
                text("UPDATE mail_outbox SET next_try = :n, lease_until = NULL, last_error = :e WHERE id = :id"),
                {"n": now + delay, "e": why, "id": row["id"]},
            )

    def deliver_one(self) -> bool:
        """Claim one due mail and try to send it (blocking); False when none was due."""
        if self.smtp is None:
            return False
        row = self._claim()
        if row is None:
            return False
        try:
            msg = self._message(row)
        except (ValueError, TypeError) as exc:  # a header the mail library refuses: never sendable
            self._finish(row, exc, permanent=True)
            return True
        error: BaseException | None = None
        try:
            self.smtp.send(msg)
        except (smtplib.SMTPException, OSError) as exc:
            error = exc
        self._finish(row, error)
        return True

    async def run(self) -> None:
        """The sender: deliver due mails, then wait for a wake-up or the next look (every process runs one)."""
        if self.smtp is None:
            return
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        while True:
            try:
                while await self._loop.run_in_executor(None, self.deliver_one):
                    pass
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the database is away: try again at the next look
                log.exception("the mail outbox could not be read")
            try:
                await asyncio.wait_for(self._wake.wait(), self.policy.poll)
            except TimeoutError:
                pass
            self._wake.clear()


async def _form(request: Request) -> dict[str, str]:
    """A small urlencoded POST body (the unsubscribe page's form, RFC 8058's one-click body) as a
    dict of first values; anything else reads as empty."""
    body = await request.body()
    if len(body) > 4096 or not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        return {}
    pairs = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
    return dict(reversed(pairs))


def notify_routes(notifier: Notifier) -> list[Route]:
    """``/api/notify/...``: settings, the confirmation and unsubscribe links, invitations by mail."""
    accounts = notifier.accounts

    async def blocking(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    @free("the caller's own settings", methods=("GET", "HEAD"))
    @costs("mail.confirm", "mail.sender", "mail", methods=("POST",))  # a new address's confirmation mail
    async def settings(request: Request) -> Response:
        if request.method in ("GET", "HEAD"):  # HEAD is a GET without its body, never a change
            sess = await blocking(accounts.session_of, request)
        else:
            sess = await blocking(accounts.account_for_change, request)
        if sess is None:
            raise ClientError("not_logged_in", "log in first: e-mail notifications belong to an account", 401)
        if request.method in ("GET", "HEAD"):  # HEAD is a GET without its body, never a change
            data = await blocking(notifier.settings, sess.account.id)
        else:
            body = await jsonin.read_object(request, 4096, ClientError)
            lang = i18n.request_language(request)
            data = await blocking(notifier.update, sess.account.id, body, lang, address_of(request))
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    @free("marks one address confirmed: the token is the mail's own", methods=("GET", "HEAD"))
    async def confirm(request: Request) -> Response:
        ok = await blocking(notifier.confirm, request.query_params.get("token", ""))
        return RedirectResponse(f"/settings?email={'confirmed' if ok else 'expired'}", status_code=303)

    @free("a GET changes nothing; a POST turns switches off in the secret's own row", methods=("GET", "HEAD", "POST"))
    async def unsubscribe(request: Request) -> Response:
        if request.method in ("GET", "HEAD"):  # HEAD is a GET without its body, never a change
            # A GET changes nothing: mail scanners and link previews follow every link of a mail
            # (issue 33).  The page (/unsubscribe) asks, and its button POSTs here.
            asked = {"u": request.query_params.get("u", "")[:100], "kind": request.query_params.get("kind", "")[:10]}
            return RedirectResponse(f"/unsubscribe?{urlencode(asked)}", status_code=303)
        form = await _form(request)
        secret = request.query_params.get("u") or form.get("u", "")
        kind = request.query_params.get("kind") or form.get("kind", "")
        ok = await blocking(notifier.unsubscribe, secret, kind)
        if form.get("confirm") == "page":  # the page's button: back to the settings, which say what happened
            return RedirectResponse(f"/settings?unsubscribed={kind if ok else 'invalid'}", status_code=303)
        # RFC 8058: the mail program's one click (body "List-Unsubscribe=One-Click"), no page
        if not ok:
            raise ClientError("bad_link", "this unsubscribe link is not valid", 404)
        return JSONResponse({"ok": True, "kind": kind})

    @costs("mail.invite", "mail.sender", "mail", methods=("POST",))
    async def invite(request: Request) -> Response:
        sess = await blocking(accounts.account_for_change, request)
        if sess is None:
            raise ClientError("not_logged_in", "log in first to invite a player by name", 401)
        body = await jsonin.read_object(request, 4096, ClientError)
        game = body.get("game")
        if not isinstance(game, str):
            raise ClientError("bad_request", "send {'game': ID, 'username': NAME}")
        await blocking(
            notifier.invite, sess.account.id, game, body.get("token"), body.get("username"), address_of(request)
        )
        # the same answer whether a mail went or not: whether someone takes mail is theirs to know
        return JSONResponse({"ok": True, "email_enabled": notifier.enabled})

    return [
        Route("/api/notify/settings", settings, methods=["GET", "POST"]),
        Route("/api/notify/confirm", confirm),
        Route("/api/notify/unsubscribe", unsubscribe, methods=["GET", "POST"]),
        Route("/api/notify/invite", invite, methods=["POST"]),
    ]
