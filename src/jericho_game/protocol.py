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
    getposition               -> ok <position text>
    status                    -> ok turn T score S N result R moves K
    show                      -> board lines, then ok
    setoption player <spec>   -> ok                      (also: setoption name <text>)
    help                      -> info lines, then ok
    quit                      -> bye                     (end of input also ends the engine)
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable
from typing import TextIO

from jericho_game import __version__
from jericho_game.errors import JerichoError
from jericho_game.game import Game
from jericho_game.moves import Move
from jericho_game.players.base import Limit, Player, PlayerSpecError, make_player

__all__ = ["PROTOCOL_VERSION", "EngineSession", "add_arguments", "run", "FINAL_WORDS"]

PROTOCOL_VERSION = 1
FINAL_WORDS = ("ok", "error", "bestmove", "ready", "bye")
_POSITION_FIELDS = 7

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
    "setoption player SPEC | setoption name TEXT",
    "quit                           bye",
]


def _player_spec(spec: str) -> str:
    # Inside "external:cmd=..." specs, commas separate the outer options, so an inner
    # player's options may be written with ";" instead.
    return spec.replace(";", ",")


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
        self.player_factory = player_factory or (lambda s: make_player(_player_spec(s)))
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
            known = "identify isready newgame position play undo legal go getposition status show setoption help quit"
            return [f"error unknown command {words[0]!r}: commands are {known}"]
        try:
            out: list[str] = handler(words[1:])
        except (_CommandError, JerichoError) as exc:
            return [f"error {_one_line(str(exc))}"]
        # Texts from outside (a player's name or error, an option value) must not break
        # the grammar: every reply is exactly one line.
        return [_one_line(line) for line in out]

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
            raise _CommandError(f"position {args[0]!r}: expected 'start' or 'text'")
        if rest:
            if rest[0].lower() != "moves":
                raise _CommandError(f"unexpected {rest[0]!r} after the position: expected 'moves M...'")
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

    def _cmd_go(self, args: list[str]) -> list[str]:
        t: float | None = None
        nodes: int | None = None
        seed: int | None = None
        if len(args) % 2:
            raise _CommandError(f"go takes pairs 'time S', 'nodes N', 'seed K'; got {' '.join(args)!r}")
        for key, value in zip(args[::2], args[1::2], strict=True):
            k = key.lower()
            if k == "time":
                try:
                    t = float(value)
                except ValueError:
                    raise _CommandError(f"bad time {value!r}: expected seconds, e.g. 1.5") from None
                if not t > 0 or t == float("inf"):
                    raise _CommandError(f"bad time {value!r}: must be a positive number of seconds")
            elif k == "nodes":
                nodes = _int("nodes", value, minimum=1)
            elif k == "seed":
                seed = _int("seed", value, minimum=0)
            else:
                raise _CommandError(f"unknown go option {key!r}: use time, nodes or seed")
        if self.game.is_over():
            raise _CommandError(f"the game is over ({self.game.outcome()}): no move to search")
        start = time.perf_counter()
        try:
            move = self.player.choose_move(self.game.copy(), Limit(time=t, nodes=nodes, seed=seed))
        except Exception as exc:  # the player failed: report, keep the session alive
            raise _CommandError(f"the player failed: {type(exc).__name__}: {exc}") from None
        elapsed = time.perf_counter() - start
        if not isinstance(move, Move) or not self.game.is_legal(move):
            raise _CommandError(f"the player chose an illegal move {move}: {self.game.why_illegal(move)}")
        return [f"info time {elapsed:.3f}", f"bestmove {move}"]

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
            try:
                player = self.player_factory(value)
            except (PlayerSpecError, ValueError, ImportError) as exc:
                raise _CommandError(f"bad player {value!r}: {exc}") from None
            self.player, self.spec = player, value
        elif key == "name":
            self.name = value
        else:
            raise _CommandError(f"unknown option {args[0]!r}: options are player, name")
        return ["ok"]

    def _cmd_help(self, args: list[str]) -> list[str]:
        return [f"info {line}" for line in _HELP] + ["ok"]

    def _cmd_quit(self, args: list[str]) -> list[str]:
        self.done = True
        return ["bye"]


class _CommandError(Exception):
    """A command the engine refuses; the message follows ``error``."""


def _one_line(text: str) -> str:
    """``text`` with its line breaks replaced by `` | `` (a reply line never spans lines)."""
    return " | ".join(part.strip() for part in text.splitlines() if part.strip()) or text.strip()


def _no_args(command: str, args: list[str]) -> None:
    if args:
        raise _CommandError(f"{command} takes no arguments, got {' '.join(args)!r}")


def _int(what: str, text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise _CommandError(f"bad {what} {text!r}: expected a whole number") from None
    if value < minimum:
        raise _CommandError(f"bad {what} {text!r}: must be at least {minimum}")
    return value


def _play_all(game: Game, moves: Iterable[str]) -> None:
    for i, text in enumerate(moves, 1):
        try:
            game.play(text)
        except JerichoError as exc:
            raise _CommandError(f"illegal move {i} {text!r}: {exc}") from None


def serve(session: EngineSession, stdin: TextIO, stdout: TextIO) -> int:
    """Answer commands from ``stdin`` until ``quit`` or end of input; returns the exit status."""
    for line in stdin:
        for reply in session.handle(line):
            stdout.write(reply + "\n")
        stdout.flush()
        if session.done:
            break
    return 0


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
    """Run the engine on stdin/stdout."""
    spec = str(args.player)
    try:
        player = make_player(_player_spec(spec))
    except (PlayerSpecError, ValueError, ImportError) as exc:
        print(f"jericho engine: bad --player {spec!r}: {exc}", file=sys.stderr)
        return 2
    session = EngineSession(player, spec=spec, name=getattr(args, "name", None))
    return serve(session, sys.stdin, sys.stdout)
