"""The package's name and extras: ``jericho-game`` / ``import jericho_game`` beside the other ``jericho``.

The distribution name ``jericho`` belongs to another project (text adventures for RL research,
``import jericho``); ours must live beside it in one environment, and a missing extra must say
which one to install.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import jericho_game

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"


def _python(code: str, *, path: list[Path], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in path)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout)


def test_distribution_and_import_names() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["name"] == "jericho-game"
    assert meta["project"]["scripts"] == {"jericho": "jericho_game.cli:main"}
    assert Path(jericho_game.__file__).parent == SRC / "jericho_game"
    assert not (SRC / "jericho").exists()


def test_no_import_of_a_package_named_jericho_remains() -> None:
    """Code, tests, examples and the docs' code samples all use ``jericho_game``."""
    pattern = re.compile(r"^\s*(?:>>>\s*)?(?:import|from)\s+jericho(?![\w-])", re.MULTILINE)
    module_path = re.compile(r"(?<![\w/-])jericho\.(?=[a-z_])")  # jericho.core, jericho.envs...
    offenders = []
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for name in tracked.split():
        if not name.endswith((".py", ".md", ".toml", ".js", ".html")) or name == "tests/test_packaging.py":
            continue
        text = (ROOT / name).read_text(encoding="utf-8")
        for regex in (pattern, module_path):
            offenders += [f"{name}: {m.group(0).strip()}" for m in regex.finditer(text)]
    assert offenders == []


def test_a_foreign_jericho_package_on_the_path_does_not_break_ours(tmp_path: Path) -> None:
    """A stand-in for the other project's top-level ``jericho`` (with a ``core`` module of its own)."""
    foreign = tmp_path / "jericho"
    foreign.mkdir()
    (foreign / "__init__.py").write_text("FOREIGN = 'text adventures'\n", encoding="utf-8")
    (foreign / "core.py").write_text("raise RuntimeError('the foreign jericho.core was imported')\n", encoding="utf-8")
    code = (
        "import json, jericho, jericho_game\n"
        "from jericho_game import Game\n"
        "from jericho_game.players import make_player\n"
        "from jericho_game.protocol_client import resolve_command\n"
        "g = Game(); g.play('5R@d2'); g.play(make_player('mcts:sims=20', seed=1).choose_move(g))\n"
        "engine = make_player('external:cmd=jericho engine --player random', seed=3)\n"
        "g.play(engine.choose_move(g)); engine.close()\n"
        "print(json.dumps({'foreign': jericho.FOREIGN, 'plies': len(g.history),\n"
        "                  'ours': jericho_game.__file__, 'cmd': resolve_command('jericho engine')[1:3]}))\n"
    )
    # The foreign package comes first on the path, as it would in an environment holding both.
    done = _python(code, path=[tmp_path, SRC])
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["foreign"] == "text adventures"
    assert out["plies"] == 3
    assert Path(out["ours"]).parent == SRC / "jericho_game"
    assert out["cmd"] == ["-m", "jericho_game"]


# Blocks the named top-level packages as if they were not installed.
_BLOCKER = """
import importlib.abc, sys
BLOCKED = set({blocked!r})
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Blocker())
"""


@pytest.mark.parametrize(
    ("module", "feature", "extra", "blocked"),
    [
        ("jericho_game.envs.encoding", "the tensor encoding", "rl", ["numpy"]),
        ("jericho_game.envs.pettingzoo_env", "the PettingZoo adapter", "rl", ["pettingzoo"]),
        ("jericho_game.envs.gym_env", "the Gymnasium adapter", "rl", ["gymnasium"]),
        ("jericho_game.envs.openspiel_game", "the OpenSpiel adapter", "rl", ["pyspiel", "open_spiel"]),
        ("jericho_game.envs.openspiel_bot", "OpenSpiel's MCTS player", "rl", ["open_spiel"]),
        ("jericho_game.envs.jax_env", "the JAX environment", "jax", ["jax"]),
        ("jericho_game.envs.jax_env", "the JAX environment", "jax", ["pgx"]),
        ("jericho_game.web.server", "the web app", "web", ["starlette"]),
        ("jericho_game.web.storage", "the web app's storage", "web", ["sqlalchemy"]),
    ],
)
def test_a_missing_extra_is_named_with_its_install_line(
    module: str, feature: str, extra: str, blocked: list[str]
) -> None:
    code = _BLOCKER.format(blocked=blocked) + (
        "from jericho_game.extras import MissingExtraError\n"
        "try:\n"
        f"    import {module}\n"
        "except MissingExtraError as exc:\n"
        "    print(exc.extra); print(exc)\n"
        "else:\n"
        "    print('imported')\n"
    )
    done = _python(code, path=[SRC])
    assert done.returncode == 0, done.stderr
    extra_line, message = done.stdout.strip().splitlines()
    assert extra_line == extra
    assert message.startswith(f"{feature} needs the {extra} extra: pip install 'jericho-game[{extra}]'")
    assert "missing: " in message


def test_make_player_without_openspiel_gives_a_player_spec_error_with_the_hint() -> None:
    code = _BLOCKER.format(blocked=["pyspiel", "open_spiel"]) + (
        "from jericho_game.players import PlayerSpecError, make_player\n"
        "print(make_player('mcts:sims=5').name)\n"
        "try:\n"
        "    make_player('openspiel-mcts')\n"
        "except PlayerSpecError as exc:\n"
        "    print(exc)\n"
    )
    done = _python(code, path=[SRC])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 2
    assert lines[1].startswith("player 'openspiel-mcts' is not available:")
    assert "needs the rl extra: pip install 'jericho-game[rl]'" in lines[1]


def test_an_old_version_is_told_to_upgrade_not_to_install() -> None:
    """An ImportError that is not a missing module (``cannot import name``) asks for an upgrade."""
    from jericho_game.extras import missing_extra

    err = missing_extra("the PettingZoo adapter", "rl", ImportError("cannot import name 'AgentSelector'"))
    assert str(err).startswith("the PettingZoo adapter needs the rl extra at the versions it requires")
    assert "pip install --upgrade 'jericho-game[rl]'" in str(err)
    assert isinstance(err, ImportError) and err.extra == "rl"


def test_jericho_serve_without_the_web_extra_names_it() -> None:
    code = _BLOCKER.format(blocked=["starlette"]) + (
        "import sys\nfrom jericho_game.cli import main\nsys.exit(main(['serve', '--port', '1']))\n"
    )
    done = _python(code, path=[SRC])
    assert done.returncode == 2
    assert "jericho serve: not available: the web app needs the web extra: pip install 'jericho-game[web]'" in (
        done.stderr
    )
