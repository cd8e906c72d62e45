"""The learned evaluator's weights handed to the C search without NumPy.

The ``expert`` and ``master`` levels play with a trained network (ai/levels.py), and a level
must play on a bare install: the web app's extra has no NumPy.  The C search needs only the
eight float32 arrays of a weights file (``evalnet.EvalNet.save``: an ``.npz``, a zip of
``.npy`` files) and the half turn's cell and alignment maps, so this module reads both with
the standard library.  :func:`jericho_game.ai.evalnet.kernel_net` (training, tests, NumPy
at hand) hands a path here too, so every search loads a file the same way.
"""

from __future__ import annotations

import ast
import struct
import sys
import zipfile
from array import array
from pathlib import Path
from typing import Any

from jericho_game import kernel
from jericho_game.core import Tables
from jericho_game.game import Game

__all__ = ["LAYERS", "read_weights", "half_turn_maps", "build", "kernel_net"]

#: Array names of a weights file, in layer order (the C ``Net``'s arguments).
LAYERS = ("w1", "b1", "w2", "b2", "wv", "bv", "wp", "bp")

_MAGIC = b"\x93NUMPY"


def _npy_floats(data: bytes, what: str) -> array[float]:
    """The float32 values of one ``.npy`` file (C order), or ``ValueError`` naming ``what``."""
    if not data.startswith(_MAGIC) or len(data) < 10:
        raise ValueError(f"{what}: not a .npy array")
    major = data[6]
    if major == 1:
        (size,), start = struct.unpack_from("<H", data, 8), 10
    elif major in (2, 3):
        (size,), start = struct.unpack_from("<I", data, 8), 12
    else:
        raise ValueError(f"{what}: .npy format version {major} is not known")
    try:
        header = ast.literal_eval(data[start : start + size].decode("latin-1"))
        descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
    except (ValueError, SyntaxError, KeyError, TypeError) as exc:
        raise ValueError(f"{what}: unreadable .npy header ({exc})") from None
    if descr != "<f4" or fortran:
        raise ValueError(f"{what}: expected little-endian float32 in C order, got {descr!r}")
    count = 1
    for n in shape:
        count *= int(n)
    body = data[start + size :]
    if len(body) != 4 * count:
        raise ValueError(f"{what}: {len(body)} bytes for shape {tuple(shape)}")
    values = array("f")
    values.frombytes(body)
    if sys.byteorder != "little":  # the file is little-endian whatever the machine
        values.byteswap()
    return values


def read_weights(path: str | Path) -> dict[str, array[float]]:
    """The eight layer arrays of a weights file, flat float32 (``ValueError`` names what is wrong)."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            missing = [name for name in LAYERS if f"{name}.npy" not in names]
            if missing:
                raise ValueError(f"{path}: not an evaluator weights file (no {', '.join(missing)})")
            return {name: _npy_floats(z.read(f"{name}.npy"), f"{path}: {name}") for name in LAYERS}
    except FileNotFoundError:
        raise ValueError(f"no evaluator weights at {path}") from None
    except (OSError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path}: not an evaluator weights file ({exc})") from None


def half_turn_maps(tables: Tables) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Where the half turn sends each cell and alignment: North to move sees the board as South
    would (the network has one set of weights for both sides)."""
    index = tables.cell_index
    where = {(c.x, c.y): c.name for c in tables.topology.cells}
    cells = [0] * len(index)
    for cell in tables.topology.cells:
        image = where.get((-cell.x, -cell.y))
        if image is None:
            raise ValueError(f"the board {tables.topology.name!r} has no half-turn symmetry (cell {cell.name})")
        cells[index[cell.name]] = index[image]
    sets = {frozenset(a): i for i, a in enumerate(tables.align_cells)}
    aligns = []
    for i, a in enumerate(tables.align_cells):
        j = sets.get(frozenset(cells[c] for c in a))
        if j is None:
            raise ValueError(f"the board {tables.topology.name!r} has no half-turn symmetry ({tables.align_names[i]})")
        aligns.append(j)
    return tuple(cells), tuple(aligns)


def build(arrays: Any) -> Any:
    """The C kernel's network (``_kernel.Net``) of the eight layer arrays (any float32 buffers,
    by name: this module's reading or an ``EvalNet``'s NumPy arrays)."""
    if kernel.C is None:
        raise RuntimeError("the learned evaluator runs in the C kernel (not built, or JERICHO_KERNEL=python)")
    tables = Game().tables
    cells, aligns = half_turn_maps(tables)
    return kernel.C.Net(kernel.board(tables), *(arrays[name] for name in LAYERS), cells, aligns)


_NETS: dict[tuple[str, float], Any] = {}


def kernel_net(path: str | Path) -> Any:
    """The C kernel's network (``_kernel.Net``) of the weights at ``path``, read once per file
    version (cached by resolved path and modification time)."""
    if kernel.C is None:
        raise RuntimeError("the learned evaluator runs in the C kernel (not built, or JERICHO_KERNEL=python)")
    path = Path(path)
    try:
        key = (str(path.resolve()), path.stat().st_mtime)
    except FileNotFoundError:
        raise ValueError(f"no evaluator weights at {path}") from None
    if key not in _NETS:
        _NETS[key] = build(read_weights(path))
    return _NETS[key]
