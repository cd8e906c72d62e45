"""The observation as planes on the board's grid (``C x 4 x 7``), for convolutional models.

The flat observation (:mod:`jericho_game.envs.encoding`) lists cells in the engine's
order, so a network sees no geometry: OpenSpiel's AlphaZero, for one, reshapes it to
``1239 x 1 x 1``.  :class:`Planar` lays the same information out on the board's grid of
4 rows x 7 columns: row index 0 is row 4 (North's back row, drawn at the top), index 3 is
row 1; column index 0 is column ``a``.  The grid has two cells that are not on the board
(``d1`` and ``d4``, where the monoliths of column ``d`` stand): the *padding*, marked by
channel ``on_board``, zero in every per-cell channel.

Channels (standard board, :attr:`Planar.channels` gives the same list):

=========  =====================  ==================================================
channels   name                   meaning (per cell unless "constant")
=========  =====================  ==================================================
0-39       ``tower[l][k]``        level ``l`` 0-3 (0 = bottom) of the tower: ``k`` 0-4
                                  one-hot size 1-5, ``k`` 5-9 one-hot colour R Y G B W
                                  (channel ``l * 10 + k``); 0 above the top
40         ``own_camp``           1 on the observer's 13 cells
41         ``on_board``           1 on the 26 cells, 0 on the padding (d1, d4)
42         ``last_cell``          1 on the cell of the placement just made
43         ``led_by_observer``    1 on cells of an alignment the observer leads
44         ``led_by_opponent``    1 on cells of an alignment the opponent leads
45-94      ``reserve[k][p]``      constant: 1 if piece ``p`` (0-24) is in the
                                  observer's (``k = 0``) / opponent's (``k = 1``) reserve
95-133     ``leader[a][j]``       constant: alignment ``a`` (engine order) is led by
                                  the observer (``j = 0``), the opponent (1), nobody (2)
134-161    ``score[k][n]``        constant: one-hot monolith count ``n`` 0-13 of the
                                  observer (``k = 0``) / opponent (``k = 1``)
162-163    ``seven[k]``           constant: observer / opponent holds 7+
164-188    ``last_piece[p]``      constant: the piece of the placement just made
189        ``passed``             constant: the previous turn was a pass
190-191    ``turn[j]``            constant: observer is to move / observer is North
=========  =====================  ==================================================

192 channels.  "Constant" planes repeat one value over the whole grid, padding included
(as AlphaZero does for non-spatial features).  Everything of the flat vector is here,
so :meth:`Planar.to_flat` inverts :meth:`Planar.from_flat`; channels 41, 43 and 44 are
derived (geometry and the leaders) to save a network the work.  Both directions take
batches: any leading shape.
"""

from __future__ import annotations

from collections.abc import Sequence

from jericho_game.extras import missing_extra

try:
    import numpy as np
except ImportError as exc:
    raise missing_extra("the planar observation", "rl", exc) from exc

from jericho_game.envs.encoding import Encoding, default_encoding
from jericho_game.game import Game
from jericho_game.pieces import PIECES

__all__ = ["Planar", "default_planar"]


class Planar:
    """Planes of one board's observation (see the module docstring)."""

    def __init__(self, encoding: Encoding | None = None) -> None:
        self.encoding = enc = encoding or default_encoding()
        t = enc.tables
        names = t.cell_names
        rows = sorted({int(n[1:]) for n in names}, reverse=True)
        cols = sorted({n[0] for n in names})
        self.height, self.width = len(rows), len(cols)
        hw = self.height * self.width
        #: Grid position (flat index ``row * width + col``) of each engine cell.
        self.cell_pos = np.array([rows.index(int(n[1:])) * self.width + cols.index(n[0]) for n in names])
        seg = enc.segments
        channels: list[tuple[str, str]] = []
        # gather[ch, pos] = flat index to copy (the extra last index is a constant 0).
        zero = enc.observation_size
        gather: list[np.ndarray] = []

        def per_cell(flat_of_cell: np.ndarray) -> np.ndarray:
            plane = np.full(hw, zero, dtype=np.int64)
            plane[self.cell_pos] = flat_of_cell
            return plane

        def constant(index: int) -> np.ndarray:
            return np.full(hw, index, dtype=np.int64)

        off, (n_cells, levels, width) = seg["towers"]
        for level in range(levels):
            for k in range(width):
                what = f"size {k + 1}" if k < 5 else f"colour {'RYGBW'[k - 5]}"
                channels.append((f"tower[{level}][{k}]", f"level {level} of the tower is a piece of {what}"))
                gather.append(per_cell(off + (np.arange(n_cells) * levels + level) * width + k))
        channels.append(("own_camp", "the observer's camp"))
        gather.append(per_cell(seg["own_camp"][0] + np.arange(n_cells)))
        self.on_board_channel = len(channels)
        channels.append(("on_board", "a cell of the board (0: padding)"))
        gather.append(constant(zero))  # filled below
        channels.append(("last_cell", "the cell of the placement just made"))
        gather.append(per_cell(seg["last_cell"][0] + np.arange(n_cells)))
        self.led_channel = len(channels)
        channels.append(("led_by_observer", "a cell of an alignment the observer leads"))
        channels.append(("led_by_opponent", "a cell of an alignment the opponent leads"))
        gather += [constant(zero), constant(zero)]  # filled below
        for name in ("reserves", "leaders", "score", "seven", "last_piece", "passed", "turn"):
            start, shape = seg[name]
            for i in range(int(np.prod(shape))):
                index = np.unravel_index(i, shape)
                label = name[:-1] if name in ("reserves", "leaders") else name
                words = _constant_meaning(name, tuple(int(j) for j in index), t.align_names)
                channels.append((f"{label}{''.join(f'[{j}]' for j in index)}", f"constant: {words}"))
                gather.append(constant(start + i))
        self.channels: list[tuple[str, str]] = channels
        self.n_channels = len(channels)
        self.shape: tuple[int, int, int] = (self.n_channels, self.height, self.width)
        self._gather = np.stack(gather).reshape(-1)
        self._on_board = np.zeros(hw, dtype=np.float32)
        self._on_board[self.cell_pos] = 1.0
        # incidence[a, pos]: alignment a passes through the grid position.
        self._incidence = np.zeros((t.n_align, hw), dtype=np.float32)
        for a, cells in enumerate(t.align_cells):
            self._incidence[a, self.cell_pos[list(cells)]] = 1.0
        self._leaders = seg["leaders"][0]
        self._tower_channels = levels * width
        self._flat_positions = self._first_sources()

    def _first_sources(self) -> np.ndarray:
        """For each flat index, one (channel, position) holding it: what :meth:`to_flat` reads."""
        n = self.encoding.observation_size
        where = np.full(n, -1, dtype=np.int64)
        for k, src in enumerate(self._gather):
            if src < n and where[src] < 0:
                where[src] = k
        assert (where >= 0).all(), "every flat value has a plane"
        return where

    def from_flat(self, obs: np.ndarray) -> np.ndarray:
        """Planes ``(..., C, H, W)`` (float32) of flat observations ``(..., n_obs)``."""
        obs = np.asarray(obs, dtype=np.float32)
        lead = obs.shape[:-1]
        ext = np.concatenate([obs, np.zeros(lead + (1,), dtype=np.float32)], axis=-1)
        planes = ext[..., self._gather].reshape(lead + (self.n_channels, self.height * self.width))
        planes[..., self.on_board_channel, :] = self._on_board
        leaders = obs[..., self._leaders : self._leaders + 3 * self._incidence.shape[0]].reshape(lead + (-1, 3))
        planes[..., self.led_channel, :] = (leaders[..., 0] @ self._incidence) > 0
        planes[..., self.led_channel + 1, :] = (leaders[..., 1] @ self._incidence) > 0
        return planes.reshape(lead + self.shape)

    def to_flat(self, planes: np.ndarray) -> np.ndarray:
        """The flat observations of planes (the inverse of :meth:`from_flat`)."""
        planes = np.asarray(planes, dtype=np.float32)
        if planes.shape[-3:] != self.shape:
            raise ValueError(f"planes of shape {planes.shape[-3:]}, expected {self.shape}")
        lead = planes.shape[:-3]
        return planes.reshape(lead + (-1,))[..., self._flat_positions]

    def observe(self, game: Game, side: object = None) -> np.ndarray:
        """The planes of ``game`` seen by ``side`` (default: the side to move)."""
        return self.from_flat(self.encoding.observe(game, side))  # type: ignore[arg-type]


_SIDES = ("the observer", "the opponent")


def _constant_meaning(segment: str, index: tuple[int, ...], align_names: Sequence[str]) -> str:
    """In words, what a constant plane's 1 means (its flat segment and index, e.g. ``reserves``, (1, 7))."""
    if segment == "reserves":
        return f"piece {PIECES[index[1]]} is in {_SIDES[index[0]]}'s reserve"
    if segment == "leaders":
        who = (*_SIDES, "nobody")[index[1]]
        return f"alignment {align_names[index[0]]} is led by {who}"
    if segment == "score":
        return f"{_SIDES[index[0]]} holds {index[1]} monolith{'' if index[1] == 1 else 's'}"
    if segment == "seven":
        return f"{_SIDES[index[0]]} holds 7 monoliths or more"
    if segment == "last_piece":
        return f"the placement just made was of piece {PIECES[index[0]]}"
    if segment == "passed":
        return "the previous turn was a pass"
    if segment == "turn":
        return ("the observer is to move", "the observer is North")[index[0]]
    raise ValueError(f"no constant plane for the segment {segment!r}")  # a new segment must be described


_DEFAULT: Planar | None = None


def default_planar() -> Planar:
    """The (cached) planes of the standard board."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Planar()
    return _DEFAULT
