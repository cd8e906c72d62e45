"""Game analysis: each position's winning chances by the strongest search, and the moves that lost most.

Two nouns:

* :class:`PositionEval` — one position (after ``ply`` moves): **South's winning chance** in
  [0, 1] (a draw counts one half, as the search scores it), the move the AI prefers there, and
  whether the figure is exact.
* :class:`MoveJudgement` — one move played: its mover, the **loss** (how much lower the mover's
  winning chance is after the move than after the AI's preferred move, see *The yardstick*) and
  the mark that loss earns (:func:`classify`).

Where the figures come from (:func:`evaluate`):

* a finished position is exact: 1 if South won, 0 if North won, ½ for a draw;
* a position where the side to move completes seven monoliths that no reply can break is
  exact too (1 for the mover), with that move preferred;
* a position the search's solver proves (C kernel: a move proven won, or every move proven
  lost) is exact too;
* a forced move (one legal move, e.g. a forced pass) takes the value of the position after it;
* otherwise the search of ``master-v3`` (the ``master`` level before the value network, MCTS,
  :mod:`jericho_game.ai.levels`: :data:`CALIBRATION` was fitted to it) runs with
  ``sims`` simulations, never more than ``seconds``, and the figure is the search's **root
  value**: the share of its simulations won by the side to move (draws half), calibrated to a
  winning chance (:func:`calibrate`, :data:`CALIBRATION`) and turned to South's point of view.
  The preferred move is the search's choice (the most visited move).  A root the search's own
  endgame solver settles is exact.

**The yardstick.**  A search's root value underestimates its side to move: its simulations
include the moves it explores, not only the best.  So the position before a move (the mover to
move, underestimated) and the position after it (the opponent to move, so the mover
*over*-estimated) carry opposite biases, and their difference hid a few points of every move's
loss: a random move read as losing 4–8 points, and a sound reply as *gaining* as much (issue 31:
random play reviewed at 72–90 %).  So each searched position is also searched after its preferred
move (``PositionEval.best_after``, the same budget, the other side to move, as the position after
the move played is), and a move's loss is the mover's chance after the preferred move minus after
the move played: two figures with the same bias.  Reviews stored without it (older ones) fall
back to the chance before the move.

Marks (:func:`classify`), on the mover's loss in winning chance:

=============  ======================  ====
mark           loss at least           sign
=============  ======================  ====
inaccuracy     0.10 (10 points)        ?!
mistake        0.20 (20 points)        ?
blunder        0.30 (30 points)        ??
=============  ======================  ====

**The reply's bound.**  When the position after the opponent's reply is decided against the
mover (exact, or at most :data:`DECIDED`), the move was worth at most that (the opponent chooses),
so its loss is measured to there: a move that let the reply decide the game lost it all.  Not
between two undecided figures: the lower of two noisy figures would charge every move the
search's noise.

A move that is the AI's preferred move, or the only legal move, is never marked (its loss is
0): what remains of a drop there is the search's noise, not the player's error.  The
thresholds are on a 0–1 scale of winning chances (lichess's 0.1/0.2/0.3 are on a −1…1 scale,
i.e. half these); MCTS root values at a review's budget are noisier than an engine's
centipawns, so the marks need a wider margin.

**Decided positions.**  A position is *decided* when it is exact (finished, or seven monoliths
that no reply breaks) or when a side's winning chance is at most :data:`DECIDED` (5 %) — the
other's at least 95 %.  A move that turns an undecided position into one decided against its
mover (or a won or drawn one into a lost one) is a **blunder whatever its size**
(``MoveJudgement.decided``), provided it lost at least
:data:`DECIDING_LOSS` (5 points: a smaller drop across the line is the search's noise).  So a
move from 28 % to a lost 0 % is a blunder, not a "mistake".

**The deciding move** (:func:`deciding_move`, issue 53): the **last move that changed the game's
value** under best play (a won game made drawn or lost, a drawn one lost).  A move cannot raise its
mover's value, so it is never the winner's move, and every position after it has the final value.
Where it can be known it is exact: :func:`solve_back` walks the game back from its end with the
endgame solver (win/draw/loss, :data:`DECIDE_NODES` nodes a position and :data:`DECIDE_TOTAL` for the
walk, one table along it: nodes, not seconds, so the answer is the same at any load), skipping the
solves the theory makes needless (before the winner's move the position was won too; a forced move
keeps the value), until a position is not settled; a value change inside the solved positions is the
answer.  Where the solver stops before the value changes, the answer is *probable*, from the search's
figures before the solved positions: the move of the side that ended worse (either side for a draw)
after which the search read every position as the result (its chance crossed the decided line), or,
when the winner's move crossed it, the loser's move whose chance fell most; it carries its mover's
chance before and after it (how sure "probably" is), and is still never the winner's move.  The
earlier rule (:func:`decisive`: the first position from which the figures read the result, kept for
the accuracy's count) named a move 2 or 4 plies late, or the winner's move, in the audit's games.

**Accuracy** (:func:`accuracy`), per side, 0–100, as lichess computes it
(``lila/modules/analyse/src/main/AccuracyPercent.scala``), on winning chances in percent:

* each move: ``103.1668 · exp(−0.04354 · drop) − 3.1669 + 1``, clamped to 0…100, where ``drop``
  is the mover's loss in points (0 for the AI's preferred move or a forced move, as for the
  marks; lichess's ``+ 1`` is its allowance for imperfect analysis);
* the game: the mean of (a) the moves' accuracies weighted by the *volatility* around each move
  — the standard deviation of South's winning chance over a window of ``clamp(moves / 10, 2, 8)``
  positions, clamped to 0.5…12 — and (b) their harmonic mean (each move's accuracy at least 1
  in it).  The weighting counts a move in a sharp phase more than one in a quiet phase; the
  harmonic mean lets a few bad moves pull the figure down.

Adapted in one point: lichess turns centipawns into a winning chance first; here the search gives
the chance directly.

**Turning points** (:func:`turning_points`): per side, the :data:`TURNING` moves that lost the
most, marked or not, each with its **share of the slide** — its loss divided by the sum of all
that side's losses in the game — so a game lost by many small steps still names its steps.

**The line** (``PositionEval.line``): the preferred move and the best play after it, a few plies
(:data:`LINE_PLIES`), found by following the preferred move with shorter searches (the C search
returns only the root's children, so its tree cannot be walked down).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from jericho_game import kernel
from jericho_game.ai._util import Deadline, game_state, to_move, winning_sevens
from jericho_game.ai.base import Limit
from jericho_game.game import Game
from jericho_game.moves import Move

__all__ = [
    "INACCURACY",
    "MISTAKE",
    "BLUNDER",
    "DECIDED",
    "DECIDING_LOSS",
    "LINE_PLIES",
    "THRESHOLDS",
    "TURNING",
    "MoveJudgement",
    "PositionEval",
    "TurningPoint",
    "accuracy",
    "calibrate",
    "CALIBRATION",
    "counted",
    "classify",
    "decided",
    "decisive",
    "verdict",
    "Decisive",
    "Deciding",
    "SolvedEnd",
    "deciding_move",
    "solve_back",
    "DECIDE_NODES",
    "DECIDE_TOTAL",
    "solved_eval",
    "SOLVE_NODES",
    "move_accuracy",
    "ACCURACY_SCALE",
    "evaluate",
    "evaluate_game",
    "evaluate_ply",
    "judge",
    "replay",
    "stream",
    "turning_points",
]

#: Losses of winning chance (0–1 scale) from which a move is marked.
INACCURACY = 0.10
MISTAKE = 0.20
BLUNDER = 0.30
#: The marks, strongest first: (name, least loss, sign).
THRESHOLDS: tuple[tuple[str, float, str], ...] = (
    ("blunder", BLUNDER, "??"),
    ("mistake", MISTAKE, "?"),
    ("inaccuracy", INACCURACY, "?!"),
)

#: A side whose winning chance is at most this (the other's at least 1 − this) has a decided game.
DECIDED = 0.05
#: The least loss for which crossing into a decided position makes a move a blunder (search noise).
DECIDING_LOSS = 0.05
#: The turning points shown per side (at least).
TURNING = 3
#: The accuracy's calibration (issue 53 point 2): a move's loss of winning chance is multiplied by this
#: before lichess's curve (:func:`move_accuracy`).  Fitted on the games of each ladder level against
#: ``hard``, reviewed at the web review's budget (``tests/fixtures/review/ladder.jsonl``,
#: ``examples/accuracy_ladder.py --fit``, :mod:`jericho_game.ai.calibration`): the scale whose medians
#: are strictly ordered along the ladder with the widest margin, random play at 50 or below and
#: ``master`` at 90 or above.  It came out as lichess's own (1): with a budget in simulations, not
#: seconds, its curve already orders the ladder (docs/web.md, "Game review").
ACCURACY_SCALE = 1.0
#: Plies of a position's line: the preferred move and the best play after it.
LINE_PLIES = 5
#: Each later ply of the line is searched with this share of the position's budget (1/8).
_LINE_SHARE = 8
#: The endgame solver's budget in a review's position (nodes; at most this share of the
#: position's seconds): late positions are solved outright, the rest go to the search.
SOLVE_NODES = 20_000
SOLVE_SHARE = 0.25
#: The deciding move's walk back from the end (:func:`solve_back`): the endgame solver's budget per
#: position and for the whole walk, in nodes (not seconds: the same answer at any load), and its
#: transposition table (kept along the walk: a solved position stays solved).  Measured on the games of
#: tests/fixtures/review/deciding.jsonl (docs/web.md, "Game review"): 0.7 s of one core on average,
#: 1.4 s at most, on the C kernel; the pure-Python core (about a hundred times slower) gets 1/200th.
DECIDE_NODES = 1_000_000
DECIDE_TOTAL = 5_000_000
DECIDE_NODES_PY = 5_000
DECIDE_TOTAL_PY = 25_000
DECIDE_TABLE_MB = 16.0
#: The stored walk's version (:meth:`SolvedEnd.to_dict`): another version reads as no walk.
SOLVED_END_VERSION = 1

_RESULT_VALUE = {"south": 1.0, "north": 0.0, "draw": 0.5}

#: The search's value turned into a winning chance: ``1 / (1 + ((1 - v) / v) ** CALIBRATION)``, a
#: logistic on the value's log-odds (symmetric: the two sides' chances still add up to 1).  Fitted
#: by maximum likelihood on CALIBRATION_SAMPLE positions of self-play with the review's search
#: (labelled by the game's result, draws ½), by
#: ``python examples/calibrate_review.py --games 40 --sims 3000 --seconds 1 --seed 1``.
CALIBRATION = 1.301
CALIBRATION_SAMPLE = 1503  # positions, from 40 games


@dataclass(frozen=True)
class PositionEval:
    """The position after ``ply`` moves: South's winning chance ``south`` (0–1), the side to move
    ``turn`` ("south"/"north"), the AI's preferred move ``best`` in notation (``None`` when the game
    is over there), ``exact`` (decided, not estimated), the search's simulations ``sims`` and the
    ``line``: ``best`` and the best play after it (up to :data:`LINE_PLIES` moves, empty when the
    game is over there)."""

    ply: int
    south: float
    turn: str
    best: str | None
    exact: bool
    sims: int
    line: tuple[str, ...] = field(default=())
    #: The solver's verdict, when it decided the position to the end of the game: the side to
    #: move's value (1 win, 0 draw, -1 loss) and the plies to the end under best play (``None``
    #: for a draw); ``None``/``None`` when the position was not solved.
    value: int | None = None
    plies: int | None = None
    #: South's winning chance after ``best``: the position it leads to, evaluated on its own as the
    #: position after any other move is (with the other side to move), the yardstick of a move's
    #: loss (see the module); ``None`` when the game is over here or the figure was not computed.
    best_after: float | None = None

    @property
    def solved(self) -> bool:
        """Whether the position's result is known to the end of the game (solved or finished)."""
        return self.value is not None

    def chance(self, side: str) -> float:
        """``side``'s winning chance in this position."""
        return self.south if side == "south" else 1.0 - self.south

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the web app stores and sends these)."""
        return asdict(self)


@dataclass(frozen=True)
class MoveJudgement:
    """Move number ``ply`` (1 = the first move), ``move`` in notation, played by ``side``: the mover's
    winning chance ``before`` and ``after`` it, the ``loss`` (0 when not marked-worthy by rule, see the
    module), ``mark`` (``None``, "inaccuracy", "mistake" or "blunder"), the AI's preferred move
    ``best`` in the position before, ``decided``: the move turned an undecided position into
    one decided against its mover (a blunder whatever its size), and ``best_after``: the mover's
    chance after ``best`` (``None`` for a review stored without it)."""

    ply: int
    move: str
    side: str
    before: float
    after: float
    loss: float
    mark: str | None
    best: str | None
    decided: bool = False
    #: The mover's winning chance after the preferred move (the loss's yardstick), when known.
    best_after: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def classify(loss: float) -> str | None:
    """The mark a loss of winning chance earns: "blunder", "mistake", "inaccuracy" or ``None``."""
    for name, least, _ in THRESHOLDS:
        if loss >= least - 1e-9:
            return name
    return None


def calibrate(value: float) -> float:
    """The winning chance (0–1) of the side to move for the search's root value ``value`` (its share of
    simulations won, draws half), by :data:`CALIBRATION`: a raw share of simulations is no probability."""
    v = min(1.0 - 1e-4, max(1e-4, value))
    return 1.0 / (1.0 + ((1.0 - v) / v) ** CALIBRATION)


def decided(chance: float, exact: bool = False) -> bool:
    """Whether a position where a side's winning chance is ``chance`` is decided (see the module)."""
    return exact or chance <= DECIDED + 1e-9 or chance >= 1.0 - DECIDED - 1e-9


def replay(start_position: str | None, moves: list[str]) -> Game:
    """The game from ``start_position`` (``None``: the standard start) after ``moves``."""
    game = Game.from_position(start_position) if start_position else Game()
    for mv in moves:
        game.play(mv)
    return game


def evaluate(game: Game, ply: int, *, sims: int, seconds: float | None = None, seed: int = 0) -> PositionEval:
    """Evaluate ``game``'s position (the ``ply``-th of its game) as the module describes; ``game`` is
    not changed.  ``sims`` bounds the search (reproducible for a ``seed``), ``seconds`` caps it.
    A searched position costs two searches: its own and the position after its preferred move's
    (``best_after``, whose line continues this one's)."""
    return _evaluate(game, ply, sims, seconds, seed, reference=True)


def _evaluate(game: Game, ply: int, sims: int, seconds: float | None, seed: int, reference: bool) -> PositionEval:
    """:func:`evaluate`; ``reference``: also evaluate the position after the preferred move."""
    if sims < 1:
        raise ValueError(f"sims must be at least 1, got {sims}")
    turn = game.turn.value
    if game.is_over():
        return _finished(game, ply)
    legal = game.legal_moves()
    if len(legal) == 1:  # forced: the position after the only move is this one's value
        after = game.copy()
        after.play(legal[0])
        nxt = _evaluate(after, ply, sims, seconds, seed, reference)
        line = (str(legal[0]), *nxt.line)[:LINE_PLIES]
        value, plies = _forced(nxt, turn)
        return PositionEval(ply, nxt.south, turn, str(legal[0]), nxt.exact, nxt.sims, line, value, plies, nxt.south)
    won = _winning_seven(game)
    if won is not None:  # seven monoliths that no reply breaks: won, no search needed
        south = 1.0 if turn == "south" else 0.0
        return PositionEval(ply, south, turn, won, True, 0, (won,), 1, 2, south)
    solved = solved_eval(game, ply, SOLVE_NODES, None if seconds is None else seconds * SOLVE_SHARE)
    if solved is not None:
        return replace(solved, best_after=solved.south)  # the solver's move keeps the value
    move, mover_value, done, proven = _search(game, sims, seconds, seed)
    if not proven:
        mover_value = calibrate(mover_value)
    south = mover_value if turn == "south" else 1.0 - mover_value
    if proven or not reference:
        line = _line(game, str(move), sims, seconds, seed)
        return PositionEval(ply, south, turn, str(move), proven, done, line, best_after=south if proven else None)
    # The yardstick of a move's loss: the position after the preferred move, searched as the position
    # after the move played is (the same budget, the other side to move).  A search's root value
    # underestimates its side to move (its simulations include the moves it explores), so "this
    # position" and "after the move" carry opposite biases that hid a few points of every move's loss
    # (see the module); two positions with the same side to move carry the same bias.
    after = game.copy()
    after.play(move)
    nxt = _evaluate(after, ply + 1, sims, seconds, seed + 1_000_003, reference=False)
    line = (str(move), *nxt.line)[:LINE_PLIES]
    return PositionEval(ply, south, turn, str(move), proven, done, line, best_after=nxt.south)


def _finished(game: Game, ply: int) -> PositionEval:
    result = game.outcome()
    assert result is not None
    turn = game.turn.value
    value = 0 if result == "draw" else 1 if result == turn else -1
    return PositionEval(ply, _RESULT_VALUE[result], turn, None, True, 0, (), value, 0 if value else None)


def _forced(nxt: PositionEval, turn: str) -> tuple[int | None, int | None]:
    """The solver's verdict of a position whose only move leads to ``nxt`` (the other side to move
    there, unless that move ended the game... which ``nxt.turn`` says)."""
    if nxt.value is None:
        return None, None
    value = nxt.value if nxt.turn == turn else -nxt.value
    return value, None if nxt.plies is None else nxt.plies + 1


def solved_eval(
    game: Game, ply: int, nodes: int, seconds: float | None, whole_line: bool = False
) -> PositionEval | None:
    """The endgame solver's evaluation of ``game``'s position when it decides it within ``nodes``
    (and ``seconds``), else ``None``: exact, its best move, its line (the first
    :data:`LINE_PLIES` moves, or the whole line to the end with ``whole_line``), value and plies."""
    from jericho_game.ai.solver import solve

    sol = solve(game, nodes=nodes, seconds=seconds if seconds is None or seconds > 0 else None)
    if sol.value is None or sol.move is None:
        return None
    turn = game.turn.value
    mover = {1: 1.0, 0: 0.5, -1: 0.0}[sol.value]
    south = mover if turn == "south" else 1.0 - mover
    line = tuple(str(m) for m in sol.line)
    return PositionEval(
        ply, south, turn, str(sol.move), True, 0, line if whole_line else line[:LINE_PLIES], sol.value, sol.plies
    )


def _winning_seven(game: Game) -> str | None:
    """A move completing seven monoliths that no reply breaks (the first in notation order), if any."""
    state = game_state(game)
    wins = winning_sevens(state, state.legal_codes())
    return min(str(to_move(game, c)) for c in wins) if wins else None


def _line(game: Game, first: str, sims: int, seconds: float | None, seed: int) -> tuple[str, ...]:
    """``first`` and the best play after it, up to :data:`LINE_PLIES` moves: forced and winning
    moves as :func:`evaluate` finds them, otherwise the move of a search with 1/8 of the budget."""
    sub_sims = max(1, sims // _LINE_SHARE)
    sub_seconds = None if seconds is None else seconds / _LINE_SHARE
    after = game.copy()
    after.play(first)
    line = [first]
    while len(line) < LINE_PLIES and not after.is_over():
        legal = after.legal_moves()
        if len(legal) == 1:
            move = str(legal[0])
        else:
            won = _winning_seven(after)
            move = won if won is not None else str(_search(after, sub_sims, sub_seconds, seed + len(line))[0])
        line.append(move)
        after.play(move)
    return tuple(line)


def _search(game: Game, sims: int, seconds: float | None, seed: int) -> tuple[Move, float, int, bool]:
    """The review's search (``master-v3``'s): (its move, the root value for the side to move, simulations run,
    whether that value is proven).  On the C kernel the search's solver proves positions: a move
    proven won makes the position won (value 1), every legal move proven lost makes it lost (0)."""
    from jericho_game.ai.levels import MASTER_TIME, master_v3
    from jericho_game.ai.mcts import KernelMCTSPlayer, MCTSPlayer, Node

    cap = MASTER_TIME if seconds is None else min(seconds, MASTER_TIME)
    player = master_v3(seed=seed, time=cap)
    if isinstance(player, KernelMCTSPlayer):
        move = player.choose_move(game, Limit(nodes=sims, time=cap, seed=seed))
        children = [(visits, wins) for _, visits, wins in player.last_children]
        settled = player.last_solution
        if settled is not None and settled.value is not None:
            # the search's own endgame solver settled the root: it ran no search (a win) or only
            # among the drawing moves (a draw), so its children are no estimate; the result is exact
            return move, {1: 1.0, 0: 0.5, -1: 0.0}[settled.value], sum(n for n, _ in children), True
        if player.last_proven:  # a move proven won, or every move proven lost
            won = 1 in player.last_proofs.values()
            return move, 1.0 if won else 0.0, sum(n for n, _ in children), True
    else:  # the pure-Python search (no C kernel): the same algorithm, run on a root we keep
        assert isinstance(player, MCTSPlayer)
        state = kernel.python_state(game_state(game))
        root = Node(-1, 1 - state.turn)
        player.search(state, root, sims, Deadline(cap))
        top = max(root.children, key=lambda ch: (ch.n, ch.w))
        move = to_move(game, top.code)
        children = [(ch.n, ch.w) for ch in root.children]
    visits = sum(n for n, _ in children)
    value = sum(w for _, w in children) / visits if visits else 0.5
    return move, min(1.0, max(0.0, value)), visits, False


#: A streamed evaluation (:func:`stream`): the search runs in slices of at most this many seconds
#: (so a stop is seen within one slice), and says where it stands about every ``every`` seconds.
STREAM_SLICE = 0.05
#: Each ply of a streamed evaluation's line after the first: a search of this many seconds at most
#: (the line is recomputed at every update, so it costs little: 4 of them after each update).
STREAM_LINE_SECONDS = 0.02
#: A streamed evaluation keeps the preferred move it showed while that move has at least this share of
#: the most visited move's visits (None: always the most visited), so the first seconds' best move
#: does not flicker between two near-equal moves (issue 52); measured in docs/web.md, "Analysis board".
STREAM_HOLD: float | None = 0.6
#: The endgame solver's budget before the analysis board's search starts, in nodes only (the C
#: kernel; the pure-Python core: :data:`STREAM_SOLVE_NODES_PY`), so that a position is read as solved
#: or not the same at any load: with 300,000 nodes *and* 0.5 s, an 8-ply win came back unsolved on a
#: loaded server.  On the 40 first games of ``tests/fixtures/review/deciding.jsonl`` the positions 8
#: plies before the end are solved within 300,000 nodes in 36, within 1,000,000 in 39 (10 plies: 16
#: and 27); 1,000,000 nodes take about 0.6-1 s of one core.
STREAM_SOLVE_NODES = 1_000_000
STREAM_SOLVE_NODES_PY = 20_000
#: ... and only with at most this many pieces left in the two reserves together (50 at the start):
#: beyond, the solver seldom settles a position within its budget (16 pieces: about 1 in 10, ``jericho
#: bench --solver``), and the search's first figure would wait for it in every middle-game position.
STREAM_SOLVE_PIECES = 16


def held(shown: int | None, visits: dict[int, int], hold: float | None) -> bool:
    """Whether a streamed evaluation keeps the move it showed (code ``shown``): it has at least
    ``hold`` of the most visited move's ``visits`` (:data:`STREAM_HOLD`; ``None``: never kept)."""
    if hold is None or shown is None or not visits:
        return False
    return visits.get(shown, 0) >= hold * max(visits.values())


def stream(
    game: Game,
    ply: int,
    *,
    sims: int,
    seconds: float,
    stopped: Callable[[], bool] = lambda: False,
    every: float = 0.25,
    seed: int = 0,
) -> Iterator[PositionEval]:
    """Evaluations of ``game``'s position at growing simulation counts: the analysis board's live
    engine.  The review's search (``master-v3``'s, as :func:`evaluate`) runs on one tree in slices of
    :data:`STREAM_SLICE`; about every ``every`` seconds (the first after the first slice) it yields
    South's chance, the preferred move and its line so far.  It ends after ``sims`` simulations or
    ``seconds``, when the solver proves the position (the last evaluation is then ``exact``), or at
    the first slice after ``stopped()`` turns true.  A finished position, a seven that no reply
    breaks, yields one exact evaluation; a forced move streams the position after it.  Before the
    search, a position with at most :data:`STREAM_SOLVE_PIECES` pieces left goes to the endgame solver
    for :data:`STREAM_SOLVE_NODES` nodes (no time limit, so it is solved or not alike at any load, and
    not stopped while it runs); a position it settles yields one exact evaluation with the solver's
    whole line."""
    if sims < 1 or seconds <= 0:
        raise ValueError(f"sims and seconds must be positive, got {sims} and {seconds}")
    turn = game.turn.value
    if game.is_over():
        yield _finished(game, ply)
        return
    legal = game.legal_moves()
    if len(legal) == 1:
        after = game.copy()
        after.play(legal[0])
        forced = str(legal[0])
        for ev in stream(after, ply, sims=sims, seconds=seconds, stopped=stopped, every=every, seed=seed):
            value, plies = _forced(ev, turn)
            line = (forced, *ev.line)[: len(ev.line) + 1 if ev.solved else LINE_PLIES]
            yield PositionEval(ply, ev.south, turn, forced, ev.exact, ev.sims, line, value, plies)
        return
    won = _winning_seven(game)
    if won is not None:
        yield PositionEval(ply, 1.0 if turn == "south" else 0.0, turn, won, True, 0, (won,), 1, 2)
        return
    # a position the endgame solver decides reads like a tablebase: its value, plies and whole line
    solved = None
    if kernel.pieces_left(game.state) <= STREAM_SOLVE_PIECES:
        nodes = STREAM_SOLVE_NODES if kernel.is_c_state(game.state) else STREAM_SOLVE_NODES_PY
        solved = solved_eval(game, ply, nodes, None, whole_line=True)
    if solved is not None:
        yield solved
        return
    if stopped():
        return
    from jericho_game.ai.levels import MASTER_TIME, master_v3
    from jericho_game.ai.mcts import KernelMCTSPlayer, MCTSPlayer, Node

    player = master_v3(seed=seed, time=MASTER_TIME)
    root = None
    state = None
    if not isinstance(player, KernelMCTSPlayer):  # the pure-Python search, on a root we keep
        assert isinstance(player, MCTSPlayer)
        state = kernel.python_state(game_state(game))
        root = Node(-1, 1 - state.turn)
    start = time.monotonic()
    end = start + seconds
    emit = start  # the first slice is reported at once
    shown: tuple[int, Move] | None = None  # the preferred move reported last: its code and move
    visits: dict[int, int] = {}
    done = 0
    while True:
        left = end - time.monotonic()
        budget = STREAM_SLICE if left <= 0 else min(STREAM_SLICE, left)
        nodes = max(1, min(sims - done, 4096))
        proven = False
        if isinstance(player, KernelMCTSPlayer):
            move = player.choose_move(game, Limit(nodes=nodes, time=budget, seed=seed if done == 0 else None))
            done = sum(n for _, n, _ in player.last_children)
            visits = {code: n for code, n, _ in player.last_children}
            wins = sum(w for _, _, w in player.last_children)
            value = wins / done if done else 0.5
            settled = player.last_solution
            if settled is not None and settled.value is not None:  # the search's endgame solver settled it
                proven = True
                value = {1: 1.0, 0: 0.5, -1: 0.0}[settled.value]
            elif player.last_proven:
                proven = True
                value = 1.0 if 1 in player.last_proofs.values() else 0.0
        else:
            assert root is not None and state is not None and isinstance(player, MCTSPlayer)
            player.search(state, root, nodes, Deadline(budget))
            top = max(root.children, key=lambda ch: (ch.n, ch.w))
            move = to_move(game, top.code)
            done = sum(ch.n for ch in root.children)
            value = sum(ch.w for ch in root.children) / done if done else 0.5
            visits = {ch.code: ch.n for ch in root.children}
        if not proven:
            value = calibrate(value)
        finished = proven or done >= sims or time.monotonic() >= end
        # a steadier preferred move: the one shown stays while its visits are at least STREAM_HOLD of
        # the most visited move's (the first seconds' leader changes often by a hair); the last
        # update gives the most visited
        if not finished and held(shown[0] if shown else None, visits, STREAM_HOLD):
            assert shown is not None
            move = shown[1]
        shown = next(((code, move) for code in visits if to_move(game, code) == move), None)
        if stopped():
            return
        now = time.monotonic()
        if finished or now >= emit:
            emit = now + every
            south = value if turn == "south" else 1.0 - value
            south = min(1.0, max(0.0, south))
            line = _line(game, str(move), max(1, done // _LINE_SHARE), STREAM_LINE_SECONDS * _LINE_SHARE, seed)
            yield PositionEval(ply, south, turn, str(move), proven, done, line)
        if finished or stopped():
            return


def evaluate_game(
    start_position: str | None, moves: list[str], *, sims: int, seconds: float | None = None
) -> list[PositionEval]:
    """Every position of a game, the start included (``len(moves) + 1`` evaluations); position
    ``i`` is searched with seed ``i`` (reproducible when ``seconds`` does not cut the search)."""
    game = replay(start_position, [])
    out = [evaluate(game, 0, sims=sims, seconds=seconds, seed=0)]
    for i, mv in enumerate(moves, start=1):
        game.play(mv)
        out.append(evaluate(game, i, sims=sims, seconds=seconds, seed=i))
    return out


def judge(moves: list[str], evals: list[PositionEval]) -> list[MoveJudgement]:
    """The judgement of each move whose positions before and after are both evaluated.

    ``evals[i]`` must be the evaluation of the position after ``i`` moves (as
    :func:`evaluate_game` returns them, or a prefix of that list while a review is running)."""
    out = []
    for k in range(1, min(len(moves), len(evals) - 1) + 1):
        before, after = evals[k - 1], evals[k]
        if before.ply != k - 1 or after.ply != k:
            raise ValueError(f"evaluations out of order at ply {k}: got plies {before.ply} and {after.ply}")
        side = before.turn
        move = moves[k - 1]
        b, a = before.chance(side), after.chance(side)
        # the reply's bound: a move is worth at most what the position after the opponent's reply is
        # worth to its mover (the opponent chooses).  Used only when that position is decided against
        # the mover (solved, or the search at 5 % or less): a move that let the reply decide the game
        # was a move into a lost game.  Between two undecided figures the bound would charge every
        # move the search's noise (the lower of two noisy figures): sound play reviewed 84 instead of
        # 98 (median of 8 expert games, docs/web.md)
        bound = a
        if len(evals) > k + 1 and len(moves) > k:
            reply = evals[k + 1]
            if reply.exact or reply.chance(side) <= DECIDED + 1e-9:
                bound = min(a, reply.chance(side))
        # the yardstick: the mover's chance after the preferred move, when it was evaluated (a position
        # with the same side to move as the one after the move played), else the chance before it
        ref = b if before.best_after is None else (before.best_after if side == "south" else 1.0 - before.best_after)
        loss = 0.0 if move == before.best else max(0.0, ref - bound)  # a forced move is the preferred one
        mark = classify(loss)
        # a game not lost (undecided, won or drawn) made lost: a blunder whatever the size of the drop
        lost_it = b > DECIDED + 1e-9 and bound <= DECIDED + 1e-9 and loss >= DECIDING_LOSS - 1e-9
        # a won or drawn game made lost, as the solver proves it: a blunder whatever the figures
        if before.exact and after.exact and b >= 0.5 - 1e-9 and a <= 1e-9:
            lost_it = True
            loss = max(loss, b - a)
        if lost_it:
            mark = "blunder"
        yardstick = None if before.best_after is None else round(ref, 4)
        out.append(MoveJudgement(k, move, side, b, a, round(loss, 4), mark, before.best, lost_it, yardstick))
    return out


def verdict(ev: PositionEval) -> str | None:
    """The result a position fixes, if any: "south" or "north" (a won game for that side: solved,
    or the strongest search at least 1 − :data:`DECIDED`) or "draw" (a solved draw); else ``None``."""
    if ev.exact:
        return "south" if ev.south >= 1.0 - 1e-9 else "north" if ev.south <= 1e-9 else "draw"
    if ev.south >= 1.0 - DECIDED - 1e-9:
        return "south"
    if ev.south <= DECIDED + 1e-9:
        return "north"
    return None


@dataclass(frozen=True)
class Decisive:
    """When the game was decided: after move ``ply`` (0: before any move) the result ``result``
    ("south", "north" or "draw") was fixed and stayed so to the end; ``exact`` when the position
    after that move was solved (not the search's 95 %)."""

    ply: int
    result: str
    exact: bool

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def decisive(evals: list[PositionEval], total: int | None = None) -> Decisive | None:
    """The first move after which the result was fixed (see :func:`verdict`): the earliest
    position from which every later one, to the end of the game, has the same verdict as the
    last.  ``None`` unless every position of the game is evaluated (``total``: the game's moves,
    when ``evals`` may be a prefix) and the last position has a verdict."""
    if not evals or (total is not None and len(evals) != total + 1):
        return None
    last = verdict(evals[-1])
    if last is None:
        return None
    k = len(evals) - 1
    while k > 0 and verdict(evals[k - 1]) == last:
        k -= 1
    return Decisive(k, last, evals[k].exact)


def _mine(side: str, south: float) -> float:
    """``side``'s value (or chance) for South's ``south``."""
    return south if side == "south" else 1.0 - south


def _result_of(south: float) -> str:
    """The result an exact South value stands for: "south" (1), "north" (0) or "draw" (½)."""
    return "south" if south >= 1.0 - 1e-9 else "north" if south <= 1e-9 else "draw"


def _snap(south: float) -> float:
    """An exact South value as 1, ½ or 0."""
    return {"south": 1.0, "north": 0.0, "draw": 0.5}[_result_of(south)]


@dataclass(frozen=True)
class SolvedEnd:
    """The end of a game as the endgame solver knows it (:func:`solve_back`): South's exact value (1 won,
    ½ drawn, 0 lost) in every position from ``first`` to the last, ``values[0]`` being position ``first``
    (``first`` is the number of positions, ``values`` empty, when not even the last is known); walked
    with ``nodes`` per position, ``spent`` in all."""

    first: int
    values: tuple[float, ...]
    nodes: int
    spent: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, with its version (``v``): the review stores it."""
        return {"v": SOLVED_END_VERSION, **asdict(self), "values": list(self.values)}

    @classmethod
    def from_dict(cls, data: Any) -> SolvedEnd | None:
        """The stored walk, or ``None`` for none, another version or a malformed one (read as no walk)."""
        if not isinstance(data, dict) or data.get("v") != SOLVED_END_VERSION:
            return None
        try:
            values = tuple(_snap(float(v)) for v in data["values"])
            return cls(int(data["first"]), values, int(data["nodes"]), int(data["spent"]))
        except (KeyError, TypeError, ValueError):
            return None


def solve_back(
    start_position: str | None, moves: list[str], *, nodes: int | None = None, total: int | None = None
) -> SolvedEnd:
    """The game's exact values from its end backwards, as far as the endgame solver answers.

    The last position is solved (a finished one is exact), then each earlier one while the solver
    settles it (win/draw/loss only) within ``nodes`` (default :data:`DECIDE_NODES`, on the pure-Python
    core :data:`DECIDE_NODES_PY`), ``total`` for the whole walk (:data:`DECIDE_TOTAL`,
    :data:`DECIDE_TOTAL_PY`), one transposition table along the walk.  Budgets are nodes, so the walk
    is the same at any load.  The game's theory saves solves: a move cannot raise its mover's value, so
    when the position after a move is won for its mover, the one before was won too; and a forced move
    keeps the value.  Where both positions around a move are solved, that theory is asserted."""
    from jericho_game.ai.solver import Table, solve

    games = [replay(start_position, [])]
    for mv in moves:
        nxt = games[-1].copy()
        nxt.play(mv)
        games.append(nxt)
    fast = kernel.is_c_state(games[-1].state)
    per = nodes if nodes is not None else DECIDE_NODES if fast else DECIDE_NODES_PY
    cap = total if total is not None else DECIDE_TOTAL if fast else DECIDE_TOTAL_PY
    table = Table(DECIDE_TABLE_MB)
    spent = 0

    def exact(game: Game) -> float | None:
        nonlocal spent
        if game.is_over():
            outcome = game.outcome()
            assert outcome is not None
            return _RESULT_VALUE[outcome]
        budget = min(per, cap - spent)
        if budget < 1:
            return None
        sol = solve(game, nodes=budget, table=table, line=False, distance=False)
        spent += sol.nodes
        if sol.value is None:
            return None
        return _mine(game.turn.value, {1: 1.0, 0: 0.5, -1: 0.0}[sol.value])

    last = exact(games[-1])
    if last is None:
        return SolvedEnd(len(games), (), per, spent)
    values = [last]
    for k in range(len(moves), 0, -1):
        before = games[k - 1]
        mover = before.turn.value
        after = values[-1]
        if _mine(mover, after) == 1.0 or len(before.legal_moves()) == 1:
            values.append(after)  # won after the mover's move, so won before it; or a forced move
            continue
        value = exact(before)
        if value is None:
            break
        # game theory: a move cannot raise its mover's value (else the solver is wrong)
        assert _mine(mover, after) <= _mine(mover, value), (
            f"move {k} {moves[k - 1]} raised {mover}'s value from {_mine(mover, value)} to {_mine(mover, after)}"
        )
        values.append(value)
    values.reverse()
    return SolvedEnd(len(games) - len(values), tuple(values), per, spent)


@dataclass(frozen=True)
class Deciding:
    """The move that decided the game (:func:`deciding_move`): move number ``ply`` (1 = the first move;
    0: the game was decided before any move), ``move`` in notation, its mover ``side``, and the
    ``result`` it fixed ("south" or "north": a won game for that side; "draw").  ``exact``: the endgame
    solver knows it; else it is *probably* that move, by the search's figures.  ``before`` and
    ``after``: the mover's winning chance before and after it (the solver's exact 1, ½ or 0 where it
    knows the position, the search's chance elsewhere): how sure "probably" is.  ``solved_from``: the
    first position the solver knows (``None``: none).  ``side`` is never the winner of ``result``."""

    ply: int
    result: str
    exact: bool
    side: str | None = None
    move: str | None = None
    before: float | None = None
    after: float | None = None
    solved_from: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def deciding_move(moves: list[str], evals: list[PositionEval], solved: SolvedEnd | None = None) -> Deciding | None:
    """The move that decided the game: **the last move that changed the game's value** (a won game made
    drawn or lost, a drawn one lost), as the module describes.

    ``evals``: every position's evaluation (``None`` until the review has them all).  ``solved``: the
    walk of :func:`solve_back`, South's exact values from some position to the end; a review stored
    without one (older ones) reads the exact evaluations at the end of ``evals`` instead, extended back
    by the theory (a position before its mover's winning move is won).

    * A change inside the known positions is the answer, **exact**.  Its mover's value fell (asserted):
      it is never the winner's move.
    * Otherwise the value changed at or before the move into the first known position (or, nothing
      being known, the result is the search's verdict of the last position, 95 % or more), and the
      answer is **probable**: among the moves of the side that ended worse (either side for a draw),
      the move after which the search read every position as the result (its mover's chance crossed
      the decided line: at most :data:`DECIDED` left, or for a draw no side at
      1 − :data:`DECIDED` any more) when its mover is one who could have decided it; else the one
      whose mover's chance fell most (the latest of equal drops).  Ply 0 when no move qualifies:
      probably decided before the first move.

    ``None`` when the review is incomplete or the game's result is not known (a game resigned in a
    position neither solved nor decided by the search)."""
    n = len(moves)
    if len(evals) != n + 1 or any(e.ply != i for i, e in enumerate(evals)):
        return None
    known: list[float | None] = [None] * (n + 1)
    if solved is not None and solved.first + len(solved.values) == n + 1:
        for i, v in enumerate(solved.values):
            known[solved.first + i] = v
    else:  # a review without the walk: its exact evaluations from the end, and the theory
        for k in range(n, -1, -1):
            if evals[k].exact:
                known[k] = _snap(evals[k].south)
            elif k < n and known[k + 1] is not None and _mine(evals[k].turn, known[k + 1] or 0.0) == 1.0:
                known[k] = known[k + 1]
            else:
                break
    first = next((k for k in range(n + 1) if known[k] is not None), n + 1)
    solved_from = first if first <= n else None
    if first <= n:
        final = known[n]
        assert final is not None
        result = _result_of(final)
        for k in range(n, first, -1):
            b, a = known[k - 1], known[k]
            assert a is not None and b is not None
            if a != b:
                side = evals[k - 1].turn
                # game theory: a move cannot raise its mover's value, so the mover lost value here
                assert _mine(side, a) < _mine(side, b), f"move {k} raised {side}'s value"
                assert side != result, "the winner's move never decides a game"
                return Deciding(k, result, True, side, moves[k - 1], _mine(side, b), _mine(side, a), solved_from)
        if first == 0:
            return Deciding(0, result, True, solved_from=0)
    else:
        verdict_ = verdict(evals[n])
        if verdict_ is None:
            return None
        result = verdict_
    return _probable(moves, evals, known, min(first, n), result, solved_from)


def _probable(
    moves: list[str],
    evals: list[PositionEval],
    known: list[float | None],
    top: int,
    result: str,
    solved_from: int | None,
) -> Deciding:
    """:func:`deciding_move` where the solver stops before the value changes: a move up to ``top`` (the
    move into the first known position, or the last move), by the search's figures."""
    winner = None if result == "draw" else result

    def chance(k: int, side: str) -> float:
        v = known[k]
        return _mine(side, v) if v is not None else evals[k].chance(side)

    def reads_as_result(j: int) -> bool:
        v = known[j]
        if v is not None:
            return _result_of(v) == result
        if winner is not None:
            return evals[j].chance(winner) >= 1.0 - DECIDED - 1e-9
        return DECIDED + 1e-9 < evals[j].south < 1.0 - DECIDED - 1e-9

    def made(k: int) -> Deciding:
        side = evals[k - 1].turn
        assert side != winner, "the winner's move never decides a game"
        return Deciding(k, result, False, side, moves[k - 1], chance(k - 1, side), chance(k, side), solved_from)

    def drop(k: int) -> float:
        """How far move ``k``'s mover's chance fell: the figures the answer states."""
        side = evals[k - 1].turn
        return round(chance(k - 1, side) - chance(k, side), 6)

    def fell_most(last_move: int) -> Deciding:
        """The move up to ``last_move`` whose mover lost most (the latest of equal losses), by a side
        other than the winner; ply 0 when none lost anything."""
        movers = [k for k in range(1, last_move + 1) if evals[k - 1].turn != winner and drop(k) > 0]
        if not movers:
            return Deciding(0, result, False, solved_from=solved_from)
        return made(max(movers, key=lambda k: (drop(k), k)))

    last = next((j for j in range(top - 1, -1, -1) if not reads_as_result(j)), None)
    if last is None:
        # every position read as the result: a won game, probably from the start; a draw in which
        # the search never gave a side 95 %, at the move that lost most
        return Deciding(0, result, False, solved_from=solved_from) if winner else fell_most(top)
    mover = evals[last].turn
    # the crossing: the move after which every position read as the result, by a mover who could decide
    # it (the loser; for a draw, the side the search read as winning before it)
    if mover != winner and (winner is not None or chance(last, mover) >= 1.0 - DECIDED - 1e-9):
        return made(last + 1)
    # else (the winner's move crossed the line: the position before it was lost already; or a draw) the
    # move that lost most
    return fell_most(last + 1 if winner else top)


def move_accuracy(loss: float, scale: float | None = None) -> float:
    """A move's accuracy, 0–100, from its mover's ``loss`` of winning chance (0–1 scale), by lichess's
    curve on points: ``103.1668 · exp(−0.04354 · points) − 3.1669 + 1``, clamped to 0…100, the points
    being the loss times ``scale`` (default :data:`ACCURACY_SCALE`, the review's calibration)."""
    if loss <= 0:
        return 100.0
    points = loss * 100.0 * (ACCURACY_SCALE if scale is None else scale)
    raw = 103.1668100711649 * math.exp(-0.04354415386753951 * points) - 3.166924740191411 + 1.0
    return min(100.0, max(0.0, raw))


def accuracy(
    judgements: list[MoveJudgement],
    evals: list[PositionEval],
    decided_at: int | None = None,
    scale: float | None = None,
) -> dict[str, float | None]:
    """Each side's accuracy (0–100, ``None`` for a side without a judged move), as the module
    describes: the mean of the volatility-weighted mean and the harmonic mean of its moves'
    accuracies.  ``evals`` as for :func:`judge` (the positions around every judged move).
    With ``decided_at`` (:func:`decisive`'s ply) the moves played after it, in a decided game,
    are left out: they cannot pad a side's accuracy.  ``scale``: :func:`move_accuracy`'s."""
    n = len(judgements)
    if n == 0:
        return {"south": None, "north": None}
    chances = [e.south * 100.0 for e in evals[: n + 1]]
    size = min(8, max(2, n // 10))
    # one window per move: the first ones repeat the opening window (as lichess does)
    first = chances[:size]
    windows = [first] * (min(size, len(chances)) - 2)
    windows += [chances[i : i + size] for i in range(max(1, len(chances) - size + 1))]
    weights = [min(12.0, max(0.5, statistics.pstdev(w))) for w in windows[:n]]
    out: dict[str, float | None] = {}
    for side in ("south", "north"):
        mine = [
            (move_accuracy(j.loss, scale), weights[j.ply - 1])
            for j in judgements
            if j.side == side and (decided_at is None or j.ply <= decided_at)
        ]
        if not mine:
            out[side] = None
            continue
        weighted = sum(a * w for a, w in mine) / sum(w for _, w in mine)
        harmonic = len(mine) / sum(1.0 / max(1.0, a) for a, _ in mine)
        out[side] = round((weighted + harmonic) / 2.0, 1)
    return out


def counted(judgements: list[MoveJudgement], decided_at: int | None = None) -> dict[str, int]:
    """How many of each side's moves :func:`accuracy` counts: those played up to ``decided_at`` (all
    of them without it)."""
    return {
        side: sum(1 for j in judgements if j.side == side and (decided_at is None or j.ply <= decided_at))
        for side in ("south", "north")
    }


@dataclass(frozen=True)
class TurningPoint:
    """One of the moves that lost its side the most: move number ``ply``, its ``loss`` and its
    ``share`` of everything that side lost in the game (0–1)."""

    ply: int
    side: str
    move: str
    loss: float
    share: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def turning_points(judgements: list[MoveJudgement], count: int = TURNING) -> dict[str, list[TurningPoint]]:
    """Per side, its ``count`` costliest moves (loss above 0, marked or not), costliest first (the
    earlier of equal ones first), with their share of the side's total loss (its *slide*)."""
    out: dict[str, list[TurningPoint]] = {}
    for side in ("south", "north"):
        mine = [j for j in judgements if j.side == side and j.loss > 0]
        total = sum(j.loss for j in mine)
        top = sorted(mine, key=lambda j: (-j.loss, j.ply))[:count]
        out[side] = [TurningPoint(j.ply, side, j.move, j.loss, round(j.loss / total, 4)) for j in top]
    return out


def evaluate_ply(
    start_position: str | None, moves: list[str], ply: int, sims: int, seconds: float | None
) -> PositionEval:
    """The evaluation of the position after ``moves[:ply]`` with seed ``ply`` (what one review job
    computes in an AI worker process; a plain function so that it pickles)."""
    if not 0 <= ply <= len(moves):
        raise ValueError(f"ply {ply} is outside the game (0..{len(moves)})")
    return evaluate(replay(start_position, moves[:ply]), ply, sims=sims, seconds=seconds, seed=ply)


def _sample_game() -> tuple[str | None, list[str]]:
    """The benchmark's game: ``hard`` (South, seed 3) against ``medium`` (North, seed 4), 52 moves."""
    from jericho_game.ai.base import make_player

    players = {"south": make_player("hard", seed=3), "north": make_player("medium", seed=4)}
    game = Game()
    while not game.is_over():
        game.play(players[game.turn.value].choose_move(game, None))
    return None, [str(m) for m in game.history]


def main(argv: list[str] | None = None) -> int:
    """``python -m jericho_game.ai.analysis [RECORD] [--sims N] [--seconds S]``: review a game, print each
    position's evaluation and each move's mark, then the time it took (the review's benchmark)."""
    import argparse
    import os
    import time

    parser = argparse.ArgumentParser(prog="python -m jericho_game.ai.analysis", description=main.__doc__)
    parser.add_argument("record", nargs="?", help="a .jgn record (default: a sample 52-move game, seeded)")
    parser.add_argument("--sims", type=int, default=20_000, help="simulations per position (default 20000)")
    parser.add_argument("--seconds", type=float, default=1.0, help="at most this long per position (default 1)")
    args = parser.parse_args(argv)
    from jericho_game.record import move_label

    if args.record:
        from jericho_game.record import read_record

        with open(args.record, encoding="utf-8") as f:
            rec = read_record(f.read())
        start, moves = rec.tags.get("Position"), [str(m) for m in rec.moves]
    else:
        start, moves = _sample_game()
    cpu, wall = time.process_time(), time.perf_counter()
    evals = evaluate_game(start, moves, sims=args.sims, seconds=args.seconds)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    judged = {j.ply: j for j in judge(moves, evals)}
    for ev in evals:
        j = judged.get(ev.ply)
        played = f"{j.move:>7} {j.side:5} loss {j.loss:.2f} {j.mark or '':10}" if j else " " * 37
        print(f"{ev.ply:3}  {played} South {ev.south:.3f}{' exact' if ev.exact else '      '}  AI prefers {ev.best}")
    judgements = list(judged.values())
    moment = decisive(evals, len(moves))
    acc = accuracy(judgements, evals, moment.ply if moment else None)
    if moment is not None:
        print(f"decided after move {moment.ply}: {moment.result}{' (solved)' if moment.exact else ''}")
    first = evals[0].turn if evals else "south"
    for side, points in turning_points(judgements).items():
        steps = ", ".join(
            f"{move_label(t.ply, first)} {t.move} -{round(t.loss * 100)} ({round(t.share * 100)}%)" for t in points
        )
        print(f"{side}: accuracy {acc[side]}; turning points: {steps or 'none'}")
    n = len(evals)
    print(
        f"{len(moves)} moves, {n} positions, {args.sims} simulations per position (at most {args.seconds:g} s): "
        f"{cpu:.1f} s CPU, {wall:.1f} s wall ({wall / n:.3f} s per position), "
        f"{sum(e.sims for e in evals)} simulations; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
