"""Tactics puzzles: positions where exactly one move wins or saves the game, proved by search.

A puzzle is a position, the side to move (the *solver*), a theme and a solution line (the
solver's moves and the opponent's replies, in move notation).  Every puzzle is proved by an
exact search over all legal moves, never sampled:

* **win** puzzles (themes ``win-in-1`` and ``win-in-2``): exactly one move forces a win within
  two of the solver's moves (a *working* move); every other move allows a defence that lasts
  past that horizon.  A win in 1 is a move after which the solver holds seven monoliths that
  no reply can break (RULES.md §6), or one that ends the game won outright.  A win in 2 is a
  move after which *every* reply leaves a win in 1 (or loses at once).  The line's second
  solver move is unique too: the reply in the line is one after which exactly one move wins.
* **defence** puzzles (themes ``break-the-seven`` and ``hold-on``): the solver has no win within
  two moves, and exactly one move *saves* the game: after it the game goes on (or is won) and
  the opponent has no win in 1.  Every other move loses at once or to a win in 1.
  ``break-the-seven`` when the opponent already holds seven (so every other move but the
  breaking ones loses at once), ``hold-on`` when the threat is a seven still to be built.

Search (on any :class:`~jericho_game.core.State`, C kernel or Python): an AND/OR search over
placements with exact monolith-count bounds — one placement changes only the two alignments
through its cell, so a side gains or loses at most 2 monoliths per move — and the engine's
``breaks_possible`` for the one-reply test.  A :class:`Budget` caps the pushes and seconds
per position; a search that runs out raises :class:`SearchLimit` and the position is dropped,
so nothing unproved becomes a puzzle.

Files: one puzzle per line of JSON (``.jsonl``), see :meth:`Puzzle.to_json`; the package ships
``jericho_game/data/puzzles.jsonl``, loaded by :func:`shipped_puzzles`.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from jericho_game.ai.solver import DRAW_VALUE, LOSS, WIN, Solution, Table, solve
from jericho_game.core import NO_OUTCOME, SEVEN, State
from jericho_game.errors import JerichoError, PositionError
from jericho_game.game import Game

__all__ = [
    "THEMES",
    "THEME_NAMES",
    "Budget",
    "SearchLimit",
    "Puzzle",
    "PuzzleError",
    "winning_moves_1",
    "has_win_1",
    "winning_moves_2",
    "saving_moves",
    "KIND",
    "MAX_WINNING_MOVES",
    "theme_of",
    "find_puzzle",
    "refutation",
    "puzzle_id",
    "verify",
    "puzzles_from_game",
    "load_puzzles",
    "write_puzzles",
    "shipped_puzzles",
    "SHIPPED",
]

#: Themes, in the order the web page lists them: what the puzzle's move does.
THEMES = ("win-in-1", "win-in-2", "long-win", "win-by-exhaustion", "break-the-seven", "hold-on")
#: The kind of each theme: "win" (the position is won; every winning first move is right) or
#: "defence" (the position is drawn; exactly one move holds, every other loses).
KIND = {
    "win-in-1": "win",
    "win-in-2": "win",
    "long-win": "win",
    "win-by-exhaustion": "win",
    "break-the-seven": "defence",
    "hold-on": "defence",
}
#: What each theme asks, in words (the first hint on the web page).
THEME_NAMES = {
    "win-in-1": "Win in 1: make seven monoliths that no reply can break",
    "win-in-2": "Win in 2: force the win within two of your moves",
    "long-win": "Win the endgame: a forced win, whatever the defence, to the end of the game",
    "win-by-exhaustion": "Win by exhaustion: when neither side can place, the one with more monoliths wins",
    "break-the-seven": "Break the seven: your opponent holds seven monoliths; only one move saves the draw",
    "hold-on": "Hold on: only one move keeps the draw; every other move loses",
}
#: A first rating for each theme (Glicko-2 scale); play results move it afterwards.
THEME_RATING = {
    "win-in-1": 1200.0,
    "break-the-seven": 1350.0,
    "win-in-2": 1500.0,
    "hold-on": 1600.0,
    "win-by-exhaustion": 1650.0,
    "long-win": 1750.0,
}
#: A won position is a puzzle only when at most this many first moves win.
MAX_WINNING_MOVES = 3
#: The solver's table while a game is scanned for puzzles (megabytes).
SCAN_TABLE_MB = 16.0
#: Where the shipped set lives inside the package.
SHIPPED = "ai/data/puzzles.jsonl"


class SearchLimit(RuntimeError):
    """A proof search ran out of its :class:`Budget` (the position is not proved either way)."""


class PuzzleError(ValueError):
    """A puzzle file line or a puzzle that fails its proof, with what was wrong."""


@dataclass
class Budget:
    """Caps on one proof: pushes (``nodes``) and wall-clock ``seconds`` (``None``: no cap)."""

    nodes: int | None = 2_000_000
    seconds: float | None = 20.0
    used: int = 0
    _stop: float | None = field(default=None, repr=False)

    def start(self) -> Budget:
        """Reset the counters; returns ``self``."""
        self.used = 0
        self._stop = None if self.seconds is None else time.perf_counter() + self.seconds
        return self

    def spend(self, n: int = 1) -> None:
        """Count ``n`` pushes; raise :class:`SearchLimit` when a cap is passed."""
        self.used += n
        if self.nodes is not None and self.used > self.nodes:
            raise SearchLimit(f"more than {self.nodes} positions")
        # Checking the clock on every push would cost more than the push itself.
        if self._stop is not None and self.used & 1023 == 0 and time.perf_counter() > self._stop:
            raise SearchLimit(f"more than {self.seconds} s")


def _unlimited() -> Budget:
    return Budget(nodes=None, seconds=None).start()


# -- the proof search ----------------------------------------------------------------------


def _score_after(state: State, codes: list[int], side: int) -> list[int]:
    """``side``'s monolith count after each move code, computed without playing it.

    Tower strength depends on sizes only, so moves with the same piece size and cell share
    one computation; the pass leaves the count as it is.
    """
    t = state.tables
    n = t.n_cells
    base = state.score[side]
    cache: dict[int, int] = {}
    out = []
    for code in codes:
        if code == t.pass_code:
            out.append(base)
            continue
        p, c = divmod(code, n)
        ck = (p // 5) * 64 + c
        v = cache.get(ck)
        if v is None:
            v = base + sum((new == side) - (old == side) for _, old, new in state.leader_changes(p // 5, c))
            cache[ck] = v
        out.append(v)
    return out


def _breaks_possible(state: State, holder: int) -> bool:
    """Whether the side to move has a reply leaving ``holder`` below seven monoliths.

    The C kernel answers in C; on the pure-Python core the same arithmetic runs here: only a
    placement on a cell of an alignment the holder leads can lower its count.
    """
    fast = getattr(state, "breaks_possible", None)
    if fast is not None:
        return bool(fast(holder))
    score = state.score[holder]
    if score < SEVEN:
        return True
    t = state.tables
    n = t.n_cells
    seen: set[int] = set()
    for code in state.legal_codes():
        if code == t.pass_code:
            continue
        p, c = divmod(code, n)
        if all(state.leader[a] != holder for a in t.through[c]):
            continue
        ck = (p // 5) * 64 + c
        if ck in seen:
            continue
        seen.add(ck)
        changes = state.leader_changes(p // 5, c)
        if score + sum((new == holder) - (old == holder) for _, old, new in changes) < SEVEN:
            return True
    return False


def _won_after_push(state: State, me: int) -> bool | None:
    """After ``me``'s move: True when it wins (at once, or a seven no reply breaks), False when
    it loses or draws at once, None when the game goes on undecided."""
    o = state.outcome
    if o == me:
        return True
    if o != NO_OUTCOME:
        return False
    if state.score[me] >= SEVEN and not _breaks_possible(state, me):
        return True
    return None


def winning_moves_1(state: State, budget: Budget | None = None, first: bool = False) -> list[int]:
    """The side to move's moves that win in 1 (``first``: stop at the first one found)."""
    b = budget or _unlimited()
    me = state.turn
    if state.outcome != NO_OUTCOME:
        return []
    codes = state.legal_codes()
    if not codes:
        return []
    t = state.tables
    if codes == [t.pass_code]:
        candidates = codes  # a forced pass can end the game by exhaustion
    else:
        # A placement changes two alignments at most: below 5 no placement reaches seven.
        if state.score[me] + 2 < SEVEN:
            return []
        after = _score_after(state, codes, me)
        candidates = [code for code, s in zip(codes, after, strict=True) if s >= SEVEN]
    out = []
    for code in candidates:
        b.spend()
        state.push(code)
        try:
            won = _won_after_push(state, me)
        finally:
            state.pop()
        if won:
            out.append(code)
            if first:
                break
    return out


def has_win_1(state: State, budget: Budget | None = None) -> bool:
    """Whether the side to move has a win in 1."""
    return bool(winning_moves_1(state, budget, first=True))


def _all_replies_lose(state: State, me: int, b: Budget) -> bool:
    """With ``me``'s opponent to move: whether every reply loses at once or leaves ``me`` a win in 1."""
    codes = state.legal_codes()
    t = state.tables
    placement = codes != [t.pass_code]
    # Refutations first: the replies that leave ``me`` the fewest monoliths.
    after = _score_after(state, codes, me)
    if placement and min(after) + 2 < SEVEN:
        # That reply is a placement, so ``me``'s next move cannot end the game by two passes,
        # and from below 5 no placement reaches seven: the reply refutes.
        return False
    order = sorted(range(len(codes)), key=after.__getitem__)
    for i in order:
        b.spend()
        state.push(codes[i])
        try:
            o = state.outcome
            if o == me:
                continue
            if o != NO_OUTCOME or not has_win_1(state, b):
                return False
        finally:
            state.pop()
    return True


def winning_moves_2(state: State, budget: Budget | None = None, stop_after: int | None = None) -> list[int]:
    """The side to move's moves that force a win within two of its moves (wins in 1 included).

    ``stop_after``: stop once that many are found (2 is enough to reject a puzzle).
    """
    b = budget or _unlimited()
    me = state.turn
    if state.outcome != NO_OUTCOME:
        return []
    codes = state.legal_codes()
    t = state.tables
    out: list[int] = []
    after = _score_after(state, codes, me)
    # Most promising first, so that a second working move (which rejects the puzzle) is found early.
    order = sorted(range(len(codes)), key=lambda i: -after[i])
    for i in order:
        code = codes[i]
        b.spend()
        state.push(code)
        try:
            won = _won_after_push(state, me)
            if won is None:
                replies = state.legal_codes()
                # From at most 2 after this move, any placement reply leaves at most 4, and from
                # below 5 no placement reaches seven (two passes cannot follow a placement).
                if after[i] + 2 + 2 < SEVEN and replies != [t.pass_code]:
                    won = False
                else:
                    won = _all_replies_lose(state, me, b)
        finally:
            state.pop()
        if won:
            out.append(code)
            if stop_after is not None and len(out) >= stop_after:
                break
    return out


def saving_moves(state: State, budget: Budget | None = None, stop_after: int | None = None) -> list[int]:
    """The side to move's moves after which the game is not lost at once and the opponent has no win in 1."""
    b = budget or _unlimited()
    me = state.turn
    if state.outcome != NO_OUTCOME:
        return []
    out = []
    for code in state.legal_codes():
        b.spend()
        state.push(code)
        try:
            o = state.outcome
            saved = o == me or (o == NO_OUTCOME and not has_win_1(state, b))
        finally:
            state.pop()
        if saved:
            out.append(code)
            if stop_after is not None and len(out) >= stop_after:
                break
    return out


# -- puzzles ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Puzzle:
    """One puzzle, proved to the end of the game by the solver (:mod:`jericho_game.ai.solver`).

    ``solution`` is what the solver of the puzzle plays: one move, the fastest win (win puzzles)
    or the only move that holds (defence puzzles); ``accept`` every first move that is right
    (every winning move of a win puzzle, the holding move of a defence puzzle); ``line`` the
    fastest line to the end of the game after the best move (both sides playing best moves);
    ``value`` the game's value for the side to move (1 won, 0 drawn) and ``plies`` the length of
    the fastest win (``None`` for a draw).  Puzzles made before these fields existed (and a
    multi-move ``solution``) still load: ``accept`` then defaults to the solution's first move.
    """

    id: str
    position: str
    theme: str
    solution: tuple[str, ...]
    rating: float
    source: str = ""
    accept: tuple[str, ...] = ()
    line: tuple[str, ...] = ()
    value: int | None = None
    plies: int | None = None

    @property
    def side(self) -> str:
        """``"south"`` or ``"north"``: the side the puzzle is solved for (the side to move)."""
        return self.position.split()[3]

    @property
    def kind(self) -> str:
        """``"win"`` (win the game) or ``"defence"`` (find the one move that holds)."""
        return KIND[self.theme]

    @property
    def accepted(self) -> tuple[str, ...]:
        """The first moves that solve the puzzle (``accept``, else the solution's first move)."""
        return self.accept or self.solution[:1]

    def accepts(self, move: str) -> bool:
        """Whether ``move`` (notation, any case and spaces) is a right first move."""
        want = move.strip().lower()
        return any(m.lower() == want for m in self.accepted)

    def to_json(self) -> dict[str, Any]:
        """The puzzle as a JSON object (one line of a ``.jsonl`` file)."""
        out: dict[str, Any] = {
            "id": self.id,
            "position": self.position,
            "theme": self.theme,
            "solution": list(self.solution),
            "rating": round(self.rating),
            "source": self.source,
        }
        if self.accept:
            out["accept"] = list(self.accept)
        if self.line:
            out["line"] = list(self.line)
        if self.value is not None:
            out["value"] = self.value
            out["plies"] = self.plies
        return out

    @classmethod
    def from_json(cls, obj: Any) -> Puzzle:
        """A puzzle from :meth:`to_json`'s form; :class:`PuzzleError` names a bad field."""
        if not isinstance(obj, dict):
            raise PuzzleError(f"a puzzle must be a JSON object, not {type(obj).__name__}")
        for key, kind in (("id", str), ("position", str), ("theme", str), ("solution", list)):
            if not isinstance(obj.get(key), kind):
                raise PuzzleError(f"puzzle field {key!r} is missing or not a {kind.__name__}")
        if obj["theme"] not in THEMES:
            raise PuzzleError(f"puzzle {obj['id']}: unknown theme {obj['theme']!r} (themes: {', '.join(THEMES)})")
        if not obj["solution"] or not all(isinstance(m, str) for m in obj["solution"]):
            raise PuzzleError(f"puzzle {obj['id']}: the solution must be a non-empty list of moves")
        for key in ("accept", "line"):
            if not isinstance(obj.get(key, []), list) or not all(isinstance(m, str) for m in obj.get(key, [])):
                raise PuzzleError(f"puzzle {obj['id']}: {key!r} must be a list of moves")
        value, plies = obj.get("value"), obj.get("plies")
        if value not in (None, 0, 1) or isinstance(value, bool):
            raise PuzzleError(f"puzzle {obj['id']}: 'value' must be 1 (won), 0 (drawn) or absent")
        if plies is not None and (not isinstance(plies, int) or isinstance(plies, bool) or plies < 1):
            raise PuzzleError(f"puzzle {obj['id']}: 'plies' must be a whole number of plies >= 1 or null")
        rating = obj.get("rating", THEME_RATING[obj["theme"]])
        if not isinstance(rating, int | float):
            raise PuzzleError(f"puzzle {obj['id']}: rating must be a number")
        return cls(
            id=obj["id"],
            position=obj["position"],
            theme=obj["theme"],
            solution=tuple(obj["solution"]),
            rating=float(rating),
            source=str(obj.get("source", "")),
            accept=tuple(obj.get("accept", ())),
            line=tuple(obj.get("line", ())),
            value=value,
            plies=plies,
        )


def puzzle_id(position: str) -> str:
    """A short stable id of a position (8 hex digits of its SHA-1)."""
    return hashlib.sha1(position.encode()).hexdigest()[:8]


def _name(game: Game, code: int) -> str:
    return str(game.tables.move_objects[code])


def _by_exhaustion(game: Game, line: Iterable[str]) -> bool:
    """Whether ``line`` played from ``game`` ends the game by two passes in a row."""
    g = game.copy()
    for mv in line:
        g.play(mv)
    tail = [str(m) for m in g.history[-2:]]
    return g.is_over() and tail == ["pass", "pass"]


def theme_of(game: Game, value: int, plies: int | None, line: tuple[str, ...]) -> str:
    """The theme of a puzzle of ``game``'s position: what its move does (see :data:`THEMES`)."""
    if value == WIN:
        if _by_exhaustion(game, line):
            return "win-by-exhaustion"
        assert plies is not None
        return "win-in-1" if plies <= 2 else "win-in-2" if plies <= 4 else "long-win"
    return "break-the-seven" if game.state.score[1 - game.state.turn] >= SEVEN else "hold-on"


def _classify(game: Game, sol: Solution) -> tuple[str, tuple[str, ...]] | None:
    """``(kind, accepted moves)`` of a solved position with per-move values, or ``None`` (no puzzle)."""
    assert sol.moves is not None
    if sol.value == LOSS or sol.value is None or sol.move is None:
        return None  # a lost position (its best move still loses) is no puzzle
    if any(v is None for v, _ in sol.moves.values()):
        return None  # the budget did not reach every move
    if len(sol.moves) < 2:
        return None  # a forced move is no decision
    if sol.value == WIN:
        wins = tuple(sorted(str(m) for m, (v, _) in sol.moves.items() if v == WIN))
        if len(wins) > MAX_WINNING_MOVES or len(wins) == len(sol.moves):
            return None  # no puzzle when (nearly) anything wins
        return "win", wins
    holds = [str(m) for m, (v, _) in sol.moves.items() if v is not None and v >= DRAW_VALUE]
    if len(holds) != 1:
        return None
    return "defence", tuple(holds)


def find_puzzle(
    game: Game, budget: Budget | None = None, source: str = "", table: Table | None = None
) -> Puzzle | None:
    """The puzzle of ``game``'s current position, or ``None`` when it is none.

    The solver decides the position to the end of the game: a *win* puzzle is a won position
    where at most :data:`MAX_WINNING_MOVES` first moves win (and not every move does), and
    accepts each of them; a *defence* puzzle is a drawn position where exactly one move holds
    the draw and every other move loses.  A lost position is no puzzle.  Raises
    :class:`SearchLimit` when ``budget`` (its ``nodes`` and ``seconds``) runs out before the
    position and every move are decided.  ``game`` is not changed.
    """
    b = budget or _unlimited()
    if game.is_over():
        return None
    if len(game.legal_moves()) < 2:
        return None  # a forced move is no puzzle
    first = solve(game, nodes=b.nodes, seconds=b.seconds, table=table, line=False)
    if first.value is None:
        raise SearchLimit(f"the solver did not decide the position within {b.nodes} positions / {b.seconds} s")
    if first.value == LOSS:
        return None
    sol = solve(game, nodes=b.nodes, seconds=b.seconds, table=table, moves="wdl")
    if sol.value is None or sol.moves is None or any(v is None for v, _ in sol.moves.values()):
        raise SearchLimit(f"the solver did not decide every move within {b.nodes} positions / {b.seconds} s")
    found = _classify(game, sol)
    if found is None:
        return None
    kind, accept = found
    line = tuple(str(m) for m in sol.line)
    if not line or not _line_ends(game, line, sol.value):
        raise SearchLimit("the solver's line was cut short by the budget")
    theme = theme_of(game, sol.value, sol.plies, line)
    position = game.position()
    n = len(sol.moves)
    rating = float(round(THEME_RATING[theme] + min(200.0, n / 3) - 40 * (len(accept) - 1)))
    return Puzzle(puzzle_id(position), position, theme, line[:1], rating, source, accept, line, sol.value, sol.plies)


def _line_ends(game: Game, line: tuple[str, ...], value: int) -> bool:
    """Whether ``line`` is legal from ``game`` and ends the game with ``value`` for its mover."""
    g = game.copy()
    me = g.turn.value
    try:
        for mv in line:
            g.play(mv)
    except (JerichoError, ValueError, KeyError):
        return False
    if not g.is_over():
        return False
    outcome = g.outcome()
    return outcome == me if value == WIN else outcome == "draw"


def verify(puzzle: Puzzle, budget: Budget | None = None) -> list[str]:
    """Re-prove ``puzzle`` to the end of the game: an empty list when it holds, else what is wrong.

    The solver decides the position and every first move (no horizon): the value must be the
    puzzle's (won for a win theme, drawn for a defence theme); a win puzzle's accepted moves
    must be exactly the winning moves, a defence puzzle's its one holding move with every other
    move lost; the solution is the first move of the line; the line is legal, ends the game
    with the promised result, and a win's line is as short as the fastest win; the theme is
    the one :func:`theme_of` gives.  ``budget`` bounds the solver (default: none).
    """
    b = budget or _unlimited()
    problems: list[str] = []
    try:
        game = Game.from_position(puzzle.position)
    except PositionError as exc:
        return [f"position: {exc}"]
    if puzzle.id != puzzle_id(puzzle.position):
        problems.append(f"id {puzzle.id} is not the position's id {puzzle_id(game.position())}")
    reason = game.why_illegal(puzzle.solution[0])
    if reason is not None:
        return problems + [f"solution move 1 {puzzle.solution[0]!r}: {reason}"]
    sol = solve(game, nodes=b.nodes, seconds=b.seconds, moves="wdl")
    if sol.value is None or sol.moves is None or any(v is None for v, _ in sol.moves.values()):
        return problems + ["the solver did not decide the position within the budget"]
    want = 1 if puzzle.kind == "win" else 0
    words = {WIN: "won", DRAW_VALUE: "drawn", LOSS: "lost"}
    if sol.value != want:
        problems.append(f"the position is {words[sol.value]} for the side to move, not {words[want]}")
        return problems
    found = _classify(game, sol)
    accepted = sorted(m.lower() for m in puzzle.accepted)
    if found is None:
        if sol.value == WIN:
            n = sum(v == WIN for v, _ in sol.moves.values())
            problems.append(f"{n} of {len(sol.moves)} moves win: not a puzzle")
        else:
            holds = sorted(str(m) for m, (v, _) in sol.moves.items() if v is not None and v >= DRAW_VALUE)
            problems.append(f"the moves that hold are {holds or 'none'}, not exactly one")
        return problems
    if sorted(m.lower() for m in found[1]) != accepted:
        what = "winning" if found[0] == "win" else "holding"
        problems.append(f"the {what} moves are {list(found[1])}, not exactly {sorted(puzzle.accepted)}")
    if not puzzle.accepts(puzzle.solution[0]):
        problems.append(f"the solution {puzzle.solution[0]} is not one of the accepted moves")
    line = puzzle.line or puzzle.solution
    if line[0].lower() != puzzle.solution[0].lower():
        problems.append(f"the line starts with {line[0]}, not the solution {puzzle.solution[0]}")
    line_ok = _line_ends(game, line, want)
    if not line_ok:
        problems.append(f"the line {' '.join(line)} does not end the game {'won' if want else 'drawn'}")
    elif want == WIN and len(line) != sol.plies:
        line_ok = False
        problems.append(f"the line takes {len(line)} plies, the fastest win {sol.plies}")
    if puzzle.plies != (sol.plies if want == WIN else None):
        problems.append(f"plies {puzzle.plies} is not the fastest win's {sol.plies}")
    # the theme of the puzzle's own line (a fastest one), else of the solver's
    theme = theme_of(game, sol.value, sol.plies, line if line_ok else tuple(str(m) for m in sol.line))
    if theme != puzzle.theme:
        problems.append(f"the theme is {theme}, not {puzzle.theme}")
    return problems


def refutation(game: Game, theme: str, budget: Budget | None = None) -> str | None:
    """After a wrong move of the puzzle's solver (the opponent to move in ``game``): the reply
    that shows why, by the endgame solver: the opponent's fastest win (or, after a wrong move in
    a win puzzle, a reply that holds the draw).  ``None`` when the game is over or the budget
    runs out.  ``game`` is unchanged."""
    b = budget or _unlimited()
    if game.is_over():
        return None
    sol = solve(game, nodes=b.nodes, seconds=b.seconds, line=False)
    if sol.value is None or sol.move is None:
        return None
    if sol.value == LOSS:
        return None  # the wrong move still wins: nothing refutes it
    return str(sol.move)


def puzzles_from_game(
    start: Game, moves: Iterable[str], budget: Budget, source: str = "", deviations: int = 0
) -> Iterator[tuple[int, Puzzle | None, str | None]]:
    """Walk a game from its end backwards and yield ``(ply, puzzle or None, why skipped or None)``
    for each position before a move, the latest first (the budget restarts at each position;
    one solver table serves the whole game).  With ``deviations``, up to that many positions one
    other move away from each (the move drawn from ``source`` and the ply, so reproducible) are
    tried too, with the same ``ply``.  The walk stops after the first position of the game the
    solver cannot decide within the budget: the earlier ones are harder still."""
    game = start.copy()
    played = list(moves)
    for text in played:
        game.play(text)
    table = Table(SCAN_TABLE_MB)
    for ply in range(len(played) - 1, -1, -1):
        game.undo()
        try:
            yield ply, find_puzzle(game, budget.start(), f"{source}ply {ply}".strip(), table), None
        except SearchLimit as exc:
            yield ply, None, str(exc)
            return
        if deviations <= 0:
            continue
        others = sorted((str(m) for m in game.legal_moves() if str(m) != played[ply]), key=str)
        rng = random.Random(f"jericho-puzzles-deviation:{source}:{ply}")
        # a deviation is tried on a tenth of the budget: most of them are easy, the rest not worth it
        side = Budget(None if budget.nodes is None else max(1, budget.nodes // 10), budget.seconds)
        for other in rng.sample(others, min(deviations, len(others))):
            game.play(other)
            try:
                yield ply, find_puzzle(game, side.start(), f"{source}ply {ply} after {other}".strip(), table), None
            except SearchLimit as exc:
                yield ply, None, str(exc)
            finally:
                game.undo()


# -- files ----------------------------------------------------------------------------------


def load_puzzles(text: str, where: str = "puzzles") -> list[Puzzle]:
    """Puzzles from JSON lines; :class:`PuzzleError` names the bad line."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(Puzzle.from_json(json.loads(line)))
        except (json.JSONDecodeError, PuzzleError) as exc:
            raise PuzzleError(f"{where}:{i}: {exc}") from None
    return out


def write_puzzles(puzzles: Iterable[Puzzle], path: Path) -> None:
    """Write puzzles as JSON lines (compact, sorted keys, one per line)."""
    with path.open("w", encoding="utf-8") as f:
        for p in puzzles:
            f.write(json.dumps(p.to_json(), sort_keys=True, separators=(",", ":")) + "\n")


def shipped_puzzles() -> list[Puzzle]:
    """The verified puzzles shipped with the package."""
    text = resources.files("jericho_game").joinpath(SHIPPED).read_text(encoding="utf-8")
    return load_puzzles(text, SHIPPED)
