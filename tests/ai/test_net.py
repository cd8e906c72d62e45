"""The trained baseline (issue 13 point 7): the shipped weights, the NumPy forward pass, ``net`` and ``net+mcts``.

No PyTorch here: the weights file carries reference outputs computed by PyTorch at export
(``examples/train_net.py``), and the NumPy forward must reproduce them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jericho_game import Game
from jericho_game.ai import Limit, PlayerSpecError, make_player
from jericho_game.ai.net import BLOCK, WEIGHTS, NetMCTSPlayer, NetWeights, forward, load_weights
from jericho_game.ai.random_player import RandomPlayer
from jericho_game.envs.encoding import default_encoding
from jericho_game.envs.views import View
from jericho_game.record import read_records

ROOT = Path(__file__).resolve().parents[2]
ENC = default_encoding()


def _positions(n: int = 6, seed: int = 3) -> list[Game]:
    """Positions of a seeded random game, South and North to move, early and late."""
    game, out = Game(), []
    rng = RandomPlayer(seed=seed)
    while not game.is_over() and len(out) < n:
        if len(game.history) % 7 in (0, 3) and len(game.legal_moves()) > 1:
            out.append(game.copy())
        game.play(rng.choose_move(game))
    return out


def test_the_shipped_weights_are_small_and_reproduce_pytorch_s_outputs() -> None:
    assert WEIGHTS.stat().st_size <= 5 * 1024 * 1024
    w = load_weights()
    ref = w.meta["reference"]
    assert ref["input"].shape[1:] == (192, 4, 7) and len(ref["input"]) >= 2
    logits, value = forward(w, ref["input"])
    assert logits.shape == (len(ref["input"]), 651) and value.shape == (len(ref["input"]),)
    np.testing.assert_allclose(logits, ref["logits"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(value, ref["value"], rtol=1e-4, atol=1e-4)
    # The training facts travel with the weights.
    facts = w.meta["training"]
    assert facts["dataset_games"] > 0 and facts["train_seconds"] > 0 and "torch" in facts


def test_the_convolutions_equal_a_direct_computation() -> None:
    # An independent check of the im2col layout: random weights, a naive loop over the grid.
    rng = np.random.default_rng(0)
    w = load_weights()
    arrays = {k: rng.normal(size=v.shape).astype(np.float32) for k, v in w.arrays.items()}
    net = NetWeights(arrays, w.meta)
    x = rng.normal(size=(2, net.width, 4, 7)).astype(np.float32)
    # Channels-last, with a zero row after the grid: (positions, 28 + 1, channels).
    rows = np.concatenate([x.reshape(2, net.width, 28), np.zeros((2, net.width, 1), np.float32)], axis=2)
    got = net.conv3x3("convs.0", np.ascontiguousarray(rows.transpose(0, 2, 1)), 4, 7).transpose(0, 2, 1)
    got = got.reshape(2, -1, 4, 7)
    k, bias = arrays["convs.0.weight"], arrays["convs.0.bias"]
    pad = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros_like(got)
    for y in range(4):
        for z in range(7):
            want[:, :, y, z] = np.einsum("bcij,ocij->bo", pad[:, :, y : y + 3, z : z + 3], k) + bias
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_forward_is_the_same_alone_and_in_a_batch() -> None:
    view = View(ENC, "planar", "canonical")
    # More positions than a block (BLOCK), and a last block that is not full.
    games = [g for seed in range(3, 12) for g in _positions(n=50, seed=seed)][: 2 * BLOCK + 3]
    xs = np.stack([view.observe(g, g.state.turn) for g in games])
    assert len(xs) > 2 * BLOCK and len(xs) % BLOCK
    w = load_weights()
    logits, value = forward(w, xs)
    for i in range(len(xs)):
        one_l, one_v = forward(w, xs[i : i + 1])
        np.testing.assert_allclose(one_l[0], logits[i], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(one_v[0], value[i], rtol=1e-5, atol=1e-5)


def test_a_large_batch_runs_in_cache_sized_blocks() -> None:
    """Per-position speed fell as the batch grew (about 4k positions/s at 16, 1.6k at 256): every
    intermediate array grew with the batch (84 MB of them at 1,024).  Now the memory a forward
    pass takes beyond its outputs is the same at 1,024 positions as at 64, and about 1 MB.
    (Speed is not asserted here; ``jericho bench --net`` prints positions/s by batch size.)"""
    import tracemalloc

    w = load_weights()
    x = np.zeros((1024, 192, 4, 7), dtype=np.float32)
    forward(w, x[:2])  # the cached index tables are made outside the measurement
    extra = {}
    for b in (64, 1024):
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            logits, value = forward(w, x[:b])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        extra[b] = peak - base - logits.nbytes - value.nbytes
    assert extra[1024] < 3_000_000, extra
    assert extra[1024] < 1.5 * extra[64], extra


def test_net_plays_the_policy_s_favourite_legal_move_in_the_canonical_view() -> None:
    view = View(ENC, "planar", "canonical")
    w = load_weights()
    player = make_player("net")
    sides = set()
    for game in _positions():
        side = game.state.turn
        sides.add(side)
        logits, _ = forward(w, view.observe(game, side)[None])
        mask = view.mask(ENC.legal_mask(game), side).astype(bool)
        best = int(np.argmax(np.where(mask, logits[0], -np.inf)))
        assert player.choose_move(game.copy(), Limit()) == ENC.action_to_move(view.real_action(best, side))
    assert sides == {0, 1}  # North's positions are turned, and its actions turned back


def test_net_and_net_mcts_play_whole_games_legally_and_reproducibly() -> None:
    def play(spec: str) -> list[str]:
        players = [make_player(spec), RandomPlayer(seed=5)]
        game = Game()
        while not game.is_over():
            move = players[game.state.turn].choose_move(game.copy(), Limit())
            assert game.is_legal(move)
            game.play(move)
        return [str(m) for m in game.history]

    for spec in ("net", "net+mcts:sims=8"):
        assert play(spec) == play(spec)


def test_net_mcts_counts_its_simulations_and_checks_its_options() -> None:
    game = Game.from_moves("5R@d2 1G@d3")
    player = make_player("net+mcts:sims=40")
    assert game.is_legal(player.choose_move(game, Limit()))
    assert sum(n for _, n in player.last_children) == 40  # type: ignore[attr-defined]
    player.choose_move(game, Limit(nodes=12))
    assert sum(n for _, n in player.last_children) == 12  # type: ignore[attr-defined]
    with pytest.raises(PlayerSpecError, match="unknown option 'simz'"):
        make_player("net+mcts:simz=3")
    with pytest.raises(ValueError, match="sims='0' .*from 1 to 1_000_000"):
        make_player("net+mcts:sims=0")
    with pytest.raises(ValueError, match="game is over"):
        finished = Game()
        while not finished.is_over():
            finished.play(RandomPlayer(seed=1).choose_move(finished))
        player.choose_move(finished, Limit())


class _Uniform:
    """A stand-in network: uniform priors, value 0 (so only the game's results steer the search)."""

    evaluations = 0

    def priors(self, state: object, codes: list[int]) -> tuple[np.ndarray, float]:
        return np.full(len(codes), 1.0 / len(codes)), 0.0


def test_the_search_backs_results_up_for_the_side_that_moved() -> None:
    # From the sample dataset: positions of a side facing the opponent's 7 monoliths, where most
    # moves lose at once (they leave the 7 standing) and a few break it.  With a value-free
    # stand-in network, the search must find a move that does not lose.
    records = read_records((ROOT / "examples/data/sample/games.jgn").read_text(encoding="utf-8"))
    checked = 0
    for record in records:
        for ply in range(30, len(record.moves)):
            game = Game()
            for move in record.moves[:ply]:
                game.play(move)
            state = game.state.copy()
            codes = state.legal_codes()
            losing = set()
            for code in codes:
                state.push(code)
                if state.outcome == 1 - game.state.turn:
                    losing.add(code)
                state.pop()
            if not losing or len(losing) == len(codes) or len(codes) > 60:
                continue
            player = NetMCTSPlayer(sims=3 * len(codes))
            player._eval = _Uniform()  # type: ignore[assignment]
            move = player.choose_move(game, Limit())
            assert game.tables.move_code[(move.piece.index, move.cell)] not in losing, (record.tags["Round"], ply)
            checked += 1
        if checked >= 3:
            break
    assert checked >= 3


def test_net_players_need_numpy_only_and_play_in_the_arena(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from jericho_game import Game\n"
        "from jericho_game.ai import make_player\n"
        "g = Game()\n"
        "g.play(make_player('net').choose_move(g))\n"
        "g.play(make_player('net+mcts:sims=5').choose_move(g))\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"
    report = tmp_path / "arena.json"
    done = subprocess.run(
        [sys.executable, "-m", "jericho_game", "arena", "net", "net+mcts:sims=4", "random", "--games", "2"]
        + ["--jobs", "1", "--seed", "1", "--quiet", "--json", str(report)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    games = json.loads(report.read_text())["games"]
    assert len(games) == 6 and not any(g.get("error") for g in games)


def test_the_training_script_exports_weights_numpy_reproduces(tmp_path: Path) -> None:
    # Only where PyTorch is installed (the train extra; the test install has no torch).
    pytest.importorskip("torch")
    import shutil

    data = tmp_path / "data"
    shutil.copytree(ROOT / "examples/data/sample", data)
    out = tmp_path / "w.npz"
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples/train_net.py"), "--data", str(data), "--out", str(out)]
        + ["--minutes", "0.1", "--epochs", "0.5", "--width", "8", "--blocks", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    w = load_weights(out)
    assert (w.width, w.blocks) == (8, 1) and w.meta["training"]["dataset_games"] == 40
    logits, value = forward(w, w.meta["reference"]["input"])
    np.testing.assert_allclose(logits, w.meta["reference"]["logits"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(value, w.meta["reference"]["value"], rtol=1e-4, atol=1e-4)
    assert game_is_playable(str(out))


def game_is_playable(weights: str) -> bool:
    game = Game()
    game.play(make_player(f"net:weights={weights}").choose_move(game))
    return len(game.history) == 1
