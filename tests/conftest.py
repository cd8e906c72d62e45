"""Shared fixtures (the conformance vectors, tests/fixtures/conformance/) and the test tiers.

The slow tier (marker ``slow``): browser tests (Chromium through Playwright), tests that start
server processes, every test on PostgreSQL, builds of wheels and the JAX env's compiled tests, and
the few exhaustive agreement runs (thousands of games) that have quicker siblings in the fast tier.
``python3 tasks.py test --fast`` leaves it out (``-m "not slow"``); ``python3 tasks.py test`` and CI
run everything.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import Load

# A suite started in the background without job control (`nohup ... &`, some CI runners) has
# SIGINT ignored, and every engine it starts would inherit that and shrug off the Ctrl-C tests'
# interrupt.  A handled signal is reset to its default at exec, an ignored one is not: handle it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
#: The conformance vectors kept with the tests (a copy of ../shared/conformance/random-games.jsonl,
#: gzipped; tests/fixtures/conformance/README.md): the suite needs nothing beside the checkout.
CONFORMANCE = ROOT / "tests" / "fixtures" / "conformance" / "random-games.jsonl.gz"


def conformance_path() -> Path:
    """The conformance vectors: ``JERICHO_CONFORMANCE`` (another file, plain or gzipped) when set,
    else the copy in tests/fixtures/conformance/."""
    chosen = os.environ.get("JERICHO_CONFORMANCE")
    path = Path(chosen) if chosen else CONFORMANCE
    if not path.exists():
        raise FileNotFoundError(f"conformance vectors not found: {path}")
    return path


def load_conformance() -> list[dict]:
    path = conformance_path()
    with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="session")
def conformance_games() -> list[dict]:
    return load_conformance()


@pytest.fixture()
def load() -> Iterator[Load]:
    """The machine's load from the test's start (tests/helpers.Load): a wall-clock bound of an idle
    machine times ``load.measure()`` (which measures it once more) holds on a loaded one."""
    with Load() as measured:
        yield measured


#: Test files whose every test is in the slow tier (besides every ``*_ui.py``/``*_multiprocess.py``).
SLOW_FILES = {
    "test_browser.py",
    "test_ui.py",
    "test_shutdown_leaks.py",
    "test_examples.py",
    "test_packaging.py",  # builds an sdist and wheels, installs them in fresh venvs
    "test_jax_env.py",  # XLA compiles each batch size
}
#: Single tests in the slow tier: exhaustive runs whose smaller siblings stay in the fast tier.
SLOW_TESTS = {
    "test_two_thousand_random_games_agree_ply_by_ply",  # C and Python kernels, 2,000 games x 8
    "test_values_and_plies_match_brute_force",  # the solver against brute force on 2,000 positions
    "test_check_env_for_every_opponent",  # Gymnasium's checker against every level, expert included
}


def is_slow(item: pytest.Item) -> bool:
    """Whether a test belongs to the slow tier: a browser, server processes or PostgreSQL."""
    name = item.path.name
    if name in SLOW_FILES or name.endswith(("_ui.py", "_multiprocess.py")):
        return True
    if getattr(item, "originalname", item.name) in SLOW_TESTS or item.get_closest_marker("slow") is not None:
        return True
    params = getattr(getattr(item, "callspec", None), "params", {})
    fixtures = set(getattr(item, "fixturenames", ()))
    if params.get("db") == "postgresql" or "postgres_socket" in fixtures:
        return True
    # a browser test in a file of fast tests: it asks for a browser or a page, and its module uses Playwright
    module = getattr(item, "module", None)
    names = vars(module).values() if module is not None else ()
    uses_playwright = any(str(getattr(v, "__module__", "")).startswith("playwright") for v in names)
    return uses_playwright and bool({"browser", "page"} & fixtures)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the fast tier, files wholly in the slow tier are not even imported (Playwright, JAX)."""
    if config.getoption("markexpr", "") == "not slow":
        name = collection_path.name
        if name in SLOW_FILES or name.endswith(("_ui.py", "_multiprocess.py")):
            return True
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: browsers, server processes, PostgreSQL (tests/conftest.py)")
    config.addinivalue_line(
        "markers",
        "timing: a wall-clock bound, scaled by a same-run baseline of the machine's load (tests/helpers.Load); "
        "tasks.py's full run runs these again beside two CPU burners",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
