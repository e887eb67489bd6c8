"""The import graph of src/itmbench, read statically: no cycles, and no shared code importing a paper.

Every module is parsed with `ast`; every `import` and `from ... import` that names an itmbench
module is an edge: relative ones, ones inside functions and under `if TYPE_CHECKING:` included
(the dependency is there, even where Python would not run into the cycle). `from pkg import name`
is an edge to the submodule `pkg.name` when that module exists, else to `pkg` itself (its
`__init__`). Importing `a.b.c` also runs the `__init__`s of `a` and `a.b`: those are edges too,
except to the importer's own packages, whose `__init__`s have begun before it runs (train's
`__init__` imports its submodules, which import `itmbench.train.config`: no cycle).
Imports by name at run time are the registry's alone: only `itmbench.papers.registry` calls
`importlib.import_module` on a paper's module (its `package_part`, which `Paper.part` and
`BenchmarkEntry.part` use), and a shared module's `package_part(<package>, "<part>")` call is
followed as edges to that part of every paper package that has it, so a cycle through the
registry's dispatch (a shared module loads a paper's module that imports the shared module)
is seen as any other.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "itmbench"

# The paper packages under itmbench.papers: shared code (anything outside itmbench.papers and
# the command lines itmbench.cli*) must not import them.
PAPERS = tuple(sorted(p.parent.name for p in (SRC / ROOT / "papers").glob("*/__init__.py")))

# Cycles being removed right now on other branches: each entry a set of modules that import
# each other; edges between the modules of one entry are ignored when looking for cycles.
# Delete an entry when its cycle is gone (test_known_cycles_are_still_there says when), and the
# whole allowlist when it is empty.
KNOWN_CYCLES: tuple[frozenset[str], ...] = ()

# Shared modules (outside itmbench.papers and itmbench.cli*) that import a paper package today,
# and the paper modules they import: work for later. Delete an entry when its imports are gone
# (test_shared_code_imports_no_paper says when).
KNOWN_PAPER_IMPORTS: dict[str, frozenset[str]] = {
    # the COCO galleries are ECCV's coco_test_ids.npy (its reader)
    "itmbench.sources.coco_benchmarks": frozenset({"itmbench.papers.eccv.released"}),
}


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, read once per test session (the graph, the by-name imports and the dispatch)."""
    return ast.parse(path.read_text(), filename=str(path))


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(src: Path = SRC) -> dict[str, Path]:
    """Every module of itmbench by dotted name (a package by its own name, for its __init__)."""
    return {module_name(path, src): path for path in sorted((src / ROOT).rglob("*.py"))}


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The itmbench modules that module `name` (at `path`) names in its import statements."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package, up level - 1 packages
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != ROOT:
                continue
            for alias in node.names:
                if f"{base}.{alias.name}" in known:  # a submodule
                    out.add(f"{base}.{alias.name}")
                elif base in known:  # a name defined in a module, or in a package's __init__
                    out.add(base)
                else:
                    raise AssertionError(f"{name}: `from {base} import {alias.name}` names no itmbench module")
    out.discard(name)
    return out


@functools.cache
def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Module -> the itmbench modules its import statements name (one reading per test session: do not modify)."""
    found = modules(src)
    known = set(found)
    return {name: imported(name, path, known) for name, path in found.items()}


def _literal_prefix(node: ast.expr) -> str | None:
    """The text a string or f-string argument starts with (up to its first placeholder), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        head = node.values[0] if node.values else None
        return head.value if isinstance(head, ast.Constant) and isinstance(head.value, str) else ""
    return None


def _called(node: ast.Call) -> str:
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def imports_by_name(path: Path) -> list[str]:
    """The literal starts of the module names a module imports at run time (`import_module`, `__import__`)."""
    return [
        prefix
        for node in ast.walk(parsed(path))
        if isinstance(node, ast.Call) and _called(node) in ("import_module", "__import__") and node.args
        if (prefix := _literal_prefix(node.args[0])) is not None
    ]


def dispatched(path: Path, known: set[str]) -> set[str]:
    """The paper modules a module reaches through the registry: each `package_part(<package>, "<part>")` call
    with a literal part, an edge to that part of every paper package that has one."""
    out: set[str] = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Call) and _called(node) == "package_part" and len(node.args) == 2:
            part = node.args[1]
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                out |= {m for m in known if m.split(".")[:2] == [ROOT, "papers"] and m.split(".")[3:] == [part.value]}
    return out


def with_dispatch(graph: dict[str, set[str]], src: Path = SRC) -> dict[str, set[str]]:
    """The graph plus each shared module's edges through the registry's dispatch (`dispatched`)."""
    found = modules(src)
    known = set(found)
    return {
        name: targets | (dispatched(found[name], known) if is_shared(name) else set())
        for name, targets in graph.items()
    }


def with_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph plus the edges to the packages whose __init__ an import runs, but the importer's own."""

    def ancestors(name: str) -> set[str]:
        parts = name.split(".")
        return {".".join(parts[:k]) for k in range(1, len(parts))}

    return {
        name: targets | {a for t in targets for a in ancestors(t) if a in graph} - ancestors(name) - {name}
        for name, targets in graph.items()
    }


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(out)


def shortest_cycle(graph: dict[str, set[str]], start: str, inside: set[str]) -> list[str]:
    """The shortest cycle from `start` back to it through the modules `inside` (start first and last)."""
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & inside):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if nxt not in parents:
                    parents[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no cycle through {start}")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every module of a cycle, each with the shortest cycle through it (each cycle named once)."""
    out: list[list[str]] = []
    for component in strongly_connected(graph):
        seen: set[tuple[str, ...]] = set()
        for start in component:
            cycle = shortest_cycle(graph, start, set(component))
            key = min(tuple(cycle[k:-1] + cycle[:k]) for k in range(len(cycle) - 1))  # the same cycle from any module
            if key not in seen:
                seen.add(key)
                out.append(cycle)
    return out


def without_known_cycles(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return {
        name: {target for target in targets if not any({name, target} <= known for known in KNOWN_CYCLES)}
        for name, targets in graph.items()
    }


def is_shared(name: str) -> bool:
    """Outside itmbench.papers and the command lines (itmbench.cli, itmbench.cli_coco)."""
    papers = f"{ROOT}.papers"
    return not (name == papers or name.startswith(f"{papers}.") or name.startswith(f"{ROOT}.cli"))


def paper_imports(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Shared modules -> the modules of paper packages (itmbench.papers.<paper>...) they import."""
    papers = tuple(f"{ROOT}.papers.{paper}" for paper in PAPERS)
    out: dict[str, set[str]] = {}
    for name, targets in graph.items():
        hits = {t for t in targets if any(t == paper or t.startswith(f"{paper}.") for paper in papers)}
        if hits and is_shared(name):
            out[name] = hits
    return out


def test_graph_is_read() -> None:
    graph = import_graph()
    assert "itmbench.world.scene" in graph["itmbench.world.render"]
    assert "itmbench.papers" in graph and "itmbench.papers.registry" in graph
    # a function's import (the registry builds its families on use)
    assert "itmbench.models.captioner" in graph["itmbench.models.registry"]
    assert "itmbench.train" not in graph["itmbench.train.loop"]  # own package: no edge
    assert "itmbench.train" in with_packages(graph)["itmbench.cli.models"]  # `from itmbench.train import ...` in cli


def test_no_import_cycles() -> None:
    found = cycles(without_known_cycles(with_packages(with_dispatch(import_graph()))))
    assert not found, "import cycles among itmbench modules:\n" + "\n".join(" -> ".join(c) for c in found)


def test_known_cycles_are_still_there() -> None:
    """An entry of KNOWN_CYCLES whose modules no longer import each other is to be deleted."""
    components = [set(c) for c in strongly_connected(with_packages(with_dispatch(import_graph())))]
    gone = [sorted(known) for known in KNOWN_CYCLES if not any(known <= c for c in components)]
    assert not gone, f"these cycles are gone: delete them from KNOWN_CYCLES: {gone}"


def test_shared_code_imports_no_paper() -> None:
    found = paper_imports(import_graph())
    known = KNOWN_PAPER_IMPORTS
    new = {name: sorted(ts - known.get(name, frozenset())) for name, ts in found.items() if ts - known.get(name, set())}
    assert not new, f"shared modules importing a paper's modules (move what they share out of the paper): {new}"
    gone = {name: sorted(ts - found.get(name, set())) for name, ts in known.items() if ts - found.get(name, set())}
    assert not gone, f"these imports are gone: delete them from KNOWN_PAPER_IMPORTS: {gone}"


def test_shared_code_imports_nothing_of_papers() -> None:
    """Nor the papers' other modules (claims, tables, figures, ...): the papers import the engine. The registry is
    the exception: it is what shared code iterates over, and it imports no paper (its dispatch is `package_part`)."""
    graph = import_graph()
    papers = paper_imports(graph)
    registry = f"{ROOT}.papers.registry"
    assert not {t for t in graph[registry] if t.startswith(f"{ROOT}.papers.")}, graph[registry]
    found = {
        name: sorted(
            t for t in targets if t.startswith(f"{ROOT}.papers.") and t not in papers.get(name, ()) and t != registry
        )
        for name, targets in graph.items()
        if is_shared(name)
    }
    found = {name: targets for name, targets in found.items() if targets}
    assert not found, f"shared modules importing itmbench.papers' modules: {found}"


def test_only_the_registry_imports_a_paper_by_name() -> None:
    found = {
        name: prefixes
        for name, path in modules().items()
        if (prefixes := [p for p in imports_by_name(path) if p.startswith(f"{ROOT}.papers")])
        and name != f"{ROOT}.papers.registry"
    }
    assert not found, f"modules importing a paper by name (use itmbench.papers.registry.package_part): {found}"
    assert imports_by_name(SRC / ROOT / "papers" / "registry.py") == [f"{ROOT}.papers."]


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """A made-up package: a cycle through a relative import and a package's __init__, an upward import."""
    files = {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def f():\n    from .sub.c import g\n",
        "sub/__init__.py": "from itmbench.sub import c\n",
        "sub/c.py": "import itmbench.a\n\ng = 1\n",
        "d.py": "from itmbench.papers import bison\nfrom itmbench import papers\n",
        "papers/__init__.py": "",
        "papers/bison/__init__.py": "",
        "papers/bison/benchmark.py": "from ...d import *\n",
        "papers/registry.py": "from itmbench.papers.bison.benchmark import x\n",
        "e.py": "import importlib\n\ndef f(name):\n    package_part(name, 'extra')\n"
        "    importlib.import_module(f'itmbench.papers.{name}.extra')\n",
        "papers/bison/extra.py": "from itmbench import e\n",
    }
    for rel, text in files.items():
        (tmp_path / ROOT / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / ROOT / rel).write_text(text)
    graph = import_graph(tmp_path)
    assert graph["itmbench.b"] == {"itmbench.sub.c"}
    assert graph["itmbench.d"] == {"itmbench.papers.bison", "itmbench.papers"}
    assert graph["itmbench.papers.bison.benchmark"] == {"itmbench.d"}
    assert cycles(with_packages(graph)) == [
        ["itmbench.a", "itmbench.b", "itmbench.sub.c", "itmbench.a"],
        ["itmbench.sub", "itmbench.sub.c", "itmbench.a", "itmbench.b", "itmbench.sub"],
    ]
    assert cycles(graph) == [["itmbench.a", "itmbench.b", "itmbench.sub.c", "itmbench.a"]]
    assert paper_imports(graph) == {"itmbench.d": {"itmbench.papers.bison"}}
    # a call through the registry's dispatch is an edge to that part of every paper package (a cycle here)
    assert with_dispatch(graph, tmp_path)["itmbench.e"] == {"itmbench.papers.bison.extra"}
    assert ["itmbench.e", "itmbench.papers.bison.extra", "itmbench.e"] in cycles(with_dispatch(graph, tmp_path))
    assert imports_by_name(tmp_path / ROOT / "e.py") == ["itmbench.papers."]
