"""The web app's parts stay apart (issue 23, point 5; docs/web.md, "Design"): the game-room service
decides, the commit pipeline writes, the state view renders, and none of them reaches back."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytest.importorskip("starlette")

from jericho_game.web.round import (
    commits,  # noqa: E402
    roomcache,
    rooms,
    roomstate,
)

WEB = Path(rooms.__file__).parent


def _runtime_imports(path: Path) -> set[str]:
    """Modules imported when the module runs (``if TYPE_CHECKING:`` blocks left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module or "")
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def test_the_service_keeps_only_deciding() -> None:
    """The write path and the rendering are not methods of GameService any more."""
    moved = {
        "_commit": "commits.CommitPipeline.commit",
        "_publish": "commits.CommitPipeline.publish",
        "_write": "commits.CommitPipeline.write",
        "_write_grouped": "commits.CommitPipeline.write_grouped",
        "_run_group": "commits.CommitPipeline._run_group",
        "_refusal": "commits.CommitPipeline.refusal",
        "_board": "roomstate.StateView.board",
        "_live": "roomstate.StateView.live",
        "_keep": "roomcache.RoomCache.keep",
        "_build": "roomcache.RoomCache.build",
    }
    for old, new in moved.items():
        assert not hasattr(rooms.GameService, old), f"GameService.{old} belongs in {new}"
        module, cls, name = new.split(".")
        assert hasattr(getattr({"commits": commits, "roomstate": roomstate, "roomcache": roomcache}[module], cls), name)


@pytest.mark.parametrize("name", ["commits", "roomcache", "roomstate", "gameroom"])
def test_the_parts_do_not_import_the_service_at_run_time(name: str) -> None:
    """The pipeline, the cache, the view and the shared types never import rooms.py (only for type
    hints), nor the transport: the service builds on them, not the reverse."""
    imported = _runtime_imports(WEB / f"{name}.py")
    assert "jericho_game.web.round.rooms" not in imported
    assert not any(m.startswith("jericho_game.web.server") for m in imported)
