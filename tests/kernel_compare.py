"""The C kernel against the pure-Python core, on the same inputs (used by tests and by the sanitizer run).

``python tests/kernel_compare.py GAMES`` plays GAMES seeded random games on both kernels and
exits non-zero at the first difference; ``tasks.py test`` runs it under an
AddressSanitizer/UBSan build of the extension (see tasks.py ``sanitizer_check``).
"""

from __future__ import annotations

import importlib.util
import random
import sys
from collections.abc import Callable

if __name__ == "__main__" and "--module" in sys.argv:
    # Load another build of the extension (the sanitizer build) in place of the installed one,
    # before jericho_game.kernel imports it.
    _path = sys.argv[sys.argv.index("--module") + 1]
    _spec = importlib.util.spec_from_file_location("jericho_game._kernel", _path)
    assert _spec is not None and _spec.loader is not None
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules["jericho_game._kernel"] = _mod
    _spec.loader.exec_module(_mod)
    del sys.argv[sys.argv.index("--module") : sys.argv.index("--module") + 2]

from jericho_game import core, kernel  # noqa: E402
from jericho_game.board import standard_topology  # noqa: E402

FIELDS = (
    "turn",
    "code",
    "height",
    "key",
    "size_free",
    "colour_free",
    "reserve",
    "leader",
    "score",
    "last_cell",
    "last_piece",
    "last_below",
    "passes",
    "outcome",
    "ply",
)


def _count_raised(calls: list[Callable[[], object]], what: str) -> int:
    """Run each call; every one must raise a Python error (never crash, never pass)."""
    raised = 0
    for call in calls:
        try:
            call()
        except (TypeError, ValueError, IndexError, OverflowError):
            raised += 1
    if raised != len(calls):
        raise AssertionError(f"only {raised} of {len(calls)} {what} raised")
    return raised


def snapshot(state: core.State) -> dict[str, object]:
    """Every observable figure of a state (lists as lists, whichever kernel)."""
    out: dict[str, object] = {f: getattr(state, f) for f in FIELDS}
    out["score"] = list(state.score)
    out["hash"] = state.hash_key()
    out["legal"] = state.legal_codes()
    out["groups"] = state.legal_groups()
    moves = state.legal_moves()  # the C kernel's lazy sequence: iterated and indexed both ways
    n = len(moves)
    out["moves"] = list(moves)  # Move equality: the same fields as their text, at a third of the cost
    out["moves_indexed"] = [str(moves[i]) for i in {0, n // 3, n // 2, n - 1, -1, -n} if -n <= i < n]
    out["placement"] = state.has_placement()
    out["forbidden"] = state.forbidden_copy_cells()
    out["deltas"] = state.margin_deltas(out["legal"])  # type: ignore[arg-type]
    return out


def assert_same(py: core.State, c: core.State, where: str) -> None:
    """Raise AssertionError naming the first figure where the two states differ."""
    a, b = snapshot(py), snapshot(c)
    for k in a:
        if a[k] != b[k]:
            raise AssertionError(f"{where}: {k} differs: python {a[k]!r} != c {b[k]!r}")


def probe(py: core.State, c: core.State, rng: random.Random, where: str) -> None:
    """Queries that take arguments: is_legal on random codes, leader_changes, fits."""
    t = py.tables
    for _ in range(8):
        code = rng.randrange(-2, t.pass_code + 3)
        if py.is_legal(code) != c.is_legal(code):
            raise AssertionError(f"{where}: is_legal({code}) differs")
    for _ in range(3):
        size, cell = rng.randrange(5), rng.randrange(t.n_cells)
        if py.leader_changes(size, cell) != c.leader_changes(size, cell):
            raise AssertionError(f"{where}: leader_changes({size}, {cell}) differs")
        p = rng.randrange(core.N_PIECES)
        if py.fits(p) != c.fits(p):
            raise AssertionError(f"{where}: fits({p}) differs")


def compare_game(seed: int, tables: core.Tables | None = None) -> int:
    """One seeded random game on both kernels, compared after every ply and every undo; returns plies."""
    t = tables or core.tables_for(standard_topology())
    rng = random.Random(seed)
    py = kernel.new_state(t, "python")
    c = kernel.new_state(t, "c")
    assert_same(py, c, f"game {seed} start")
    plies = 0
    while py.outcome == core.NO_OUTCOME:
        codes = py.legal_codes()
        code = codes[rng.randrange(len(codes))]
        py.push(code)
        c.push(code)
        plies += 1
        where = f"game {seed} ply {plies}"
        assert_same(py, c, where)
        if plies % 7 == 0:
            probe(py, c, rng, where)
    copy = c.copy(with_history=True)
    if copy.ply != plies or copy.history_codes() != py.history_codes():
        raise AssertionError(f"game {seed}: copy(with_history=True) lost the history")
    while py.ply:
        a, b = py.pop(), c.pop()
        if a != b:
            raise AssertionError(f"game {seed}: pop returned {a} and {b}")
        assert_same(py, c, f"game {seed} undo to ply {py.ply}")
    return plies


def compare_playouts(seed: int, n: int, guided: int, defend: bool = False) -> int:
    """C playouts replayed move by move on the Python core reach the same outcome.

    With ``defend``, also: a side facing the opponent's seven monoliths that has a move
    breaking them plays one.  Returns how many such positions were checked.  With ``guided``
    0 (greedy playouts), also: every move is one of the best of all legal moves by immediate
    margin, a move breaking the opponent's seven first (those positions are counted too).
    """
    t = core.tables_for(standard_topology())
    rng = random.Random(seed)
    defended = 0
    for i in range(n):
        start = kernel.new_state(t, "c")
        for _ in range(rng.randrange(0, 30)):  # from the start and from mid-game positions
            if start.outcome != core.NO_OUTCOME:
                break
            codes = start.legal_codes()
            start.push(codes[rng.randrange(len(codes))])
        moves: list[int] = []
        outcome = kernel.C.playout(start, rng.getrandbits(64), guided, moves, defend)
        replay = kernel.python_state(start)
        for code in moves:
            if not replay.is_legal(code):
                raise AssertionError(f"playout {seed}/{i}: illegal code {code}")
            opp = 1 - replay.turn
            if guided == 0:
                if replay.score[opp] >= core.SEVEN and _breaks(replay, code, opp):
                    defended += 1
                best = max(_greedy_value(replay, other) for other in replay.legal_codes())
                if _greedy_value(replay, code) != best:
                    raise AssertionError(f"playout {seed}/{i}: greedy {code} is not among the best ({best})")
            elif defend and replay.score[opp] >= core.SEVEN:
                if _breaks(replay, code, opp):
                    defended += 1
                elif any(_breaks(replay, other, opp) for other in replay.legal_codes()):
                    raise AssertionError(f"playout {seed}/{i}: {code} leaves a breakable seven standing")
            replay.push(code)
        if replay.outcome != outcome:
            raise AssertionError(f"playout {seed}/{i}: outcome {outcome}, replay {replay.outcome}")
    return defended


def _greedy_value(state: core.State, code: int) -> int:
    """What greedy playouts maximise: the mover's margin gain, +100 for breaking the opponent's seven."""
    me, opp = state.turn, 1 - state.turn
    before = list(state.score)
    state.push(code)
    after = list(state.score)
    state.pop()
    value = (after[me] - before[me]) - (after[opp] - before[opp])
    if before[opp] >= core.SEVEN and after[opp] < core.SEVEN:
        value += 100
    return value


def _breaks(state: core.State, code: int, holder: int) -> bool:
    """Whether playing ``code`` leaves ``holder`` below seven monoliths."""
    state.push(code)
    below = state.score[holder] < core.SEVEN
    state.pop()
    return below


def malformed() -> int:
    """Bad calls into the extension; each must raise a Python exception.  Returns how many did."""
    t = core.tables_for(standard_topology())
    s = kernel.new_state(t, "c")
    full = (1 << 25) - 1
    calls = [
        lambda: s.push("x"),
        lambda: s.push(-1),
        lambda: s.push(10**40),
        lambda: s.push(t.pass_code),
        lambda: s.pop(),
        lambda: s.fits(99),
        lambda: s.leader_changes(9, 99),
        lambda: s.margin_deltas([1, "x"]),
        lambda: s.margin_deltas([10**6]),
        lambda: s.load({99: [0]}, (full, full), 0, None, 0, -1),
        lambda: s.load({0: [0, 1, 2, 3, 4]}, (full, full), 0, None, 0, -1),
        lambda: s.load({0: [1]}, (full, full), 0, (3, 40), 0, -1),
        lambda: kernel.C.playout(s, "x"),
        lambda: kernel.C.mcts(s, 1),
        lambda: kernel.C.Board(40, 1, [], [], [], [], [], [], 0, [], [], ()),
    ]
    raised = _count_raised(calls, "malformed calls")
    return raised


def compare_batch(seed: int, n: int = 64, steps: int = 300) -> int:
    """The C ``BatchEngine`` against ``PythonBatchEngine`` (on pure-Python core states) on the same
    random moves, resets and queries; every answer compared after every step.  Returns the moves played."""
    import numpy as np

    from jericho_game.envs.vector import KernelBatchEngine, PythonBatchEngine

    t = core.tables_for(standard_topology())
    rng = np.random.default_rng(seed)
    c = KernelBatchEngine(n)
    py = PythonBatchEngine(n)
    py._start = kernel.new_state(t, "python")  # the reference: core.State, not C states
    py.states = [py._start.copy() for _ in range(n)]
    everything = np.arange(n)
    played = 0

    def same(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...], what: str) -> None:
        for x, y in zip(a, b, strict=True):
            if x.shape != y.shape or x.dtype != y.dtype or not np.array_equal(x, y):
                raise AssertionError(f"batch {seed} step {step}: {what} differ")

    for step in range(steps):  # noqa: B007 - `same` names the step
        sides = rng.integers(2, size=n)
        same(c.status(), py.status(), "status")
        same(c.observe_and_mask(everything, sides), py.observe_and_mask(everything, sides), "observations/masks")
        some = rng.permutation(n)[: rng.integers(0, n + 1)]
        same(c.to_move_and_masks(some, sides[some]), py.to_move_and_masks(some, sides[some]), "to_move_and_masks")
        same((c.observe(some, sides[some]), c.masks(some)), (py.observe(some, sides[some]), py.masks(some)), "subsets")
        _, outcome = py.status()
        going = np.flatnonzero(outcome == core.NO_OUTCOME)
        movers = rng.permutation(going)[: rng.integers(0, len(going) + 1)]
        masks = py.masks(movers)
        codes = np.argmax(rng.random(masks.shape) * masks, axis=1)
        c.push(movers, codes)
        py.push(movers, codes)
        played += len(movers)
        # Finished games start again, and now and then a game in progress too.
        _, outcome = py.status()
        again = np.flatnonzero((outcome != core.NO_OUTCOME) | (rng.random(n) < 0.01))
        c.reset(again)
        py.reset(again)
    return played


def compare_views(seed: int, n: int = 64, steps: int = 100) -> tuple[int, set[tuple[str, str, int]]]:
    """The C ``batch_views`` (flat/planar x absolute/canonical, observations and masks) against the NumPy
    views of ``PythonBatchEngine``'s observations on the same random games, every step, each game seen by
    a random side; every 10th step also against ``View.observe`` position by position.  Returns the positions
    compared and the (observation, view, side) combinations met."""
    import numpy as np

    from jericho_game.envs.encoding import default_encoding
    from jericho_game.envs.vector import KernelBatchEngine, PythonBatchEngine
    from jericho_game.envs.views import View

    enc = default_encoding()
    t = core.tables_for(standard_topology())
    rng = np.random.default_rng(seed)
    c = KernelBatchEngine(n)
    py = PythonBatchEngine(n)
    py._start = kernel.new_state(t, "python")
    py.states = [py._start.copy() for _ in range(n)]
    views = [View(enc, o, v) for o in ("flat", "planar") for v in ("absolute", "canonical")]
    everything = np.arange(n)
    positions = 0
    seen: set[tuple[str, str, int]] = set()
    for step in range(steps):
        sides = rng.integers(2, size=n)
        some = rng.permutation(n)[: rng.integers(1, n + 1)]
        for games in (everything, some):
            flat, masks = py.observe_and_mask(games, sides[games])
            for view in views:
                want = view.observations(flat, masks, sides[games])
                got = c.views(games, sides[games], view)
                for x, y in zip(got, want, strict=True):
                    if x.shape != y.shape or x.dtype != y.dtype or not np.array_equal(x, y):
                        raise AssertionError(f"views {seed} step {step}: {view.observation}/{view.view} differ")
                seen |= {(view.observation, view.view, int(s)) for s in sides[games]}
                if step % 10 == 0 and games is everything:
                    for i, state in enumerate(py.states):
                        if not np.array_equal(got[0][i], view.observe(state, int(sides[i]))):
                            raise AssertionError(f"views {seed} step {step}: game {i} differs from View.observe")
            positions += len(games)
        _, outcome = py.status()
        going = np.flatnonzero(outcome == core.NO_OUTCOME)
        m = py.masks(going)
        codes = np.argmax(rng.random(m.shape) * m, axis=1)
        c.push(going, codes)
        py.push(going, codes)
        _, outcome = py.status()
        again = np.flatnonzero((outcome != core.NO_OUTCOME) | (rng.random(n) < 0.01))
        c.reset(again)
        py.reset(again)
    return positions, seen


def compare_compact(seed: int, n: int = 256, steps: int = 40) -> tuple[int, set[tuple[str, str, str, int]]]:
    """The C ``batch_views`` writing compact observations (uint8 and bool, one byte a value) and bool masks,
    on one thread and several, against the float32 NumPy views of ``PythonBatchEngine`` on the same random
    games: every byte equal to the float32 value (and every mask entry to the int8 one), whole batches and
    random subsets.  ``n`` >= 128 so that several threads really split the batch (64 games a thread at
    least) and the GIL is released.  Returns the positions compared and the (dtype, observation, view,
    threads) combinations met."""
    import numpy as np

    from jericho_game.envs.encoding import default_encoding
    from jericho_game.envs.vector import KernelBatchEngine, PythonBatchEngine
    from jericho_game.envs.views import View

    enc = default_encoding()
    t = core.tables_for(standard_topology())
    rng = np.random.default_rng(seed)
    c = KernelBatchEngine(n)
    py = PythonBatchEngine(n)
    py._start = kernel.new_state(t, "python")
    py.states = [py._start.copy() for _ in range(n)]
    views = [View(enc, o, v) for o in ("flat", "planar") for v in ("absolute", "canonical")]
    kinds = [
        ("uint8", "bool", 1),
        ("bool", "bool", 1),
        ("uint8", "int8", 3),
        ("float32", "bool", 2),
        ("bool", "uint8", 4),
    ]
    everything = np.arange(n)
    positions = 0
    seen: set[tuple[str, str, str, int]] = set()
    for step in range(steps):
        sides = rng.integers(2, size=n)
        some = rng.permutation(n)[: rng.integers(1, n + 1)]
        for games in (everything, some):
            flat, masks = py.observe_and_mask(games, sides[games])
            for view in views:
                want_obs, want_masks = view.observations(flat, masks, sides[games])
                for obs_dtype, mask_dtype, threads in kinds:
                    got_obs, got_masks = c.views(games, sides[games], view, None, obs_dtype, mask_dtype, threads)
                    if got_obs.dtype != np.dtype(obs_dtype) or got_masks.dtype != np.dtype(mask_dtype):
                        raise AssertionError(f"compact {seed} step {step}: dtypes {got_obs.dtype} {got_masks.dtype}")
                    if not np.array_equal(got_obs, want_obs.astype(obs_dtype)) or not np.array_equal(
                        got_masks, want_masks.astype(mask_dtype)
                    ):
                        raise AssertionError(
                            f"compact {seed} step {step}: {view.observation}/{view.view} {obs_dtype}/{mask_dtype} "
                            f"on {threads} threads differ from float32"
                        )
                    if obs_dtype != "float32" and set(np.unique(got_obs.view(np.uint8)).tolist()) - {0, 1}:
                        raise AssertionError(f"compact {seed} step {step}: a byte other than 0 or 1")
                    seen.add((obs_dtype, view.observation, view.view, threads if len(games) >= 64 * threads else 1))
            positions += len(games)
        _, outcome = py.status()
        going = np.flatnonzero(outcome == core.NO_OUTCOME)
        m = py.masks(going)
        codes = np.argmax(rng.random(m.shape) * m, axis=1)
        c.push(going, codes)
        py.push(going, codes)
        _, outcome = py.status()
        again = np.flatnonzero((outcome != core.NO_OUTCOME) | (rng.random(n) < 0.01))
        c.reset(again)
        py.reset(again)
    return positions, seen


def malformed_views() -> int:
    """Bad calls into the C ``batch_views``; each must raise a Python exception and write nothing out of bounds."""
    import numpy as np

    from jericho_game.envs.encoding import default_encoding
    from jericho_game.envs.vector import KernelBatchEngine, view_layout
    from jericho_game.envs.views import View

    e = KernelBatchEngine(4)
    f = kernel.C.batch_views
    i64 = np.arange(4, dtype=np.int64)
    view = View(default_encoding(), "planar", "canonical")
    good = view_layout(view)
    obs = np.empty((4, *view.shape), dtype=np.float32)
    masks = np.empty((4, e._n_act), dtype=np.int8)
    f(e._c, i64, i64 % 2, obs, masks, good)  # the good call works

    def bad(k: int, value: int) -> np.ndarray:
        out = good.copy()
        out[k] = value
        return out

    twice = good.copy()
    twice[6] = twice[7]  # two cells on one grid place
    calls = [
        lambda: f(e._c, i64, i64 % 2, obs, masks, good[:-1]),  # too short
        lambda: f(e._c, i64, i64 % 2, obs, masks, bad(0, 2)),  # planar 2
        lambda: f(e._c, i64, i64 % 2, obs, masks, bad(1, -1)),
        lambda: f(e._c, i64, i64 % 2, obs, masks, bad(2, 0)),  # an empty grid
        lambda: f(e._c, i64, i64 % 2, obs, masks, bad(3, 1 << 40)),
        lambda: f(e._c, i64, i64 % 2, obs, masks, bad(4, 25)),  # wrong cell count
        lambda: f(e._c, i64, i64 % 2, obs, masks, bad(6, 28)),  # off the grid
        lambda: f(e._c, i64, i64 % 2, obs, masks, twice),
        lambda: f(e._c, i64, i64 % 2, obs, masks, bad(6 + 26, 26)),  # half turn out of range
        lambda: f(e._c, i64, i64 % 2, obs, masks, bad(6 + 26, 24)),  # not a permutation
        lambda: f(e._c, i64, i64 % 2, obs, masks, bad(6 + 52, 13)),  # alignment out of range
        lambda: f(e._c, i64, i64 % 2, obs, masks, good.astype(np.int32)),
        lambda: f(e._c, i64, i64 % 2, obs[:3], masks, good),  # output too small
        lambda: f(e._c, i64, i64 % 2, np.empty((4, 1239), dtype=np.float32), masks, good),  # flat size, planar layout
        lambda: f(e._c, i64, i64 % 2, obs, masks[:2], good),
        lambda: f(e._c, i64, i64 % 2, obs.astype(np.float64), masks, good),
        lambda: f(e._c, i64, i64 % 2 + 1, obs, masks, good),  # side 2
        lambda: f(e._c, i64 + 1, i64 % 2, obs, masks, good),  # game 4 of 4
        lambda: f(e._c, i64, i64[:3] % 2, obs, masks, good),
        lambda: f(object(), i64, i64 % 2, obs, masks, good),  # not a BatchEngine
        lambda: f(e._c, i64, i64 % 2, obs, masks),  # too few arguments
        lambda: f(e._c, i64, i64 % 2, obs.astype(np.int16), masks, good),  # neither float32 nor one byte
        lambda: f(e._c, i64, i64 % 2, np.empty((4, 1239), dtype=np.uint8), masks, good),  # compact, wrong size
        lambda: f(e._c, i64, i64 % 2, obs, masks.astype(np.int32), good),
    ]
    raised = _count_raised(calls, "malformed batch_views calls")
    f(e._c, i64, i64 % 2, obs, None, good)  # masks are optional
    f(e._c, i64, i64 % 2, obs.astype(np.uint8), masks.astype(bool), good)  # compact
    return raised


def malformed_batch() -> int:
    """Bad calls into the C ``BatchEngine``; each must raise a Python exception and change nothing."""
    import numpy as np

    from jericho_game.envs.vector import KernelBatchEngine

    e = KernelBatchEngine(4)
    raw = e._c
    i64 = np.arange(4, dtype=np.int64)
    mask = e.masks(i64)
    legal = int(np.flatnonzero(mask[0])[0])
    illegal = int(np.flatnonzero(mask[0] == 0)[0])
    e.push(np.array([1]), np.array([legal]))
    before = (e.observe(i64, i64 % 2), e.masks(i64), *e.status())
    calls = [
        lambda: e.push(np.array([0, 1]), np.array([legal])),  # lengths differ
        lambda: e.push(np.array([4]), np.array([legal])),  # game out of range
        lambda: e.push(np.array([-1]), np.array([legal])),
        lambda: e.push(np.array([0]), np.array([illegal])),  # illegal code
        lambda: e.push(np.array([0]), np.array([10**6])),
        lambda: e.push(np.array([0]), np.array([-5])),
        lambda: e.push(np.array([0, 2, 0]), np.array([legal, legal, legal])),  # one game twice
        lambda: e.push(np.array([0, 1]), np.array([legal, illegal])),  # the bad second spoils the first
        lambda: e.reset(np.array([7])),
        lambda: e.observe(np.array([0]), np.array([2])),  # no side 2
        lambda: e.observe(np.array([9]), np.array([0])),
        lambda: e.masks(np.array([2**40])),
        lambda: raw.reset([0, 1]),  # not a buffer
        lambda: raw.reset(np.array([0.0])),  # float indices
        lambda: raw.push(i64, i64.astype(np.int32)),
        lambda: raw.status(np.empty(3, dtype=np.int64), np.empty(4, dtype=np.int64)),
        lambda: raw.status(np.empty(4, dtype=np.int64), b"12345678" * 4),  # read-only
        lambda: raw.observe(i64, i64 % 2, np.empty((4, 10), dtype=np.float32)),  # output too small
        lambda: raw.observe(i64, i64 % 2, np.empty((4, e._obs_size), dtype=np.float64)),
        lambda: raw.masks(i64, np.empty((4, e._n_act), dtype=np.int16)),
        lambda: raw.to_move(i64, i64 % 2, np.empty(2, dtype=np.int64)),
        lambda: raw.observe(i64, (i64 % 2).astype(bool), np.empty((4, e._obs_size), dtype=np.float32)),
        lambda: kernel.C.BatchEngine(kernel.board(core.tables_for(standard_topology())), 0, [0] * 26),
        lambda: kernel.C.BatchEngine(kernel.board(core.tables_for(standard_topology())), 2, [0, 1]),
    ]
    raised = _count_raised(calls, "malformed batch calls")
    after = (e.observe(i64, i64 % 2), e.masks(i64), *e.status())
    if not all(np.array_equal(x, y) for x, y in zip(before, after, strict=True)):
        raise AssertionError("a refused batch call changed the games")
    return raised


def evaluator(mid: core.State) -> None:
    """The learned evaluator's C side under the sanitizer: features, evaluations and searches
    (priors only, mixed, value only; enough simulations that nodes regenerate their moves)."""
    from jericho_game.ai import evalnet

    net = evalnet.EvalNet.random(hidden=(24, 8), seed=1)
    knet = evalnet.kernel_net(net)
    rng = random.Random(9)
    st = kernel.new_state(core.tables_for(standard_topology()), "c")
    while st.outcome < 0:
        values, logits = evalnet.forward(net, [evalnet.features(st)])
        value, moves = knet.evaluate(st)
        if abs(value - float(values[0])) > 1e-4 or len(moves) != len(st.legal_codes()):
            raise AssertionError(f"evaluator: {value} against {values[0]}")
        st.push(rng.choice(st.legal_codes()))
    evalnet.features(st)  # a finished game has features too
    for mix in (0.0, 0.5, 1.0):
        sims, _, _, children = kernel.C.mcts(mid, 11, sims=4000, greedy=True, solver=True, net=knet, mix=mix)
        if sims != 4000 and not any(ch[1] for ch in children):
            raise AssertionError(f"evaluator search (mix {mix}): {sims} simulations")
    # truncated playouts: the network judges the position where a playout was cut
    for trunc, mix in ((1, 0.0), (4, 0.5), (9, 0.0)):
        sims, _, _, children = kernel.C.mcts(
            mid, 14, sims=3000, greedy=True, solver=True, net=knet, mix=mix, trunc=trunc
        )
        if sims != 3000 and not any(ch[1] for ch in children):
            raise AssertionError(f"truncated playouts (trunc {trunc}): {sims} simulations")
    # value ordering: nodes re-order their untried moves (all of them) once visited enough, on
    # a kept tree re-rooted below (the re-ordered moves travel with their nodes)
    tree = kernel.C.Tree()
    below = mid.copy()
    for _ in range(3):
        _, _, _, children = kernel.C.mcts(
            below,
            15,
            sims=1500,
            greedy=True,
            solver=True,
            net=knet,
            mix=0.65,
            cprior=0.0,
            vorder=20,
            tree=tree,
            reroot=True,
        )
        below.push(max(children, key=lambda ch: ch[1])[0])
    # implicit minimax backups: the values kept beside the nodes, on a kept tree switched on and
    # off and on a re-rooted one (their array grows and is copied with the nodes)
    tree = kernel.C.Tree()
    for imb in (0.0, 0.5, 1.0, 0.0, 0.3):
        kernel.C.mcts(mid, 12, sims=1500, greedy=True, solver=True, net=knet, mix=1.0, cprior=0.0, imb=imb, tree=tree)
    if tree.simulations != 7500:
        raise AssertionError(f"minimax backups on a kept tree: {tree.simulations} simulations")
    below = mid.copy()
    for _ in range(2):
        _, _, _, children = kernel.C.mcts(
            below, 13, sims=800, greedy=True, solver=True, net=knet, mix=1.0, imb=0.5, tree=tree, reroot=True
        )
        below.push(max(children, key=lambda ch: ch[1])[0])


def _late(seed: int, left: int) -> core.State | None:
    """A C state of a seeded random game stopped with ``left`` pieces in both reserves (None: it ended)."""
    rng = random.Random(seed)
    st = kernel.new_state(core.tables_for(standard_topology()), "c")
    while st.outcome == core.NO_OUTCOME and bin(st.reserve[0]).count("1") + bin(st.reserve[1]).count("1") > left:
        codes = st.legal_codes()
        rng.shuffle(codes)
        for code in codes:  # the first that keeps the game going and nobody at seven, if any
            st.push(code)
            if st.outcome == core.NO_OUTCOME and max(st.score) < 7:
                break
            st.pop()
        else:
            st.push(codes[0])
    return st if st.outcome == core.NO_OUTCOME else None


def _brute(st: core.State) -> int:
    """Plain minimax to the end on the Python core: +1/0/-1 for the side to move."""
    if st.outcome != core.NO_OUTCOME:
        return 0 if st.outcome == core.DRAW else 1 if st.outcome == st.turn else -1
    best = -1
    for code in st.legal_codes():
        st.push(code)
        best = max(best, -_brute(st))
        st.pop()
        if best == 1:
            break
    return best


def compare_solver(games: int) -> int:
    """The endgame solver (kernel.C.solve) under the sanitizers: its values against a plain minimax
    on the Python core (2 pieces left), kept tables, every-move values, budgets running out, and
    the MCTS with solver proofs at its leaves (re-rooted with its solver table).  Returns how many
    positions were compared."""
    compared = 0
    table = bytearray(kernel.C.SOLVER_ENTRY_SIZE << 12)
    for seed in range(games):
        st = _late(seed, 2)
        if st is None:
            continue
        (result, plies), best, line, moves, nodes, _ = kernel.C.solve(st, 0, 0.0, 12, table, 2)
        if result != _brute(kernel.python_state(st)) or (result != 0 and len(line) != plies) or nodes < 1:
            raise AssertionError(f"solve, seed {seed}: {result}, {plies}, {line}, {nodes}")
        if len(moves) != len(st.legal_codes()) or best not in st.legal_codes():
            raise AssertionError(f"solve, seed {seed}: moves {moves}, best {best}")
        compared += 1
    bigger = _late(1, 10)
    assert bigger is not None
    for mode in (0, 1, 2):
        (result, _), _, _, _, nodes, _ = kernel.C.solve(bigger, 3000, 0.0, 10, None, mode)
        if nodes < 1 or nodes > 3001:
            raise AssertionError(f"solve with a node budget: {nodes} nodes")
    kernel.C.solve(bigger, 0, 0.01, 10)  # a time budget
    for after in (0, 4):  # leaves solved when made, and when revisited
        tree = kernel.C.Tree()
        below = bigger.copy()
        for _ in range(3):
            _, _, _, children = kernel.C.mcts(
                below, 9, sims=300, tree=tree, reroot=True, solver=True, greedy=True, proofs=True,
                solve_nodes=500, solve_pieces=10, solve_after=after,
            )  # fmt: skip
            below.push(max(children, key=lambda ch: ch[1])[0])
            if below.outcome != core.NO_OUTCOME:
                break
    return compared


def main(argv: list[str]) -> int:
    games = int(argv[1]) if len(argv) > 1 else 50
    if kernel.C is None:
        print("the C kernel is not available", file=sys.stderr)
        return 1
    plies = sum(compare_game(seed) for seed in range(games))
    compare_playouts(1, games, 1)
    compare_playouts(2, games, 3)
    defended = compare_playouts(3, games, 10, defend=True)
    compare_playouts(4, max(1, games // 5), 0)  # greedy playouts (each ply checks every legal move)
    malformed()
    state = kernel.new_state(core.tables_for(standard_topology()), "c")
    sims, _, nodes, children = kernel.C.mcts(state, 7, sims=3000)
    kernel.C.mcts(state, 7, sims=500, k=10, defend=True)  # the expert's playouts, under the sanitizer too
    kernel.C.mcts(state, 7, sims=500, greedy=True, solver=True, proofs=True)  # the master's search
    if sims != 3000 or sum(n for _, n, _ in children) != sims or nodes != sims + 1:
        raise AssertionError(f"mcts: {sims} simulations, {nodes} nodes, root visits {children}")
    # The C alpha-beta and the batch playouts, so that the sanitizer run covers them too.
    mid = kernel.new_state(core.tables_for(standard_topology()), "c")
    rng = random.Random(5)
    for _ in range(16):
        codes = mid.legal_codes()
        mid.push(codes[rng.randrange(len(codes))])
    table = bytearray(b"\xff") * (kernel.C.TT_ENTRY_SIZE << 12)
    for depth in (1, 2, 3):
        best, _, done, nodes, _ = kernel.C.alphabeta(mid, mid.legal_codes(), depth=depth, tt_bits=12, table=table)
        if done != depth or not mid.is_legal(best) or nodes < 1:
            raise AssertionError(f"alphabeta depth {depth}: {best}, {done}, {nodes}")
    evaluator(mid)
    tree = kernel.C.Tree()
    for n in (700, 700, 600):  # a kept tree, continued
        kernel.C.mcts(mid, 3, sims=n, tree=tree)
    if tree.simulations != 2000:
        raise AssertionError(f"kept tree: {tree.simulations} simulations")
    below = mid.copy()  # re-rooted: the subtree one, then two plies down is copied and searched on
    for _ in range(2):
        _, _, _, children = kernel.C.mcts(
            below, 4, sims=300, tree=tree, reroot=True, solver=True, greedy=True, transpose=True
        )
        code, visits, _ = max(children, key=lambda ch: ch[1])
        below.push(code)
    kernel.C.mcts(below, 5, sims=200, tree=tree, reroot=True, solver=True, greedy=True, transpose=True)
    if tree.simulations < 200 + 1:
        raise AssertionError(f"re-rooted tree: {tree.simulations} simulations, the subtree was lost")
    if sum(kernel.C.playouts(mid, 500, 3, 3)) != 500:
        raise AssertionError("playouts lost games")
    solved = compare_solver(games)
    batch = compare_batch(games, 64, 300)
    malformed_batch()
    views, _ = compare_views(games, 32, 60)
    compact, _ = compare_compact(games, 192, 6)  # uint8/bool, threads, without the GIL: under the sanitizers too
    malformed_views()
    print(
        f"C and Python kernels agree: {games} games, {plies} plies, {3 * games} playouts "
        f"({defended} sevens defended), "
        f"batch engine {batch} moves in 64 games, {views} positions in 4 views, {compact} compact or threaded, "
        f"{solved} positions solved "
        f"({kernel.C.__file__})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
