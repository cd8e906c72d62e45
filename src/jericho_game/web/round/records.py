"""A game's record as text (``.jgn``), for the downloads of the game, review and "my games" routes.

:func:`jericho_game.record.write_record` writes it; should that fail (or be missing), a plain
record of tags and numbered moves is written instead, so a record is always downloadable.
"""

from __future__ import annotations

import logging

from jericho_game.game import Game

__all__ = ["write_game_record"]

log = logging.getLogger("jericho_game.web")


def _minimal_record(game: Game, tags: dict[str, str]) -> str:
    """A plain record (tags, then numbered moves) used when jericho_game.record is not available."""
    lines = [f'[{k} "{v}"]' for k, v in tags.items()]
    moves = [str(m) for m in game.history]
    body = []
    for i in range(0, len(moves), 2):
        body.append(f"{i // 2 + 1}. " + " ".join(moves[i : i + 2]))
    lines.append("")
    lines.append(" ".join(body) + (" " if body else "") + tags.get("Result", "*"))
    return "\n".join(lines) + "\n"


def write_game_record(game: Game, tags: dict[str, str]) -> str:
    """The game record text, by :func:`jericho_game.record.write_record` when that module exists."""
    try:
        from jericho_game.record import write_record  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return _minimal_record(game, tags)
    try:
        return str(write_record(game, tags))
    except Exception:  # noqa: BLE001 - a record must always be downloadable
        log.exception("jericho_game.record.write_record failed; writing a minimal record")
        return _minimal_record(game, tags)
