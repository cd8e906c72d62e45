"""The server's limits: its defences against hostile or runaway clients (docs/web.md, "Limits").

One frozen value, built by ``jericho serve`` from its options and read by the transport, the
lobby, the room service's construction and the fair-share caps.  A module of its own so that
every part can import it without importing the transport (:mod:`jericho_game.web.server`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits"]


@dataclass(frozen=True)
class Limits:
    """The server's defences against hostile or runaway clients (see docs/web.md, "Limits")."""

    max_message: int = 4096  # bytes of one WebSocket message or HTTP body
    rate: float = 10.0  # messages per second a connection may send on average
    burst: int = 30  # messages a connection may send at once
    flood_close: int = 200  # refused messages in a row before the connection is closed
    max_connections_per_game: int = 64  # watchers (connections holding no seat) per game; seats never count
    creates_per_minute: int = 60  # new games per client address per minute
    max_rooms_in_memory: int = 2000
    send_timeout: float = 10.0  # seconds one message may take to go out before the client is closed
    send_queue: int = 64  # messages waiting for one client (states coalesced) before it is closed
    ai_queue: int = 64  # AI moves waiting for a worker before new ones are refused (busy)
    sweep: float = 0.5  # seconds between looks for clocks that ran out (in any process)
    min_clock: float = 1.0  # minutes: the shortest clock per side a game may ask for (1e-9 was lost at once)
    # issue 12: presence across processes, claims, the lobby, a browser's games
    claim_after: float = 300.0  # seconds an untimed online game's opponent must be away before a claim
    presence_beat: float = 10.0  # seconds between a process's renewals of its presence rows
    seek_idle: float = 120.0  # an open seek expires once its creator has been away this long (seconds)
    seek_max_age: float = 3600.0  # ... or once it is this old
    max_lobby_connections: int = 1000  # lobby WebSocket clients per process
    max_my_games: int = 500  # games one "my games" request may ask about
    review_queue: int = 16  # game reviews waiting or running before new ones are refused (busy)
    # issue 22, fair share (web/common/fairshare.py): per client, i.e. per address and per account
    ws_per_address: int = 16  # game WebSocket connections holding no seat, per address (and account), per process
    lobby_per_address: int = 8  # lobby WebSocket connections per address (and account), per process
    seat_grace: float = 5.0  # seconds a socket held on probation (watchers full) has to say hello with a seat
    ai_per_client: int = 2  # games waiting for the AI's reply at once, per address (and account), all processes
    ai_games_per_client: int = 4  # issue 51: AI games being played at once, per address (and account), all processes
    reviews_per_client: int = 2  # game reviews waiting or running, per address (and account), all processes
    seeks_per_client: int = 3  # open seeks in the lobby, per address (and account), all processes
    # issue 23: unfinished correspondence games per account (or creator address), web/round/correspondence.py
    correspondence_per_client: int = 50
    # issue 33: open correspondence seeks in the lobby at once (all creators): past it an anonymous seek is
    # refused, and an account's seek crowds out the oldest anonymous one (web/round/correspondence.py)
    correspondence_seeks: int = 40
    # issue 33 (web/common/fairshare.py): one client is an IPv6 /64 or an IPv4 /ipv4_prefix; the AI's
    # admission control: seconds of thought per move round per AI slot that the games being played
    # (changed within ai_active seconds) may hold, for expensive levels and cheap ones
    ipv4_prefix: int = 32
    ai_budget: float = 4.0
    ai_cheap_budget: float = 1.5
    ai_active: float = 300.0
