"""The test suite needs nothing beside the checkout (issue 56 point 3): a clone in any folder runs it
whole.  The conformance vectors are read from the copy in tests/fixtures/conformance/ (not from
``../shared/conformance/`` beside the original checkout, which a clone does not have), and no test,
example or task names a path outside the repository.  In the slow tier: CI's full run checks it."""

from __future__ import annotations

import ast
import gzip
import hashlib
import re
from pathlib import Path

import pytest

from tests import conftest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_README = ROOT / "tests" / "fixtures" / "conformance" / "README.md"

pytestmark = pytest.mark.slow

#: A path outside the checkout in a string: the shared folder beside it, or the machine's working folders.
OUTSIDE = re.compile(r"\.\./shared\b|/work/(shared|main)\b")
#: Strings that name such a path and read nothing: the docs' links to the rule book, which the link
#: check leaves alone (the rule book is not the repository's).
ALLOWED = {("tests/test_docs.py", "../shared")}
#: ``Path(__file__)`` climbed by ``.parent``s or ``.parents[N]``: it must stay inside the checkout.
CLIMB = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?((?:\.parent\b)+|\.parents\[(\d+)\])")


def outside(source: str, depth: int) -> list[str]:
    """What in a Python file's ``source`` names a path outside the checkout: a string naming one (not
    a docstring or a comment), a path joined with ``"shared"`` or ``".."``, ``ROOT.parent``, or
    ``Path(__file__)`` climbed above the root (the file lies ``depth`` folders below it)."""
    tree = ast.parse(source)
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        where = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found += [f"{where}: {m.group(0)!r}" for m in OUTSIDE.finditer(node.value)]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            parts = [n.value for n in (node.left, node.right) if isinstance(n, ast.Constant)]
            found += [f"{where}: / {p!r}" for p in parts if p in ("shared", "..")]
        elif isinstance(node, ast.Attribute) and node.attr in ("parent", "parents"):
            if isinstance(node.value, ast.Name) and node.value.id == "ROOT":
                found.append(f"{where}: ROOT.{node.attr}")
    for n, line in enumerate(source.splitlines(), 1):
        for m in CLIMB.finditer(line):
            ups = int(m.group(2)) + 1 if m.group(2) is not None else m.group(1).count(".parent")
            if ups > depth + 1:  # the root is the (depth + 1)-th parent: tests/x.py's second
                found.append(f"{n}: Path(__file__) climbs {ups} folders from {depth} below the root")
    return found


def _sources() -> list[Path]:
    files = [ROOT / "tasks.py", *sorted((ROOT / ".ci").glob("*"))]
    for folder in ("tests", "examples", "src"):
        files += sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)
    return [p for p in files if p.is_file() and p != Path(__file__).resolve()]


def test_the_conformance_vectors_are_read_from_inside_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JERICHO_CONFORMANCE", raising=False)
    path = conftest.conformance_path().resolve()
    assert path.is_relative_to(ROOT), f"{path} is outside the checkout {ROOT}"
    assert path == (ROOT / "tests" / "fixtures" / "conformance" / "random-games.jsonl.gz").resolve()
    assert len(conftest.load_conformance()) == 205


def test_the_kept_copy_is_the_one_its_readme_describes() -> None:
    """The copy's size and SHA-256, uncompressed, as its README records them (a refresh updates both)."""
    readme = FIXTURE_README.read_text(encoding="utf-8")
    data = gzip.decompress(conftest.CONFORMANCE.read_bytes())
    assert f"{len(data):,} bytes" in readme
    assert f"`{hashlib.sha256(data).hexdigest()}`" in readme


def test_no_test_example_or_task_names_a_path_outside_the_checkout() -> None:
    found = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if path.suffix != ".py":  # a shell script (.ci/run): its lines less comments
            lines = enumerate(text.splitlines(), 1)
            found += [f"{rel}:{n}: {line}" for n, line in lines if OUTSIDE.search(line.split("#")[0])]
            continue
        for what in outside(text, len(path.relative_to(ROOT).parts) - 1):
            if (rel, what.split(": ", 1)[1].strip("'")) not in ALLOWED:
                found.append(f"{rel}:{what}")
    assert found == []


def test_the_check_would_see_a_path_outside_the_checkout() -> None:
    """The check above finds what it is for (else it could never fail)."""
    assert outside('"""Read ../shared/ (a docstring)."""  # and ../shared in a comment\n', 1) == []
    assert sorted(outside('p = ROOT.parent / "shared" / "conformance"\n', 1)) == ["1: / 'shared'", "1: ROOT.parent"]
    assert outside("open('../shared/conformance/random-games.jsonl')\n", 1) == ["1: '../shared'"]
    assert outside('Path("/work/shared/RULES.md")\n', 1) == ["1: '/work/shared'"]
    assert outside("ROOT = Path(__file__).resolve().parents[1]\n", 1) == []
    assert outside("UP = Path(__file__).resolve().parents[2]\n", 1) == [
        "1: Path(__file__) climbs 3 folders from 1 below the root"
    ]
    assert outside("UP = Path(__file__).parent.parent.parent\n", 1) != []
