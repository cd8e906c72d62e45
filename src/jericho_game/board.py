"""Board topology as data: cells, alignments and triangles.

The engine never hard-codes the drawing of the board.  A :class:`Topology` is
loaded from a JSON document (the standard board ships as
``jericho_game/boards/standard.json``) and checked by :func:`validate` against the
invariants of RULES.md §1.  A variant board is therefore a data change: write
another JSON file and pass ``Topology.from_json(...)`` to :class:`jericho_game.Game`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from jericho_game.errors import TopologyError
from jericho_game.pieces import Side

__all__ = ["Cell", "Alignment", "Triangle", "Topology", "validate", "standard_topology"]


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell of the board: its name (``"c2"``), the camp it belongs to and drawing coordinates."""

    name: str
    camp: Side
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class Alignment:
    """A straight line of cells; ``cells`` run from South's end to North's end."""

    name: str
    kind: str
    cells: tuple[str, ...]

    @property
    def is_vertical(self) -> bool:
        """True for the frontal (column) alignments, False for diagonals."""
        return self.kind == "vertical"


@dataclass(frozen=True, slots=True)
class Triangle:
    """The triangle at one end of an alignment, where that side's monolith stands."""

    alignment: str
    side: Side
    x: float
    y: float


@dataclass(frozen=True)
class Topology:
    """A complete board: cells, alignments, triangles and the outline used for drawing.

    Build one with :meth:`from_dict` or :meth:`from_json`; both validate the data.
    """

    name: str
    cells: tuple[Cell, ...]
    alignments: tuple[Alignment, ...]
    triangles: tuple[Triangle, ...]
    outline: tuple[tuple[float, float], ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Topology:
        """Build and validate a topology from its JSON-shaped description."""
        try:
            topo = cls(
                name=str(data.get("name", "custom")),
                cells=tuple(Cell(str(c["name"]), Side(c["camp"]), float(c["x"]), float(c["y"])) for c in data["cells"]),
                alignments=tuple(
                    Alignment(str(a["name"]), str(a["kind"]), tuple(str(x) for x in a["cells"]))
                    for a in data["alignments"]
                ),
                triangles=tuple(
                    Triangle(str(t["alignment"]), Side(t["side"]), float(t["x"]), float(t["y"]))
                    for t in data.get("triangles", [])
                ),
                outline=tuple((float(p[0]), float(p[1])) for p in data.get("outline", [])),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise TopologyError(f"malformed topology data: {exc!r}") from exc
        validate(topo)
        return topo

    @classmethod
    def from_json(cls, text: str) -> Topology:
        """Parse a JSON document describing a board (see ``boards/standard.json``)."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TopologyError(f"topology is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise TopologyError("topology JSON must be an object")
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-shaped description, as read by :meth:`from_dict` (used by the web board)."""
        return {
            "name": self.name,
            "cells": [{"name": c.name, "camp": str(c.camp), "x": c.x, "y": c.y} for c in self.cells],
            "alignments": [{"name": a.name, "kind": a.kind, "cells": list(a.cells)} for a in self.alignments],
            "triangles": [{"alignment": t.alignment, "side": str(t.side), "x": t.x, "y": t.y} for t in self.triangles],
            "outline": [list(p) for p in self.outline],
        }

    def cell(self, name: str) -> Cell:
        """The cell called ``name``; raises ``KeyError`` if there is none."""
        for c in self.cells:
            if c.name == name:
                return c
        raise KeyError(name)

    def alignments_through(self, name: str) -> tuple[Alignment, ...]:
        """The alignments that pass through cell ``name`` (one vertical, at most one diagonal)."""
        return tuple(a for a in self.alignments if name in a.cells)


def validate(topo: Topology) -> None:
    """Check a topology against RULES.md §1; raise :class:`TopologyError` naming the broken rule."""
    names = [c.name for c in topo.cells]
    if len(set(names)) != len(names):
        raise TopologyError("cell names are not unique")
    anames = [a.name for a in topo.alignments]
    if len(set(anames)) != len(anames):
        raise TopologyError("alignment names are not unique")
    if not names:
        raise TopologyError("the board has no cells")
    south = [c for c in topo.cells if c.camp is Side.SOUTH]
    north = [c for c in topo.cells if c.camp is Side.NORTH]
    if len(south) != len(north):
        raise TopologyError(f"camps differ in size: south {len(south)}, north {len(north)}")
    camp = {c.name: c.camp for c in topo.cells}
    for a in topo.alignments:
        if a.kind not in ("vertical", "rising diagonal", "falling diagonal"):
            raise TopologyError(f"alignment {a.name}: unknown kind {a.kind!r}")
        unknown = [x for x in a.cells if x not in camp]
        if unknown:
            raise TopologyError(f"alignment {a.name} names unknown cells {unknown}")
        if len(set(a.cells)) != len(a.cells):
            raise TopologyError(f"alignment {a.name} repeats a cell")
        sides = {camp[x] for x in a.cells}
        if sides != {Side.SOUTH, Side.NORTH}:
            raise TopologyError(f"alignment {a.name} does not cross both camps")
        # Cells run from South's end: once the line has entered North's camp it stays there.
        seen_north = False
        for x in a.cells:
            if camp[x] is Side.NORTH:
                seen_north = True
            elif seen_north:
                raise TopologyError(f"alignment {a.name} is not listed from South's end")
    for c in topo.cells:
        through = [a for a in topo.alignments if c.name in a.cells]
        verticals = [a for a in through if a.is_vertical]
        diagonals = [a for a in through if not a.is_vertical]
        if len(verticals) != 1:
            raise TopologyError(f"cell {c.name} lies on {len(verticals)} verticals, not exactly 1")
        if len(diagonals) > 1:
            raise TopologyError(f"cell {c.name} lies on {len(diagonals)} diagonals, more than 1")
    if topo.triangles:
        want = {(a.name, s) for a in topo.alignments for s in (Side.SOUTH, Side.NORTH)}
        have = [(t.alignment, t.side) for t in topo.triangles]
        if len(set(have)) != len(have) or set(have) != want:
            raise TopologyError("triangles must be exactly one at each end of each alignment")


@cache
def standard_topology() -> Topology:
    """The standard board of RULES.md §2, loaded from ``boards/standard.json``."""
    text = resources.files("jericho_game").joinpath("boards/standard.json").read_text(encoding="utf-8")
    return Topology.from_json(text)
