"""The analysis board's live engine: one WebSocket per page, one streamed search at a time.

``/ws/analysis`` (docs/web.md, "Analysis board"): the page sends a position, the server streams
South's winning chance, the best move and its line while the search deepens, until a cap, a proof,
a stop, a new position or the page going away.

- **The search** is the review's, ``master-v3``'s (greedy playouts, MCTS-solver:
  :func:`jericho_game.ai.analysis.stream`),
  run on one tree in slices of :data:`jericho_game.ai.analysis.STREAM_SLICE` (0.05 s); an update goes out
  about every :data:`EVERY` seconds, and the stream ends at :data:`MAX_SIMS` simulations or
  :data:`MAX_SECONDS` (the ``master`` level's own budget of 100,000 simulations), or when the solver
  proves the position (the figure is then exact).
- **It runs in the AI pool**: the process's :class:`~jericho_game.web.airunner.aiqueue.AIRunner` gives it a
  slot of its niced worker processes (:meth:`AIRunner.acquire`) only when no AI move waits to be
  claimed, never more than all slots but one, and takes the slot back (the search stops within a
  slice and waits for a slot again) as soon as an AI move waits with every slot taken: a game never
  waits for an analysis.  The worker process sends its updates through a queue (a
  :class:`multiprocessing.managers.SyncManager` queue, or a plain one for a pool of threads) and
  watches a stop event between slices.
- **One per client, decided in the database** (table ``analysis_runs``): starting a stream deletes
  the rows of the same address or account and inserts its own, in one transaction; the stream
  renews its row about every second and stops (``replaced``) when the row is gone, so a second
  analysis of the same client replaces the first on any server process (at once on this one).
  Starting is refused (``ai_quota``) while the client already has its quota of AI moves waiting
  (``--ai-per-client``), and a running stream counts as work being thought about for its address
  when the AI claims take turns between addresses (:meth:`Storage.claim_job`).
- **Cancellation**: a new position or ``stop`` on the socket, or the socket closing, sets the
  stop event; the worker sees it at the end of its slice and the stream ends with ``done``
  (``stopped_in``: how long that took).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import multiprocessing
import queue
import secrets
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from starlette.websockets import WebSocket, WebSocketDisconnect

from jericho_game.ai.analysis import replay
from jericho_game.ai.analysis import stream as stream_positions
from jericho_game.errors import JerichoError
from jericho_game.record import move_label
from jericho_game.web import i18n
from jericho_game.web.common.budget import BudgetPolicy, OverBudget, Who, costs
from jericho_game.web.common.fairshare import SocketCaps, address_of
from jericho_game.web.common.jsonin import BadRequest
from jericho_game.web.learn.analysis_board import _replay, _start
from jericho_game.web.storage.database import QuotaFull, Storage

__all__ = ["EVERY", "MAX_SECONDS", "MAX_SIMS", "SOCKETS_PER_CLIENT", "AnalysisStreams", "think_stream"]

log = logging.getLogger("jericho_game.web")

#: The cap of one stream: the ``master`` level's budget (a tree of 100,000 simulations is ~100 MB),
#: and at most this many seconds of search.
MAX_SIMS = 100_000
MAX_SECONDS = 5.0
#: Seconds between two updates of a stream (the first comes after the first slice).
EVERY = 0.25
#: A stream's row in ``analysis_runs`` holds this long without renewal (a killed process's rows
#: stop counting after it); it is renewed every :data:`RENEW` seconds.
LEASE = 6.0
RENEW = 1.0
#: Analysis sockets per address (and per account) in one process.
SOCKETS_PER_CLIENT = 4
MAX_MESSAGE = 8192  # bytes: a position text and 200 moves fit

_START_SQL = {
    "quota": text("SELECT count(*) FROM ai_jobs WHERE address = :a OR (account IS NOT NULL AND account = :acc)"),
    "replace": text(
        "DELETE FROM analysis_runs WHERE address = :a OR (account IS NOT NULL AND account = :acc) OR lease_until < :now"
    ),
    "insert": text(
        "INSERT INTO analysis_runs (run, address, account, started_at, lease_until) "
        "VALUES (:run, :a, :acc, :now, :until)"
    ),
}
_RENEW = text("UPDATE analysis_runs SET lease_until = :until WHERE run = :run")
_END = text("DELETE FROM analysis_runs WHERE run = :run")


class RunStore:
    """The ``analysis_runs`` rows (SQL only; called on threads)."""

    def __init__(self, storage: Storage, budget: BudgetPolicy | None = None) -> None:
        self.storage = storage
        self.budget = budget if budget is not None else BudgetPolicy(storage)

    def start(self, run: str, address: str, account: int | None, max_client_jobs: int | None) -> None:
        """Make ``run`` the client's only stream (:class:`QuotaFull` when it has its AI quota waiting,
        :class:`OverBudget` past its ``analysis`` budget of streams started)."""
        now = time.time()
        params = {"run": run, "a": address, "acc": account, "now": now, "until": now + LEASE}
        with self.storage.engine.begin() as conn:
            self.budget.ask(conn, "analysis", Who(address, account))
            if max_client_jobs is not None:
                have = int(conn.execute(_START_SQL["quota"], params).scalar_one())
                if have >= max_client_jobs:
                    raise QuotaFull("ai", have, max_client_jobs)
            conn.execute(_START_SQL["replace"], params)
            conn.execute(_START_SQL["insert"], params)

    def renew(self, run: str) -> bool:
        """Extend the row; False when it is gone (another stream of the client replaced it)."""
        with self.storage.engine.begin() as conn:
            n = conn.execute(_RENEW, {"run": run, "until": time.time() + LEASE}).rowcount
        return bool(n == 1)

    def end(self, run: str) -> None:
        """Forget the row."""
        with self.storage.engine.begin() as conn:
            conn.execute(_END, {"run": run})

    def count(self) -> int:
        """Rows of live streams (tests and diagnostics)."""
        with self.storage.engine.begin() as conn:
            return int(
                conn.execute(
                    text("SELECT count(*) FROM analysis_runs WHERE lease_until >= :now"), {"now": time.time()}
                ).scalar_one()
            )


def think_stream(
    start: str | None, moves: list[str], sims: int, seconds: float, every: float, out: Any, stop: Any
) -> None:
    """Stream the evaluation of the position after ``moves`` into ``out`` (runs in an AI worker).

    Puts ``("update", evaluation dict)`` as the search deepens, then ``("done", reason)`` with
    reason ``"stopped"`` (``stop`` was set), ``"proven"`` (by the search's solver), ``"solved"`` (by
    the endgame solver, before any search: the update then reads like a tablebase, with the value,
    the plies and the whole line), ``"decided"`` (a finished position: nothing to search) or ``"cap"``."""
    reason = "cap"
    try:
        game = replay(start, moves)
        last = None
        for ev in stream_positions(game, len(moves), sims=sims, seconds=seconds, stopped=stop.is_set, every=every):
            last = ev
            out.put(("update", ev.to_dict()))
        if stop.is_set():
            reason = "stopped"
        elif last is not None and last.exact:
            # proven by the search's solver, solved by the endgame solver, or nothing to search
            reason = "proven" if last.sims else "solved" if last.value is not None and last.line else "decided"
    except Exception as exc:  # noqa: BLE001 - said to the page rather than lost in a worker
        logging.getLogger("jericho_game.web").exception("analysis stream failed")
        reason = f"error: {type(exc).__name__}"
    out.put(("done", reason))


@dataclass(eq=False)
class Run:
    """One stream: the client's ``id`` for it, the position, and how it ends."""

    id: Any
    start: str | None
    moves: list[str]
    first: str
    key: str = field(default_factory=lambda: secrets.token_hex(12))
    reason: str | None = None  # why it was stopped from outside (stopped, replaced, gone)
    stopped_at: float | None = None
    preempted: bool = False
    stop_event: Any = None  # the worker's stop event while it thinks
    task: asyncio.Task[None] | None = None
    sims: int = 0

    def stop(self, reason: str) -> None:
        """Stop the stream (the first reason given is the one reported)."""
        if self.reason is None:
            self.reason = reason
            self.stopped_at = time.monotonic()
        self._signal()

    def preempt(self) -> None:
        """The AI needs the slot: stop the search; the stream waits for a slot again."""
        self.preempted = True
        self._signal()

    def _signal(self) -> None:
        ev = self.stop_event
        if ev is not None:
            try:
                ev.set()
            except Exception:  # noqa: BLE001 - the manager is gone (shutting down): the search ends anyway
                pass


class _Socket:
    """One analysis WebSocket: its sends are serialised, and bounded in time."""

    def __init__(self, ws: WebSocket, timeout: float) -> None:
        self.ws = ws
        self.timeout = timeout
        self.lock = asyncio.Lock()
        self.closed = False

    async def send(self, msg: dict[str, Any]) -> None:
        if self.closed:
            return
        async with self.lock:
            try:
                await asyncio.wait_for(self.ws.send_text(json.dumps(msg)), self.timeout)
            except Exception:  # noqa: BLE001 - gone or too slow: the socket's loop ends on its own
                self.closed = True


class AnalysisStreams:
    """The ``/ws/analysis`` endpoint of one server process.

    ``runner``: the process's AI runner (None: no local pool, streams are refused with
    ``unavailable``); ``account_of``: the logged-in account of a socket; ``ai_per_client``: the AI
    quota an analysis start respects."""

    def __init__(
        self,
        storage: Storage,
        runner: Callable[[], Any],
        *,
        account_of: Callable[[WebSocket], int | None] = lambda ws: None,
        ai_per_client: int | None = None,
        rate: float = 10.0,
        burst: int = 30,
        send_timeout: float = 10.0,
        max_sims: int = MAX_SIMS,
        max_seconds: float = MAX_SECONDS,
        every: float = EVERY,
        budget: BudgetPolicy | None = None,
    ) -> None:
        self.store = RunStore(storage, budget)
        self.runner = runner
        self.account_of = account_of
        self.ai_per_client = ai_per_client
        self.rate = rate
        self.burst = burst
        self.send_timeout = send_timeout
        self.max_sims = max_sims
        self.max_seconds = max_seconds
        self.every = every
        self.caps = SocketCaps(SOCKETS_PER_CLIENT, SOCKETS_PER_CLIENT)
        self.by_client: dict[str, Run] = {}  # this process's running stream per address / account
        # one client's starts in order (see _run); a client's lock lives while a start holds it
        self._starting: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._manager: Any = None
        self._manager_lock = threading.Lock()
        self.started = 0  # streams that got a slot (tests)

    # -- the socket ------------------------------------------------------------------------
    @costs("analysis")
    async def serve(self, ws: WebSocket) -> None:
        """One page's socket: ``analyse`` and ``stop`` messages in, updates out (docs/web.md)."""
        address = address_of(ws)
        account = self.account_of(ws)
        lang = i18n.connection_language(ws)
        if not self.caps.take(address, account):
            await ws.accept()
            msg = f"too many analysis connections from your address or account (the most is {SOCKETS_PER_CLIENT})"
            await ws.send_text(json.dumps({"type": "error", "code": "too_many_connections", "message": msg}))
            await ws.close(code=1013)
            return
        sock = _Socket(ws, self.send_timeout)
        current: Run | None = None
        tokens, stamp = float(self.burst), time.monotonic()
        try:
            await ws.accept()
            while True:
                raw = await ws.receive_text()
                now = time.monotonic()
                tokens = min(float(self.burst), tokens + (now - stamp) * self.rate)
                stamp = now
                if tokens < 1:
                    await sock.send(self._error(None, "rate_limited", "too many messages: slow down", lang))
                    continue
                tokens -= 1
                if len(raw) > MAX_MESSAGE:
                    await sock.send(self._error(None, "too_large", f"a message is at most {MAX_MESSAGE} bytes", lang))
                    continue
                try:
                    data = json.loads(raw)
                except ValueError:
                    data = None
                if not isinstance(data, dict) or data.get("type") not in ("analyse", "stop"):
                    msg = 'send {"type": "analyse", "id", "start", "moves"} or {"type": "stop"}'
                    await sock.send(self._error(None, "bad_request", msg, lang))
                    continue
                if data["type"] == "stop":
                    if current is not None:
                        current.stop("stopped")
                    continue
                run_id = data.get("id")
                if not (run_id is None or isinstance(run_id, (int, str)) and len(str(run_id)) <= 40):
                    run_id = None
                try:
                    _, moves = _replay(data)
                    first = _start(data).turn.value
                except BadRequest as exc:
                    await sock.send(self._error(run_id, exc.code, exc.message, lang))
                    continue
                except JerichoError as exc:
                    await sock.send(self._error(run_id, "bad_request", str(exc), lang))
                    continue
                if current is not None:
                    current.stop("replaced")  # a new position from this page: the old search ends
                start = data.get("start") or None
                current = Run(run_id, start, moves, first)
                current.task = asyncio.get_running_loop().create_task(self._run(sock, current, address, account, lang))
        except WebSocketDisconnect:
            pass
        finally:
            sock.closed = True
            if current is not None:
                current.stop("gone")
            self.caps.give(address, account)

    def _error(self, run_id: Any, code: str, message: str, lang: str) -> dict[str, Any]:
        return {"type": "error", "id": run_id, "code": code, "message": i18n.error_text(code, message, lang)}

    # -- one stream ------------------------------------------------------------------------
    async def _run(self, sock: _Socket, run: Run, address: str, account: int | None, lang: str) -> None:
        loop = asyncio.get_running_loop()
        keys = [f"a:{address}"] + ([f"u:{account}"] if account is not None else [])
        for k in keys:  # one stream per client: this process's older one ends at once
            old = self.by_client.get(k)
            if old is not None and old is not run:
                old.stop("replaced")
            self.by_client[k] = run
        started = False
        try:
            runner = self.runner()
            if runner is None:
                msg = "this server runs no AI process of its own (--ai-processes -1): the engine is unavailable here"
                await sock.send(self._error(run.id, "unavailable", msg, lang))
                return
            await asyncio.sleep(0)  # a burst of positions (arrow keys held down): only the last one starts
            if run.reason is not None:
                await sock.send({"type": "done", "id": run.id, "reason": run.reason, "sims": 0, "stopped_in": 0.0})
                return
            # one client's starts one after another, in the order their positions came: a start that
            # ran late in its thread would replace the newer stream's row (a burst under load)
            lock = self._starting.get(keys[-1])
            if lock is None:
                lock = self._starting[keys[-1]] = asyncio.Lock()
            try:
                async with lock:
                    if run.reason is not None:
                        done = {"type": "done", "id": run.id, "reason": run.reason, "sims": 0, "stopped_in": 0.0}
                        await sock.send(done)
                        return
                    await loop.run_in_executor(None, self.store.start, run.key, address, account, self.ai_per_client)
            except QuotaFull as exc:
                msg = (
                    f"you already have {exc.have} games waiting for the AI's reply, the most one player or address "
                    f"may have at once ({exc.limit}): the engine starts once a reply has come"
                )
                await sock.send(self._error(run.id, "ai_quota", msg, lang))
                return
            except OverBudget as exc:  # streams started this hour (web/common/budget.py)
                await sock.send(self._error(run.id, exc.code, exc.message, lang))
                return
            started = True
            reason = "stopped"
            said_queued = False
            while run.reason is None:
                run.preempted = False
                got = loop.create_task(runner.acquire(run.preempt))
                done, _ = await asyncio.wait({got}, timeout=0.05)
                if not done:
                    if not said_queued:
                        ahead = max(0, runner.waiting_interactive - 1)
                        await sock.send({"type": "queued", "id": run.id, "ahead": ahead})
                    while not got.done():
                        if run.reason is not None:
                            got.cancel()
                        await asyncio.wait({got}, timeout=0.05)
                    if got.cancelled():
                        break
                try:
                    got.result()
                    self.started += 1
                    reason = await self._think(sock, run, runner)
                finally:
                    runner.release(run.preempt)
                if not run.preempted or run.reason is not None or reason not in ("stopped", "preempted"):
                    break
                # an AI move took the slot back: the search starts again once it has a slot
                again = {"type": "queued", "id": run.id, "ahead": runner.waiting_interactive, "preempted": True}
                await sock.send(again)
                said_queued = True
            if run.reason is not None:
                reason = run.reason
            done_msg: dict[str, Any] = {"type": "done", "id": run.id, "reason": reason, "sims": run.sims}
            if run.stopped_at is not None:  # from the stop to the search's end
                done_msg["stopped_in"] = round(time.monotonic() - run.stopped_at, 3)
            await self._forget(run, keys, started)  # "done" means nothing of it is left
            started = False
            await sock.send(done_msg)
        except Exception:  # noqa: BLE001 - one stream's failure must not take the socket down
            log.exception("analysis stream failed")
            await sock.send(self._error(run.id, "internal", "the engine failed on this position", lang))
        finally:
            await self._forget(run, keys, started)

    async def _forget(self, run: Run, keys: list[str], row: bool) -> None:
        """The stream is over: it is no longer this client's, and its row (``row``) is deleted."""
        for k in keys:
            if self.by_client.get(k) is run:
                del self.by_client[k]
        if row:
            with contextlib.suppress(Exception):
                await asyncio.get_running_loop().run_in_executor(None, self.store.end, run.key)

    async def _think(self, sock: _Socket, run: Run, runner: Any) -> str:
        """One search in the pool, its updates forwarded; the worker's reason for ending."""
        loop = asyncio.get_running_loop()
        out, stop = await self._channel(runner.pool)
        run.stop_event = stop
        if run.reason is not None or run.preempted:
            stop.set()
        items: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def read() -> None:  # a thread: the worker's queue to the event loop
            while True:
                try:
                    item = out.get()
                except Exception:  # noqa: BLE001 - the manager went away
                    item = ("done", "error: the engine's channel closed")
                loop.call_soon_threadsafe(items.put_nowait, item)
                if item[0] in ("done", "end"):
                    return

        threading.Thread(target=read, name="jericho-analysis-read", daemon=True).start()
        fut = loop.run_in_executor(
            runner.pool, think_stream, run.start, run.moves, self.max_sims, self.max_seconds, self.every, out, stop
        )

        def finished(f: Any) -> None:  # the worker died without a word: end the reader
            if f.cancelled() or f.exception() is not None:
                with contextlib.suppress(Exception):
                    out.put(("end", "error: the engine stopped"))

        fut.add_done_callback(finished)
        renewed = time.monotonic()
        reason = "stopped"
        t0 = time.monotonic()
        while True:
            kind, payload = await items.get()
            if kind != "update":
                reason = str(payload)
                break
            if run.reason is not None or run.preempted:
                continue  # stopping: what it says now is not wanted
            run.sims = int(payload.get("sims") or 0)
            ply = len(run.moves)
            line = list(payload.get("line") or [])
            msg = {
                "type": "update",
                "id": run.id,
                "ply": ply,
                "turn": payload["turn"],
                "south": payload["south"],
                "exact": payload["exact"],
                # the endgame solver's verdict for the side to move (1, 0, -1) and plies to the end
                "value": payload.get("value"),
                "plies": payload.get("plies"),
                "best": payload["best"],
                "line": line,
                "labels": [move_label(ply + 1 + i, run.first) for i in range(len(line))],
                "sims": run.sims,
                "seconds": round(time.monotonic() - t0, 3),
                "cap": {"sims": self.max_sims, "seconds": self.max_seconds},
            }
            await sock.send(msg)
            if time.monotonic() - renewed >= RENEW:
                renewed = time.monotonic()
                alive = await loop.run_in_executor(None, self.store.renew, run.key)
                if not alive:  # another stream of this client (maybe on another process) took over
                    run.stop("replaced")
        with contextlib.suppress(Exception):
            await fut
        run.stop_event = None
        if run.preempted and run.reason is None and reason == "stopped":
            return "preempted"
        return reason

    async def _channel(self, pool: Executor) -> tuple[Any, Any]:
        """A queue and a stop event the pool's workers can use: plain ones for threads, a manager's
        for processes (started once, on the first stream)."""
        if not isinstance(pool, ProcessPoolExecutor):
            return queue.Queue(), threading.Event()
        manager = await asyncio.get_running_loop().run_in_executor(None, self._get_manager)
        return manager.Queue(), manager.Event()

    def _get_manager(self) -> Any:
        with self._manager_lock:
            if self._manager is None:
                from multiprocessing.managers import SyncManager

                from jericho_game.web.common.workers import worker_init

                manager = SyncManager(ctx=multiprocessing.get_context("spawn"))
                manager.start(worker_init, (0,))  # it exits with this process, even after kill -9
                self._manager = manager
            return self._manager

    async def close(self) -> None:
        """Stop every stream and the manager."""
        for run in list(self.by_client.values()):
            run.stop("gone")
        tasks = [r.task for r in self.by_client.values() if r.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=2.0)
        if self._manager is not None:
            with contextlib.suppress(Exception):
                self._manager.shutdown()
            self._manager = None
