"""The learned evaluator: its features, its C evaluation against NumPy, the search with it, training."""

from __future__ import annotations

import json
import random
import time

import numpy as np
import pytest

from jericho_game import Game, kernel
from jericho_game.ai import evalnet
from jericho_game.ai.base import Limit, PlayerSpecError, make_player
from jericho_game.envs.encoding import default_encoding
from tests.helpers import Load

pytestmark = pytest.mark.skipif(kernel.C is None, reason="the learned evaluator runs in the C kernel")

#: As in tests/ai/test_limits.py: a busy machine may not schedule the search the moment its
#: deadline passes, so the wall-clock upper bound has slack, scaled by the load measured around
#: the move (tests/helpers.Load); the lower bound has none.
LOAD_SLACK = 0.4
ENC = default_encoding()
T = ENC.tables


def random_states(games: int, seed: int, plies: int = 70) -> list:
    """Positions of random games (both sides to move, passes and the end included)."""
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        st = kernel.new_state(T, "c")
        for _ in range(rng.randrange(plies)):
            codes = st.legal_codes()
            if st.outcome >= 0 or not codes:
                break
            st.push(rng.choice(codes))
        out.append(st)
    return out


def expected_features(state) -> set[int]:
    """The features, computed independently: the canonical flat observation, plus champions."""
    obs, _ = ENC.canonical(ENC.observe(state, side=state.turn))
    seg = ENC.split(obs)
    nc, na = ENC.n_cells, ENC.n_alignments
    towers = seg["towers"].reshape(nc, 4, 10)
    out = {int(i) for i in np.flatnonzero(towers.reshape(-1))}
    base = nc * 40
    out |= {base + int(i) for i in np.flatnonzero(seg["reserves"].reshape(-1))}
    base += 50
    out |= {base + int(i) for i in np.flatnonzero(seg["leaders"].reshape(-1))}
    base += 3 * na
    out |= {base + int(i) for i in np.flatnonzero(seg["score"].reshape(-1))}
    base += 2 * (na + 1)
    out |= {base + int(i) for i in np.flatnonzero(seg["last_piece"].reshape(-1))}
    base += 25
    out |= {base + int(i) for i in np.flatnonzero(seg["last_cell"].reshape(-1))}
    base += nc
    if seg["passed"].reshape(-1)[0]:
        out.add(base)
    base += 1

    def strength(cell: int) -> tuple[int, ...]:  # RULES.md section 4, from the observation
        sizes = [int(np.argmax(towers[cell, lv, :5])) + 1 for lv in range(4) if towers[cell, lv].any()]
        return (int(len(sizes) >= 2), *reversed(sizes), *([0] * (4 - len(sizes))))

    for a in range(na):  # canonical: the mover's camp is South's
        for rel, cells in enumerate((T.align_south[a], T.align_north[a])):
            best = max((strength(c) for c in cells), default=(0, 0))
            top = best[1] if best[1] else 0
            out.add(base + (a * 2 + rel) * 7 + top)
            if best[0]:
                out.add(base + (a * 2 + rel) * 7 + 6)
    return out


def test_features_are_the_canonical_observation_and_the_champions():
    seen_north = seen_pass = 0
    for st in random_states(150, seed=1):
        got = evalnet.features(st)
        assert len(got) == len(set(got)), "a feature twice"
        assert set(got) == expected_features(st)
        assert max(got) < evalnet.n_features()
        seen_north += st.turn == 1
        seen_pass += st.passes > 0
    assert seen_north > 30


def test_mirrored_features_are_the_mirrored_games_features():
    mirror = ENC.symmetry("mirror")
    for st in random_states(60, seed=2):
        twin = kernel.new_state(T, "c")
        for code in st.history_codes():
            twin.push(int(mirror.action(code)))
        assert set(evalnet.features(st, mirror=True)) == set(evalnet.features(twin))
        # the mirrored position's legal moves are the mirrored moves
        mapped = evalnet.action_map(st.turn, True)[np.array(st.legal_codes() or [650])]
        twins = evalnet.action_map(twin.turn)[np.array(twin.legal_codes() or [650])]
        assert set(mapped.tolist()) == set(twins.tolist())


@pytest.mark.parametrize("hidden", [(48, 24), (13, 11)])  # widths the C loops take 8 at a time, and not
def test_c_evaluation_equals_the_numpy_reference(hidden):
    net = evalnet.EvalNet.random(hidden=hidden, seed=3)
    for a in net.arrays.values():  # non-zero everywhere, so every weight matters
        a += np.random.default_rng(4).normal(0, 0.05, a.shape).astype(np.float32)
    knet = evalnet.kernel_net(net)
    assert knet.hidden == hidden
    for st in random_states(40, seed=5):
        if st.outcome >= 0:
            continue
        values, logits = evalnet.forward(net, [evalnet.features(st)])
        value, moves = knet.evaluate(st)
        assert value == pytest.approx(float(values[0]), abs=1e-4)
        amap = evalnet.action_map(st.turn)
        assert sorted(code for code, _ in moves) == sorted(st.legal_codes())
        for code, logit in moves:
            assert logit == pytest.approx(float(logits[0, amap[code]]), abs=1e-4)


def test_bad_weights_are_refused_with_what_is_wrong(tmp_path):
    net = evalnet.EvalNet.random(seed=0)
    board = kernel.board(T)
    a = dict(net.arrays)
    cells, aligns = evalnet.feature_maps(1)
    with pytest.raises(ValueError, match="w2 has"):
        kernel.C.Net(board, a["w1"], a["b1"], a["w2"][:-1], a["b2"], a["wv"], a["bv"], a["wp"], a["bp"], cells, aligns)
    with pytest.raises(TypeError, match="float32"):
        kernel.C.Net(
            board,
            a["w1"].astype(np.float64),
            a["b1"],
            a["w2"],
            a["b2"],
            a["wv"],
            a["bv"],
            a["wp"],
            a["bp"],
            cells,
            aligns,
        )
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not an evaluator weights file"):
        evalnet.load(bad)
    with pytest.raises(ValueError, match="no evaluator weights"):
        evalnet.load(tmp_path / "absent.npz")
    np.savez(tmp_path / "partial.npz", w1=a["w1"])
    with pytest.raises(ValueError, match="lack b1"):
        evalnet.load(tmp_path / "partial.npz")


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    path = tmp_path_factory.mktemp("evaluator") / "net.npz"
    evalnet.EvalNet.random(hidden=(32, 16), seed=7).save(path)
    return str(path)


def test_the_search_with_an_evaluator_plays_legal_moves_within_its_limits(weights):
    for mix in ("0", "0.5", "1"):
        player = make_player(f"mcts:sims=400,greedy=1,solver=1,evaluator={weights},mix={mix}", seed=1)
        g = Game()
        for _ in range(6):
            move = player.choose_move(g)
            assert move in g.legal_moves()
            assert player.last_sims <= 400
            g.push(move)


@pytest.mark.timing
def test_the_search_with_an_evaluator_keeps_to_its_time(weights):
    timed = make_player(f"mcts:greedy=1,solver=1,evaluator={weights}", seed=2)
    with Load() as load:
        t0 = time.perf_counter()
        timed.choose_move(Game(), Limit(time=0.6))
        took = time.perf_counter() - t0
    assert 0.6 * 0.95 <= took <= 0.6 * 1.05 + LOAD_SLACK * load.factor, (took, load.factor)


def test_the_evaluator_changes_the_search_and_is_reproducible(weights):
    def visits(spec: str) -> list:
        p = make_player(spec, seed=3)
        g = Game()
        p.choose_move(g)
        return sorted(p.last_children)

    plain = visits("mcts:sims=600,greedy=1,solver=1")
    guided = visits(f"mcts:sims=600,greedy=1,solver=1,evaluator={weights},mix=1")
    assert guided == visits(f"mcts:sims=600,greedy=1,solver=1,evaluator={weights},mix=1")
    assert guided != plain
    # cprior=0: no priors at all, the moves keep the search's own order; with mix=0 too the
    # network has nothing left to do and the search is the plain one, visit for visit
    assert visits(f"mcts:sims=600,greedy=1,solver=1,evaluator={weights},mix=0,cprior=0") == plain
    assert visits(f"mcts:sims=600,greedy=1,solver=1,evaluator={weights},mix=0") != plain  # the priors order
    value_only = visits(f"mcts:sims=600,greedy=1,solver=1,evaluator={weights},mix=1,cprior=0")
    assert value_only not in (plain, guided)
    # net_pieces=N: a leaf with at most N pieces left in the reserves gets a playout, not the network.
    # All 50 pieces: every leaf is played out (the plain search); none (the default): the value alone.
    by_phase = f"mcts:sims=600,greedy=1,solver=1,evaluator={weights},mix=1,cprior=0,net_pieces="
    assert visits(by_phase + "50") == plain
    assert visits(by_phase + "0") == value_only
    assert visits(by_phase + "48") not in (plain, value_only)  # leaves 2+ plies down are played out
    # imb=A: implicit minimax backups; 0 is the mean alone, visit for visit, and any other weight
    # changes what the search does (the same for the same seed)
    assert visits(f"mcts:sims=600,greedy=1,solver=1,evaluator={weights},mix=1,cprior=0,imb=0") == value_only
    minimax = visits(f"mcts:sims=600,greedy=1,solver=1,evaluator={weights},mix=1,cprior=0,imb=0.5")
    assert minimax != value_only
    assert minimax == visits(f"mcts:sims=600,greedy=1,solver=1,evaluator={weights},mix=1,cprior=0,imb=0.5")
    # trunc=K: a leaf's playout stops after K plies and the network judges where it stopped.
    # Cut after more plies than any game has left, no playout is cut: the plain playouts (mix=0)
    # or the same mix, visit for visit; cut early, the search changes, the same for the same seed.
    plain_order = f"mcts:sims=600,greedy=1,solver=1,evaluator={weights},cprior=0"
    assert visits(plain_order + ",mix=0,trunc=100") == plain
    mixed = visits(plain_order + ",mix=0.5")
    assert visits(plain_order + ",mix=0.5,trunc=100") == mixed
    cut = visits(plain_order + ",mix=0,trunc=4")
    assert cut not in (plain, mixed, value_only)
    assert cut == visits(plain_order + ",mix=0,trunc=4")
    assert visits(plain_order + ",mix=0.5,trunc=4") not in (cut, mixed)
    # net_pieces still hands the late leaves to whole playouts: all 50 pieces, the plain search
    assert visits(plain_order + ",mix=0,trunc=4,net_pieces=50") == plain
    # vorder=N: a node with N visits orders its moves not yet tried by the network's value; a
    # count no node reaches changes nothing, one the root reaches changes the search, reproducibly
    assert visits(plain_order + ",mix=0.5,vorder=100000") == mixed
    ordered = visits(plain_order + ",mix=0.5,vorder=50")
    assert ordered != mixed
    assert ordered == visits(plain_order + ",mix=0.5,vorder=50")


def test_minimax_backups_follow_a_kept_tree_and_its_subtree(weights):
    """A tree kept between calls gets its minimax values when ``imb`` is turned on midway, keeps
    them when re-rooted a ply or two down, and drops them when turned off (ASan checks this in CI)."""
    from jericho_game import kernel
    from jericho_game.ai.evalnet import kernel_net
    from jericho_game.ai.mcts import to_move

    net = kernel_net(str(weights))
    tree = kernel.C.Tree()
    g = Game()
    total = 0
    for imb in (0.0, 0.7, 1.0, 0.0, 0.5):  # the same position: each call continues the tree
        done, _, _, children = kernel.C.mcts(
            g.state, 7, sims=150, c=0.05, greedy=True, solver=True, tree=tree, net=net, mix=1.0, cprior=0.0, imb=imb
        )
        total += done
        assert tree.simulations == total and sum(n for _, n, _ in children) == total
    for _ in range(4):  # down the most visited move each time: its subtree is kept, with its minimax
        g.push(to_move(g, max(children, key=lambda ch: ch[1])[0]))
        done, _, _, children = kernel.C.mcts(
            g.state,
            8,
            sims=150,
            greedy=True,
            solver=True,
            tree=tree,
            reroot=True,
            net=net,
            mix=1.0,
            cprior=0.0,
            imb=0.5,
        )
        assert tree.simulations > done  # re-rooted: the subtree's visits were kept
        assert {code for code, _, _ in children} <= set(g.state.legal_codes())
    with pytest.raises(ValueError, match="imb"):
        kernel.C.mcts(g.state, 1, sims=10, imb=0.5)  # nothing to back up without a net
    with pytest.raises(ValueError, match="imb"):
        kernel.C.mcts(g.state, 1, sims=10, net=net, imb=-0.1)


def test_evaluator_options_are_checked_when_given(weights, tmp_path):
    with pytest.raises(PlayerSpecError, match="no file"):
        make_player("mcts:evaluator=/no/such/file.npz")
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"PK not really")
    with pytest.raises(PlayerSpecError, match="not an evaluator weights file"):
        make_player(f"mcts:evaluator={corrupt}")
    with pytest.raises(PlayerSpecError, match="mix"):
        make_player(f"mcts:evaluator={weights},mix=1.5")
    with pytest.raises(PlayerSpecError, match="cprior"):
        make_player(f"mcts:evaluator={weights},cprior=-1")
    with pytest.raises(PlayerSpecError, match="net_pieces"):
        make_player(f"mcts:evaluator={weights},net_pieces=-1")
    with pytest.raises(PlayerSpecError, match="imb"):
        make_player(f"mcts:evaluator={weights},imb=1.5")
    with pytest.raises(PlayerSpecError, match="trunc"):
        make_player(f"mcts:evaluator={weights},trunc=-1")
    with pytest.raises(PlayerSpecError, match="trunc=4 needs an evaluator"):
        make_player("mcts:trunc=4")
    with pytest.raises(PlayerSpecError, match="vorder"):
        make_player(f"mcts:evaluator={weights},vorder=-1")
    with pytest.raises(PlayerSpecError, match="vorder=50 needs an evaluator"):
        make_player("mcts:vorder=50")
    with pytest.raises(PlayerSpecError, match="needs an evaluator"):
        make_player("mcts:imb=0.5")


def test_training_learns_the_search_s_visits(tmp_path):
    from jericho_game.ai import selfplay

    play = selfplay.SelfPlayConfig(sims=80)
    data = selfplay.play_games(play, None, games=6, seed=1, jobs=1)
    n = len(data["z"])
    assert n > 100 and n % 2 == 0 and set(np.unique(data["z"])) <= {-1.0, 0.0, 1.0}
    # every policy target is a distribution over legal actions
    for r in range(0, n, 7):
        pa = data["pol_a"][data["pol_a_off"][r] : data["pol_a_off"][r + 1]]
        legal = data["legal"][data["legal_off"][r] : data["legal_off"][r + 1]]
        assert set(pa.tolist()) <= set(legal.tolist())
        assert data["pol_p"][data["pol_a_off"][r] : data["pol_a_off"][r + 1]].sum() == pytest.approx(1.0, abs=1e-5)
    net = evalnet.EvalNet.random(hidden=(32, 16), seed=1)
    learn = selfplay.TrainConfig(epochs=1, holdout=0.0, batch=64, lr=1e-2)
    rows = np.arange(n)
    x, legal, target, z = selfplay._batch(data, rows, evalnet.n_features(), 1.0)
    before = selfplay._step(net.arrays, x, legal, target, z, 0.0, want_grads=False)
    for epoch in range(6):
        selfplay.train(net, [data], learn, seed=epoch)
    after = selfplay._step(net.arrays, x, legal, target, z, 0.0, want_grads=False)
    assert after[0] < before[0] - 0.5  # policy cross-entropy
    assert after[1] < before[1]  # value error


def test_expert_iteration_resumes_from_its_files(tmp_path):
    from jericho_game.ai import selfplay

    lines: list[str] = []
    play, learn = selfplay.SelfPlayConfig(sims=30), selfplay.TrainConfig(epochs=1, hidden=(16, 8))
    nogate = selfplay.GateConfig(games=0)
    first = selfplay.expert_iteration(tmp_path, 1, 2, play, learn, log=lines.append, gate_cfg=nogate)
    assert first == tmp_path / "net-001.npz" and (tmp_path / "games-000.npz").exists()
    stamp = (tmp_path / "games-000.npz").stat().st_mtime_ns
    second = selfplay.expert_iteration(tmp_path, 2, 2, play, learn, log=lines.append, gate_cfg=nogate)
    assert second == tmp_path / "net-002.npz"
    assert (tmp_path / "games-000.npz").stat().st_mtime_ns == stamp  # kept, not replayed
    assert evalnet.load(second).meta["generation"] == 2
    assert len((tmp_path / "log.jsonl").read_text().splitlines()) == 2


def test_a_run_can_start_from_given_weights(tmp_path, weights):
    """--init: the first generation already searches with the given weights, then trains them on."""
    from jericho_game.ai import selfplay

    play, learn = selfplay.SelfPlayConfig(sims=30), selfplay.TrainConfig(epochs=1, hidden=(8, 8))
    nogate = selfplay.GateConfig(games=0)
    out = selfplay.expert_iteration(
        tmp_path / "on", 1, 2, play, learn, log=lambda _: None, init=weights, gate_cfg=nogate
    )
    net = evalnet.load(out)
    assert net.hidden == evalnet.load(weights).hidden == (32, 16)  # the given weights' sizes, not learn's
    assert net.meta["init"] == weights and net.meta["generation"] == 1
    assert json.loads((tmp_path / "on" / "config.json").read_text())["init"] == weights
    start = evalnet.load(weights)
    assert any(not np.array_equal(net.arrays[k], start.arrays[k]) for k in start.arrays)  # trained on
    # Generation 0 searched with them: its games differ from a run without weights.
    plain = selfplay.expert_iteration(tmp_path / "plain", 1, 2, play, learn, log=lambda _: None, gate_cfg=nogate)
    assert plain is not None
    with np.load(tmp_path / "on" / "games-000.npz") as a, np.load(tmp_path / "plain" / "games-000.npz") as b:
        assert any(a[k].shape != b[k].shape or not np.array_equal(a[k], b[k]) for k in a.files)


def test_train_command_checks_its_options(tmp_path, capsys):
    from jericho_game.cli import main

    assert main(["train", "--out", str(tmp_path), "--games", "0"]) == 2
    assert "--games must be positive" in capsys.readouterr().out
    assert main(["train", "--out", str(tmp_path), "--hidden", "12"]) == 2
    assert "--hidden" in capsys.readouterr().out
    assert main(["train", "--out", str(tmp_path), "--init", str(tmp_path / "absent.npz")]) == 2
    assert "no file at" in capsys.readouterr().out
    (tmp_path / "bad.npz").write_bytes(b"junk")
    assert main(["train", "--out", str(tmp_path), "--init", str(tmp_path / "bad.npz")]) == 2
    assert "not an evaluator weights file" in capsys.readouterr().out


def test_the_shipped_weights_fit_and_guide_a_search():
    net = evalnet.load(evalnet.SHIPPED)
    assert net.hidden == tuple(net.meta["hidden"]) and net.meta["generation"] >= 1
    assert evalnet.SHIPPED.stat().st_size <= 5_000_000  # the bound on shipped weights
    player = make_player("mcts:sims=300,c=0.3,greedy=1,solver=1,evaluator=shipped,mix=0", seed=4)
    g = Game()
    move = player.choose_move(g)
    assert move in g.legal_moves() and player.last_sims == 300


def test_a_widened_network_evaluates_as_before_until_trained():
    net = evalnet.EvalNet.random((16, 8), seed=2)
    wide = net.widened(24, seed=3)
    assert wide.hidden == (24, 8) and wide.meta["widened_from"] == 16
    states = random_states(20, seed=5, plies=30)
    batch = [evalnet.features(st) for st in states]
    v0, p0 = evalnet.forward(net, batch)
    v1, p1 = evalnet.forward(wide, batch)
    assert np.allclose(v0, v1, atol=1e-6) and np.allclose(p0, p1, atol=1e-5)
    # the C evaluation of the wider weights agrees too
    knet = evalnet.kernel_net(wide)
    assert [knet.evaluate(st)[0] for st in states[:5]] == pytest.approx(list(v0[:5]), abs=1e-4)
    # and its new units can learn: they have input weights, only no say yet
    assert np.abs(wide.arrays["w1"][:, 16:]).sum() > 0 and not wide.arrays["w2"][:, 16:].any()
    with pytest.raises(ValueError, match="cannot widen"):
        net.widened(8)


def test_truncated_playouts_and_value_ordering_need_a_net(weights):
    from jericho_game import kernel
    from jericho_game.ai.evalnet import kernel_net

    g = Game()
    net = kernel_net(str(weights))
    with pytest.raises(ValueError, match="trunc"):
        kernel.C.mcts(g.state, 1, sims=10, trunc=4)  # nothing to judge where the playout stops
    with pytest.raises(ValueError, match="trunc"):
        kernel.C.mcts(g.state, 1, sims=10, net=net, trunc=-1)
    with pytest.raises(ValueError, match="vorder"):
        kernel.C.mcts(g.state, 1, sims=10, vorder=5)  # nothing to order the moves by
    with pytest.raises(ValueError, match="vorder"):
        kernel.C.mcts(g.state, 1, sims=10, net=net, vorder=-1)


def test_value_ordering_widens_to_the_move_the_network_values_most(weights):
    """With value ordering from the first visit, the root's second child (the first is made in
    the search's own order, before the root has a visit) is the move of the best network value
    among the others."""
    from jericho_game import kernel
    from jericho_game.ai.evalnet import kernel_net

    net = kernel_net(str(weights))
    g = Game()
    for code in (3, 40, 77, 120):  # a few plies in, so that the values differ
        g.state.push(code if code in g.state.legal_codes() else g.state.legal_codes()[0])

    def mover_value(code: int) -> float:
        st = g.state.copy()
        st.push(code)
        value, _ = net.evaluate(st)  # for the side to move after it: the opponent
        return -value

    def root(vorder: int) -> list[int]:
        _, _, _, children = kernel.C.mcts(g.state, 3, sims=2, greedy=True, net=net, mix=0.5, cprior=0.0, vorder=vorder)
        return [code for code, _, _ in children]

    first, second = root(1)
    best = max((c for c in g.state.legal_codes() if c != first), key=mover_value)
    assert mover_value(second) == pytest.approx(mover_value(best), abs=1e-6)
    plain_first, plain_second = root(0)
    assert plain_first == first  # the same first child, made before any ordering
    assert mover_value(plain_second) < mover_value(second)  # the search's own order chose another
