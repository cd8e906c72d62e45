"""What the position search of a player's games costs (docs/web.md, "A player's games and statistics").

``.venv/bin/python tests/web/people/gamesearch_cost.py [DB]`` (a SQLite file or a PostgreSQL URL; a
fresh SQLite file by default): one account with 1,000 finished hot-seat games of up to 40 random plies,
then the best of three searches of a page of 100 without a position, and with positions no game
reached after 12 and after 28 plies: first with the position index empty (the games replayed, at most
``MAX_SCAN``: as a game not indexed yet is searched), then once the indexer has filled it (a query);
the time the indexer took for the 1,000 games, the index's rows, an export of 200 games; and the load
average.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time

from argon2 import PasswordHasher
from sqlalchemy import text

from jericho_game.game import Game
from jericho_game.kernel import describe
from jericho_game.web.accounts.accounts import AccountService
from jericho_game.web.people.gamesearch import GameSearch
from jericho_game.web.round.records import write_game_record
from jericho_game.web.round.rooms import GameService
from jericho_game.web.storage.database import GameRecord, Storage, resolve_db_url


def best_of_three(search: GameSearch, me: int, label: str, query: dict[str, str]) -> None:
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        page = search.page("bench", {**query, "limit": "100"}, me)
        times.append(time.perf_counter() - t0)
    found, replayed = len(page["games"]), page["scanned"]
    print(f"{label}: {min(times) * 1000:.0f} ms (best of 3), {found} found, {replayed} replayed")


def main(db: str | None = None) -> None:
    storage = Storage(resolve_db_url(db or os.path.join(tempfile.mkdtemp(), "cost.sqlite3")))
    accounts = AccountService(storage, hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    me = accounts.create_account("bench", "a long enough password").id
    rng = random.Random(1)
    plies = []
    for i in range(1000):
        g, moves = Game(), list[str]()
        while len(moves) < 40 and not g.is_over():
            moves.append(str(rng.choice(g.legal_moves())))
            g.play(moves[-1])
        plies.append(len(moves))
        over = g.is_over()  # as the rules ended it, else agreed drawn (an export writes the game's own result)
        result, reason = (g.outcome(), "seven") if over else ("draw", "agreed")
        rec = GameRecord(
            id=f"b{i:04d}",
            mode="hotseat",
            south_account=me,
            north_account=me,
            moves=moves,
            result=result,
            reason=reason,
        )
        rec.created_at = 1e9 + i
        storage.create(rec)
    positions = {}
    for n in (12, 28):  # the last legal move each time: a line random play does not follow
        g = Game()
        for _ in range(n):
            g.play(g.legal_moves()[-1])
        positions[n] = g.position()
    service = GameService(storage)
    search = GameSearch(storage, accounts, service)
    print(describe(), f"; 1,000 games, {sum(plies) / len(plies):.1f} plies on average")
    runs = {
        "no position": {},
        "after 12 plies": {"position": positions[12]},
        "after 28 plies": {"position": positions[28]},
    }
    for label, query in runs.items():
        best_of_three(search, me, f"{label}, index empty", query)
    t0 = time.perf_counter()
    while search.indexer.round():
        pass
    took = time.perf_counter() - t0
    with storage.reader.connect() as conn:
        rows = conn.execute(text("SELECT count(*) FROM game_positions")).scalar_one()
    print(f"indexing 1,000 games: {took:.2f} s of rounds (one thread), {rows} rows")
    for label, query in list(runs.items())[1:]:
        best_of_three(search, me, f"{label}, indexed", query)
    t0 = time.perf_counter()
    _body, count = search.export("bench", {}, write_game_record, me)
    print(f"export of {count} games: {(time.perf_counter() - t0) * 1000:.0f} ms")
    print("load average:", " ".join(f"{x:.1f}" for x in os.getloadavg()))
    service.close()
    storage.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
