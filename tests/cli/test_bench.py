"""The benchmark command runs and prints its figures (speed itself is never asserted)."""

from __future__ import annotations

import json
from pathlib import Path

from jericho_game.cli import main


def test_bench_prints_engine_figures(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "bench.json"
    assert main(["bench", "--seconds", "0.05", "--engine-only", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "machine:" in text and "games/s" in text
    data = json.loads(out.read_text())
    labels = [f["label"] for f in data["figures"]]
    assert any("public API" in x for x in labels) and any("fast path" in x for x in labels)
    assert any(x.startswith("web public state") for x in labels)  # the web extra is installed here
    assert all(f["value"] > 0 for f in data["figures"])


def test_mid_game_position_is_fixed_and_still_going() -> None:
    from jericho_game.ai.bench import midgame

    first, second = midgame(), midgame()
    assert first.position() == second.position()
    assert not first.is_over() and len(first.history) == 16 and first.legal_moves()


def test_bench_net_prints_the_forward_pass_by_batch_size(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from jericho_game.envs.bench import NET_BATCHES

    out = tmp_path / "bench.json"
    assert main(["bench", "--net", "--seconds", "0.05", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "machine:" in text and "positions/CPU s" in text
    figures = json.loads(out.read_text())["figures"]
    assert [f["label"] for f in figures] == [f"net forward pass (NumPy), batch {b}" for b in NET_BATCHES]
    assert all(f["unit"] == "positions/CPU s" and f["value"] > 0 for f in figures)
