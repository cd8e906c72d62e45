"""The rules engine depends on nothing: no UI, web, AI or third-party code."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import jericho_game

ENGINE_MODULES = ["board", "core", "errors", "game", "kernel", "moves", "pieces", "position", "record", "strength"]
PACKAGE = Path(jericho_game.__file__).parent


def test_engine_modules_import_only_the_standard_library_and_each_other() -> None:
    allowed_prefixes = tuple(f"jericho_game.{m}" for m in ENGINE_MODULES) + ("jericho_game",)
    stdlib = sys.stdlib_module_names
    for name in ENGINE_MODULES:
        tree = ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                targets = [node.module or ""]
            else:
                continue
            for target in targets:
                top = target.split(".")[0]
                if top == "jericho_game":
                    assert target in allowed_prefixes, f"{name}.py imports {target}"
                else:
                    assert top in stdlib or top == "__future__", f"{name}.py imports {target}"


def test_importing_the_engine_loads_no_other_layer() -> None:
    code = (
        "import sys, jericho_game, jericho_game.core, jericho_game.record\n"
        "bad = [m for m in sys.modules if m.startswith(('jericho_game.ai', 'jericho_game.web',"
        " 'jericho_game.envs', 'numpy', 'starlette', 'sqlalchemy'))]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_packaged_rules_page_matches_docs() -> None:
    """The web app ships a copy of docs/rules.md (installed packages have no docs/): keep them equal."""
    docs = PACKAGE.parents[1] / "docs" / "rules.md"
    shipped = PACKAGE / "web" / "site" / "static" / "rules.md"
    assert shipped.read_text(encoding="utf-8") == docs.read_text(encoding="utf-8"), (
        "copy docs/rules.md to src/jericho_game/web/static/rules.md"
    )


def _imported_modules(tree: ast.AST, package: str) -> set[str]:
    """Every module a parsed module imports, anywhere (functions and ``TYPE_CHECKING`` blocks too)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # a relative import: resolved against the importing module's package
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # "from jericho_game.web import server"
    return found


def test_no_web_module_imports_the_transport() -> None:
    """The transport (web/server.py) is the entry point: it imports the parts, never the reverse.
    Conn, Limits and write_game_record once lived there and were imported back by the lobby and the
    review (an import circle); they are modules of their own now (web/common/conn.py, limits.py, records.py)."""
    web = PACKAGE / "web"
    offenders = []
    for path in sorted(web.glob("*.py")):
        if path.name == "server.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if "jericho_game.web.server" in _imported_modules(tree, "jericho_game.web"):
            offenders.append(path.name)
    assert offenders == [], f"these web modules import jericho_game.web.server: {offenders}"


def test_the_transport_check_sees_every_form_of_import() -> None:
    """The check above must not miss a lazy, relative or ``from package import module`` import."""
    for src in (
        "from jericho_game.web.server import Conn",
        "def f():\n    from jericho_game.web.server import write_game_record",
        "from jericho_game.web import server",
        "import jericho_game.web.server",
        "from .server import Limits",
        "from . import server",
        "if TYPE_CHECKING:\n    from jericho_game.web.server import Limits",
    ):
        assert "jericho_game.web.server" in _imported_modules(ast.parse(src), "jericho_game.web"), src
    assert "jericho_game.web.server" not in _imported_modules(
        ast.parse("from jericho_game.web import servers"), "jericho_game.web"
    )
