"""A picture of the board as an RGB array (the envs' ``render_mode="rgb_array"``).

Drawn with numpy alone, in the web board's look (``web/site/static/board.js`` and
``style.css``): the wooden board outline, the two camps tinted in the players' colours
(South purple, North teal), the 13 alignments as lines coloured by their leader, the cells
as rounded squares (the last move's cell outlined in orange), each tower as a stack of
bars — wider for bigger pieces, in the piece's colour, its size written on it — and the
26 monolith triangles at the board's edges, filled with the holder's colour.  North is at
the top, as on the web board.

>>> from jericho_game.envs.picture import render_rgb
>>> render_rgb(game).shape
(600, 600, 3)
"""

from __future__ import annotations

from jericho_game.extras import missing_extra

try:
    import numpy as np
except ImportError as exc:
    raise missing_extra("rgb_array rendering", "rl", exc) from exc

from jericho_game.board import Topology
from jericho_game.game import Game

__all__ = ["render_rgb", "PIECE_FILL"]


def _rgb(text: str) -> np.ndarray:
    return np.array([int(text[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.float32)


# The web board's palette (style.css and board.js).
BACKGROUND = _rgb("#f4eee2")
WOOD = _rgb("#d9b77c")
WOOD_EDGE = _rgb("#6b4b26")
SOUTH = _rgb("#8a3b8f")
NORTH = _rgb("#1f6e6a")
NEUTRAL_LINE = _rgb("#5c4022")
CELL = {None: _rgb("#fbf5e8"), "south": _rgb("#fbf2f8"), "north": _rgb("#eef8f6")}
CELL_EDGE = _rgb("#a88a5c")
LAST = _rgb("#c4671b")
TRIANGLE = _rgb("#f7eedb")
INK = _rgb("#1b1510")
PIECE_FILL = {
    c: _rgb(v) for c, v in {"R": "#d7263d", "Y": "#f4c430", "G": "#2e9e4f", "B": "#2a6fdb", "W": "#f8f6ef"}.items()
}
PIECE_INK = {
    c: _rgb(v) for c, v in {"R": "#ffffff", "Y": "#2b2414", "G": "#ffffff", "B": "#ffffff", "W": "#2b2414"}.items()
}

# Digits 1-5 in a 3 x 5 bitmap font (rows top to bottom).
_DIGITS = {
    1: ["010", "110", "010", "010", "111"],
    2: ["111", "001", "111", "100", "111"],
    3: ["111", "001", "111", "001", "111"],
    4: ["101", "101", "111", "001", "001"],
    5: ["111", "100", "111", "001", "111"],
}


class _Canvas:
    """An RGB float image with the few shapes the board needs, in board coordinates."""

    def __init__(self, size: int, extent: float) -> None:
        self.size = size
        self.scale = size / (2 * extent)
        self.extent = extent
        self.img = np.empty((size, size, 3), dtype=np.float32)
        self.img[:] = BACKGROUND

    def px(self, x: float, y: float) -> tuple[float, float]:
        """Pixel coordinates (column, row) of a board point (y up)."""
        return (x + self.extent) * self.scale, (self.extent - y) * self.scale

    def _box(self, x0: float, y0: float, x1: float, y1: float) -> tuple[slice, slice, np.ndarray, np.ndarray]:
        c0, c1 = max(int(np.floor(min(x0, x1))), 0), min(int(np.ceil(max(x0, x1))) + 1, self.size)
        r0, r1 = max(int(np.floor(min(y0, y1))), 0), min(int(np.ceil(max(y0, y1))) + 1, self.size)
        rr, cc = np.mgrid[r0:r1, c0:c1]
        return slice(r0, r1), slice(c0, c1), cc + 0.5, rr + 0.5

    def paint(self, rows: slice, cols: slice, inside: np.ndarray, colour: np.ndarray, alpha: float = 1.0) -> None:
        view = self.img[rows, cols]
        view[inside] = view[inside] * (1 - alpha) + colour * alpha

    def polygon(self, points: list[tuple[float, float]], colour: np.ndarray, alpha: float = 1.0) -> None:
        """Fill a polygon given in pixel coordinates (even-odd rule)."""
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        rows, cols, x, y = self._box(min(xs), min(ys), max(xs), max(ys))
        inside = np.zeros(x.shape, dtype=bool)
        n = len(points)
        for i in range(n):
            (xa, ya), (xb, yb) = points[i], points[(i + 1) % n]
            if ya == yb:
                continue
            crosses = (ya > y) != (yb > y)
            at = xa + (y - ya) * (xb - xa) / (yb - ya)
            inside ^= crosses & (x < at)
        self.paint(rows, cols, inside, colour, alpha)

    def rounded_rect(
        self, cx: float, cy: float, w: float, h: float, r: float, colour: np.ndarray, alpha: float = 1.0
    ) -> None:
        """Fill a rounded rectangle centred on the pixel point (cx, cy)."""
        rows, cols, x, y = self._box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        dx = np.maximum(np.abs(x - cx) - (w / 2 - r), 0)
        dy = np.maximum(np.abs(y - cy) - (h / 2 - r), 0)
        inside = (np.abs(x - cx) <= w / 2) & (np.abs(y - cy) <= h / 2) & (dx * dx + dy * dy <= r * r)
        self.paint(rows, cols, inside, colour, alpha)

    def line(
        self, a: tuple[float, float], b: tuple[float, float], width: float, colour: np.ndarray, alpha: float = 1.0
    ) -> None:
        """A thick segment between two pixel points."""
        pad = width
        rows, cols, x, y = self._box(
            min(a[0], b[0]) - pad, min(a[1], b[1]) - pad, max(a[0], b[0]) + pad, max(a[1], b[1]) + pad
        )
        vx, vy = b[0] - a[0], b[1] - a[1]
        length2 = vx * vx + vy * vy or 1.0
        t = np.clip(((x - a[0]) * vx + (y - a[1]) * vy) / length2, 0, 1)
        d2 = (x - a[0] - t * vx) ** 2 + (y - a[1] - t * vy) ** 2
        self.paint(rows, cols, d2 <= (width / 2) ** 2, colour, alpha)

    def digit(self, n: int, cx: float, cy: float, height: float, colour: np.ndarray) -> None:
        """A digit 1-5 centred on a pixel point."""
        cell = max(height / 5, 1.0)
        for r, row in enumerate(_DIGITS[n]):
            for c, bit in enumerate(row):
                if bit == "1":
                    x0 = cx + (c - 1.5) * cell
                    y0 = cy + (r - 2.5) * cell
                    self.rounded_rect(x0 + cell / 2, y0 + cell / 2, cell, cell, 0.01, colour)


_BASE: dict[tuple[str, int], np.ndarray] = {}
_EXTENT = 5.3


def _base(topology: Topology, size: int) -> np.ndarray:
    """The parts that never change: background, wooden outline, camp tints (cached)."""
    key = (topology.name, size)
    if key not in _BASE:
        canvas = _Canvas(size, _EXTENT)
        if topology.outline:
            canvas.polygon([canvas.px(x, y) for x, y in topology.outline], WOOD)
        for camp, colour in (("south", SOUTH), ("north", NORTH)):
            cells = [c for c in topology.cells if str(c.camp) == camp]
            if not cells:
                continue
            x0, x1 = min(c.x for c in cells) - 0.5, max(c.x for c in cells) + 0.5
            y0, y1 = min(c.y for c in cells) - 0.5, max(c.y for c in cells) + 0.5
            a, b = canvas.px(x0, y1), canvas.px(x1, y0)
            canvas.rounded_rect((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, b[0] - a[0], b[1] - a[1], 8, colour, 0.12)
        _BASE[key] = canvas.img.copy()
    return _BASE[key]


def render_rgb(game: Game, size: int = 600) -> np.ndarray:
    """The board of ``game`` as an ``(size, size, 3)`` ``uint8`` RGB image (see the module docstring)."""
    topo = game.topology
    canvas = _Canvas(size, _EXTENT)
    canvas.img[:] = _base(topo, size)
    unit = canvas.scale
    where = {c.name: (c.x, c.y) for c in topo.cells}
    leaders = game.leaders()
    # alignments, coloured by their leader
    for a in topo.alignments:
        who = leaders.get(a.name)
        colour = SOUTH if str(who) == "south" else NORTH if str(who) == "north" else NEUTRAL_LINE
        ends = [canvas.px(*where[a.cells[0]]), canvas.px(*where[a.cells[-1]])]
        canvas.line(ends[0], ends[1], 0.09 * unit if who else 0.05 * unit, colour, 0.75 if who else 0.4)
    # monolith triangles at the edges
    for t in topo.triangles:
        cx, cy = canvas.px(t.x, t.y)
        r = 0.32 * unit
        up = -1 if str(t.side) == "north" else 1  # points towards the board
        pts = [(cx, cy - up * r), (cx - r, cy + up * r * 0.7), (cx + r, cy + up * r * 0.7)]
        held = str(leaders.get(t.alignment)) == str(t.side)
        canvas.polygon(pts, WOOD_EDGE)
        inner = [(cx, cy - up * r * 0.72), (cx - r * 0.7, cy + up * r * 0.5), (cx + r * 0.7, cy + up * r * 0.5)]
        canvas.polygon(inner, (SOUTH if str(t.side) == "south" else NORTH) if held else TRIANGLE)
    # cells and towers
    state = game.state
    last = game.tables.cell_names[state.last_cell] if state.last_cell >= 0 else None
    camps = {c.name: str(c.camp) for c in topo.cells}
    side = 0.86 * unit
    for name, (x, y) in where.items():
        cx, cy = canvas.px(x, y)
        edge = LAST if name == last else CELL_EDGE
        thick = 0.06 * unit if name == last else 0.025 * unit
        canvas.rounded_rect(cx, cy, side + 2 * thick, side + 2 * thick, 0.16 * unit, edge)
        canvas.rounded_rect(cx, cy, side, side, 0.14 * unit, CELL.get(camps[name], CELL[None]))
        tower = game.tower(name)
        bar = side * 0.23
        for level, piece in enumerate(tower):
            w = side * (30 + piece.size * 10.5) / 100
            by = cy + side * 0.42 - bar * (level + 0.5)  # bottom piece lowest
            colour = piece.colour.value
            top = level == len(tower) - 1
            canvas.rounded_rect(cx, by, w + 2, bar - 1, 3, INK if top else WOOD_EDGE, 1.0 if top else 0.5)
            canvas.rounded_rect(cx, by, w - 2, bar - 4, 3, PIECE_FILL[colour])
            canvas.digit(piece.size, cx, by, bar * 0.62, PIECE_INK[colour])
    return np.clip(canvas.img + 0.5, 0, 255).astype(np.uint8)
