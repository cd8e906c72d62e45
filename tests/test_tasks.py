"""The options ``tasks.py test`` gives pytest: two workers and a report of the slowest tests,
each unless the caller chose otherwise; and the timing check after a full run."""

from __future__ import annotations

import importlib.util
import signal
import time
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


def test_the_timing_check_follows_a_full_run_only() -> None:
    """The tests marked ``timing`` run again beside CPU burners after a full run, not after a run of
    chosen tests (a path, ``-k``, ``-m``, ``--lf``)."""
    tasks = _tasks()
    assert not tasks.selects_tests([]) and not tasks.selects_tests(["-n", "0", "--durations=5", "-x"])
    for chosen in (["tests/rules"], ["tests/test_docs.py::test_x"], ["-k", "ladder"], ["-m", "slow"], ["--lf"]):
        assert tasks.selects_tests(chosen), chosen


def test_a_burner_spins_until_killed() -> None:
    tasks = _tasks()
    (hog,) = tasks.burners(1)
    try:
        deadline = time.monotonic() + 30
        while _cpu_ticks(hog.pid) == 0:  # it runs on a CPU (at once on an idle machine)
            assert hog.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        hog.kill()
        hog.wait(timeout=30)
    assert hog.returncode == -signal.SIGKILL


def _cpu_ticks(pid: int) -> int:
    """User and system CPU time of a process, in clock ticks (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])
