"""The test tiers of tests/conftest.py: the names that put single tests in the slow tier are tests of
the files they are listed under (a renamed test would otherwise fall back into the fast tier
unnoticed), and the slow files exist."""

from __future__ import annotations

import re
from pathlib import Path

from tests import conftest

ROOT = Path(__file__).resolve().parents[1]


def test_each_slow_test_named_is_a_test_of_its_file() -> None:
    missing = []
    for name, tests in conftest.SLOW_TESTS_BY_FILE.items():
        path = ROOT / "tests" / name
        defined = (
            set(re.findall(r"^def (test_\w+)\(", path.read_text(encoding="utf-8"), re.M)) if path.exists() else set()
        )
        missing += [f"{name}::{test}" for test in sorted(tests - defined)]
    assert missing == [], f"not tests of their files (renamed? update tests/conftest.py SLOW_TESTS_BY_FILE): {missing}"


def test_each_slow_file_named_exists() -> None:
    found = {p.name for p in (ROOT / "tests").rglob("test_*.py")}
    assert conftest.SLOW_FILES <= found, conftest.SLOW_FILES - found
