#!/usr/bin/env python3
"""Set up and run the project with nothing but python3 (3.11+).

    python3 tasks.py run     # set up, then start the web app (prints its URL)
    python3 tasks.py test    # set up, then run lint, type checks and the whole test suite

Setup is idempotent: a virtual environment in .venv with the package and its extras,
and, for the tests, Debian's chromium and postgresql (installed with apt-get when missing).
Extra arguments after ``run`` go to ``jericho`` (``tasks.py run play``; options alone go to
``serve``: ``tasks.py run --port 9000``); extra
arguments after ``test`` go to pytest.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
STAMP = VENV / ".jericho-installed"
EXTRAS = "web,postgres,rl,plot,dev"


def sh(*cmd: str | Path, check: bool = True, env: dict[str, str] | None = None) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, check=check, env=env).returncode


def setup() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - this script must explain itself on old Pythons
        sys.exit(f"python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    if not PY.exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + EXTRAS.encode()).hexdigest()
    if not STAMP.exists() or STAMP.read_text() != wanted:
        sh(PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
        sh(PY, "-m", "pip", "install", "--quiet", "-e", f".[{EXTRAS}]")
        STAMP.write_text(wanted)


def system_packages() -> None:
    """Debian's chromium (browser tests) and postgresql (storage tests), installed when missing."""
    missing = []
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        missing.append("chromium")
    if not (shutil.which("initdb") or glob.glob("/usr/lib/postgresql/*/bin/initdb")):
        missing.append("postgresql")
    if not missing:
        return
    apt = shutil.which("apt-get")
    if not (apt and hasattr(os, "geteuid") and os.geteuid() == 0):
        print(f"please install {' and '.join(missing)}: the tests that need them will fail", file=sys.stderr)
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    sh(apt, "update", "-qq", check=False, env=env)
    sh(apt, "install", "-y", "-qq", "--no-install-recommends", *missing, check=False, env=env)


def run(args: list[str]) -> int:
    setup()
    jericho = BIN / "jericho"
    if not args or args[0].startswith("-"):
        args = ["serve", *args]  # options alone are the web app's: `tasks.py run --port 9000`
    return subprocess.call([str(jericho), *args], cwd=ROOT)


def test(args: list[str]) -> int:
    setup()
    system_packages()
    env = dict(os.environ)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser:
        env["JERICHO_CHROMIUM"] = browser
    steps = [
        [str(PY), "-m", "ruff", "check", "src", "tests", "examples", "tasks.py"],
        [str(PY), "-m", "mypy"],
        [str(PY), "-m", "pytest", *args],
    ]
    for cmd in steps:
        print("+", " ".join(cmd), flush=True)
        rc = subprocess.call(cmd, cwd=ROOT, env=env)
        if rc != 0:
            return rc
    return 0


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in ("run", "test", "setup"):
        print(__doc__)
        return 2
    what, rest = sys.argv[1], sys.argv[2:]
    if what == "setup":
        setup()
        return 0
    return run(rest) if what == "run" else test(rest)


if __name__ == "__main__":
    sys.exit(main())
