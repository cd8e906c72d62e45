"""A small bounded pool of its own for password hashing (log-in and sign-up).

An Argon2id check costs 64 MiB and tens of milliseconds of CPU.  On the event loop's default
thread pool, which ``/healthz``, session look-ups and background jobs share, 48 log-ins at once
made ``/healthz`` p99 7.3 s (issue 22).  Here at most ``workers`` hashes run at once (2: on a
small server the rest of the app keeps its cores) and at most ``queue`` more wait; beyond that a
log-in or sign-up is answered at once with 503 ``busy`` (nothing was checked), so a burst costs a
bounded amount of memory and never holds up anybody else's request.

The waiting line has priorities (issue 33: 40 addresses sending wrong passwords kept the line full
and 9 of 14 of a victim's log-ins got ``busy``).  A check waits in the order of its priority, a
tuple compared item by item (the smallest first), then of its arrival; when the line is full, a
newcomer of a better priority takes the place of the last of the worst one waiting, which is
answered ``busy``.  A log-in's priority (issue 51: 40 addresses, half of them logging in to accounts
of their own with those accounts' device cookies, still had 2 of 10 honest log-ins refused) is
(whether its address group has failed lately, how many log-ins the group asked in the window, whether
the browser is unknown to the account): so sources that fail, then the busiest ones, only ever push
each other out, and a quiet address's log-in goes first.  The priorities come from the log-in
throttle's counters in the database (web/accounts/accounts.py), which also counted the attempt
before it came here: a ``busy`` refusal counts against the throttle like a wrong password.  One
address group holds at most one check here at a time (the budget ``login``, web/common/budget.py,
asked by the route).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from jericho_game.web.round.rooms import ClientError

__all__ = ["HashPool"]

T = TypeVar("T")
#: A place in the line: compared item by item, the smallest first (an int is a tuple of one).
Priority = tuple[int, ...]


def _busy() -> ClientError:
    return ClientError(
        "busy", "the server is busy checking passwords: nothing was checked, try again in a few seconds", 503
    )


class HashPool:
    """``workers`` threads and a waiting line of ``queue`` by priority: :meth:`run` or 503 ``busy``."""

    def __init__(self, workers: int = 2, queue: int = 8) -> None:
        self.workers = workers
        self.queue = queue
        self.capacity = workers + queue
        self.running = 0  # changed on the event loop only
        self.evicted = 0  # waiting checks pushed out by a better priority
        # waiting: (priority, arrival, future that starts it); the loop's thread only
        self._waiting: list[tuple[Priority, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()
        self._executor: ThreadPoolExecutor | None = None

    @property
    def in_flight(self) -> int:
        """Checks running or waiting."""
        return self.running + len(self._waiting)

    async def run(self, fn: Callable[..., T], *args: Any, priority: Priority | int = (1,)) -> T:
        """``fn(*args)`` on the pool, or :class:`ClientError` ``busy`` (503) when the line is full of
        checks of an equal or better ``priority`` (a smaller one), or when one pushes it out."""
        if isinstance(priority, int):
            priority = (priority,)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="jericho-password")
        if self.running >= self.workers:
            if len(self._waiting) >= self.queue:
                worst = max(self._waiting)
                if worst[0] <= priority:
                    raise _busy()
                self._waiting.remove(worst)  # the last of the worst priority makes room
                self.evicted += 1
                worst[2].set_exception(_busy())
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            entry = (priority, next(self._arrivals), turn)
            self._waiting.append(entry)
            try:
                await turn  # set when a running check ends and this one is the best waiting
            except BaseException:
                if entry in self._waiting:  # cancelled while waiting: give the place back
                    self._waiting.remove(entry)
                elif turn.done() and not turn.cancelled() and turn.exception() is None:
                    self._next()  # its turn came just as it was cancelled: pass the thread on
                raise
        else:
            self.running += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
        finally:
            self._next()

    def _next(self) -> None:
        """A check ended: the best waiting one takes its thread (or the thread is free)."""
        while self._waiting:
            best = min(self._waiting)
            self._waiting.remove(best)
            if not best[2].done():
                best[2].set_result(None)  # it keeps the running count of the one that ended
                return
        self.running -= 1

    def close(self) -> None:
        """Stop the threads (running hashes finish; nothing new starts)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
