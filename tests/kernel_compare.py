"""The C kernel against the pure-Python core, on the same inputs (used by tests and by the sanitizer run).

``python tests/kernel_compare.py GAMES`` plays GAMES seeded random games on both kernels and
exits non-zero at the first difference; ``tasks.py test`` runs it under an
AddressSanitizer/UBSan build of the extension (see tasks.py ``sanitizer_check``).
"""

from __future__ import annotations

import importlib.util
import random
import sys

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


def snapshot(state: core.State) -> dict[str, object]:
    """Every observable figure of a state (lists as lists, whichever kernel)."""
    out: dict[str, object] = {f: getattr(state, f) for f in FIELDS}
    out["score"] = list(state.score)
    out["hash"] = state.hash_key()
    out["legal"] = state.legal_codes()
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


def compare_playouts(seed: int, n: int, guided: int) -> None:
    """C playouts replayed move by move on the Python core reach the same outcome."""
    t = core.tables_for(standard_topology())
    rng = random.Random(seed)
    for i in range(n):
        start = kernel.new_state(t, "c")
        for _ in range(rng.randrange(0, 30)):  # from the start and from mid-game positions
            if start.outcome != core.NO_OUTCOME:
                break
            codes = start.legal_codes()
            start.push(codes[rng.randrange(len(codes))])
        moves: list[int] = []
        outcome = kernel.C.playout(start, rng.getrandbits(64), guided, moves)
        replay = kernel.python_state(start)
        for code in moves:
            if not replay.is_legal(code):
                raise AssertionError(f"playout {seed}/{i}: illegal code {code}")
            replay.push(code)
        if replay.outcome != outcome:
            raise AssertionError(f"playout {seed}/{i}: outcome {outcome}, replay {replay.outcome}")


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
    raised = 0
    for call in calls:
        try:
            call()
        except (TypeError, ValueError, IndexError, OverflowError):
            raised += 1
    if raised != len(calls):
        raise AssertionError(f"only {raised} of {len(calls)} malformed calls raised")
    return raised


def main(argv: list[str]) -> int:
    games = int(argv[1]) if len(argv) > 1 else 50
    if kernel.C is None:
        print("the C kernel is not available", file=sys.stderr)
        return 1
    plies = sum(compare_game(seed) for seed in range(games))
    compare_playouts(1, games, 1)
    compare_playouts(2, games, 3)
    malformed()
    state = kernel.new_state(core.tables_for(standard_topology()), "c")
    sims, _, nodes, children = kernel.C.mcts(state, 7, sims=3000)
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
    tree = kernel.C.Tree()
    for n in (700, 700, 600):  # a kept tree, continued
        kernel.C.mcts(mid, 3, sims=n, tree=tree)
    if tree.simulations != 2000:
        raise AssertionError(f"kept tree: {tree.simulations} simulations")
    if sum(kernel.C.playouts(mid, 500, 3, 3)) != 500:
        raise AssertionError("playouts lost games")
    print(f"C and Python kernels agree: {games} games, {plies} plies, {2 * games} playouts ({kernel.C.__file__})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
