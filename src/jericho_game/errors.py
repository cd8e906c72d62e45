"""Exception classes.  Every error names what was wrong, so callers can show it as is."""

from __future__ import annotations

__all__ = [
    "JerichoError",
    "IllegalMoveError",
    "PositionError",
    "RecordError",
    "TopologyError",
]


class JerichoError(Exception):
    """Base class of every error this package raises on purpose."""


class IllegalMoveError(JerichoError, ValueError):
    """A move is malformed or breaks a rule; the message says which and why."""


class PositionError(JerichoError, ValueError):
    """A position string is malformed or describes an impossible state; names the bad field."""


class RecordError(JerichoError, ValueError):
    """A game record cannot be read; ``line`` and ``column`` locate the fault (1-based)."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        self.line = line
        self.column = column
        self.reason = message
        where = f"line {line}, column {column}: " if line else ""
        super().__init__(where + message)


class TopologyError(JerichoError, ValueError):
    """A board description breaks an invariant of RULES.md §1."""
