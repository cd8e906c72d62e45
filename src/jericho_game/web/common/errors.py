"""The refused request every part of the web app raises: a code for programs, a message for people.

Below every feature (the budget policy refuses with it too, :mod:`jericho_game.web.common.budget`);
:mod:`jericho_game.web.round.gameroom` re-exports it where the room service has always named it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ClientError"]


class ClientError(Exception):
    """A refused request: ``code`` for programs, ``message`` for people; ``game``: a fresh state to show."""

    def __init__(self, code: str, message: str, status: int = 400, game: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.game = game
