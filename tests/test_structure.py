"""The shape of the package (issue 15): a thin facade, rooms, small modules, no cycles.

    $ .venv/bin/pytest tests/test_structure.py -q

- `Memory.__mro__` holds at most 2 classes defined in `palimpsest` (no mixin tower);
- at most 4 private (`_*.py`) modules directly in `palimpsest/`;
- no module in `palimpsest/` over 600 lines;
- no import cycle among `palimpsest` modules: the graph is built with `ast` from every
  import (module level, inside functions and in `if TYPE_CHECKING:` blocks; relative
  imports resolved; `importlib.import_module("palimpsest…")` with a literal name
  counted), and importing `a.b.c` from outside package `a.b` runs `a.b`'s `__init__`
  too, so it is an edge to that package as well;
- nothing outside `palimpsest.graph` imports its private modules (`graph._*`): the rest
  of the package reaches a store through the seam, `palimpsest.storage` (issue 27);
- no class exists to be mixed in, `graph/` included: a project class may inherit from
  a project class only where inheritance is the point (exceptions, pydantic models,
  protocols, typed dicts).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

import palimpsest
from palimpsest import Memory

ROOT = Path(palimpsest.__file__).resolve().parent
MAX_LINES = 600
MAX_PRIVATE_TOP = 4


def _modules() -> dict[str, Path]:
    """Module name -> file, for every module of the package."""
    out: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST, *, typing: bool) -> Iterator[ast.AST]:
    """Every node; without `typing`, not the bodies of `if TYPE_CHECKING:` (their `else`
    runs)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if not typing and isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _known(name: str) -> str | None:
    """The longest prefix of a dotted name that is a module of the package."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def _targets(module: str, node: ast.AST) -> list[str]:
    is_package = MODULES[module].name == "__init__.py"
    if isinstance(node, ast.Import):
        return [t for a in node.names if (t := _known(a.name))]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            stem = ".".join([*base, node.module] if node.module else base)
        else:
            stem = node.module or ""
        out = []
        for a in node.names:
            target = _known(f"{stem}.{a.name}") if f"{stem}.{a.name}" in MODULES else _known(stem)
            if target:
                out.append(target)
        return out
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
        == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
        and node.args[0].value.startswith("palimpsest")
    ):
        return [t for t in [_known(node.args[0].value)] if t]
    return []


def import_graph(*, typing: bool = True) -> dict[str, set[str]]:
    """Module -> the modules it imports (`typing`: those under TYPE_CHECKING too)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own_package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in _nodes(tree, typing=typing):
            for target in _targets(module, node):
                if target == module:
                    continue
                graph[module].add(target)
                # importing a.b.c runs a.b's __init__ first, unless we are inside a.b
                parent = target.rpartition(".")[0]
                while parent and parent != "palimpsest":
                    inside = own_package == parent or own_package.startswith(parent + ".")
                    if not inside and parent != module:
                        graph[module].add(parent)
                    parent = parent.rpartition(".")[0]
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_memory_mro_holds_at_most_two_project_classes() -> None:
    ours = [c for c in Memory.__mro__ if c.__module__.startswith("palimpsest")]
    assert len(ours) <= 2, [c.__name__ for c in ours]


def test_few_private_modules_at_the_package_top() -> None:
    private = sorted(p.name for p in ROOT.glob("_*.py") if p.name != "__init__.py")
    assert len(private) <= MAX_PRIVATE_TOP, private


def test_no_module_over_600_lines() -> None:
    long = {
        name: n
        for name, path in MODULES.items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_only_the_graph_room_imports_its_private_modules() -> None:
    private = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        if not module.startswith("palimpsest.graph")
        for target in targets
        if target.startswith("palimpsest.graph._")
    )
    assert not private, private


def test_the_cycle_finder_finds_cycles() -> None:
    """The checks above could pass by finding nothing: show they see what they look for."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = import_graph()
    assert "palimpsest.errors" in graph["palimpsest"]  # `from .errors import ...`
    assert "palimpsest.memory" in graph["palimpsest.api.app"]  # inside a function
    assert "palimpsest.memory" not in import_graph(typing=False)["palimpsest.api.security"]
    assert "palimpsest.memory" in graph["palimpsest.api.security"]  # TYPE_CHECKING only


def _project_classes() -> Iterator[type]:
    for info in pkgutil.walk_packages(palimpsest.__path__, "palimpsest."):
        if info.name.endswith(".__main__"):
            continue  # running it is its whole point
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == info.name:
                yield cls


def _inheritance_is_the_point(base: type) -> bool:
    return (
        issubclass(base, BaseException)
        or issubclass(base, BaseModel)
        or Protocol in getattr(base, "__mro__", ())
        or getattr(base, "_is_protocol", False)
        or hasattr(base, "__total__")  # a TypedDict
    )


def test_no_class_exists_only_to_be_mixed_in() -> None:
    mixed = sorted(
        f"{cls.__module__}.{cls.__name__}({base.__name__})"
        for cls in set(_project_classes())
        for base in cls.__mro__[1:]
        if base.__module__.startswith("palimpsest") and not _inheritance_is_the_point(base)
    )
    assert not mixed, mixed
