"""The house's shape (docs/architecture.md): layers that import downwards only, and no import circle.

rules <- encodings <- ai <- envs <- web <- cli; inside web: storage <- common, i18n <- the features
(round <- lobby, accounts <- learn, social) <- airunner <- site <- transport, tools.  Every import
counts: at the top of a module, inside a function, under ``TYPE_CHECKING``, relative or
``from package import module``.  The rules engine also depends on nothing but the standard library.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import jericho_game

PACKAGE = Path(jericho_game.__file__).parent
SRC = PACKAGE.parent

ENGINE_MODULES = ["board", "core", "errors", "game", "kernel", "moves", "pieces", "position", "record", "strength"]

#: The layers, lowest first, each a list of module prefixes (the longest matching prefix wins).
#: A module may import its own layer or a lower one.
LAYERS: list[tuple[str, list[str]]] = [
    (
        "rules",
        ["jericho_game", "jericho_game._moved", "jericho_game._kernel"]
        + [f"jericho_game.{m}" for m in ENGINE_MODULES + ["extras"]],
    ),
    # the action and observation encodings: numbers for a position, used by learned players and envs
    ("encodings", ["jericho_game.envs.encoding", "jericho_game.envs.planar"]),
    ("ai", ["jericho_game.ai"]),
    ("envs", ["jericho_game.envs"]),
    ("web storage", ["jericho_game.web.storage"]),
    ("web common", ["jericho_game.web.common", "jericho_game.web.i18n"]),
    # the features, lowest first: a seek becomes a game and a rating follows one (round); puzzle
    # ratings and chat mutes name accounts
    ("web round", ["jericho_game.web.round"]),
    ("web lobby and accounts", ["jericho_game.web.lobby", "jericho_game.web.accounts"]),
    ("web learning and social", ["jericho_game.web.learn", "jericho_game.web.social"]),
    # challenges and pairings become games (round), blocks reach the chat and mail (social)
    ("web people and tournaments", ["jericho_game.web.people", "jericho_game.web.tournaments"]),
    ("web AI runner", ["jericho_game.web.airunner"]),
    ("web site", ["jericho_game.web.site"]),
    ("web transport", ["jericho_game.web", "jericho_game.web.tools"]),
    ("programs", ["jericho_game.cli", "jericho_game.__main__"]),
]


def module_files(src: Path = SRC) -> dict[str, Path]:
    """Every module under ``src`` by dotted name (a package by its ``__init__.py``)."""
    found: dict[str, Path] = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    for c_source in src.rglob("*.c"):  # a compiled extension is a module too (jericho_game._kernel)
        found.setdefault(".".join(c_source.relative_to(src).with_suffix("").parts), c_source)
    return found


def imports_of(tree: ast.AST, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The project modules a parsed module imports, anywhere in it (functions and ``TYPE_CHECKING``
    blocks too).  ``from a.b import c`` is module ``a.b.c`` when that is a module, else ``a.b``."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in known else base)
    return {m for m in found if m in known and m != name}


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Module -> the project modules it imports."""
    files = module_files(src)
    known = set(files)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        if path.suffix != ".py":
            graph[name] = set()
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[name] = imports_of(tree, name, path.name == "__init__.py", known)
    return graph


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of a module's layer."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    if best is None:
        raise AssertionError(f"{module} belongs to no layer: add it to LAYERS in tests/test_layering.py")
    return best[0]


def wrong_way_imports(graph: dict[str, set[str]], files: dict[str, Path], root: Path = SRC.parent) -> list[str]:
    """Each import of a higher layer, naming both files (relative to ``root``)."""
    found = []
    for module in sorted(graph):
        for target in sorted(graph[module]):
            if layer_of(target) > layer_of(module):
                found.append(
                    f"{files[module].relative_to(root)} ({LAYERS[layer_of(module)][0]}) imports "
                    f"{files[target].relative_to(root)} ({LAYERS[layer_of(target)][0]})"
                )
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_anywhere() -> None:
    graph = import_graph()
    files = module_files()
    found = circles(graph)
    described = [" <-> ".join(str(files[m].relative_to(SRC.parent)) for m in c) for c in found]
    assert described == [], "import circles:\n" + "\n".join(described)


def test_every_import_goes_down_the_layers() -> None:
    graph = import_graph()
    assert wrong_way_imports(graph, module_files()) == []


def test_every_module_has_a_layer() -> None:
    for module in module_files():
        layer_of(module)


def _graph_of(tmp_path: Path, sources: dict[str, str]) -> tuple[dict[str, set[str]], dict[str, Path]]:
    for rel, text in sources.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return import_graph(tmp_path), module_files(tmp_path)


def test_the_checks_fail_on_a_wrong_way_import_and_a_circle(tmp_path: Path) -> None:
    """The checks above must be able to fail: a made-up tree with one of each, both files named."""
    graph, files = _graph_of(
        tmp_path,
        {
            "jericho_game/__init__.py": "",
            "jericho_game/game.py": "def f():\n    from jericho_game.ai import mcts\n",
            "jericho_game/ai/__init__.py": "",
            "jericho_game/ai/mcts.py": "from jericho_game import game\nfrom . import arena\n",
            "jericho_game/ai/arena.py": "if TYPE_CHECKING:\n    from jericho_game.ai.mcts import X\n",
        },
    )
    assert circles(graph) == [["jericho_game.ai.arena", "jericho_game.ai.mcts", "jericho_game.game"]]
    wrong = wrong_way_imports(graph, files, tmp_path)
    assert wrong == ["jericho_game/game.py (rules) imports jericho_game/ai/mcts.py (ai)"]


@pytest.mark.parametrize(
    "source",
    [
        "from jericho_game.web.server import Conn",
        "def f():\n    from jericho_game.web.server import write_game_record",
        "from jericho_game.web import server",
        "import jericho_game.web.server",
        "from .server import Limits",
        "from . import server",
        "if TYPE_CHECKING:\n    from jericho_game.web.server import Limits",
    ],
)
def test_the_import_reader_sees_every_form_of_import(source: str) -> None:
    known = {"jericho_game.web", "jericho_game.web.server", "jericho_game.web.lobby"}
    found = imports_of(ast.parse(source), "jericho_game.web.lobby", False, known)
    assert "jericho_game.web.server" in found, source


def test_a_package_import_is_not_a_module_import() -> None:
    known = {"jericho_game.web", "jericho_game.web.server", "jericho_game.web.lobby"}
    found = imports_of(ast.parse("from jericho_game.web import servers"), "jericho_game.web.lobby", False, known)
    assert "jericho_game.web.server" not in found


def test_engine_modules_import_only_the_standard_library_and_each_other() -> None:
    allowed = {f"jericho_game.{m}" for m in ENGINE_MODULES} | {"jericho_game", "jericho_game._kernel"}
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
                    assert target in allowed, f"{name}.py imports {target}"
                else:
                    assert top in stdlib or top == "__future__", f"{name}.py imports {target}"


def test_importing_the_engine_loads_no_other_layer() -> None:
    code = (
        "import sys, jericho_game, jericho_game.core, jericho_game.record\n"
        "bad = [m for m in sys.modules if m.startswith(('jericho_game.ai', 'jericho_game.web', 'jericho_game.cli',"
        " 'jericho_game.envs', 'numpy', 'starlette', 'sqlalchemy'))]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_old_import_paths_give_the_new_modules() -> None:
    """Code written before the move (jericho_game.players, .arena, .protocol_client...) still runs,
    on the very same module objects, with nothing loaded twice."""
    code = (
        "import sys\n"
        "from jericho_game.players import make_player\n"
        "from jericho_game.players.mcts import MCTSPlayer\n"
        "import jericho_game.arena, jericho_game.protocol_client, jericho_game.ai.mcts as new\n"
        "import jericho_game.ai.arena\n"
        "assert MCTSPlayer is new.MCTSPlayer and make_player('random').name\n"
        "assert jericho_game.arena is jericho_game.ai.arena\n"
        "assert new.__spec__.name == 'jericho_game.ai.mcts'\n"
        "mods = list(sys.modules.values())\n"
        "copies = {id(m) for m in mods if (getattr(m, '__file__', '') or '').endswith('mcts.py')}\n"
        "assert len(copies) == 1, copies\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_every_package_says_what_it_owns() -> None:
    """Each package's ``__init__`` has a docstring (what it owns and what it may import)."""
    for init in sorted(PACKAGE.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc) > 40, f"{init.relative_to(SRC)} has no docstring saying what the package owns"


def test_packaged_rules_page_matches_docs() -> None:
    """The web app ships a copy of docs/rules.md (installed packages have no docs/): keep them equal."""
    docs = SRC.parent / "docs" / "rules.md"
    shipped = PACKAGE / "web" / "site" / "static" / "rules.md"
    assert shipped.read_text(encoding="utf-8") == docs.read_text(encoding="utf-8"), (
        "copy docs/rules.md to src/jericho_game/web/site/static/rules.md"
    )
