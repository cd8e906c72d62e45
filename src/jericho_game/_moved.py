"""Import paths that moved when the package was arranged by concern (CHANGELOG.md, "Changed").

``jericho_game.players`` became :mod:`jericho_game.ai`; the arena, the analysis, the training and
the puzzle search moved into it; the programs (terminal game, engine protocol) into
:mod:`jericho_game.cli`.  Code written against the old paths keeps working: importing an old name
gives the very module object of the new one (one module, one set of globals), loaded only when
asked for, so ``import jericho_game`` stays as light as before.  New code uses the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence

#: Old package or module prefix -> new one.  A prefix covers its submodules
#: (``jericho_game.players.mcts`` -> ``jericho_game.ai.mcts``).
MOVED: dict[str, str] = {
    "jericho_game.players": "jericho_game.ai",
    "jericho_game.analysis": "jericho_game.ai.analysis",
    "jericho_game.arena": "jericho_game.ai.arena",
    "jericho_game.selfplay": "jericho_game.ai.selfplay",
    "jericho_game.puzzles": "jericho_game.ai.puzzles",
    "jericho_game.protocol": "jericho_game.cli.protocol",
    "jericho_game.protocol_client": "jericho_game.cli.protocol_client",
    "jericho_game.terminal": "jericho_game.cli.terminal",
}


def new_name(fullname: str) -> str | None:
    """The current name of a moved module, or ``None`` if ``fullname`` did not move."""
    for old, new in MOVED.items():
        if fullname == old or fullname.startswith(old + "."):
            return new + fullname[len(old) :]
    return None


class _Alias(importlib.abc.Loader):
    """Loads an old name as the new module itself (no second copy of its code)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self.target)
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run (the module ran under its new name); the import system has just
        stamped the old name's spec on it, so it gets its own back."""
        module.__spec__ = self._own_spec


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of moved modules (first on ``sys.meta_path``, so that a path finder
    never loads a moved file a second time under its old name)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())
