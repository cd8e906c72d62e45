"""Shared fixtures: the conformance vectors of ../shared/conformance/."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

# A suite started in the background without job control (`nohup ... &`, some CI runners) has
# SIGINT ignored, and every engine it starts would inherit that and shrug off the Ctrl-C tests'
# interrupt.  A handled signal is reset to its default at exec, an ignored one is not: handle it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
_CANDIDATES = [
    Path(os.environ["JERICHO_CONFORMANCE"]) if os.environ.get("JERICHO_CONFORMANCE") else None,
    ROOT.parent / "shared" / "conformance" / "random-games.jsonl",
    ROOT / "shared" / "conformance" / "random-games.jsonl",
]


def conformance_path() -> Path:
    for p in _CANDIDATES:
        if p is not None and p.exists():
            return p
    raise FileNotFoundError(
        "conformance vectors not found: expected ../shared/conformance/random-games.jsonl "
        "beside the checkout (or set JERICHO_CONFORMANCE)"
    )


def load_conformance() -> list[dict]:
    with conformance_path().open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@pytest.fixture(scope="session")
def conformance_games() -> list[dict]:
    return load_conformance()
