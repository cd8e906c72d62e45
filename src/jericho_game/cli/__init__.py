"""The programs: the ``jericho`` command and its subcommands (the terminal game, record tools, the
puzzle maker, the benchmark, the engine protocol's server and client, account management).

The top layer: it may import everything (the rules library, the AI, the envs, the web app);
nothing imports it.  Each subcommand lives in its own module or package.

A subcommand module provides ``add_arguments(parser)`` and ``run(args) -> int``; it is
imported only when its command runs, so ``jericho play`` never loads the web stack.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from jericho_game.extras import install_hint

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "play": ("jericho_game.cli.terminal", "play in the terminal: two people, or a person against an AI level"),
    "show": ("jericho_game.cli.records", "print a game record's final position and result"),
    "check": ("jericho_game.cli.records", "validate a game record; exits non-zero with the error on a bad one"),
    "bench": ("jericho_game.cli.bench", "print speed figures of the engine and the AI"),
    "puzzles": ("jericho_game.cli.puzzles", "make tactics puzzles from games, proved by search; or verify them"),
    "train": ("jericho_game.ai.selfplay", "train the learned evaluator by self-play (resumable; NumPy on the CPU)"),
    "arena": ("jericho_game.ai.arena", "play a round robin between AI players and rate them (Elo)"),
    "serve": ("jericho_game.web.server", "start the web app (board, AI, online games)"),
    "user": ("jericho_game.cli.user", "manage the web app's accounts: add (admins too), passwd, disable, list"),
    "backup": ("jericho_game.cli.backup", "copy the web app's database while it serves (SQLite or PostgreSQL)"),
    "restore": ("jericho_game.cli.backup", "load a backup made by `jericho backup` into an empty database"),
    "worker": ("jericho_game.web.airunner.aiqueue", "run the web app's AI moves in separate processes (PostgreSQL)"),
    "loadtest": ("jericho_game.web.tools.loadtest", "measure a web server: moves/s and latency of many games at once"),
    "engine": ("jericho_game.cli.protocol", "speak the text engine protocol on stdin/stdout"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered.

    Only the module of ``only`` (the command being run) is imported to add its
    options; the others stay unloaded so that ``jericho play`` starts fast.
    """
    parser = argparse.ArgumentParser(
        prog="jericho",
        description="Jericho, the strategy game by Jean-Louis Roubira. Rules: docs/rules.md",
    )
    parser.add_argument("--version", action="version", version=f"jericho {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module, _command=name)
        if name != only:
            continue
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            p.set_defaults(_missing=str(exc))
            continue
        add = getattr(mod, "add_arguments", None)
        if add is not None:
            try:
                add(p, name)
            except TypeError:
                add(p)
    return parser


def _version() -> str:
    from jericho_game import __version__
    from jericho_game.kernel import describe

    return f"{__version__} ({describe()})"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``jericho`` console script."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args_list if not a.startswith("-")), None)
    parser = build_parser(command)
    # Known args first: when a command's extra is missing its options were never added, and
    # "not available: install the web extra" helps more than "unrecognized arguments: --port".
    args, unknown = parser.parse_known_args(args_list)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    missing = getattr(args, "_missing", None)
    if missing:
        if "pip install" not in missing:  # a MissingExtraError names its extra; anything else gets the usual set
            missing += f"\nInstall the extras with: {install_hint('web,rl')}"
        print(f"jericho {args.command}: not available: {missing}", file=sys.stderr)
        return 2
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    mod = importlib.import_module(args._module)
    try:
        return int(mod.run(args) or 0)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
