"""The datasheet of the shipped networks (issue 35, point 6) describes the files that ship next to it."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

AI = Path(__file__).resolve().parents[2] / "src" / "jericho_game" / "ai"
DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_datasheet_names_each_shipped_weight_file_by_its_checksum() -> None:
    sheet = (AI / "WEIGHTS.md").read_text(encoding="utf-8")
    shipped = sorted(p.name for p in AI.glob("*.npz"))
    assert shipped == ["evaluator.npz", "net_weights.npz", "value.npz"]
    for name in shipped:
        digest = hashlib.sha256((AI / name).read_bytes()).hexdigest()
        section = sheet.split(f"## `{name}`", 1)
        assert len(section) == 2, f"no section for {name}"
        assert digest in section[1].split("\n## ", 1)[0], f"{name}: the datasheet's checksum is not the file's"
        for field in ("trained on", "how long", "strength", "command"):
            assert re.search(rf"^\| {field} \|", section[1], re.MULTILINE), (name, field)


def test_the_docs_link_the_datasheet() -> None:
    for doc in ("interop.md", "ai.md"):
        assert "src/jericho_game/ai/WEIGHTS.md" in (DOCS / doc).read_text(encoding="utf-8"), doc
