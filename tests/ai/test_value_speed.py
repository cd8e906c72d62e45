"""The value gate's matches (issue 32 point 2, docs/ai.md "The value, twice as fast, beside the
endgame solver"): the kept summaries in ``docs/runs/value-speed-2026-12-05`` are what the docs
quote, each a match at equal time of the value alone against greedy playouts."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers import kept_match, match_score

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "docs/runs/value-speed-2026-12-05"
DOC = ROOT / "docs/ai.md"
VALUE = "evaluator=docs/runs/value-phase-2026-12-05/value.npz,mix=1,cprior=0"


def _summary(name: str) -> dict:
    return json.loads((RUNS / f"arena-{name}.json").read_text(encoding="utf-8"))


def _match(name: str) -> tuple[int, int, int]:
    pairing = kept_match(RUNS / f"arena-{name}.json")
    assert "mix=1,cprior=0" in pairing["a"] and "evaluator=" not in pairing["b"]  # the value alone, playouts
    assert ("endgame=1" in pairing["a"]) == ("endgame=1" in pairing["b"]) == ("-eg-" in f"-{name}")
    return pairing["wins"], pairing["draws"], pairing["losses"]


def _score(w: int, d: int, n: int) -> float:
    return match_score(w, d, n - w - d)[0]


def test_the_gates_matches_are_what_the_docs_say():
    doc = DOC.read_text(encoding="utf-8")
    total = [0, 0, 0]
    for seed in (3901, 3902, 3903):
        wins, draws, losses = _match(f"eg-phase-{seed}")
        score = _score(wins, draws, wins + draws + losses)
        assert f"| **{seed}** | **{wins}-{draws}-{losses}** | **{score:.1%}** |" in doc
        assert VALUE in _summary(f"eg-phase-{seed}")["pairings"][0]["a"]
        total = [t + x for t, x in zip(total, (wins, draws, losses), strict=True)]
    wins, draws, losses = total
    score, low, high = match_score(wins, draws, losses)
    assert f"{wins}-{draws}-{losses} over 600 games, {score:.1%}" in doc
    assert f"95% interval {100 * low:.1f}–{100 * high:.1f}%" in " ".join(doc.split())
    assert low > 0.5  # the gate: the value alone at least level, its interval above it


def test_the_matches_before_the_speed_up_and_the_bare_ones_are_what_the_docs_say():
    doc = DOC.read_text(encoding="utf-8")
    for name in RUNS.glob("arena-*.json"):
        stem = name.stem.removeprefix("arena-")
        if stem.startswith("eg-phase-"):
            continue
        wins, draws, losses = _match(stem)
        row = re.escape(f"| {wins}-{draws}-{losses} | {_score(wins, draws, wins + draws + losses):.1%} |")
        assert re.search(rf"\| {stem.rsplit('-', 1)[1]} {row}", doc), stem
    bare = [_match(f"plain-phase-{seed}") for seed in (3901, 3902, 3903)]
    wins, draws, losses = (sum(column) for column in zip(*bare, strict=True))
    assert f"**{wins}-{draws}-{losses} over 600 games, {_score(wins, draws, 600):.1%}**" in doc  # level, bare
