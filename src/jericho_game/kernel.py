"""Which rules kernel runs: the compiled C extension when importable, else the pure-Python core.

:mod:`jericho_game.core` is the readable reference; ``jericho_game._kernel`` (C, built at
install when a compiler is present) implements the same model with the same Zobrist keys
and is kept equal to it by tests (``tests/rules/test_kernel.py``).  Everything above the engine
asks this module for a state, so it runs on whichever kernel is present.

* :data:`NAME` — ``"c"`` or ``"python"``;
* :func:`new_state` — a fresh state of a board (a ``core.State`` or a ``_kernel.State``,
  which has the same interface);
* :func:`playout` — one random or guided playout from a state, on its own kernel;
* :func:`describe` — one line for ``jericho --version`` and ``jericho bench``.

Set the environment variable ``JERICHO_KERNEL=python`` (before importing the package) to
force the pure-Python core, e.g. to compare or to debug.
"""

from __future__ import annotations

import os
import random as _random
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from jericho_game import core
from jericho_game.core import State, Tables

__all__ = ["NAME", "C", "new_state", "playout", "describe", "is_c_state", "python_state", "available", "pieces_left"]


def _load() -> ModuleType | None:
    if os.environ.get("JERICHO_KERNEL", "").lower() == "python":
        return None
    try:
        from jericho_game import _kernel  # type: ignore[attr-defined]
    except ImportError:
        return None
    mod: ModuleType = _kernel
    # Its legal-move snapshot is a read-only sequence; say so to isinstance() checks.
    Sequence.register(mod.LegalMoves)
    return mod


#: The C extension module, or ``None`` when the pure-Python core runs.
C: Any = _load()
#: ``"c"`` when the compiled kernel runs, ``"python"`` otherwise.
NAME: str = "c" if C is not None else "python"


def available() -> bool:
    """Whether the C extension could be imported (whatever ``JERICHO_KERNEL`` says)."""
    try:
        from jericho_game import _kernel  # type: ignore[attr-defined]  # noqa: F401
    except ImportError:
        return False
    return True


def describe() -> str:
    """One line naming the kernel in use, for ``--version`` and ``bench``."""
    if C is not None:
        return f"kernel: C ({C.__file__})"
    why = "forced by JERICHO_KERNEL=python" if os.environ.get("JERICHO_KERNEL") else "the C extension is not built"
    return f"kernel: pure Python ({why})"


def board(tables: Tables) -> Any:
    """The C board of ``tables`` (built once and kept on the tables)."""
    b = tables.__dict__.get("_kernel_board")
    if b is None:
        b = C.Board(
            tables.n_cells,
            tables.camp_size,
            tables.align_south,
            tables.align_north,
            tables.through,
            tables.aligned,
            tables.z_tower,
            tables.z_reserve,
            tables.z_turn,
            tables.z_last,
            tables.z_pass,
            tables.move_objects,
        )
        tables.__dict__["_kernel_board"] = b
    return b


def new_state(tables: Tables, kernel: str | None = None) -> State:
    """A start position on ``tables``: on the C kernel when it runs (or ``kernel="c"``), else core."""
    use_c = (kernel or NAME) == "c"
    if use_c and C is None:
        raise RuntimeError("the C kernel is not available (not built, or JERICHO_KERNEL=python)")
    if use_c:
        st: State = C.State(board(tables), tables)
        return st
    return State(tables)


def is_c_state(state: object) -> bool:
    """Whether ``state`` is a C kernel state."""
    return C is not None and type(state) is C.State


def pieces_left(state: Any) -> int:
    """The pieces still in the two reserves of ``state`` (a C or Python kernel state): 50 at the
    start, the game's clock for what depends on its phase (the endgame solver, the value's data)."""
    return int(state.reserve[0]).bit_count() + int(state.reserve[1]).bit_count()


def python_state(state: State) -> State:
    """A pure-Python ``core.State`` of the same position (no history); a copy if it already is one."""
    if not is_c_state(state):
        return state.copy()
    py = State(state.tables)
    towers: dict[int, list[int]] = {}
    for c, x in enumerate(state.code):
        pieces = []
        while x:
            pieces.append((x & 31) - 1)
            x >>= 5
        if pieces:
            towers[c] = pieces
    last = (state.last_piece, state.last_cell) if state.last_cell >= 0 else None
    py.load(towers, (state.reserve[0], state.reserve[1]), state.turn, last, state.passes, state.outcome)
    if last is None:  # a pass keeps the previous placement's piece and tower (they only feed the hash)
        py.last_piece = state.last_piece
        py.last_below = state.last_below
    return py


def playout(
    state: State,
    random: Callable[[], float] = _random.random,
    moves: list[int] | None = None,
    guided: int = 1,
) -> int:
    """:func:`jericho_game.core.random_playout` on the state's own kernel (``state`` is unchanged).

    On a C state the playout runs in C with its own generator, seeded from one call of
    ``random`` (so a seeded ``random.Random().random`` still makes it reproducible).
    """
    if is_c_state(state):
        return int(C.playout(state, int(random() * 18446744073709551616.0), guided, moves))
    return core.random_playout(state, random, moves, guided)
