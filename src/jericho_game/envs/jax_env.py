"""Jericho as a functional JAX environment in the style of `pgx` (the ``jax`` extra).

The whole rule book (RULES.md) as array operations, so that a batch of games runs under
``jax.jit`` and ``jax.vmap`` on CPU or an accelerator, and pgx / ``mctx`` code (AlphaZero,
Gumbel MuZero) runs on it unchanged::

    import jax
    from jericho_game.envs.jax_env import Jericho

    env = Jericho()
    init, step = jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))
    state = init(jax.random.split(jax.random.PRNGKey(0), 1024))
    state = step(state, actions)           # actions: int32 (1024,), indices into the mask

:class:`Jericho` subclasses ``pgx.core.Env`` and :class:`State` subclasses ``pgx.core.State``,
with pgx's meaning for every common field:

* ``current_player`` — the *player id* (0 or 1) to move, not the side: :meth:`Jericho.init`
  draws which player id plays South (as pgx's two-player games draw who starts); the side to
  move is ``state._turn`` (0 South, 1 North);
* ``rewards`` — float32 ``(2,)`` by player id: +1 / -1 on the step that ends the game with a
  win, 0 otherwise (a draw gives 0 / 0); an illegal action ends the game with -1 for its
  player and +1 for the other (pgx's rule);
* ``terminated`` (the game is over), ``truncated`` (never set: a game ends within 101 plies),
  ``_step_count``;
* ``legal_action_mask`` — bool ``(651,)``, the engine's numbering shared with every adapter
  (:mod:`jericho_game.envs.encoding`): action ``a < 650`` places piece ``a // 26`` (``(size -
  1) * 5 + colour``, colours R Y G B W) on cell ``a % 26`` (South's camp first), ``650`` is the
  pass, legal only when forced.  At a terminal state the mask is all true (pgx's convention,
  so that a policy normalised over it never divides by zero; the moves change nothing);
* ``observation`` — seen by the player to move.  ``Jericho(observation="planar")`` (the
  default) gives bool ``(4, 7, 192)``: the planes of :mod:`jericho_game.envs.planar`,
  channels last as pgx's board games (Go, Othello) and its AlphaZero network expect, so
  ``obs[..., k]`` is channel ``k`` of ``Planar.channels``.  ``observation="flat"`` gives
  bool ``(1239,)``, the vector of :meth:`jericho_game.envs.encoding.Encoding.observe`.

The rules' own fields are private (``_turn``, ``_code``, ``_height``, ``_key``, ``_size_free``,
``_colour_free``, ``_reserve``, ``_leader``, ``_score``, ``_last_cell``, ``_last_piece``,
``_last_below``, ``_passes``, ``_outcome``) and mean what they mean in
:class:`jericho_game.core.State` (same tower codes, same strength keys, ``_leader`` -1/0/1,
``_outcome`` -1 going on, 0 South won, 1 North won, 2 draw), with the core's int bit masks
(``_size_free[s]``, ``_colour_free[k]``: cells; ``_reserve[side]``: pieces).

How the rules become array operations: a placement updates one cell through a one-hot
``where`` (no scatter, which vectorises badly on CPU); tower strength is the core's integer
key, updated in O(1); the 13 alignments are settled again after every move from static
``(13, 26)`` tables of each camp's cells per alignment: champions are a masked ``max`` over
the keys, the leader a comparison, the score a count.  The legal mask is built as the C
kernel builds it, one int32 cell mask per piece (``size_free[size] & colour_free[colour]``,
cut by the reserve and, for the opponent's last piece, by the asymmetry rule's cells: those
aligned with its cell whose tower equals the tower under it), unpacked to 651 bools at the
end.  The seven-monolith rule compares the opponent's score before and after the mover's
turn, and two passes in a row end the game.

On CPU, XLA fuses every elementwise producer into each consumer, so a per-game value read by
the 651 mask elements or the 5,376 planes would be recomputed for each of them: the values
they read go through :func:`_keep` (a reduction, which XLA computes once), and ``step`` is
pgx's ``Env.step`` written field by field, mask and observation computed once at the end.

``python -m jericho_game.envs.jax_env --bench`` prints random-play steps per second (with
auto-reset and the observation; ``--baseline FILE`` and ``--anchor`` time another version of
this module and pgx's Othello in the same run, alternately); ``tests/envs/test_jax_env.py``
checks every ply of 2,000 random games against the C kernel.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from typing import Any

from jericho_game.extras import missing_extra

try:
    import jax
    import jax.numpy as jnp
    import numpy as np
    import pgx.core as pgx_core
    from pgx._src.struct import dataclass
except ImportError as exc:
    raise missing_extra("the JAX environment", "jax", exc) from exc

from jericho_game.board import standard_topology
from jericho_game.core import FULL_HEIGHT, N_PIECES, PIECE_COLOUR, PIECE_SIZE, SEVEN, TWO_OR_MORE, tables_for
from jericho_game.envs import ENV_VERSION

__all__ = ["Jericho", "State", "N_ACTIONS", "PASS_ACTION", "random_actions", "auto_reset", "bench"]

_T = tables_for(standard_topology())
_N = _T.n_cells  # 26
_A = _T.n_align  # 13
#: Actions: ``piece * 26 + cell``, then the pass (the engine's move codes).
N_ACTIONS: int = _T.pass_code + 1
PASS_ACTION: int = _T.pass_code
_LEVELS = FULL_HEIGHT

# -- static tables (numpy: they become constants of the compiled programs) ----------------
_SIZE = np.array(PIECE_SIZE, dtype=np.int32)
_COLOUR = np.array(PIECE_COLOUR, dtype=np.int32)
_CAMP = np.array(_T.cell_camp, dtype=np.int32)


def _incidence(rows: tuple[tuple[int, ...], ...]) -> np.ndarray:
    """``(alignments, cells)`` bool table: the alignment's cells (of one camp, or all)."""
    out = np.zeros((_A, _N), dtype=bool)
    for a, cells in enumerate(rows):
        out[a, list(cells)] = True
    return out


_ON_SOUTH = _incidence(_T.align_south)  # alignment a has South-camp cell c
_ON_NORTH = _incidence(_T.align_north)
# Bit mask of the cells sharing an alignment with each cell (itself excluded), then a 0 for "none".
_ALIGNED_BITS = np.array([sum(1 << o for o in others) for others in _T.aligned] + [0], dtype=np.int32)
_CELL_BITS = (1 << np.arange(_N)).astype(np.int32)
_ALL_CELLS = (1 << _N) - 1
_ALL_PIECES = (1 << N_PIECES) - 1
_INCIDENCE = _incidence(_T.align_cells)  # alignment a passes through cell c

# The planar grid (jericho_game.envs.planar): 4 rows (row 4 first) x 7 columns (a first).
_ROWS = sorted({int(n[1:]) for n in _T.cell_names}, reverse=True)
_COLS = sorted({n[0] for n in _T.cell_names})
_H, _W = len(_ROWS), len(_COLS)
_CELL_POS = np.array([_ROWS.index(int(n[1:])) * _W + _COLS.index(n[0]) for n in _T.cell_names])
_POS_CELL = np.full(_H * _W, _N, dtype=np.int32)  # grid position -> cell, _N on the padding
_POS_CELL[_CELL_POS] = np.arange(_N)


def _grid_runs() -> tuple[tuple[int, int], ...]:
    """The grid as runs of consecutive cells ``(start, stop)``, ``(-1, -1)`` for a padding position.

    Laying the per-cell rows out on the grid by static slices is much cheaper under
    ``vmap`` on CPU than a gather (measured: the planar observation took ~4 µs per position
    with a gather).
    """
    runs: list[list[int]] = []
    for cell in _POS_CELL.tolist():
        if cell == _N:
            runs.append([-1, -1])
        elif runs and runs[-1][0] >= 0 and runs[-1][1] == cell:
            runs[-1][1] += 1
        else:
            runs.append([cell, cell + 1])
    return tuple((r[0], r[1]) for r in runs)


_GRID_RUNS = _grid_runs()
_PER_CELL = _LEVELS * 10 + 5  # tower[l][k], own_camp, on_board, last_cell, led by observer / opponent
_CONSTANT = 2 * N_PIECES + 3 * _A + 2 * (_A + 1) + 2 + N_PIECES + 1 + 2
PLANAR_SHAPE: tuple[int, int, int] = (_H, _W, _PER_CELL + _CONSTANT)  # (4, 7, 192)
FLAT_SIZE: int = _N * _LEVELS * 10 + _N + 2 * N_PIECES + 3 * _A + 2 * (_A + 1) + 2 + N_PIECES + _N + 1 + 2  # 1239


@dataclass
class State(pgx_core.State):
    """One position (or, under ``jax.vmap``, a batch): pgx's fields, then the rules' own."""

    current_player: Any = jnp.int32(0)
    observation: Any = jnp.zeros(PLANAR_SHAPE, dtype=jnp.bool_)
    rewards: Any = jnp.float32([0.0, 0.0])
    terminated: Any = jnp.bool_(False)
    truncated: Any = jnp.bool_(False)
    legal_action_mask: Any = jnp.ones(N_ACTIONS, dtype=jnp.bool_)
    _step_count: Any = jnp.int32(0)
    _turn: Any = jnp.int32(0)
    _code: Any = jnp.zeros(_N, dtype=jnp.int32)
    _height: Any = jnp.zeros(_N, dtype=jnp.int32)
    _key: Any = jnp.zeros(_N, dtype=jnp.int32)
    _size_free: Any = jnp.full(5, _ALL_CELLS, dtype=jnp.int32)
    _colour_free: Any = jnp.full(5, _ALL_CELLS, dtype=jnp.int32)
    _reserve: Any = jnp.full(2, _ALL_PIECES, dtype=jnp.int32)
    _leader: Any = jnp.full(_A, -1, dtype=jnp.int32)
    _score: Any = jnp.zeros(2, dtype=jnp.int32)
    _last_cell: Any = jnp.int32(-1)
    _last_piece: Any = jnp.int32(-1)
    _last_below: Any = jnp.int32(0)
    _passes: Any = jnp.int32(0)
    _outcome: Any = jnp.int32(-1)

    @property
    def env_id(self) -> str:  # type: ignore[override]
        """pgx's environment id."""
        return "jericho"


def _keep(a: jax.Array) -> jax.Array:
    """``a``, computed once: a materialisation point for XLA:CPU.

    XLA:CPU fuses every elementwise producer into each of its consumers, so a per-game value
    read by the 651 mask elements or the 5,376 planes is recomputed for each of them, with
    the whole chain of the move behind it (measured: a step took 9 µs instead of 2).  A
    reduction is never fused into its consumers; this one (the OR of the value's odd and
    even bits) cannot be simplified away.  ``optimization_barrier`` does not help: XLA:CPU
    removes it before fusion.
    """
    if a.dtype == jnp.bool_:
        return _keep(a.astype(jnp.int32)) > 0
    halves = jnp.asarray([0x55555555, ~0x55555555], dtype=a.dtype)
    return jax.lax.reduce(a[..., None] & halves, jnp.zeros((), a.dtype), jax.lax.bitwise_or, (a.ndim,))


def _legal_mask(x: State) -> jax.Array:
    """The legal actions of a position (all false once the game is over)."""
    # Cell bit masks per piece, as in the C kernel: piece = size * 5 + colour.
    fits = jnp.repeat(x._size_free, 5) & jnp.tile(x._colour_free, 5)
    # Asymmetry rule: the opponent's last piece may not copy its tower on an aligned cell.
    aligned = jnp.asarray(_ALIGNED_BITS)[jnp.where(x._last_cell >= 0, x._last_cell, _N)]
    same = jnp.where(x._code == x._last_below, jnp.asarray(_CELL_BITS), 0).sum()
    forbidden = jnp.where(jnp.arange(N_PIECES) == x._last_piece, aligned & same, 0)
    reserve = jnp.where(x._turn == 0, x._reserve[0], x._reserve[1])
    playable = ((reserve >> jnp.arange(N_PIECES)) & 1) * (x._outcome < 0)
    fits = _keep(fits & ~forbidden & -playable)
    forced_pass = (x._outcome < 0) & (fits == 0).all()
    # Unpacked without a reshape of a concatenation (per-element index arithmetic, unvectorised).
    cells = ((fits[:, None] >> jnp.arange(_N)) & 1) > 0  # measured faster than an AND with the cells' bits
    return jnp.concatenate([cells.reshape(-1), forced_pass[None]])


def _settle(key: jax.Array) -> jax.Array:
    """Leaders of all alignments (-1/0/1) from the cells' strength keys (RULES.md §5)."""
    # A masked max over a static (13, 26) incidence table: cheaper under vmap on CPU than a gather.
    s = jnp.where(jnp.asarray(_ON_SOUTH), key[None, :], 0).max(axis=1)
    n = jnp.where(jnp.asarray(_ON_NORTH), key[None, :], 0).max(axis=1)
    return jnp.where((s > n) & (n > 0), 0, jnp.where((n > s) & (s > 0), 1, -1)).astype(jnp.int32)


def _play(x: State, action: jax.Array) -> State:
    """Play a legal action on a game going on (the core's ``State.push``)."""
    is_pass = action == PASS_ACTION
    p = jnp.where(is_pass, 0, action // _N)
    c = jnp.where(is_pass, 0, action % _N)
    turn = x._turn
    other = 1 - turn
    at = (jnp.arange(_N) == c) & ~is_pass  # the one cell that changes
    h = x._height[c]
    below = x._code[c]
    size = jnp.asarray(_SIZE)[p]
    colour = jnp.asarray(_COLOUR)[p]
    code = jnp.where(at, below | ((p + 1) << (5 * h)), x._code)
    height = x._height + at.astype(jnp.int32)
    new_key = ((size + 1) << 9) | ((x._key[c] & 0xFFF) >> 3) | jnp.where(h > 0, TWO_OR_MORE, 0)
    key = _keep(jnp.where(at, new_key, x._key))  # read by the 2 x 338 elements of the settlement
    full = h + 1 == FULL_HEIGHT
    kinds = jnp.arange(5)
    bit = jnp.where(is_pass, 0, jnp.left_shift(1, c))
    size_free = x._size_free & ~jnp.where((kinds == size) | full, bit, 0)
    colour_free = x._colour_free & ~jnp.where((kinds == colour) | full, bit, 0)
    reserve = x._reserve & ~jnp.where((jnp.arange(2) == turn) & ~is_pass, jnp.left_shift(1, p), 0)
    leader = _settle(key)
    score = jnp.stack([(leader == 0).sum(), (leader == 1).sum()]).astype(jnp.int32)
    passes = jnp.where(is_pass, x._passes + 1, 0)
    # Seven-monolith rule: the opponent wins if it held 7 before this turn and still does.
    seven = (x._score[other] >= SEVEN) & (score[other] >= SEVEN)
    by_count = jnp.where(score[0] > score[1], 0, jnp.where(score[1] > score[0], 1, 2))
    outcome = jnp.where(seven, other, jnp.where(passes >= 2, by_count, -1)).astype(jnp.int32)
    return x.replace(  # type: ignore[attr-defined, no-any-return]
        _turn=other,
        _code=code,
        _height=height,
        _key=key,
        _size_free=size_free,
        _colour_free=colour_free,
        _reserve=reserve,
        _leader=leader,
        _score=score,
        _last_cell=jnp.where(is_pass, -1, c).astype(jnp.int32),
        _last_piece=jnp.where(is_pass, x._last_piece, p).astype(jnp.int32),
        _last_below=jnp.where(is_pass, x._last_below, below).astype(jnp.int32),
        _passes=passes.astype(jnp.int32),
        _outcome=outcome,
    )


def _parts(x: State, me: jax.Array) -> dict[str, jax.Array]:
    """The pieces of the observation seen by side ``me`` (the encoding's segments, bool)."""
    them = 1 - me
    level = (x._code[:, None] >> (5 * jnp.arange(_LEVELS))[None, :]) & 31  # piece + 1, 0 empty
    piece = level - 1
    k = jnp.arange(5)
    sizes = (piece[..., None] // 5 == k) & (level[..., None] > 0)
    colours = (piece[..., None] % 5 == k) & (level[..., None] > 0)
    towers = jnp.concatenate([sizes, colours], axis=-1)  # (26, 4, 10)
    bits = jnp.where(me == 0, x._reserve, x._reserve[::-1])
    reserves = ((bits[:, None] >> jnp.arange(N_PIECES)) & 1) > 0
    who = jnp.where(x._leader < 0, 2, jnp.where(x._leader == me, 0, 1))
    leaders = who[:, None] == jnp.arange(3)
    mine, theirs = x._score[me], x._score[them]
    counts = jnp.arange(_A + 1)
    placed = x._last_cell >= 0
    return {
        "towers": towers,
        "own_camp": jnp.asarray(_CAMP) == me,
        "reserves": reserves,
        "leaders": leaders,
        "score": jnp.stack([counts == mine, counts == theirs]),
        "seven": jnp.stack([mine >= SEVEN, theirs >= SEVEN]),
        "last_piece": (jnp.arange(N_PIECES) == x._last_piece) & placed,
        "last_cell": jnp.arange(_N) == x._last_cell,
        "passed": (x._passes > 0)[None],
        "turn": jnp.stack([x._turn == me, me == 1]),
    }


_FLAT_ORDER = (
    "towers",
    "own_camp",
    "reserves",
    "leaders",
    "score",
    "seven",
    "last_piece",
    "last_cell",
    "passed",
    "turn",
)
_CONSTANT_ORDER = ("reserves", "leaders", "score", "seven", "last_piece", "passed", "turn")


def _flat(x: State, me: jax.Array) -> jax.Array:
    parts = _parts(x, me)
    return jnp.concatenate([parts[n].reshape(-1) for n in _FLAT_ORDER])


def _to_grid(values: jax.Array, fill: int | bool) -> jax.Array:
    """Per-cell values laid out on the 28 grid positions (``fill`` on the padding), by static slices."""
    pad = jnp.full((1,), fill, dtype=values.dtype)
    return jnp.concatenate([values[a:b] if a >= 0 else pad for a, b in _GRID_RUNS])


# The tower channels (level l = ch // 10, k = ch % 10): the bits of the levels' codes (piece + 1,
# 0 empty) that light channel ch, size k + 1 (k < 5) or colour k - 5: one shift and one AND a channel.
_TOWER_CH = np.arange(_LEVELS * 10)
_TOWER_SHIFT = (5 * (_TOWER_CH // 10)).astype(np.int32)
_TOWER_LIT = np.array(
    [
        sum(
            1 << (piece + 1)
            for piece in range(N_PIECES)
            if (PIECE_SIZE[piece] if k < 5 else PIECE_COLOUR[piece]) == k % 5
        )
        for k in _TOWER_CH % 10
    ],
    dtype=np.int32,
)
_ON_BOARD_GRID = np.zeros(_H * _W, dtype=bool)
_ON_BOARD_GRID[_CELL_POS] = True
_CAMP_GRID = np.full(_H * _W, -1, dtype=np.int32)
_CAMP_GRID[_CELL_POS] = _CAMP
_CELL_POS_EXT = np.append(_CELL_POS, -1).astype(np.int32)  # grid position of a cell, -1 for "none"


def _planar(x: State, me: jax.Array) -> jax.Array:
    """The planes, channels last: the 45 per-position channels beside the 147 constant ones.

    The towers' channels are one shift and one AND of a per-channel constant (the codes that
    light it); the 147 constant channels are computed once per position, not once per grid
    position (a ``where`` over the channel index evaluated every block for every element).
    """
    parts = _parts(x, me)
    level = (_to_grid(x._code, 0)[:, None] >> jnp.asarray(_TOWER_SHIFT)[None, :]) & 31
    tower = ((jnp.asarray(_TOWER_LIT)[None, :] >> level) & 1) > 0
    pos = jnp.arange(_H * _W)
    last = pos == jnp.asarray(_CELL_POS_EXT)[jnp.where(x._last_cell >= 0, x._last_cell, _N)]
    led_me = _to_grid((jnp.asarray(_INCIDENCE) & (x._leader == me)[:, None]).any(axis=0), False)
    led_them = _to_grid((jnp.asarray(_INCIDENCE) & (x._leader == 1 - me)[:, None]).any(axis=0), False)
    extra = jnp.stack([jnp.asarray(_CAMP_GRID) == me, jnp.asarray(_ON_BOARD_GRID), last, led_me, led_them], axis=1)
    constant = jnp.concatenate([parts[n].reshape(-1) for n in _CONSTANT_ORDER])
    # The constant block computed once (_keep); keeping the others too measured slower (XLA then
    # copies three materialised blocks into the result).
    constant = _keep(constant)
    planes = jnp.concatenate([tower, extra, jnp.broadcast_to(constant[None, :], (_H * _W, constant.shape[0]))], axis=1)
    return planes.reshape(PLANAR_SHAPE)


_RULE_FIELDS = (
    "_turn",
    "_code",
    "_height",
    "_key",
    "_size_free",
    "_colour_free",
    "_reserve",
    "_leader",
    "_score",
    "_last_cell",
    "_last_piece",
    "_last_below",
    "_passes",
    "_outcome",
)


def _rules_step(state: State, action: jax.Array) -> State:
    """``_play``, then pgx's fields: rewards by player id, termination, the next player id."""
    mover = state._turn
    x = _play(state, action)
    terminated = x._outcome >= 0
    # Rewards by side (South, North), then by player id: the mover is current_player.
    winner = x._outcome
    by_side = jnp.where(winner == 2, 0.0, jnp.where(jnp.arange(2) == winner, 1.0, -1.0))
    by_side = jnp.where(terminated, by_side, 0.0).astype(jnp.float32)
    south_player = jnp.where(mover == 0, state.current_player, 1 - state.current_player)
    rewards = jnp.where(south_player == 0, by_side, by_side[::-1])
    return x.replace(  # type: ignore[attr-defined, no-any-return]
        current_player=1 - state.current_player, rewards=rewards, terminated=terminated
    )


def _advance(state: State, action: jax.Array) -> State:
    """pgx's ``Env.step`` without the mask and the observation, as selects of the small fields.

    A finished game is left as it is with zero rewards; an action outside the legal mask
    ends the game, -1 for its player and +1 for the other (applied to the stepped state, as
    pgx does).
    """
    done = state.terminated | state.truncated
    # One-hot instead of a gather (which vectorises badly under vmap on CPU); out of range = illegal.
    illegal = ~(state.legal_action_mask & (jnp.arange(N_ACTIONS) == action)).any()
    played = _rules_step(state.replace(_step_count=state._step_count + 1), action)  # type: ignore[attr-defined]
    fields = {f: jnp.where(done, getattr(state, f), getattr(played, f)) for f in _RULE_FIELDS}
    fields["_step_count"] = jnp.where(done, state._step_count, played._step_count)
    fields["current_player"] = jnp.where(done, state.current_player, played.current_player)
    mover = state.current_player
    penalty = jnp.where(jnp.arange(2) == mover, -1.0, 1.0).astype(jnp.float32)
    rewards = jnp.where(done, 0.0, jnp.where(illegal, penalty, played.rewards)).astype(jnp.float32)
    terminated = done & state.terminated | ~done & (illegal | played.terminated)
    return state.replace(rewards=rewards, terminated=terminated, **fields)  # type: ignore[attr-defined, no-any-return]


class Jericho(pgx_core.Env):
    """Jericho as a pgx environment (see the module docstring for every field)."""

    def __init__(self, observation: str = "planar") -> None:
        super().__init__()
        if observation not in ("planar", "flat"):
            raise ValueError(f"observation must be 'planar' or 'flat', not {observation!r}")
        self.observation_kind = observation

    def _init(self, key: jax.Array) -> State:
        # pgx's two-player games draw which player id starts; here, which one plays South.
        current_player = jnp.int32(jax.random.bernoulli(key))
        x = State(current_player=current_player)  # type: ignore[call-arg]
        return x.replace(legal_action_mask=_legal_mask(x))  # type: ignore[attr-defined, no-any-return]

    def _step(self, state: pgx_core.State, action: jax.Array, key: jax.Array | None) -> State:
        del key
        assert isinstance(state, State)
        x = _rules_step(state, action)
        return x.replace(legal_action_mask=_legal_mask(x))  # type: ignore[attr-defined, no-any-return]

    def step(self, state: pgx_core.State, action: jax.Array, key: jax.Array | None = None) -> State:
        """pgx's ``Env.step`` (finished games, illegal actions, the all-true terminal mask), field by field.

        Same results as the base class, whose three ``lax.cond`` become selects of the whole
        state under ``vmap``; here only the small rules fields are selected and the mask and the
        observation are computed once, on the final state.
        """
        assert isinstance(state, State)
        return self._finish(_advance(state, action))

    def _finish(self, x: State) -> State:
        """The legal mask (all true once over, pgx's convention) and the observation of ``x``."""
        # Every field the mask and the observation read, computed once (see _keep).
        x = x.replace(**{f: _keep(getattr(x, f)) for f in (*_RULE_FIELDS, "current_player", "terminated")})  # type: ignore[attr-defined]
        mask = _legal_mask(x) | x.terminated
        x = x.replace(legal_action_mask=mask)  # type: ignore[attr-defined]
        return x.replace(observation=jax.lax.stop_gradient(self._observe(x, x.current_player)))  # type: ignore[attr-defined, no-any-return]

    def _observe(self, state: pgx_core.State, player_id: jax.Array) -> jax.Array:
        assert isinstance(state, State)
        me = jnp.where(player_id == state.current_player, state._turn, 1 - state._turn)
        if self.observation_kind == "flat":
            return _flat(state, me)
        return _planar(state, me)

    @property
    def id(self) -> str:  # type: ignore[override]
        """pgx's environment id."""
        return "jericho"

    @property
    def version(self) -> str:
        """Bumped when the behaviour changes (pgx's convention): the environment's one version
        (``jericho_game.envs.ENV_VERSION``; v0 was this env before it was versioned)."""
        return f"v{ENV_VERSION}"

    @property
    def num_players(self) -> int:
        """Two players."""
        return 2


def random_actions(key: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
    """Uniformly random legal actions for masks of shape ``(..., 651)``, one random number per game.

    The ``k``-th legal action for a uniform ``k``, found in two levels (which group of 26
    actions, then which action in it): ``jax.random.categorical`` over 651 logits draws 651
    numbers per game, and a cumulative sum over 651 actions is a slow ``reduce-window`` on
    CPU (measured: ~2 µs per game, more than a whole step without it).
    """
    lead = legal_action_mask.shape[:-1]
    pad = jnp.zeros(lead + (_N * _N - N_ACTIONS,), dtype=jnp.int32)
    m = jnp.concatenate([legal_action_mask.astype(jnp.int32), pad], axis=-1).reshape(lead + (_N, _N))
    per_row = m.sum(axis=-1)
    upto = jnp.cumsum(per_row, axis=-1)
    total = upto[..., -1]
    u = jax.random.uniform(key, total.shape)
    k = jnp.minimum((u * total).astype(jnp.int32), total - 1)
    row = jnp.argmax(upto > k[..., None], axis=-1)
    k_in_row = k - jnp.take_along_axis(upto - per_row, row[..., None], axis=-1)[..., 0]
    cells = jnp.take_along_axis(m, row[..., None, None], axis=-2)[..., 0, :]
    cell = jnp.argmax(jnp.cumsum(cells, axis=-1) > k_in_row[..., None], axis=-1)
    return (row * _N + cell).astype(jnp.int32)


def auto_reset(env: Jericho) -> Any:
    """``step(state, action, coin)`` that starts a fresh game where one ends (pgx.experimental.auto_reset).

    A start position differs from another only by which player id plays South, so the fresh
    state is one precomputed start whose South is player ``coin`` (0 or 1, as ``env.init``
    would draw it), not a call of ``env.init`` and its observation at every step; draw the
    coins of a batch with one ``jax.random.bernoulli(key, shape=(B,))`` (per-game keys cost
    more than the step itself on CPU).  The step that ends a game keeps its rewards, as in pgx.
    """
    start = env.init(jax.random.PRNGKey(0))
    fresh = {f: np.asarray(getattr(start, f)) for f in _RULE_FIELDS}

    def step(state: State, action: jax.Array, coin: jax.Array) -> State:
        # Step the rules, start afresh where the game ended, then compute the mask and the
        # observation once (selecting whole stepped states with their observations was half
        # of the step's time).
        x = _advance(state, action)
        done = x.terminated | x.truncated
        fields = {f: jnp.where(done, fresh[f], getattr(x, f)) for f in _RULE_FIELDS}
        x = x.replace(  # type: ignore[attr-defined]
            current_player=jnp.where(done, jnp.asarray(coin, dtype=jnp.int32), x.current_player),
            terminated=jnp.zeros_like(x.terminated),
            truncated=jnp.zeros_like(x.truncated),
            _step_count=jnp.where(done, 0, x._step_count),
            **fields,
        )
        return env._finish(x)

    return step


def _timed_play(batch: int, steps: int, init: Any, step: Any) -> tuple[Any, Any]:
    """Compile ``steps`` jitted steps of a batch (``step(state, key) -> state``); return the timer.

    The timer runs the compiled program once more and returns ``(steps/s, steps per CPU
    second)``: the second divides by this process's CPU time (all its threads), which is what a
    shared, loaded machine can still measure fairly.
    """

    @jax.jit
    def run(state: Any, key: jax.Array) -> tuple[Any, jax.Array]:
        def body(carry: tuple[Any, jax.Array], _: None) -> tuple[tuple[Any, jax.Array], None]:
            s, k = carry
            k, k1 = jax.random.split(k)
            return (step(s, k1), k), None

        return jax.lax.scan(body, (state, key), None, length=steps)[0]  # type: ignore[no-any-return]

    box = [jax.jit(jax.vmap(init))(jax.random.split(jax.random.PRNGKey(0), batch)), jax.random.PRNGKey(1)]
    jax.block_until_ready(box[0])
    box[0], box[1] = run(box[0], box[1])  # compile
    jax.block_until_ready(box[0])

    def timer() -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        box[0], box[1] = run(box[0], box[1])
        jax.block_until_ready(box[0])
        return batch * steps / (time.perf_counter() - start), batch * steps / max(time.process_time() - cpu, 1e-9)

    return timer, run


def _jericho_timer(module: Any, batch: int, steps: int, observation: str) -> Any:
    """Random play with auto-reset and the observation on ``module``'s environment (this one or a baseline)."""
    env = module.Jericho(observation=observation)
    stepper = jax.vmap(module.auto_reset(env))

    def step(s: Any, key: jax.Array) -> Any:
        k1, k2 = jax.random.split(key)
        return stepper(s, module.random_actions(k1, s.legal_action_mask), jax.random.bernoulli(k2, shape=(batch,)))

    return _timed_play(batch, steps, env.init, step)[0]


#: pgx games ``--anchor`` times beside this env: Othello, and games of a similar action space (go_9x9: 82
#: actions, chess: 4,672; this env: 651).  ``--anchor-games`` picks others (go_19x19 ...).
ANCHOR_GAMES = ("othello", "go_9x9", "chess")


def one_draw_actions(key: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
    """Uniformly random legal actions for masks ``(B, A)`` of any game: one random number per game and a
    cumulative sum over the mask (the ``k``-th legal action), where pgx's ``act_randomly`` draws ``A`` Gumbel
    numbers per game.  :func:`random_actions` is the same idea in two levels for this game's 651 actions."""
    upto = jnp.cumsum(legal_action_mask.astype(jnp.int32), axis=-1)
    total = upto[..., -1]
    u = jax.random.uniform(key, total.shape)
    k = jnp.minimum((u * total).astype(jnp.int32), total - 1)
    return jnp.argmax(upto > k[..., None], axis=-1).astype(jnp.int32)


def _pgx_idiom_timer(env: Any, batch: int, steps: int, choose: Any = None) -> Any:
    """Random play on any ``pgx.core.Env`` (pgx's games or this one) with pgx's own idioms: ``auto_reset(env.step,
    env.init)`` (a key per game) and ``act_randomly`` (or ``choose(key, masks)``)."""
    from pgx.experimental import act_randomly
    from pgx.experimental import auto_reset as pgx_auto_reset

    pick = act_randomly if choose is None else choose
    stepper = jax.vmap(pgx_auto_reset(env.step, env.init))

    def step(s: Any, key: jax.Array) -> Any:
        k1, k2 = jax.random.split(key)
        return stepper(s, pick(k1, s.legal_action_mask), jax.random.split(k2, batch))

    return _timed_play(batch, steps, env.init, step)[0]


def _anchor_timers(games: tuple[str, ...], kinds: tuple[str, ...], batch: int, steps: int) -> list[tuple[str, Any]]:
    """Every env timed with the same idioms: pgx's ``auto_reset`` and ``act_randomly`` for all (this env
    included), then each env's fastest path (this env: its own ``auto_reset`` and ``random_actions``; a pgx
    game: pgx's ``auto_reset`` with :func:`one_draw_actions`, the same one-number choice)."""
    import pgx

    timers: list[tuple[str, Any]] = []
    for kind in kinds:
        env = Jericho(observation=kind)
        timers.append((f"jericho ({kind}, 651 actions), pgx idioms", _pgx_idiom_timer(env, batch, steps)))
    for game in games:
        env = pgx.make(game)  # type: ignore[arg-type]
        label = f"pgx {game} ({env.num_actions} actions)"
        timers.append((f"{label}, pgx idioms", _pgx_idiom_timer(env, batch, steps)))
        timers.append((f"{label}, fastest path", _pgx_idiom_timer(env, batch, steps, one_draw_actions)))
    return timers


def bench(batch: int = 1024, steps: int = 200, observation: str = "planar", repeat: int = 3) -> tuple[float, float]:
    """Jitted random play with auto-reset and the observation: the best ``(steps/s, steps per CPU second)``.

    The best of ``repeat`` timed runs of ``steps`` batched steps (compilation excluded).
    """
    timer = _jericho_timer(sys.modules[__name__], batch, steps, observation)
    runs = [timer() for _ in range(repeat)]
    return max(r[0] for r in runs), max(r[1] for r in runs)


def _load_baseline(path: str) -> Any:
    """Another version of this module, from a file (``git show main:src/.../jax_env.py > old.py``)."""
    spec = importlib.util.spec_from_file_location("jax_env_baseline", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--baseline: cannot load {path!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # the dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> None:
    """``python -m jericho_game.envs.jax_env --bench``: print the environment's speed."""
    parser = argparse.ArgumentParser(prog="python -m jericho_game.envs.jax_env", description=__doc__.splitlines()[0])
    parser.add_argument("--bench", action="store_true", help="print random-play steps/s (auto-reset, observation)")
    parser.add_argument("--batch", type=int, default=1024, help="games stepped at once (default 1024)")
    parser.add_argument("--steps", type=int, default=200, help="steps per timed run (default 200)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each, alternated; the best is kept")
    parser.add_argument("--observation", choices=("planar", "flat", "both"), default="both")
    parser.add_argument(
        "--baseline", metavar="FILE", help="another version of this module to time in the same run, alternated"
    )
    parser.add_argument(
        "--anchor",
        action="store_true",
        help="also time pgx's games (--anchor-games) and this env with pgx's idioms (auto_reset, act_randomly) and "
        "with each env's fastest path, alternated",
    )
    parser.add_argument(
        "--anchor-games",
        default=",".join(ANCHOR_GAMES),
        help=f"pgx games --anchor times, comma-separated (default {','.join(ANCHOR_GAMES)})",
    )
    args = parser.parse_args(argv)
    if not args.bench:
        parser.print_help()
        return
    if args.batch < 1 or args.steps < 1 or args.repeat < 1:
        parser.error("--batch, --steps and --repeat must be at least 1")
    kinds = ("planar", "flat") if args.observation == "both" else (args.observation,)
    games = tuple(g for g in args.anchor_games.split(",") if g)
    if args.anchor:
        import pgx

        unknown = [g for g in games if g not in pgx.available_envs()]
        if unknown:
            parser.error(f"--anchor-games: not pgx games: {', '.join(unknown)}")
    device = jax.devices()[0]
    timers: list[tuple[str, Any]] = []
    baseline = _load_baseline(args.baseline) if args.baseline else None
    for kind in kinds:
        name = f"jericho ({kind}, 651 actions), fastest path" if args.anchor else f"jax env ({kind} observation)"
        timers.append((name, _jericho_timer(sys.modules[__name__], args.batch, args.steps, kind)))
        if baseline is not None:
            timers.append((f"baseline ({kind} observation)", _jericho_timer(baseline, args.batch, args.steps, kind)))
    if args.anchor:
        timers += _anchor_timers(games, kinds, args.batch, args.steps)
    load = os.getloadavg()
    best = {name: (0.0, 0.0) for name, _ in timers}
    for _ in range(args.repeat):
        for name, timer in timers:  # alternated, so that a change of load hits every one alike
            rate, per_cpu = timer()
            best[name] = (max(best[name][0], rate), max(best[name][1], per_cpu))
    for name, (rate, per_cpu) in best.items():
        print(
            f"{name}, B={args.batch}, jax {jax.__version__} on {device.platform}: "
            f"{per_cpu:,.0f} steps per CPU second, {rate:,.0f} steps/s",
            flush=True,
        )
    if baseline is not None or args.anchor:
        print(f"load average {load[0]:.1f} before, {os.getloadavg()[0]:.1f} after (1 minute)", flush=True)


if __name__ == "__main__":
    main()
