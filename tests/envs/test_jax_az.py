"""The AlphaZero baseline on the JAX env (jericho_game.envs.jax_az): training, resuming, checkpoints,
the arena player, and the data-parallel run on two (fake) CPU devices.

Needs the ``jax`` extra (jax, jaxlib, pgx, mctx); without it the module is skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

jax = pytest.importorskip("jax", reason="the AlphaZero baseline needs the jax extra: pip install 'jericho-game[jax]'")
pytest.importorskip("pgx", reason="the AlphaZero baseline needs the jax extra (pgx): pip install 'jericho-game[jax]'")
pytest.importorskip("mctx", reason="the AlphaZero baseline needs the jax extra (mctx): pip install 'jericho-game[jax]'")

import numpy as np  # noqa: E402

from jericho_game import Game  # noqa: E402
from jericho_game.ai.arena import run_arena  # noqa: E402
from jericho_game.ai.base import PlayerSpecError, make_player, split_spec  # noqa: E402
from jericho_game.envs import jax_az  # noqa: E402
from jericho_game.envs.encoding import default_encoding  # noqa: E402
from tests.helpers import journal_games  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# Every game ends within 101 plies, so each of the 2 games of an unroll of 104 plies ends at least
# once: the first iteration already fills the buffer and takes SGD steps.
TINY = jax_az.Config(
    hidden=8, layers=1, batch=2, unroll=104, simulations=2, considered=2, buffer=512, warmup=8, train_batch=4, updates=2
)


def _log(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / "log.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory after one iteration of the tiny configuration."""
    directory = tmp_path_factory.mktemp("az")
    jax_az.train(directory, TINY, iterations=1, quiet=True)
    return directory


def test_one_iteration_plays_games_trains_and_checkpoints(trained: Path) -> None:
    (record,) = _log(trained)
    assert record["iteration"] == 1 and record["devices"] == 1
    assert record["positions"] == TINY.unroll * TINY.batch
    assert record["games"] >= TINY.batch and record["buffer"] > 0
    assert record["policy_loss"] > 0 and record["value_loss"] >= 0  # SGD ran
    assert [p.name for p in sorted(trained.glob("ckpt-*.npz"))] == ["ckpt-000001.npz"]
    assert json.loads((trained / "config.json").read_text())["hidden"] == TINY.hidden


def test_the_same_call_resumes_and_refuses_other_settings(trained: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    for f in trained.iterdir():
        (run / f.name).parent.mkdir(exist_ok=True)
        (run / f.name).write_bytes(f.read_bytes())
    before, _ = jax_az.load_params(run / "ckpt-000001.npz")
    with open(run / "log.jsonl", "a") as log:  # a run killed after its checkpoint had logged iteration 2
        log.write(json.dumps({"iteration": 2, "killed": True}) + "\n")
    jax_az.train(run, TINY, iterations=2, quiet=True)
    records = _log(run)
    assert [r["iteration"] for r in records] == [1, 2] and "killed" not in records[1]
    assert records[1]["positions"] == 2 * records[0]["positions"]  # counters carried over
    assert [p.name for p in sorted(run.glob("ckpt-*.npz"))] == ["ckpt-000001.npz", "ckpt-000002.npz"]
    after, meta = jax_az.load_params(run / "ckpt-000002.npz")
    assert meta["iteration"] == 2
    assert any(not np.array_equal(before[k], after[k]) for k in before)  # it trained on
    with pytest.raises(SystemExit, match="simulations: stored 2, given 3"):
        jax_az.train(run, jax_az.Config(**{**TINY.__dict__, "simulations": 3}), iterations=3, quiet=True)
    assert len(_log(run)) == 2


def test_a_new_run_can_start_from_another_runs_network(tmp_path: Path) -> None:
    fresh = jax_az.init_params(TINY, jax.random.split(jax.random.PRNGKey(TINY.seed))[1])
    start = {k: x * 3 + 0.5 for k, x in fresh.items()}  # far from what this seed would start from
    zeros = {k: np.zeros_like(x) for k, x in fresh.items()}
    jax_az.save_checkpoint(tmp_path / "start.npz", start, zeros, zeros, 0, {"iteration": 9})
    run = tmp_path / "from"
    jax_az.train(run, TINY, iterations=1, quiet=True, init=tmp_path / "start.npz")
    params, meta = jax_az.load_params(run / "ckpt-000001.npz")
    assert meta["pretrained"] == {"init": "start.npz", "init_iteration": 9}

    def distance(a: dict, b: dict) -> float:
        return sum(float(np.abs(np.asarray(a[k]) - np.asarray(b[k])).sum()) for k in a)

    assert distance(params, start) < 0.1 * distance(params, fresh)  # two SGD steps from the given network
    with pytest.raises(ValueError, match="shapes are not this run's"):
        wide = jax_az.Config(**{**TINY.__dict__, "hidden": 9})
        jax_az.train(tmp_path / "wide", wide, iterations=1, quiet=True, init=tmp_path / "start.npz")


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    params = jax_az.init_params(TINY, jax.random.PRNGKey(3))
    m = {k: v + 1 for k, v in params.items()}
    v = {k: x * 2 for k, x in params.items()}
    path = tmp_path / "ckpt-000007.npz"
    jax_az.save_checkpoint(path, params, m, v, 11, {"iteration": 7})
    loaded, meta = jax_az.load_params(path)
    assert meta == {"iteration": 7}
    assert set(loaded) == set(params)
    for k in params:
        np.testing.assert_array_equal(np.asarray(loaded[k]), np.asarray(params[k]))
    with np.load(path) as f:
        np.testing.assert_array_equal(f["m/w0"], np.asarray(m["w0"]))
        assert int(f["step"]) == 11
    # The exported float16 weights give the same moves' logits to within float16's precision.
    small = jax_az.save_weights(path, tmp_path / "w.npz", note="test")
    half, meta16 = jax_az.load_params(small)
    assert meta16["dtype"] == "float16" and meta16["iteration"] == 7
    obs = jax_az.state_from_game(Game()).observation[None]
    a, b = jax_az.forward(params, obs), jax_az.forward(half, obs)
    np.testing.assert_allclose(np.asarray(a[0]), np.asarray(b[0]), atol=2e-2)
    with pytest.raises(ValueError, match="no jax-az network"):
        np.savez(tmp_path / "other.npz", x=np.zeros(3))
        jax_az.load_params(tmp_path / "other.npz")


def test_state_from_game_matches_the_engine_along_a_game() -> None:
    enc = default_encoding()
    game = Game()
    rng = np.random.default_rng(5)
    checked = 0
    while not game.is_over():
        state = jax_az.state_from_game(game)
        np.testing.assert_array_equal(np.asarray(state.legal_action_mask), enc.legal_mask(game))
        np.testing.assert_array_equal(np.asarray(state.observation), enc.observe(game).astype(bool))
        moves = game.legal_moves()
        game.play(moves[int(rng.integers(len(moves)))])
        checked += 1
    assert checked > 5 and bool(jax_az.state_from_game(game).terminated)


def test_the_arena_spec_loads_and_plays_legal_moves(trained: Path) -> None:
    path = str(trained / "ckpt-000001.npz")
    assert split_spec(f"jax-az:{path},sims=4") == ("jax-az", [("weights", path), ("sims", "4")])
    assert split_spec("jax-az:weights=x.npz") == ("jax-az", [("weights", "x.npz")])
    player = make_player(f"jax-az:{path},sims=4")
    game = Game()
    for _ in range(6):
        move = player.choose_move(game)
        assert game.is_legal(move)
        game.play(move)
    summary = run_arena([f"jax-az:{path},sims=4", "random"], games=2, seed=1)
    assert len(summary["games"]) == 2
    assert all(g["error"] is None for g in summary["games"])
    with pytest.raises(PlayerSpecError, match="no such file"):
        make_player("jax-az:/nonexistent/ckpt.npz")
    with pytest.raises(PlayerSpecError, match="needs a checkpoint"):
        make_player("jax-az")


def test_two_devices_share_the_batch(tmp_path: Path) -> None:
    """The pmapped run on two fake CPU devices: each plays half the games, SGD averages the gradients."""
    code = textwrap.dedent(
        f"""
        import jax
        from jericho_game.envs import jax_az
        assert jax.local_device_count() == 2, jax.devices()
        config = jax_az.Config(
            hidden=8, layers=1, batch=4, unroll=104, simulations=2, considered=2, buffer=512, warmup=8,
            train_batch=4, updates=2)
        jax_az.train({str(tmp_path)!r}, config, iterations=1, quiet=True)
        """
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    # Only flags XLA knows: a word it cannot parse in XLA_FLAGS makes it drop the rest.
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2 --xla_cpu_multi_thread_eigen=false"
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    (record,) = _log(tmp_path)
    assert record["devices"] == 2
    assert record["games"] >= 4 and record["policy_loss"] > 0
    assert (tmp_path / "ckpt-000001.npz").exists()


def test_evaluate_counts_the_games_from_the_nets_side(trained: Path) -> None:
    result = jax_az.evaluate(str(trained / "ckpt-000001.npz"), "random", games=2, sims=2, seed=3)
    assert result["games"] == 2 == result["wins"] + result["draws"] + result["losses"]
    assert result["score"] == (result["wins"] + result["draws"] / 2) / 2
    assert result["network"] == "ckpt-000001.npz" and result["iteration"] == 1
    low, high = result["ci95"]
    assert 0.0 <= low <= result["score"] <= high <= 1.0


def test_a_stopped_evaluation_appends_nothing(trained: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C or ``kill`` during ``evaluate``: the arena's finished games, marked interrupted, are
    not the evaluation asked for, so nothing goes to ``--json`` and the command exits 130."""
    import jericho_game.ai.arena as arena

    whole = arena.run_arena
    monkeypatch.setattr(arena, "run_arena", lambda *a, **k: {**whole(*a, **k), "interrupted": True})
    out = tmp_path / "eval.jsonl"
    argv = ["evaluate", str(trained / "ckpt-000001.npz"), "--opponent", "random", "--games", "2", "--sims", "2"]
    assert jax_az.main([*argv, "--json", str(out)]) == 130
    assert not out.exists()


def test_wilson_interval() -> None:
    low, high = jax_az.wilson(1.0, 200)
    assert 0.97 < low < 1.0 and high == 1.0  # not empty at 100%, unlike the normal interval
    low, high = jax_az.wilson(0.5, 100)
    assert abs((0.5 - low) - (high - 0.5)) < 1e-12 and 0.39 < low < 0.41
    assert (
        jax_az.wilson(0.7, 1000)[1] - jax_az.wilson(0.7, 1000)[0]
        < jax_az.wilson(0.7, 100)[1] - jax_az.wilson(0.7, 100)[0]
    )


RUN = ROOT / "docs" / "runs" / "jax-az-2026-12-04"


def test_the_kept_network_plays_and_the_docs_quote_its_games() -> None:
    """The network of the measured 90-minute run (kept with its results, 1 MB in float16) loads as
    an arena player, and docs/interop.md's table is the results file's, game counts and all."""
    weights = RUN / "az.npz"
    params, meta = jax_az.load_params(weights)
    assert meta["dtype"] == "float16" and params["w0"].shape == (1239, 256) and jax_az.layer_count(params) == 2
    summary = run_arena([f"jax-az:{weights},sims=4", "random"], games=2, seed=1)
    assert [g["error"] for g in summary["games"]] == [None, None]
    docs = (ROOT / "docs" / "interop.md").read_text(encoding="utf-8")
    results = journal_games(RUN)
    assert results and all(r["games"] >= 200 for r in results)
    for r in results:
        sims = r["player"].rsplit("=", 1)[1]
        row = f"| `{r['opponent']}` | {sims} | {r['games']} | {r['wins']}–{r['draws']}–{r['losses']} |"
        assert row in docs, row


def test_symmetric_batches_turn_observation_and_policy_together() -> None:
    from jericho_game.envs.teacher import teacher_game

    enc = default_encoding()
    rec = teacher_game(3, sims=8, sample_plies=2)
    data = {k: np.array(rec[k]) for k in ("obs", "policy", "value")}
    idx = np.arange(len(data["value"]))
    obs, pol, val = jax_az._symmetric_batch(data, idx, np.random.default_rng(0))
    seen = set()
    for i in idx:
        for name in ("identity", "mirror", "half-turn", "flip"):
            sym = enc.symmetry(name)
            # (a symmetric position has several images that look alike: any that maps both will do)
            if np.array_equal(obs[i], sym.observations(data["obs"][i])) and np.array_equal(
                pol[i], sym.masks(data["policy"][i].astype(np.float32))
            ):
                seen.add(name)
                break
        else:
            raise AssertionError(f"row {i}: no symmetry maps both its observation and its policy")
    assert len(seen) > 1  # the symmetries are drawn, not one for all
    np.testing.assert_array_equal(val, data["value"])


def test_pretrain_starts_a_run_that_self_play_goes_on_with(tmp_path: Path) -> None:
    from jericho_game.envs.teacher import make_teacher_data

    shards = make_teacher_data(tmp_path / "teacher", 4, sims=8, seed=1, shard_games=2)
    run = tmp_path / "run"
    config = jax_az.Config(**{**TINY.__dict__, "train_batch": 16})
    summary = jax_az.pretrain(run, config, shards, epochs=2, holdout=0.2, quiet=True)
    assert summary["steps"] == int(2 * summary["trained_on"] / 16) and summary["heldout"]["positions"] > 0
    assert 0.0 <= summary["heldout"]["top1"] <= 1.0 and summary["heldout"]["value_mse"] >= 0
    assert json.loads((run / "pretrain.json").read_text())["teacher_positions"] == summary["teacher_positions"]
    start, meta = jax_az.load_params(run / "ckpt-000000.npz")
    assert meta["iteration"] == 0 and meta["pretrained"]["steps"] == summary["steps"]
    fresh = jax_az.init_params(config, jax.random.split(jax.random.PRNGKey(config.seed))[1])
    assert any(not np.allclose(start[k], fresh[k]) for k in fresh)  # it learned
    jax_az.train(run, config, iterations=1, quiet=True)  # self-play resumes from the teacher's network
    (record,) = _log(run)
    assert record["iteration"] == 1
    _, meta1 = jax_az.load_params(run / "ckpt-000001.npz")
    assert meta1["pretrained"] == meta["pretrained"]
    with pytest.raises(ValueError, match="already holds checkpoints"):
        jax_az.pretrain(run, config, shards, quiet=True)
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.json").write_bytes((run / "config.json").read_bytes())
    with pytest.raises(SystemExit, match="hidden: stored 8, given 9"):
        jax_az.pretrain(other, jax_az.Config(**{**TINY.__dict__, "hidden": 9}), shards, quiet=True)


WARM = ROOT / "docs" / "runs" / "jax-az-warm-2026-12-05"


def test_the_warm_started_networks_play_and_the_docs_quote_their_games() -> None:
    """The warm-started run's kept networks (its iteration 0, the teacher's pupil, and its last
    self-play iteration) load as arena players, and docs/interop.md's table is its results file's."""
    results = journal_games(WARM)
    assert results and all(r["games"] >= 200 for r in results)
    docs = (ROOT / "docs" / "interop.md").read_text(encoding="utf-8")
    for name in sorted({r["network"] for r in results}):
        params, meta = jax_az.load_params(WARM / name)
        assert meta["dtype"] == "float16" and meta["pretrained"]["teacher_positions"] > 300_000
        assert params["w0"].shape == (1239, 256) and jax_az.layer_count(params) == 2
        summary = run_arena([f"jax-az:{WARM / name},sims=4", "random"], games=2, seed=1)
        assert [g["error"] for g in summary["games"]] == [None, None]
    for r in results:
        sims = r["player"].rsplit("=", 1)[1]
        score = f"{r['wins']}–{r['draws']}–{r['losses']}"
        row = f"| {r['iteration']:,} | `{r['opponent']}` | {sims} | {r['games']} | {score} |"
        assert row in docs, row
