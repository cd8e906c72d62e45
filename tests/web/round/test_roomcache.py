"""The room cache (jericho_game.web.round.roomcache): what a committed room inherits from the cached one."""

from __future__ import annotations

import asyncio

from jericho_game.game import Game
from jericho_game.web.round.gameroom import Room
from jericho_game.web.round.roomcache import RoomCache
from jericho_game.web.storage.database import GameRecord


def _room(version: int) -> Room:
    rec = GameRecord(id="g1", mode="online")
    rec.version = version
    return Room(rec, Game())


def test_a_committed_room_keeps_the_presence_the_event_loop_read_meanwhile() -> None:
    """The database thread builds the committed room with a copy of the cached room's presence;
    a presence re-read on the event loop may replace the cached room's presence before the
    committed room is kept.  The kept room must show the newer presence, not the copy."""

    async def scenario() -> Room | None:
        cache = RoomCache(max_rooms=8)
        cache.bind()
        old = _room(1)
        old.present = {"south": 1, "north": 0, "watchers": 2, "away": {}}
        cache.keep(old)
        new = _room(2)
        new.present = old.present  # the commit's copy (CommitPipeline.commit, RoomCache.build)
        old.present = {"south": 1, "north": 0, "watchers": 1, "away": {}}  # the loop's re-read lands
        cache.keep(new)
        return cache.get("g1")

    kept = asyncio.run(scenario())
    assert kept is not None and kept.version == 2
    assert kept.present["watchers"] == 1


def test_an_older_room_does_not_replace_a_newer_one() -> None:
    async def scenario() -> Room | None:
        cache = RoomCache(max_rooms=8)
        cache.bind()
        cache.keep(_room(3))
        cache.keep(_room(2))
        return cache.get("g1")

    kept = asyncio.run(scenario())
    assert kept is not None and kept.version == 3
