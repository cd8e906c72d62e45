"""How a long run of games in worker processes stops: Ctrl-C, and ``kill`` as Ctrl-C.

A run that plays for hours (the arena, the training run's self-play) must stop cleanly when asked,
whether from a terminal (Ctrl-C reaches the whole process group) or by ``kill PID`` (SIGTERM, to
the parent alone; a run started in the background with ``nohup ... &`` ignores Ctrl-C, so ``kill``
is its only stop).  Either way the parent raises :class:`KeyboardInterrupt`, stops its workers,
keeps what finished and says so; the workers leave the decision to it.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["STOP_SIGNALS", "ignore_sigint", "sigterm_stops", "spawn_pool", "stop_deferred"]


#: The signals that stop a run as Ctrl-C does, keeping its finished games: SIGTERM is what ``kill
#: PID`` sends, and a run started in the background (``nohup ... &``) ignores Ctrl-C's SIGINT.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _raise_stop(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextmanager
def sigterm_stops() -> Iterator[None]:
    """Within the block, ``kill PID`` (SIGTERM) stops the run as Ctrl-C does: the workers ended,
    the finished games summarised (by default it killed the parent at once, with no summary, and
    left its workers to play on).  Only on the main thread, and not where SIGTERM is ignored."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) in (
        signal.SIG_IGN,
        None,
    ):
        yield
        return
    old = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@contextmanager
def stop_deferred() -> Iterator[None]:
    """Hold a stop (Ctrl-C or SIGTERM, :data:`STOP_SIGNALS`) until the block ends, then raise it
    as KeyboardInterrupt: a game whose record was written is also in the journal and the summary
    (a Ctrl-C between the two lost it from both).  Only on the main thread, where Python runs
    signal handlers, and not for a signal that is ignored there (or handled outside Python)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    asked: list[int] = []
    held = [sig for sig in STOP_SIGNALS if signal.getsignal(sig) not in (signal.SIG_IGN, None)]
    old = {sig: signal.signal(sig, lambda signum, _frame: asked.append(signum)) for sig in held}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    if asked:
        raise KeyboardInterrupt(signal.Signals(asked[0]).name)


@contextmanager
def spawn_pool(jobs: int, initializer: Callable[[], None] | None = None) -> Iterator[multiprocessing.pool.Pool]:
    """A pool of ``jobs`` spawned workers that leave Ctrl-C to the parent from their first
    instruction, terminated when the block ends however it ends (``with spawn_pool(2) as pool``).

    ``initializer`` (by default :func:`ignore_sigint`) only runs once a worker has imported what
    it needs, and a Ctrl-C reaching the process group before then killed it with a traceback; so
    the workers are started with Ctrl-C ignored (an ignored signal stays ignored across exec, and
    Python keeps it so), and the parent's handler is back as soon as they exist (a Ctrl-C in those
    few milliseconds is lost, not half-handled).

    A ``kill`` (SIGTERM made a stop by :func:`sigterm_stops`) while the pool starts is held until
    every worker is started and the pool owns them, then raised: raised in the middle, it left the
    pool unbuilt (``Pool()`` cleans up only after an ``Exception``) and its first workers unowned,
    still unpickling their start-up data when the parent, exiting, removed the named semaphores of
    the pool's queues from under them (a ``FileNotFoundError`` traceback from the worker) or closed
    the pipe that data was still to come through (an ``EOFError`` one)."""
    context = multiprocessing.get_context("spawn")
    init = ignore_sigint if initializer is None else initializer
    asked: list[int] = []
    old: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():  # (only it may set handlers)
        if signal.getsignal(signal.SIGINT) is not None:
            old[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
        if callable(signal.getsignal(signal.SIGTERM)):  # a stop: SIG_DFL kills, as the caller chose
            old[signal.SIGTERM] = signal.signal(signal.SIGTERM, lambda signum, _frame: asked.append(signum))
    pool = None
    try:
        try:
            pool = context.Pool(jobs, initializer=init)
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
        if asked:
            raise KeyboardInterrupt(signal.Signals(asked[0]).name)
        yield pool
    finally:
        if pool is not None:
            pool.terminate()


def ignore_sigint() -> None:
    """Workers leave Ctrl-C to the parent, which stops the pool and keeps the finished games."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
