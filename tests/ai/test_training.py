"""The training run (``jericho train``, issue 32 point 3): settings fixed at the start, gating,
the log and curve, resuming after a kill; and the held-out set labelled by the solver."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from jericho_game import kernel
from jericho_game.ai import evalnet
from tests.helpers import child_pids, still_alive

pytestmark = pytest.mark.skipif(kernel.C is None, reason="self-play runs in the C kernel")

#: A tiny run: 2 games of 30 simulations a move, a 16x8 network, one epoch.
TINY = ["--games", "2", "--sims", "30", "--hidden", "16,8", "--epochs", "1", "--heldout", "0", "--jobs", "1"]


def train(out, *extra: str) -> tuple[int, str]:
    import contextlib
    import io

    from jericho_game.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["train", "--out", str(out), *extra])
    return code, buf.getvalue()


def test_a_resume_with_other_settings_is_refused_naming_each(tmp_path):
    code, _ = train(tmp_path, "--generations", "1", "--gate-games", "0", *TINY)
    assert code == 0
    config = (tmp_path / "config.json").read_text()
    code, out = train(tmp_path, "--generations", "2", "--hidden", "32,32", "--games", "3", "--gate-games", "0")
    assert code == 2
    assert "--hidden 32,32 (the run's: 16,8)" in out and "--games 3 (the run's: 2)" in out
    assert "--gate-games" not in out  # the same as the run's: not a difference
    assert (tmp_path / "config.json").read_text() == config  # untouched
    assert not (tmp_path / "net-002.npz").exists()
    # Without options a resume takes the run's own settings (2 games, 30 simulations, 16x8).
    code, out = train(tmp_path, "--generations", "2", "--jobs", "1")
    assert code == 0, out
    assert evalnet.load(tmp_path / "net-002.npz").hidden == (16, 8)
    assert (tmp_path / "config.json").read_text() == config


def test_the_api_refuses_other_settings_and_weights_that_contradict_the_config(tmp_path):
    from jericho_game.ai import selfplay

    play, learn = selfplay.SelfPlayConfig(sims=30), selfplay.TrainConfig(epochs=1, hidden=(16, 8))
    nogate = selfplay.GateConfig(games=0)
    selfplay.expert_iteration(tmp_path, 1, 2, play, learn, log=lambda _: None, gate_cfg=nogate)
    other = selfplay.TrainConfig(epochs=1, hidden=(32, 32), window=2)
    with pytest.raises(selfplay.RunSettingsError) as err:
        selfplay.expert_iteration(tmp_path, 2, 2, play, other, log=lambda _: None, gate_cfg=nogate)
    assert "--hidden 32,32 (the run's: 16,8)" in str(err.value) and "--window 2 (the run's: 4)" in str(err.value)
    # A config rewritten by an older version (the bug of issue 32) no longer matches the weights.
    cfg = json.loads((tmp_path / "config.json").read_text())
    cfg["learn"]["hidden"] = [32, 32]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    big = selfplay.TrainConfig(epochs=1, hidden=(32, 32))
    with pytest.raises(selfplay.RunSettingsError, match="net-001.npz has hidden sizes 16,8"):
        selfplay.expert_iteration(tmp_path, 2, 2, play, big, log=lambda _: None, gate_cfg=nogate)


def test_each_network_is_gated_against_the_best_and_the_run_logs_and_plots(tmp_path):
    from jericho_game.ai import selfplay

    play, learn = selfplay.SelfPlayConfig(sims=30), selfplay.TrainConfig(epochs=1, hidden=(16, 8))
    # Only a clean sweep passes this gate: both outcomes are likely in two games of tiny searches.
    strict = selfplay.GateConfig(games=2, nodes=40, score=1.0)
    selfplay.expert_iteration(tmp_path, 3, 2, play, learn, log=lambda _: None, gate_cfg=strict)
    recs = selfplay.records(tmp_path)
    assert [r["generation"] for r in recs] == [0, 1, 2]
    best = None
    for r in recs:
        g = r["gate"]
        assert g["games"] == 2 and g["wins"] + g["draws"] + g["losses"] == 2
        assert g["score"] == (g["wins"] + 0.5 * g["draws"]) / 2
        assert g["against"] == ("plain search" if best is None else best)
        assert r["selfplay_with"] == best  # self-play used the best network so far
        assert r["accepted"] == (g["score"] >= 1.0)
        if r["accepted"]:
            best = f"net-{r['generation'] + 1:03d}.npz"
    lines = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [line["generation"] for line in lines] == [0, 1, 2]
    assert all("policy_loss" in line and "best_elo" in line for line in lines)
    pytest.importorskip("matplotlib")
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_generation_cut_between_its_stages_is_finished_on_resume(tmp_path):
    from jericho_game.ai import selfplay

    play, learn = selfplay.SelfPlayConfig(sims=30), selfplay.TrainConfig(epochs=1, hidden=(16, 8))
    gate_cfg = selfplay.GateConfig(games=2, nodes=30, score=0.0)
    selfplay.expert_iteration(tmp_path, 2, 2, play, learn, log=lambda _: None, gate_cfg=gate_cfg)
    weights = (tmp_path / "net-002.npz").read_bytes()
    # As if killed after training generation 1, before its gate and record were written.
    (tmp_path / "gen-001.json").unlink()
    (tmp_path / "net-002.npz.tmp.npz").write_bytes(b"half a file")
    selfplay.expert_iteration(tmp_path, 2, 2, play, learn, log=lambda _: None, gate_cfg=gate_cfg)
    assert (tmp_path / "net-002.npz").read_bytes() == weights  # not trained again
    assert [r["generation"] for r in selfplay.records(tmp_path)] == [0, 1]
    assert len((tmp_path / "log.jsonl").read_text().splitlines()) == 2


def test_a_gate_stopped_part_way_decides_nothing_and_is_played_again(tmp_path, monkeypatch):
    """Ctrl-C or ``kill`` during a gate: the arena returns the games it finished, marked
    interrupted; they must not accept or refuse the network (a generation recorded on a few
    games was never gated again).  The run stops, and a resume plays the whole gate."""
    from jericho_game.ai import arena, selfplay

    play, learn = selfplay.SelfPlayConfig(sims=30), selfplay.TrainConfig(epochs=1, hidden=(16, 8))
    gate_cfg = selfplay.GateConfig(games=2, nodes=30, score=0.0)
    whole = arena.run_arena

    def stopped(*args, **kwargs):
        summary = whole(*args, **kwargs)
        return {**summary, "interrupted": True}  # as a stop after its games would leave it

    monkeypatch.setattr(arena, "run_arena", stopped)
    with pytest.raises(KeyboardInterrupt, match="gate"):
        selfplay.expert_iteration(tmp_path, 1, 2, play, learn, log=lambda _: None, gate_cfg=gate_cfg)
    assert (tmp_path / "net-001.npz").exists() and not (tmp_path / "gen-000.json").exists()
    monkeypatch.setattr(arena, "run_arena", whole)
    selfplay.expert_iteration(tmp_path, 1, 2, play, learn, log=lambda _: None, gate_cfg=gate_cfg)
    (rec,) = selfplay.records(tmp_path)
    assert rec["gate"]["games"] == 2 and rec["accepted"]


def test_kill_9_in_the_middle_loses_at_most_the_generation_in_progress(tmp_path):
    entry = "import sys; from jericho_game.cli import main; sys.exit(main(sys.argv[1:]))"
    cmd = [sys.executable, "-c", entry, "train", "--out", str(tmp_path), "--generations", "6"]
    cmd += [*TINY, "--gate-games", "2", "--gate-time", "0.01"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not (tmp_path / "gen-000.json").exists():
            assert proc.poll() is None, "the run ended before its first generation"
            assert time.monotonic() < deadline, "no generation in 300 s"
            time.sleep(0.2)
        time.sleep(0.5)  # into the next generation, wherever it is
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    done = sorted(p.name for p in tmp_path.glob("gen-*.json"))
    code, out = train(tmp_path, "--generations", str(len(done) + 1), "--jobs", "1")
    assert code == 0, out
    recs = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["generation"] for r in recs] == list(range(len(done) + 1))
    for name in done:  # finished generations were not redone
        assert name in {p.name for p in tmp_path.glob("gen-*.json")}
    assert evalnet.load(tmp_path / f"net-{len(done) + 1:03d}.npz").meta["generation"] == len(done) + 1


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from Linux's /proc")
def test_kill_during_self_play_stops_its_workers_too(tmp_path):
    """``kill PID`` (SIGTERM, to the parent alone) while two workers play a generation's games:
    the run stops as on Ctrl-C (exit 130, nothing of the generation recorded) and takes its
    workers with it; by default they played their whole share on, minutes of both cores."""
    entry = "import sys; from jericho_game.cli import main; sys.exit(main(sys.argv[1:]))"
    cmd = [sys.executable, "-c", entry, "train", "--out", str(tmp_path), "--generations", "1"]
    cmd += ["--games", "200", "--sims", "3000", "--hidden", "16,8", "--epochs", "1", "--heldout", "0", "--jobs", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(workers := child_pids(proc.pid)) < 3:  # the pool's two and multiprocessing's tracker
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no workers in 120 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        alive = still_alive(workers)  # (killed then: a failing run leaves nothing playing)
    assert not alive
    assert proc.returncode == 130, (stdout, stderr)
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert not list(tmp_path.glob("games-*.npz")) and not list(tmp_path.glob("gen-*.json"))


def test_the_held_out_set_is_labelled_by_the_solver_where_it_proves_a_value(tmp_path):
    from jericho_game.ai import heldout
    from jericho_game.ai.solver import solve

    held = heldout.make(8, seed=3, sims=300, solver_nodes=20_000, game_sims=30)
    assert len(held) == 8 and np.all(np.abs(held.label) <= 1.0)
    held.save(tmp_path / "h.npz")
    again = heldout.load(tmp_path / "h.npz")
    assert again.moves == held.moves and np.array_equal(again.label, held.label)
    assert again.random_last is not None and np.array_equal(again.random_last, held.random_last)
    for st, label, how in zip(held.states(), held.label, held.how, strict=True):
        assert st.outcome < 0
        if how == heldout.SOLVED:
            assert solve(st, nodes=20_000, line=False).value == label
    net = evalnet.EvalNet.random(hidden=(16, 8), seed=1)
    states = held.states()
    rep = heldout.report(held, {"net": heldout.net_values(net, states), "one": heldout.playout_values(states, 1)})
    assert rep["net"]["all"]["n"] == 8
    assert rep["net"]["after_random"]["n"] + rep["net"]["on_path"]["n"] == 8
    # a random network's value is near 0: its error is about the labels' mean square
    assert rep["net"]["all"]["mse"] == pytest.approx(float((held.label**2).mean()), abs=0.05)
