"""The network's weights read without NumPy (ai/netfile.py): the same C network as NumPy's, and the
expert and master levels playing with it where NumPy is not installed."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from jericho_game import Game, kernel
from jericho_game.ai import evalnet, netfile
from jericho_game.ai._util import SHIPPED_EVALUATOR, VALUE_NETWORK

pytestmark = pytest.mark.skipif(kernel.C is None, reason="the learned evaluator runs in the C kernel")


@pytest.mark.parametrize("path", [SHIPPED_EVALUATOR, VALUE_NETWORK])
def test_the_weights_read_without_numpy_are_numpys(path: Path) -> None:
    mine = netfile.read_weights(path)
    with np.load(path) as theirs:
        for name in netfile.LAYERS:
            assert mine[name].typecode == "f"
            assert np.array_equal(np.frombuffer(mine[name], dtype=np.float32), theirs[name].ravel()), name


def test_the_levels_network_is_the_kept_phase_network() -> None:
    """The figures measured with docs/runs/value-phase-2026-12-05/value.npz are the shipped file's."""
    kept = Path(__file__).resolve().parents[2] / "docs/runs/value-phase-2026-12-05/value.npz"
    assert VALUE_NETWORK.read_bytes() == kept.read_bytes()
    assert VALUE_NETWORK.stat().st_size <= 5 * 1024 * 1024  # issue 32 point 3: shipped weights <= 5 MB


def test_the_half_turn_maps_are_the_encodings() -> None:
    assert netfile.half_turn_maps(Game().tables) == evalnet.feature_maps(1)


def test_a_net_from_the_file_evaluates_as_the_numpy_loaded_one() -> None:
    from_file = netfile.kernel_net(VALUE_NETWORK)
    from_numpy = evalnet.kernel_net(evalnet.load(VALUE_NETWORK))
    assert netfile.kernel_net(VALUE_NETWORK) is from_file  # read once
    rng, seen = random.Random(3), 0
    for _ in range(3):  # whole random games, North to move included (the half turn's maps)
        game = Game()
        while not game.is_over():
            assert from_file.evaluate(game.state) == from_numpy.evaluate(game.state)
            game.play(rng.choice(game.legal_moves()))
            seen += 1
    assert seen >= 60


def _npz(tmp_path: Path, arrays: dict[str, np.ndarray], name: str = "w.npz") -> Path:
    path = tmp_path / name
    np.savez_compressed(path, **arrays)
    return path


def test_bad_weights_files_are_named(tmp_path: Path) -> None:
    good = evalnet.load(VALUE_NETWORK).arrays
    with pytest.raises(ValueError, match="no evaluator weights at"):
        netfile.kernel_net(tmp_path / "absent.npz")
    (tmp_path / "text.npz").write_text("not a zip")
    with pytest.raises(ValueError, match="text.npz: not an evaluator weights file"):
        netfile.read_weights(tmp_path / "text.npz")
    with pytest.raises(ValueError, match=r"no wp, bp"):
        netfile.read_weights(_npz(tmp_path, {k: v for k, v in good.items() if k not in ("wp", "bp")}))
    with pytest.raises(ValueError, match=r"w1: expected little-endian float32 in C order, got '<f8'"):
        netfile.read_weights(_npz(tmp_path, {**good, "w1": good["w1"].astype(np.float64)}))
    with pytest.raises(ValueError, match=r"b1: expected little-endian float32 in C order"):
        netfile.read_weights(_npz(tmp_path, {**good, "b1": np.asfortranarray(np.ones((2, 3), np.float32))}))
    # a cut array body, and a header that is not Python literal syntax
    cut = io.BytesIO()
    np.save(cut, good["b2"])
    with zipfile.ZipFile(tmp_path / "cut.npz", "w") as z:
        for k, v in good.items():
            buf = io.BytesIO()
            np.save(buf, v)
            z.writestr(f"{k}.npy", buf.getvalue() if k != "b2" else cut.getvalue()[:-4])
    with pytest.raises(ValueError, match=r"b2: 252 bytes for shape \(64,\)"):
        netfile.read_weights(tmp_path / "cut.npz")
    with zipfile.ZipFile(tmp_path / "header.npz", "w") as z:
        for k in good:
            z.writestr(f"{k}.npy", b"\x93NUMPY\x01\x00\x04\x00{'a'")
    with pytest.raises(ValueError, match="w1: unreadable .npy header"):
        netfile.read_weights(tmp_path / "header.npz")
    # the right arrays of the wrong sizes reach the C network's own check
    with pytest.raises(ValueError, match="Net: w2 has"):
        netfile.kernel_net(_npz(tmp_path, {**good, "w2": good["w2"][:, :5].copy()}, "sizes.npz"))


_NO_NUMPY = """
import json, sys
sys.modules["numpy"] = None  # as on a bare install (the web extra has no NumPy)
from jericho_game import Game
from jericho_game.ai.base import Limit, make_player
game, out = Game(), {}
for name in ("expert", "master"):
    player = make_player(name, seed=1)
    move = player.choose_move(game, Limit(nodes=400, seed=1))
    out[name] = [player.evaluator, game.is_legal(move), player.last_sims]
print(json.dumps(out))
"""


def test_the_levels_play_with_their_network_without_numpy() -> None:
    done = subprocess.run([sys.executable, "-c", _NO_NUMPY], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {name: [str(VALUE_NETWORK), True, 400] for name in ("expert", "master")}
