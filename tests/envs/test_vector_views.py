"""Planar and canonical observations computed in C for a whole batch (issue 25, point 2).

The C kernel's ``batch_views`` writes the vector env's observations in their final form; the NumPy
definitions (``Planar.from_flat``, the half turn of ``Encoding.symmetry``) stay the reference, and the
pure-Python fallback keeps using them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

from jericho_game import kernel
from jericho_game.core import NO_OUTCOME
from jericho_game.envs.encoding import default_encoding
from jericho_game.envs.vector import JerichoVectorEnv, KernelBatchEngine, PythonBatchEngine, view_layout
from jericho_game.envs.views import View
from tests import kernel_compare

ENC = default_encoding()
VIEWS = [("flat", "absolute"), ("flat", "canonical"), ("planar", "absolute"), ("planar", "canonical")]
needs_kernel = pytest.mark.skipif(kernel.C is None, reason="the C kernel is not built here")


@needs_kernel
@pytest.mark.parametrize("seed", range(2))
def test_c_views_equal_the_numpy_ones_on_thousands_of_positions(seed: int) -> None:
    """Both engines on the same random games (B=128, 120 steps, resets): every position seen by a random
    side in all four views, C against NumPy, bit for bit; a sample also against the one-position encoding."""
    positions, seen = kernel_compare.compare_views(seed, 128, 120)
    assert positions >= 15_000
    assert seen == {(o, v, side) for o, v in VIEWS for side in (0, 1)}


@needs_kernel
def test_c_views_equal_the_encoding_of_each_position() -> None:
    """Independent of the batch engines' flat code: each game's observation from Encoding.observe / View.observe."""
    n = 48
    engine, ref = KernelBatchEngine(n), PythonBatchEngine(n)
    rng = np.random.default_rng(7)
    games = np.arange(n)
    views = [View(ENC, o, v) for o, v in VIEWS]
    checked = 0
    for _ in range(60):
        sides = rng.integers(2, size=n)
        for view in views:
            obs, masks = engine.views(games, sides, view)
            assert obs.dtype == np.float32 and obs.shape == (n, *view.shape) and masks.dtype == np.int8
            for i, state in enumerate(ref.states):
                side = int(sides[i])
                assert np.array_equal(obs[i], view.observe(state, side))
                assert np.array_equal(masks[i], view.mask(ENC.legal_mask(state), side))
                checked += 1
        _, outcome = ref.status()
        going = np.flatnonzero(outcome == NO_OUTCOME)
        m = ref.masks(going)
        codes = np.argmax(rng.random(m.shape) * m, axis=1)
        engine.push(going, codes)
        ref.push(going, codes)
        _, outcome = ref.status()
        done = np.flatnonzero(outcome != NO_OUTCOME)
        engine.reset(done)
        ref.reset(done)
    assert checked == 60 * 4 * n


@needs_kernel
@pytest.mark.parametrize("offset", [0, 16, 4])
def test_c_planes_are_the_same_at_any_alignment(offset: int) -> None:
    """The planes' stores depend on the output's alignment (16 bytes: four floats a non-temporal store;
    else one at a time): the same planes at each."""
    n = 64
    engine, ref = KernelBatchEngine(n), PythonBatchEngine(n)
    rng = np.random.default_rng(offset)
    games = np.arange(n)
    view = View(ENC, "planar", "canonical")
    size = n * int(np.prod(view.shape))
    for _ in range(40):
        sides = rng.integers(2, size=n)
        raw = np.empty(size * 4 + 64 + offset, dtype=np.uint8)
        start = -raw.ctypes.data % 64 + offset
        out = raw[start : start + size * 4].view(np.float32).reshape(n, *view.shape)
        assert out.ctypes.data % 64 == offset
        kernel.C.batch_views(engine._c, games, sides, out, None, view_layout(view))
        flat, masks = ref.observe_and_mask(games, sides)
        assert np.array_equal(out, view.observations(flat, masks, sides)[0])
        _, outcome = ref.status()
        going = np.flatnonzero(outcome == NO_OUTCOME)
        m = ref.masks(going)
        codes = np.argmax(rng.random(m.shape) * m, axis=1)
        engine.push(going, codes)
        ref.push(going, codes)
        _, outcome = ref.status()
        done = np.flatnonzero(outcome != NO_OUTCOME)
        engine.reset(done)
        ref.reset(done)


@needs_kernel
def test_batch_views_refuses_bad_input() -> None:
    assert kernel_compare.malformed_views() >= 10


@needs_kernel
@pytest.mark.parametrize(
    ("observation", "view", "opponent"),
    [("planar", "canonical", "random"), ("planar", "canonical", "self"), ("flat", "canonical", "random")],
)
def test_the_vector_env_gives_the_same_episodes_on_either_engine(observation: str, view: str, opponent: str) -> None:
    """The env on the C views and on the Python engine with NumPy views: same observations, masks,
    rewards and ends, actions chosen in the canonical view (some illegal) included."""
    kw = {"num_envs": 32, "agent_side": "random", "observation": observation, "view": view, "opponent": opponent}
    envs = {k: JerichoVectorEnv(kernel=k, **kw) for k in (True, False)}
    assert isinstance(envs[True].engine, KernelBatchEngine) and isinstance(envs[False].engine, PythonBatchEngine)
    out = {k: e.reset(seed=3) for k, e in envs.items()}
    rng = np.random.default_rng(3)
    ended = 0
    for _ in range(150):
        for key in ("observation", "action_mask"):
            assert np.array_equal(out[True][0][key], out[False][0][key])
        masks = out[False][0]["action_mask"]
        acts = np.argmax(rng.random(masks.shape) * masks, axis=1)
        acts[rng.random(32) < 0.02] = 0  # now and then an illegal action (in the agent's view)
        res = {k: e.step(acts) for k, e in envs.items()}
        for a, b in zip(res[True][1:4], res[False][1:4], strict=True):
            assert np.array_equal(a, b)
        assert np.array_equal(res[True][4]["side"], res[False][4]["side"])
        ended += int(res[True][2].sum())
        out = {k: (r[0], r[4]) for k, r in res.items()}
    assert ended > 32


@needs_kernel
def test_reused_arrays_are_only_those_nobody_holds() -> None:
    """The engine recycles its output arrays (22 MB of planes at B=1024) once no caller references them:
    an observation kept, or a view of one, is never overwritten; a dropped one is used again."""
    envs = JerichoVectorEnv(num_envs=16, agent_side="random", observation="planar", view="canonical")
    obs, _ = envs.reset(seed=1)
    rng = np.random.default_rng(1)
    kept = [(obs["observation"], obs["observation"].copy())]
    part = obs["observation"][3:5]
    part_copy = part.copy()
    del obs
    recycled = 0
    dropped: weakref.ref[np.ndarray] | None = None
    for step in range(40):
        masks = envs._masks
        out, *_ = envs.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        recycled += dropped is not None and out["observation"] is dropped()
        if step % 10 == 0:
            kept.append((out["observation"], out["observation"].copy()))
            dropped = None
        else:
            dropped = weakref.ref(out["observation"])
        del out
    for held, copy in kept:
        assert np.array_equal(held, copy)
    assert np.array_equal(part, part_copy)
    assert recycled > 20  # a dropped array came back at the next step
    assert all(held.ctypes.data % 64 == 0 for held, _ in kept)  # aligned for the non-temporal stores


def test_the_pure_python_fallback_gives_the_same_views() -> None:
    """With JERICHO_KERNEL=python the env runs on PythonBatchEngine with NumPy views, equal to the encoding."""
    code = textwrap.dedent(
        """
        import numpy as np
        from jericho_game import kernel
        from jericho_game.envs.encoding import default_encoding
        from jericho_game.envs.vector import JerichoVectorEnv, PythonBatchEngine
        enc = default_encoding()
        assert kernel.C is None, kernel.describe()
        envs = JerichoVectorEnv(num_envs=6, agent_side="random", observation="planar", view="canonical")
        assert isinstance(envs.engine, PythonBatchEngine)
        obs, info = envs.reset(seed=4)
        rng = np.random.default_rng(4)
        checked = 0
        for _ in range(40):
            for i, state in enumerate(envs.engine.states):
                side = int(info["side"][i])
                if state.outcome == -1:
                    assert np.array_equal(obs["observation"][i], envs.view.observe(state, side))
                    assert np.array_equal(obs["action_mask"][i], envs.view.mask(enc.legal_mask(state), side))
                    checked += 1
            m = obs["action_mask"]
            obs, _, _, _, info = envs.step(np.argmax(rng.random(m.shape) * m, axis=1))
        print("checked", checked)
        """
    )
    env = dict(os.environ, JERICHO_KERNEL="python")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) > 150


def test_view_layout_is_the_python_geometry() -> None:
    """What the C code is told: the planes' grid and cell places, the half turn's images."""
    planar_view = View(ENC, "planar", "canonical")
    layout = view_layout(planar_view)
    nc, na = ENC.n_cells, ENC.n_alignments
    assert layout.dtype == np.int64 and len(layout) == 6 + 2 * nc + na
    assert list(layout[:6]) == [1, 1, 4, 7, nc, na]
    assert list(layout[6 : 6 + nc]) == list(planar_view.planar.cell_pos)  # type: ignore[union-attr]
    assert list(layout[6 + nc : 6 + 2 * nc]) == [nc - 1 - c for c in range(nc)]  # c <-> 25 - c
    assert list(view_layout(View(ENC))[:2]) == [0, 0]


def test_bench_vector_prints_flat_against_planar_canonical(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """``jericho bench --vector``: flat, planar + canonical in float32 and uint8 (one thread and two), each step
    copied into a rollout buffer; the agent steps/s of each and their shares of flat's, for both opponents."""
    import json

    from jericho_game.cli import main

    out = tmp_path / "bench.json"
    assert main(["bench", "--vector", "--seconds", "0.4", "--rollout", "2", "--json", str(out)]) == 0
    assert "planar+canonical uint8 / flat" in capsys.readouterr().out
    figures = {(f["label"], f["unit"]): f["value"] for f in json.loads(out.read_text())["figures"]}
    assert len(figures) == 28
    engine = "C" if kernel.C is not None else "Python"
    names = ["planar+canonical", "planar+canonical uint8", "planar+canonical uint8, 2 threads"]
    for who in ("random opponent", "self-play"):
        for unit in ("agent steps/s", "agent steps/CPU s"):
            flat = figures[(f"vector env B=1024 ({engine}), {who}, rollout copy 2, flat", unit)]
            assert flat > 0
            for name in names:
                rate = figures[(f"vector env B=1024 ({engine}), {who}, rollout copy 2, {name}", unit)]
                share = figures[(f"vector env B=1024, {who}, {name} / flat", f"% ({unit})")]
                assert rate > 0 and share == pytest.approx(100 * rate / flat)
    assert main(["bench", "--vector", "--rollout", "-1"]) == 2


def test_bench_vector_copies_into_a_rollout_buffer_of_the_observations_dtype(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The rollout buffer the figures copy into has the observations' dtype and shape (compact stays compact)
    and receives every step's observations and masks."""
    from jericho_game.envs import bench

    made: list[np.ndarray] = []
    real_zeros = np.zeros

    def zeros(shape, dtype=float):  # type: ignore[no-untyped-def]
        arr = real_zeros(shape, dtype=dtype)
        made.append(arr)
        return arr

    monkeypatch.setattr(bench.np, "zeros", zeros)
    bench.vector_figures(seconds=0.2, num_envs=8, rounds=1, rollout=3, threads=1)
    observations = [a for a in made if a.ndim >= 3 and a.shape[-1] in (7, 1239)]
    dtypes = sorted({(a.dtype.name, a.shape[1:]) for a in observations})
    assert dtypes == [("float32", (8, 192, 4, 7)), ("float32", (8, 1239)), ("uint8", (8, 192, 4, 7))]
    assert all(a.shape[0] == 3 and a.any() for a in observations)  # every slot written
    masks = [a for a in made if a.ndim == 3 and a.shape[-1] == 651]
    assert {a.dtype.name for a in masks} == {"int8", "bool"} and all(a.any() for a in masks)
