"""Clocks that wait for the first move (issue 52, point 2), on SQLite and PostgreSQL.

A side's clock starts at its own first move (lichess's rule): the time before it is not counted,
whoever is to move.  An online game whose side to move has not moved yet is aborted (no result)
when that move does not come within 30 s (a correspondence game: its days per move), by every
process's sweep, with nobody connected, exactly once; the state counts it down (``first_move``).
Against the AI and in hot-seat games the clock waits the same, with no abort.  Every test moves a
fake clock (the service's ``clock=``): no wall-clock bound."""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from starlette.testclient import TestClient

from jericho_game.record import read_record  # noqa: E402
from jericho_game.web.round.rooms import GameService  # noqa: E402
from jericho_game.web.round.timecontrol import DAY, FIRST_MOVE  # noqa: E402
from jericho_game.web.server import Limits, create_app  # noqa: E402
from jericho_game.web.storage.database import Storage, resolve_db_url  # noqa: E402
from tests.web.test_server import another, create  # noqa: E402


class Clock:
    """A wall clock the test moves by hand (the game clocks, the first move's time, the sweep)."""

    def __init__(self) -> None:
        self.t = 1_900_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def client(db: str, clock: Clock) -> Iterator[TestClient]:
    with TestClient(create_app(db, ai_processes=0, limits=Limits(sweep=0.05), clock=clock)) as c:
        yield c


def state(c: TestClient, game_id: str) -> dict[str, Any]:
    r = c.get(f"/api/games/{game_id}")
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def move(c: TestClient, game_id: str, side: str) -> Any:
    """Play the first legal move for ``side`` through the room service (on the app's event loop)."""
    svc: GameService = c.app.state.service  # type: ignore[attr-defined]
    mv = str(svc.room(game_id).game.legal_moves()[0])
    return c.portal.call(svc.move, game_id, frozenset({side}), mv, None)  # type: ignore[union-attr]


def online_game(c: TestClient, **spec: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A lobby seek by Ada (South) joined by Brice (North), from another address."""
    g = create(c, mode="online", side="south", public=True, name="Ada", **spec)
    with another(c, "198.51.100.7") as b:
        j = b.post(f"/api/games/{g['id']}/join", json={"name": "Brice"})
    assert j.status_code == 200, j.text
    return g, j.json()


def until_over(c: TestClient, game_id: str) -> dict[str, Any]:
    """The state once the game is over: nobody is connected, so only the sweep can end it (it
    looks every 0.05 s; the wait's bound is generous and no part of the test's claim)."""
    end = time.monotonic() + 60
    while (st := state(c, game_id))["status"] != "over":
        assert time.monotonic() < end, "the sweep never ended the game"
        time.sleep(0.05)
    return st


def test_a_one_minute_online_game_counts_no_time_before_each_sides_first_move(client: TestClient, clock: Clock) -> None:
    g, _ = online_game(client, clock=1)
    clock.t += 5  # the page loads, the player looks at the board
    st = state(client, g["id"])
    assert st["clock"]["south"] == 60 and st["clock"]["north"] == 60 and st["clock"]["running"] is None
    assert st["first_move"] == {"side": "south", "left": FIRST_MOVE - 5, "limit": FIRST_MOVE}
    assert st["deadline"] == pytest.approx(clock.t + FIRST_MOVE - 5)  # the abort, stored for the sweep
    clock.t += 15
    assert move(client, g["id"], "south").error is None
    st = state(client, g["id"])
    # South's first move cost nothing; North's clock waits for North's own first move
    assert st["clock"]["south"] == 60 and st["clock"]["north"] == 60 and st["clock"]["running"] is None
    assert st["first_move"] == {"side": "north", "left": FIRST_MOVE, "limit": FIRST_MOVE}
    clock.t += 20
    st = state(client, g["id"])
    assert st["clock"]["north"] == 60 and st["first_move"]["left"] == FIRST_MOVE - 20
    assert move(client, g["id"], "north").error is None
    st = state(client, g["id"])
    # both have moved: from now on the clocks run, South's first
    assert st["clock"]["running"] == "south" and st["first_move"] is None
    assert st["clock"]["south"] == 60 and st["clock"]["north"] == 60
    clock.t += 5
    assert state(client, g["id"])["clock"]["south"] == 55
    assert move(client, g["id"], "south").error is None
    clock.t += 7
    st = state(client, g["id"])
    assert st["clock"]["south"] == 55 and st["clock"]["north"] == 53 and st["clock"]["running"] == "north"
    assert st["deadline"] == pytest.approx(clock.t + 53)


def test_no_increment_is_added_for_a_first_move(client: TestClient, clock: Clock) -> None:
    g, _ = online_game(client, clock=1, increment=2)
    clock.t += 10
    move(client, g["id"], "south")
    clock.t += 10
    move(client, g["id"], "north")
    st = state(client, g["id"])
    assert st["clock"]["south"] == 60 and st["clock"]["north"] == 60  # no clock ran: nothing to give back
    clock.t += 10
    move(client, g["id"], "south")
    assert state(client, g["id"])["clock"]["south"] == 52  # 60 - 10 + 2


def test_a_first_move_that_never_comes_aborts_the_game_with_nobody_connected(
    client: TestClient, clock: Clock, db: str
) -> None:
    g, _ = online_game(client, clock=1)
    clock.t += FIRST_MOVE - 1
    time.sleep(0.3)  # several sweeps: not due yet
    assert state(client, g["id"])["status"] == "playing"
    clock.t += 1.5
    st = until_over(client, g["id"])  # nobody has the game open: the sweep aborts it
    assert st["result"] is None and st["reason"] == "aborted" and st["no_start"] == "south"
    assert st["first_move"] is None and st["clock"]["running"] is None
    rec = read_record(client.get(f"/api/games/{g['id']}/record").text)
    assert rec.tags["Result"] == "*" and rec.tags["Termination"].startswith("aborted: South's first move")
    # North's first move, the same: after South's, North has its own 30 s
    g2, _ = online_game(client, clock=1)
    clock.t += 20
    move(client, g2["id"], "south")
    clock.t += FIRST_MOVE + 0.5
    st = until_over(client, g2["id"])
    assert st["result"] is None and st["reason"] == "aborted" and st["no_start"] == "north"
    # ended once: no more versions however many sweeps come
    version = st["version"]
    time.sleep(0.3)
    assert state(client, g2["id"])["version"] == version
    # nothing rated: an aborted game has no result
    storage = Storage(resolve_db_url(db))
    try:
        rec2 = storage.load(g2["id"])
        assert rec2 is not None and rec2.result is None and rec2.deadline is None
    finally:
        storage.close()


def test_a_late_first_move_is_refused_and_the_abort_falls_exactly_once_across_processes(db: str) -> None:
    clock = Clock()
    app = create_app(db, ai_processes=0, limits=Limits(sweep=3600.0), clock=clock)  # no sweep: by hand
    with TestClient(app) as c:
        g, _ = online_game(c, clock=3)
        before = state(c, g["id"])["version"]
        clock.t += FIRST_MOVE + 1
        # two processes' sweeps (two services on the one database) find it due; one ends it
        other = GameService(Storage(resolve_db_url(db)), clock=clock)
        try:
            assert g["id"] in other.storage.due(clock.t)
            changes = [other.flag(g["id"]), app.state.service.flag(g["id"]), other.flag(g["id"])]
        finally:
            other.close()
            other.storage.close()
        assert sum(ch is not None for ch in changes) == 1
        st = state(c, g["id"])
        assert st["reason"] == "aborted" and st["version"] == before + 1
        # a move arriving late is refused, naming why
        g2, _ = online_game(c, clock=3)
        clock.t += FIRST_MOVE + 1
        change = move(c, g2["id"], "south")
        assert change.error is not None and change.error.code == "game_over"
        assert "first move did not come within 0:30" in change.error.message
        st = state(c, g2["id"])
        assert st["reason"] == "aborted" and st["moves"] == []


def test_an_online_rematch_waits_for_its_first_move_and_is_aborted_without_it(client: TestClient, clock: Clock) -> None:
    g, j = online_game(client, clock=1)
    move(client, g["id"], "south")
    svc: GameService = client.app.state.service  # type: ignore[attr-defined]
    svc.resign(g["id"], frozenset({"north"}))
    new_id = svc.rematch(g["id"], frozenset({"south"})).rematch_id
    assert new_id
    clock.t += 10
    st = state(client, new_id)
    assert st["clock"]["south"] == 60 and st["clock"]["running"] is None
    assert st["first_move"] == {"side": "south", "left": FIRST_MOVE - 10, "limit": FIRST_MOVE}
    clock.t += FIRST_MOVE
    st = until_over(client, new_id)
    assert st["reason"] == "aborted" and st["result"] is None and st["no_start"] == "south"


def test_a_correspondence_game_aborts_when_a_first_move_misses_its_days(client: TestClient, clock: Clock) -> None:
    g, _ = online_game(client, per_move_days=1)
    st = state(client, g["id"])
    assert st["first_move"] == {"side": "south", "left": DAY, "limit": DAY} and st["clock"]["running"] is None
    clock.t += DAY / 2
    move(client, g["id"], "south")
    st = state(client, g["id"])
    # North has its full days per move, counted down as its first move's time, not its clock
    assert st["clock"]["south"] == DAY and st["clock"]["running"] is None
    assert st["first_move"]["side"] == "north" and st["deadline"] == pytest.approx(clock.t + DAY)
    clock.t += DAY + 1
    st = until_over(client, g["id"])
    assert st["reason"] == "aborted" and st["result"] is None and st["no_start"] == "north"


def test_against_the_ai_the_clocks_wait_and_nothing_is_aborted(client: TestClient, clock: Clock) -> None:
    # the AI plays South: its first move is not timed, nor the person's before their first move.
    # The clock starts at the real time: the AI game's own abort (issue 51) reads stored times
    clock.t = time.time()
    g = create(client, mode="ai", side="north", level="random", clock=1)
    end = time.monotonic() + 60
    while (st := state(client, g["id"]))["ply"] < 1:
        assert time.monotonic() < end, "the AI never moved"
        time.sleep(0.05)
    assert st["clock"]["south"] == 60 and st["clock"]["north"] == 60 and st["clock"]["running"] is None
    assert st["first_move"] is None and st["deadline"] is None  # the AI game's abort is issue 51's
    clock.t += 45
    assert state(client, g["id"])["clock"]["north"] == 60
    assert move(client, g["id"], "north").error is None
    while (st := state(client, g["id"]))["ply"] < 3 or st["turn"] != "north":
        assert time.monotonic() < end, "the AI never answered"
        time.sleep(0.05)
    # both have moved: the person's clock runs from the AI's reply
    assert st["clock"]["running"] == "north" and st["clock"]["north"] == 60
    clock.t += 4
    assert state(client, g["id"])["clock"]["north"] == 56


def test_a_hotseat_clock_waits_for_each_sides_first_move_without_an_abort(client: TestClient, clock: Clock) -> None:
    g = create(client, mode="hotseat", clock=1)
    clock.t += 20
    move(client, g["id"], "south")
    clock.t += FIRST_MOVE + 10  # one person at the board: nobody to wait for, no abort
    time.sleep(0.3)
    st = state(client, g["id"])
    assert st["status"] == "playing" and st["first_move"] is None and st["clock"]["running"] is None
    assert st["clock"]["south"] == 60 and st["clock"]["north"] == 60
    move(client, g["id"], "north")
    clock.t += 5
    st = state(client, g["id"])
    assert st["clock"]["running"] == "south" and st["clock"]["south"] == 55 and st["clock"]["north"] == 60
