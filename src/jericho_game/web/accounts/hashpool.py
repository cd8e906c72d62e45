"""A small bounded pool of its own for password hashing (log-in and sign-up).

An Argon2id check costs 64 MiB and tens of milliseconds of CPU.  On the event loop's default
thread pool, which ``/healthz``, session look-ups and background jobs share, 48 log-ins at once
made ``/healthz`` p99 7.3 s (issue 22).  Here at most ``workers`` hashes run at once (2: on a
small server the rest of the app keeps its cores) and at most ``queue`` more wait; beyond that a
log-in or sign-up is answered at once with 503 ``busy`` (nothing was checked or changed), so a
burst costs a bounded amount of memory and never holds up anybody else's request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from jericho_game.web.round.rooms import ClientError

__all__ = ["HashPool"]

T = TypeVar("T")


class HashPool:
    """``workers`` threads and a waiting line of ``queue``: :meth:`run` or 503 ``busy``."""

    def __init__(self, workers: int = 2, queue: int = 8) -> None:
        self.workers = workers
        self.capacity = workers + queue
        self.in_flight = 0  # running or waiting; changed on the event loop only
        self._executor: ThreadPoolExecutor | None = None

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the pool, or :class:`ClientError` ``busy`` (503) when it is full."""
        if self.in_flight >= self.capacity:
            raise ClientError(
                "busy", "the server is busy checking passwords: nothing was checked, try again in a few seconds", 503
            )
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="jericho-password")
        self.in_flight += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
        finally:
            self.in_flight -= 1

    def close(self) -> None:
        """Stop the threads (running hashes finish; nothing new starts)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
