"""Time controls of a new game (issue 23): minutes each, a Fischer increment, days per move."""

from __future__ import annotations

import pytest

from jericho_game.web.round.timecontrol import DAY, TimeControl, credit, parse
from jericho_game.web.storage.database import GameRecord


def test_the_time_controls_offered_parse_and_bad_ones_are_named() -> None:
    assert parse({}, "online", 1) == TimeControl()
    assert parse({"clock": 5, "increment": 3}, "ai", 1) == TimeControl(300.0, 3.0)
    assert parse({"clock": 10, "increment": 0}, "online", 1) == TimeControl(600.0)
    assert parse({"clock": 5, "increment": 1}, "ai", 1) == TimeControl(300.0, 1.0)
    assert parse({"clock": 5, "increment": 60.0}, "ai", 1) == TimeControl(300.0, 60.0)
    assert parse({"per_move_days": 3}, "online", 1) == TimeControl(3 * DAY, None, 3)
    for spec, mode, why in [
        ({"per_move_days": 4}, "online", "one of 1, 2, 3, 5, 7, 14"),
        ({"per_move_days": True}, "online", "one of"),
        ({"per_move_days": 3}, "ai", "online games only"),
        ({"per_move_days": 3, "clock": 5}, "online", "one or the other"),
        ({"increment": 5}, "ai", "needs a clock"),
        ({"clock": 5, "increment": 61}, "ai", "between 1 and 60"),
        ({"clock": 5, "increment": -1}, "ai", "between 1 and 60"),
        ({"clock": 5, "increment": "5"}, "ai", "between 1 and 60"),
        ({"clock": 5, "increment": 0.001}, "ai", "whole seconds per move between 1 and 60"),  # issue 33, 10
        ({"clock": 5, "increment": 0.5}, "ai", "between 1 and 60"),
        ({"clock": 5, "increment": 2.5}, "ai", "whole seconds"),
        ({"clock": 500}, "ai", "between 1 and 180"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse(spec, mode, 1)


def test_credit_adds_the_increment_or_resets_a_correspondence_clock() -> None:
    rec = GameRecord(id="g", mode="ai")
    TimeControl(300.0, 3.0).apply(rec)
    rec.south_time = 250.5
    credit(rec, "south")
    assert rec.south_time == 253.5 and rec.north_time == 300.0
    corr = GameRecord(id="c", mode="online")
    TimeControl(2 * DAY, None, 2).apply(corr)
    corr.north_time = 1000.0
    credit(corr, "north")
    assert corr.north_time == 2 * DAY and corr.per_move_days == 2
    plain = GameRecord(id="p", mode="ai")
    credit(plain, "south")
    assert plain.south_time is None
