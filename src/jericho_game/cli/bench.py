"""``jericho bench``: speed figures of the engine (and of the AI players when present).

The program only: the figures themselves are measured by each layer's own bench module
(:mod:`jericho_game.ai.bench` for the engine and the AI, ``web.tools.bench``, ``envs.bench``).

Every figure runs on one core in this process, on the kernel in use (the C extension, or
the pure-Python core when it is missing or ``JERICHO_KERNEL=python``); the second line of
the output names it.  Quote its output, with the machine
line it prints, whenever a document claims a speed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable

from jericho_game import kernel
from jericho_game.ai.bench import Figure, engine_figures


def machine() -> str:
    """One line describing where the figures were measured."""
    return (
        f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}"
    )


def add_arguments(parser: argparse.ArgumentParser, name: str = "bench") -> None:
    """Options of ``jericho bench``."""
    parser.add_argument("--seconds", type=float, default=3.0, help="time per engine figure (default 3)")
    parser.add_argument("--engine-only", action="store_true", help="skip the AI figures (and the research adapters')")
    parser.add_argument(
        "--net",
        action="store_true",
        help="only the net's forward pass: positions per CPU second by batch size (needs numpy)",
    )
    parser.add_argument(
        "--vector",
        action="store_true",
        help="only the vector env at B=1024: flat against planar+canonical observations (float32, and uint8 with "
        "bool masks, on one thread and on --threads), each step copied into a rollout buffer, alternated (rl extra)",
    )
    parser.add_argument(
        "--rollout", type=int, default=8, help="steps of the rollout buffer --vector copies into (default 8; 0: none)"
    )
    parser.add_argument(
        "--threads", type=int, default=2, help="threads of --vector's threaded configuration (default 2; 1: none)"
    )
    parser.add_argument(
        "--solver",
        action="store_true",
        help="only the endgame solver: share of late positions solved within 0.1 s and 1 s, median time, "
        "by pieces left in the reserves (2, 4, ... 16)",
    )
    parser.add_argument("--sample", type=int, default=20, help="positions per size for --solver (default 20, seeded)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON to FILE")


def _all_figures(args: argparse.Namespace, show: Callable[[list[Figure]], None]) -> None:
    """The engine's figures, then the web rendering's, the AI's and the research adapters' when installed."""
    show(engine_figures(args.seconds))
    try:  # the web server's rendering of a move's state, when the web extra is installed
        from jericho_game.web.tools import bench as web_bench
    except ImportError:
        pass
    else:
        show(web_bench.figures(args.seconds))
    if not args.engine_only:
        try:
            from jericho_game.ai import bench as ai_bench
        except ImportError:
            print("(AI figures unavailable: jericho_game.ai.bench not installed)", file=sys.stderr)
        else:
            show(ai_bench.figures())
        try:  # the research adapters' figures, when the rl extra is installed
            from jericho_game.envs import bench as env_bench
        except ImportError:
            pass
        else:
            show(env_bench.figures(args.seconds))


def run(args: argparse.Namespace) -> int:
    """Print every figure as it is measured."""
    print(f"machine: {machine()}")
    print(kernel.describe())
    figures: list[Figure] = []

    def show(batch: list[Figure]) -> None:
        for label, value, unit in batch:
            print(f"{label:<55} {value:>12,.1f} {unit}", flush=True)
        figures.extend(batch)

    if getattr(args, "solver", False):
        if args.sample < 1:
            print("jericho bench: --sample must be at least 1", file=sys.stderr)
            return 2
        from jericho_game.ai import bench as ai_bench

        ai_bench.print_solver_table(args.sample)
        return 0
    if getattr(args, "net", False):
        from jericho_game.envs import bench as env_bench  # the rl extra's numpy

        show(env_bench.net_figures(args.seconds))
    elif getattr(args, "vector", False):
        from jericho_game.envs import bench as env_bench  # the rl extra

        if args.rollout < 0 or args.threads < 1:
            print("jericho bench: --rollout must be at least 0 and --threads at least 1", file=sys.stderr)
            return 2
        show(env_bench.vector_figures(args.seconds, rollout=args.rollout, threads=args.threads))
    else:
        _all_figures(args, show)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "machine": machine(),
                    "kernel": kernel.NAME,
                    "figures": [{"label": a, "value": b, "unit": c} for a, b, c in figures],
                },
                fh,
                indent=2,
            )
    return 0
