"""The broker: fan-out of "game X changed" between the processes serving one database.

One small interface, two implementations:

- :class:`LocalBroker` (SQLite, the embedded single-process default): in memory.
- :class:`PostgresBroker`: PostgreSQL's own ``LISTEN``/``NOTIFY``, no extra service to run.
  The store sends the ``NOTIFY`` inside the transaction that makes the change
  (:mod:`jericho_game.web.storage.database`), so every committed change is announced and nothing
  uncommitted ever is; this class only listens.

A message is ``(game_id, version)``: the receiver reloads the game from the database when its
copy is older (a message never carries state, so a lost or late one cannot mislead anyone).
Version ``-1`` says only the game's place in the AI queue changed; game ``"*"`` (after the
listening connection was lost and restored) says any game may have changed.  ``on_job`` hears that an
AI job was queued (workers wake up at once instead of at their next poll).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from jericho_game.web.storage.database import GAMES_CHANNEL, JOBS_CHANNEL

__all__ = ["Broker", "LocalBroker", "PostgresBroker", "make_broker"]

log = logging.getLogger("jericho_game.web")

OnChange = Callable[[str, int], None]
OnJob = Callable[[str], None]


class Broker:
    """Fan-out interface: :meth:`start` with callbacks, :meth:`publish` after a commit, :meth:`close`."""

    def __init__(self) -> None:
        self.on_change: OnChange | None = None
        self.on_job: OnJob | None = None

    async def start(self, on_change: OnChange | None = None, on_job: OnJob | None = None) -> None:
        """Begin delivering messages to the callbacks (called on the event loop)."""
        self.on_change, self.on_job = on_change, on_job

    def publish(self, game_id: str, version: int) -> None:
        """Announce a committed change to this process's listeners (others hear it from the database)."""
        if self.on_change is not None:
            self.on_change(game_id, version)

    def job_queued(self, game_id: str) -> None:
        """Announce a queued AI job to this process's listeners."""
        if self.on_job is not None:
            self.on_job(game_id)

    async def close(self) -> None:
        """Stop delivering."""
        self.on_change = self.on_job = None


class LocalBroker(Broker):
    """In-memory fan-out: one process, every listener is in it (SQLite)."""


class PostgresBroker(Broker):
    """``LISTEN`` on a dedicated connection; notifications from every process become callbacks."""

    def __init__(self, url: str) -> None:
        super().__init__()
        from sqlalchemy.engine import make_url

        u = make_url(url)
        self.conninfo = u.set(drivername="postgresql").render_as_string(hide_password=False)
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self, on_change: OnChange | None = None, on_job: OnJob | None = None) -> None:
        await super().start(on_change, on_job)
        self._ready = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._listen())
        try:
            await asyncio.wait_for(self._ready.wait(), 10)
        except TimeoutError:
            log.error("could not LISTEN on PostgreSQL within 10 s: live updates from other processes will be late")

    async def _listen(self) -> None:
        import psycopg

        delay = 0.2
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {GAMES_CHANNEL}")
                    await conn.execute(f"LISTEN {JOBS_CHANNEL}")
                    if self._ready.is_set() and self.on_change is not None:
                        # notifications sent while we were not listening are lost: "everything
                        # may have changed" (version 0 makes every listener check the database)
                        self.on_change("*", 0)
                    self._ready.set()
                    delay = 0.2
                    async for note in conn.notifies():
                        self._deliver(note.channel, note.payload)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the database went away: listen again when it is back
                log.exception("lost the PostgreSQL LISTEN connection; reconnecting")
                await asyncio.sleep(delay)
                delay = min(5.0, delay * 2)

    def _deliver(self, channel: str, payload: str) -> None:
        try:
            if channel == GAMES_CHANNEL and self.on_change is not None:
                gid, _, version = payload.partition(" ")
                self.on_change(gid, int(version))
            elif channel == JOBS_CHANNEL and self.on_job is not None:
                self.on_job(payload)
        except Exception:  # noqa: BLE001 - one bad message must not stop the listener
            log.exception("could not handle the notification %r on %s", payload, channel)

    async def close(self) -> None:
        await super().close()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
            self._task = None


def make_broker(url: str) -> Broker:
    """The broker that fits the database: PostgreSQL's LISTEN/NOTIFY, else in memory."""
    return PostgresBroker(url) if url.startswith("postgresql") else LocalBroker()
