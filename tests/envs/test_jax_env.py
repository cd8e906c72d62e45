"""The JAX environment (jericho_game.envs.jax_env) equals the C kernel ply by ply.

Needs the ``jax`` extra (jax, jaxlib, pgx, mctx); without it the module is skipped.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

jax = pytest.importorskip("jax", reason="the JAX environment needs the jax extra: pip install 'jericho-game[jax]'")
pytest.importorskip("pgx", reason="the JAX environment needs the jax extra (pgx): pip install 'jericho-game[jax]'")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jericho_game import kernel  # noqa: E402
from jericho_game.board import standard_topology  # noqa: E402
from jericho_game.core import tables_for  # noqa: E402
from jericho_game.envs import jax_env  # noqa: E402
from jericho_game.envs.encoding import default_encoding  # noqa: E402
from jericho_game.envs.jax_env import N_ACTIONS, PASS_ACTION, Jericho, random_actions  # noqa: E402
from jericho_game.envs.planar import default_planar  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GAMES = 2000
PLIES = 104  # a game has at most 50 placements and 51 passes


def _play_batch(
    env: Jericho, games: int, seed: int, observe: bool = False, moves: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """``games`` games in one jitted, vmapped scan; every field of every ply (ply 0 = start).

    The actions are uniformly random legal ones, or ``moves[g, t]`` when given.
    """
    init = jax.vmap(env.init)
    step = jax.vmap(env.step)

    def record(s: jax_env.State) -> dict[str, jax.Array]:
        out = {
            "mask": jnp.packbits(s.legal_action_mask, axis=-1),
            "score": s._score.astype(jnp.int8),
            "leader": s._leader.astype(jnp.int8),
            "outcome": s._outcome.astype(jnp.int8),
            "turn": s._turn.astype(jnp.int8),
            "player": s.current_player.astype(jnp.int8),
            "rewards": s.rewards,
            "terminated": s.terminated,
            "steps": s._step_count,
        }
        if observe:
            out["obs"] = s.observation
        return out

    given = jnp.zeros((PLIES, games), jnp.int32) if moves is None else jnp.asarray(moves.T, jnp.int32)

    @jax.jit
    def run(key: jax.Array, given: jax.Array) -> tuple[dict[str, jax.Array], dict[str, jax.Array], jax.Array]:
        k0, key = jax.random.split(key)
        state = init(jax.random.split(k0, games))

        def body(carry: tuple[jax_env.State, jax.Array], chosen: jax.Array) -> tuple[Any, Any]:
            s, k = carry
            k, k1 = jax.random.split(k)
            a = chosen if moves is not None else random_actions(k1, s.legal_action_mask)
            s2 = step(s, a)
            return (s2, k), (a, record(s2))

        (_, _), (actions, seq) = jax.lax.scan(body, (state, key), given)
        return record(state), seq, actions

    first, seq, actions = run(jax.random.PRNGKey(seed), given)
    out = {k: np.concatenate([np.asarray(first[k])[None], np.asarray(v)]).swapaxes(0, 1) for k, v in seq.items()}
    out["mask"] = np.unpackbits(out["mask"], axis=-1)[..., :N_ACTIONS].astype(bool)
    out["actions"] = np.asarray(actions).T
    return out


@pytest.fixture(scope="module")
def played() -> dict[str, np.ndarray]:
    return _play_batch(Jericho(), GAMES, seed=2026)


def _c_state():  # type: ignore[no-untyped-def]
    if not kernel.available():
        pytest.skip("the C kernel is not built")
    return kernel.new_state(tables_for(standard_topology()), "c")


def test_2000_random_games_equal_the_c_kernel_ply_by_ply(played: dict[str, np.ndarray]) -> None:
    """Masks, scores, leaders, outcome, turn, rewards and termination after every ply."""
    enc = default_encoding()
    exhausted = sevens = passes = asymmetry = 0
    for g in range(GAMES):
        st = _c_state()
        south_player = int(played["player"][g, 0])  # South moves first
        for t in range(PLIES + 1):
            over = st.outcome >= 0
            where = f"game {g} ply {t}"
            assert bool(played["terminated"][g, t]) == over, where
            assert int(played["outcome"][g, t]) == st.outcome, where
            assert list(played["score"][g, t]) == list(st.score), where
            assert list(played["leader"][g, t]) == list(st.leader), where
            assert int(played["turn"][g, t]) == st.turn, where
            if over:
                # pgx's convention at a terminal state: every action "legal", none changes anything.
                assert played["mask"][g, t].all(), where
                if t < PLIES:  # the step after the end rewards nothing and counts no step
                    assert (played["rewards"][g, t + 1] == 0).all(), where
                    assert played["steps"][g, t + 1] == played["steps"][g, t], where
                break
            assert int(played["player"][g, t]) == (south_player if st.turn == 0 else 1 - south_player), where
            assert int(played["steps"][g, t]) == t, where
            expected = enc.legal_mask(st).astype(bool)
            if not np.array_equal(played["mask"][g, t], expected):
                diff = np.flatnonzero(played["mask"][g, t] != expected)
                raise AssertionError(f"{where}: masks differ at actions {diff.tolist()[:10]}")
            if st.last_cell >= 0 and st.forbidden_copy_cells() and st.reserve[st.turn] >> st.last_piece & 1:
                asymmetry += 1
            action = int(played["actions"][g, t])
            assert expected[action], where
            passes += action == PASS_ACTION
            st.push(action)
            rewards = played["rewards"][g, t + 1]
            if st.outcome in (0, 1):
                winner_player = south_player if st.outcome == 0 else 1 - south_player
                assert rewards[winner_player] == 1.0 and rewards[1 - winner_player] == -1.0, where
                sevens += st.passes < 2
                exhausted += st.passes >= 2
            else:
                assert (rewards == 0).all(), where
                exhausted += st.outcome == 2
        else:
            raise AssertionError(f"game {g} did not end in {PLIES} plies")
    # The random games reach every rule the comparison is about.
    # (Random games end early by the seven rule: 1,978 of these 2,000; exhaustion and passes are
    # rarer, which is why the conformance games below are replayed too.)
    counts = (sevens, exhausted, passes, asymmetry)
    assert sevens > 1000 and exhausted >= 10 and passes >= 20 and asymmetry > 10000, counts


def test_the_205_conformance_games_replay_with_every_figure() -> None:
    """The project's conformance vectors (tests/fixtures/conformance/), independent of both kernels."""
    from tests.conftest import load_conformance

    records = load_conformance()
    enc = default_encoding()
    names = tables_for(standard_topology()).move_objects
    moves = np.zeros((len(records), PLIES), dtype=np.int32)
    for g, rec in enumerate(records):
        moves[g, : len(rec["moves"])] = [enc.move_to_action(m) for m in rec["moves"]]
    data = _play_batch(Jericho(observation="flat"), len(records), seed=0, moves=moves)
    aligns = tables_for(standard_topology()).align_names
    side = {None: None, 0: "south", 1: "north", 2: "draw"}
    passes = 0
    for g, rec in enumerate(records):
        for t, want in enumerate([rec["start"], *rec["plies"]]):
            where = f"conformance game {rec['seed']} ply {t}"
            over = want["outcome"] is not None
            assert bool(data["terminated"][g, t]) == over, where
            outcome = int(data["outcome"][g, t])
            assert side[outcome if outcome >= 0 else None] == want["outcome"], where
            assert data["score"][g, t].tolist() == want["score"], where
            leaders = {a: side[int(v) if v >= 0 else None] for a, v in zip(aligns, data["leader"][g, t], strict=True)}
            assert leaders == want["leaders"], where
            if over:
                continue
            assert ("south", "north")[int(data["turn"][g, t])] == want["turn"], where
            legal = np.flatnonzero(data["mask"][g, t])
            assert len(legal) == want["legal_count"], where
            digest = hashlib.sha1(" ".join(sorted(str(names[a]) for a in legal)).encode()).hexdigest()
            assert digest == want["legal_sha1"], where
        passes += rec["moves"].count("pass")
    assert passes > 0


def test_observations_equal_the_encoding_and_the_planes() -> None:
    """Flat and planar observations of every ply, for the player to move and the other one."""
    enc, planar = default_encoding(), default_planar()
    for kind in ("planar", "flat"):
        env = Jericho(observation=kind)
        data = _play_batch(env, 12, seed=7, observe=True)
        assert data["obs"].dtype == np.bool_
        observe_other = jax.jit(jax.vmap(lambda s, env=env: env._observe(s, 1 - s.current_player)))
        for g in range(12):
            st = _c_state()
            for t in range(PLIES + 1):
                flat = enc.observe(st)
                want = planar.from_flat(flat).transpose(1, 2, 0) if kind == "planar" else flat
                assert np.array_equal(data["obs"][g, t], want.astype(bool)), f"{kind} game {g} ply {t}"
                if st.outcome >= 0:
                    break
                st.push(int(data["actions"][g, t]))
        # The other player's view, on one position of each game at the start of a batch replay.
        state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(1), 3))
        other = np.asarray(observe_other(state))
        st = _c_state()
        flat = enc.observe(st, side=1)
        want = planar.from_flat(flat).transpose(1, 2, 0) if kind == "planar" else flat
        assert all(np.array_equal(o, want.astype(bool)) for o in other)


def test_pgx_conventions_illegal_actions_and_finished_games() -> None:
    import pgx

    env = Jericho()
    assert isinstance(env, pgx.core.Env)
    assert env.num_players == 2 and env.id == "jericho" and env.version == "v1"
    state = jax.jit(env.init)(jax.random.PRNGKey(0))
    assert state.legal_action_mask.shape == (N_ACTIONS,) == (651,) and state.observation.shape == (4, 7, 192)
    assert isinstance(state, pgx.core.State) and state.env_id == "jericho"
    assert not state.legal_action_mask[PASS_ACTION] and int(state.legal_action_mask.sum()) == 650
    # An illegal action (the pass while placements exist) ends the game: -1 for its player.
    step = jax.jit(env.step)
    bad = step(state, jnp.int32(PASS_ACTION))
    mover = int(state.current_player)
    assert bool(bad.terminated) and bad.rewards[mover] == -1.0 and bad.rewards[1 - mover] == 1.0
    # An action outside the 651 counts as illegal (pgx's own Env.step would clamp the index).
    for outside in (N_ACTIONS, -1):
        off = step(state, jnp.int32(outside))
        assert bool(off.terminated) and off.rewards[mover] == -1.0 and off.rewards[1 - mover] == 1.0
    # Stepping a finished game changes nothing and rewards nothing.
    again = step(bad, jnp.int32(0))
    assert bool(again.terminated) and (again.rewards == 0).all() and bool(again.legal_action_mask.all())
    with pytest.raises(ValueError, match="observation must be 'planar' or 'flat'"):
        Jericho("pixels")


def test_random_actions_are_legal_and_cover_the_mask() -> None:
    mask = jnp.zeros((4, N_ACTIONS), dtype=bool).at[0, 3].set(True).at[1, PASS_ACTION].set(True)
    mask = mask.at[2, jnp.array([5, 9, 600])].set(True).at[3].set(True)
    seen = [set() for _ in range(4)]
    for i in range(60):
        a = np.asarray(random_actions(jax.random.PRNGKey(i), mask))
        for g in range(4):
            assert mask[g, a[g]], (g, a[g])
            seen[g].add(int(a[g]))
    assert seen[0] == {3} and seen[1] == {PASS_ACTION} and seen[2] == {5, 9, 600} and len(seen[3]) > 40


def _run(*args: str, timeout: float = 240) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_bench_command_prints_steps_per_second() -> None:
    out = _run("-m", "jericho_game.envs.jax_env", "--bench", "--batch", "16", "--steps", "8", "--observation", "flat")
    assert "jax env (flat observation), B=16" in out and "steps per CPU second" in out
    assert out.strip().endswith("steps/s")


def test_the_bench_times_a_baseline_version_alternately(tmp_path: Path) -> None:
    baseline = tmp_path / "old_jax_env.py"
    baseline.write_text((ROOT / "src" / "jericho_game" / "envs" / "jax_env.py").read_text())
    args = ("--bench", "--batch", "8", "--steps", "2", "--repeat", "1", "--observation", "flat")
    out = _run("-m", "jericho_game.envs.jax_env", *args, "--baseline", str(baseline))
    lines = out.strip().splitlines()
    assert [line.split(",")[0] for line in lines[:2]] == ["jax env (flat observation)", "baseline (flat observation)"]
    assert all("steps per CPU second" in line for line in lines[:2]) and lines[2].startswith("load average"), out


@pytest.mark.timeout(1200)
def test_the_anchor_times_every_env_alike() -> None:
    """``--anchor``: this env and pgx's games (here Othello alone, to keep it short), each with pgx's idioms
    (``auto_reset``, ``act_randomly``) and with its fastest path."""
    args = ("--bench", "--batch", "8", "--steps", "2", "--repeat", "1", "--observation", "flat")
    # four programs to compile (two of this env, two of Othello): minutes on a loaded machine
    out = _run("-m", "jericho_game.envs.jax_env", *args, "--anchor", "--anchor-games", "othello", timeout=900)
    lines = out.strip().splitlines()
    assert [line.split(", B=")[0] for line in lines[:4]] == [
        "jericho (flat, 651 actions), fastest path",
        "jericho (flat, 651 actions), pgx idioms",
        "pgx othello (65 actions), pgx idioms",
        "pgx othello (65 actions), fastest path",
    ], out
    assert all("steps per CPU second" in line for line in lines[:4]) and lines[4].startswith("load average"), out
    with pytest.raises(AssertionError, match="not pgx games: tictactoe3"):
        _run("-m", "jericho_game.envs.jax_env", *args, "--anchor", "--anchor-games", "othello,tictactoe3")


def test_one_draw_actions_are_legal_and_uniform() -> None:
    """The anchors' fastest choice (any action count): only legal actions, each about equally often."""
    from jericho_game.envs.jax_env import one_draw_actions

    mask = jnp.zeros((4000, 10), dtype=bool).at[:, jnp.array([1, 4, 9])].set(True)
    picks = np.asarray(one_draw_actions(jax.random.PRNGKey(0), mask))
    counts = np.bincount(picks, minlength=10)
    assert set(np.flatnonzero(counts)) == {1, 4, 9}
    assert counts[[1, 4, 9]].min() > 1200  # 1,333 expected each


def test_the_mctx_example_searches_and_plays_legal_moves() -> None:
    out = _run(str(ROOT / "examples" / "jax_mctx.py"), "--moves", "2", "--simulations", "8", "--batch", "2")
    assert out.count("move ") >= 2 and "legal: True" in out and "legal: False" not in out
