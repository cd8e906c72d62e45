"""``render_mode="rgb_array"``: a picture of the board, and Gymnasium's RecordVideo (issue 13 point 6)."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env

from jericho_game import Game
from jericho_game.envs.gym_env import JerichoEnv
from jericho_game.envs.picture import LAST, NORTH, PIECE_FILL, SOUTH, _Canvas, render_rgb


def _px(x: float, y: float, size: int = 600) -> tuple[int, int]:
    col, row = _Canvas(size, 5.3).px(x, y)
    return int(row), int(col)


def _near(img: np.ndarray, at: tuple[int, int], colour: np.ndarray, radius: int = 6) -> bool:
    r, c = at
    patch = img[r - radius : r + radius + 1, c - radius : c + radius + 1].reshape(-1, 3).astype(np.float32)
    return bool((np.abs(patch - colour).max(axis=1) < 12).any())


def test_the_picture_shows_towers_the_last_move_and_monoliths() -> None:
    empty = render_rgb(Game())
    assert empty.shape == (600, 600, 3) and empty.dtype == np.uint8
    g = Game.from_moves("5R@d2 1G@d3 2Y@d3")
    img = render_rgb(g)
    assert not np.array_equal(img, empty)
    topo = g.topology
    d2 = next(c for c in topo.cells if c.name == "d2")
    d3 = next(c for c in topo.cells if c.name == "d3")
    assert _near(img, _px(d2.x, d2.y - 0.3), PIECE_FILL["R"], radius=10)  # the 5R bar low in d2
    assert _near(img, _px(d3.x, d3.y - 0.3), PIECE_FILL["G"], radius=10)  # 1G at the bottom of d3
    assert _near(img, _px(d3.x, d3.y - 0.1), PIECE_FILL["Y"], radius=10)  # 2Y on it
    assert _near(img, _px(d3.x - 0.45, d3.y), LAST, radius=4)  # the last move's cell outlined
    assert not _near(img, _px(d2.x - 0.45, d2.y), LAST, radius=4)
    # Column d is led by North: its North triangle holds the monolith (teal), South's does not.
    held = [t for t in topo.triangles if t.alignment == "d"]
    north_tri = next(t for t in held if str(t.side) == "north")
    south_tri = next(t for t in held if str(t.side) == "south")
    assert str(g.leaders()["d"]) == "north"
    assert _near(img, _px(north_tri.x, north_tri.y), NORTH, radius=3)
    assert not _near(img, _px(south_tri.x, south_tri.y), SOUTH, radius=3)


def test_gym_rgb_array_passes_check_env_with_its_render_check() -> None:
    env = gymnasium.make("Jericho-v1", render_mode="rgb_array")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=False)
    assert not [str(w.message) for w in caught]
    e = JerichoEnv(render_mode="rgb_array")
    e.reset(seed=0)
    first = e.render()
    e.step(int(np.flatnonzero(e.action_masks())[0]))
    assert isinstance(first, np.ndarray) and not np.array_equal(first, e.render())


def test_record_video_writes_a_video(tmp_path: Path) -> None:
    from gymnasium.wrappers import RecordVideo  # needs moviepy: the dev extra installs it

    env = RecordVideo(
        gymnasium.make("Jericho-v1", render_mode="rgb_array", opponent="random"),
        video_folder=str(tmp_path / "videos"),
        episode_trigger=lambda episode: True,
    )
    obs, _ = env.reset(seed=1)
    done = False
    steps = 0
    while not done and steps < 8:
        obs, _, done, _, _ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        steps += 1
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert videos and videos[0].stat().st_size > 1000
