"""More value in the mix at 1 s a move (issue 32 point 4; docs/ai.md "More value in the mix, at
1 s a move"): the figures the docs, the folder's README and the README's strength row quote are
the kept journal's own, and the verdict they give is the one its score gives."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import flat_text, kept_journal, match_score

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "docs/runs/mix-weight-2026-12-05/m065-master-v2-1s-4006"
SPEC = (
    "mcts:sims=1000000,c=0.15,greedy=1,solver=1,endgame=1,"
    "evaluator=docs/runs/value-phase-2026-12-05/value.npz,mix=0.65,cprior=0"
)


def test_the_weight_at_one_second_is_its_kept_journal():
    settings, (wins, draws, losses), ours, theirs = kept_journal(RUN, 400)
    assert settings["players"] == [SPEC, "master-v2"]
    score, low, high = match_score(wins, draws, losses)
    doc, readme = flat_text(ROOT / "docs/ai.md"), flat_text(RUN.parent / "README.md")
    front = flat_text(ROOT / "README.md")
    tally = f"{wins}-{draws}-{losses}"
    row = f"| **4006** | **{tally}** | **{score:.1%}** |"
    assert f"| **400 games ({ours:.2f} s used against {theirs:.2f} s)** {row}" in doc
    interval = f"(95% interval {100 * low:.1f}–{100 * high:.1f}%"
    assert f"**{score:.1%} over 400 games** {interval}" in doc
    assert f"{tally}, **{score:.1%} over 400 games**" in readme
    assert f"in the search's own order {score:.1%}" in front  # beside the ordered search's row
    met = "point 4's 65% is met" if score >= 0.65 else "point 4's 65% is not met"
    assert met in doc and met in readme


def test_the_journal_keeps_no_game_records():
    """The folder is the arena's own (settings and every game's result) without its .jgn records."""
    assert sorted(p.name for p in RUN.iterdir()) == ["arena.json", "results.jsonl"]
