"""The event loop's default executor, owned by the app so that stopping can wait for it (bounded).

The app's tasks run their storage calls with ``loop.run_in_executor(None, ...)``; cancelling a
task at shutdown does not stop the thread, whose statement may still hold a connection when the
storage's pool is disposed.  That connection was then closed by the garbage collector, a
ResourceWarning in whatever ran next.  ``asyncio``'s own ``shutdown_default_executor`` cannot be
bounded in Python 3.11 (cancelled, it still joins the threads on the event loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor


class CallThreads:
    """A thread pool installed as the running loop's default executor, drained at shutdown."""

    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(thread_name_prefix="jericho-call")

    def install(self) -> None:
        """Make it the running loop's default executor (``run_in_executor(None, ...)``)."""
        asyncio.get_running_loop().set_default_executor(self.executor)

    async def drain(self, timeout: float) -> bool:
        """Refuse new calls, wait up to ``timeout`` s for the running ones; whether they all ended."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def finished() -> None:
            if not done.done():
                done.set_result(None)

        def join() -> None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(finished)

        threading.Thread(target=join, daemon=True, name="jericho-call-drain").start()
        ended, _ = await asyncio.wait([done], timeout=timeout)
        return bool(ended)
