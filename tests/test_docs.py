"""The README is a front door (issue 30): short, the two commands first, no lab notebook; and every
relative link in the README and docs/ leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)|src=\"([^\"]+)\"")


def test_the_readme_is_at_most_150_lines_and_starts_with_the_two_commands() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines: figures and history go to docs/benchmarks.md"
    assert lines[0] == "```sh"
    assert lines[1].startswith("python3 tasks.py run ") and lines[2].startswith("python3 tasks.py test ")
    assert lines[3] == "```"


def test_the_readme_holds_no_dated_runs() -> None:
    """Dated measurements and their history live in docs/benchmarks.md and CHANGELOG.md."""
    dates = re.findall(r"\b20\d\d-\d\d-\d\d\b", README.read_text(encoding="utf-8"))
    assert dates == [], f"dated runs in README.md: {dates}"


def test_every_relative_link_in_the_readme_and_docs_exists() -> None:
    missing = []
    for doc in [README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for match in LINK.finditer(doc.read_text(encoding="utf-8")):
            target = match.group(1) or match.group(2)
            if re.match(r"^[a-z]+:", target) or target.startswith(("/", "../shared")):
                continue  # a web address, a page of the web app, or the rule book beside the checkout
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert missing == []


def test_the_changelog_keeps_a_changelog() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "keepachangelog.com" in text and re.search(r"^## \[", text, re.M), "Keep a Changelog format"
