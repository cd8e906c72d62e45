"""Fair share (issue 22): no client can lock players out of their games or take everybody's share.

Who a client is: its address (``request.client.host`` / ``websocket.client.host``, as the log-in
throttle counts it: uvicorn puts the ``X-Forwarded-For`` address there only for the proxies named
by ``--forwarded-allow-ips``) and, when logged in, its account.  Each cap counts both: a client is
over it when its address *or* its account is.

Two kinds of caps, kept where their truth lives (docs/web.md, "Limits and quotas"):

- **Queued work and listings are counted in the database**, so they hold across every server
  process and ``jericho worker``: AI jobs waiting or being thought about (``ai_jobs.address``,
  ``.account``), reviews (``reviews.address``, ``.account``), open seeks (``games.address`` and
  the creator's account).  The checks run in the transaction that adds the row (on PostgreSQL a
  creation also takes an advisory lock per address, so one client's creations on several
  processes are counted one after the other).  Claims take turns between addresses
  (:meth:`jericho_game.web.storage.database.Storage.claim_job`,
  :meth:`jericho_game.web.learn.review.ReviewStore.claim`).
- **WebSocket connections are counted per process** (:class:`SocketCaps`), as lichess's socket
  servers count theirs: a socket lives and dies with one process, so a row per socket would cost
  a database write per connection and go stale with a killed process, while per process the
  count is exact at no cost.  With ``--workers N`` (or N servers behind a balancer) one address
  can hold N times the cap, which the operator sizes for.

A seat holder is never refused by the game's watcher cap: connections that hold no seat (watchers,
and sockets that have not said ``hello`` yet) are counted apart from the players'.  Once a game has
``max_connections_per_game`` watchers, a new socket is held *on probation*: it is sent nothing and
must say ``hello`` with a seat's token within ``seat_grace`` seconds (or come with the session of an
account that holds a seat), else it is closed with ``full`` (1013).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["SocketCaps", "address_of", "too_many"]


def address_of(conn: Any) -> str:
    """The client address of a request or WebSocket (``"?"`` when the server has none)."""
    client = getattr(conn, "client", None)
    return str(client.host) if client is not None and client.host else "?"


def too_many(what: str, limit: int) -> str:
    """The ``too_many_connections`` error message (JSON) of a refused WebSocket."""
    message = (
        f"too many {what} connections from your address or account (the most is {limit} per server process): "
        "close some tabs and reload"
    )
    return json.dumps({"type": "error", "code": "too_many_connections", "message": message})


class SocketCaps:
    """Counts of one process's WebSocket connections per address and per account, under a cap each.

    ``take`` counts a connection in (False, counting nothing, when its address or its account is at
    the cap); ``give`` counts it out.  Keys with no connection left are forgotten, so the table
    never grows beyond the connections open."""

    def __init__(self, per_address: int, per_account: int) -> None:
        self.per_address = per_address
        self.per_account = per_account
        self.addresses: dict[str, int] = {}
        self.accounts: dict[int, int] = {}

    def take(self, address: str, account: int | None) -> bool:
        """Count one more connection of ``address`` / ``account`` if both are under their cap."""
        if self.addresses.get(address, 0) >= self.per_address:
            return False
        if account is not None and self.accounts.get(account, 0) >= self.per_account:
            return False
        self.addresses[address] = self.addresses.get(address, 0) + 1
        if account is not None:
            self.accounts[account] = self.accounts.get(account, 0) + 1
        return True

    def give(self, address: str, account: int | None) -> None:
        """Count one connection of ``address`` / ``account`` out (it closed, or it now holds a seat)."""
        n = self.addresses.get(address, 0) - 1
        if n > 0:
            self.addresses[address] = n
        else:
            self.addresses.pop(address, None)
        if account is not None:
            m = self.accounts.get(account, 0) - 1
            if m > 0:
                self.accounts[account] = m
            else:
                self.accounts.pop(account, None)


# -- settings: every cap is a field of limits.Limits and a `jericho serve` flag ------------------

#: (flag, Limits field, type, help) of each fair-share setting of ``jericho serve``.
FLAGS: list[tuple[str, str, type, str]] = [
    ("--max-watchers", "max_connections_per_game", int, "watchers (connections holding no seat) per game"),
    ("--ws-per-address", "ws_per_address", int, "game connections holding no seat per address (and account)"),
    ("--lobby-per-address", "lobby_per_address", int, "lobby connections per address (and account)"),
    ("--seat-grace", "seat_grace", float, "seconds a socket held while the watchers are full has to show a seat"),
    ("--ai-per-client", "ai_per_client", int, "games waiting for the AI's reply per address (and account)"),
    ("--reviews-per-client", "reviews_per_client", int, "game reviews waiting per address (and account)"),
    ("--seeks-per-client", "seeks_per_client", int, "open lobby seeks per address (and account)"),
]


def add_arguments(parser: Any, defaults: Any) -> None:
    """The fair-share flags of ``jericho serve`` (``defaults``: the :class:`Limits` class)."""
    for flag, name, kind, what in FLAGS:
        default = getattr(defaults, name)
        parser.add_argument(flag, type=kind, default=default, dest=name, help=f"{what} (default {default:g})")


def settings(values: Any) -> dict[str, Any]:
    """The fair-share :class:`Limits` fields from parsed arguments (or a dict of them)."""
    out: dict[str, Any] = {}
    for flag, name, kind, _ in FLAGS:
        value = values.get(name) if isinstance(values, dict) else getattr(values, name, None)
        if value is None:
            continue
        if not kind(value) > 0:
            raise ValueError(f"{flag} must be positive, not {value}")
        out[name] = kind(value)
    return out
