"""The web server's per-move rendering cost, for ``jericho bench`` (when the ``web`` extra is installed).

A busy server renders one public state per move; that was its largest cost per move under
``jericho loadtest`` (docs/web.md).  The figure replays what the server does: 200 games at once,
a random move in a random game at a time, each new version rendered from the previous one's
parts (as :meth:`CommitPipeline.commit` hands them on), after a warm-up that fills the fragment
memo as a running server's is.
"""

from __future__ import annotations

import random
import time

from jericho_game.game import Game
from jericho_game.web.round.rooms import GameService, Room
from jericho_game.web.round.roomstate import StateView
from jericho_game.web.storage.database import GameRecord

__all__ = ["figures"]

Figure = tuple[str, float, str]


def figures(seconds: float = 3.0, games: int = 200, seed: int = 1) -> list[Figure]:
    """States per second: the version-dependent part of the public state, each of a new position."""
    rng = random.Random(seed)
    service = GameService.__new__(GameService)  # rendering needs no database
    service.account_name = lambda account: None  # type: ignore[method-assign]
    service.view = StateView(service)  # the state's rendering (web/round/roomstate.py)
    played = [Game() for _ in range(games)]
    rooms = [Room(GameRecord(id=f"g{i}", mode="hotseat", moves=[]), Game()) for i in range(games)]
    for room in rooms:
        service.view.board(room)

    def step() -> float:
        # one move of a random game, then its new state rendered: the seconds the rendering took
        i = rng.randrange(games)
        game = played[i]
        if game.is_over():
            played[i] = game = Game()
            rooms[i] = Room(GameRecord(id=f"g{i}", mode="hotseat", moves=[]), Game())
            service.view.board(rooms[i])
        game.play(rng.choice(game.legal_moves()))
        old = rooms[i]
        rec = GameRecord(id=f"g{i}", mode="hotseat", moves=[*old.rec.moves, str(game.history[-1])])
        rec.version = old.rec.version + 1
        new = rooms[i] = Room(rec, game.copy())
        new.prior = old.rendered or old.prior
        start = time.perf_counter()
        service.view.board(new)
        return time.perf_counter() - start

    for _ in range(min(20_000, int(seconds * 7_000))):  # a running server's memo (a short run: less)
        step()
    spent, done, start = 0.0, 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        spent += step()
        done += 1
    return [(f"web public state (board part), new positions of {games} games", done / spent, "states/s")]
