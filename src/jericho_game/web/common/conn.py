"""One WebSocket client: its seats, its rate limit and its bounded send queue.

Used by the game rooms' transport (:mod:`jericho_game.web.server`) and by the lobby
(:mod:`jericho_game.web.lobby.seeks`); a module of its own so that neither imports the other.
A client that does not read cannot hold up anybody else: a ``state`` waiting in its queue is
replaced by a newer one, and a client too far behind is closed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jericho_game.web.common.limits import Limits

__all__ = ["Conn"]

log = logging.getLogger("jericho_game.web")


@dataclass(eq=False)
class Conn:
    """One WebSocket connection to a game: its seats, rate limit and bounded send queue."""

    ws: Any
    seats: frozenset[str] = frozenset()
    tokens: float = 0.0
    stamp: float = field(default_factory=time.monotonic)
    refused: int = 0
    dropped: bool = False  # closed by us: no longer sent anything
    seen_version: int = -1  # version of the last state queued for it
    queue: deque[tuple[str, str]] = field(default_factory=deque)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    sending_since: float | None = None
    task: asyncio.Task[Any] | None = None  # the connection's handler (cancelled when dropped)
    on_drop: Callable[[Conn, str], None] | None = None
    account: int | None = None  # the logged-in account of the WebSocket's session cookie (web/accounts/accounts.py)
    address: str = "?"  # the client's address (fair share, web/common/fairshare.py)
    capped: bool = False  # counted in the transport's per-address caps (it holds no seat)
    probation: bool = False  # the game's watchers were full: it must say hello with a seat (seat_grace)
    proto: int = 1  # the WebSocket protocol it asked for (2: deltas after the first state, web/round/wire.py)
    wire_seq: int = -1  # the number of the last state (whole or delta) queued for it

    @property
    def role(self) -> str:
        """``south``, ``north``, ``both`` (hot-seat) or ``spectator``."""
        if len(self.seats) == 2:
            return "both"
        return next(iter(self.seats)) if self.seats else "spectator"

    def put(self, text: str, kind: str = "msg", limits: Limits | None = None) -> None:
        """Queue a message; a ``state`` (or ``review``) replaces one still waiting (only the latest
        matters), and a ``state`` also every ``delta`` still waiting (it holds them all)."""
        if self.dropped:
            return
        if kind == "state" and self.queue:
            self.queue = deque(item for item in self.queue if item[0] not in ("state", "delta"))
        elif kind == "review" and self.queue:
            for i, (k, _) in enumerate(self.queue):
                if k == kind:
                    del self.queue[i]
                    break
        self.queue.append((kind, text))
        self.ready.set()
        lim = limits or Limits()
        now = time.monotonic()
        if len(self.queue) > lim.send_queue:
            self.drop(f"more than {lim.send_queue} messages waiting")
        elif self.sending_since is not None and now - self.sending_since > lim.send_timeout:
            self.drop(f"one message took more than {lim.send_timeout:g} s to go out")

    def waiting(self, *kinds: str) -> bool:
        """Whether a message of one of ``kinds`` is queued and not yet sent."""
        return any(k in kinds for k, _ in self.queue)

    def drop(self, why: str, stop: bool = True) -> None:
        """Stop sending to this client; ``stop``: also end its handler (it fell too far behind), which
        closes the connection."""
        if self.dropped:
            return
        self.dropped = True
        self.queue.clear()
        self.ready.set()
        (log.warning if stop else log.info)("closing a WebSocket client: %s", why)
        if self.on_drop is not None:
            self.on_drop(self, why)
        if stop and self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()

    async def pump(self, limits: Limits) -> None:
        """Send queued messages one at a time, in order."""
        while not self.dropped:
            if not self.queue:
                self.ready.clear()
                await self.ready.wait()
                continue
            _, text = self.queue.popleft()
            # a send that hangs is noticed by the next put() or by the transport's watchdog (a
            # timeout per message would cost a task per message)
            self.sending_since = time.monotonic()
            try:
                await self.ws.send_text(text)
            except Exception:  # noqa: BLE001 - closed sockets raise various errors
                self.drop("the connection is gone", stop=False)  # its handler sees the disconnect
                return
            finally:
                self.sending_since = None
