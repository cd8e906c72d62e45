"""Compact batches (issue 35, point 3): the vector env's observations as uint8 / bool as well as float32,
bool masks, the C batch calls without the GIL, and ``num_threads``.

The float32 observations stay the reference (``tests/envs/test_vector_views.py`` checks them against
the NumPy definitions); here every compact byte is checked against them, bit for bit.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

import gymnasium
import numpy as np
import pytest

from jericho_game import kernel
from jericho_game.envs.vector import JerichoVectorEnv, KernelBatchEngine, PythonBatchEngine, view_layout
from jericho_game.envs.views import View
from tests import kernel_compare

needs_kernel = pytest.mark.skipif(kernel.C is None, reason="the C kernel is not built here")
VIEWS = [("flat", "absolute"), ("flat", "canonical"), ("planar", "absolute"), ("planar", "canonical")]


@needs_kernel
@pytest.mark.parametrize("seed", range(2))
def test_compact_views_equal_the_float32_ones_on_many_positions(seed: int) -> None:
    """uint8 and bool observations, int8/uint8/bool masks, on 1 to 4 threads: equal to the float32 NumPy views
    of the same random games, byte for byte, in all four views, whole batches and random subsets."""
    positions, seen = kernel_compare.compare_compact(seed, 256, 30)
    assert positions >= 10_000
    for dtype in ("uint8", "bool"):
        assert {(dtype, o, v, 1) for o, v in VIEWS} <= seen
    assert {("uint8", o, v, 3) for o, v in VIEWS} <= seen  # the batch really split over three threads
    assert {("bool", o, v, 4) for o, v in VIEWS} <= seen


@pytest.mark.parametrize("kernel_option", [pytest.param(True, marks=needs_kernel), False])
@pytest.mark.parametrize("opponent", ["random", "self"])
def test_the_compact_env_plays_the_same_episodes(kernel_option: bool, opponent: str) -> None:
    """``obs_dtype="uint8"``, ``mask_dtype="bool"`` (and ``num_threads=2``) against the float32 env with the same
    seed and actions: the same observations (as bytes), masks, rewards, ends and sides; the spaces say the dtypes."""
    kw = {"num_envs": 160, "agent_side": "random", "observation": "planar", "view": "canonical", "opponent": opponent}
    ref = JerichoVectorEnv(kernel=kernel_option, **kw)
    compact = JerichoVectorEnv(kernel=kernel_option, obs_dtype="uint8", mask_dtype="bool", num_threads=2, **kw)
    assert compact.single_observation_space["observation"].dtype == np.uint8
    assert compact.single_observation_space["action_mask"].dtype == np.bool_
    assert compact.observation_space["observation"].shape == (160, 192, 4, 7)
    (obs_a, info_a), (obs_b, info_b) = ref.reset(seed=5), compact.reset(seed=5)
    rng = np.random.default_rng(5)
    ended = 0
    for _ in range(60):
        assert obs_b["observation"].dtype == np.uint8 and obs_b["action_mask"].dtype == np.bool_
        assert np.array_equal(obs_b["observation"], obs_a["observation"].astype(np.uint8))
        assert np.array_equal(obs_b["action_mask"], obs_a["action_mask"].astype(bool))
        assert np.array_equal(info_a["side"], info_b["side"])
        assert compact.single_observation_space["observation"].contains(obs_b["observation"][0])
        masks = obs_a["action_mask"]
        acts = np.argmax(rng.random(masks.shape) * masks, axis=1)
        acts[rng.random(160) < 0.01] = 0  # now and then an illegal action
        a, b = ref.step(acts), compact.step(acts)
        for x, y in zip(a[1:4], b[1:4], strict=True):
            assert np.array_equal(x, y)
        ended += int(a[2].sum())
        (obs_a, info_a), (obs_b, info_b) = (a[0], a[4]), (b[0], b[4])
    assert ended > 50


def test_bool_observations_and_flat_compact() -> None:
    """``obs_dtype="bool"`` (flat and planar) and numpy dtypes as the option's value; the float32 default unchanged."""
    for observation in ("flat", "planar"):
        ref = JerichoVectorEnv(num_envs=8, observation=observation)
        compact = JerichoVectorEnv(num_envs=8, observation=observation, obs_dtype=np.bool_, mask_dtype=bool)
        a, _ = ref.reset(seed=2)
        b, _ = compact.reset(seed=2)
        assert a["observation"].dtype == np.float32 and a["action_mask"].dtype == np.int8
        assert b["observation"].dtype == np.bool_ and np.array_equal(b["observation"], a["observation"] != 0)


def test_bad_compact_options_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="obs_dtype"):
        JerichoVectorEnv(num_envs=2, obs_dtype="float16")
    with pytest.raises(ValueError, match="obs_dtype"):
        JerichoVectorEnv(num_envs=2, obs_dtype="no such dtype")
    with pytest.raises(ValueError, match="mask_dtype"):
        JerichoVectorEnv(num_envs=2, mask_dtype="float32")
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="num_threads"):
            JerichoVectorEnv(num_envs=2, num_threads=bad)


def test_make_vec_passes_the_options() -> None:
    import jericho_game.envs.gym_env  # noqa: F401 - registers Jericho-v1

    envs = gymnasium.make_vec("Jericho-v1", num_envs=4, observation="planar", obs_dtype="uint8", mask_dtype="bool")
    obs, _ = envs.reset(seed=0)
    assert obs["observation"].dtype == np.uint8 and obs["action_mask"].dtype == np.bool_


# -- the GIL -------------------------------------------------------------------------------------------


def _progress_during(calls: Callable[[], None], rounds: int = 25) -> int:
    """How far a Python thread counts while this thread runs ``calls`` (again, up to ``rounds`` times, until
    it has counted: on a loaded machine the counting thread may not be on a core during one short round),
    with forced GIL switches turned off.

    The switch interval is set to 1,000 s, so the counting thread gets the GIL only when this thread gives
    it up of its own accord: a C call that holds the GIL from start to end lets it count nothing.  The
    counter sleeps (a short real sleep, without the GIL) every 64 counts, so that this thread takes the
    GIL back as soon as its C call ends.  Counting, not timing, decides.
    """
    counter = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            counter[0] += 1
            if counter[0] % 64 == 0:
                time.sleep(0.0001)

    old = sys.getswitchinterval()
    worker = threading.Thread(target=count, daemon=True)
    sys.setswitchinterval(1000.0)
    try:
        worker.start()
        time.sleep(0.01)  # the worker starts and counts; this thread gets the GIL back at its first sleep
        during = 0
        for _ in range(rounds):
            before = counter[0]
            calls()
            during += counter[0] - before
            if during:
                break
    finally:
        stop.set()
        sys.setswitchinterval(old)
        worker.join(10)
    return during


@needs_kernel
@pytest.mark.parametrize("what", ["views", "compact views", "masks", "push"])
def test_the_batch_calls_release_the_gil(what: str) -> None:
    """While the C engine writes the observations and masks of a large batch (or plays its moves), another
    Python thread runs: it counts while the calls are in progress.  The calls are the C functions themselves
    (numpy, which releases the GIL in some loops, is not called in between)."""
    n = 4096
    engine = KernelBatchEngine(n)
    view = View(engine.encoding, "planar", "canonical")
    games = np.arange(n, dtype=np.int64)
    sides = games % 2
    obs = np.empty((n, *view.shape), dtype=np.float32)
    small = np.empty((n, *view.shape), dtype=np.uint8)
    masks = np.empty((n, engine._n_act), dtype=np.int8)
    layout = view_layout(view)
    raw, batch_views = engine._c, kernel.C.batch_views
    first = engine.masks(games).argmax(axis=1).astype(np.int64)

    def run() -> None:
        if what == "push":
            for _ in range(20):
                raw.reset(games)  # a short loop that keeps the GIL
                raw.push(games, first)  # one move in each of 4096 games, all checked first
            return
        for _ in range(20):
            if what == "masks":
                raw.masks(games, masks)
            else:
                batch_views(raw, games, sides, small if what == "compact views" else obs, masks, layout)

    assert _progress_during(run) > 0


@needs_kernel
def test_without_the_gil_the_counter_stands_still() -> None:
    """The check above can fail: a C call that keeps the GIL (here ``status``, a short loop that does) lets the
    other thread count nothing."""
    engine = KernelBatchEngine(1 << 16)
    turn, outcome = np.empty(1 << 16, dtype=np.int64), np.empty(1 << 16, dtype=np.int64)

    def run() -> None:
        for _ in range(200):
            engine._c.status(turn, outcome)

    assert _progress_during(run) == 0


@needs_kernel
def test_two_python_threads_step_two_batches_at_once() -> None:
    """Two vector envs stepped from two Python threads (the GIL released in the C calls) give the same episodes
    as each alone: nothing is shared between engines."""

    def play(envs: JerichoVectorEnv, out: list[np.ndarray]) -> None:
        obs, _ = envs.reset(seed=11)
        rng = np.random.default_rng(11)
        for _ in range(30):
            m = obs["action_mask"]
            obs, rewards, *_ = envs.step(np.argmax(rng.random(m.shape) * m, axis=1))
            out.append(rewards.copy())
        out.append(obs["observation"].copy())

    kw = {"num_envs": 512, "agent_side": "random", "observation": "planar", "obs_dtype": "uint8"}
    alone: list[np.ndarray] = []
    play(JerichoVectorEnv(**kw), alone)
    results: list[list[np.ndarray]] = [[], []]
    threads = [threading.Thread(target=play, args=(JerichoVectorEnv(**kw), results[i])) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for got in results:
        assert len(got) == len(alone) and all(np.array_equal(a, b) for a, b in zip(got, alone, strict=True))


def test_num_threads_is_ignored_by_the_python_engine() -> None:
    envs = JerichoVectorEnv(num_envs=4, kernel=False, num_threads=3, obs_dtype="uint8")
    assert isinstance(envs.engine, PythonBatchEngine)
    obs, _ = envs.reset(seed=0)
    assert obs["observation"].dtype == np.uint8
