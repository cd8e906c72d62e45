"""Tensor encoding of Jericho for learning code: actions, legal-action masks, observations.

Everything is derived from the engine's integer kernel (:mod:`jericho_game.core`), so the
indices below are the engine's own:

**Actions** — a fixed space of ``n_pieces * n_cells + 1`` integers (651 on the standard
board): action ``a < 650`` places piece ``a // 26`` on cell ``a % 26`` (the engine's move
code, see :class:`jericho_game.core.Tables`: pieces ``(size - 1) * 5 + colour`` with colours
R Y G B W; cells in :attr:`Tables.cell_names` order, South's camp first), and action
``650`` (:attr:`Encoding.pass_action`) is the pass.

**Legal-action mask** — ``np.int8`` array of that length, 1 where the action is legal now
(exactly ``[pass]`` when passing is forced, all zeros once the game is over).

**Observation** — a flat ``np.float32`` vector of 0/1 values, seen by one side (the
*observer*, by default the side to move).  Sides are relative (*own* / *opponent*); the
board is **not** rotated: cell indices stay the engine's, the same as in the action
space, so "action ``a`` puts a piece on cell ``a % 26``" and "observation planes of cell
``c``" refer to the same cell whoever observes.  A plane tells which cells are the
observer's camp and a flag tells whether the observer is North.  Learning code that
wants a canonical view (own camp always first) or data augmentation uses
:meth:`Encoding.symmetry` (``"half-turn"``: rotate the board and swap the sides;
``"mirror"``: left-right).  Segments, in order (see :attr:`Encoding.segments`):

====================  ===================  ===============================================
name                  shape (standard)     meaning
====================  ===================  ===============================================
``towers``            (26, 4, 10)          cell, level (0 = bottom), one-hot size 1-5 in
                                           [0:5] and colour R Y G B W in [5:10]; all
                                           zero above the tower's top
``own_camp``          (26,)                1 on the observer's camp
``reserves``          (2, 25)              [0] the observer's reserve, [1] the opponent's,
                                           by piece index
``leaders``           (13, 3)              alignment (engine order): [observer leads,
                                           opponent leads, nobody]
``score``             (2, 14)              one-hot monolith count 0-13: [0] observer,
                                           [1] opponent
``seven``             (2,)                 [observer holds 7+, opponent holds 7+] (a
                                           pending seven-monolith threat)
``last_piece``        (25,)                one-hot piece of the placement just made (all
                                           zero at the start or after a pass); with
                                           ``last_cell`` it is what the asymmetry rule
                                           looks back at
``last_cell``         (26,)                one-hot cell of that placement
``passed``            (1,)                 1 when the previous turn was a pass (a second
                                           pass ends the game)
``turn``              (2,)                 [observer is to move, observer is North]
====================  ===================  ===============================================

Total 1239 values on the standard board.  numpy is needed here (the ``rl`` extra); the
engine itself never imports this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from jericho_game.extras import missing_extra

try:
    import numpy as np
except ImportError as exc:
    raise missing_extra("the tensor encoding", "rl", exc) from exc

from jericho_game.board import Topology, standard_topology
from jericho_game.core import N_PIECES, State, Tables, tables_for
from jericho_game.game import Game
from jericho_game.moves import Move, parse_move
from jericho_game.pieces import Side

__all__ = [
    "Encoding",
    "Symmetry",
    "SYMMETRIES",
    "default_encoding",
    "N_ACTIONS",
    "PASS_ACTION",
    "OBSERVATION_SIZE",
    "as_action",
    "ActionTypeError",
    "action_to_move",
    "move_to_action",
    "legal_action_mask",
    "legal_actions",
    "observe",
]

_LEVELS = 4
_LEVEL_WIDTH = 10  # 5 sizes + 5 colours


def _state_of(x: Game | State) -> State:
    if isinstance(x, Game):
        return x.state
    if isinstance(x, State):
        return x
    raise TypeError(f"expected a jericho_game.Game or jericho_game.core.State, not {type(x).__name__}")


def _side_number(side: Side | str | int | None, default: int) -> int:
    if side is None:
        return default
    if isinstance(side, bool):
        raise ValueError(f"bad side {side!r}: give 'south', 'north', 0 or 1")
    if isinstance(side, int | np.integer):
        if int(side) in (0, 1):
            return int(side)
        raise ValueError(f"bad side {side!r}: give 'south', 'north', 0 or 1")
    try:
        return Side(str(side).lower()).number
    except ValueError:
        raise ValueError(f"bad side {side!r}: give 'south', 'north', 0 or 1") from None


class ActionTypeError(TypeError, ValueError):
    """An action that is not an integer.

    A ``TypeError``, and a ``ValueError`` too, so that code catching bad actions as
    ``ValueError`` (as before integers were enforced) still catches it.
    """


def as_action(action: object) -> int:
    """``action`` as a Python ``int``, if it is an integer: ``int``, a numpy integer, or a
    0-d numpy integer array (what ``Discrete.sample()`` and policies give).

    Anything else raises :class:`ActionTypeError` (a ``TypeError``) naming it — a ``bool`` (``True`` is not action 1),
    a float (``3.5`` is not action 3, nor is ``3.0``), a string (``"3"``).  The range is
    not checked here (see :meth:`Encoding.action_to_move`).
    """
    if isinstance(action, bool | np.bool_):
        raise ActionTypeError(f"an action is an integer, not a bool: {action!r}")
    if isinstance(action, int | np.integer):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        return int(action)
    shown = repr(action)
    if len(shown) > 60:
        shown = shown[:60] + "..."
    raise ActionTypeError(f"an action is an integer (int or numpy integer), not {type(action).__name__}: {shown}")


@dataclass(frozen=True)
class Symmetry:
    """A symmetry of the board, applied to actions, masks and observations.

    ``cells[c]`` is the image of cell ``c``; ``alignments[a]`` the image of alignment ``a``;
    ``swap_sides`` tells whether South and North exchange roles (the half turn).  Applying
    it to the encoding of a position from one observer's point of view gives the
    encoding of the transformed position from the corresponding observer's point of view.
    """

    name: str
    cells: np.ndarray
    alignments: np.ndarray
    swap_sides: bool
    _encoding: Encoding

    def action(self, action: int) -> int:
        """The image of an action index."""
        e = self._encoding
        a = as_action(action)
        if a == e.pass_action:
            return a
        if not 0 <= a < e.pass_action:
            raise ValueError(f"action {action!r} out of range 0..{e.pass_action}")
        p, c = divmod(a, e.n_cells)
        return p * e.n_cells + int(self.cells[c])

    def mask(self, mask: np.ndarray) -> np.ndarray:
        """The image of a legal-action mask (or of any per-action vector)."""
        e = self._encoding
        out = np.empty_like(mask)
        body = np.asarray(mask)[: e.pass_action].reshape(N_PIECES, e.n_cells)
        view = out[: e.pass_action].reshape(N_PIECES, e.n_cells)
        view[:, self.cells] = body
        out[e.pass_action] = mask[e.pass_action]
        return out

    # -- batches: any leading shape, one gather each --------------------------------------
    @cached_property
    def _action_source(self) -> np.ndarray:
        e = self._encoding
        image = np.array([self.action(a) for a in range(e.n_actions)], dtype=np.int64)
        source = np.empty_like(image)
        source[image] = np.arange(e.n_actions)
        return source

    @cached_property
    def _action_image(self) -> np.ndarray:
        return np.array([self.action(a) for a in range(self._encoding.n_actions)], dtype=np.int64)

    @cached_property
    def _observation_source(self) -> np.ndarray:
        e = self._encoding
        source = np.arange(e.observation_size, dtype=np.int64)
        for name, (off, shape) in e.segments.items():
            perm = {"towers": self.cells, "own_camp": self.cells, "last_cell": self.cells, "leaders": self.alignments}
            if name not in perm:
                continue
            block = (np.arange(int(np.prod(shape))) + off).reshape(shape)
            moved = np.empty_like(block)
            moved[perm[name]] = block
            source[off : off + block.size] = moved.reshape(-1)
        return source

    def actions(self, actions: np.ndarray) -> np.ndarray:
        """The images of an array of action indices (any shape)."""
        return self._action_image[np.asarray(actions)]

    def masks(self, masks: np.ndarray) -> np.ndarray:
        """The images of masks, or of any per-action arrays such as policies: shape ``(..., n_actions)``."""
        return np.asarray(masks)[..., self._action_source]

    def observations(self, obs: np.ndarray) -> np.ndarray:
        """The images of flat observations, shape ``(..., observation_size)`` (a batch at once)."""
        out = np.asarray(obs)[..., self._observation_source]
        if self.swap_sides:
            north = self._encoding.segments["turn"][0] + 1
            out[..., north] = 1 - out[..., north]
        return out

    def observation(self, obs: np.ndarray) -> np.ndarray:
        """The image of an observation vector."""
        e = self._encoding
        src = e.split(np.asarray(obs))
        out = np.zeros_like(obs)
        dst = e.split(out)
        for name, arr in src.items():
            target = dst[name]
            if name in ("towers", "own_camp", "last_cell"):
                target[self.cells] = arr
            elif name == "leaders":
                target[self.alignments] = arr
            else:
                target[...] = arr
        if self.swap_sides:
            dst["turn"][1] = 1.0 - src["turn"][1]
        return out


class Encoding:
    """Action space, masks and observations for one board (the standard one by default)."""

    def __init__(self, topology: Topology | None = None) -> None:
        self.tables: Tables = tables_for(topology or standard_topology())
        t = self.tables
        self.n_cells: int = t.n_cells
        self.n_alignments: int = t.n_align
        self.pass_action: int = t.pass_code
        self.n_actions: int = t.pass_code + 1
        shapes: list[tuple[str, tuple[int, ...]]] = [
            ("towers", (t.n_cells, _LEVELS, _LEVEL_WIDTH)),
            ("own_camp", (t.n_cells,)),
            ("reserves", (2, N_PIECES)),
            ("leaders", (t.n_align, 3)),
            ("score", (2, t.n_align + 1)),
            ("seven", (2,)),
            ("last_piece", (N_PIECES,)),
            ("last_cell", (t.n_cells,)),
            ("passed", (1,)),
            ("turn", (2,)),
        ]
        self.segments: dict[str, tuple[int, tuple[int, ...]]] = {}
        offset = 0
        for name, shape in shapes:
            self.segments[name] = (offset, shape)
            offset += int(np.prod(shape))
        self.observation_size: int = offset
        self._off = {name: off for name, (off, _) in self.segments.items()}
        self._camp = np.array(t.cell_camp, dtype=np.int64)
        self._symmetries: dict[str, Symmetry] = {}

    def _state(self, game: Game | State) -> State:
        s = _state_of(game)
        if s.tables is not self.tables:
            raise ValueError(
                f"this game is played on the board {s.tables.topology.name!r}, "
                f"the encoding is for {self.tables.topology.name!r}: use Encoding(topology)"
            )
        return s

    # -- actions -------------------------------------------------------------------------
    def action_to_move(self, action: int) -> Move:
        """The :class:`Move` of an action index.

        Raises ``TypeError`` for a non-integer (see :func:`as_action`) and ``ValueError``
        when out of range.
        """
        a = as_action(action)
        if not 0 <= a < self.n_actions:
            raise ValueError(f"action {action!r} out of range: actions are 0..{self.n_actions - 1}")
        return self.tables.move_objects[a]

    def move_to_action(self, move: Move | str) -> int:
        """The action index of a :class:`Move` or move notation (``"5R@d2"``, ``"pass"``).

        Raises ``ValueError`` naming a malformed move or an unknown cell (legality is not
        checked: see :meth:`legal_mask`).
        """
        if isinstance(move, str):
            try:
                move = parse_move(move)
            except Exception as exc:  # IllegalMoveError: malformed notation
                raise ValueError(str(exc)) from None
        if not isinstance(move, Move):
            raise ValueError(f"not a move: {move!r}")
        if move.piece is None:
            return self.pass_action
        code = self.tables.move_code.get((move.piece.index, move.cell or ""))
        if code is None:
            raise ValueError(f"unknown cell {move.cell!r} in {move}: cells are {' '.join(self.tables.cell_names)}")
        return code

    def legal_actions(self, game: Game | State) -> list[int]:
        """The legal action indices, ascending."""
        return sorted(self._state(game).legal_codes())

    def legal_mask(self, game: Game | State, out: np.ndarray | None = None) -> np.ndarray:
        """``np.int8`` mask of the legal actions (all zeros once the game is over)."""
        mask = np.zeros(self.n_actions, dtype=np.int8) if out is None else out
        if out is not None:
            mask.fill(0)
        codes = self._state(game).legal_codes()
        if codes:
            mask[codes] = 1
        return mask

    # -- observations -----------------------------------------------------------------
    def observe(
        self, game: Game | State, side: Side | str | int | None = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        """The observation vector of ``game`` as seen by ``side`` (default: the side to move)."""
        s = self._state(game)
        me = _side_number(side, s.turn)
        them = 1 - me
        obs = np.zeros(self.observation_size, dtype=np.float32) if out is None else out
        if out is not None:
            obs.fill(0.0)
        off = self._off
        n = self.n_cells
        idx: list[int] = []
        add = idx.append
        # towers
        base = off["towers"]
        code = s.code
        for c in range(n):
            x = code[c]
            level = 0
            while x:
                p = (x & 31) - 1
                cell_level = base + (c * _LEVELS + level) * _LEVEL_WIDTH
                add(cell_level + p // 5)
                add(cell_level + 5 + p % 5)
                x >>= 5
                level += 1
        # own camp
        base = off["own_camp"]
        camp = self.tables.cell_camp
        for c in range(n):
            if camp[c] == me:
                add(base + c)
        # reserves
        base = off["reserves"]
        for k, side_no in enumerate((me, them)):
            r = s.reserve[side_no]
            while r:
                low = r & -r
                add(base + k * N_PIECES + low.bit_length() - 1)
                r ^= low
        # leaders
        base = off["leaders"]
        for a, who in enumerate(s.leader):
            add(base + a * 3 + (2 if who < 0 else 0 if who == me else 1))
        # score and seven
        base = off["score"]
        width = self.n_alignments + 1
        add(base + s.score[me])
        add(base + width + s.score[them])
        base = off["seven"]
        if s.score[me] >= 7:
            add(base)
        if s.score[them] >= 7:
            add(base + 1)
        # last placement and pass
        if s.last_cell >= 0:
            add(off["last_piece"] + s.last_piece)
            add(off["last_cell"] + s.last_cell)
        if s.passes:
            add(off["passed"])
        base = off["turn"]
        if s.turn == me:
            add(base)
        if me == 1:
            add(base + 1)
        obs[idx] = 1.0
        return obs

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named, shaped views of an observation vector (no copy)."""
        if obs.shape[-1] != self.observation_size:
            raise ValueError(f"observation has {obs.shape[-1]} values, expected {self.observation_size}")
        return {
            name: obs[..., off : off + int(np.prod(shape))].reshape(obs.shape[:-1] + shape)
            for name, (off, shape) in self.segments.items()
        }

    # -- canonical view -------------------------------------------------------------------
    def is_north_observer(self, obs: np.ndarray) -> np.ndarray:
        """Whether each observation (``(..., observation_size)``) is seen by North."""
        return np.asarray(obs)[..., self.segments["turn"][0] + 1] > 0.5

    def canonical(self, obs: np.ndarray, masks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """The board as seen by the observer: North's observations turned by a half turn.

        In the canonical view every observer is South (own camp on rows 1-2, ``turn[1]``
        0), so one network serves both sides without learning the board twice.  ``masks``
        (or policies) are turned with their observations.  Works on batches; actions
        chosen in the canonical view map back with :meth:`from_canonical_actions`.
        """
        obs = np.asarray(obs)
        north = self.is_north_observer(obs)
        ht = self.symmetry("half-turn")
        out = np.where(north[..., None], ht.observations(obs), obs)
        if masks is None:
            return out, None
        return out, np.where(north[..., None], ht.masks(masks), np.asarray(masks))

    def from_canonical_actions(self, actions: np.ndarray | int, north: np.ndarray | bool) -> np.ndarray:
        """The real actions of ``actions`` chosen in the canonical view by (North) observers."""
        a = np.asarray(actions)
        return np.where(north, self.symmetry("half-turn").actions(a), a)

    # -- symmetries ---------------------------------------------------------------------
    def symmetry(self, name: str) -> Symmetry:
        """``"mirror"`` (left-right, sides kept), ``"half-turn"`` (rotation, sides swapped),
        ``"flip"`` (the two composed: top-bottom, sides swapped) or ``"identity"``.

        Raises ``ValueError`` for another name or when the board lacks that symmetry.
        """
        if name in self._symmetries:
            return self._symmetries[name]
        if name == "mirror":
            fx, fy, swap = -1.0, 1.0, False
        elif name == "half-turn":
            fx, fy, swap = -1.0, -1.0, True
        elif name == "flip":  # the two composed: top-bottom, sides swapped
            fx, fy, swap = 1.0, -1.0, True
        elif name == "identity":
            fx, fy, swap = 1.0, 1.0, False
        else:
            raise ValueError(f"unknown symmetry {name!r}: choose {', '.join(SYMMETRIES)}")
        t = self.tables
        topo = t.topology
        where = {(c.x, c.y): c.name for c in topo.cells}
        cells = np.empty(self.n_cells, dtype=np.int64)
        for cell in topo.cells:
            image = where.get((fx * cell.x, fy * cell.y))
            if image is None:
                raise ValueError(f"the board {topo.name!r} has no {name} symmetry (cell {cell.name})")
            cells[t.cell_index[cell.name]] = t.cell_index[image]
        sets = {frozenset(a): i for i, a in enumerate(t.align_cells)}
        aligns = np.empty(self.n_alignments, dtype=np.int64)
        for i, a in enumerate(t.align_cells):
            j = sets.get(frozenset(int(cells[c]) for c in a))
            if j is None:
                raise ValueError(f"the board {topo.name!r} has no {name} symmetry (alignment {t.align_names[i]})")
            aligns[i] = j
        for c in range(self.n_cells):
            if (t.cell_camp[int(cells[c])] != t.cell_camp[c]) != swap:
                raise ValueError(f"the board {topo.name!r} has no {name} symmetry (camps)")
        sym = Symmetry(name, cells, aligns, swap, self)
        self._symmetries[name] = sym
        return sym


#: The board's symmetry group, by name (see :meth:`Encoding.symmetry`).
SYMMETRIES: tuple[str, ...] = ("identity", "mirror", "half-turn", "flip")

_DEFAULT: Encoding | None = None


def default_encoding() -> Encoding:
    """The (cached) encoding of the standard board."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Encoding()
    return _DEFAULT


N_ACTIONS: int = default_encoding().n_actions
PASS_ACTION: int = default_encoding().pass_action
OBSERVATION_SIZE: int = default_encoding().observation_size


def action_to_move(action: int) -> Move:
    """:meth:`Encoding.action_to_move` on the standard board."""
    return default_encoding().action_to_move(action)


def move_to_action(move: Move | str) -> int:
    """:meth:`Encoding.move_to_action` on the standard board."""
    return default_encoding().move_to_action(move)


def legal_action_mask(game: Game | State) -> np.ndarray:
    """:meth:`Encoding.legal_mask` on the standard board."""
    return default_encoding().legal_mask(game)


def legal_actions(game: Game | State) -> list[int]:
    """:meth:`Encoding.legal_actions` on the standard board."""
    return default_encoding().legal_actions(game)


def observe(game: Game | State, side: Side | str | int | None = None) -> np.ndarray:
    """:meth:`Encoding.observe` on the standard board."""
    return default_encoding().observe(game, side)
