"""E-mail notifications (issue 23, point 3), on SQLite and PostgreSQL, through a real local SMTP
server (aiosmtpd): an address confirmed by a link, invitations by mail, the one-click unsubscribe
in every mail, the outbox's background sender with its retries (never a request), and exactly
one delivery when two senders race for the same outbox."""

from __future__ import annotations

import email
import email.policy
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import pytest
from aiosmtpd.controller import Controller
from argon2 import PasswordHasher
from sqlalchemy import text

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.web.accounts.accounts import CSRF_HEADER, AccountService  # noqa: E402
from jericho_game.web.common.budget import BUDGETS, Budget  # noqa: E402
from jericho_game.web.round.rooms import ClientError  # noqa: E402
from jericho_game.web.server import create_app  # noqa: E402
from jericho_game.web.social.notify import MailPolicy, Notifier, SmtpConfig, check_email  # noqa: E402
from jericho_game.web.storage.database import Storage, resolve_db_url  # noqa: E402
from tests.helpers import Load, reserve_port  # noqa: E402
from tests.web.test_server import another, visitors  # noqa: E402

CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
PW = "correct horse battery staple"
FAST = MailPolicy(first_retry=0.3, max_retry=1.0, poll=0.2, lease=30.0, max_attempts=4)


def budgets(**limits: dict[str, Any]) -> dict[str, Budget]:
    """The budgets, with sign-ups open (every test account comes from one address) and ``limits``
    (kind: {field: value}) changed."""
    table = {**BUDGETS, "signup": replace(BUDGETS["signup"], per_group=None, total=None)}
    return {**table, **{kind: replace(table[kind], **fields) for kind, fields in limits.items()}}


class Inbox:
    """What the local SMTP server received; ``refuse`` answers (e.g. "451 ...") used up one per mail."""

    def __init__(self) -> None:
        self.mails: list[email.message.EmailMessage] = []
        self.raw: list[bytes] = []  # each mail's bytes as they came
        self.refuse: list[str] = []
        self.lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
        with self.lock:
            if self.refuse:
                return self.refuse.pop(0)
            msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
            assert isinstance(msg, email.message.EmailMessage)
            self.mails.append(msg)
            self.raw.append(envelope.content)
        return "250 OK"

    def wait(self, n: int, timeout: float = 30.0) -> list[email.message.EmailMessage]:
        end = time.monotonic() + timeout
        while len(self.mails) < n:
            assert time.monotonic() < end, f"only {len(self.mails)} of {n} mails arrived"
            time.sleep(0.05)
        return self.mails


@contextmanager
def smtp_server() -> Iterator[tuple[Inbox, int]]:
    """A local SMTP server on a held loopback port (``tests.helpers.reserve_port``), and what it
    receives."""
    inbox = Inbox()
    with reserve_port() as hold:
        port = int(hold.getsockname()[1])
        ctl = Controller(inbox, hostname="127.0.0.1", port=port)
        ctl.start()
        try:
            yield inbox, port
        finally:
            ctl.stop()


@pytest.fixture()
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server() as running:
        yield running


PUBLIC = "https://jericho.example.org"  # --public-url: every link in a mail starts with it (issue 33)


def _app(db: str, port: int | None) -> Any:
    url = f"smtp://127.0.0.1:{port}?from=jericho@example.org" if port else None
    site = PUBLIC if port else None
    return create_app(
        db, ai_processes=0, password_hasher=CHEAP, smtp=url, mail_policy=FAST, public_url=site, budgets=budgets()
    )


def _csrf(c: TestClient) -> str:
    token: str = c.get("/api/account").json()["csrf"]
    return token


def _signup(c: TestClient, name: str) -> None:
    r = c.post("/api/account/signup", json={"username": name, "password": PW}, headers={CSRF_HEADER: _csrf(c)})
    assert r.status_code == 201, r.text


def _post(c: TestClient, path: str, body: dict[str, Any]) -> Any:
    return c.post(path, json=body, headers={CSRF_HEADER: _csrf(c)})


def _link(msg: email.message.EmailMessage, path: str) -> str:
    body = msg.get_content()
    m = re.search(r"https?://\S+" + re.escape(path) + r"\S*", body)
    assert m, body
    parts = urlsplit(m.group(0))
    return parts.path + ("?" + parts.query if parts.query else "") + ("#" + parts.fragment if parts.fragment else "")


def _confirm(c: TestClient, inbox: Inbox, address: str) -> email.message.EmailMessage:
    n = len(inbox.mails)
    r = _post(c, "/api/notify/settings", {"email": address})
    assert r.status_code == 200, r.text
    assert r.json()["email"] == address and r.json()["confirmed"] is False
    msg = inbox.wait(n + 1)[n]
    assert msg["To"] == address and "Confirm" in msg["Subject"]
    r = c.get(_link(msg, "/api/notify/confirm"), follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/settings?email=confirmed"
    assert c.get("/api/notify/settings").json()["confirmed"] is True
    return msg


def test_an_address_is_confirmed_by_the_link_of_a_mail_sent_by_the_background_job(
    db: str, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    with TestClient(_app(db, port)) as c:
        _signup(c, "ada")
        assert c.get("/api/notify/settings").json() == {
            "email_enabled": True,
            "email": None,
            "confirmed": False,
            "kinds": {"turn": True, "invite": True},
        }
        msg = _confirm(c, inbox, "ada@example.org")
        # every mail: a one-click unsubscribe (RFC 8058 headers and a link in the text)
        assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        assert "/api/notify/unsubscribe?" in msg["List-Unsubscribe"] and "kind=all" in msg["List-Unsubscribe"]
        assert "/api/notify/unsubscribe?" in msg.get_content()
        assert msg["From"] == "jericho@example.org"
        # the link works once: a second use is an expired link, and the address stays confirmed
        again = c.get(_link(msg, "/api/notify/confirm"), follow_redirects=False)
        assert again.headers["location"] == "/settings?email=expired"
        assert c.get("/api/notify/settings").json()["confirmed"] is True


def test_bad_addresses_and_fields_are_refused_and_change_nothing(db: str, smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    with TestClient(_app(db, port)) as c:
        assert c.get("/api/notify/settings").status_code == 401  # an account's settings
        _signup(c, "ada")
        for bad in [
            "ada@example.org\r\nBcc: all@example.org",
            "no-at-sign",
            "a@b",
            "<a@b.org>",
            42,
            "x" * 250 + "@b.org",
        ]:
            r = _post(c, "/api/notify/settings", {"email": bad})
            assert r.status_code == 400 and r.json()["error"] == "bad_email", (bad, r.text)
        r = _post(c, "/api/notify/settings", {"turn": "yes"})
        assert r.status_code == 400 and "turn must be true or false" in r.json()["message"]
        r = _post(c, "/api/notify/settings", {"sms": True})
        assert r.status_code == 400 and "sms" in r.json()["message"]
        # without the CSRF token the session's change is refused
        r = c.post("/api/notify/settings", json={"email": "ada@example.org"})
        assert r.status_code == 403 and r.json()["error"] == "csrf"
        assert c.get("/api/notify/settings").json()["email"] is None
        # a second confirmation mail within the minute is refused (a mail bomb through the form)
        assert _post(c, "/api/notify/settings", {"email": "ada@example.org"}).status_code == 200
        r = _post(c, "/api/notify/settings", {"email": "other@example.org"})
        assert r.status_code == 429 and r.json()["error"] == "too_soon"
        assert c.get("/api/notify/settings").json()["email"] == "ada@example.org"
        inbox.wait(1)
        time.sleep(0.5)
        assert len(inbox.mails) == 1


def test_without_smtp_no_address_is_taken(db: str) -> None:
    with TestClient(_app(db, None)) as c:
        _signup(c, "ada")
        assert c.get("/api/notify/settings").json()["email_enabled"] is False
        r = _post(c, "/api/notify/settings", {"email": "ada@example.org"})
        assert r.status_code == 409 and r.json()["error"] == "email_off"
        assert _post(c, "/api/notify/settings", {"turn": False}).json()["kinds"]["turn"] is False


def test_an_invitation_by_mail_and_its_one_click_unsubscribe(db: str, smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    app = _app(db, port)
    with visitors(app, 3) as (ada, bob, eve):
        _signup(ada, "ada")
        _signup(bob, "bob")
        _signup(eve, "eve")
        _confirm(bob, inbox, "bob@example.org")
        g = _post(ada, "/api/games", {"mode": "online"}).json()
        # only a player of the game may invite, and only to an existing account
        r = _post(eve, "/api/notify/invite", {"game": g["id"], "username": "bob"})
        assert r.status_code == 403 and r.json()["error"] == "not_your_game"
        r = _post(ada, "/api/notify/invite", {"game": g["id"], "username": "nobody"})
        assert r.status_code == 404 and r.json()["error"] == "unknown_account"
        n = len(inbox.mails)
        r = _post(ada, "/api/notify/invite", {"game": g["id"], "username": "bob", "token": g["token"]})
        assert r.status_code == 200 and r.json()["ok"] is True
        msg = inbox.wait(n + 1)[n]
        assert msg["To"] == "bob@example.org" and "ada" in msg["Subject"]
        join = _link(msg, f"/g/{g['id']}")
        invite = join.split("#invite=", 1)[1]
        # the same invitation twice: one mail (a second would be spam)
        assert _post(ada, "/api/notify/invite", {"game": g["id"], "username": "bob"}).status_code == 200
        r = _post(bob, f"/api/games/{g['id']}/join", {"invite": invite})
        assert r.status_code == 200, r.text
        # a game that is not waiting any more is not invitable
        r = _post(ada, "/api/notify/invite", {"game": g["id"], "username": "eve"})
        assert r.status_code == 409 and r.json()["error"] == "not_invitable"
        # one click on the mail's link, without logging in: no more invitations
        unsub = _link(msg, "/api/notify/unsubscribe")
        assert "kind=invite" in unsub
        with another(ada) as anyone:  # no cookies: the link works without logging in
            # issue 33: a GET (a mail scanner following the link) changes nothing, it shows a page
            for _ in range(3):
                r = anyone.get(unsub, follow_redirects=False)
                assert r.status_code == 303 and r.headers["location"].startswith("/unsubscribe?")
            assert bob.get("/api/notify/settings").json()["kinds"]["invite"] is True, "a GET unsubscribes nobody"
            page = anyone.get(unsub)
            assert page.status_code == 200 and 'method="post" action="/api/notify/unsubscribe"' in page.text
            form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page.text))
            assert form["kind"] == "invite" and form["confirm"] == "page" and form["u"] in unsub
            assert bob.get("/api/notify/settings").json()["kinds"]["invite"] is True
            # its button POSTs the form: now it is done, and the settings page says so
            r = anyone.post("/api/notify/unsubscribe", data=form, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/settings?unsubscribed=invite"
        assert bob.get("/api/notify/settings").json()["kinds"] == {"turn": True, "invite": False}
        g2 = _post(ada, "/api/games", {"mode": "online"}).json()
        assert _post(ada, "/api/notify/invite", {"game": g2["id"], "username": "bob"}).json()["ok"] is True
        # RFC 8058: the mail program's POST turns every kind off and forgets the address
        all_link = msg["List-Unsubscribe"].strip("<>")
        with another(ada) as anyone:
            r = anyone.post(
                all_link.replace("kind=invite", "kind=all"),
                content=b"List-Unsubscribe=One-Click",
                headers={"Content-Type": "application/x-www-form-urlencoded"},
            )
        assert r.status_code == 200 and r.json() == {"ok": True, "kind": "all"}
        assert bob.get("/api/notify/settings").json()["email"] is None
        with another(ada) as anyone:
            assert anyone.post(unsub.replace("u=", "u=x")).status_code == 404
        time.sleep(1.0)  # the sender looks every 0.2 s: nothing more may arrive
    assert len(inbox.mails) == n + 1
    storage = Storage(resolve_db_url(db))
    with storage.engine.connect() as conn:
        kinds = conn.execute(text("SELECT kind FROM mail_outbox ORDER BY id")).scalars().all()
    storage.close()
    assert kinds == ["confirm", "invite"]


def _outbox(db: str) -> list[dict[str, Any]]:
    storage = Storage(resolve_db_url(db))
    with storage.engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(text("SELECT * FROM mail_outbox ORDER BY id")).mappings()]
    storage.close()
    return rows


def _until(pred: Callable[[], bool], timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def test_a_refused_mail_is_retried_later_and_a_permanent_refusal_ends_it(db: str, smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    inbox.refuse = ["451 4.3.0 try again later"]
    with TestClient(_app(db, port)) as c:
        _signup(c, "ada")
        r = _post(c, "/api/notify/settings", {"email": "ada@example.org"})
        assert r.status_code == 200
        inbox.wait(1)
        _until(lambda: _outbox(db)[0]["sent_at"] is not None)  # the mail lands before its row says so
        row = _outbox(db)[0]
        assert row["attempts"] == 2 and row["sent_at"] is not None and row["failed_at"] is None
        assert row["sent_at"] - row["created_at"] >= FAST.first_retry * 0.9  # waited before the retry
        inbox.refuse = ["550 5.1.1 no such mailbox"]
        time.sleep(FAST.poll)  # past the confirmation mail's minute: let the clock do it
    notifier_db = db
    with TestClient(
        create_app(
            notifier_db,
            ai_processes=0,
            password_hasher=CHEAP,
            smtp=f"smtp://127.0.0.1:{port}",
            mail_policy=MailPolicy(first_retry=0.3, poll=0.2, confirm_every=0.0),
            public_url=PUBLIC,
        )
    ) as c:
        assert _post(c, "/api/account/login", {"username": "ada", "password": PW}).status_code == 200
        assert _post(c, "/api/notify/settings", {"email": "gone@example.org"}).status_code == 200
        _until(lambda: _outbox(db)[-1]["failed_at"] is not None)
    row = _outbox(db)[-1]
    assert row["attempts"] == 1 and row["sent_at"] is None and "550" in row["last_error"]
    assert len(inbox.mails) == 1


def test_the_request_never_waits_for_the_mail_server(db: str, load: Load) -> None:
    """SMTP down: the address is taken at once, the mail waits in the outbox and goes when the
    server comes up."""
    # the port is held while the mail server is down: connections to it are refused, and no
    # other process can take it before the mail server comes up on it
    with reserve_port() as hold:
        port = int(hold.getsockname()[1])
        with TestClient(_app(db, port)) as c:
            _signup(c, "ada")
            t0 = time.monotonic()
            r = _post(c, "/api/notify/settings", {"email": "ada@example.org"})
            took = time.monotonic() - t0  # 5 s on an idle machine, scaled by the load measured in this run
            assert r.status_code == 200 and took < 5 * load.measure(), (took, load.factor)
            _until(lambda: bool(_outbox(db)) and _outbox(db)[0]["last_error"] is not None)
            row = _outbox(db)[0]
            assert row["sent_at"] is None and row["failed_at"] is None  # a refused connection: tried again
            inbox = Inbox()
            ctl = Controller(inbox, hostname="127.0.0.1", port=port)
            ctl.start()
            try:
                inbox.wait(1)
            finally:
                ctl.stop()
            assert inbox.mails[0]["To"] == "ada@example.org"


def test_two_senders_on_one_database_send_each_mail_once(db: str, smtp: tuple[Inbox, int]) -> None:
    """Two processes' senders racing for the same outbox (two stores, two notifiers, threads)."""
    inbox, port = smtp
    url = resolve_db_url(db)
    cfg = SmtpConfig.parse(f"smtp://127.0.0.1:{port}")
    stores = [Storage(url), Storage(url)]
    notifiers = [
        Notifier(s, AccountService(s, hasher=CHEAP), cfg, policy=FAST, public_url="http://site.example") for s in stores
    ]
    acc = notifiers[0].accounts.create_account("ada", PW)
    notifiers[0].update(acc.id, {}, "en")
    with stores[0].engine.begin() as conn:
        conn.execute(
            text("UPDATE mail_prefs SET email = 'ada@example.org', confirmed = 1 WHERE account_id = :a"), {"a": acc.id}
        )
        for i in range(20):
            assert notifiers[0].queue_turn(conn, acc.id, f"g{i}", 3, "bob")
        assert not notifiers[0].queue_turn(conn, acc.id, "g0", 3, "bob")  # the same turn: one mail
    start = threading.Barrier(2)

    def drain(n: Notifier) -> None:
        start.wait()
        while n.deliver_one():
            pass

    threads = [threading.Thread(target=drain, args=(n,)) for n in notifiers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    inbox.wait(20)
    time.sleep(0.3)
    subjects = sorted(m.get_content().split("/g/")[1].split()[0] for m in inbox.mails)
    assert subjects == sorted(f"g{i}" for i in range(20))  # each once, none twice
    assert all(r["attempts"] == 1 and r["sent_at"] is not None for r in _outbox(db))
    for s in stores:
        s.close()


def test_the_smtp_url_is_checked() -> None:
    cfg = SmtpConfig.parse("smtp+starttls://me%40x:p%3Ass@mail.example.org?from=j@example.org")
    assert (cfg.host, cfg.port, cfg.security, cfg.user, cfg.password) == (
        "mail.example.org",
        587,
        "starttls",
        "me@x",
        "p:ss",
    )
    assert cfg.sender == "j@example.org"
    assert SmtpConfig.parse("smtps://mail.example.org").port == 465
    for bad, why in [
        ("http://user:secret@mail.example.org", "must start with smtp"),
        ("smtp://", "names no host"),
        ("smtp://mail.example.org?form=x", "unknown parameter"),
        ("smtp://mail.example.org?from=nobody", "is not an address"),
        ("smtp://mail.example.org?site=https://x.example", "give the site's address as --public-url"),
    ]:
        with pytest.raises(ValueError, match=re.escape(why)) as exc:
            SmtpConfig.parse(bad)
        assert "secret" not in str(exc.value)
    with pytest.raises(ClientError):
        check_email("a@b.c\nBcc: x@y.z")
    assert check_email(" ada@example.org ") == "ada@example.org"


def test_a_mail_the_mail_library_refuses_is_given_up_not_retried_forever(db: str, smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    storage = Storage(resolve_db_url(db))
    n = Notifier(
        storage,
        AccountService(storage, hasher=CHEAP),
        SmtpConfig.parse(f"smtp://127.0.0.1:{port}"),
        public_url="http://site.example",
    )
    with storage.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO mail_outbox (kind, to_addr, subject, body, unsubscribe, created_at, next_try, attempts) "
                "VALUES ('turn', 'a@example.org', 'two\nlines', 'x', 'http://x', 0, 0, 0)"
            )
        )
    assert n.deliver_one() is True
    assert n.deliver_one() is False  # nothing left to try
    row = _outbox(db)[0]
    assert row["failed_at"] is not None and row["sent_at"] is None and "ValueError" in row["last_error"]
    storage.close()
    assert inbox.mails == []


# -- issue 33: links from --public-url only; mail floods ----------------------------------------------------

EVIL = {"Host": "evil.example"}


def test_no_link_in_a_mail_comes_from_the_host_header(db: str, smtp: tuple[Inbox, int]) -> None:
    """The audit: `Host: evil.example` made the server mail a stranger http://evil.example/api/notify/
    confirm?token=... (and List-Unsubscribe too).  Every link of every mail now starts with
    --public-url, whatever header the request that caused it carried."""
    inbox, port = smtp
    with visitors(_app(db, port), 2) as (ada, bob):
        for c in (ada, bob):
            c.headers.update(EVIL)
        _signup(ada, "ada")
        _signup(bob, "bob")
        _confirm(bob, inbox, "bob@example.org")
        g = _post(ada, "/api/games", {"mode": "online"}).json()
        assert _post(ada, "/api/notify/invite", {"game": g["id"], "username": "bob"}).status_code == 200
        mails = inbox.wait(2)
    assert [m["Subject"] for m in mails][1].startswith("Jericho: ada")
    for msg in mails:
        links = re.findall(r"https?://\S+", msg.get_content()) + [msg["List-Unsubscribe"].strip("<>")]
        assert len(links) >= 2 and all(link.startswith(PUBLIC + "/") for link in links), links
        assert "evil" not in msg.as_string()


def test_smtp_without_a_public_url_is_refused_with_a_clear_message(tmp_path: Any) -> None:
    import subprocess
    import sys

    with pytest.raises(ValueError, match="--public-url"):
        create_app(str(tmp_path / "a.sqlite3"), ai_processes=0, smtp="smtp://127.0.0.1:1")
    cmd = [sys.executable, "-m", "jericho_game", "serve", "--db", str(tmp_path / "g.sqlite3"), "--port", "1"]
    out = subprocess.run([*cmd, "--smtp", "smtp://127.0.0.1:1"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "--smtp needs --public-url" in out.stdout + out.stderr, out
    bad = subprocess.run([*cmd, "--public-url", "evil.example"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--public-url must be the site's http(s) address" in bad.stdout + bad.stderr


def _outbox_to(db: str, address: str) -> list[str]:
    storage = Storage(resolve_db_url(db))
    try:
        with storage.engine.connect() as conn:
            rows = conn.execute(text("SELECT kind FROM mail_outbox WHERE to_addr = :a"), {"a": address})
            return [r[0] for r in rows]
    finally:
        storage.close()


def test_ten_accounts_from_one_address_cannot_mail_a_stranger_ten_confirmations(
    db: str, smtp: tuple[Inbox, int]
) -> None:
    """The audit: 10 accounts from one address sent 10 confirmation mails at once to a stranger.
    Now one address receives at most 3 confirmation mails a day, whoever asks; the others are
    refused with `mail_recipient_quota` and nothing is changed."""
    inbox, port = smtp
    with visitors(_app(db, port), 10) as clients:
        codes = []
        for i, c in enumerate(clients):
            _signup(c, f"puppet{i}")
            r = _post(c, "/api/notify/settings", {"email": "Stranger@example.org" if i % 2 else "stranger@example.org"})
            codes.append(r.json().get("error") if r.status_code != 200 else 200)
            if r.status_code != 200:
                assert r.status_code == 429 and "nothing was changed" in r.json()["message"]
                assert c.get("/api/notify/settings").json()["email"] is None  # nothing changed
        inbox.wait(3)
        time.sleep(0.5)
    assert codes == [200] * 3 + ["mail_recipient_quota"] * 7
    assert len(_outbox_to(db, "stranger@example.org") + _outbox_to(db, "Stranger@example.org")) == 3
    assert len(inbox.mails) == 3


def test_one_victim_cannot_receive_45_invitations_from_6_senders(db: str, smtp: tuple[Inbox, int]) -> None:
    """The audit: one victim got 45 invitation mails in seconds from 6 senders.  Now one player
    receives at most 10 invitation mails an hour, from everyone together (`mail_recipient_quota`)."""
    inbox, port = smtp
    app = create_app(
        db,
        ai_processes=0,
        password_hasher=CHEAP,
        smtp=f"smtp://127.0.0.1:{port}",
        mail_policy=MailPolicy(first_retry=0.3, poll=0.2),
        public_url=PUBLIC,
        budgets=budgets(**{"mail.sender": {"per_group": None}}),  # one test address for all
    )
    with visitors(app, 7) as (victim, *senders):
        _signup(victim, "victim")
        _confirm(victim, inbox, "victim@example.org")
        for i, c in enumerate(senders):
            _signup(c, f"sender{i}")
        outcomes = []
        for _ in range(8):
            for c in senders:
                g = _post(c, "/api/games", {"mode": "online"}).json()
                r = _post(c, "/api/notify/invite", {"game": g["id"], "username": "victim"})
                outcomes.append(200 if r.status_code == 200 else r.json()["error"])
        time.sleep(1.0)
    assert len(outcomes) == 48 and outcomes.count(200) == 10
    assert set(outcomes) == {200, "mail_recipient_quota"}
    assert _outbox_to(db, "victim@example.org").count("invite") == 10


def test_mails_from_one_address_and_the_servers_budget_are_limited(db: str, smtp: tuple[Inbox, int]) -> None:
    """Per sending address (all its accounts) and a global budget per hour, counted in the database."""
    inbox, port = smtp

    def app(table: dict[str, Budget]) -> Any:
        smtp_url = f"smtp://127.0.0.1:{port}"
        policy = MailPolicy(poll=0.2)
        return create_app(
            db,
            ai_processes=0,
            password_hasher=CHEAP,
            smtp=smtp_url,
            mail_policy=policy,
            public_url=PUBLIC,
            budgets=table,
        )

    with visitors(app(budgets(**{"mail.sender": {"per_group": 2}})), 3) as clients:
        answers = []
        for i, c in enumerate(clients):
            _signup(c, f"user{i}")
            r = _post(c, "/api/notify/settings", {"email": f"user{i}@example.org"})
            answers.append(200 if r.status_code == 200 else r.json()["error"])
    assert answers == [200, 200, "mail_sender_quota"]
    with visitors(app(budgets(mail={"total": 2})), 1) as (c,):
        _signup(c, "late")
        r = _post(c, "/api/notify/settings", {"email": "late@example.org"})
        assert r.status_code == 503 and r.json()["error"] == "mail_budget"
        fr = c.post("/api/notify/settings?lang=fr", json={"email": "late@example.org"}, headers={CSRF_HEADER: _csrf(c)})
        assert fr.json()["error"] == "mail_budget" and fr.json()["message"] != r.json()["message"]


def test_list_unsubscribe_goes_out_plain_however_long_its_address(db: str, smtp: tuple[Inbox, int]) -> None:
    """Issue 51, finding 12: a ``List-Unsubscribe`` longer than 78 characters (every real address)
    went out RFC 2047-encoded (``=?utf-8?q?=3Chttps...``), so a mail program's one-click unsubscribe
    (RFC 8058) could not read it.  Now the header is the plain ``<https://...>`` whatever its length."""
    inbox, port = smtp
    site = PUBLIC + "/a-site-under-a-rather-long-path"
    app = create_app(
        db,
        ai_processes=0,
        password_hasher=CHEAP,
        smtp=f"smtp://127.0.0.1:{port}?from=jericho@example.org",
        mail_policy=FAST,
        public_url=site,
    )
    with TestClient(app) as c:
        _signup(c, "ada")
        assert _post(c, "/api/notify/settings", {"email": "ada@example.org"}).status_code == 200
        inbox.wait(1)
        with app.state.service.storage.engine.connect() as conn:
            url = conn.execute(text("SELECT unsubscribe FROM mail_outbox")).scalar_one()
    raw = inbox.raw[0]
    head = raw.split(b"\r\n\r\n", 1)[0]
    assert len(url) >= 100 and url.startswith(site), url
    assert b"List-Unsubscribe: <" + url.encode("ascii") + b">\r\n" in head, head
    assert b"List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n" in head
    assert b"=?utf-8?" not in head.lower(), head
    assert inbox.mails[0]["List-Unsubscribe"] == f"<{url}>"
