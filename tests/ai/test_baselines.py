"""One table of baselines (issue 56 point 5): ``ai/baselines.json`` against the kept journals."""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest

from jericho_game.ai import baselines, levels
from jericho_game.ai.baselines import Match, performance

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = baselines.load()
BY_NAME = {b.name: b for b in ENTRIES}

#: ``.npz`` files in the repository that hold data, not a player's weights.
DATA_FILES = {"docs/runs/value-scale-2026-12-04/heldout.npz", "examples/data/sample/plies.npz"}


def tracked_npz() -> set[str]:
    """Every ``.npz`` the repository holds (git's list where there is one, else the tree)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "*.npz"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # an unpacked sdist: walk the folders
        listed = []
    if not listed:
        listed = [str(p.relative_to(ROOT)) for top in ("src", "docs", "examples") for p in (ROOT / top).rglob("*.npz")]
    return set(listed)


def test_every_kept_network_is_in_the_registry_once_per_player():
    weights = {b.weights for b in ENTRIES}
    assert weights <= tracked_npz()
    # a copy kept beside its run (docs/runs/value-phase-2026-12-05/value.npz is ai/value.npz) is
    # the same network: it is in by its checksum
    registered = {b.sha256 for b in ENTRIES}
    kept = {path: baselines.sha256_of(ROOT / path) for path in tracked_npz() - DATA_FILES}
    missing = sorted(path for path, digest in kept.items() if digest not in registered)
    assert not missing, f"add these networks to src/jericho_game/ai/baselines.json (docs/ai.md, 'Baselines'): {missing}"
    assert set(kept.values()) == registered
    assert len({b.name for b in ENTRIES}) == len(ENTRIES)
    assert len({b.player for b in ENTRIES}) == len(ENTRIES)
    shipped = {b.weights for b in ENTRIES if b.shipped}
    assert shipped == {str(p.relative_to(ROOT)) for p in (ROOT / "src/jericho_game/ai").glob("*.npz")}


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda b: b.name)
def test_each_weights_file_is_the_one_named_and_its_datasheet_quotes_it(entry):
    assert baselines.sha256_of(ROOT / entry.weights) == entry.sha256
    sheet = (ROOT / entry.datasheet).read_text(encoding="utf-8")
    if "sha256" in sheet:  # a datasheet that gives checksums gives this file's
        assert entry.sha256 in sheet, entry.datasheet
    for field in baselines.TRAINING_FIELDS:  # every question answered, if only by "not recorded"
        assert entry.training[field].strip(), (entry.name, field)
    assert entry.reproduce.strip() and entry.summary.strip()


@pytest.mark.parametrize("entry", [b for b in ENTRIES if b.matches], ids=lambda b: b.name)
def test_each_match_is_its_journal_s_and_each_elo_is_recomputed_from_them(entry):
    ladder = baselines.ladder_elos()
    for m in entry.matches:
        assert m.opponent in ladder, m  # only the ladder's rated levels count
        assert (m.wins, m.draws, m.losses) == baselines.tally(ROOT, m.journal, m.player, m.opponent), m
        assert m.games == m.wins + m.draws + m.losses
        assert m.player == entry.player  # the journal's games are of the spec the table names
        # the command that reproduces it plays that pairing (or the run that holds it)
        assert m.opponent in entry.reproduce, (entry.name, m.opponent)
    r = performance(entry.matches)
    assert entry.elo == r
    assert r.low is not None and r.high is not None and r.elo is not None
    assert r.low < r.elo < r.high


def test_unrated_entries_say_why():
    for b in ENTRIES:
        assert (b.elo is None) == (not b.matches) == bool(b.unrated), b.name


def test_the_registry_is_what_a_refresh_from_the_journals_writes():
    assert baselines.refresh(ROOT) == json.loads(baselines.REGISTRY.read_text(encoding="utf-8"))


def test_the_docs_table_is_the_registry_s():
    doc = (ROOT / "docs" / "ai.md").read_text(encoding="utf-8")
    table = baselines.render(ENTRIES)
    assert table in doc
    assert baselines.main(["--check", str(ROOT / "docs" / "ai.md")], out=lambda _: None) == 0
    for b in ENTRIES:
        assert f"| `{b.name}` | `{b.player}` |" in table and b.sha256 in table


def test_a_stale_docs_table_is_caught(tmp_path):
    doc = tmp_path / "ai.md"
    stale = baselines.render(ENTRIES).replace("**1,", "**9,", 1)
    doc.write_text("# x\n\n" + stale + "\n", encoding="utf-8")
    said: list[str] = []
    assert baselines.main(["--check", str(doc)], out=said.append) == 1 and "stale" in said[0]
    assert baselines.main(["--docs", str(doc)]) == 0
    assert baselines.main(["--check", str(doc)], out=said.append) == 0


def test_the_quoted_scores_are_the_runs_own():
    """The figures the runs' datasheets quote come out of the journals' counts."""
    stage2 = {m.opponent: m.score for m in BY_NAME["ppo-stage2"].matches}
    assert stage2 == {"easy": 0.985, "medium": 0.975, "hard": 0.9275, "strong": 0.8025, "advanced": 0.6775}
    warm = {m.opponent: m.score for m in BY_NAME["az-warm-275"].matches}
    assert warm == {"hard": 0.915, "strong": 0.6775, "advanced": 0.475}
    scratch = {m.opponent: baselines.percent(m) for m in BY_NAME["az-scratch"].matches}
    assert scratch == {"easy": "49.0%", "casual": "45.3%", "medium": "32.5%", "hard": "15.5%"}  # halves up


def _match(opponent: str, w: int, d: int, lo: int) -> Match:
    return Match(opponent, w + d + lo, w, d, lo, "-", "-")


def test_one_level_gives_the_usual_performance_rating_and_its_interval():
    """Against one level: R - 400 log10(1/s - 1), the interval from s -/+ 1.96 sigma/sqrt(n)."""
    w, d, lo = 70, 10, 20
    r = performance([_match("elite", w, d, lo)])
    n, s = w + d + lo, (w + d / 2) / (w + d + lo)
    sigma = math.sqrt((w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + lo * s**2) / n / n)

    def elo(x: float) -> int:
        return round(2810 - 400 * math.log10(1 / x - 1))

    assert levels.LADDER[9].name == "elite" and levels.LADDER[9].elo == 2810
    assert (r.elo, r.games) == (elo(s), 100)
    assert abs(r.low - elo(s - 1.96 * sigma)) <= 1 and abs(r.high - elo(s + 1.96 * sigma)) <= 1
    # an even score is the level's own Elo; all the points leave the figure unbounded above
    assert performance([_match("hard", 40, 20, 40)]).elo == 1580
    top = performance([_match("easy", 10, 0, 0)])
    assert top.elo is None and top.high is None


def test_several_levels_give_the_elo_whose_expected_score_is_the_score():
    ms = [_match("easy", 189, 7, 4), _match("medium", 168, 9, 23), _match("hard", 161, 4, 35)]
    r = performance(ms)
    ladder = baselines.ladder_elos()
    expected = sum(m.games * baselines.expected_score(r.elo, ladder[m.opponent]) for m in ms)
    assert abs(expected - sum(m.points for m in ms)) < 1.0  # to the rounding of the Elo
    # more games at the same scores narrow the interval; the centre stays
    doubled = performance([Match(m.opponent, 2 * m.games, 2 * m.wins, 2 * m.draws, 2 * m.losses, "-", "-") for m in ms])
    assert doubled.elo == r.elo and doubled.high - doubled.low < r.high - r.low
    with pytest.raises(ValueError, match="not rated levels of the ladder: greedy"):
        performance([_match("greedy", 1, 0, 1)])


def test_the_tally_reads_each_kind_of_journal_and_refuses_a_pairing_it_lacks():
    assert baselines.tally(ROOT, "docs/runs/ladder-top-2026-12-06", "master", "expert") == (64, 10, 26)
    assert baselines.tally(ROOT, "docs/runs/ladder-top-2026-12-06", "expert", "master") == (26, 10, 64)
    assert baselines.tally(ROOT, "docs/runs/ppo-net-2026-12-04/arena.json", "easy", "net") == (49, 13, 138)
    with pytest.raises(LookupError, match="holds no games of net against master"):
        baselines.tally(ROOT, "docs/runs/ppo-net-2026-12-04/arena.json", "net", "master")
    with pytest.raises(LookupError):
        baselines.tally(ROOT, "docs/runs/jax-az-2026-12-04/results.jsonl", "jax-az:x.npz,sims=256", "easy")


def test_the_datasheets_checksums_agree_with_the_registry():
    """WEIGHTS.md lists the shipped files' checksums; each is the registry's."""
    sheet = (ROOT / "src/jericho_game/ai/WEIGHTS.md").read_text(encoding="utf-8")
    quoted = dict(re.findall(r"## `(\w+\.npz)`.*?sha256 \| `([0-9a-f]{64})`", sheet, flags=re.S))
    registry = {Path(b.weights).name: b.sha256 for b in ENTRIES if b.shipped}
    assert quoted == registry


def _meta(path: Path) -> dict[str, object]:
    """The training facts a kept network's file records (``_meta`` of ``net``'s format, ``meta`` of jax-az's)."""
    np = pytest.importorskip("numpy")
    with np.load(path) as z:
        raw = z["_meta"] if "_meta" in z.files else z["meta"]
        text = str(raw) if raw.dtype.kind == "U" else bytes(raw.astype(np.uint8)).decode()
    facts: dict[str, object] = json.loads(text)
    return facts


def _n(x: float) -> str:
    return f"{x:,.0f}"


def test_the_training_facts_are_the_ones_the_files_and_logs_record():
    """The numbers of the training columns, where a kept network's file or its run's log records
    them, are those records' (hours to the hundredth)."""
    net = _meta(ROOT / BY_NAME["net"].weights)["training"]
    t = BY_NAME["net"].training
    assert isinstance(net, dict)
    assert _n(net["dataset_games"]) in t["data"] and _n(net["training_plies"]) in t["data"]
    assert _n(net["held_out_plies"]) in t["data"] and _n(net["steps"]) in t["steps"]
    assert t["hours"].startswith(f"{net['total_seconds'] / 3600:.2f}:") and net["torch"] in t["hardware"]
    for name in ("ppo-stage1", "ppo-stage2"):
        facts = _meta(ROOT / BY_NAME[name].weights)["training"]
        log = (ROOT / BY_NAME[name].weights).with_name("log.jsonl").read_text(encoding="utf-8").splitlines()
        assert isinstance(facts, dict) and json.loads(log[-1])["steps"] == facts["steps"]
        assert BY_NAME[name].training["steps"].startswith(_n(facts["steps"]) + " environment steps")
    stage1_log = (ROOT / "docs/runs/ppo-net-2026-12-04/log.jsonl").read_text(encoding="utf-8").splitlines()
    stage1_seconds = sum(json.loads(line)["seconds"] for line in stage1_log)
    assert BY_NAME["ppo-stage1"].training["hours"] == f"{stage1_seconds / 3600:.2f} ({stage1_seconds:.0f} s)"
    pretrained = json.loads((ROOT / "docs/runs/jax-az-warm-2026-12-05/pretrain.json").read_text(encoding="utf-8"))
    w0 = BY_NAME["az-warm-0"].training
    assert _n(pretrained["teacher_positions"]) in w0["data"] and _n(pretrained["trained_on"]) in w0["data"]
    assert w0["steps"].startswith(_n(pretrained["steps"]) + " steps")
    for name in ("az-scratch", "az-warm-815", "az-warm-275"):
        meta = _meta(ROOT / BY_NAME[name].weights)
        totals, t = meta["totals"], BY_NAME[name].training
        assert isinstance(totals, dict)
        assert _n(totals["positions"]) in t["data"] and _n(totals["games"]) in t["data"]
        sgd = f"{meta['iteration']:,} iterations: {_n(totals['samples'] / 256)} SGD steps of 256"
        assert t["steps"].startswith(sgd), (name, sgd)
        assert _n(totals["samples"]) in t["steps"]
        hours = totals["seconds"] / 3600
        assert f"{hours:.2f}" in t["hours"], (name, hours)
