"""Move deltas on the game WebSocket (issue 57): what changed between two public states.

After the first whole ``state``, a client that asked for deltas (protocol 2: ``/ws/{id}?proto=2``)
gets each later state as a ``delta`` (docs/web.md, "WebSocket protocol"): the top-level fields
whose value changed, with three narrower forms for the big ones:

- ``move``: the one move appended to ``moves`` (instead of the whole list);
- ``patch`` ``{field: {key: value}}``: the keys of an object field (``confrontations``,
  ``leaders``, ``seats``, ``towers`` ...) whose value changed, when the field keeps the same keys
  in the same order (else the field is sent whole in ``set``, so the client's key order is the
  server's);
- ``legal``: the legal placements as ``{cells, not}``: ``cells`` every cell some piece may take,
  in the order of the lists, and ``not`` ``[[piece, [index, ...]], ...]`` the indices of the
  cells each piece may not take (sent this way only when it rebuilds the lists exactly).

:func:`diff` builds a delta, :func:`apply` is the Python mirror of ``static/delta.js``'s
``apply``: ``apply(old, diff(old, new)) == new`` for any two states.  A delta names the
sequence number of the state it applies to (``from``) and its own (``seq``); a client whose copy
is at another number asks for the whole state (``sync``) and never guesses.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PROTOCOL", "diff", "apply", "encode_legal", "decode_legal"]

#: The protocol version that understands deltas (1, or none given: whole states only).
PROTOCOL = 2


def encode_legal(legal: dict[str, list[str]]) -> dict[str, Any] | None:
    """``legal`` as ``{cells, not}`` (module docstring), or None where that form would not rebuild it."""
    # the board's order (rank, then file: a1, b1, ..., a2), in which the engine lists the cells
    cells = sorted({c for targets in legal.values() for c in targets}, key=lambda c: (len(c), c[1:], c[0]))
    index = {c: i for i, c in enumerate(cells)}
    out: list[list[Any]] = []
    for piece, targets in legal.items():
        have = {index[c] for c in targets}
        if [index[c] for c in targets] != sorted(have):
            return None  # a list not in the union's order: the compact form would reorder it
        out.append([piece, [i for i in range(len(cells)) if i not in have]])
    return {"cells": cells, "not": out}


def decode_legal(packed: dict[str, Any]) -> dict[str, list[str]]:
    """The legal placements from their ``{cells, not}`` form."""
    cells = packed["cells"]
    legal: dict[str, list[str]] = {}
    for piece, missing in packed["not"]:
        skip = set(missing)
        legal[piece] = [c for i, c in enumerate(cells) if i not in skip]
    return legal


def diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """The delta taking ``old`` to ``new`` (without ``type``, ``from``, ``seq``), or None where the
    two states do not have the same fields in the same order (then the whole state is sent)."""
    if list(old) != list(new):
        return None
    out: dict[str, Any] = {}
    put: dict[str, Any] = {}
    patch: dict[str, dict[str, Any]] = {}
    for key, value in new.items():
        before = old[key]
        if before == value:
            continue
        if key == "moves" and len(value) == len(before) + 1 and value[:-1] == before:
            out["move"] = value[-1]
        elif key == "legal" and isinstance(value, dict) and (packed := encode_legal(value)) is not None:
            out["legal"] = packed
        elif isinstance(before, dict) and isinstance(value, dict) and list(before) == list(value):
            patch[key] = {k: v for k, v in value.items() if before[k] != v}
        else:
            put[key] = value
    if put:
        out["set"] = put
    if patch:
        out["patch"] = patch
    return out


def apply(state: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """``state`` with ``delta`` applied, as a new object (``state`` is left as it was)."""
    new = dict(state)
    for key, value in delta.get("set", {}).items():
        new[key] = value
    for key, changes in delta.get("patch", {}).items():
        new[key] = {**new[key], **changes}
    if "move" in delta:
        new["moves"] = [*new["moves"], delta["move"]]
    if "legal" in delta:
        new["legal"] = decode_legal(delta["legal"])
    return new
