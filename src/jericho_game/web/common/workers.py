"""The processes that think for the web app: how one is set up, and the bounded pool of them.

Shared by the AI runner (:mod:`jericho_game.web.airunner.aiqueue`: moves and reviews) and the
analysis board's live engine (:mod:`jericho_game.web.learn.analysis_stream`), which start their
processes the same way.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

__all__ = ["make_pool", "worker_init"]


def worker_init(nice: int) -> None:
    """Set up one AI process: lower its priority, and make it exit with its parent.

    A parent killed with ``kill -9`` (or stopped before the pool could say goodbye) would
    otherwise leave its AI processes waiting for work forever."""
    try:
        os.nice(nice)
    except (AttributeError, OSError):  # not everywhere (Windows), and a limit is not a failure
        pass
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="jericho-parent-watch", daemon=True).start()


def make_pool(processes: int, nice: int = 10) -> Executor:
    """``processes`` niced worker processes; 0: one thread in this process (tests, tiny setups)."""
    if processes <= 0:
        return ThreadPoolExecutor(max_workers=3, thread_name_prefix="jericho-ai")  # 2 slots and a cheap one
    ctx = multiprocessing.get_context("spawn")  # never fork a process with an event loop and threads
    return ProcessPoolExecutor(max_workers=processes, mp_context=ctx, initializer=worker_init, initargs=(nice,))
