"""Puzzles on the web: the ``/puzzles`` page, its API, and puzzle ratings in the database.

A puzzle's first move is right when the endgame solver proved it so (the puzzle's ``accept``:
every winning first move of a win puzzle, as lichess accepts any mate; the one holding move of a
defence puzzle); the fastest line is shown once the puzzle is done.

The puzzles are the package's proved set (:func:`jericho_game.ai.puzzles.shipped_puzzles`,
made by ``jericho puzzles make``); what changes lives in the database, so any server process
answers the same (docs/web.md, "Puzzles"):

* ``puzzle_players`` — one Glicko-2 rating per signed-in *solver* (``account:ID``).  As on lichess,
  only accounts move ratings (issue 33: 200 made-up browser tokens failing one puzzle took its rating
  from 1557 to 2415); an anonymous solver's progress is kept by its browser (``static/puzzles.js``);
* ``puzzle_attempts`` — one row per (account, puzzle), primary key: the first attempt is the
  only one that can be rated, however many processes race (a repeat is answered from the row,
  rating unchanged); with the client's address group;
* ``puzzle_ratings`` — each puzzle's own Glicko-2 rating (the puzzle "loses" when the solver wins),
  starting from the shipped rating.

``GET /api/puzzles/next`` picks, among the puzzles the solver has not tried, one of the few
whose rating is nearest the solver's; it does not carry the solution (issue 33: 30 of 30 solved in
0.2 s).  ``POST /api/puzzles/{id}/try`` checks one move of the line and plays the reply; for an
account, a wrong move is the attempt's failure and the line's last right move its success.
``POST /api/puzzles/{id}/hint`` tells the next move's cell (level 2) or piece and cell (level 3),
which makes an account's attempt a failure.  ``POST /api/puzzles/{id}/result`` ends the attempt
(giving up, or after the last move) and answers the solution: it is given only after an attempt.

What makes an attempt rated (issue 51, finding 6: an anonymous give-up answered the solution, then
an account solved 30 of 30 in 2.6 s, 1500 -> 2248; 60 puppets taking a hint took a puzzle from 1730
to 2211), as lichess rates only a real first try:

* ``puzzle_served`` — the puzzle each account was last served (``GET /api/puzzles/next`` or
  ``/api/puzzles/{id}``) and when: an attempt is rated only on that puzzle, at least
  :data:`MIN_SOLVE_SECONDS` after it was served;
* ``puzzle_seen`` — when a client group (address group, and account or anonymous) was shown a right
  move of a puzzle (the solution, a hint, a right move answered): an attempt on it is not rated when
  another client of the same group was shown one in the last :data:`SEEN_WINDOW` seconds;
* rated attempts spend the budget ``puzzle.rated`` (web/common/budget.py, ``puzzle_rate``);
* a solver's rating rises at most :data:`MAX_GAIN_PER_DAY` in any 24 hours;
* ``puzzle_movers`` — a puzzle's own rating moves only with a move played (a wrong move, or the
  line's last), by a solver whose puzzle rating is established (deviation at most
  :data:`PROVISIONAL_RD`), once per address group and puzzle.

An attempt that is not rated is still the account's first attempt (stored, counted in its solved
or failed, never rated later); the answer says why (``unrated``).
"""

from __future__ import annotations

import asyncio
import functools
import math
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import Column, Float, Index, Integer, MetaData, String, Table, inspect, select, text
from sqlalchemy.exc import IntegrityError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from jericho_game.ai.puzzles import KIND, THEME_NAMES, Budget, Puzzle, SearchLimit, refutation, shipped_puzzles
from jericho_game.errors import JerichoError
from jericho_game.game import Game
from jericho_game.web import i18n
from jericho_game.web.accounts.accounts import AccountService, _body
from jericho_game.web.accounts.glicko2 import Rating, update
from jericho_game.web.common.budget import BudgetPolicy, Who, costs, free
from jericho_game.web.i18n import reasons
from jericho_game.web.learn.tutorial import view
from jericho_game.web.round.rooms import ClientError
from jericho_game.web.storage.database import Storage

__all__ = ["PuzzleService", "puzzle_routes", "games_from_db", "puzzles_metadata"]

# a refused move in a puzzle; the English text is written in PuzzleService.try_move
NOT_ALLOWED = i18n.N_("Not allowed: {reason}.")

#: How many of the nearest-rated unseen puzzles the next one is drawn from (so two solvers of the
#: same rating do not all get the same sequence).
NEAREST = 8
#: A Puzzle Streak's step (issue 52: six puzzles climbed 1123 -> 1130, all wins in one): each next
#: puzzle is rated at least this many points above the last, drawn from a window of two steps, a
#: theme other than the last one's first, so the streak climbs the whole set (about 25 puzzles from
#: the easiest to the hardest) and mixes themes, as lichess's streak does.
STREAK_STEP = 25.0
#: A puzzle's rating deviation before anyone tried it.
PUZZLE_RD = 200.0
#: Hints at or past this many (1: the theme, 2: the cell, 3: the piece) make the attempt a failure.
COSTLY_HINTS = 2
#: The search budget of one refutation shown after a wrong move (pushes, seconds): a request can
#: cost at most this much CPU, and the answers are cached per position (they never change).
REFUTE_NODES, REFUTE_SECONDS = 150_000, 1.0
REFUTE_CACHE = 4096
#: An attempt is rated only this many seconds or more after its puzzle was served to the account
#: (issue 51: 30 puzzles were "solved" in 2.6 s); a quicker one is the account's first, unrated.
MIN_SOLVE_SECONDS = 2.0
#: A right move of a puzzle shown to a client group (the solution, a hint, a right move answered)
#: leaves the group's other clients' attempts at it unrated for this many seconds (a week).
SEEN_WINDOW = 7 * 86400.0
#: A solver's puzzle rating rises at most this much in any 24 hours (a capped win still counts as
#: solved, and its deviation shrinks as usual).
MAX_GAIN_PER_DAY = 200.0
DAY = 86400.0
#: A puzzle rating with a deviation above this is provisional (the page's "provisional", lichess's
#: 110): such a solver's attempts do not move the puzzles' own ratings.
PROVISIONAL_RD = 110.0

puzzles_metadata = MetaData()

puzzle_players = Table(
    "puzzle_players",
    puzzles_metadata,
    Column("player", String(80), primary_key=True),  # "account:ID" or "browser:SHA256"
    Column("rating", Float, nullable=False),
    Column("rd", Float, nullable=False),
    Column("volatility", Float, nullable=False),
    Column("solved", Integer, nullable=False),
    Column("failed", Integer, nullable=False),
    Column("updated_at", Float, nullable=False),
)

puzzle_attempts = Table(
    "puzzle_attempts",
    puzzles_metadata,
    Column("player", String(80), primary_key=True),
    Column("puzzle_id", String(16), primary_key=True),  # one rated attempt per solver and puzzle
    Column("at", Float, nullable=False),
    Column("solved", Integer, nullable=False),
    Column("rating_before", Float, nullable=False),
    Column("rating", Float, nullable=False),
    Column("address", String(64), nullable=True),  # the client address of the attempt (issue 33: rates)
)
Index("puzzle_attempts_recent", puzzle_attempts.c.player, puzzle_attempts.c.at)

puzzle_ratings = Table(
    "puzzle_ratings",
    puzzles_metadata,
    Column("puzzle_id", String(16), primary_key=True),
    Column("rating", Float, nullable=False),
    Column("rd", Float, nullable=False),
    Column("volatility", Float, nullable=False),
    Column("plays", Integer, nullable=False),
    Column("wins", Integer, nullable=False),  # attempts the solver got right
)

#: The puzzle each account was served last (issue 51): its attempt is rated only on this one, once
#: MIN_SOLVE_SECONDS have passed since ``served_at``.
puzzle_served = Table(
    "puzzle_served",
    puzzles_metadata,
    Column("player", String(80), primary_key=True),
    Column("puzzle_id", String(16), nullable=False),
    Column("served_at", Float, nullable=False),
)

#: Right moves shown (issue 51): a client group (``grp``, the address group) and its account (0:
#: anonymous) saw the solution, a hint or a right move of a puzzle at ``at``.
puzzle_seen = Table(
    "puzzle_seen",
    puzzles_metadata,
    Column("grp", String(64), primary_key=True),
    Column("puzzle_id", String(16), primary_key=True),
    Column("account", Integer, primary_key=True),
    Column("at", Float, nullable=False),
)
Index("puzzle_seen_at", puzzle_seen.c.at)

#: The address groups whose rated attempt moved a puzzle's own rating: once per group and puzzle.
puzzle_movers = Table(
    "puzzle_movers",
    puzzles_metadata,
    Column("puzzle_id", String(16), primary_key=True),
    Column("grp", String(64), primary_key=True),
    Column("at", Float, nullable=False),
)

#: The best puzzle streak of each account (issue 34: lichess keeps an account's Puzzle Streak
#: record on the server; an anonymous browser keeps its own).
puzzle_streaks = Table(
    "puzzle_streaks",
    puzzles_metadata,
    Column("player", String(80), primary_key=True),
    Column("best", Integer, nullable=False),
    Column("at", Float, nullable=False),  # when the best was set
)
#: A streak longer than this is not believed (the shipped set has ~550 puzzles).
MAX_STREAK = 1000


class _TriedBefore(Exception):
    """The account's first attempt at the puzzle is stored already (it alone is rated)."""


class PuzzleService:
    """Choosing, checking and rating puzzles; every decision reads the database."""

    def __init__(
        self,
        storage: Storage,
        puzzles: list[Puzzle] | None = None,
        budget: BudgetPolicy | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.storage = storage
        self.budget = budget if budget is not None else BudgetPolicy(storage)  # rated attempts: puzzle.rated
        self.clock = clock
        self.puzzles = shipped_puzzles() if puzzles is None else puzzles
        if not self.puzzles:
            raise ValueError("no puzzles to serve")
        self.by_id = {p.id: p for p in self.puzzles}
        storage.create_tables(puzzles_metadata)
        if "address" not in {c["name"] for c in inspect(storage.engine).get_columns("puzzle_attempts")}:
            try:  # a table of an older version (issue 33)
                with storage.engine.begin() as conn:
                    conn.exec_driver_sql("ALTER TABLE puzzle_attempts ADD COLUMN address VARCHAR(64)")
            except Exception:  # noqa: BLE001 - another process added it at the same moment
                pass

    # -- the puzzles ---------------------------------------------------------------------------------
    def get(self, puzzle_id: str) -> Puzzle:
        """The puzzle ``puzzle_id`` (404 ``unknown_puzzle`` when there is none)."""
        p = self.by_id.get(puzzle_id)
        if p is None:
            raise ClientError("unknown_puzzle", f"no puzzle has the id {puzzle_id[:20]!r}", 404)
        return p

    def _player(self, conn: Any, key: str, lock: bool = False) -> Rating:
        q = select(puzzle_players.c.rating, puzzle_players.c.rd, puzzle_players.c.volatility).where(
            puzzle_players.c.player == key
        )
        row = conn.execute(q.with_for_update() if lock else q).first()
        return Rating() if row is None else Rating(row[0], row[1], row[2])

    def _puzzle_rating(self, conn: Any, p: Puzzle, lock: bool = False) -> Rating:
        q = select(puzzle_ratings.c.rating, puzzle_ratings.c.rd, puzzle_ratings.c.volatility).where(
            puzzle_ratings.c.puzzle_id == p.id
        )
        row = conn.execute(q.with_for_update() if lock else q).first()
        if row is None:
            return Rating(p.rating, PUZZLE_RD, 0.06)
        return Rating(row[0], row[1], row[2])

    def player_view(self, key: str | None) -> dict[str, Any] | None:
        """A solver's rating and counts, as the page shows them (``None`` without a solver)."""
        if key is None:
            return None
        with self.storage.reader.connect() as conn:
            row = conn.execute(
                select(
                    puzzle_players.c.rating, puzzle_players.c.rd, puzzle_players.c.solved, puzzle_players.c.failed
                ).where(puzzle_players.c.player == key)
            ).first()
            best = conn.execute(select(puzzle_streaks.c.best).where(puzzle_streaks.c.player == key)).scalar()
        streak_best = int(best or 0)
        if row is None:
            return {"rating": 1500, "rd": 350, "solved": 0, "failed": 0, "provisional": True,
                    "streak_best": streak_best}  # fmt: skip
        return {
            "rating": round(row[0]),
            "rd": round(row[1]),
            "solved": row[2],
            "failed": row[3],
            "provisional": row[1] > 110,
            "streak_best": streak_best,
        }

    def record_streak(self, key: str, ids: Any) -> dict[str, Any]:
        """Keep ``key``'s best streak: ``ids`` are the puzzles it solved in a row in the streak just
        ended.  The claim is checked against the rated attempts in the database, so a page cannot
        make a record up: each puzzle's first attempt by ``key`` was solved, and no failed attempt
        of ``key`` lies between the first and the last of them.  Returns ``{"best", "streak"}``."""
        if not isinstance(ids, list) or not all(isinstance(i, str) and len(i) <= 16 for i in ids):
            raise ClientError("bad_request", "'puzzles' must be the list of the streak's puzzle ids")
        if len(ids) > MAX_STREAK or len(set(ids)) != len(ids):
            raise ClientError("bad_streak", f"a streak is at most {MAX_STREAK} different puzzles")
        for pid in ids:
            self.get(pid)  # 404 unknown_puzzle names it
        now = self.clock()
        with self.storage.engine.begin() as conn:
            if ids:
                rows = conn.execute(
                    select(puzzle_attempts.c.puzzle_id, puzzle_attempts.c.solved, puzzle_attempts.c.at).where(
                        (puzzle_attempts.c.player == key) & puzzle_attempts.c.puzzle_id.in_(ids)
                    )
                ).all()
                solved = {r[0]: r[2] for r in rows if r[1]}
                missing = [pid for pid in ids if pid not in solved]
                if missing:
                    raise ClientError("bad_streak", f"puzzle {missing[0]} was not solved at its first attempt", 409)
                first, last = min(solved.values()), max(solved.values())
                failed = conn.execute(
                    text(
                        "SELECT count(*) FROM puzzle_attempts WHERE player = :p AND solved = 0 "
                        "AND at >= :a AND at <= :b"
                    ),
                    {"p": key, "a": first, "b": last},
                ).scalar_one()
                if int(failed):
                    raise ClientError("bad_streak", "a puzzle was failed in the middle of this streak", 409)
                conn.execute(_BEST_STREAK, {"p": key, "n": len(ids), "now": now})
            best = conn.execute(select(puzzle_streaks.c.best).where(puzzle_streaks.c.player == key)).scalar()
        return {"best": int(best or 0), "streak": len(ids)}

    # -- choosing ---------------------------------------------------------------------------------
    def next(
        self,
        key: str | None,
        skip: str | None = None,
        rng: random.Random | None = None,
        rating: float | None = None,
        theme: str | None = None,
        above: float | None = None,
    ) -> Puzzle:
        """The next puzzle for solver ``key``: unseen, among the :data:`NEAREST` nearest its rating
        (an anonymous browser may say the rating it keeps itself, ``rating``).  ``theme``: of that
        theme only (issue 34's filter); ``above``: a streak's next step, rated at least
        :data:`STREAK_STEP` above it (0: the streak's start, the easiest), drawn among those of the
        next two steps, a theme other than ``skip``'s (the last puzzle) first; the nearest above when
        the window is empty, one of the :data:`NEAREST` hardest when none is above."""
        if theme is not None and theme not in THEME_NAMES:
            raise ClientError("bad_request", f"'theme' must be one of {', '.join(THEME_NAMES)}")
        rng = rng or random.Random()
        with self.storage.reader.connect() as conn:
            me = self._player(conn, key).rating if key else (rating or Rating().rating)
            seen: dict[str, float] = {}
            if key:
                seen = {
                    r[0]: r[1]
                    for r in conn.execute(
                        select(puzzle_attempts.c.puzzle_id, puzzle_attempts.c.at).where(puzzle_attempts.c.player == key)
                    )
                }
            rated = {r[0]: r[1] for r in conn.execute(select(puzzle_ratings.c.puzzle_id, puzzle_ratings.c.rating))}
        puzzles = [p for p in self.puzzles if theme is None or p.theme == theme] or self.puzzles
        pool = [p for p in puzzles if p.id not in seen and p.id != skip]
        if not pool:  # everything tried: the ones tried longest ago come back
            oldest = sorted(puzzles, key=lambda p: seen.get(p.id, 0.0))
            pool = [p for p in oldest[: max(1, len(oldest) // 4)] if p.id != skip] or oldest[:1]
        if above is not None:  # a streak: a step harder than the last, another theme first

            def strength(p: Puzzle) -> float:
                return rated.get(p.id, p.rating)

            floor = above + STREAK_STEP if above > 0 else -math.inf
            harder = sorted((p for p in pool if strength(p) >= floor), key=strength)
            if not harder:  # at the top: one of the hardest, drawn (not the same two in turn)
                return rng.choice(sorted(pool, key=strength)[-NEAREST:])
            top = max(floor, strength(harder[0])) + 2 * STREAK_STEP
            window = [p for p in harder if strength(p) < top]
            last = next((p.theme for p in self.puzzles if p.id == skip), None)
            fresh = [p for p in window if p.theme != last] or window
            return rng.choice(fresh)
        pool.sort(key=lambda p: (abs(rated.get(p.id, p.rating) - me), p.id))
        return rng.choice(pool[:NEAREST])

    def describe(self, p: Puzzle) -> dict[str, Any]:
        """The API's form of a puzzle (docs/web.md, "Puzzles")."""
        with self.storage.reader.connect() as conn:
            rating = self._puzzle_rating(conn, p)
            plays = conn.execute(
                select(puzzle_ratings.c.plays, puzzle_ratings.c.wins).where(puzzle_ratings.c.puzzle_id == p.id)
            ).first()
        return {
            "id": p.id,
            "position": p.position,
            "side": p.side,
            "theme": p.theme,
            "theme_text": THEME_NAMES[p.theme],
            "kind": p.kind,
            "moves_to_find": len(p.solution[::2]),  # the solution itself comes after an attempt (/result)
            "rating": round(rating.rating),
            "plays": plays[0] if plays else 0,
            "solved_by": plays[1] if plays else 0,
            "source": p.source,
            "game": view(Game.from_position(p.position)),
        }

    def serve(self, key: str | None, p: Puzzle) -> None:
        """``p`` was served to the account ``key`` now (``GET /api/puzzles/next`` or ``/api/puzzles/{id}``):
        its attempt at ``p`` may be rated from :data:`MIN_SOLVE_SECONDS` on, and at no other puzzle
        (one row per account: the puzzle served last).  Nothing for an anonymous solver."""
        if key is None:
            return
        with self.storage.engine.begin() as conn:
            conn.execute(_SERVED, {"p": key, "id": p.id, "now": self.clock()})

    def _shown(self, who: Who | None, p: Puzzle) -> None:
        """A right move of ``p`` was shown to ``who`` (the solution, a hint, a right move answered):
        the other clients of its address group may not be rated on ``p`` for :data:`SEEN_WINDOW`."""
        if who is None:
            return
        now = self.clock()
        with self.storage.engine.begin() as conn:
            conn.execute(_SEEN, {"g": who.group[:64], "id": p.id, "a": who.account or 0, "now": now})
            if random.randrange(100) == 0:  # now and then, forget what no window counts any more
                conn.execute(text("DELETE FROM puzzle_seen WHERE at < :old"), {"old": now - SEEN_WINDOW})

    # -- playing ----------------------------------------------------------------------------------
    def try_move(
        self, p: Puzzle, moves: Any, attempt: Any, key: str | None = None, who: Who | None = None
    ) -> dict[str, Any]:
        """One move of the solver: ``moves`` are the line so far (the solution's first moves).  For an
        account (``key``), a wrong move decides the attempt as failed, the line's last move as solved
        (the first attempt only; a rating refused by the budget answers ``puzzle_rate``, nothing played).
        ``who``: the client (its address group and account), whose right moves shown are kept."""
        out = self._try(p, moves, attempt)
        if key is not None and out.get("legal") and (not out["correct"] or out.get("done")):
            out["result"] = self._rate(key, p, bool(out["correct"]), who)
        if out.get("correct"):
            self._shown(who, p)
        return out

    def _try(self, p: Puzzle, moves: Any, attempt: Any) -> dict[str, Any]:
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            raise ClientError("bad_request", "'moves' must be a list of moves in notation, e.g. [\"5R@d2\"]")
        if not isinstance(attempt, str) or len(attempt) > 32:
            raise ClientError("bad_request", "'try' must be a move in notation, e.g. \"5R@d2\"")
        step = len(moves)
        if step % 2 or step >= len(p.solution) or [m.lower() for m in moves] != [m.lower() for m in p.solution[:step]]:
            raise ClientError("bad_request", "'moves' must be the start of the puzzle's line, ending before your move")
        game = Game.from_position(p.position)
        for m in moves:
            game.play(m)
        reason = game.why_illegal(attempt)
        if reason is not None:
            sides = reason.replace("south", "South").replace("north", "North")
            answer = {"legal": False, "correct": False, "message": f"Not allowed: {sides}.", "game": view(game)}
            return {**answer, "why": reason}  # the route says it in the request's language
        played = str(game.play(attempt))
        # the first move: any move the solver proved right (every winning move of a win puzzle)
        right = p.accepts(played) if step == 0 else played == p.solution[step]
        if not right:
            reply = _refute(game.position(), p.theme)
            if reply is not None:
                game.play(reply)  # the board shows the refutation played
            return {
                "legal": True, "correct": False, "played": played, "reply": reply,
                "message": _wrong_words(p, played, reply), "game": view(game),
            }  # fmt: skip
        on_line = played == p.solution[step]
        reply = p.solution[step + 1] if on_line and step + 1 < len(p.solution) else None
        if reply is not None:
            game.play(reply)
        done = not on_line or step + 2 >= len(p.solution)
        answer = {"legal": True, "correct": True, "played": played, "reply": reply, "done": done, "game": view(game)}
        if done:  # the proof: the fastest line, and how many first moves were right
            answer.update(line=list(p.line or p.solution), accepted=len(p.accepted))
        return answer

    def hint(self, key: str | None, p: Puzzle, moves: Any, level: Any, who: Who | None = None) -> dict[str, Any]:
        """The next move's cell (``level`` 2) or piece and cell (3) after the line ``moves``; for an
        account the attempt is then a failure (rated, if it is the first; the puzzle's own rating
        does not move: no move was played)."""
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            raise ClientError("bad_request", "'moves' must be the line so far, a list of moves in notation")
        if level not in (2, 3) or isinstance(level, bool):
            raise ClientError("bad_request", "'level' must be 2 (the cell) or 3 (the piece and the cell)")
        step = len(moves)
        if step % 2 or step >= len(p.solution) or [m.lower() for m in moves] != [m.lower() for m in p.solution[:step]]:
            raise ClientError("bad_request", "'moves' must be the start of the puzzle's line, ending before your move")
        out: dict[str, Any] = {}
        if key is not None:
            out["result"] = self._rate(key, p, False, who, played=False)
        self._shown(who, p)
        piece, _, cell = p.solution[step].partition("@")
        out.update(cell=cell or None, piece=piece if level == 3 else None)
        return out

    def result(self, key: str | None, p: Puzzle, moves: Any, hints: Any, who: Who | None = None) -> dict[str, Any]:
        """End an attempt and give the solution: solved when ``moves`` (the solver's own moves) are the
        solution's and fewer than :data:`COSTLY_HINTS` hints were shown.  Rated only for an account
        (``key``), and only its first attempt per puzzle counts (giving up without a move leaves the
        puzzle's own rating alone)."""
        if not isinstance(moves, list) or not all(isinstance(m, str) and len(m) <= 32 for m in moves) or len(moves) > 8:
            raise ClientError("bad_request", "'moves' must be the list of your moves in notation")
        if not isinstance(hints, int) or isinstance(hints, bool) or not 0 <= hints <= 10:
            raise ClientError("bad_request", "'hints' must be the number of hints shown (0-10)")
        mine = list(p.solution[::2])
        said = [m.strip().lower() for m in moves]
        # the first move: any right one (a win puzzle accepts every winning move); the rest: the line
        right = bool(said) and p.accepts(said[0]) and (said == [m.lower() for m in mine] or len(said) == 1)
        solved = right and hints < COSTLY_HINTS
        out: dict[str, Any] = {"id": p.id, "solved": solved, "solution": list(p.solution), "rated": False}
        if key is not None:
            out.update(self._rate(key, p, solved, who, played=bool(said)))
        self._shown(who, p)
        return out

    def _rate(self, key: str, p: Puzzle, solved: bool, who: Who | None, played: bool = True) -> dict[str, Any]:
        """Decide ``key``'s first attempt at ``p`` (in the database: one row per account and puzzle),
        rated or not (:meth:`_unrated` says why not); a later attempt is answered from the first.  A
        rated one spends the budget ``puzzle.rated`` (``puzzle_rate``, 429: nothing stored), moves the
        solver's rating (at most :data:`MAX_GAIN_PER_DAY` up in 24 hours) and, when ``played`` (a move
        decided it, not a hint or a give-up) by an established solver, the puzzle's own rating, once
        per address group."""
        who = who or Who("?", _account_of(key))
        out: dict[str, Any] = {"rated": False}
        now = self.clock()
        try:
            with self.storage.engine.begin() as conn:
                first = conn.execute(
                    select(puzzle_attempts.c.at).where(
                        (puzzle_attempts.c.player == key) & (puzzle_attempts.c.puzzle_id == p.id)
                    )
                ).first()
                if first is not None:
                    raise _TriedBefore
                why = self._unrated(conn, key, p, who, now)
                if why is None:
                    self.budget.ask(conn, "puzzle.rated", who)  # OverBudget: nothing written
                # both rows exist before they are locked (a first attempt creates them; racing
                # creators meet on the primary key and do nothing), then are locked in one order,
                # solver before puzzle, so that concurrent attempts never deadlock
                conn.execute(_NEW_PLAYER, {"p": key, "now": now})
                conn.execute(_NEW_PUZZLE, {"id": p.id, "r": p.rating, "rd": PUZZLE_RD})
                me = self._player(conn, key, lock=True)
                pr = self._puzzle_rating(conn, p, lock=True)
                score = 1.0 if solved else 0.0
                new_me, new_p = me, pr
                if why is None:
                    new_me = self._capped(conn, key, me, update(me, [(pr, score)]), now)
                    if played and me.rd <= PROVISIONAL_RD and self._first_mover(conn, p, who, now):
                        new_p = update(pr, [(me, 1.0 - score)])
                # a second attempt (any process) fails here on the primary key and changes nothing
                conn.execute(
                    puzzle_attempts.insert().values(
                        player=key, puzzle_id=p.id, at=now, solved=int(solved),
                        rating_before=me.rating, rating=new_me.rating, address=who.group[:64],
                    )
                )  # fmt: skip
                conn.execute(
                    text(
                        "UPDATE puzzle_players SET rating = :r, rd = :rd, volatility = :v, solved = solved + :s, "
                        "failed = failed + :f, updated_at = :now WHERE player = :p"
                    ),
                    {"r": new_me.rating, "rd": new_me.rd, "v": new_me.volatility, "s": int(solved),
                     "f": int(not solved), "now": now, "p": key},
                )  # fmt: skip
                conn.execute(
                    text(
                        "UPDATE puzzle_ratings SET rating = :r, rd = :rd, volatility = :v, plays = plays + 1, "
                        "wins = wins + :w WHERE puzzle_id = :id"
                    ),
                    {"r": new_p.rating, "rd": new_p.rd, "v": new_p.volatility, "w": int(solved), "id": p.id},
                )
        except (IntegrityError, _TriedBefore):
            # tried before (or a racing first try of another process won): report that attempt
            with self.storage.reader.connect() as conn:
                row = conn.execute(
                    select(puzzle_attempts.c.solved, puzzle_attempts.c.rating_before, puzzle_attempts.c.rating).where(
                        (puzzle_attempts.c.player == key) & (puzzle_attempts.c.puzzle_id == p.id)
                    )
                ).first()
            if row is not None:
                out.update(first_solved=bool(row[0]), before=round(row[1]), after=round(row[2]))
            out["player"] = self.player_view(key)
            return out
        if why is not None:
            out.update(unrated=why, player=self.player_view(key))
            return out
        out.update(rated=True, before=round(me.rating), after=round(new_me.rating), player=self.player_view(key))
        return out

    def _unrated(self, conn: Any, key: str, p: Puzzle, who: Who, now: float) -> str | None:
        """Why ``key``'s first attempt at ``p`` is not rated (None: it is): ``p`` is not the puzzle
        served to it last, or was served less than :data:`MIN_SOLVE_SECONDS` ago, or a right move of
        it was shown to another client of its address group in the last :data:`SEEN_WINDOW`."""
        served = conn.execute(
            select(puzzle_served.c.puzzle_id, puzzle_served.c.served_at).where(puzzle_served.c.player == key)
        ).first()
        if served is None or served[0] != p.id:
            return "not the puzzle served to you: open it (next puzzle, or its page) before you play it"
        took = now - float(served[1])
        if took < MIN_SOLVE_SECONDS:
            return (
                f"too fast: {max(0.0, took):.1f} s after the puzzle was served, and a rated attempt takes "
                f"at least {MIN_SOLVE_SECONDS:g} s"
            )
        shown = conn.execute(
            text("SELECT 1 FROM puzzle_seen WHERE grp = :g AND puzzle_id = :id AND account <> :a AND at > :since"),
            {"g": who.group[:64], "id": p.id, "a": who.account or 0, "since": now - SEEN_WINDOW},
        ).first()
        if shown is not None:
            days = SEEN_WINDOW / DAY
            return (
                "the solution was shown from your address: a right move of this puzzle was shown to another "
                f"visitor or account there in the last {days:g} days"
            )
        return None

    def _capped(self, conn: Any, key: str, me: Rating, new: Rating, now: float) -> Rating:
        """``new`` with its rating at most :data:`MAX_GAIN_PER_DAY` above the solver's rating 24 hours
        ago (the rating before its first attempt since then; every change of it is an attempt)."""
        since = conn.execute(
            text("SELECT rating_before FROM puzzle_attempts WHERE player = :p AND at > :t ORDER BY at LIMIT 1"),
            {"p": key, "t": now - DAY},
        ).scalar()
        ceiling = max(me.rating, (me.rating if since is None else float(since)) + MAX_GAIN_PER_DAY)
        return new if new.rating <= ceiling else Rating(ceiling, new.rd, new.volatility)

    def _first_mover(self, conn: Any, p: Puzzle, who: Who, now: float) -> bool:
        """Whether this is the first rated attempt of ``who``'s address group to move ``p``'s rating
        (and, if so, it now is: one row per puzzle and group, however many processes race)."""
        moved = conn.execute(_MOVER, {"id": p.id, "g": who.group[:64], "now": now}).rowcount
        return bool(moved)


def _account_of(key: str) -> int | None:
    """The account id of a solver key ``account:ID``."""
    kind, _, ident = key.partition(":")
    return int(ident) if kind == "account" and ident.isdigit() else None


# "INSERT ... ON CONFLICT DO NOTHING" reads the same on SQLite (3.24+) and PostgreSQL
_NEW_PLAYER = text(
    "INSERT INTO puzzle_players (player, rating, rd, volatility, solved, failed, updated_at) "
    "VALUES (:p, 1500.0, 350.0, 0.06, 0, 0, :now) ON CONFLICT (player) DO NOTHING"
)
# the greater of the stored best and the new streak, in one statement on both databases
_BEST_STREAK = text(
    "INSERT INTO puzzle_streaks (player, best, at) VALUES (:p, :n, :now) ON CONFLICT (player) DO UPDATE "
    "SET best = CASE WHEN excluded.best > puzzle_streaks.best THEN excluded.best ELSE puzzle_streaks.best END, "
    "at = CASE WHEN excluded.best > puzzle_streaks.best THEN excluded.at ELSE puzzle_streaks.at END"
)
# the puzzle served to an account last, and when (one row per account)
_SERVED = text(
    "INSERT INTO puzzle_served (player, puzzle_id, served_at) VALUES (:p, :id, :now) ON CONFLICT (player) "
    "DO UPDATE SET puzzle_id = excluded.puzzle_id, served_at = excluded.served_at"
)
_SEEN = text(
    "INSERT INTO puzzle_seen (grp, puzzle_id, account, at) VALUES (:g, :id, :a, :now) "
    "ON CONFLICT (grp, puzzle_id, account) DO UPDATE SET at = excluded.at"
)
_MOVER = text(
    "INSERT INTO puzzle_movers (puzzle_id, grp, at) VALUES (:id, :g, :now) ON CONFLICT (puzzle_id, grp) DO NOTHING"
)
_NEW_PUZZLE = text(
    "INSERT INTO puzzle_ratings (puzzle_id, rating, rd, volatility, plays, wins) "
    "VALUES (:id, :r, :rd, 0.06, 0, 0) ON CONFLICT (puzzle_id) DO NOTHING"
)


@functools.lru_cache(maxsize=REFUTE_CACHE)
def _refute(position: str, theme: str) -> str | None:
    """The reply that refutes a wrong move (the position after it), or None (none found in budget)."""
    try:
        return refutation(Game.from_position(position), theme, Budget(REFUTE_NODES, REFUTE_SECONDS).start())
    except SearchLimit:
        return None  # the words then say so without naming a move


def _wrong_words(p: Puzzle, played: str, reply: str | None) -> str:
    if KIND[p.theme] == "defence":
        then = f"{reply} wins by force" if reply else "the opponent keeps a winning line"
        return f"{played} loses the game: {then}."
    if reply == "pass":  # a pass does not "hold on" (issue 34): the opponent passes and holds on
        return f"{played} does not force the win: the opponent passes and still holds on."
    then = f"the answer {reply} holds on" if reply else "the opponent can hold on"
    return f"{played} does not force the win: {then}."


def games_from_db(url: str) -> Iterator[tuple[str, Game, list[str]]]:
    """``(key, start, moves)`` of every finished game in a web app database (key: ``db:ID``)."""
    from jericho_game.web.storage.database import resolve_db_url

    store = Storage(resolve_db_url(url))
    try:
        with store.reader.connect() as conn:
            ids = [
                (r[0], r[1])
                for r in conn.execute(
                    text("SELECT id, start_position FROM games WHERE result IS NOT NULL ORDER BY created_at, id")
                )
            ]
        for gid, start_text in ids:
            with store.reader.connect() as conn:
                moves = [
                    r[0]
                    for r in conn.execute(text("SELECT move FROM moves WHERE game_id = :id ORDER BY ply"), {"id": gid})
                ]
            try:
                start = Game.from_position(start_text) if start_text else Game()
            except JerichoError:
                continue  # a start the engine no longer reads is no source of puzzles
            yield f"db:{gid}", start, moves
    finally:
        store.close()


def puzzle_routes(service: PuzzleService, accounts: AccountService) -> list[Route]:
    """``/api/puzzles/...``; the pages ``/puzzles`` and ``/puzzles/{id}`` are in :mod:`jericho_game.web.site.pages`."""

    async def blocking(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    def solver(request: Request, change: bool) -> str | None:
        """The account that solves (its rating moves), or None: anonymous solving is kept in the browser."""
        sess = accounts.account_for_change(request) if change else accounts.session_of(request)
        return f"account:{sess.account.id}" if sess is not None else None

    def client(request: Request, key: str | None) -> Who:
        """The solver as the budget counts it: its address group, and its account."""
        return Who.of(request, _account_of(key) if key else None)

    @free("one puzzle out of the shipped set; an account's row of the puzzle served to it", writes=("puzzle_served",))
    async def next_puzzle(request: Request) -> Response:
        key = await blocking(solver, request, False)
        skip = request.query_params.get("skip")
        try:  # an anonymous browser's own rating (static/puzzles.js keeps it)
            rating: float | None = min(3000.0, max(500.0, float(request.query_params.get("rating", ""))))
        except ValueError:
            rating = None
        if rating is not None and rating != rating:  # NaN
            rating = None
        theme = request.query_params.get("theme") or None
        above: float | None = None
        if request.query_params.get("above"):
            try:
                above = float(request.query_params["above"])
            except ValueError:
                raise ClientError("bad_request", "'above' must be a rating, a number") from None
        p = await blocking(lambda: service.next(key, skip, None, rating, theme=theme, above=above))
        body = await blocking(service.describe, p)
        body["player"] = await blocking(service.player_view, key)
        await blocking(service.serve, key, p)
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    @free("one shipped puzzle; an account's row of the puzzle served to it", writes=("puzzle_served",))
    async def one(request: Request) -> Response:
        p = service.get(request.path_params["id"])
        key = await blocking(solver, request, False)
        body = await blocking(service.describe, p)
        body["player"] = await blocking(service.player_view, key)
        await blocking(service.serve, key, p)
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    @costs("puzzle.rated", methods=("POST",))
    async def try_move(request: Request) -> Response:
        p = service.get(request.path_params["id"])
        data = await _body(request)
        key = await blocking(solver, request, True)
        answer = await blocking(service.try_move, p, data.get("moves", []), data.get("try"), key, client(request, key))
        why = answer.pop("why", None)
        lang = i18n.request_language(request)
        if why is not None and lang != i18n.DEFAULT:  # the engine's reason, in the page's language
            said = reasons.translate(why, lang) or why
            answer["message"] = i18n.translations(lang).gettext(NOT_ALLOWED).format(reason=said)
        return JSONResponse(answer)

    @costs("puzzle.rated", methods=("POST",))
    async def result(request: Request) -> Response:
        p = service.get(request.path_params["id"])
        data = await _body(request)
        key = await blocking(solver, request, True)
        moves, hints = data.get("moves"), data.get("hints", 0)
        return JSONResponse(await blocking(service.result, key, p, moves, hints, client(request, key)))

    @costs("puzzle.rated", methods=("POST",))
    async def hint(request: Request) -> Response:
        p = service.get(request.path_params["id"])
        data = await _body(request)
        key = await blocking(solver, request, True)
        moves, level = data.get("moves", []), data.get("level")
        return JSONResponse(await blocking(service.hint, key, p, moves, level, client(request, key)))

    @free("the account's own best streak, one row, checked against its attempts", methods=("POST",),
          writes=("puzzle_streaks",))  # fmt: skip
    async def streak(request: Request) -> Response:
        data = await _body(request)
        key = await blocking(solver, request, True)
        if key is None:  # an anonymous browser keeps its best itself
            raise ClientError("not_logged_in", "log in to keep your best streak on your account", 401)
        return JSONResponse(await blocking(service.record_streak, key, data.get("puzzles")))

    return [
        Route("/api/puzzles/next", next_puzzle),
        Route("/api/puzzles/streak", streak, methods=["POST"]),
        Route("/api/puzzles/{id}", one),
        Route("/api/puzzles/{id}/try", try_move, methods=["POST"]),
        Route("/api/puzzles/{id}/result", result, methods=["POST"]),
        Route("/api/puzzles/{id}/hint", hint, methods=["POST"]),
    ]
