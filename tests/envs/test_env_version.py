"""The environment's version (issue 56 point 5): ``Jericho-v1``, what it fixes, and the old id.

The fingerprint below is a hash of seeded episodes of the Gymnasium env: every observation,
mask, reward, end flag and opponent move.  A change that alters it changes what an agent sees
or gets for the same actions, which is what docs/interop.md's datasheet says bumps the version:
then add the next version's fingerprint to ``FINGERPRINTS``, bump ``ENV_VERSION`` and say why in
the datasheet.  (Speed, new options whose defaults keep the episodes, new render modes and
better messages change no fingerprint.)
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path
from typing import Any

import pytest

gymnasium = pytest.importorskip("gymnasium")
np = pytest.importorskip("numpy")

from jericho_game.envs import ENV_VERSION  # noqa: E402
from jericho_game.envs.gym_env import ENV_ID, ENV_IDS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

#: Each version's fingerprint (``episodes_fingerprint()``); a version, once published, never changes its own.
FINGERPRINTS = {1: "da793c8c3ed29f3679f565929432eb05792c554002d5b37ff701f6d0b7138980"}


def _episode(h: Any, seed: int, **kwargs: Any) -> None:
    env = gymnasium.make(ENV_ID, **kwargs)
    obs, info = env.reset(seed=seed)
    spaces = env.observation_space.spaces  # the spaces' facts, not Gymnasium's repr of them
    for key in sorted(spaces):
        box = spaces[key]
        h.update(repr((key, box.shape, str(box.dtype), float(box.low.min()), float(box.high.max()))).encode())
    h.update(repr(("actions", int(env.action_space.n))).encode())
    rng = np.random.default_rng(seed)
    done = False
    while not done:
        h.update(obs["observation"].tobytes() + obs["action_mask"].tobytes())
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        h.update(repr((action, float(reward), bool(terminated), bool(truncated), info.get("opponent_moves"))).encode())
        done = terminated or truncated
    h.update(obs["observation"].tobytes())
    env.close()


def episodes_fingerprint() -> str:
    """SHA-256 of seven seeded episodes: the default env on each side and a random side, against
    ``random`` and ``greedy``; the planar canonical observation; reward shaping.  No search level
    plays in them: a level's play is its own (its name is versioned, ``expert-v2``), and the pure-Python
    search is not the C one move for move, while these episodes are the same on either kernel."""
    h = hashlib.sha256()
    for seed in range(3):
        _episode(h, seed, agent_side=("south", "north", "random")[seed])
    for seed in range(3, 5):
        _episode(h, seed, opponent="greedy", agent_side="random")
    _episode(h, 5, observation="planar", view="canonical", agent_side="north")
    _episode(h, 6, shaping=0.02, agent_side="random")
    return h.hexdigest()


def test_the_env_is_versioned_and_its_episodes_are_this_version_s():
    assert ENV_ID == f"Jericho-v{ENV_VERSION}" == "Jericho-v1"
    assert ENV_VERSION == max(FINGERPRINTS)
    assert episodes_fingerprint() == FINGERPRINTS[ENV_VERSION], (
        "the environment's episodes changed: bump ENV_VERSION (docs/interop.md's datasheet says when)"
    )


def test_the_old_id_still_makes_the_same_env_with_gymnasium_s_notice():
    assert ENV_IDS == ("Jericho-v0", "Jericho-v1")
    for env_id in ENV_IDS:
        spec = gymnasium.spec(env_id)
        assert spec.entry_point == "jericho_game.envs.gym_env:JerichoEnv"
        assert spec.vector_entry_point == "jericho_game.envs.vector:make_vec"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = gymnasium.make("Jericho-v0", agent_side="random")
        new = gymnasium.make("Jericho-v1", agent_side="random")
    said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(said) == 1 and "Jericho-v0 is out of date" in said[0] and "`v1`" in said[0], said
    a, _ = old.reset(seed=11)
    b, _ = new.reset(seed=11)
    for _ in range(6):  # the same episode under either name
        assert (a["observation"] == b["observation"]).all() and (a["action_mask"] == b["action_mask"]).all()
        action = int(np.flatnonzero(a["action_mask"])[0])
        a, ra, *_ = old.step(action)
        b, rb, *_ = new.step(action)
        assert ra == rb
    old.close()
    new.close()


def test_every_adapter_names_the_same_version():
    from jericho_game.envs import pettingzoo_env

    env = pettingzoo_env.raw_env()
    assert env.metadata["name"] == str(env) == f"jericho_v{ENV_VERSION}"


def test_the_datasheet_names_the_id_and_what_bumps_it():
    doc = (ROOT / "docs" / "interop.md").read_text(encoding="utf-8")
    assert "## Datasheet: the environment `Jericho-v1`" in doc
    for needed in ("`jericho_v1`", 'version == "v1"', "What bumps the version", "test_env_version.py"):
        assert needed in doc, needed
