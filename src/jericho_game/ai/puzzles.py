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
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from jericho_game.core import NO_OUTCOME, SEVEN, State
from jericho_game.errors import PositionError
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

#: Themes, in the order the web page lists them.
THEMES = ("win-in-1", "win-in-2", "break-the-seven", "hold-on")
#: What each theme asks, in words (the first hint on the web page).
THEME_NAMES = {
    "win-in-1": "Win in 1: make seven monoliths that no reply can break",
    "win-in-2": "Win in 2: one move forces seven monoliths on your next turn",
    "break-the-seven": "Break the seven: your opponent holds seven monoliths; only one move saves you",
    "hold-on": "Hold on: your opponent threatens an unbreakable seven; only one move stops it",
}
#: A first rating for each theme (Glicko-2 scale); play results move it afterwards.
THEME_RATING = {"win-in-1": 1200.0, "break-the-seven": 1350.0, "hold-on": 1600.0, "win-in-2": 1750.0}
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


# -- puzzles --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Puzzle:
    """One proved puzzle.  ``solution`` alternates the solver's moves and the replies."""

    id: str
    position: str
    theme: str
    solution: tuple[str, ...]
    rating: float
    source: str = ""

    @property
    def side(self) -> str:
        """``"south"`` or ``"north"``: the side the puzzle is solved for (the side to move)."""
        return self.position.split()[3]

    def to_json(self) -> dict[str, Any]:
        """The puzzle as a JSON object (one line of a ``.jsonl`` file)."""
        return {
            "id": self.id,
            "position": self.position,
            "theme": self.theme,
            "solution": list(self.solution),
            "rating": round(self.rating),
            "source": self.source,
        }

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
        )


def puzzle_id(position: str) -> str:
    """A short stable id of a position (8 hex digits of its SHA-1)."""
    return hashlib.sha1(position.encode()).hexdigest()[:8]


def _name(game: Game, code: int) -> str:
    return str(game.tables.move_objects[code])


def _win_line(game: Game, first: int, b: Budget) -> list[str] | None:
    """The line of a unique working move ``first``: ``[first]`` for a win in 1, else
    ``[first, reply, finish]`` with a reply after which exactly one move wins in 1."""
    s = game.state
    me = s.turn
    s.push(first)
    try:
        if _won_after_push(s, me):
            return [_name(game, first)]
        codes = s.legal_codes()
        # The reply that keeps the opponent best placed, as a stubborn defender would play it.
        margin = s.margin_deltas(codes)
        for i in sorted(range(len(codes)), key=lambda i: (-margin[i], codes[i])):
            b.spend()
            s.push(codes[i])
            try:
                if s.outcome != NO_OUTCOME:
                    continue
                wins = winning_moves_1(s, b)
                if len(wins) == 1:
                    return [_name(game, first), _name(game, codes[i]), _name(game, wins[0])]
            finally:
                s.pop()
        return None
    finally:
        s.pop()


def find_puzzle(game: Game, budget: Budget | None = None, source: str = "") -> Puzzle | None:
    """The puzzle of ``game``'s current position, or ``None`` when it is none.

    Raises :class:`SearchLimit` when the budget runs out before the proof is complete.
    ``game`` is unchanged afterwards (moves are pushed and popped on its state).
    """
    b = budget or _unlimited()
    s = game.state
    if s.outcome != NO_OUTCOME:
        return None
    codes = s.legal_codes()
    if len(codes) < 2:
        return None  # a forced move is no puzzle
    position = game.position()
    wins = winning_moves_2(s, b, stop_after=2)
    if len(wins) >= 2:
        return None
    if len(wins) == 1:
        line = _win_line(game, wins[0], b)
        if line is None:
            return None
        theme = "win-in-1" if len(line) == 1 else "win-in-2"
    else:
        saves = saving_moves(s, b, stop_after=2)
        if len(saves) != 1:
            return None
        line = [_name(game, saves[0])]
        theme = "break-the-seven" if s.score[1 - s.turn] >= SEVEN else "hold-on"
    rating = float(round(THEME_RATING[theme] + min(200.0, len(codes) / 3)))  # more choices, harder to spot
    return Puzzle(puzzle_id(position), position, theme, tuple(line), rating, source)


def verify(puzzle: Puzzle, budget: Budget | None = None) -> list[str]:
    """Re-prove ``puzzle``: an empty list when it holds, else what is wrong.

    Checks that the position and moves are valid and the line is legal, that the first move
    is the one and only working move of the position (win within 2 for win themes; saving
    move, with no win available, for defence themes), and for a win in 2 that the final move
    is the only win in 1 after the reply.
    """
    b = budget or _unlimited()
    problems: list[str] = []
    try:
        game = Game.from_position(puzzle.position)
    except PositionError as exc:
        return [f"position: {exc}"]
    if puzzle.id != puzzle_id(puzzle.position):
        problems.append(f"id {puzzle.id} is not the position's id {puzzle_id(game.position())}")
    s = game.state
    codes: list[int] = []
    probe = game.copy()
    for i, text in enumerate(puzzle.solution):
        try:
            played = probe.play(text)
        except (ValueError, KeyError) as exc:
            return problems + [f"solution move {i + 1} {text!r}: {exc}"]
        codes.append(probe.tables.object_code[id(played)])
    want = {"win-in-1": 1, "win-in-2": 3, "break-the-seven": 1, "hold-on": 1}[puzzle.theme]
    if len(codes) != want:
        problems.append(f"a {puzzle.theme} solution has {want} moves, this one {len(codes)}")
        return problems
    me = s.turn
    if puzzle.theme in ("win-in-1", "win-in-2"):
        wins = winning_moves_2(s, b)
        if wins != [codes[0]]:
            names = [_name(game, c) for c in wins]
            problems.append(f"the working moves are {names or 'none'}, not exactly {puzzle.solution[0]}")
        s.push(codes[0])
        won = _won_after_push(s, me)
        if puzzle.theme == "win-in-1" and not won:
            problems.append(f"{puzzle.solution[0]} does not win in 1")
        if puzzle.theme == "win-in-2":
            if won:
                problems.append(f"{puzzle.solution[0]} already wins in 1: the theme should be win-in-1")
            s.push(codes[1])
            if s.outcome != NO_OUTCOME:
                problems.append(f"the reply {puzzle.solution[1]} ends the game")
            else:
                finish = winning_moves_1(s, b)
                if finish != [codes[2]]:
                    names = [_name(game, c) for c in finish]
                    problems.append(
                        f"after the reply the wins in 1 are {names or 'none'}, not exactly {puzzle.solution[2]}"
                    )
            s.pop()
        s.pop()
    else:
        if winning_moves_2(s, b, stop_after=1):
            problems.append("the solver has a win within 2 moves: not a defence puzzle")
        saves = saving_moves(s, b)
        if saves != [codes[0]]:
            names = [_name(game, c) for c in saves]
            problems.append(f"the saving moves are {names or 'none'}, not exactly {puzzle.solution[0]}")
        holds = s.score[1 - me] >= SEVEN
        if holds != (puzzle.theme == "break-the-seven"):
            problems.append(f"theme {puzzle.theme} does not match the opponent's {s.score[1 - me]} monoliths")
    return problems


def refutation(game: Game, theme: str, budget: Budget | None = None) -> str | None:
    """After a wrong move of the solver (the opponent to move in ``game``): a reply that shows why.

    For a win theme, a reply after which the solver has no win in 1; for a defence theme, the
    opponent's win in 1.  ``None`` when the game is over or none is found (a wrong move that
    works beyond the puzzle's horizon).  ``game`` is unchanged.
    """
    b = budget or _unlimited()
    s = game.state
    if s.outcome != NO_OUTCOME:
        return None
    solver = 1 - s.turn
    if theme in ("break-the-seven", "hold-on"):
        wins = winning_moves_1(s, b, first=True)
        return _name(game, wins[0]) if wins else None
    codes = s.legal_codes()
    after = _score_after(s, codes, solver)
    for i in sorted(range(len(codes)), key=after.__getitem__):
        b.spend()
        s.push(codes[i])
        try:
            if s.outcome == NO_OUTCOME and not has_win_1(s, b):
                return _name(game, codes[i])
            if s.outcome not in (NO_OUTCOME, solver):
                return _name(game, codes[i])
        finally:
            s.pop()
    return None


def puzzles_from_game(
    start: Game, moves: Iterable[str], budget: Budget, source: str = ""
) -> Iterator[tuple[int, Puzzle | None, str | None]]:
    """Walk a game and yield ``(ply, puzzle or None, why skipped or None)`` for each position
    before a move (the budget restarts at each position)."""
    game = start.copy()
    for ply, text in enumerate(list(moves)):
        try:
            yield ply, find_puzzle(game, budget.start(), f"{source}ply {ply}".strip()), None
        except SearchLimit as exc:
            yield ply, None, str(exc)
        game.play(text)


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
