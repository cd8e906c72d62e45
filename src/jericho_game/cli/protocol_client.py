"""Drive any program that speaks the Jericho Engine Protocol (``docs/interop.md``).

:class:`EngineClient` runs the program as a subprocess and offers one method per
command, with a timeout on every answer and clear errors when the program dies, hangs
or answers out of protocol.  :class:`ExternalEnginePlayer` makes such a program a
:class:`jericho_game.ai.Player`, so the arena, the terminal and the Gymnasium env can
use it::

    make_player("external:cmd=jericho engine --player mcts")
    make_player("external:cmd=/path/to/my-engine --level 3,timeout=60")

(``make_player`` splits options on commas: inside ``cmd``, write an inner player's
option separators as ``;``, e.g. ``--player mcts:sims=500;seed=1``.)  A command whose
first word is ``jericho`` runs this very package (``python -m jericho_game``, with the same
interpreter and import path) rather than whatever ``jericho`` is first on ``PATH``.
"""

from __future__ import annotations

import os
import queue
import shlex
import subprocess
import sys
import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from jericho_game.ai._util import search_budget
from jericho_game.ai.base import Limit
from jericho_game.errors import JerichoError
from jericho_game.game import Game
from jericho_game.moves import Move, parse_move

__all__ = [
    "EngineClient",
    "EngineCommandError",
    "EngineDied",
    "EngineError",
    "EngineProtocolError",
    "EngineTimeout",
    "STARTUP_TIMEOUT",
    "ExternalEnginePlayer",
    "Reply",
    "resolve_command",
]

FINAL_WORDS = ("ok", "error", "bestmove", "ready", "bye")
_MAX_DATA_LINES = 10_000
#: Seconds an engine program has to start and answer its first ``identify`` (``startup=``).
#: Generous: 5 s was too short for a Python engine importing NumPy on a loaded machine, and
#: only a program that never answers (not an engine at all) waits it out.
STARTUP_TIMEOUT = 30.0


class EngineError(JerichoError):
    """Something went wrong talking to an external engine."""


class EngineDied(EngineError):
    """The engine's process ended (or could not start)."""


class EngineTimeout(EngineError):
    """The engine did not finish its answer in time (the process is then stopped)."""


class EngineProtocolError(EngineError):
    """The engine answered something the protocol does not allow."""


class EngineCommandError(EngineError):
    """The engine refused a command with ``error <reason>`` (its state is unchanged)."""


@dataclass
class Reply:
    """One answer: the data lines and the final line."""

    final: str
    lines: list[str] = field(default_factory=list)

    @property
    def word(self) -> str:
        """The final line's first word (``ok``, ``bestmove`` ...)."""
        return self.final.split(maxsplit=1)[0]

    @property
    def rest(self) -> str:
        """The final line after its first word."""
        parts = self.final.split(maxsplit=1)
        return parts[1] if len(parts) > 1 else ""


def resolve_command(cmd: str | Sequence[str]) -> list[str]:
    """The argument list for ``cmd`` (a shell-like string or a list); ``jericho`` → this package."""
    args = shlex.split(cmd) if isinstance(cmd, str) else [str(a) for a in cmd]
    if not args:
        raise ValueError("empty engine command")
    if args[0] == "jericho":
        args = [sys.executable, "-m", "jericho_game", *args[1:]]
    return args


def _own_env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])  # the directory holding this jericho package
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if src not in parts:
        env["PYTHONPATH"] = os.pathsep.join([src, *parts])
    return env


class EngineClient:
    """A running engine program and the protocol's commands as methods.

    ``cmd`` is the program (string split like a shell would, or a list).  ``timeout`` is
    the default number of seconds to wait for each answer (``go`` adds its time limit);
    ``startup`` bounds the start alone: the program must answer the first ``identify`` (its
    ``ready``) within that many seconds of being launched (default :data:`STARTUP_TIMEOUT`,
    whatever ``timeout`` is), else it is stopped and :class:`EngineTimeout` says so and names
    ``startup=``.  Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        cmd: str | Sequence[str],
        timeout: float = 10.0,
        cwd: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        startup: float | None = None,
    ) -> None:
        self.args = resolve_command(cmd)
        self.timeout = float(timeout)
        if startup is not None and not startup > 0:
            raise ValueError(f"startup must be a positive number of seconds, got {startup}")
        # Not capped by ``timeout``: launching an interpreter and importing is another matter
        # than answering a command, and a loaded machine slows the first far more.
        self.startup = STARTUP_TIMEOUT if startup is None else float(startup)
        self._stderr: deque[str] = deque(maxlen=40)
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._broken: str | None = None
        # ``stop`` may come from another thread while ``send`` waits for a ``go``: writes
        # are serialized, and each stop's own final line is read before the next command.
        self._write_lock = threading.Lock()
        self._unanswered_stops = 0
        if env is None and self.args[:3] == [sys.executable, "-m", "jericho_game"]:
            env = _own_env()
        try:
            self.proc = subprocess.Popen(
                self.args,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
                cwd=cwd,
                env=env,
            )
        except OSError as exc:
            raise EngineDied(f"cannot start engine {shlex.join(self.args)!r}: {exc}") from None
        assert self.proc.stdout is not None and self.proc.stderr is not None
        # The reader threads get the queue and the deque, never ``self``: a thread holding
        # the client would keep it (and so the process) alive after the last reference
        # to it is dropped, and the finalizer would never stop the engine.
        lines, stderr = self._lines, self._stderr
        readers = (
            threading.Thread(target=_pump_lines, args=(self.proc.stdout, lines.put, True), daemon=True),
            threading.Thread(target=_pump_lines, args=(self.proc.stderr, stderr.append, False), daemon=True),
        )
        for reader in readers:
            reader.start()
        self._stderr_reader = readers[1]
        # Not __del__: a client still held when Python exits was collected only once daemon
        # threads were frozen, and closing the pipe a frozen reader was blocked on aborted the
        # interpreter ("Fatal Python error: ... at interpreter shutdown", status 134).  A finalizer
        # also runs at exit, before that, while the readers can still see the end of their pipes.
        self._finalizer = weakref.finalize(self, _end, self.proc, readers)
        self.info: dict[str, str] = {}
        try:
            self.info = self.identify(timeout=self.startup, starting=True)
        except EngineError:
            self.close()
            raise

    # -- plumbing --------------------------------------------------------------------------------
    def _describe(self) -> str:
        if self.proc.poll() is not None:
            # The process is gone: let the reader collect the last of its stderr.
            self._stderr_reader.join(timeout=2)
        err = "\n".join(self._stderr)
        return f"engine {shlex.join(self.args)!r}" + (f"; its stderr ends with:\n{err}" if err else "")

    def send(self, command: str, timeout: float | None = None) -> Reply:
        """Send one command line and wait for its complete answer.

        Raises :class:`EngineTimeout`, :class:`EngineDied` or :class:`EngineProtocolError`
        (after which the engine is stopped and the client unusable), and
        :class:`EngineCommandError` when the engine answers ``error`` (client still usable).
        """
        if "\n" in command or "\r" in command:
            raise ValueError(f"a command is one line, got {command!r}")
        if self._broken:
            raise EngineError(f"the engine is no longer usable: {self._broken}")
        self._collect_stop_answers()
        self._write(command)
        wait = self.timeout if timeout is None else timeout
        lines: list[str] = []
        while True:
            try:
                line = self._lines.get(timeout=wait)
            except queue.Empty:
                self._fail(f"no complete answer to {command!r} within {wait:g} s (got {lines[-3:]!r})", EngineTimeout)
            if line is None:
                self._fail(f"the engine exited (status {self._exit_status()}) while answering {command!r}", EngineDied)
            word = line.split(maxsplit=1)[0] if line.strip() else ""
            if word in FINAL_WORDS:
                reply = Reply(line, lines)
                if word == "error":
                    raise EngineCommandError(f"engine refused {command!r}: {reply.rest}")
                return reply
            lines.append(line)
            if len(lines) > _MAX_DATA_LINES:
                self._fail(
                    f"more than {_MAX_DATA_LINES} lines without a final line for {command!r}", EngineProtocolError
                )

    def _write(self, command: str) -> None:
        try:
            assert self.proc.stdin is not None
            with self._write_lock:
                self.proc.stdin.write(command + "\n")
                self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            self._fail(f"the engine exited (status {self._exit_status()}) before the command {command!r}", EngineDied)

    def _collect_stop_answers(self) -> None:
        """Read the final line each earlier ``stop`` got (``ok``; ``error`` from an engine without stop)."""
        while self._unanswered_stops:
            try:
                line = self._lines.get(timeout=self.timeout)
            except queue.Empty:
                self._fail(f"no answer to 'stop' within {self.timeout:g} s", EngineTimeout)
            if line is None:
                self._fail(f"the engine exited (status {self._exit_status()}) after 'stop'", EngineDied)
            if line.split(maxsplit=1)[:1] and line.split(maxsplit=1)[0] in FINAL_WORDS:
                self._unanswered_stops -= 1

    def stop(self) -> None:
        """Send ``stop`` without waiting: a running ``go`` (in another thread) answers at once.

        Safe to call from any thread; the ``ok`` the engine answers to the stop itself is
        read before the next command.  Does nothing once the client is unusable.
        """
        if self._broken or self.proc.poll() is not None:
            return
        with self._write_lock:
            self._unanswered_stops += 1
        self._write("stop")

    def _exit_status(self) -> int | None:
        """The exit status of an engine whose pipes closed (waiting briefly: it may still be exiting)."""
        try:
            return self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return None

    def _fail(self, message: str, kind: type[EngineError]) -> NoReturn:
        self._broken = message
        self._kill()
        raise kind(f"{message}: {self._describe()}")

    def _expect(self, reply: Reply, word: str, command: str) -> Reply:
        if reply.word != word:
            self._fail(f"expected '{word} ...' in answer to {command!r}, got {reply.final!r}", EngineProtocolError)
        return reply

    def _kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass

    # -- commands --------------------------------------------------------------------------------
    def identify(self, timeout: float | None = None, starting: bool = False) -> dict[str, str]:
        """``identify``: the ``id`` fields (``name``, ``version``, ``protocol``, ...)."""
        try:
            reply = self._expect(self.send("identify", timeout=timeout), "ready", "identify")
        except EngineTimeout as exc:
            if not starting:
                raise
            raise EngineTimeout(
                f"the engine did not start: no answer to 'identify' within the start-up limit of "
                f"{self.startup:g} s; give it longer with startup=SECONDS ({exc})"
            ) from None
        info = {}
        for line in reply.lines:
            parts = line.split(maxsplit=2)
            if len(parts) >= 2 and parts[0] == "id":
                info[parts[1]] = parts[2] if len(parts) > 2 else ""
        return info

    def is_ready(self) -> None:
        """``isready``: returns once the engine answers ``ready``."""
        self._expect(self.send("isready"), "ready", "isready")

    def new_game(self) -> None:
        """``newgame``."""
        self._expect(self.send("newgame"), "ok", "newgame")

    def set_position(self, moves: Sequence[str | Move] = (), position: str | None = None) -> None:
        """``position start|text ... [moves ...]``."""
        base = f"position text {position.strip()}" if position else "position start"
        command = base + (" moves " + " ".join(str(m) for m in moves) if moves else "")
        self._expect(self.send(command), "ok", "position")

    def set_game(self, game: Game) -> None:
        """Send ``game``'s start position and moves."""
        self.set_position(game.history, game.start_position)

    def play(self, *moves: str | Move) -> None:
        """``play M...``."""
        self._expect(self.send("play " + " ".join(str(m) for m in moves)), "ok", "play")

    def undo(self, n: int = 1) -> None:
        """``undo N``."""
        self._expect(self.send(f"undo {int(n)}"), "ok", "undo")

    def legal_moves(self) -> list[Move]:
        """``legal``: the engine's legal moves."""
        reply = self._expect(self.send("legal"), "ok", "legal")
        try:
            return [parse_move(m) for m in reply.rest.split()]
        except JerichoError as exc:
            self._fail(f"bad move in answer to 'legal': {exc}", EngineProtocolError)

    def go(
        self, time: float | None = None, nodes: int | None = None, seed: int | None = None, timeout: float | None = None
    ) -> Move:
        """``go``: the engine's best move (waits ``time`` + the client's timeout by default)."""
        parts = ["go"]
        if time is not None:
            parts += ["time", repr(float(time))]
        if nodes is not None:
            parts += ["nodes", str(int(nodes))]
        if seed is not None:
            parts += ["seed", str(int(seed))]
        wait = timeout if timeout is not None else self.timeout + (time or 0.0)
        reply = self._expect(self.send(" ".join(parts), timeout=wait), "bestmove", "go")
        try:
            return parse_move(reply.rest)
        except JerichoError as exc:
            self._fail(f"bad bestmove {reply.rest!r}: {exc}", EngineProtocolError)

    def position(self) -> str:
        """``getposition``: the position text."""
        return self._expect(self.send("getposition"), "ok", "getposition").rest

    def status(self) -> dict[str, str]:
        """``status``: ``turn``, ``score`` (``"S N"``), ``result``, ``moves``."""
        words = self._expect(self.send("status"), "ok", "status").rest.split()
        try:
            return {"turn": words[1], "score": f"{words[3]} {words[4]}", "result": words[6], "moves": words[8]}
        except IndexError:
            self._fail(f"bad status answer {' '.join(words)!r}", EngineProtocolError)

    def board(self) -> str:
        """``show``: the board drawing."""
        reply = self._expect(self.send("show"), "ok", "show")
        return "\n".join(line[6:] if line.startswith("board ") else line for line in reply.lines)

    def set_option(self, name: str, value: str) -> None:
        """``setoption NAME VALUE``."""
        self._expect(self.send(f"setoption {name} {value}"), "ok", "setoption")

    def quit(self) -> None:
        """``quit``, then wait for the process to end."""
        if self.proc.poll() is None and not self._broken:
            try:
                self._expect(self.send("quit", timeout=min(self.timeout, 5.0)), "bye", "quit")
            except EngineError:
                pass
        self.close()

    def close(self) -> None:
        """Stop the process (politely first: close its input, then kill after 2 s)."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._kill()
        self._finalizer()
        self._broken = self._broken or "closed"

    @property
    def alive(self) -> bool:
        """True while the process runs and the client is usable."""
        return self.proc.poll() is None and not self._broken

    def __enter__(self) -> EngineClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.quit()


def _end(proc: subprocess.Popen[str], readers: Sequence[threading.Thread]) -> None:
    """Kill ``proc`` if it still runs, and close its pipes once their readers are done with them.

    A client's last step: from :meth:`EngineClient.close`, when the client is collected, or at
    exit for a client still held then (by a module's global, an environment never closed).  The
    pipes are closed here because, left to the collector, each raises a ResourceWarning ("unclosed
    file") in whatever code happens to run then (a test's warning check); but never one a reader
    is still blocked on (a grandchild of the engine holding it open): the close would wait for
    that read, forever, or abort the interpreter at its shutdown.
    """
    if proc.poll() is None:
        proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process that outlives SIGKILL
            pass
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:  # (its last write, to a process gone)
        pass
    for stream, reader in zip((proc.stdout, proc.stderr), readers, strict=True):
        if reader is not threading.current_thread():  # (the collector may run in a reader)
            reader.join(timeout=1)  # the pipe ends with the process: at once
        if stream is not None and not reader.is_alive():
            stream.close()


def _pump_lines(stream: object, put: Callable[[Any], object], end: bool) -> None:
    """Pass each line of ``stream`` (without its line break) to ``put``; then ``None`` when ``end``."""
    try:
        for line in stream:  # type: ignore[attr-defined]
            put(line.rstrip("\r\n"))
    except (ValueError, OSError):  # the client closed the pipe under us (close(), or the collector): the end
        pass
    if end:
        put(None)


class ExternalEnginePlayer:
    """A :class:`jericho_game.ai.Player` played by an external engine program.

    The program starts on the first move and is reused (call :meth:`close` when done;
    it is also stopped when the player is garbage-collected).  Each move sends the
    game's start position and moves, then ``go`` with the limit (an explicit ``Limit``
    replaces ``time``/``nodes``).  ``timeout`` bounds the wait beyond the limit's time;
    ``startup`` the program's start (its answer to the first ``identify``, see
    :class:`EngineClient`); ``seed`` is sent when the limit has none.
    """

    def __init__(
        self,
        cmd: str = "jericho engine",
        timeout: float = 30.0,
        seed: int | None = None,
        name: str | None = None,
        time: float | None = None,
        nodes: int | None = None,
        startup: float = STARTUP_TIMEOUT,
    ) -> None:
        self.cmd = str(cmd)
        resolve_command(self.cmd)  # fail early on an empty command
        if not 0 < timeout <= 3600:
            raise ValueError(f"timeout must be a positive number of seconds, at most 3600, got {timeout}")
        if not 0 < startup <= 600:
            raise ValueError(f"startup must be a positive number of seconds, at most 600, got {startup}")
        self.timeout = float(timeout)
        self.startup = float(startup)
        self.seed = seed
        self.default_limit = Limit(time=time, nodes=nodes)
        self.name = name or f"external:{self.cmd}"
        self._client: EngineClient | None = None

    @property
    def client(self) -> EngineClient:
        """The running engine (started on first use, restarted if it died)."""
        if self._client is None or not self._client.alive:
            self._client = EngineClient(self.cmd, timeout=self.timeout, startup=self.startup)
        return self._client

    def start(self) -> ExternalEnginePlayer:
        """Start the program and do the handshake now (raises :class:`EngineError` with the reason)."""
        _ = self.client
        return self

    def stop(self) -> None:
        """Ask the engine to end a running ``go`` at once (from another thread); see :meth:`EngineClient.stop`."""
        client = self._client
        if client is not None:
            client.stop()

    def choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        """The engine's move; raises :class:`EngineError` if it fails or answers an illegal move."""
        if game.is_over():
            raise ValueError("the game is over: there is no move to choose")
        # An explicit limit replaces the player's own time/nodes (it is sent as "go time/nodes").
        nodes, t = search_budget(limit, self.default_limit.nodes, self.default_limit.time)
        seed = limit.seed if limit is not None and limit.seed is not None else self.seed
        client = self.client
        client.set_game(game)
        move = client.go(time=t, nodes=nodes, seed=seed)
        reason = game.why_illegal(move)
        if reason is not None:
            raise EngineProtocolError(f"engine {self.cmd!r} answered an illegal move {move}: {reason}")
        return move

    def __getstate__(self) -> dict[str, object]:
        # A copy sent to another process (e.g. an arena worker) starts its own engine.
        state = dict(self.__dict__)
        state["_client"] = None
        return state

    def close(self) -> None:
        """Stop the engine program."""
        if self._client is not None:
            self._client.quit()
            self._client = None
