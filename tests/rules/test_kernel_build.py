"""Installing the package: without a C compiler it falls back to the Python core; a wheel carries the kernel.

Both tests build from a copy of the sources in a temporary folder (the checkout stays clean)
and import the result with ``python -S`` so that the editable install of the checkout
cannot shadow it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = (
    "import jericho_game, jericho_game.kernel as k, random; from jericho_game import Game; "
    "g = Game(); r = random.Random(1)\n"
    "while not g.is_over(): m = g.legal_moves(); g.play(m[r.randrange(len(m))])\n"
    "print(k.NAME, jericho_game.__file__, g.outcome(), len(g.history))"
)


def _source_copy(tmp: Path) -> Path:
    src = tmp / "src-copy"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "src", src / "src", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "*.egg-info")
    )
    return src


def _probe(site: Path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "JERICHO_KERNEL"}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run(
        [sys.executable, "-S", "-c", PROBE], env=env, capture_output=True, text=True, check=True, cwd=site
    ).stdout.split()
    assert out[1].startswith(str(site)), out  # the installed copy was imported, not the checkout
    return out


def test_install_without_a_compiler_falls_back_to_the_python_core(tmp_path: Path) -> None:
    src = _source_copy(tmp_path)
    site = tmp_path / "site"
    env = dict(os.environ, CC="/bin/false", CXX="/bin/false")
    env.pop("JERICHO_REQUIRE_KERNEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps", "--target", str(site),
         str(src)],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert not list(site.glob("jericho_game/_kernel*")), "the extension was built with CC=/bin/false"
    name, _, outcome, plies = _probe(site)
    assert name == "python" and outcome in ("south", "north", "draw") and int(plies) > 20


@pytest.mark.skipif(not shutil.which("gcc") and not shutil.which("cc"), reason="no C compiler to build the kernel")
def test_a_built_wheel_installs_and_imports_the_kernel(tmp_path: Path) -> None:
    src = _source_copy(tmp_path)
    dist = tmp_path / "dist"
    env = dict(os.environ, JERICHO_REQUIRE_KERNEL="1")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(src)],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    wheels = list(dist.glob("jericho_game-*.whl"))
    assert len(wheels) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert any(n.startswith("jericho_game/_kernel") and n.endswith(".so") for n in names), names
    assert "jericho_game/_kernel.c" not in names  # the wheel ships the built module, not its source
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheels[0])],
        check=True, capture_output=True,
    )  # fmt: skip
    name, _, outcome, plies = _probe(site)
    assert name == "c" and outcome in ("south", "north", "draw") and int(plies) > 20
