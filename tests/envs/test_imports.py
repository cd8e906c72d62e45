"""The core package and the engine protocol never import numpy or the RL libraries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_core_and_protocol_do_not_import_rl_libraries() -> None:
    code = (
        "import sys, jericho_game, jericho_game.cli.protocol, jericho_game.cli.protocol_client\n"
        "import jericho_game.envs, jericho_game.envs.render\n"
        "from jericho_game.ai import make_player\n"
        "make_player('random')\n"
        "s = jericho_game.cli.protocol.EngineSession(make_player('random'))\n"
        "assert s.handle('show')[-1] == 'ok'\n"
        "bad = sorted(m for m in ('numpy', 'gymnasium', 'pettingzoo', 'pyspiel', 'jax', 'pgx') if m in sys.modules)\n"
        "print(bad)\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
