"""The AI queue's consumer: claims AI jobs from the database and thinks in a bounded pool of processes.

A job (table ``ai_jobs``, written by the room service in the same transaction as the change that
made it the AI's turn) names a game, its version and the position.  :class:`AIRunner` claims the
oldest one with a lease (``FOR UPDATE SKIP LOCKED`` on PostgreSQL), computes the move in a worker
*process* (never on the web server's event loop; the processes run at a lower priority,
``os.nice``), renews the lease while it thinks, and plays the move through
:meth:`GameService.ai_move`, which discards it when the game moved on meanwhile.  A runner killed
mid-thought (even ``kill -9``) leaves its lease to expire; another runner then takes the job.

Other kinds of jobs ride on the same runner (:class:`JobKind`: game reviews, web/learn/review.py); they
are claimed only when no AI move waits.  The analysis board's live engine (web/learn/analysis_stream.py)
takes a slot of the same pool through :meth:`AIRunner.acquire` under the same rule, and gives it
back to an AI move that waits (:meth:`AIRunner.acquire`'s ``preempt``).

The web server runs a runner with a local pool (``jericho serve --ai-processes N``);
``jericho worker --db URL`` runs one on its own, on this or another machine (PostgreSQL).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import secrets
import signal
import socket
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any, Protocol

from jericho_game.ai.base import Limit
from jericho_game.ai.levels import think_time
from jericho_game.web.common.fairshare import CHEAP
from jericho_game.web.common.workers import make_pool
from jericho_game.web.storage.database import AIJob, Storage

__all__ = ["AIRunner", "JobKind", "think", "add_arguments", "run"]

log = logging.getLogger("jericho_game.web")

LEASE = 6.0  # seconds a claim holds without renewal: how long a dead runner's job waits
BEAT = 2.0  # seconds between two renewals of the runner's row (its slots count in the AI's admission)


def think(level: str, start_position: str | None, moves: list[str], limit: Limit | None) -> str | None:
    """The AI's move in notation (runs in a worker process); None when the AI failed."""
    from jericho_game.ai.base import make_player
    from jericho_game.game import Game

    game = Game.from_position(start_position) if start_position else Game()
    for mv in moves:
        game.play(mv)
    try:
        player = make_player(level)
    except Exception:  # noqa: BLE001 - e.g. a level stored by another installation: the game must go on
        logging.getLogger("jericho_game.web").warning("AI level %r unavailable here; playing random", level)
        player = make_player("random")
    try:
        return str(player.choose_move(game, limit))
    except Exception:  # noqa: BLE001 - a failing AI must not stall the game: the service plays a random move
        logging.getLogger("jericho_game.web").exception("AI %s failed", level)
        return None


def warm() -> None:
    """Load the AI's modules in a worker process: the runner starts all its processes at once, so a
    cheap move under load never waits for its process to be spawned (a second or more)."""
    from jericho_game.ai.base import make_player
    from jericho_game.game import Game

    make_player("easy").choose_move(Game())


class JobKind(Protocol):
    """Another kind of job for the AI workers (e.g. :class:`jericho_game.web.learn.review.ReviewJobs`)."""

    name: str

    def claim(self, worker: str, lease: float) -> Any | None:
        """Claim a job for ``lease`` seconds (called on a thread), or ``None``."""

    async def run(self, job: Any, pool: Executor, worker: str) -> None:
        """Do the job (the thinking in ``pool``), keep its lease, store its result."""


class AIRunner:
    """Claims jobs while it has free slots and plays their moves through the room service.

    AI moves come first; jobs of the other ``kinds`` (game reviews) are claimed only when no AI
    move waits, and take at most all slots but one (one when there is only one).  Between clients
    the claims take turns (:meth:`Storage.claim_job`), and the last free slot is kept for a
    client with nothing being thought about (fair share, docs/web.md "Limits and quotas").

    Besides its ``slots``, a runner keeps ``cheap_slots`` for the cheap lane (issue 33: easy to hard,
    a few milliseconds a move): so a cheap level's reply never waits for an expensive level's
    thought, and the ``pool`` must have ``slots + cheap_slots`` workers.  Its row in ``ai_runners``,
    renewed every :data:`BEAT` seconds, tells every process's admission control its slots."""

    def __init__(
        self,
        storage: Storage,
        play: Callable[[AIJob, str | None], Any],
        *,
        slots: int,
        pool: Executor,
        ai_limit: Limit | None = None,
        ai_delay: float = 0.0,
        poll: float = 0.25,
        on_claim: Callable[[AIJob], None] | None = None,
        kinds: Sequence[JobKind] = (),
        cheap_slots: int = 1,
    ) -> None:
        self.storage = storage
        self.cheap_slots = max(0, cheap_slots)
        self.cheap_busy = 0
        self._beaten = 0.0
        self.play = play
        self.slots = max(1, slots)
        self.pool = pool
        self.ai_limit = ai_limit
        self.ai_delay = ai_delay
        self.poll = poll
        self.on_claim = on_claim
        self.kinds = list(kinds)  # other kinds of jobs (game reviews), run when no AI move waits
        self.other_busy = 0
        self.name = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.busy = 0
        self.done = 0
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        # interactive jobs (the analysis board's streams): waiting for a slot, and holding one
        self._waiters: deque[tuple[asyncio.Future[None], Callable[[], None]]] = deque()
        self.interactive: list[Callable[[], None]] = []  # the preempt callbacks of those holding a slot
        self.preempted = 0

    def wake(self, *_: Any) -> None:
        """A job was queued: look now rather than at the next poll."""
        self._wake.set()

    async def run(self) -> None:
        """Claim and run jobs until cancelled."""
        loop = asyncio.get_running_loop()
        try:  # every process of the pool now, not on demand (the cheap lane's would start late)
            for _ in range(self.slots + self.cheap_slots):
                self.pool.submit(warm)
        except Exception:  # noqa: BLE001 - a pool that is shutting down: the jobs will say so
            log.exception("could not start the AI processes")
        while True:
            self._wake.clear()
            if time.monotonic() - self._beaten >= BEAT:
                try:
                    await loop.run_in_executor(None, self.storage.runner_beat, self.name, self.slots, self.cheap_slots)
                    self._beaten = time.monotonic()
                except Exception:  # noqa: BLE001 - the database is away: try again at the next poll
                    log.exception("could not renew the AI runner's row")
            while self.cheap_busy < self.cheap_slots:  # the cheap lane's own slots (issue 33)
                try:
                    job = await loop.run_in_executor(None, self._claim_cheap)
                except Exception:  # noqa: BLE001 - the database is away: try again at the next poll
                    log.exception("could not claim an AI job")
                    job = None
                if job is None:
                    break
                self.cheap_busy += 1
                self._start(loop, job, cheap=True)
            while self.busy < self.slots:
                # fair share (issue 22): the last free slot only takes a job of an address that has
                # none being thought about, so one client's burst never holds every slot
                last = self.slots > 1 and self.busy == self.slots - 1
                try:
                    job = await loop.run_in_executor(None, self.storage.claim_job, self.name, LEASE, last)
                except Exception:  # noqa: BLE001 - the database is away: try again at the next poll
                    log.exception("could not claim an AI job")
                    job = None
                if job is None:
                    if self._grant() or await self._claim_other(loop):
                        continue
                    break
                self.busy += 1
                self._start(loop, job, cheap=False)
            if self.busy >= self.slots and self.interactive:
                await self._preempt(loop)
            try:
                await asyncio.wait_for(self._wake.wait(), self.poll)
            except TimeoutError:
                pass

    def _claim_cheap(self) -> AIJob | None:
        return self.storage.claim_job(self.name, LEASE, False, (CHEAP,))

    def _start(self, loop: asyncio.AbstractEventLoop, job: AIJob, cheap: bool) -> None:
        if self.on_claim is not None:
            self.on_claim(job)
        task = loop.create_task(self._run_job(job, cheap))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- interactive jobs: the analysis board's engine streams (web/learn/analysis_stream.py) ---------
    async def acquire(self, preempt: Callable[[], None]) -> None:
        """Wait for a slot of the pool for an interactive job, under the rule of the other kinds: only
        when no AI move waits to be claimed, and at most all slots but one (one when there is only one).
        Waiters are served in turn, before game reviews.  While it holds the slot, ``preempt()`` is
        called if an AI move waits and every slot is taken: the job must then :meth:`release` the slot
        soon (it ends its search within a slice) and may :meth:`acquire` again.  Cancelling the wait
        takes nothing."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (fut, preempt)
        self._waiters.append(entry)
        self._wake.set()
        try:
            await fut
        except asyncio.CancelledError:
            if entry in self._waiters:
                self._waiters.remove(entry)
            elif fut.done() and not fut.cancelled():  # granted just as the wait was cancelled
                self.release(preempt)
            raise

    def release(self, preempt: Callable[[], None]) -> None:
        """Give back the slot that :meth:`acquire` gave the job of ``preempt``."""
        if preempt in self.interactive:
            self.interactive.remove(preempt)
            self.busy -= 1
            self.other_busy -= 1
            self._wake.set()

    @property
    def waiting_interactive(self) -> int:
        """Interactive jobs waiting for a slot."""
        return len(self._waiters)

    def _grant(self) -> bool:
        """Give a free slot to the first interactive job waiting (no AI move was claimable)."""
        if self.other_busy >= max(1, self.slots - 1):
            return False
        while self._waiters:
            fut, preempt = self._waiters.popleft()
            if fut.done():
                continue
            self.busy += 1
            self.other_busy += 1
            self.interactive.append(preempt)
            fut.set_result(None)
            return True
        return False

    async def _preempt(self, loop: asyncio.AbstractEventLoop) -> None:
        """Every slot is taken and interactive jobs hold some: if an AI move waits that the freed slot
        could take (the fair-share rule of the last slot included), the newest interactive job gives
        its slot back.  So an analysis never keeps a game waiting for more than one slice."""
        try:
            waiting = await loop.run_in_executor(None, self.storage.claimable_jobs, self.slots > 1)
        except Exception:  # noqa: BLE001 - the database is away: look again at the next poll
            return
        if waiting and self.interactive and self.busy >= self.slots:
            preempt = self.interactive.pop()
            self.busy -= 1
            self.other_busy -= 1
            self.preempted += 1
            preempt()

    async def _claim_other(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Start a job of another kind (a game review step) if one waits; they leave a slot to AI moves."""
        if self.other_busy >= max(1, self.slots - 1):
            return False
        for kind in self.kinds:
            try:
                job = await loop.run_in_executor(None, kind.claim, self.name, LEASE)
            except Exception:  # noqa: BLE001 - the database is away: try again at the next poll
                log.exception("could not claim a %s job", kind.name)
                continue
            if job is not None:
                self.busy += 1
                self.other_busy += 1
                task = loop.create_task(self._run_other(kind, job))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                return True
        return False

    async def _run_other(self, kind: JobKind, job: Any) -> None:
        try:
            await kind.run(job, self.pool, self.name)
            self.done += 1
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the kind keeps its job queued; its lease runs out
            log.exception("%s job failed", kind.name)
        finally:
            self.busy -= 1
            self.other_busy -= 1
            self._wake.set()

    async def _run_job(self, job: AIJob, cheap: bool = False) -> None:
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        try:
            fut = loop.run_in_executor(self.pool, think, job.level, job.start_position, job.moves, self.ai_limit)
            alive = True
            while True:
                try:
                    move = await asyncio.wait_for(asyncio.shield(fut), LEASE / 3)
                    break
                except TimeoutError:
                    alive = await loop.run_in_executor(None, self.storage.renew_job, job, self.name, LEASE)
                    if not alive:  # the game moved on (undo, resign, time): its result is not wanted
                        break
            if not alive:
                return
            # the level's own least think time (ai/levels.py: no upper level answers at once)
            wait = max(self.ai_delay, think_time(job.level)) - (time.monotonic() - started)
            if wait > 0:
                await asyncio.sleep(wait)
            self.play(job, move)
            self.done += 1
        except asyncio.CancelledError:
            try:
                self.storage.release_job(job, self.name)
            except Exception:  # noqa: BLE001 - the lease runs out anyway
                pass
            raise
        except Exception:  # noqa: BLE001 - the job stays queued: its lease runs out and it is tried again
            log.exception("AI job for game %s failed", job.game_id)
        finally:
            if cheap:
                self.cheap_busy -= 1
            else:
                self.busy -= 1
            self._wake.set()

    async def close(self) -> None:
        """Stop claiming; give back the jobs being thought about."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        try:
            self.storage.runner_gone(self.name)
        except Exception:  # noqa: BLE001 - its row goes stale anyway
            pass
        self.pool.shutdown(wait=False, cancel_futures=True)


# -- jericho worker ----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser, name: str = "worker") -> None:
    """Options of ``jericho worker``."""
    parser.add_argument("--db", required=True, help="the PostgreSQL URL the web servers use")
    parser.add_argument(
        "--processes", type=int, default=os.cpu_count() or 1, help="AI processes (default: one per CPU)"
    )
    parser.add_argument("--nice", type=int, default=10, help="priority drop of the AI processes (default 10)")
    parser.add_argument("--ai-delay", type=float, default=0.4, help="minimum seconds per AI move (as jericho serve)")


def run(args: argparse.Namespace) -> int:
    """Run AI jobs of the web app's database until interrupted."""
    from jericho_game.web.learn.review import ReviewJobs, ReviewStore
    from jericho_game.web.round.rooms import GameService
    from jericho_game.web.storage.broker import make_broker
    from jericho_game.web.storage.database import StorageError, resolve_db_url

    url = resolve_db_url(args.db)
    if not url.startswith("postgresql"):
        print(
            "jericho worker: needs the PostgreSQL database the web servers use (--db postgresql+psycopg://...); "
            "with SQLite, jericho serve runs the AI itself",
            flush=True,
        )
        return 2
    try:
        storage = Storage(url)
    except StorageError as exc:
        print(f"jericho worker: {exc}", flush=True)
        return 2

    async def main() -> None:
        broker = make_broker(url)
        service = GameService(storage, broker)
        runner = AIRunner(
            storage,
            service.ai_move,
            slots=max(1, args.processes),
            pool=make_pool(max(1, args.processes) + 1, args.nice),  # and one for the cheap lane (issue 33)
            ai_delay=args.ai_delay,
            on_claim=lambda job: None,  # the claim's NOTIFY already told the web servers
            kinds=[ReviewJobs(ReviewStore(storage), broker)],  # game reviews (web/learn/review.py)
        )
        await broker.start(on_job=runner.wake)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, stop.set)
            except NotImplementedError:  # pragma: no cover - Windows
                pass
        print(f"jericho worker {runner.name}: {args.processes} AI process(es) on {url.split('@')[-1]}", flush=True)
        task = loop.create_task(runner.run())
        await stop.wait()
        task.cancel()
        await runner.close()
        await broker.close()

    try:
        asyncio.run(main())
    finally:
        storage.close()
    return 0
