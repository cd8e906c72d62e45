"""``jericho engine``: the Jericho Engine Protocol (JEP) on stdin/stdout.

A line protocol in the spirit of UCI and GTP, specified in ``docs/interop.md``.  The
client sends one command per line; the engine answers every command with zero or more
data lines (starting with ``id``, ``info`` or ``board``) and then exactly one *final*
line, whose first word is ``ok``, ``error``, ``bestmove``, ``ready`` or ``bye``.  Blank
lines and lines starting with ``#`` get no answer.  A command that fails answers
``error <reason>`` and changes nothing.

Commands (keywords in any case; moves in the notation of RULES.md §7)::

    identify | jep            -> id name/version/protocol/player lines, then "ready"
    isready                   -> ready
    newgame                   -> ok                      (standard start, no moves)
    position start [moves M...]                -> ok
    position text <7 position fields> [moves M...] -> ok
    play M [M...]             -> ok                      (all the moves, or none)
    undo [N]                  -> ok
    legal                     -> ok M M ...              ("ok" alone once the game is over)
    go [time S] [nodes N] [seed K] -> info time S, then "bestmove M" (the position is kept)
    stop                      -> ends a running search (its go answers at once), then ok
    getposition               -> ok <position text>
    status                    -> ok turn T score S N result R moves K
    show                      -> board lines, then ok
    setoption player <spec>   -> ok                      (also: setoption name <text>)
    help                      -> info lines, then ok
    quit                      -> bye                     (end of input also ends the engine)

Served by :func:`serve`, a ``go`` searches in a thread while stdin is still read:
``stop`` (or ``quit``, or Ctrl-C) ends the search at once with the best move found so
far; at the end of input the search runs its whole budget, is answered, and the engine
exits; other commands wait for the search and are answered in order.  ``quit``, the end
of input and Ctrl-C end the engine with status 0.  ``go time/nodes`` replace the
player's own budget.  Budgets are capped (:data:`MAX_TIME`, :data:`MAX_NODES`), lines
longer than :data:`MAX_LINE` characters are refused unread, and no reply echoes more
than 40 characters of a word the client sent.
"""

from __future__ import annotations

import argparse
import io
import os
import queue
import re
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import TextIO

from jericho_game import __version__
from jericho_game.ai._util import TIME_SAFETY, search_budget
from jericho_game.ai.base import Limit, Player, PlayerSpecError, make_player
from jericho_game.ai.mcts import DEFAULT_SIMS
from jericho_game.errors import JerichoError
from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = [
    "PROTOCOL_VERSION",
    "EngineSession",
    "Search",
    "add_arguments",
    "run",
    "serve",
    "FINAL_WORDS",
    "MAX_LINE",
    "MAX_TIME",
    "MAX_NODES",
    "SLICE_NODES",
]

PROTOCOL_VERSION = 1
FINAL_WORDS = ("ok", "error", "bestmove", "ready", "bye")
_POSITION_FIELDS = 7
#: The longest command line read, in characters (a full game's moves take about 1,000).
MAX_LINE = 16_384
#: The largest ``go time`` in seconds.
MAX_TIME = 600.0
#: The largest ``go nodes`` (an MCTS tree of a million simulations takes about 1 GB).
MAX_NODES = 1_000_000
#: The largest ``go seed``.
MAX_SEED = 2**63 - 1
#: Most simulations per slice of a resumable search (see :class:`Search`); a slice also
#: ends after :data:`SLICE_SECONDS`, so ``stop`` waits at most one short slice.
SLICE_NODES = 1024
#: Longest echo of a client's word inside an error message.
_ECHO = 40
#: The longest name ``setoption name`` accepts.
MAX_NAME = 100
#: Longest slice of a resumable search in seconds: ``stop`` (and ``quit``, Ctrl-C) is
#: answered within about this long (the issue's bound is 0.2 s).
SLICE_SECONDS = 0.05
#: Seconds ``quit`` or Ctrl-C waits for a search that cannot be stopped before the engine exits anyway.
_EXIT_GRACE = 2.0

_HELP = [
    "identify                       name, version, protocol and player, then ready",
    "isready                        ready",
    "newgame                        the standard start, no moves",
    "position start [moves M...]    set the position",
    "position text <7 fields> [moves M...]",
    "play M [M...]                  play moves on the current position",
    "undo [N]                       take back N moves (default 1)",
    "legal                          ok and the legal moves",
    "go [time S] [nodes N] [seed K] bestmove M (the position is not changed)",
    "getposition                    ok and the position text",
    "status                         ok turn T score S N result R moves K",
    "show                           the board",
    "stop                           end a running search at once (its go answers), then ok",
    "setoption player SPEC | setoption name TEXT",
    "quit                           bye",
]


class EngineSession:
    """The protocol's state machine: feed it lines with :meth:`handle`, write what it returns.

    ``player`` chooses the moves for ``go``; ``player_factory`` builds a player from a
    spec for ``setoption player``.
    """

    def __init__(
        self,
        player: Player,
        spec: str = "",
        name: str | None = None,
        player_factory: Callable[[str], Player] | None = None,
    ) -> None:
        self.player = player
        self.spec = spec or getattr(player, "name", "?")
        self.name = name or f"jericho {self.spec}"
        # The same spec grammar as everywhere else (make_player: "," or ";" between options).
        self.player_factory = player_factory or make_player
        self.game = Game()
        self.done = False

    # -- dispatch -------------------------------------------------------------------------------
    def handle(self, line: str) -> list[str]:
        """The reply lines to one command line (empty for blank and comment lines)."""
        text = line.strip()
        if not text or text.startswith("#"):
            return []
        words = text.split()
        command = words[0].lower()
        handler = getattr(self, f"_cmd_{command}", None)
        if handler is None:
            known = (
                "identify isready newgame position play undo legal go stop getposition status show setoption help quit"
            )
            return [f"error unknown command {_echo(words[0])}: commands are {known}"]
        try:
            out: list[str] = handler(words[1:])
        except (_CommandError, JerichoError) as exc:
            return [_capped(f"error {_one_line(str(exc))}", text)]
        # Texts from outside (a player's name or error, an option value) must not break
        # the grammar: every reply is exactly one line.
        return [_capped(_one_line(line), text) if line.startswith("error") else _one_line(line) for line in out]

    # -- commands -----------------------------------------------------------------------------
    def _cmd_identify(self, args: list[str]) -> list[str]:
        _no_args("identify", args)
        return [
            f"id name {self.name}",
            f"id version {__version__}",
            f"id protocol {PROTOCOL_VERSION}",
            f"id player {self.spec}",
            "ready",
        ]

    _cmd_jep = _cmd_identify

    def _cmd_isready(self, args: list[str]) -> list[str]:
        _no_args("isready", args)
        return ["ready"]

    def _cmd_newgame(self, args: list[str]) -> list[str]:
        _no_args("newgame", args)
        self.game = Game()
        return ["ok"]

    def _cmd_position(self, args: list[str]) -> list[str]:
        if not args:
            raise _CommandError("position needs 'start' or 'text <position>', e.g. position start moves 5R@d2")
        kind = args[0].lower()
        rest = args[1:]
        if kind == "start":
            game = Game()
        elif kind == "text":
            if len(rest) < _POSITION_FIELDS:
                raise _CommandError(
                    f"position text needs the {_POSITION_FIELDS} fields of a position "
                    f"(towers, south reserve, north reserve, turn, last, passes, result), got {len(rest)}"
                )
            try:
                game = Game.from_position(" ".join(rest[:_POSITION_FIELDS]))
            except JerichoError as exc:
                raise _CommandError(f"bad position: {exc}") from None
            rest = rest[_POSITION_FIELDS:]
        else:
            raise _CommandError(f"position {_echo(args[0])}: expected 'start' or 'text'")
        if rest:
            if rest[0].lower() != "moves":
                raise _CommandError(f"unexpected {_echo(rest[0])} after the position: expected 'moves M...'")
            _play_all(game, rest[1:])
        self.game = game
        return ["ok"]

    def _cmd_play(self, args: list[str]) -> list[str]:
        if not args:
            raise _CommandError("play needs at least one move, e.g. play 5R@d2")
        game = self.game.copy()
        _play_all(game, args)
        self.game = game
        return ["ok"]

    def _cmd_undo(self, args: list[str]) -> list[str]:
        n = 1
        if len(args) > 1:
            raise _CommandError("undo takes at most one number")
        if args:
            n = _int("undo count", args[0], minimum=1)
        if n > len(self.game.history):
            raise _CommandError(
                f"cannot undo {n} moves: only {len(self.game.history)} played since the position was set"
            )
        for _ in range(n):
            self.game.undo()
        return ["ok"]

    def _cmd_legal(self, args: list[str]) -> list[str]:
        _no_args("legal", args)
        moves = " ".join(str(m) for m in self.game.legal_moves())
        return [f"ok {moves}".rstrip()]

    def begin(self, line: str) -> list[str] | Search:
        """Like :meth:`handle`, but a valid ``go`` is returned as a :class:`Search` not yet run."""
        words = line.split()
        if words and words[0].lower() == "go":
            try:
                return self.search(words[1:])
            except (_CommandError, JerichoError) as exc:
                return [_capped(f"error {_one_line(str(exc))}", line)]
        return self.handle(line)

    def search(self, args: list[str]) -> Search:
        """The search a ``go`` with these arguments asks for (checked, not started)."""
        t: float | None = None
        nodes: int | None = None
        seed: int | None = None
        if len(args) % 2:
            raise _CommandError(f"go takes pairs 'time S', 'nodes N', 'seed K'; got {_echo(' '.join(args))}")
        for key, value in zip(args[::2], args[1::2], strict=True):
            k = key.lower()
            if k == "time":
                try:
                    t = float(value)
                except ValueError:
                    raise _CommandError(f"bad time {_echo(value)}: expected seconds, e.g. 1.5") from None
                if not 0 < t <= MAX_TIME:
                    raise _CommandError(
                        f"bad time {_echo(value)}: must be a positive number of seconds, at most {MAX_TIME:g}"
                    )
            elif k == "nodes":
                nodes = _int("nodes", value, minimum=1, maximum=MAX_NODES)
            elif k == "seed":
                seed = _int("seed", value, minimum=0, maximum=MAX_SEED)
            else:
                raise _CommandError(f"unknown go option {_echo(key)}: use time, nodes or seed")
        if self.game.is_over():
            raise _CommandError(f"the game is over ({self.game.outcome()}): no move to search")
        return Search(self.player, self.game.copy(), Limit(time=t, nodes=nodes, seed=seed))

    def _cmd_go(self, args: list[str]) -> list[str]:
        search = self.search(args)
        search.run()
        return search.answer()

    def _cmd_stop(self, args: list[str]) -> list[str]:
        # A stop that finds no search running (it had ended already) is simply acknowledged.
        _no_args("stop", args)
        return ["ok"]

    def _cmd_getposition(self, args: list[str]) -> list[str]:
        _no_args("getposition", args)
        return [f"ok {self.game.position()}"]

    def _cmd_status(self, args: list[str]) -> list[str]:
        _no_args("status", args)
        s, n = self.game.score()
        result = self.game.outcome() or "*"
        return [f"ok turn {self.game.turn} score {s} {n} result {result} moves {len(self.game.history)}"]

    def _cmd_show(self, args: list[str]) -> list[str]:
        _no_args("show", args)
        from jericho_game.envs.render import render_text

        return [f"board {line}" for line in render_text(self.game).splitlines()] + ["ok"]

    def _cmd_setoption(self, args: list[str]) -> list[str]:
        if len(args) < 2:
            raise _CommandError("setoption needs a name and a value: setoption player SPEC | setoption name TEXT")
        key = args[0].lower()
        value = " ".join(args[1:])
        if key == "player":
            player = _checked_player(self.player_factory, value)
            old, self.player, self.spec = self.player, player, value
            if old is not player:
                _close(old)
        elif key == "name":
            if len(value) > MAX_NAME:
                raise _CommandError(f"the name {_echo(value)} is too long: at most {MAX_NAME} characters")
            self.name = value
        else:
            raise _CommandError(f"unknown option {_echo(args[0])}: options are player, name")
        return ["ok"]

    def _cmd_help(self, args: list[str]) -> list[str]:
        _no_args("help", args)
        return [f"info {line}" for line in _HELP] + ["ok"]

    def _cmd_quit(self, args: list[str]) -> list[str]:
        _no_args("quit", args)  # "quit now" is a typo, not a quit: the session goes on
        self.done = True
        return ["bye"]


class _CommandError(Exception):
    """A command the engine refuses; the message follows ``error``."""


def _one_line(text: str) -> str:
    """``text`` with its line breaks replaced by `` | `` (a reply line never spans lines)."""
    return " | ".join(part.strip() for part in text.splitlines() if part.strip()) or text.strip()


def _echo(text: str) -> str:
    """``text`` quoted for an error message, cut to a few words: a reply never echoes a flood."""
    return repr(text if len(text) <= _ECHO else text[:_ECHO] + "...")


def _capped(reply: str, command: str) -> str:
    """``reply`` with every word of the client's ``command`` longer than the echo cap cut to it.

    The safety net behind :func:`_echo`: a message built elsewhere (a move parser's, a
    player factory's) may quote what it was given in full.
    """
    if len(reply) <= _ECHO:
        return reply
    # Whole words, and their parts between the spec and option separators (a message may
    # quote just an option's value).
    texts = {w for w in command.split() if len(w) > _ECHO}
    texts |= {part for w in texts for part in re.split(r"[=:,;'\"]+", w) if len(part) > _ECHO}
    for text in sorted(texts, key=len, reverse=True):
        for form in {text, repr(text)[1:-1]}:
            reply = reply.replace(form, form[:_ECHO] + "...")
    return reply


def _no_args(command: str, args: list[str]) -> None:
    if args:
        raise _CommandError(f"{command} takes no arguments, got {_echo(' '.join(args))}")


def _int(what: str, text: str, minimum: int, maximum: int | None = None) -> int:
    try:
        value = int(text) if len(text) <= 30 else None
    except ValueError:
        value = None
    if value is None:
        raise _CommandError(f"bad {what} {_echo(text)}: expected a whole number")
    if value < minimum:
        raise _CommandError(f"bad {what} {_echo(text)}: must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise _CommandError(f"bad {what} {_echo(text)}: must be at most {maximum:,}".replace(",", "_"))
    return value


def _close(player: object) -> None:
    close = getattr(player, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # noqa: BLE001 - a player failing to close must not end the session
            pass


def _checked_player(factory: Callable[[str], Player], spec: str) -> Player:
    """The player of ``spec``, ready to play: one holding an outside program starts it now.

    A player offering ``start()`` (the ``external`` player: start the program and do the
    handshake) is started at once, so a bad program is refused when it is named, with
    the reason, rather than at the next ``go``.
    """
    try:
        player = factory(spec)
    except (PlayerSpecError, ValueError, ImportError) as exc:
        raise _CommandError(f"bad player {_echo(spec)}: {exc}") from None
    start = getattr(player, "start", None)
    if callable(start):
        try:
            start()
        except JerichoError as exc:
            _close(player)
            raise _CommandError(f"bad player {_echo(spec)}: {exc}") from None
    return player


def _play_all(game: Game, moves: Iterable[str]) -> None:
    for i, text in enumerate(moves, 1):
        try:
            game.play(text)
        except JerichoError as exc:
            raise _CommandError(f"illegal move {i} {_echo(text)}: {exc}") from None


def _resumable(player: Player) -> bool:
    """Whether repeated ``choose_move`` calls on one position continue one search.

    True of the MCTS players (``mcts``, ``medium``, ``hard``, ``expert``): they keep their
    tree between calls (``reuse``) and report the simulations of each call (``last_sims``).
    """
    return bool(getattr(player, "reuse", False)) and hasattr(player, "last_sims")


class Search:
    """One ``go``: ``run()`` it (in a thread when served), ``stop()`` it from another thread.

    How ``stop`` reaches the player, without the player knowing about the protocol:

    * a *resumable* player (the MCTS players, see :func:`_resumable`) searches in slices
      of at most :data:`SLICE_NODES` simulations and :data:`SLICE_SECONDS` seconds, one
      ``choose_move`` each, on one tree; the first slice gets the seed, the budget
      (``go``'s, else the player's own ``sims`` and ``time``, by the players' own rule
      :func:`~jericho_game.ai._util.search_budget`) is counted across slices, so an
      uninterrupted search plays exactly the move of one unsliced search and spends the
      same time.  ``stop`` ends it after the current slice with the move the whole
      search prefers so far;
    * a player offering ``stop()`` (``alphabeta``, which ends its search within about a
      millisecond with the move of its last completed depth; ``net+mcts``, after its
      current simulation; the ``external`` player, which forwards ``stop`` to its
      program) is told to stop and answers with its best move; a stop that comes after
      the search has answered is withdrawn (``reset_stop()``, where the player has one)
      so it cannot cut the next search;
    * any other player (``random``, ``greedy``, ``easy`` and ``net`` answer at once;
      ``openspiel-mcts``) runs in one piece: ``stop`` waits for its answer, which its
      budget — capped by :data:`MAX_TIME` and :data:`MAX_NODES` when given in ``go`` —
      bounds.
    """

    def __init__(self, player: Player, game: Game, limit: Limit) -> None:
        self.player = player
        self.game = game
        self.limit = limit
        self.move: Move | None = None
        self.error: str | None = None
        self.elapsed = 0.0
        self.slices = 0
        self._stop = threading.Event()
        self._finished = False
        self._lock = threading.Lock()

    def stop(self) -> None:
        """Ask the search to end now (safe from any thread; a finished search ignores it)."""
        self._stop.set()
        if not _resumable(self.player):
            stop = getattr(self.player, "stop", None)
            with self._lock:  # never tell the player once its answer is in (see run)
                if callable(stop) and not self._finished:
                    try:
                        stop()
                    except Exception:  # noqa: BLE001 - e.g. an external program already gone (Ctrl-C reaches
                        pass  # it too): its search then fails and is answered with the reason

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stop.is_set()

    def run(self) -> None:
        """Search; afterwards :meth:`answer` gives the reply lines."""
        start = time.perf_counter()
        try:
            move = self._sliced() if _resumable(self.player) else self._whole()
            if not isinstance(move, Move) or not self.game.is_legal(move):
                self.error = f"the player chose an illegal move {move}: {self.game.why_illegal(move)}"
            else:
                self.move = move
        except Exception as exc:  # the player failed: report, keep the session alive
            self.error = f"the player failed: {type(exc).__name__}: {exc}"
        with self._lock:
            self._finished = True
            # A stop that reached the player after its search returned must not cut the next one.
            reset = getattr(self.player, "reset_stop", None)
            if callable(reset) and self._stop.is_set():
                reset()
        self.elapsed = time.perf_counter() - start

    def _whole(self) -> Move:
        self.slices = 1
        return self.player.choose_move(self.game.copy(), self.limit)

    def _sliced(self) -> Move:
        player = self.player
        # The same budget the player would spend in one call (an explicit limit replaces
        # its own), cut into slices short enough for stop to be answered at once.
        nodes, secs = search_budget(
            self.limit, getattr(player, "sims", None), getattr(player, "time", None), DEFAULT_SIMS
        )
        start = time.perf_counter()
        end = None if secs is None else start + secs * TIME_SAFETY
        done = 0
        move: Move | None = None
        while True:
            left_nodes = SLICE_NODES if nodes is None else min(SLICE_NODES, nodes - done)
            slice_time = SLICE_SECONDS
            if end is not None:
                slice_time = min(slice_time, end - time.perf_counter())
                if move is not None and slice_time < 0.002:
                    break  # the time is spent
                slice_time = max(slice_time, 0.002)
            before = (getattr(player, "last_sims", None), getattr(player, "last_seconds", None))
            limit = Limit(time=slice_time, nodes=left_nodes, seed=self.limit.seed if move is None else None)
            move = player.choose_move(self.game.copy(), limit)
            self.slices += 1
            after = (getattr(player, "last_sims", None), getattr(player, "last_seconds", None))
            if after == before:
                break  # answered without searching (a single legal move, a certain win)
            done += int(getattr(player, "last_sims", left_nodes))
            if self._stop.is_set() or (nodes is not None and done >= nodes):
                break
            if getattr(player, "last_proven", False):
                break  # the solver proved the position: more slices would each run one simulation
        return move

    def answer(self) -> list[str]:
        """The reply to the ``go``: ``info time``, then ``bestmove`` (or ``error``)."""
        if self.error is not None:
            return [f"error {_one_line(self.error)}"]
        return [f"info time {self.elapsed:.3f}", f"bestmove {self.move}"]


class _TooLong:
    """A line over :data:`MAX_LINE` characters, skipped unread."""


_EOF = object()
_DONE = object()


def _read_lines(stdin: TextIO, put: Callable[[object], None]) -> None:
    """Pass each line of ``stdin`` to ``put`` (a :class:`_TooLong` for an over-long one), then EOF."""
    try:
        while True:
            line = stdin.readline(MAX_LINE + 1)
            if not line:
                break
            if len(line) > MAX_LINE and not line.endswith("\n"):
                while line and not line.endswith("\n"):  # skip the rest of it
                    line = stdin.readline(MAX_LINE + 1)
                put(_TooLong())
                continue
            put(line)
    except (OSError, ValueError):  # input closed under us: the same as its end
        pass
    put(_EOF)


def _wait_for(inbox: queue.Queue[object], wanted: object, seconds: float) -> bool:
    """Whether ``wanted`` arrives in ``inbox`` within ``seconds`` (other items are dropped)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        try:
            if inbox.get(timeout=left) is wanted:
                return True
        except queue.Empty:
            return False
    return False


def serve(session: EngineSession, stdin: TextIO, stdout: TextIO) -> int:
    """Answer commands from ``stdin`` until ``quit``, end of input or Ctrl-C; returns 0.

    ``go`` searches in a thread while input is still read: ``stop`` ends the search
    (the ``go`` answers, then the ``stop`` answers ``ok``); ``quit`` ends it and the
    engine (a search that cannot be stopped is left behind after :data:`_EXIT_GRACE`
    seconds); any other command waits for the search, in order.  The end of input is
    the end of the commands, not of the work: a running search finishes its budget, its
    ``go`` and the commands before the end are answered, then the engine exits.  Ctrl-C
    (``KeyboardInterrupt`` in the thread running this) acts like ``quit``.
    """
    server = _Server(session, stdin, stdout)
    try:
        return server.loop()
    except KeyboardInterrupt:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the way out
        server.interrupted()
        return 0


class _Server:
    """The reading loop of :func:`serve` (its state is kept here for Ctrl-C's way out)."""

    def __init__(self, session: EngineSession, stdin: TextIO, stdout: TextIO) -> None:
        self.session = session
        self.stdout = stdout
        self.inbox: queue.Queue[object] = queue.Queue()
        self.backlog: deque[object] = deque()
        self.search: Search | None = None  # the running search
        threading.Thread(target=_read_lines, args=(stdin, self.inbox.put), daemon=True).start()

    def write(self, lines: list[str]) -> None:
        try:
            for reply in lines:
                self.stdout.write(reply + "\n")
            self.stdout.flush()
        except (OSError, ValueError):  # the client has gone: nothing more to tell it
            pass

    def next_item(self) -> object:
        return self.backlog.popleft() if self.backlog else self.inbox.get()

    def interrupted(self) -> None:
        """Ctrl-C: stop a running search, give it a moment to answer, then leave."""
        search = self.search
        if search is not None:
            search.stop()
            if _wait_for(self.inbox, _DONE, _EXIT_GRACE):
                self.write(search.answer())

    def loop(self) -> int:
        session = self.session
        while True:
            item = self.next_item()
            if item is _EOF:
                return 0
            if isinstance(item, _TooLong):
                self.write([f"error line too long: more than {MAX_LINE} characters (not read)"])
                continue
            assert isinstance(item, str)
            begun = session.begin(item)
            if isinstance(begun, list):
                self.write(begun)
                if session.done:
                    return 0
                continue
            search = self.search = begun

            def run_and_signal(search: Search = search) -> None:
                search.run()
                self.inbox.put(_DONE)

            threading.Thread(target=run_and_signal, daemon=True).start()
            if any(isinstance(x, str) and x.split() == ["quit"] for x in self.backlog):
                search.stop()  # a quit is already waiting: no search before it runs its course
            # Commands sent during the search are answered after it, in order (a stop is
            # acted on at once, and its own "ok" then comes in its turn).
            waiting: list[object] = []
            while True:
                item = self.next_item()
                if item is _DONE:
                    break
                if item is _EOF:
                    waiting.append(item)  # no more commands: the search goes on to its end
                    continue
                word = item.split(maxsplit=1)[0].lower() if isinstance(item, str) and item.strip() else ""
                waiting.append(item)
                if word == "stop":
                    search.stop()
                elif (
                    word == "quit" and isinstance(item, str) and len(item.split()) == 1
                ):  # ("quit now" is refused in its turn)
                    search.stop()
                    # Commands after quit are never read; a search that cannot be stopped is left behind.
                    if not _wait_for(self.inbox, _DONE, _EXIT_GRACE):
                        self.search = None
                        self.write(["bye"])
                        return 0
                    break
            self.search = None
            self.write(search.answer())
            # What came during the search goes first, in order, before reading more.
            self.backlog.extendleft(reversed(waiting))


def add_arguments(parser: argparse.ArgumentParser, name: str = "engine") -> None:
    """Options of ``jericho engine``."""
    parser.add_argument(
        "--player",
        default="expert",
        help="the player answering 'go' (a make_player spec, e.g. mcts:sims=500 or expert; "
        "';' may replace ',' between its options); default: expert",
    )
    parser.add_argument("--name", default=None, help="the name given by 'identify'")


def run(args: argparse.Namespace) -> int:
    """Run the engine on stdin/stdout; ends the process with status 0 on quit, end of input and Ctrl-C."""
    spec = str(args.player)
    try:
        player = _checked_player(make_player, spec)
    except _CommandError as exc:
        print(f"jericho engine: {exc}".replace("bad player", "bad --player", 1), file=sys.stderr)
        return 2
    session = EngineSession(player, spec=spec, name=getattr(args, "name", None))
    # stdin is read by a daemon thread through an unbuffered file of its own: the
    # interpreter's sys.stdin buffer is never locked by it (a locked buffer at shutdown
    # is the "Fatal Python error: _enter_buffered_busy" abort).  Undecodable bytes become
    # U+FFFD (and then a clear error), never a crash.
    raw = io.FileIO(sys.stdin.fileno(), "r", closefd=False)
    stdin = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None)
    status = 0
    try:
        status = serve(session, stdin, sys.stdout)
    except KeyboardInterrupt:  # Ctrl-C outside the serving loop (e.g. at its very start)
        status = 0
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        _close(session.player)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    # Leave at once: the stdin reader (and a search that could not be stopped) are daemon
    # threads still inside blocking calls; they must not take part in the interpreter's
    # shutdown, where they made the process abort after "bye".
    os._exit(status)
