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

import ipaddress
import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AIBudget",
    "SocketCaps",
    "address_of",
    "client_group",
    "level_cost",
    "lane_of",
    "set_ipv4_prefix",
    "too_many",
    "CHEAP",
    "HEAVY",
    "DEFERRED",
]

#: How many leading bits of an address make one client (issue 33): an IPv6 /64 is one household or
#: one server (anyone holding one holds 2^64 addresses), an IPv4 address one NAT by default.
IPV6_PREFIX = 64
_ipv4_prefix = 32


def set_ipv4_prefix(bits: int) -> None:
    """Count every IPv4 ``/bits`` network as one client (``jericho serve --ipv4-prefix``, default 32)."""
    global _ipv4_prefix
    if not 8 <= int(bits) <= 32:
        raise ValueError(f"--ipv4-prefix must be between 8 and 32 bits, not {bits}")
    _ipv4_prefix = int(bits)


def client_group(host: str, ipv4_prefix: int | None = None) -> str:
    """The client an address belongs to: its IPv6 /64 (``2001:db8:1:2::/64``), its IPv4 /prefix
    (the address itself at /32), or the text unchanged when it is no IP address (``"?"``, a test's
    ``"testclient"``).  An IPv4-mapped IPv6 address counts as the IPv4 address."""
    bits4 = _ipv4_prefix if ipv4_prefix is None else ipv4_prefix
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host[:64]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if isinstance(ip, ipaddress.IPv4Address):
        if bits4 >= 32:
            return str(ip)
        return str(ipaddress.ip_network(f"{ip}/{bits4}", strict=False))
    return str(ipaddress.ip_network(f"{ip}/{IPV6_PREFIX}", strict=False))


def address_of(conn: Any) -> str:
    """The client of a request or WebSocket: its address's group (:func:`client_group`; ``"?"`` when
    the server has none).  Every fair-share count, quota and turn counts by it."""
    client = getattr(conn, "client", None)
    return client_group(str(client.host)) if client is not None and client.host else "?"


# -- the AI's lanes and budgets (issue 33) -----------------------------------------------------------

CHEAP, HEAVY, DEFERRED = 0, 1, 2  # ai_jobs.lane: claimed in this order

#: Seconds of thought one move of a level costs at most (the levels' own caps on the C kernel,
#: jericho_game.ai.levels: expert 1 s, master 3 s; the cheap ones measured on the 2-core test
#: machine with room to spare: hard 0.02 s, medium 0.008 s, easy 0.0001 s).  Any other player
#: offered (mcts, alphabeta with their default budgets) counts as the dearest level.
LEVEL_COSTS = {"random": 0.001, "easy": 0.002, "greedy": 0.002, "medium": 0.01, "hard": 0.03, "expert": 1.0}
DEAREST = 3.0
CHEAP_COST = 0.25  # a level whose move costs at most this is answered in the cheap lane


def level_cost(level: str | None) -> float:
    """Seconds of thought one move of ``level`` costs at most (its weight in the AI's budget)."""
    return LEVEL_COSTS.get(level or "random", DEAREST)


def lane_of(level: str | None) -> int:
    """:data:`CHEAP` for levels that answer within :data:`CHEAP_COST`, else :data:`HEAVY`."""
    return CHEAP if level_cost(level) <= CHEAP_COST else HEAVY


@dataclass(frozen=True)
class AIBudget:
    """Admission control of new AI games (issue 33, docs/web.md "Limits and quotas").

    Every AI game being played (not finished, changed within ``active`` seconds) holds its level's
    cost (:func:`level_cost`) in its lane.  A new game is admitted only while its lane's total stays
    within ``per_slot`` seconds times the lane's slots (the AI runners alive, from their rows in the
    database), and while no job of the lane has waited longer than ``max_wait`` (the queue's
    measured wait): so a queued move never has more than ``per_slot`` seconds of others' thought
    ahead of it.  A game idle longer than ``active`` that comes back while its lane is over budget
    is still answered (a running game is never refused), in the deferred lane, after the admitted."""

    active: float = 300.0
    heavy_per_slot: float = 4.0
    heavy_max_wait: float = 4.0
    cheap_per_slot: float = 1.5
    cheap_max_wait: float = 1.0

    @classmethod
    def from_limits(cls, limits: Any) -> AIBudget:
        """The budget of a :class:`jericho_game.web.common.limits.Limits`."""
        return cls(active=limits.ai_active, heavy_per_slot=limits.ai_budget, cheap_per_slot=limits.ai_cheap_budget)

    def per_slot(self, lane: int) -> float:
        return self.cheap_per_slot if lane == CHEAP else self.heavy_per_slot

    def max_wait(self, lane: int) -> float:
        return self.cheap_max_wait if lane == CHEAP else self.heavy_max_wait


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
    ("--ai-games-per-client", "ai_games_per_client", int, "AI games being played at once per address (and account)"),
    ("--reviews-per-client", "reviews_per_client", int, "game reviews waiting per address (and account)"),
    ("--seeks-per-client", "seeks_per_client", int, "open lobby seeks per address (and account)"),
    ("--ipv4-prefix", "ipv4_prefix", int, "leading bits of an IPv4 address that make one client (an IPv6 /64 is one)"),
    ("--ai-budget", "ai_budget", float, "seconds of expert/master thought per AI slot that games played may hold"),
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
        if name == "ipv4_prefix" and not 8 <= int(value) <= 32:
            raise ValueError(f"{flag} must be between 8 and 32 bits, not {value}")
        out[name] = kind(value)
    return out
