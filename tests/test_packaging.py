"""The package's name and extras: ``jericho-game`` / ``import jericho_game`` beside the other ``jericho``.

The distribution name ``jericho`` belongs to another project (text adventures for RL research,
``import jericho``); ours must live beside it in one environment, and a missing extra must say
which one to install.  The licence and citation agree with pyproject, and ``python -m build``
makes an sdist and a wheel (built from that sdist) that installs offline into a fresh venv and
runs the CLI, a game through the public API and the pure-Python fallback.
"""

from __future__ import annotations

import json
import os
import re
import shutil
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
        "from jericho_game.ai import make_player\n"
        "from jericho_game.cli.protocol_client import resolve_command\n"
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
        ("jericho_game.envs.sb3", "the Stable-Baselines3 adapter", "sb3", ["stable_baselines3"]),
        ("jericho_game.envs.jax_env", "the JAX environment", "jax", ["jax"]),
        ("jericho_game.envs.jax_env", "the JAX environment", "jax", ["pgx"]),
        ("jericho_game.web.server", "the web app", "web", ["starlette"]),
        ("jericho_game.web.storage.database", "the web app's storage", "web", ["sqlalchemy"]),
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
        "from jericho_game.ai import PlayerSpecError, make_player\n"
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


# --- the licence, the citation and a built distribution installed into a fresh environment ---

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

# What a user gets from the public API of an installed copy: a whole game, its record read back,
# the AI, and where the package and its kernel came from.
_GAME_PROBE = """
import json, random, jericho_game, jericho_game.kernel as k
from jericho_game import Game
from jericho_game.ai import make_player
from jericho_game.record import read_record, write_record
g = Game(); r = random.Random(7)
while not g.is_over():
    moves = g.legal_moves(); g.play(moves[r.randrange(len(moves))])
back = read_record(write_record(g)).game
ai = Game(); ai.play(make_player('mcts:sims=30', seed=1).choose_move(ai))
print(json.dumps({'file': jericho_game.__file__, 'kernel': k.NAME, 'outcome': g.outcome(),
                  'plies': len(g.history), 'same': back.position() == g.position(), 'ai_plies': len(ai.history)}))
"""


#: The import paths the docs give users, new and old (jericho_game._moved keeps the old ones), and
#: the shipped data files they read: every one must work from the installed wheel.
_IMPORTS_PROBE = """
import jericho_game.envs, jericho_game.envs.render, jericho_game.cli.protocol_client  # (the tensors need numpy)
from jericho_game import Game
from jericho_game.ai import make_player
from jericho_game.ai.puzzles import shipped_puzzles
from jericho_game.players import make_player as old_make_player
from jericho_game.protocol_client import EngineClient
import jericho_game.arena, jericho_game.analysis, jericho_game.ai.arena
assert old_make_player is make_player and jericho_game.arena is jericho_game.ai.arena
assert len(shipped_puzzles()) > 100
from jericho_game.ai._util import SHIPPED_EVALUATOR
assert SHIPPED_EVALUATOR.is_file()  # its weights ship (reading them needs numpy, not installed here)
print('imports ok')
"""


def test_the_licence_is_mit_and_pyproject_says_so() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the Jericho project contributors" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    assert PYPROJECT["license"] == "MIT" and PYPROJECT["license-files"] == ["LICENSE"]
    # A licence expression and a "License ::" classifier together are refused by setuptools.
    assert not [c for c in PYPROJECT["classifiers"] if c.startswith("License ::")]
    assert "Topic :: Games/Entertainment :: Board Games" in PYPROJECT["classifiers"]


def test_citation_cff_matches_the_package() -> None:
    """The CFF 1.2.0 keys that are required (and those a citing user needs) agree with pyproject."""
    yaml = pytest.importorskip("yaml")
    import datetime

    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors"):  # required by the schema
        assert cff[key], key
    assert all(isinstance(a, dict) and (a.get("name") or a.get("family-names")) for a in cff["authors"])
    assert cff["version"] == PYPROJECT["version"]  # bump both together
    assert cff["license"] == PYPROJECT["license"]
    datetime.date.fromisoformat(str(cff["date-released"]))  # YYYY-MM-DD, as the schema asks
    assert cff["repository-code"] == PYPROJECT["urls"]["Source"]
    assert {"Homepage", "Source", "Documentation", "Issues"} <= set(PYPROJECT["urls"])
    assert all(url.startswith("https://") for url in PYPROJECT["urls"].values())


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build`` of a copy of the sources: an sdist, then a wheel built from that sdist."""
    tmp = tmp_path_factory.mktemp("dist")
    src = tmp / "src-copy"
    src.mkdir()
    top = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "CITATION.cff", "MANIFEST.in", "CHANGELOG.md")
    for name in (*top, "CONTRIBUTING.md"):
        shutil.copy2(ROOT / name, src / name)
    skip = shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "*.egg-info")
    for name in ("src", "docs"):
        shutil.copytree(ROOT / name, src / name, ignore=skip)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if shutil.which("gcc") or shutil.which("cc"):
        env["JERICHO_REQUIRE_KERNEL"] = "1"  # the wheel must carry the kernel, compiled from the sdist
    # --no-isolation: the build runs offline on this environment's setuptools (a dev dependency).
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist"), str(src)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return tmp / "dist"


def test_the_sdist_carries_what_a_wheel_is_built_from(dist: Path) -> None:
    import tarfile

    (sdist,) = dist.glob("jericho_game-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        pkg_info = tar.extractfile(f"jericho_game-{PYPROJECT['version']}/PKG-INFO")
        assert pkg_info is not None
        meta = pkg_info.read().decode()
    for needed in (
        "src/jericho_game/_kernel.c",
        "src/jericho_game/boards/standard.json",
        "src/jericho_game/ai/net_weights.npz",
        "src/jericho_game/ai/evaluator.npz",
        "src/jericho_game/ai/value.npz",
        "src/jericho_game/ai/data/puzzles.jsonl",
        "src/jericho_game/web/site/templates/index.html",  # the pages are templates (jericho_game.web.site.pages)
        "src/jericho_game/web/site/templates/analysis.html",
        "src/jericho_game/web/i18n/locale/fr/LC_MESSAGES/messages.po",
        "src/jericho_game/web/site/static/app.js",
        "setup.py",
        "LICENSE",
        "CITATION.cff",
        "docs/rules.md",
    ):
        assert needed in names, needed
    assert "License-Expression: MIT" in meta
    assert "Project-URL: Source, https://github.com/jericho-game/jericho-game" in meta


_LEVEL_PROBE = """
import json, sys
from jericho_game import Game
from jericho_game.ai.base import Limit, make_player
game = Game()
player = make_player("expert", seed=1)
move = player.choose_move(game, Limit(nodes=400, seed=1))
print(json.dumps({"evaluator": player.evaluator, "legal": game.is_legal(move), "sims": player.last_sims,
                  "numpy": "numpy" in sys.modules}))
"""


def test_the_wheel_installs_into_a_fresh_venv_and_runs(dist: Path, tmp_path: Path) -> None:
    """No network: the core has no dependencies, so ``pip install --no-index --no-deps`` is the whole install."""
    import zipfile

    (wheel,) = dist.glob("jericho_game-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    info = f"jericho_game-{PYPROJECT['version']}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    assert "jericho_game/boards/standard.json" in names and "jericho_game/_kernel.c" not in names
    for page in (
        "site/templates/base.html",
        "site/templates/puzzles.html",
        "i18n/locale/fr/LC_MESSAGES/messages.po",
        "site/static/app.js",
    ):
        assert f"jericho_game/web/{page}" in names, page  # the web app's pages and translations ship
    shipped = ("ai/data/puzzles.jsonl", "ai/evaluator.npz", "ai/value.npz", "ai/net_weights.npz", "ai/WEIGHTS.md")
    for data in (*shipped, "ai/baselines.json"):
        assert f"jericho_game/{data}" in names, data  # the AI's shipped puzzles, weights and their datasheet
    compiled = any(n.startswith("jericho_game/_kernel") for n in names)
    assert compiled or not (shutil.which("gcc") or shutil.which("cc")), "a compiler is here but the wheel has no kernel"

    venv_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv_dir)], check=True, capture_output=True, timeout=120)
    bindir = venv_dir / ("Scripts" if os.name == "nt" else "bin")
    py, jericho = bindir / "python", bindir / "jericho"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JERICHO_KERNEL", "VIRTUAL_ENV")}
    done = subprocess.run(
        [py, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--disable-pip-version-check", wheel],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]

    def run(*cmd: str | Path, kernel: str | None = None) -> str:
        run_env = dict(env, JERICHO_KERNEL=kernel) if kernel else env
        # Run from the temporary folder: the checkout's sources must not be importable.
        out = subprocess.run(cmd, env=run_env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert out.returncode == 0, (cmd, out.stdout[-1000:], out.stderr[-2000:])
        return out.stdout

    assert "arena" in run(jericho, "--help") and "engine" in run(jericho, "--help")
    version = run(jericho, "--version")
    assert version.startswith(f"jericho {PYPROJECT['version']} (kernel: {'C' if compiled else 'pure Python'}")
    arena = run(jericho, "arena", "random", "greedy", "--games", "2", "--quiet")
    assert "2/2 games" in arena, arena

    for kernel in (None, "python"):
        probe = json.loads(run(py, "-c", _GAME_PROBE, kernel=kernel).strip().splitlines()[-1])
        assert Path(probe["file"]).is_relative_to(venv_dir), probe  # the installed copy, not the checkout
        assert probe["kernel"] == ("python" if kernel or not compiled else "c")
        assert probe["outcome"] in ("south", "north", "draw") and probe["plies"] > 20 and probe["same"]
        assert probe["ai_plies"] == 1
    assert "pure Python (forced by JERICHO_KERNEL=python)" in run(jericho, "--version", kernel="python")
    assert run(py, "-c", _IMPORTS_PROBE).strip().endswith("imports ok")
    # the registry of the trained players ships and reads on a bare install (the standard library only)
    table = run(py, "-m", "jericho_game.ai.baselines")
    assert "| `ppo-stage2` |" in table and "| `value-expert` | `expert` |" in table, table[:500]
    if compiled:  # the expert plays with its value network on a bare install: no NumPy in the venv
        level = json.loads(run(py, "-c", _LEVEL_PROBE).strip().splitlines()[-1])
        assert level["evaluator"].endswith("value.npz") and Path(level["evaluator"]).is_relative_to(venv_dir)
        assert level["legal"] and level["sims"] == 400 and not level["numpy"], level


def test_the_wheel_is_repaired_into_a_manylinux_wheel_that_installs_and_runs(dist: Path, tmp_path: Path) -> None:
    """``auditwheel repair`` (the dev extra's) makes the wheel a manylinux one: its tag names glibc 2.17 or older
    (the kernel uses no newer symbol: POSIX threads, for one, would need 2.34), and it installs into a fresh venv
    and runs with its kernel.  ``python3 tasks.py wheels`` does the same for each CPython 3.11-3.13 found."""
    import zipfile

    if sys.platform != "linux":
        pytest.skip("manylinux wheels are Linux's")
    (wheel,) = dist.glob("jericho_game-*.whl")
    if not any(n.startswith("jericho_game/_kernel") for n in zipfile.ZipFile(wheel).namelist()):
        assert not (shutil.which("gcc") or shutil.which("cc")), "a compiler is here but the wheel has no kernel"
        assert wheel.name.endswith("-py3-none-any.whl")  # nothing to repair: a pure-Python wheel
        return
    fixed_dir = tmp_path / "fixed"
    tools = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(
        [sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", str(fixed_dir), str(wheel)],
        env=tools, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    (fixed,) = fixed_dir.glob("jericho_game-*.whl")
    tags = re.findall(r"manylinux_(\d+)_(\d+)_(\w+?)(?:\.|$)", fixed.name.removesuffix(".whl"))
    assert tags, f"no manylinux tag in {fixed.name}"
    assert min((int(a), int(b)) for a, b, _ in tags) <= (2, 17), f"{fixed.name}: needs a newer glibc than 2.17"
    abi = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert fixed.name.startswith(f"jericho_game-{PYPROJECT['version']}-{abi}-{abi}-"), fixed.name

    venv_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv_dir)], check=True, capture_output=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JERICHO_KERNEL", "VIRTUAL_ENV")}
    py = venv_dir / "bin" / "python"
    done = subprocess.run(
        [py, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--disable-pip-version-check", fixed],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    out = subprocess.run([venv_dir / "bin" / "jericho", "--version"], env=env, capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0 and "(kernel: C" in out.stdout, out.stdout + out.stderr


def test_the_sdist_builds_and_runs_without_a_compiler(dist: Path, tmp_path: Path) -> None:
    """From the sdist a user installs, with no working C compiler: the package installs without the kernel
    and plays a whole game on the pure-Python core (imported with ``python -S``, so that the editable
    install of the checkout cannot shadow it)."""
    (sdist,) = dist.glob("jericho_game-*.tar.gz")
    site = tmp_path / "site"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JERICHO_KERNEL", "JERICHO_REQUIRE_KERNEL")}
    env.update(CC="/bin/false", CXX="/bin/false")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps", "--target", str(site),
         str(sdist)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert not list(site.glob("jericho_game/_kernel*")), "an extension was built with CC=/bin/false"
    probe = (
        "import jericho_game, jericho_game.kernel as k, random; from jericho_game import Game; "
        "g = Game(); r = random.Random(1)\n"
        "while not g.is_over(): m = g.legal_moves(); g.play(m[r.randrange(len(m))])\n"
        "print(k.NAME, jericho_game.__file__, g.outcome(), len(g.history))"
    )
    out = subprocess.run([sys.executable, "-S", "-c", probe], env=dict(env, PYTHONPATH=str(site)), cwd=site,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    name, where, outcome, plies = out.stdout.split()
    assert name == "python" and where.startswith(str(site))
    assert outcome in ("south", "north", "draw") and int(plies) > 20
