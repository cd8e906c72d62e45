"""``jericho user``: manage the web app's accounts from the server's shell.

``jericho user add NAME [--admin]`` creates an account; on an existing name it refuses and
changes nothing (a stranger may have signed up under the name meant for the operator: promoting
it silently made that stranger an admin).  ``promote NAME`` / ``demote NAME`` make an existing
account an admin or not, and say whose account it is; ``passwd NAME`` sets a new password and ends
its sessions; ``disable NAME`` / ``enable NAME``; ``mute NAME`` / ``unmute NAME`` (the account may
no longer write in any game's chat, or may again: web/social/chat.py); ``list``.  A password is asked for twice at a
terminal, or read from the first line of stdin otherwise
(``printf '%s\\n' "$PW" | jericho user add alice``); it is never an argument, so it never shows
in ``ps`` or the shell's history.
"""

from __future__ import annotations

import argparse
import getpass
import sys

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser, name: str = "user") -> None:
    """Options of ``jericho user``."""
    parser.add_argument(
        "action",
        choices=["add", "promote", "demote", "passwd", "disable", "enable", "mute", "unmute", "list"],
        help="what to do (mute/unmute: the account's chat, site-wide)",
    )
    parser.add_argument("name", nargs="?", help="the account's username")
    parser.add_argument("--admin", action="store_true", help="add: make the new account an admin")
    parser.add_argument("--db", default=None, help="SQLite file or database URL: the one `jericho serve` uses")


def _read_password() -> str:
    if sys.stdin.isatty():
        first = getpass.getpass("Password: ")
        if getpass.getpass("Password again: ") != first:
            raise SystemExit("jericho user: the two passwords differ; nothing was changed")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def run(args: argparse.Namespace) -> int:
    """Run one ``jericho user`` action; 0 on success, 2 with a message otherwise."""
    from jericho_game.web.accounts.accounts import AccountService
    from jericho_game.web.round.rooms import ClientError
    from jericho_game.web.storage.database import Storage, StorageError, resolve_db_url

    if args.action != "list" and not args.name:
        print(f"jericho user {args.action}: give the account's NAME", file=sys.stderr)
        return 2
    try:
        storage = Storage(resolve_db_url(args.db))
    except StorageError as exc:
        print(f"jericho user: {exc}", file=sys.stderr)
        return 2
    try:
        accounts = AccountService(storage)
        if args.action == "list":
            for acc in accounts.list_accounts():
                admin = "  admin" if acc.admin else ""
                print(f"{acc.username}  rating {acc.rating:.0f} ± {acc.rd:.0f}  {acc.rated_games} rated games{admin}")
        elif args.action == "add":
            found = accounts.find(args.name)
            if found is not None:
                hint = f"; to make it an admin: `jericho user promote {found.username}`" if args.admin else ""
                print(
                    f"jericho user: an account named {found.username!r} already exists "
                    f"({found.rated_games} rated games): nothing was changed{hint} "
                    "(first make sure the account is yours)",
                    file=sys.stderr,
                )
                return 2
            acc = accounts.create_account(args.name, _read_password(), admin=args.admin)
            print(f"account {acc.username} created" + (" (admin)" if acc.admin else ""))
        elif args.action in ("promote", "demote"):
            acc = accounts.set_admin(args.name, args.action == "promote")
            state = "now an admin" if acc.admin else "no longer an admin"
            print(f"existing account {acc.username} ({acc.rated_games} rated games) is {state}: no password was asked")
        elif args.action in ("mute", "unmute"):
            from jericho_game.web.social.chat import ChatStore

            found = accounts.find(args.name)
            if found is None:
                print(f"jericho user: there is no account named {args.name!r}: nothing was changed", file=sys.stderr)
                return 2
            changed = ChatStore(storage).set_site_mute(found.id, args.action == "mute")
            state = "muted: it can no longer write in any chat" if args.action == "mute" else "unmuted: it may chat"
            print(f"{found.username} {state}" + ("" if changed else f" (it was already {args.action}d)"))
        elif args.action == "passwd":
            accounts.set_password(args.name, _read_password())
            print(f"{args.name}: password changed, every session ended")
        else:
            accounts.set_disabled(args.name, args.action == "disable")
            print(f"{args.name} {args.action}d")
    except ClientError as exc:
        print(f"jericho user: {exc.message}", file=sys.stderr)
        return 2
    finally:
        storage.close()
    return 0
