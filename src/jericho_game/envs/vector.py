"""``B`` Jericho games stepped at once: a Gymnasium vector environment with numpy arrays.

>>> import gymnasium, jericho_game.envs.gym_env      # registers "Jericho-v1" and its vector entry point
>>> envs = gymnasium.make_vec("Jericho-v1", num_envs=1024)
>>> obs, info = envs.reset(seed=0)                   # obs["observation"]: (1024, 1239), obs["action_mask"]: (1024, 651)
>>> actions = envs.action_space.sample(mask=tuple(obs["action_mask"]))   # or a policy's argmax over the mask
>>> obs, rewards, terminated, truncated, info = envs.step(actions)

Each sub-environment is the single-agent game of :class:`jericho_game.envs.gym_env.JerichoEnv`
(the agent plays one side; +1 / -1 / 0 at the end), with the same observation options
(``observation="flat" | "planar"``, ``view="absolute" | "canonical"``).  The opponent:

* ``opponent="random"`` (default): a uniformly random legal move, drawn for the whole batch
  in numpy;
* ``opponent="self"``: **self-play**, both sides are the agent.  Each step plays the action
  of the side to move in each game; the observation is the side to move's (its turn flags
  say so, and ``info["side"]`` is the side to move); the reward is the mover's (+1 when its
  move won, -1 when it lost, 0 otherwise); ``agent_side`` is ignored;
* any player spec (``"greedy"``, ``"mcts:sims=50"``, ``"hard"`` ...): one player per game,
  seeded from the batch's generator at ``reset`` (a level's time limit is dropped so that
  its simulation budget alone decides), asked for its move game by game.

``obs_dtype="uint8" | "bool"`` gives the same observations one byte a value (float32 by default),
``mask_dtype="bool"`` bool masks (int8 by default: what Gymnasium's ``Discrete.sample(mask=)``
takes), ``num_threads=N`` writes a large batch's observations on N threads (the C calls of a
step release the GIL), ``shaping=c`` adds ``c`` times the change of the stepping side's monolith
margin over each step to its reward (as the single env's ``shaping``).

``positions=True`` adds ``info["position"]``: each game's position text
(docs/notation.md) for the observation returned.  ``reset(options=...)`` takes
``"position"`` (a position text: every episode starts there) and ``"moves"`` (opening
moves, a list or one string, played from that position or the standard start); they stay
in force for the autoresets and later resets until new options replace them
(``{"moves": []}`` returns to the standard start).  A start position runs the batch on
:class:`PythonBatchEngine` (the compiled engine starts its games at the standard start only);
opening moves alone stay on the compiled one.

Finished games start again on the next ``step`` (Gymnasium's
``AutoresetMode.NEXT_STEP``: that step ignores the action of that game and returns the
first observation of its next episode, reward 0); ``autoreset_mode="SameStep"`` starts them
again in the step they end, their last observation and info in ``info["final_obs"]`` and
``info["final_info"]`` (what Stable-Baselines3 expects: :mod:`jericho_game.envs.sb3`).
An illegal action ends that game with reward -1 (``info["illegal_action"]`` marks it), as
``illegal_action="lose"`` does in the single env.  ``agent_side="random"`` draws a side per
game per episode.

Speed: the whole batch goes through one engine call per question — observations, legal
masks, status, the moves themselves — and the opponent's uniform choice among its legal
moves is numpy over the batch.  :class:`BatchEngine` is the seam: with the compiled kernel
the games live in C (``jericho_game._kernel.BatchEngine``, wrapped by
:class:`KernelBatchEngine`); without it :class:`PythonBatchEngine` keeps the engine's
``State`` objects and computes observations and masks in numpy from their fields
(``jericho_game.core``'s documented search interface).  With the compiled engine the
observations come out of C in their final form (flat or planar, absolute or canonical:
``_kernel.batch_views``, told the geometry by :func:`view_layout`); without it the view is
NumPy post-processing (:meth:`View.observations`).  The results are the same either way
(tests run both on the same moves).  ``jericho bench`` prints the figure (agent steps per
second at ``B = 1024``), ``jericho bench --vector`` flat against planar + canonical.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from typing import Any, Protocol

from jericho_game.extras import missing_extra

try:
    import gymnasium
    import numpy as np
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError as exc:
    raise missing_extra("the vector environment", "rl", exc) from exc

from jericho_game.core import N_PIECES, NO_OUTCOME, PIECE_COLOUR, PIECE_SIZE, SEVEN, State, Tables
from jericho_game.envs.encoding import Encoding, as_action, default_encoding
from jericho_game.envs.planar import default_planar
from jericho_game.envs.views import View
from jericho_game.game import Game

__all__ = ["JerichoVectorEnv", "BatchEngine", "KernelBatchEngine", "PythonBatchEngine", "batch_engine", "view_layout"]


#: The fewest games a thread of ``num_threads`` writes the observations of (smaller batches use fewer threads).
MIN_GAMES_PER_THREAD = 64


class BatchEngine(Protocol):
    """What the vector env needs from an engine holding ``n`` games (numbered ``0..n-1``)."""

    n: int

    def reset(self, games: np.ndarray) -> None:
        """Put ``games`` (indices) back at the start."""

    def push(self, games: np.ndarray, codes: np.ndarray) -> None:
        """Play move ``codes[k]`` (legal) in game ``games[k]``."""

    def status(self) -> tuple[np.ndarray, np.ndarray]:
        """``(turn, outcome)`` of every game, int arrays of length ``n``."""

    def observe(self, games: np.ndarray, sides: np.ndarray) -> np.ndarray:
        """Flat observations ``(len(games), n_obs)`` of ``games`` seen by ``sides``."""

    def masks(self, games: np.ndarray) -> np.ndarray:
        """Legal-action masks ``(len(games), n_actions)`` (int8) of ``games``."""

    def scores(self) -> np.ndarray:
        """Every game's monolith counts ``(n, 2)`` (South's, North's): the reward shaping's margins."""


class PythonBatchEngine:
    """:class:`BatchEngine` on the engine's ``State`` objects, with numpy for the batch work."""

    def __init__(self, n: int, encoding: Encoding | None = None) -> None:
        self.encoding = enc = encoding or default_encoding()
        self.tables: Tables = enc.tables
        t = self.tables
        if t.n_cells > 32:  # cell masks are unpacked from 4 bytes (see _masks)
            raise ValueError(f"the batch engine handles boards of at most 32 cells, not {t.n_cells}")
        self.n = n
        self._start = Game(t.topology).state
        self.states: list[State] = [self._start.copy() for _ in range(n)]
        self.n_cells = t.n_cells
        self.n_align = t.n_align
        # Columns of the field table one pass over the states fills (see _fields).
        c, a = t.n_cells, t.n_align
        self._cols = {
            "code": slice(0, c),
            "sf": slice(c, c + 5),
            "cf": slice(c + 5, c + 10),
            "reserve": slice(c + 10, c + 12),
            "leader": slice(c + 12, c + 12 + a),
            "score": slice(c + 12 + a, c + 14 + a),
        }
        k = c + 14 + a
        self._scalar = {"turn": k, "last_cell": k + 1, "last_piece": k + 2, "passes": k + 3, "outcome": k + 4}
        self._forbidden = k + 5
        self._piece_size = np.array(PIECE_SIZE, dtype=np.int64)
        self._piece_colour = np.array(PIECE_COLOUR, dtype=np.int64)
        self._cell_bits = np.arange(t.n_cells, dtype=np.int64)
        self._piece_bits = np.arange(N_PIECES, dtype=np.int64)
        self._camp = np.array(t.cell_camp, dtype=np.int64)
        self._aligned = np.zeros((t.n_cells, t.n_cells), dtype=bool)
        for c, others in enumerate(t.aligned):
            self._aligned[c, list(others)] = True
        off = {name: o for name, (o, _) in enc.segments.items()}
        self._off = off
        self._tower_base = off["towers"] + np.arange(t.n_cells)[None, :] * 40

    def set_start(self, state: State | None) -> None:
        """The position :meth:`reset` puts games in (``None``: the standard start)."""
        self._start = state.copy() if state is not None else Game(self.tables.topology).state

    # -- BatchEngine ------------------------------------------------------------------------
    def reset(self, games: np.ndarray) -> None:
        """Put ``games`` back at the start."""
        start = self._start
        states = self.states
        for i in games.tolist():
            states[i] = start.copy()

    def push(self, games: np.ndarray, codes: np.ndarray) -> None:
        """Play ``codes`` in ``games`` (the engine's own push: the rules in one place)."""
        states = self.states
        for i, code in zip(games.tolist(), codes.tolist(), strict=True):
            states[i].push(code)

    def status(self) -> tuple[np.ndarray, np.ndarray]:
        """``(turn, outcome)`` of every game."""
        st = self.states
        return (
            np.fromiter((s.turn for s in st), dtype=np.int64, count=self.n),
            np.fromiter((s.outcome for s in st), dtype=np.int64, count=self.n),
        )

    def _fields(self, games: np.ndarray) -> np.ndarray:
        """One row of integers per game: every state field the observation and mask read."""
        states = self.states
        picked = [states[i] for i in games.tolist()]
        width = self._forbidden + 1
        # One flat stream of Python ints into numpy (much cheaper than a list of tuples).
        stream = chain.from_iterable(
            (
                s.code,
                s.size_free,
                s.colour_free,
                s.reserve,
                s.leader,
                s.score,
                (s.turn, s.last_cell, s.last_piece, s.passes, s.outcome, s.last_below),
            )
            for s in picked
        )
        flat = np.fromiter(chain.from_iterable(stream), dtype=np.int64, count=len(picked) * width)
        return flat.reshape(len(picked), width)

    def _forbidden_cells(self, f: np.ndarray) -> np.ndarray:
        """The asymmetry rule's cell masks (``State.forbidden_copy_cells``) for the batch."""
        lc = f[:, self._scalar["last_cell"]]
        code = f[:, self._cols["code"]]
        below = f[:, self._forbidden]
        hit = (code == below[:, None]) & self._aligned[np.maximum(lc, 0)] & (lc >= 0)[:, None]
        return (hit.astype(np.int64) << self._cell_bits[None, :]).sum(axis=1)

    def masks(self, games: np.ndarray) -> np.ndarray:
        """Legal masks of ``games``, computed for the batch from the size/colour bit masks."""
        return self._masks(self._fields(games))

    def _masks(self, f: np.ndarray) -> np.ndarray:
        cols, sc = self._cols, self._scalar
        b = f.shape[0]
        sf = f[:, cols["sf"]]
        cf = f[:, cols["cf"]]
        turn = f[:, sc["turn"]]
        reserve = f[np.arange(b), cols["reserve"].start + turn]
        cells = sf[:, self._piece_size] & cf[:, self._piece_colour]  # (b, 25) cell bit masks
        last_piece = np.where(f[:, sc["last_cell"]] >= 0, f[:, sc["last_piece"]], -1)
        copy = self._piece_bits[None, :] == last_piece[:, None]
        cells = np.where(copy, cells & ~self._forbidden_cells(f)[:, None], cells)
        cells = np.where((reserve[:, None] >> self._piece_bits[None, :]) & 1 == 1, cells, 0)
        going = f[:, sc["outcome"]] == NO_OUTCOME
        cells[~going] = 0
        mask = np.empty((b, N_PIECES * self.n_cells + 1), dtype=np.int8)
        # Cell bit masks to bits: the bytes of each mask, unpacked little-endian (fast on uint8).
        as_bytes = cells.astype("<u4").view(np.uint8).reshape(b, N_PIECES, 4)
        body = np.unpackbits(as_bytes, axis=2, bitorder="little")[:, :, : self.n_cells]
        mask[:, :-1] = body.reshape(b, N_PIECES * self.n_cells)
        mask[:, -1] = going & ~cells.any(axis=1)  # the pass: forced when nothing can be placed
        return mask

    def observe(self, games: np.ndarray, sides: np.ndarray) -> np.ndarray:
        """Observations of ``games`` seen by ``sides`` (equal to :meth:`Encoding.observe`)."""
        return self._observe(self._fields(games), np.asarray(sides, dtype=np.int64))

    def _observe(self, f: np.ndarray, me: np.ndarray) -> np.ndarray:
        cols, sc, off = self._cols, self._scalar, self._off
        b = f.shape[0]
        rows = np.arange(b)
        obs = np.zeros((b, self.encoding.observation_size), dtype=np.float32)
        flat = obs.reshape(-1)
        width = obs.shape[1]
        code = f[:, cols["code"]]
        for level in range(4):
            v = (code >> (5 * level)) & 31
            r, c = np.nonzero(v)
            p = v[r, c] - 1
            base = r * width + self._tower_base[0, c] + level * 10
            flat[base + p // 5] = 1.0
            flat[base + 5 + p % 5] = 1.0
        obs[:, off["own_camp"] : off["own_camp"] + self.n_cells] = self._camp[None, :] == me[:, None]
        them = 1 - me
        res = f[:, cols["reserve"]]
        bits = self._piece_bits[None, :]
        o = off["reserves"]
        obs[:, o : o + N_PIECES] = (res[rows, me][:, None] >> bits) & 1
        obs[:, o + N_PIECES : o + 2 * N_PIECES] = (res[rows, them][:, None] >> bits) & 1
        leader = f[:, cols["leader"]]
        j = np.where(leader < 0, 2, np.where(leader == me[:, None], 0, 1))
        flat[(rows * width + off["leaders"])[:, None] + np.arange(self.n_align)[None, :] * 3 + j] = 1.0
        score = f[:, cols["score"]]
        mine, theirs = score[rows, me], score[rows, them]
        width_s = self.n_align + 1
        flat[rows * width + off["score"] + mine] = 1.0
        flat[rows * width + off["score"] + width_s + theirs] = 1.0
        obs[:, off["seven"]] = mine >= SEVEN
        obs[:, off["seven"] + 1] = theirs >= SEVEN
        lc = f[:, sc["last_cell"]]
        placed = np.nonzero(lc >= 0)[0]
        flat[placed * width + off["last_piece"] + f[placed, sc["last_piece"]]] = 1.0
        flat[placed * width + off["last_cell"] + lc[placed]] = 1.0
        obs[:, off["passed"]] = f[:, sc["passes"]] > 0
        obs[:, off["turn"]] = f[:, sc["turn"]] == me
        obs[:, off["turn"] + 1] = me == 1
        return obs

    def scores(self) -> np.ndarray:
        """Every game's monolith counts ``(n, 2)``: South's, North's."""
        return np.array([s.score for s in self.states], dtype=np.int64).reshape(self.n, 2)

    def observe_and_mask(self, games: np.ndarray, sides: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`observe` and :meth:`masks` from one pass over the states."""
        f = self._fields(games)
        return self._observe(f, np.asarray(sides, dtype=np.int64)), self._masks(f)

    def to_move_and_masks(self, games: np.ndarray, sides: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Those of ``games`` in progress with ``sides`` to move, and their masks (one pass)."""
        f = self._fields(games)
        sc = self._scalar
        keep = (f[:, sc["outcome"]] == NO_OUTCOME) & (f[:, sc["turn"]] == sides)
        return games[keep], self._masks(f[keep])


class KernelBatchEngine:
    """:class:`BatchEngine` on the C kernel's ``_kernel.BatchEngine`` (the games held in C).

    The C type takes and fills arrays through the buffer protocol (it has no numpy
    dependency); this adapter allocates the numpy arrays and keeps the protocol's shapes.
    Only for the default encoding, whose layout the C code writes (checked here).
    """

    def __init__(self, n: int, encoding: Encoding | None = None) -> None:
        from jericho_game import kernel

        factory = getattr(kernel.C, "BatchEngine", None)
        if factory is None:
            raise ImportError(f"the compiled kernel's BatchEngine is not available ({kernel.describe()})")
        enc = encoding or default_encoding()
        self.encoding = enc
        self.n = int(n)
        self._c = factory(kernel.board(enc.tables), self.n, enc.tables.cell_camp)
        offsets = tuple(off for off, _ in enc.segments.values())
        if self._c.offsets != offsets or self._c.observation_size != enc.observation_size:
            raise ValueError("the C kernel's observation layout differs from this encoding's (rebuild the kernel?)")
        self._obs_size = enc.observation_size
        self._n_act = enc.n_actions
        self._views = kernel.C.batch_views
        self._pool: list[np.ndarray] = []  # arrays handed out by views(), taken back once unreferenced
        self._pool_threads: ThreadPoolExecutor | None = None  # views() on several threads (num_threads)

    @staticmethod
    def _ints(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a, dtype=np.int64)

    def reset(self, games: np.ndarray) -> None:
        """Put ``games`` back at the start."""
        self._c.reset(self._ints(games))

    def push(self, games: np.ndarray, codes: np.ndarray) -> None:
        """Play ``codes`` in ``games`` (all checked before any is played)."""
        self._c.push(self._ints(games), self._ints(codes))

    def status(self) -> tuple[np.ndarray, np.ndarray]:
        """``(turn, outcome)`` of every game."""
        turn = np.empty(self.n, dtype=np.int64)
        outcome = np.empty(self.n, dtype=np.int64)
        self._c.status(turn, outcome)
        return turn, outcome

    def scores(self) -> np.ndarray:
        """Every game's monolith counts ``(n, 2)``: South's, North's."""
        out = np.empty((self.n, 2), dtype=np.int64)
        self._c.scores(out)
        return out

    def observe(self, games: np.ndarray, sides: np.ndarray) -> np.ndarray:
        """Observations of ``games`` seen by ``sides``."""
        games = self._ints(games)
        obs = np.empty((len(games), self._obs_size), dtype=np.float32)
        self._c.observe(games, self._ints(sides), obs)
        return obs

    def masks(self, games: np.ndarray) -> np.ndarray:
        """Legal masks of ``games``."""
        games = self._ints(games)
        out = np.empty((len(games), self._n_act), dtype=np.int8)
        self._c.masks(games, out)
        return out

    def observe_and_mask(self, games: np.ndarray, sides: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`observe` and :meth:`masks`."""
        return self.observe(games, sides), self.masks(games)

    def to_move_and_masks(self, games: np.ndarray, sides: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Those of ``games`` in progress with ``sides`` to move, and their masks."""
        games = self._ints(games)
        picked = np.empty(len(games), dtype=np.int64)
        k = self._c.to_move(games, self._ints(sides), picked)
        return picked[:k], self.masks(picked[:k])

    def views(
        self,
        games: np.ndarray,
        sides: np.ndarray,
        view: View,
        layout: np.ndarray | None = None,
        obs_dtype: Any = np.float32,
        mask_dtype: Any = np.int8,
        threads: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Observations and masks of ``games`` seen by ``sides`` in ``view``, written by C in their final
        form (flat or planar, absolute or canonical): equal to :meth:`observe_and_mask` followed by the
        view's NumPy post-processing (:meth:`View.observations`), at a fraction of the cost.
        ``layout``: ``view_layout(view)``, made once by the caller (made here when not given).
        ``obs_dtype``: float32, or uint8 / bool (the same 0/1 values, one byte each); ``mask_dtype``: int8
        or bool.  ``threads``: how many threads write a large batch, each a contiguous slice of at least
        ``MIN_GAMES_PER_THREAD`` games (the C call runs without the GIL, so Python threads overlap)."""
        games = self._ints(games)
        k = len(games)
        obs_dt, mask_dt = np.dtype(obs_dtype), np.dtype(mask_dtype)
        if k == self.n:  # the whole batch, every step: recycled arrays (subsets are small and vary in size)
            obs, masks = self._buffer((k, *view.shape), obs_dt), self._buffer((k, self._n_act), mask_dt)
        else:
            obs, masks = np.empty((k, *view.shape), dtype=obs_dt), np.empty((k, self._n_act), dtype=mask_dt)
        layout = view_layout(view) if layout is None else layout
        sides = self._ints(sides)
        parts = min(int(threads), k // MIN_GAMES_PER_THREAD)
        if parts <= 1:
            self._views(self._c, games, sides, obs, masks, layout)
            return obs, masks
        # Contiguous slices of the batch, one per thread: the C call runs without the GIL, so they overlap.
        cuts = [k * i // parts for i in range(parts + 1)]
        slices = [slice(cuts[i], cuts[i + 1]) for i in range(parts)]
        pool = self._threads(parts - 1)
        jobs = [
            pool.submit(self._views, self._c, games[sl], sides[sl], obs[sl], masks[sl], layout) for sl in slices[1:]
        ]
        self._views(self._c, games[slices[0]], sides[slices[0]], obs[slices[0]], masks[slices[0]], layout)
        for job in jobs:
            job.result()  # an error in a slice is raised here
        return obs, masks

    def _threads(self, workers: int) -> ThreadPoolExecutor:
        """The engine's worker threads (``workers`` of them, besides the caller's), made once."""
        if self._pool_threads is None or self._pool_threads._max_workers != workers:
            self.close()
            self._pool_threads = ThreadPoolExecutor(workers, thread_name_prefix="jericho-views")
        return self._pool_threads

    def close(self) -> None:
        """Stop the worker threads of ``num_threads`` (if any were started)."""
        if self._pool_threads is not None:
            self._pool_threads.shutdown(wait=True)
            self._pool_threads = None

    def _buffer(self, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
        """An array to fill: one this engine returned before and nobody references any more, else a new one.

        A batch of planes is 22 MB at B=1024; a new array of that size each step costs the kernel's page
        faults and zeroing (as much as writing the observations).  An array is taken back only when this
        pool holds the sole reference (a caller's variable, a view of it, a tensor made from it all hold one),
        so no array a caller can still see is ever overwritten.
        """
        pool = self._pool
        for i in range(len(pool)):
            arr = pool[i]  # the same references as in _unreferenced(): the list's and this variable's
            if arr.shape == shape and arr.dtype == dtype and _getrefcount(arr) <= _UNREFERENCED:
                pool.append(pool.pop(i))  # most recently handed out last
                return arr
        arr = _aligned_empty(shape, dtype)
        pool.append(arr)
        if len(pool) > 6:
            del pool[0]
        return arr


def _aligned_empty(shape: tuple[int, ...], dtype: np.dtype[Any], align: int = 64) -> np.ndarray:
    """``np.empty(shape, dtype)`` starting on an ``align``-byte boundary (the C planes' non-temporal stores need
    16; a cache line is 64), whatever the allocator gives."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.empty(size + align, dtype=np.uint8)
    start = -raw.ctypes.data % align
    return raw[start : start + size].view(dtype).reshape(shape)


def _unreferenced() -> int:
    """What ``sys.getrefcount`` says of an array held by a list and a local variable only, as in
    :meth:`KernelBatchEngine._buffer`'s loop (measured, so that the test does not depend on the
    interpreter's counting conventions); without ``getrefcount`` (not CPython), -1: nothing is reused."""
    if not hasattr(sys, "getrefcount"):
        return -1
    pool = [np.empty(0)]
    for i in range(len(pool)):
        arr = pool[i]
        return _getrefcount(arr)
    raise AssertionError("unreachable")


_getrefcount: Callable[[object], int] = getattr(sys, "getrefcount", lambda obj: 1 << 30)
_UNREFERENCED = _unreferenced()


def view_layout(view: View) -> np.ndarray:
    """The int64 layout the C kernel's ``batch_views`` takes for ``view``: observation kind, view, the
    planes' grid and each cell's place on it (:class:`Planar`), the half turn's images of the cells and
    alignments (:meth:`Encoding.symmetry`).  Built from the Python definitions, so both agree by construction;
    tests compare their observations position by position."""
    enc = view.encoding
    planar = view.planar if view.planar is not None else default_planar()
    half = enc.symmetry("half-turn")
    head = [int(view.planar is not None), int(view.view == "canonical"), planar.height, planar.width]
    head += [enc.n_cells, enc.n_alignments]
    return np.concatenate([np.array(head), planar.cell_pos, half.cells, half.alignments]).astype(np.int64)


def batch_engine(n: int, encoding: Encoding | None = None, kernel: bool | None = None) -> BatchEngine:
    """The fastest engine for ``n`` games: the compiled kernel's when installed, else Python.

    ``kernel=True`` insists on the compiled one (``ImportError`` without it), ``False``
    takes the Python one.
    """
    if kernel is not False and (encoding is None or encoding is default_encoding()):
        from jericho_game import kernel as kernels

        if kernel or hasattr(kernels.C, "BatchEngine"):
            return KernelBatchEngine(n, encoding)  # ImportError when asked for and missing
    return PythonBatchEngine(n, encoding)


class JerichoVectorEnv(VectorEnv):  # type: ignore[misc]
    """``num_envs`` games against a random opponent, stepped at once (see the module docstring)."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 64,
        opponent: str = "random",
        agent_side: str = "south",
        observation: str = "flat",
        view: str = "absolute",
        kernel: bool | None = None,
        render_mode: str | None = None,
        positions: bool = False,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        obs_dtype: Any = "float32",
        mask_dtype: Any = "int8",
        num_threads: int = 1,
        shaping: float = 0.0,
        **unused: Any,
    ) -> None:
        if not isinstance(opponent, str):
            raise TypeError(f"opponent must be 'random', 'self' or a player spec string, not {type(opponent).__name__}")
        self.opponent = opponent
        self._players: list[Any] = []
        if opponent not in ("random", "self"):
            from jericho_game.ai import make_player

            make_player(opponent)  # a bad spec is refused now (PlayerSpecError names it)
        if agent_side not in ("south", "north", "random"):
            raise ValueError(f"bad agent_side {agent_side!r}: choose 'south', 'north' or 'random'")
        if render_mode is not None:
            raise ValueError("the vector env does not render: render single envs (gymnasium.make('Jericho-v1'))")
        extra = set(unused) - {"illegal_action", "max_episode_steps"}
        if extra or unused.get("illegal_action", "lose") != "lose":
            raise ValueError(f"options the vector env does not take: {sorted(unused)}")
        if int(num_envs) < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        self.num_envs = int(num_envs)
        self.obs_dtype = _dtype_option("obs_dtype", obs_dtype, OBS_DTYPES)
        self.mask_dtype = _dtype_option("mask_dtype", mask_dtype, MASK_DTYPES)
        if isinstance(num_threads, bool) or not isinstance(num_threads, int | np.integer) or num_threads < 1:
            raise ValueError(f"num_threads must be a positive integer, got {num_threads!r}")
        #: Threads the compiled engine's observations use for a large batch (the Python engine: ignored).
        self.num_threads = int(num_threads)
        try:
            #: Reward shaping: this times the change of the agent's monolith margin over each step (0: none).
            self.shaping = float(shaping)
        except (TypeError, ValueError):
            raise ValueError(f"shaping must be a number, got {shaping!r}") from None
        if not np.isfinite(self.shaping):
            raise ValueError(f"shaping must be finite, got {shaping!r}")
        self.encoding = default_encoding()
        self.view = View(self.encoding, observation, view)
        self._layout = view_layout(self.view)  # what the C kernel's batch_views reads
        self.agent_side_option = agent_side
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(
                f"bad autoreset_mode {autoreset_mode!r}: choose {AutoresetMode.NEXT_STEP.value!r} (the default) "
                f"or {AutoresetMode.SAME_STEP.value!r}"
            ) from None
        if self.autoreset_mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(f"the vector env does not do autoreset_mode {self.autoreset_mode.value!r}")
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self._kernel_option = kernel
        self.engine = batch_engine(self.num_envs, self.encoding, kernel)
        #: ``info["position"]`` on every reset and step (the position texts of the observations).
        self.positions = bool(positions)
        # The start of every episode (reset options "position" and "moves"); kept for autoresets.
        self._start_position: str | None = None
        self._start_codes: list[int] = []
        # Python games beside the engine's, when something needs them (positions, a player spec).
        self._games: list[Game] | None = None
        n_act = self.encoding.n_actions
        self.single_observation_space = gymnasium.spaces.Dict(
            {
                "observation": self.view.observation_space(self.obs_dtype),
                "action_mask": gymnasium.spaces.Box(0, 1, (n_act,), dtype=self.mask_dtype),
            }
        )
        self.single_action_space = gymnasium.spaces.Discrete(n_act)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self._all = np.arange(self.num_envs)
        self.sides = np.zeros(self.num_envs, dtype=np.int64)
        self._masks = np.zeros((self.num_envs, n_act), dtype=self.mask_dtype)  # in the agent's view, agent to move
        self._needs_reset = np.zeros(self.num_envs, dtype=bool)
        self._started = False

    # -- helpers ------------------------------------------------------------------------------
    @property
    def self_play(self) -> bool:
        """Whether both sides are the agent (``opponent="self"``)."""
        return self.opponent == "self"

    def _tracking(self) -> bool:
        return self.positions or self.opponent not in ("random", "self") or self._start_position is not None

    def _push(self, games: np.ndarray, codes: np.ndarray) -> None:
        """Play ``codes`` in ``games`` on the engine (and on the Python games when kept)."""
        self.engine.push(games, codes)
        if self._games is not None:
            moves = self.encoding.tables.move_objects
            for i, code in zip(games.tolist(), codes.tolist(), strict=True):
                self._games[i].play(moves[code])

    def _restart(self, games: np.ndarray) -> None:
        """Put ``games`` at the episode's start (the reset options' position and moves)."""
        self.engine.reset(games)
        if self._games is not None:
            for i in games.tolist():
                self._games[i] = self._start_game()
        for code in self._start_codes:
            self.engine.push(games, np.full(len(games), code, dtype=np.int64))
        if self._games is not None:
            moves = [self.encoding.tables.move_objects[c] for c in self._start_codes]
            for i in games.tolist():
                for m in moves:
                    self._games[i].play(m)

    def _start_game(self) -> Game:
        return Game.from_position(self._start_position) if self._start_position is not None else Game()

    def _apply_options(self, options: dict[str, Any]) -> None:
        """Reset options: ``position`` (a position text) and ``moves`` (opening moves played from it)."""
        unknown = set(options) - {"position", "moves"}
        if unknown:
            raise ValueError(
                f"reset options the vector env does not take: {sorted(unknown)} (it takes position, moves)"
            )
        position = options.get("position")
        if position is not None and not isinstance(position, str):
            raise TypeError(f"options['position'] must be a position text, not {type(position).__name__}")
        moves = options.get("moves", ())
        start = Game.from_position(position) if position is not None else Game()  # PositionError names the field
        if position is not None and start.is_over():
            raise ValueError(f"options['position'] is a finished game ({start.outcome()}): there is nothing to play")
        if isinstance(moves, str):
            moves = moves.split()
        played = Game.from_position(start.position()) if position is not None else Game()
        for m in moves:
            played.play(m)  # IllegalMoveError (a ValueError) names the move and why
        if played.is_over():
            raise ValueError("options['moves'] end the game: there is nothing to play")
        self._start_position = start.position() if position is not None else None
        self._start_codes = [self.encoding.move_to_action(m) for m in played.history]
        if position is not None:
            if isinstance(self.engine, KernelBatchEngine):
                # The compiled engine starts games at the standard start only: a batch from
                # another position runs on the Python engine (same results, slower).
                self.engine = PythonBatchEngine(self.num_envs, self.encoding)
            assert isinstance(self.engine, PythonBatchEngine)
            self.engine.set_start(start.state)
        elif isinstance(self.engine, PythonBatchEngine):
            # Back at the standard start: the fastest engine again (the compiled one when built).
            self.engine = batch_engine(self.num_envs, self.encoding, self._kernel_option)

    def _margins(self, sides: np.ndarray) -> np.ndarray:
        """Each game's monolith margin (``sides``' count minus the other's)."""
        scores = self.engine.scores()
        rows = np.arange(self.num_envs)
        return scores[rows, sides] - scores[rows, 1 - sides]

    def _draw_sides(self, games: np.ndarray) -> None:
        if self.self_play:
            turn, _ = self.engine.status()
            self.sides[games] = turn[games]
            return
        if self.agent_side_option == "random":
            self.sides[games] = self.np_random.integers(2, size=len(games))
        else:
            self.sides[games] = 0 if self.agent_side_option == "south" else 1

    def _opponent_moves(self, games: np.ndarray) -> None:
        """A uniformly random legal move for the opponent in those of ``games`` where it is to move.

        Turns alternate (a pass is a move), so one move brings the agent back to move.
        """
        if not len(games) or self.self_play:
            return
        engine = self.engine
        if self.opponent != "random":
            self._player_moves(games)
            return
        both = getattr(engine, "to_move_and_masks", None)
        if both is not None:
            games, masks = both(games, 1 - self.sides[games])
        else:
            turn, outcome = engine.status()
            games = games[(outcome[games] == NO_OUTCOME) & (turn[games] != self.sides[games])]
            masks = engine.masks(games)
        if len(games):
            keys = self.np_random.random(masks.shape, dtype=np.float32) + 1.0  # > 0 on every legal move
            self._push(games, np.argmax(keys * masks, axis=1))

    def _player_moves(self, games: np.ndarray) -> None:
        """The spec player's move in those of ``games`` where the opponent is to move (one game at a time)."""
        assert self._games is not None
        turn, outcome = self.engine.status()
        games = games[(outcome[games] == NO_OUTCOME) & (turn[games] != self.sides[games])]
        codes = [self.encoding.move_to_action(self._players[i].choose_move(self._games[i])) for i in games.tolist()]
        if len(games):
            self._push(games, np.array(codes, dtype=np.int64))

    def _new_players(self) -> None:
        """One opponent per game, seeded from the batch's generator (as the single env does per episode)."""
        from jericho_game.ai import make_player

        seeds = self.np_random.integers(1 << 62, size=self.num_envs).tolist()
        self._players = [make_player(self.opponent, seed=s) for s in seeds]
        for player in self._players:
            # A level's time limit would make the batch depend on the machine's speed: its
            # simulation budget alone decides (as in the single env without opponent_clock).
            if getattr(player, "sims", None) is not None and getattr(player, "time", None) is not None:
                player.time = None

    def _observation(self, games: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The batch's observation (or that of ``games`` only, leaving the agent's masks alone)."""
        engine = self.engine
        which = self._all if games is None else games
        sides = self.sides[which]
        if isinstance(engine, KernelBatchEngine):  # the final form, written by C
            obs, masks = engine.views(
                which, sides, self.view, self._layout, self.obs_dtype, self.mask_dtype, self.num_threads
            )
        else:
            both = getattr(engine, "observe_and_mask", None)
            if both is not None:
                flat, masks = both(which, sides)
            else:
                flat, masks = engine.observe(which, sides), engine.masks(which)
            obs, masks = self.view.observations(flat, masks, sides)
            obs, masks = obs.astype(self.obs_dtype, copy=False), masks.astype(self.mask_dtype, copy=False)
        if games is None:
            self._masks = masks
        return {"observation": obs, "action_mask": masks}

    def _info(self, illegal: np.ndarray | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {"side": self.sides.copy(), "_side": np.ones(self.num_envs, dtype=bool)}
        if self.positions:
            assert self._games is not None
            info["position"] = np.array([g.position() for g in self._games], dtype=object)
            info["_position"] = np.ones(self.num_envs, dtype=bool)
        if illegal is not None and illegal.any():
            info["illegal_action"] = illegal
            info["_illegal_action"] = illegal.copy()
        return info

    # -- VectorEnv API --------------------------------------------------------------------------
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start every game (``seed``: one int for the batch's generator)."""
        if isinstance(seed, list):
            seed = seed[0]
        super().reset(seed=seed)
        if options:
            self._apply_options(options)
        self._games = [Game() for _ in range(self.num_envs)] if self._tracking() else None
        if self.opponent not in ("random", "self"):
            self._new_players()
        self._restart(self._all)
        self._draw_sides(self._all)
        self._opponent_moves(self._all)
        self._needs_reset[:] = False
        self._started = True
        return self._observation(), self._info()

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One move of the agent in every game, the opponent's replies, and auto-resets."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer) or acts.dtype == np.bool_:
            if acts.shape == (self.num_envs,) and acts.dtype == object:
                acts = np.array([as_action(a) for a in acts.tolist()], dtype=np.int64)
            else:
                raise TypeError(
                    f"actions must be an integer array of shape ({self.num_envs},), got {acts.dtype} {acts.shape}"
                )
        acts = acts.astype(np.int64)
        n_act = self.encoding.n_actions
        if ((acts < 0) | (acts >= n_act)).any():
            bad = int(acts[(acts < 0) | (acts >= n_act)][0])
            raise ValueError(f"action {bad} out of range: actions are 0..{n_act - 1}")
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        restart = np.flatnonzero(self._needs_reset)
        playing = np.flatnonzero(~self._needs_reset)
        legal = self._masks[playing, acts[playing]] == 1  # both in the agent's view
        if self.view.view == "canonical":
            acts = np.where(self.sides == 1, self.encoding.symmetry("half-turn").actions(acts), acts)
        self._step_sides = self.sides.copy()  # whose step it is (self-play changes sides below)
        illegal = np.zeros(self.num_envs, dtype=bool)
        illegal[playing[~legal]] = True
        playing = playing[legal]
        if self.shaping:
            before = self._margins(self.sides)
        self._push(playing, acts[playing])
        self._opponent_moves(playing)
        if len(restart):
            self._restart(restart)
            self._draw_sides(restart)
            self._opponent_moves(restart)
        turn, outcome = self.engine.status()
        over = outcome != NO_OUTCOME
        over[restart] = False
        won = over & (outcome == self.sides)
        lost = over & (outcome == 1 - self.sides)
        rewards[won] = 1.0
        rewards[lost] = -1.0
        if self.shaping:  # the single env's shaping: the margin's change over the agent's step (and the replies)
            moved = np.zeros(self.num_envs, dtype=bool)
            moved[playing] = True
            change = self._margins(self._step_sides) - before
            rewards[moved] += self.shaping * change[moved]
        rewards[illegal] = -1.0
        terminated[over | illegal] = True
        self._needs_reset = terminated.copy()
        if self.self_play:  # the reward was the mover's; the next observation is the side to move's
            going = ~terminated
            self.sides[going] = turn[going]
        final: tuple[np.ndarray, dict[str, np.ndarray], list[dict[str, Any]]] | None = None
        if self.autoreset_mode == AutoresetMode.SAME_STEP and terminated.any():
            # The finished games' last observations go into info; they start again at once.
            done = np.flatnonzero(terminated)
            last = self._observation(done)
            last["action_mask"][:] = 0
            last_info: list[dict[str, Any]] = [{"side": int(self.sides[i])} for i in done.tolist()]
            if self._games is not None and self.positions:
                for entry, i in zip(last_info, done.tolist(), strict=True):
                    entry["position"] = self._games[i].position()
            final = (done, last, last_info)
            self._restart(done)
            self._draw_sides(done)
            self._opponent_moves(done)
            self._needs_reset[:] = False
        obs = self._observation()
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            obs["action_mask"][terminated] = 0
            self._masks[terminated] = 0
        truncated = np.zeros(self.num_envs, dtype=bool)
        info = self._info(illegal)
        if final is not None:
            done, last, last_info = final
            final_obs = np.full(self.num_envs, None, dtype=object)
            final_info = np.full(self.num_envs, None, dtype=object)
            for k, i in enumerate(done.tolist()):
                final_obs[i] = {"observation": last["observation"][k], "action_mask": last["action_mask"][k]}
                final_info[i] = last_info[k]
            info["final_obs"], info["_final_obs"] = final_obs, terminated.copy()
            info["final_info"], info["_final_info"] = final_info, terminated.copy()
        return obs, rewards, terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the observation threads of ``num_threads``, if any."""
        close = getattr(self.engine, "close", None)
        if close is not None:
            close()


#: The observation dtypes of the vector env: float32 (the default), or one byte a value.
OBS_DTYPES = ("float32", "uint8", "bool")
#: The mask dtypes: int8 (the default: what Gymnasium's ``Discrete.sample(mask=...)`` takes) or bool.
MASK_DTYPES = ("int8", "bool")


def _dtype_option(name: str, value: Any, allowed: tuple[str, ...]) -> np.dtype[Any]:
    """``value`` (a name, a numpy dtype or type) as a dtype among ``allowed``; ``ValueError`` naming the option else."""
    try:
        dtype = np.dtype(value)
    except TypeError:
        dtype = None
    if dtype is None or dtype.name not in allowed:
        raise ValueError(f"bad {name} {value!r}: choose one of {', '.join(allowed)}")
    return dtype


def make_vec(num_envs: int = 64, **kwargs: Any) -> JerichoVectorEnv:
    """Gymnasium's ``vector_entry_point`` for ``Jericho-v1``."""
    return JerichoVectorEnv(num_envs=num_envs, **kwargs)
