"""The options ``tasks.py test`` gives pytest: two workers and a report of the slowest tests,
each unless the caller chose otherwise."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _tasks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tasks", ROOT / "tasks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_suite_runs_on_two_workers_unless_told() -> None:
    tasks = _tasks()
    assert tasks.parallel([]) == ["-n", "2", "--dist", "loadfile"]
    assert tasks.parallel(["-n", "0"]) == []
    assert tasks.parallel(["-p", "no:xdist"]) == []


def test_the_report_names_the_slowest_tests_unless_told() -> None:
    tasks = _tasks()
    assert tasks.durations([]) == ["--durations=20"]
    assert tasks.durations(["-k", "ladder"]) == ["--durations=20"]
    assert tasks.durations(["--durations=5"]) == []
