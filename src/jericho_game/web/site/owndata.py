"""Each player's own data (issue 54, point 5): everything the site holds about an account as one
archive, and the closing of an account.

**The archive** (``GET /api/account/data``, the settings page's "Download my data"): one zip with
the account (``account.json``), every game it played as a ``.jgn`` record (``games/``), its rating
and rating history (``ratings.json``), its puzzle rating and attempts (``puzzles.json``), the chat
lines it wrote (``chat.json``), its settings (``settings.json``: language, board and pieces, who may
challenge it, e-mail address and mail switches), the players it follows and blocks and its
challenges (``people.json``) and its tournaments (``tournaments.json``).  Built on the threads of
the ``export`` budget (web/common/budget.py): one at a time per client, two per process.

**Closing** (``POST /api/account/close`` with the password): one transaction over every table that
holds something of the account.  Its games stay (its opponents' games too), under the neutral name
``closed account``: the account's row is kept as that name (so games, tournament standings and the
opponents' rating histories still point at a row), with no password, e-mail, language or rating,
disabled; everything else personal goes: sessions and devices, settings, the mail address and the
mails, chat lines and the reports it made, follows, blocks and challenges both ways, its puzzle and
rating records, its log-in counters, the client addresses stored with its games, reviews, AI jobs and
budget spends, and the names written into its games.  Counters of an address's recent attempts that
name no account (``auth_throttle``'s ``addr:``, ``budget_spend`` rows without an account) are kept
until their window ends: they hold no account and guard the site against abuse.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Callable
from typing import Any

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from jericho_game.web.accounts.accounts import SESSION_COOKIE, AccountService
from jericho_game.web.common import jsonin
from jericho_game.web.common.budget import BudgetPolicy, Who, costs
from jericho_game.web.common.errors import ClientError
from jericho_game.web.round.rooms import GameService
from jericho_game.web.storage.database import GAMES_CHANNEL, Storage

__all__ = ["CLOSED_NAME", "OwnData", "owndata_routes"]

#: The name a closed account's games and standings show (a username can never be it: it has a space).
CLOSED_NAME = "closed account"

_README = """Everything {site} holds about the account {name}, as of {when} (UTC).

account.json       the account: name, when it was made, language, rating
games/             every game it played, one .jgn record each (docs/notation.md)
games.json         the list of those games: id, mode, seat, opponent, result
ratings.json       its rating and every change of it (one per rated game)
puzzles.json       its puzzle rating, its attempts and its best streak
chat.json          every chat line it wrote, with the game and the time
settings.json      language, board and pieces, who may challenge it, e-mail address and mail switches
people.json        the players it follows and blocks, and its challenges
tournaments.json   the tournaments it joined, with its score
"""


def _rows(conn: Connection, sql: str, **params: Any) -> list[dict[str, Any]]:
    return [dict(r._mapping) for r in conn.execute(text(sql), params)]


def _when(t: Any) -> str | None:
    return None if t is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(t)))


class OwnData:
    """An account's archive (:meth:`archive`) and its closing (:meth:`close`), over every feature's tables.

    ``games``: the room service, whose record tags the archive's ``.jgn`` records carry;
    ``write``: the record writer (web/round/records.py)."""

    def __init__(
        self,
        storage: Storage,
        accounts: AccountService,
        games: GameService,
        write: Callable[[Any, dict[str, str]], str],
        budget: BudgetPolicy | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.storage = storage
        self.accounts = accounts
        self.games = games
        self.write = write
        self.budget = budget if budget is not None else BudgetPolicy(storage, clock=clock)
        self.now = clock

    def _tables(self, conn: Connection) -> set[str]:
        return set(inspect(conn).get_table_names())

    # -- the archive ---------------------------------------------------------------------------------
    def archive(self, account_id: int) -> tuple[bytes, str]:
        """The zip of everything held about the account, and its file name."""
        acc = self.accounts.get(account_id)
        if acc is None:
            raise ClientError("unknown_account", "this account no longer exists", 404)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:

            def put(name: str, data: Any) -> None:
                zf.writestr(name, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")

            with self.storage.reader.connect() as conn:
                have = self._tables(conn)
                me = _rows(
                    conn,
                    "SELECT username, created_at, language, admin, rating, rd, volatility, rated_games "
                    "FROM accounts WHERE id = :a",
                    a=account_id,
                )[0]
                me["created_at"] = _when(me["created_at"])
                put("account.json", me)
                game_rows = _rows(
                    conn,
                    "SELECT id, mode, created_at, south_account, north_account, result, reason, rated FROM games "
                    "WHERE south_account = :a OR north_account = :a ORDER BY created_at, id",
                    a=account_id,
                )
                put("ratings.json", self._ratings(conn, have, account_id, me))
                put("puzzles.json", self._puzzles(conn, have, account_id))
                chat = (
                    _rows(
                        conn,
                        "SELECT game_id, at, room, side, text FROM chat_messages WHERE account = :a ORDER BY at, id",
                        a=account_id,
                    )
                    if "chat_messages" in have
                    else []
                )
                put("chat.json", [{**c, "at": _when(c["at"])} for c in chat])
                put("settings.json", self._settings(conn, have, account_id, me))
                put("people.json", self._people(conn, have, account_id))
                put("tournaments.json", self._tournaments(conn, have, account_id))
            listed = []
            for g in game_rows:
                rec = self.storage.load(g["id"])
                if rec is None:
                    continue
                room = self.games.cache.build(rec)  # not cached: this runs off the event loop
                day = time.strftime("%Y-%m-%d", time.gmtime(rec.created_at))
                zf.writestr(f"games/{day}-{rec.id}.jgn", self.write(room.game, self.games.record_tags(room)))
                seat = "south" if g["south_account"] == account_id else "north"
                listed.append(
                    {
                        "id": g["id"],
                        "mode": g["mode"],
                        "created_at": _when(g["created_at"]),
                        "seat": seat,
                        "rated": bool(g["rated"]),
                        "result": g["result"],
                        "reason": g["reason"],
                        "moves": len(rec.moves),
                    }
                )
            put("games.json", listed)
            zf.writestr("README.txt", _README.format(site="this site", name=acc.username, when=_when(self.now())))
        return buf.getvalue(), f"jericho-{acc.username}-data.zip"

    def _ratings(self, conn: Connection, have: set[str], account_id: int, me: dict[str, Any]) -> dict[str, Any]:
        history = []
        if "rating_history" in have:
            history = _rows(
                conn,
                "SELECT h.game_id, h.at, o.username AS opponent, h.score, h.rating_before, h.rating, h.rd "
                "FROM rating_history h LEFT JOIN accounts o ON o.id = h.opponent_id "
                "WHERE h.account_id = :a ORDER BY h.at",
                a=account_id,
            )
        return {
            "rating": me["rating"],
            "rd": me["rd"],
            "volatility": me["volatility"],
            "rated_games": me["rated_games"],
            "history": [{**h, "at": _when(h["at"])} for h in history],
        }

    def _puzzles(self, conn: Connection, have: set[str], account_id: int) -> dict[str, Any]:
        player = f"account:{account_id}"
        out: dict[str, Any] = {"rating": None, "attempts": [], "best_streak": None}
        if "puzzle_players" in have:
            found = _rows(conn, "SELECT rating, rd, solved, failed FROM puzzle_players WHERE player = :p", p=player)
            out["rating"] = found[0] if found else None
        if "puzzle_attempts" in have:
            attempts = _rows(
                conn,
                "SELECT puzzle_id, at, solved, rating_before, rating FROM puzzle_attempts WHERE player = :p "
                "ORDER BY at",
                p=player,
            )
            out["attempts"] = [{**a, "at": _when(a["at"]), "solved": bool(a["solved"])} for a in attempts]
        if "puzzle_streaks" in have:
            best = _rows(conn, "SELECT best FROM puzzle_streaks WHERE player = :p", p=player)
            out["best_streak"] = best[0]["best"] if best else None
        return out

    def _settings(self, conn: Connection, have: set[str], account_id: int, me: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"language": me["language"]}
        if "account_prefs" in have:
            looks = _rows(conn, "SELECT board, pieces FROM account_prefs WHERE account = :a", a=account_id)
            out["looks"] = looks[0] if looks else None
        if "people_prefs" in have:
            who = _rows(conn, "SELECT challenges FROM people_prefs WHERE account = :a", a=account_id)
            out["who_may_challenge"] = who[0]["challenges"] if who else None
        if "mail_prefs" in have:
            # the mail switches and the address; never the secrets of the confirmation and unsubscribe links
            mail = _rows(
                conn,
                "SELECT email, confirmed, turn, invite, lang FROM mail_prefs WHERE account_id = :a",
                a=account_id,
            )
            out["mail"] = (
                {
                    "email": mail[0]["email"],
                    "confirmed": bool(mail[0]["confirmed"]),
                    "turn": bool(mail[0]["turn"]),
                    "invite": bool(mail[0]["invite"]),
                    "language": mail[0]["lang"],
                }
                if mail
                else None
            )
        return out

    def _people(self, conn: Connection, have: set[str], account_id: int) -> dict[str, Any]:
        out: dict[str, Any] = {"follows": [], "blocks": [], "challenges": []}
        if "follows" in have:
            out["follows"] = _rows(
                conn,
                "SELECT a.username AS name, f.at FROM follows f JOIN accounts a ON a.id = f.followed "
                "WHERE f.follower = :a ORDER BY f.at",
                a=account_id,
            )
        if "blocks" in have:
            out["blocks"] = _rows(
                conn,
                "SELECT a.username AS name, b.at FROM blocks b JOIN accounts a ON a.id = b.blocked "
                "WHERE b.blocker = :a ORDER BY b.at",
                a=account_id,
            )
        if "challenges" in have:
            out["challenges"] = _rows(
                conn,
                "SELECT c.id, c.created_at, x.username AS challenger, y.username AS challenged, c.status, c.side, "
                "c.clock, c.increment, c.per_move_days, c.rated, c.game_id FROM challenges c "
                "LEFT JOIN accounts x ON x.id = c.challenger LEFT JOIN accounts y ON y.id = c.challenged "
                "WHERE c.challenger = :a OR c.challenged = :a ORDER BY c.created_at",
                a=account_id,
            )
        for key in out:
            for row in out[key]:
                for t in ("at", "created_at"):
                    if t in row:
                        row[t] = _when(row[t])
        return out

    def _tournaments(self, conn: Connection, have: set[str], account_id: int) -> list[dict[str, Any]]:
        if not {"tournaments", "tournament_players"} <= have:
            return []
        rows = _rows(
            conn,
            "SELECT t.id, t.name, t.kind, t.starts_at, t.status, p.score, p.games, p.withdrawn "
            "FROM tournament_players p JOIN tournaments t ON t.id = p.tournament WHERE p.account = :a "
            "ORDER BY t.starts_at",
            a=account_id,
        )
        return [{**r, "starts_at": _when(r["starts_at"])} for r in rows]

    # -- closing ---------------------------------------------------------------------------------
    def check_password(self, account_id: int, password: str) -> None:
        """Raise 401 ``wrong_password`` unless ``password`` is the account's (run on the password pool)."""
        with self.storage.reader.connect() as conn:
            row = conn.execute(text("SELECT password_hash FROM accounts WHERE id = :a"), {"a": account_id}).first()
        try:
            ok = row is not None and self.accounts.hasher.verify(row[0], password)
        except Exception:  # noqa: BLE001 - argon2's mismatch, a bad hash: all a wrong password
            ok = False
        if not ok:
            raise ClientError("wrong_password", "this is not the account's password: nothing was changed", 401)

    def close(self, account_id: int) -> None:
        """Close the account: its games keep the name :data:`CLOSED_NAME`, everything else personal goes
        (see the module's docstring).  One transaction: all of it or nothing."""
        with self.storage.engine.begin() as conn:
            have = self._tables(conn)
            lock = " FOR UPDATE" if self.storage.postgres else ""
            row = conn.execute(
                text(f"SELECT username_key, disabled FROM accounts WHERE id = :a{lock}"), {"a": account_id}
            ).first()
            if row is None or str(row[0]).startswith("~"):
                raise ClientError("unknown_account", "this account is already closed", 404)
            key = str(row[0])
            a = {"a": account_id}

            def run(table: str, sql: str, **params: Any) -> None:
                if table in have:
                    conn.execute(text(sql), {**a, **params})

            # the games: the names written into them, and the creator's address
            games = conn.execute(
                text(
                    "SELECT id, south_account, north_account, meta FROM games "
                    "WHERE south_account = :a OR north_account = :a"
                ),
                a,
            ).all()
            for game_id, south, north, meta_text in games:
                meta = json.loads(meta_text or "{}")
                names = meta.get("names") or {}
                for side, holder in (("south", south), ("north", north)):
                    if holder == account_id and side in names:
                        names[side] = CLOSED_NAME
                if names:
                    meta["names"] = names
                # a new version: every process's cached room and rendered state of the game are then stale;
                # a waiting AI move, which only the names changed under, stays valid for it
                conn.execute(
                    text("UPDATE games SET meta = :m, address = NULL, version = version + 1 WHERE id = :id"),
                    {"m": json.dumps(meta), "id": game_id},
                )
                version = conn.execute(text("SELECT version FROM games WHERE id = :id"), {"id": game_id}).scalar_one()
                conn.execute(
                    text("UPDATE ai_jobs SET version = :v WHERE game_id = :id AND version = :old"),
                    {"v": version, "old": version - 1, "id": game_id},
                )
                if self.storage.postgres:  # every process hears it when the transaction commits
                    conn.execute(text("SELECT pg_notify(:c, :p)"), {"c": GAMES_CHANNEL, "p": f"{game_id} {version}"})
            # chat: its lines, reports it made and reports of its lines; its mutes
            run(
                "chat_reports",
                "DELETE FROM chat_reports WHERE reporter = :r OR message_id IN "
                "(SELECT id FROM chat_messages WHERE account = :a)",
                r=f"account:{account_id}",
            )
            run("chat_messages", "DELETE FROM chat_messages WHERE account = :a")
            run("chat_site_mutes", "DELETE FROM chat_site_mutes WHERE account = :a")
            # mail: the address and every mail to it or caused by it
            run("mail_outbox", "DELETE FROM mail_outbox WHERE account_id = :a OR sender_id = :a")
            run("mail_prefs", "DELETE FROM mail_prefs WHERE account_id = :a")
            # settings
            run("account_prefs", "DELETE FROM account_prefs WHERE account = :a")
            run("people_prefs", "DELETE FROM people_prefs WHERE account = :a")
            run("people_seen", "DELETE FROM people_seen WHERE account = :a")
            # people: both ways
            run("follows", "DELETE FROM follows WHERE follower = :a OR followed = :a")
            run("blocks", "DELETE FROM blocks WHERE blocker = :a OR blocked = :a")
            run("challenges", "DELETE FROM challenges WHERE challenger = :a OR challenged = :a")
            # puzzles
            p = f"account:{account_id}"
            for table in ("puzzle_players", "puzzle_attempts", "puzzle_served", "puzzle_streaks"):
                run(table, f"DELETE FROM {table} WHERE player = :p", p=p)
            run("puzzle_seen", "DELETE FROM puzzle_seen WHERE account = :a")
            # ratings: its own history (the opponents' rows stay theirs, naming "closed account")
            run("rating_history", "DELETE FROM rating_history WHERE account_id = :a")
            # tournaments: withdrawn from those not over; the ones it made keep no address
            run(
                "tournament_players",
                "UPDATE tournament_players SET withdrawn = 1 WHERE account = :a AND tournament IN "
                "(SELECT id FROM tournaments WHERE status <> 'finished')",
            )
            run("tournaments", "UPDATE tournaments SET creator_group = NULL WHERE creator = :a")
            # the addresses kept with its work
            run("reviews", "UPDATE reviews SET address = NULL, account = NULL WHERE account = :a")
            run("ai_jobs", "UPDATE ai_jobs SET address = NULL, account = NULL WHERE account = :a")
            run("analysis_runs", "DELETE FROM analysis_runs WHERE account = :a")
            run("budget_spend", "DELETE FROM budget_spend WHERE account = :a")
            # log-ins: sessions, devices, the counters kept under its name
            run("sessions", "DELETE FROM sessions WHERE account_id = :a")
            run("login_devices", "DELETE FROM login_devices WHERE account_id = :a")
            run(
                "auth_throttle",
                "DELETE FROM auth_throttle WHERE key IN (:k1, :k2, :k3) OR key LIKE :pair",
                k1=f"acct:{key}",
                k2=f"ok:{key}",
                k3=f"signup-name:{key}",
                pair=f"pair:{key}|%",
            )
            # the row itself: kept (games and standings point at it), as the neutral name
            conn.execute(
                text(
                    "UPDATE accounts SET username = :n, username_key = :k, password_hash = '!', admin = 0, "
                    "disabled = 1, language = NULL, rating = 1500.0, rd = 350.0, volatility = 0.06, rated_games = 0 "
                    "WHERE id = :a"
                ),
                {**a, "n": CLOSED_NAME, "k": f"~closed-{account_id}"},
            )
        self.accounts.forget_name(account_id)


def owndata_routes(own: OwnData) -> list[Route]:
    """``GET /api/account/data`` (the archive) and ``POST /api/account/close``."""
    accounts = own.accounts

    async def blocking(fn: Callable[..., Any], *args: Any) -> Any:
        import asyncio

        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    @costs("export", methods=("GET", "HEAD"))
    async def data(request: Request) -> Response:
        sess = await blocking(accounts.session_of, request)
        if sess is None:
            raise ClientError("not_logged_in", "log in first", 401)
        body, name = await own.budget.run("export", Who.of(request, sess.account.id), own.archive, sess.account.id)
        return Response(
            body,
            media_type="application/zip",
            headers={"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"},
        )

    @costs("login", methods=("POST",))
    async def close(request: Request) -> Response:
        # a password check: one at a time per address group, as a log-in (issue 51)
        with own.budget.hold("login", Who.of(request)):
            sess = await blocking(accounts.account_for_change, request)
            if sess is None:
                raise ClientError("not_logged_in", "log in first", 401)
            body = await jsonin.read_object(request, 4096, ClientError)
            password = body.get("password")
            if not isinstance(password, str) or not password or len(password) > 256:
                raise ClientError("bad_request", "send {'password': YOUR_PASSWORD} to close your account")
            # counted by the log-in throttle as a guess until it is right (a stolen session cannot guess freely)
            priority = await blocking(accounts.admit_login, sess.account.username, password, Who.of(request).group)
            await accounts.hash_pool.run(own.check_password, sess.account.id, password, priority=priority)
            await blocking(own.close, sess.account.id)
        response = JSONResponse({"ok": True, "closed": True})
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
        return response

    return [
        Route("/api/account/data", data, methods=["GET", "HEAD"]),
        Route("/api/account/close", close, methods=["POST"]),
    ]
