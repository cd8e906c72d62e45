"""The learned evaluator: a small policy/value network that the C search evaluates itself.

The network (docs/ai.md, "The learned evaluator") reads sparse binary features of a
position as its side to move sees it (North's positions turned by the half turn, so one
set of weights serves both sides), computed by the C kernel (``_kernel.net_features``):
the towers piece by piece, both reserves, the alignments' leaders, the scores, the last
move, a pass, and each side's champion on each alignment.  Two hidden ReLU layers lead to
a value (``tanh``: the side to move's expected result) and one logit per action.

``mcts:...,evaluator=PATH`` (or ``evaluator=shipped``, ``evaluator=value``) hands the weights to the C search
(``_kernel.Net``): the priors order the moves a node widens to and add a PUCT term to
UCB1, and a leaf's value mixes the network's with a playout's (``mix``; 1 plays no
playout).  No Python runs per node and no PyTorch is needed: weights are NumPy arrays in
an ``.npz`` file.  They are trained by self-play (:mod:`jericho_game.ai.selfplay`,
``jericho train``), the C search making the games and the network learning its visit
counts and the results.

This module also holds the NumPy reference forward pass (:func:`forward`), which the
tests check the C evaluation against, and the feature and action maps used in training.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jericho_game.extras import missing_extra

try:
    import numpy as np
except ImportError as exc:
    raise missing_extra("the learned evaluator", "rl", exc) from exc

from jericho_game import kernel
from jericho_game.ai import netfile
from jericho_game.ai._util import SHIPPED_EVALUATOR
from jericho_game.core import State
from jericho_game.envs.encoding import default_encoding

__all__ = [
    "EvalNet",
    "SHIPPED",
    "n_features",
    "VALUE_C",
    "feature_maps",
    "action_map",
    "features",
    "forward",
    "load",
    "kernel_net",
]

#: The shipped weights (``evaluator=shipped``).
SHIPPED = SHIPPED_EVALUATOR

#: UCB1's exploration constant for the value alone (``mix=1,cprior=0``): a value has none of a
#: playout's noise for exploration to cover (docs/ai.md, "The value wants its own exploration
#: constant"; the playouts' is ``levels.STRONG_C``).
VALUE_C = 0.05

#: Array names of a weights file, in layer order.
LAYERS = netfile.LAYERS


def n_features(n_cells: int = 26, n_align: int = 13) -> int:
    """The number of input features on a board of ``n_cells`` cells and ``n_align`` alignments."""
    return n_cells * 40 + 2 * 25 + 3 * n_align + 2 * (n_align + 1) + 25 + n_cells + 1 + n_align * 14


@cache
def _symmetry_maps(name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    sym = default_encoding().symmetry(name)
    return tuple(int(c) for c in sym.cells), tuple(int(a) for a in sym.alignments)


def feature_maps(turn: int, mirror: bool = False) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The cell and alignment maps of the mover's view: the half turn when North (``turn`` 1)
    is to move, then the left-right mirror when ``mirror`` (for training on both)."""
    enc = default_encoding()
    cells = list(range(enc.n_cells))
    aligns = list(range(enc.n_alignments))
    if turn:
        hc, ha = _symmetry_maps("half-turn")
        cells, aligns = [hc[c] for c in cells], [ha[a] for a in aligns]
    if mirror:
        mc, ma = _symmetry_maps("mirror")
        cells, aligns = [mc[c] for c in cells], [ma[a] for a in aligns]
    return tuple(cells), tuple(aligns)


@cache
def action_map(turn: int, mirror: bool = False) -> np.ndarray:
    """Move code -> the network's action index under :func:`feature_maps` (int64 array)."""
    enc = default_encoding()
    cells, _ = feature_maps(turn, mirror)
    n = enc.n_cells
    codes = np.arange(25 * n + 1)
    out = codes - codes % n + np.asarray(cells)[codes % n]
    out[-1] = 25 * n  # the pass
    out.setflags(write=False)
    return out


def features(state: State, mirror: bool = False) -> list[int]:
    """The active features of ``state`` (a C kernel state) as its side to move sees it."""
    cells, aligns = feature_maps(state.turn, mirror)
    indices: list[int] = kernel.C.net_features(state, cells, aligns)
    return indices


class EvalNet:
    """A learned evaluator's weights (NumPy float32 arrays) and what is known of them (``meta``)."""

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict[str, Any] | None = None) -> None:
        missing = [name for name in LAYERS if name not in arrays]
        if missing:
            raise ValueError(f"evaluator weights lack {', '.join(missing)}")
        self.arrays = {name: np.ascontiguousarray(arrays[name], dtype=np.float32) for name in LAYERS}
        self.meta: dict[str, Any] = dict(meta or {})
        nf, h1 = self.arrays["w1"].shape
        if nf != n_features() or self.arrays["w2"].shape[1] != h1:
            raise ValueError(f"evaluator weights of shape {self.arrays['w1'].shape} do not fit the standard board")

    @classmethod
    def random(cls, hidden: tuple[int, int] = (128, 64), seed: int = 0) -> EvalNet:
        """Fresh weights (He initialisation; the policy and value start near uniform and 0)."""
        rng = np.random.default_rng(seed)
        nf, (h1, h2) = n_features(), hidden
        n_act = default_encoding().n_actions
        arrays = {
            "w1": rng.normal(0, (2.0 / 40) ** 0.5, (nf, h1)),  # ~40 features of ~330 matter at once
            "b1": np.zeros(h1),
            "w2": rng.normal(0, (2.0 / h1) ** 0.5, (h2, h1)),
            "b2": np.zeros(h2),
            "wv": rng.normal(0, 0.01, h2),
            "bv": np.zeros(1),
            "wp": rng.normal(0, 0.01, (n_act, h2)),
            "bp": np.zeros(n_act),
        }
        return cls(arrays, {"hidden": [h1, h2], "generation": 0})

    def widened(self, h1: int, seed: int = 0) -> EvalNet:
        """The same network with ``h1`` first-layer units: the new units start with small random
        input weights and no say in the second layer, so every output is unchanged until they are
        trained (a wider network that begins where this one ends)."""
        old = self.hidden[0]
        if h1 < old:
            raise ValueError(f"cannot widen a first layer of {old} units to {h1}")
        rng = np.random.default_rng(seed)
        arrays = dict(self.arrays)
        fresh = rng.normal(0, (2.0 / 40) ** 0.5, (n_features(), h1 - old))  # as :meth:`random`'s
        arrays["w1"] = np.concatenate([self.arrays["w1"], fresh], 1)
        arrays["b1"] = np.concatenate([self.arrays["b1"], np.zeros(h1 - old)])
        arrays["w2"] = np.concatenate([self.arrays["w2"], np.zeros((self.hidden[1], h1 - old))], 1)
        return EvalNet(arrays, {**self.meta, "hidden": [h1, self.hidden[1]], "widened_from": old})

    @property
    def hidden(self) -> tuple[int, int]:
        """The two hidden layers' sizes."""
        return int(self.arrays["b1"].shape[0]), int(self.arrays["b2"].shape[0])

    def save(self, path: str | Path) -> None:
        """Write the weights and ``meta`` (as JSON) to an ``.npz`` file, compressed."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(tmp, meta=np.array(json.dumps(self.meta)), **self.arrays)
        tmp.replace(path)

    def size_bytes(self) -> int:
        """The weights' size in memory (float32)."""
        return sum(a.nbytes for a in self.arrays.values())


def load(path: str | Path) -> EvalNet:
    """Read weights written by :meth:`EvalNet.save`; ``ValueError`` names what is wrong."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files if name != "meta"}
            meta = json.loads(str(data["meta"])) if "meta" in data.files else {}
    except FileNotFoundError:
        raise ValueError(f"no evaluator weights at {path}") from None
    except (OSError, KeyError, ValueError) as exc:  # ValueError: not a zip (numpy then tries pickle), bad JSON
        raise ValueError(f"{path}: not an evaluator weights file ({exc})") from None
    return EvalNet(arrays, meta)


def kernel_net(net: EvalNet | str | Path) -> Any:
    """The C kernel's copy (``_kernel.Net``) of ``net``, or of the weights at a path (read by
    :func:`jericho_game.ai.netfile.kernel_net`, without NumPy, and cached by path)."""
    if not isinstance(net, EvalNet):
        return netfile.kernel_net(net)
    return netfile.build(net.arrays)


def forward(net: EvalNet, batch: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """The reference forward pass: ``(values, logits)`` of a batch of feature index lists
    (values ``(B,)`` in [-1, 1], logits ``(B, actions)``)."""
    a = net.arrays
    x = np.zeros((len(batch), a["w1"].shape[0]), dtype=np.float32)
    for i, idx in enumerate(batch):
        x[i, idx] = 1.0
    h1 = np.maximum(x @ a["w1"] + a["b1"], 0.0)
    h2 = np.maximum(h1 @ a["w2"].T + a["b2"], 0.0)
    values = np.tanh(h2 @ a["wv"] + a["bv"][0])
    logits = h2 @ a["wp"].T + a["bp"]
    return values, logits
