"""The trained baseline: a small policy/value network, played with NumPy alone.

``make_player("net")`` plays the legal move the network's policy ranks first;
``make_player("net+mcts:sims=N")`` runs a PUCT search (AlphaZero's) guided by the network's
prior and value, within ``sims`` and/or ``time`` (or the ``Limit`` given), stoppable.
Training needs PyTorch (``examples/train_net.py``, the ``train`` extra);
playing needs only NumPy (the ``rl`` extra): the weights ship in ``net_weights.npz`` next to
this module, with the architecture and a few reference inputs and outputs computed by
PyTorch at export, which the tests check this module's forward pass against.

Network (``arch`` in the weights file: ``width`` W, ``blocks`` B)
    Input: the planar observation (:mod:`jericho_game.envs.planar`, 192 x 4 x 7) in the
    canonical view (the side to move sees itself as South: North's positions are turned
    by the half turn, and so are its actions).  A 1x1 convolution to W channels, ReLU;
    B residual blocks (3x3 convolution, ReLU, 3x3 convolution, add, ReLU).

    Policy: a 1x1 convolution to 32 channels, ReLU, a 1x1 convolution to 25 channels: the
    logit of placing piece ``p`` (0-24) on the cell under each grid square, gathered into
    the 650 placements (action ``p * 26 + cell``); the pass's logit comes from the value
    head's hidden layer.  So the policy is as local as the board: one set of weights
    scores every cell.

    Value: a 1x1 convolution to 8 channels, ReLU, flattened (8 x 28), a linear layer to 64,
    ReLU, a linear layer to 1, ``tanh``: the expected result for the side to move (+1 win,
    -1 loss).

Search (``net+mcts``)
    PUCT: from the root, descend by ``Q + c_puct * P * sqrt(N) / (1 + n)`` (``Q`` the
    child's mean value for the side choosing it, 0 before its first visit; ``P`` the
    network's prior over the legal moves), expand the leaf with one network evaluation
    (its value is backed up; a finished game backs up its result), repeat ``sims`` times,
    play the most visited move.  Positions are handled by the engine's kernel state
    (``push``/``pop``/``legal_codes``/``outcome``), the C kernel when built.  A pass
    keeps the perspective right: each edge is scored for the side that moved.
"""

from __future__ import annotations

import json
import math
import time as _time
from functools import cache
from pathlib import Path
from typing import Any

from jericho_game.extras import missing_extra

try:
    import numpy as np
except ImportError as exc:
    raise missing_extra("the net player", "rl", exc) from exc

from jericho_game.ai._util import MAX_SECONDS, MAX_SIMS, Deadline, game_state, resolve_seed, search_budget, to_move
from jericho_game.ai.base import Limit
from jericho_game.core import DRAW, NO_OUTCOME, State
from jericho_game.envs.encoding import Encoding, default_encoding
from jericho_game.envs.planar import default_planar
from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = ["WEIGHTS", "NetWeights", "load_weights", "forward", "NetPlayer", "NetMCTSPlayer", "net", "net_mcts"]

#: Simulations of ``net+mcts`` given no budget.
DEFAULT_NET_SIMS = 200

#: The shipped weights.
WEIGHTS = Path(__file__).with_name("net_weights.npz")

#: Names of the arrays of a weights file, in layer order (``convs.K`` for the residual convolutions).
HEAD_LAYERS = ("stem", "p1", "p2", "v1", "v2", "v3", "pas")


#: Positions per block of :func:`forward`.  A batch is evaluated block by block so that every
#: intermediate array (the largest, the 3x3 convolutions' gathered inputs, is 16 x 28 x 288
#: floats, 516 KB) stays in the CPU's cache whatever the batch; before, a batch of 1,024 built
#: 37 MB arrays and ran at less than half the per-position speed of a batch of 16.  Each
#: matrix product also stays one position's (28 rows) or one block's, under OpenBLAS's
#: threshold for using threads (M * N * K <= 262,144): threads on small products cost far more
#: than they save when the cores are busy (arena workers, other processes).
BLOCK = 16


class NetWeights:
    """The arrays of a weights file, its architecture and metadata (see the module docstring).

    The layers run channels-last: activations are ``(positions, H*W, channels)`` and each
    layer is a product with a weight matrix ``(inputs, outputs)`` prepared here once.
    """

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        self.arrays = {k: np.asarray(v, dtype=np.float32) for k, v in arrays.items()}
        self.meta = meta
        self.width = int(meta["arch"]["width"])
        self.blocks = int(meta["arch"]["blocks"])
        for name in (*HEAD_LAYERS, *(f"convs.{i}" for i in range(2 * self.blocks))):
            for part in ("weight", "bias"):
                if f"{name}.{part}" not in self.arrays:
                    raise ValueError(f"weights file lacks {name}.{part}")
        a = self.arrays
        #: Per layer: the weight matrix ``(inputs, outputs)`` (contiguous) and the bias.
        self._mat: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for name in ("stem", "p1", "p2", "v1"):  # 1x1 convolutions: (out, in, 1, 1) -> (in, out)
            self._mat[name] = (np.ascontiguousarray(a[f"{name}.weight"][:, :, 0, 0].T), a[f"{name}.bias"])
        for i in range(2 * self.blocks):
            # 3x3 convolutions as one gather and one product (im2col): row (dy * 3 + dx) * C_in + c.
            k = a[f"convs.{i}.weight"]  # (out, in, 3, 3)
            self._mat[f"convs.{i}"] = (
                np.ascontiguousarray(k.transpose(2, 3, 1, 0).reshape(-1, k.shape[0])),
                a[f"convs.{i}.bias"],
            )
        # The value head's first linear layer reads PyTorch's channel-major flattening (8 x 28);
        # its columns are reordered to the channels-last one (28 x 8).
        v2, hidden = a["v2.weight"], a["v1.weight"].shape[0]
        by_position = v2.reshape(v2.shape[0], hidden, -1).transpose(2, 1, 0).reshape(-1, v2.shape[0])
        self._mat["v2"] = (np.ascontiguousarray(by_position), a["v2.bias"])
        for name in ("v3", "pas"):
            self._mat[name] = (np.ascontiguousarray(a[f"{name}.weight"].T), a[f"{name}.bias"])

    def conv1x1(self, name: str, x: np.ndarray) -> np.ndarray:
        """A 1x1 convolution on ``(B, H*W, C)``."""
        w, bias = self._mat[name]
        out: np.ndarray = x @ w
        out += bias
        return out

    def conv3x3(self, name: str, padded: np.ndarray, height: int, width: int) -> np.ndarray:
        """A 3x3 convolution, zero padding 1, on the grid ``height`` x ``width``.

        ``padded`` is ``(B, H*W + 1, C)``: row ``H*W`` is zero, the padding read outside the grid.
        """
        b, _, c = padded.shape
        cols = padded[:, _im2col_rows(height, width)]  # (B, H*W, 9, C)
        return self.conv1x1(name, cols.reshape(b, height * width, 9 * c))

    def linear(self, name: str, x: np.ndarray) -> np.ndarray:
        """A linear layer on ``(B, F)`` (the value head's ``v2`` reads the channels-last flattening)."""
        return self.conv1x1(name, x)


@cache
def _im2col(height: int, width: int) -> np.ndarray:
    """For each kernel offset (dy, dx) and each grid square: the square it reads, or ``H*W`` outside the grid."""
    out = np.full((9, height * width), height * width, dtype=np.int64)
    for dy in range(3):
        for dx in range(3):
            for y in range(height):
                for x in range(width):
                    yy, xx = y + dy - 1, x + dx - 1
                    if 0 <= yy < height and 0 <= xx < width:
                        out[dy * 3 + dx, y * width + x] = yy * width + xx
    return out


@cache
def _im2col_rows(height: int, width: int) -> np.ndarray:
    """:func:`_im2col` by grid square: ``(H*W, 9)``, the rows a square's 3x3 window reads."""
    return np.ascontiguousarray(_im2col(height, width).T)


def load_weights(path: str | Path | None = None) -> NetWeights:
    """A weights file (default: the shipped :data:`WEIGHTS`)."""
    with np.load(Path(path) if path is not None else WEIGHTS) as data:
        arrays = {k: data[k] for k in data.files if not k.startswith("_")}
        meta = json.loads(bytes(data["_meta"]).decode("utf-8"))
        for k in data.files:
            if k.startswith("_ref_"):
                meta.setdefault("reference", {})[k[len("_ref_") :]] = data[k]
    return NetWeights(arrays, meta)


@cache
def _shipped() -> NetWeights:
    return load_weights()


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0, out=x)  # in place: every caller passes a fresh array


@cache
def _action_gather(encoding: Encoding) -> np.ndarray:
    """For actions 0-649 (``piece * n_cells + cell``): the index into ``(25, H * W)`` flattened.

    That is PyTorch's layout (channels first), which ``examples/train_net.py`` gathers from.
    """
    planar = default_planar()
    pos = planar.cell_pos
    n_cells = len(pos)
    hw = planar.height * planar.width
    pieces = np.arange(encoding.n_actions - 1) // n_cells
    cells = np.arange(encoding.n_actions - 1) % n_cells
    return pieces * hw + pos[cells]


@cache
def _policy_gather(encoding: Encoding, policy_channels: int) -> np.ndarray:
    """:func:`_action_gather` into the channels-last policy ``(H * W, 25)`` flattened."""
    hw = default_planar().height * default_planar().width
    first = _action_gather(encoding)
    return (first % hw) * policy_channels + first // hw


def forward(weights: NetWeights, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Logits ``(B, 651)`` (canonical actions; the last is the pass) and values ``(B,)`` in [-1, 1].

    ``planes`` is ``(B, 192, H, W)``; the batch is evaluated in blocks of :data:`BLOCK` positions.
    """
    x = np.asarray(planes, dtype=np.float32)
    b = x.shape[0]
    logits = np.empty((b, default_encoding().n_actions), dtype=np.float32)
    values = np.empty(b, dtype=np.float32)
    for start in range(0, b, BLOCK):
        end = min(b, start + BLOCK)
        _forward_block(weights, x[start:end], logits[start:end], values[start:end])
    return logits, values


def _forward_block(weights: NetWeights, x: np.ndarray, logits: np.ndarray, values: np.ndarray) -> None:
    """:func:`forward` of a few positions, written into ``logits`` and ``values``."""
    b, c, height, width = x.shape
    hw = height * width
    h = _relu(weights.conv1x1("stem", np.ascontiguousarray(x.reshape(b, c, hw).transpose(0, 2, 1))))
    # One buffer for the 3x3 convolutions' inputs: the grid, then a zero row (the padding).
    padded = np.zeros((b, hw + 1, h.shape[2]), dtype=np.float32)
    for i in range(0, 2 * weights.blocks, 2):
        padded[:, :hw] = h
        mid = _relu(weights.conv3x3(f"convs.{i}", padded, height, width))
        padded[:, :hw] = mid
        h = _relu(h + weights.conv3x3(f"convs.{i + 1}", padded, height, width))
    p = weights.conv1x1("p2", _relu(weights.conv1x1("p1", h)))  # (b, H*W, 25)
    v = _relu(weights.linear("v2", _relu(weights.conv1x1("v1", h)).reshape(b, -1)))
    logits[:, :-1] = p.reshape(b, -1)[:, _policy_gather(default_encoding(), p.shape[2])]
    logits[:, -1] = weights.linear("pas", v)[:, 0]
    values[:] = np.tanh(weights.linear("v3", v))[:, 0]


class _Evaluator:
    """Observation, mask and forward pass of one position for the side to move (canonical view)."""

    def __init__(self, weights: NetWeights) -> None:
        self.weights = weights
        self.enc = default_encoding()
        self.planar = default_planar()
        self.half_turn = self.enc.symmetry("half-turn")
        #: Network evaluations so far.
        self.evaluations = 0

    def priors(self, state: State, codes: list[int]) -> tuple[np.ndarray, float]:
        """The policy over ``codes`` (legal move codes = real actions), summing to 1, and the value."""
        flat = self.enc.observe(state, state.turn)
        north = state.turn == 1
        if north:
            flat = self.half_turn.observations(flat)
        logits, value = forward(self.weights, self.planar.from_flat(flat)[None])
        self.evaluations += 1
        real = np.asarray(codes, dtype=np.int64)
        canon = self.half_turn.actions(real) if north else real
        z = logits[0, canon].astype(np.float64)
        z = np.exp(z - z.max())
        return z / z.sum(), float(value[0])


class NetPlayer:
    """``net``: the legal move the network's policy ranks first (no search; deterministic)."""

    def __init__(self, weights: str | None = None, seed: int | None = None) -> None:
        self.name = "net"
        self.seed = seed  # accepted for the common interface; the player is deterministic
        self._eval = _Evaluator(load_weights(weights) if weights else _shipped())
        #: The network's value of the last position it moved from (side to move's view).
        self.last_value = 0.0

    def choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        """The policy's favourite legal move (ties: the lower action)."""
        state = game_state(game)
        search_budget(limit, None, None)  # checked; one network evaluation fits any limit
        codes = state.legal_codes()
        if len(codes) == 1:
            return to_move(game, codes[0])
        probs, self.last_value = self._eval.priors(state, codes)
        return to_move(game, codes[int(np.argmax(probs))])


class _PNode:
    """A PUCT node: the position after ``code``; its children's statistics as arrays."""

    __slots__ = ("codes", "prior", "n", "w", "children", "mover")

    def __init__(self, mover: int) -> None:
        #: The side that chose the move leading here (statistics of this node are its).
        self.mover = mover
        self.codes: list[int] | None = None  # None: not expanded yet
        self.prior = np.zeros(0)
        self.n = np.zeros(0)
        self.w = np.zeros(0)
        self.children: dict[int, _PNode] = {}


class NetMCTSPlayer:
    """``net+mcts``: PUCT search guided by the network (see the module docstring).

    Budget: ``sims`` simulations and/or ``time`` seconds (``sims=200`` when neither is
    given); an explicit ``Limit`` replaces them (:func:`~jericho_game.ai._util.search_budget`).
    The clock is read after every simulation (one network evaluation, about a millisecond),
    and :meth:`stop` ends a running search from another thread after the current one.
    """

    def __init__(
        self,
        sims: int | None = None,
        c_puct: float = 1.5,
        weights: str | None = None,
        seed: int | None = None,
        time: float | None = None,
    ) -> None:
        if sims is not None and not 1 <= sims <= MAX_SIMS:
            raise ValueError(f"sims must be from 1 to {MAX_SIMS:_}, got {sims}")
        if time is not None and not 0 < time <= MAX_SECONDS:
            raise ValueError(f"time must be a positive number of seconds, at most {MAX_SECONDS:g}, got {time}")
        if c_puct < 0:
            raise ValueError(f"c_puct must be >= 0, got {c_puct}")
        self.name = "net+mcts"
        self.sims = int(sims) if sims is not None else (DEFAULT_NET_SIMS if time is None else None)
        self.time = time
        self.c_puct = float(c_puct)
        self.seed = seed
        self._eval = _Evaluator(load_weights(weights) if weights else _shipped())
        #: Byte 0 set by :meth:`stop` (one byte store: atomic, and the player still pickles).
        self._stop_flag = bytearray(1)
        #: Simulations and seconds of the last search, the root's visits ``(code, n)``.
        self.last_sims = 0
        self.last_seconds = 0.0
        self.last_children: list[tuple[int, int]] = []

    def stop(self) -> None:
        """End a running :meth:`choose_move` after its current simulation (safe from any thread).

        A stop that finds no search running makes the next search answer at once (by the
        network's prior), unless :meth:`reset_stop` withdraws it.
        """
        self._stop_flag[0] = 1

    def reset_stop(self) -> None:
        """Withdraw a :meth:`stop` that came after the search it was meant for."""
        self._stop_flag[0] = 0

    def choose_move(self, game: Game, limit: Limit | None = None) -> Move:
        """Search within the budget and play the most visited move (ties: the higher prior)."""
        try:
            return self._choose_move(game, limit)
        finally:
            self.reset_stop()  # the stop was for this search

    def _choose_move(self, game: Game, limit: Limit | None) -> Move:
        state = game_state(game)
        resolve_seed(None, limit)  # the search is deterministic: a seed changes nothing
        sims, secs = search_budget(limit, self.sims, self.time, DEFAULT_NET_SIMS)
        codes = state.legal_codes()
        if len(codes) == 1:
            return to_move(game, codes[0])
        deadline = Deadline(secs)
        stop_at = deadline.stop
        flag = self._stop_flag
        root = _PNode(1 - state.turn)
        self._expand(root, state)
        done = 0
        clock = _time.perf_counter
        while (sims is None or done < sims) and not flag[0]:
            if stop_at is not None and clock() >= stop_at:
                break
            self._simulate(root, state)
            done += 1
        self.last_sims = done
        self.last_seconds = deadline.elapsed()
        assert root.codes is not None
        self.last_children = [(c, int(n)) for c, n in zip(root.codes, root.n, strict=True)]
        best = max(range(len(root.codes)), key=lambda i: (root.n[i], root.prior[i]))
        return to_move(game, root.codes[best])

    def _expand(self, node: _PNode, state: State) -> float:
        """Give ``node`` its moves and priors; return the network's value for the side to move."""
        codes = state.legal_codes()
        prior, value = self._eval.priors(state, codes)
        node.codes = codes
        node.prior = prior
        node.n = np.zeros(len(codes))
        node.w = np.zeros(len(codes))
        return value

    def _simulate(self, root: _PNode, state: State) -> None:
        path: list[tuple[_PNode, int]] = []
        node = root
        pushed = 0
        try:
            while True:
                if state.outcome != NO_OUTCOME:
                    leaf_side, value = 0, _result(state.outcome, 0)
                    break
                if node.codes is None:
                    leaf_side, value = state.turn, self._expand(node, state)
                    break
                total = node.n.sum()
                q = np.divide(node.w, node.n, out=np.zeros_like(node.w), where=node.n > 0)
                u = q + self.c_puct * node.prior * math.sqrt(total + 1) / (1 + node.n)
                i = int(np.argmax(u))
                code = node.codes[i]
                mover = state.turn
                path.append((node, i))
                state.push(code)
                pushed += 1
                child = node.children.get(code)
                if child is None:
                    child = node.children[code] = _PNode(mover)
                node = child
            # Back up: each edge is scored for the side that chose it.
            for parent, i in path:
                chooser = parent.children[parent.codes[i]].mover  # type: ignore[index]
                parent.n[i] += 1
                parent.w[i] += value if chooser == leaf_side else -value
        finally:
            for _ in range(pushed):
                state.pop()


def _result(outcome: int, side: int) -> float:
    """A finished game's result for ``side``: +1 win, 0 draw, -1 loss."""
    if outcome == DRAW:
        return 0.0
    return 1.0 if outcome == side else -1.0


def net(weights: str | None = None, seed: int | None = None) -> NetPlayer:
    """The ``net`` player."""
    return NetPlayer(weights=weights, seed=seed)


def net_mcts(
    sims: int | None = None,
    c_puct: float = 1.5,
    weights: str | None = None,
    seed: int | None = None,
    time: float | None = None,
) -> NetMCTSPlayer:
    """The ``net+mcts`` player (``sims=200`` when neither ``sims`` nor ``time`` is given)."""
    return NetMCTSPlayer(sims=sims, c_puct=c_puct, weights=weights, seed=seed, time=time)
