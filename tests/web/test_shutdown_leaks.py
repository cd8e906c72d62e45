"""Stopping the web app's background work leaves no database connection or pipe to the garbage collector.

A connection still checked out by a thread when the storage's pool was disposed, or a server's
pipe left open after ``wait``, was closed later by the collector: a ResourceWarning reported as an
"unraisable exception" in whatever test ran next (pyproject's filterwarnings now makes those
errors too).  Each test here holds the resource in the middle of the shutdown.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from jericho_game.web.accounts.accounts import AccountService
from jericho_game.web.accounts.ratings import Ratings
from jericho_game.web.round.rooms import GameService
from jericho_game.web.storage.broker import LocalBroker
from jericho_game.web.storage.database import Storage, resolve_db_url
from tests.helpers import Load
from tests.web.processes import finish


def _storage(tmp_path: Path) -> Storage:
    return Storage(resolve_db_url(str(tmp_path / "g.sqlite3")))


def test_closing_the_game_service_waits_for_the_statement_its_read_thread_runs(tmp_path: Path) -> None:
    storage = _storage(tmp_path)
    service = GameService(storage, LocalBroker())
    holding = threading.Event()

    def read() -> None:
        with storage.reader.connect():
            holding.set()
            time.sleep(0.5)  # a slow statement

    async def main() -> None:
        job = asyncio.ensure_future(service.off_loop_read(read))
        while not holding.is_set():
            await asyncio.sleep(0.01)
        service.close()
        assert storage.reader.pool.checkedout() == 0, "the read thread still held its connection"
        await job

    try:
        asyncio.run(main())
    finally:
        storage.close()


def test_a_cancelled_rating_loop_ends_its_round_before_returning(tmp_path: Path) -> None:
    storage = _storage(tmp_path)
    ratings = Ratings(storage, AccountService(storage))
    holding = threading.Event()

    def slow_round() -> int:
        with storage.reader.connect():
            holding.set()
            time.sleep(0.5)
        return 0

    ratings.process_all = slow_round  # type: ignore[method-assign]

    async def main() -> None:
        task = asyncio.get_running_loop().create_task(ratings.run())
        while not holding.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.wait([task])
        assert task.cancelled()
        assert storage.reader.pool.checkedout() == 0, "the round's thread still held its connection"

    try:
        asyncio.run(main())
    finally:
        storage.close()


def test_finish_stops_a_process_and_closes_its_pipe_even_while_a_thread_reads_it() -> None:
    cmd = [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    reader = threading.Thread(target=proc.stdout.read, daemon=True)
    reader.start()
    assert finish(proc, timeout=20) != 0  # stopped by SIGTERM
    assert proc.stdout.closed
    reader.join(timeout=5)
    assert not reader.is_alive()


def test_stopping_waits_for_a_storage_call_left_running_by_a_cancelled_task() -> None:
    from jericho_game.web.storage.threads import CallThreads

    holding, released = threading.Event(), threading.Event()

    def statement() -> None:
        holding.set()
        time.sleep(0.5)
        released.set()

    async def main() -> None:
        calls = CallThreads()
        calls.install()
        task = asyncio.ensure_future(asyncio.get_running_loop().run_in_executor(None, statement))
        while not holding.is_set():
            await asyncio.sleep(0.01)
        task.cancel()  # the thread goes on
        assert await calls.drain(timeout=20)
        assert released.is_set(), "drain returned while the call still ran"

    asyncio.run(main())


@pytest.mark.timing
def test_draining_is_bounded_when_a_call_never_ends() -> None:
    from jericho_game.web.storage.threads import CallThreads

    stop = threading.Event()

    async def main() -> None:
        calls = CallThreads()
        calls.install()
        asyncio.get_running_loop().run_in_executor(None, stop.wait, 30)
        await asyncio.sleep(0.05)
        with Load() as load:
            start = time.monotonic()
            ended = await calls.drain(timeout=0.3)
            took = time.monotonic() - start
        stop.set()  # (asyncio.run joins the executor's threads at its end)
        # the drain's 0.3 s, not the call's 30 s (5 s on an idle machine, scaled by its load)
        assert not ended and took < 5 * load.factor, (took, load.factor)

    try:
        asyncio.run(main())
    finally:
        stop.set()
