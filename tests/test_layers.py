"""Imports point one way, down the flow: io -> history -> knobs -> stagewise -> counting -> policies -> briefing ->
replay -> analysis -> explore -> display -> plots -> the faces (cli, ui) -> the entry points (app, __main__). A face
is never imported by the engine; the replay never imports an analysis; the faces never import each other (what
both need belongs below them). Every import counts, including those inside functions (a lazy import is still a
dependency).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "workbench"

# Lowest first. A module may import from its own layer or any layer below it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("io",),  # atomic writes and append-only logs: every layer that writes uses them
    ("history",),
    ("knobs", "presets"),  # pure values with their YAML; the counters read them
    ("stagewise",),
    ("counting",),
    ("policies",),
    ("briefing",),
    ("replay",),
    ("analysis",),
    ("explore",),
    ("display",),  # words and untrusted text for every face; no streamlit
    ("plots",),  # figures from values, drawn by the faces
    ("cli", "ui"),  # the faces: neither imports the other
    ("app", "__main__"),  # the entry points: the Streamlit script, ``python -m workbench``
)
RANK = {top: rank for rank, names in enumerate(LAYERS) for top in names}
FACES = ("display", "plots", "cli", "ui", "app", "__main__")
# Folders of one layer that must not import each other (elsewhere a layer's folders may).
APART = frozenset({"cli", "ui"})


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Every ``workbench.*`` module each module of the package imports (top level, inside functions, or for type
    checking only). ``from workbench.x import y`` names the module ``workbench.x.y`` when there is one, else the
    package ``workbench.x`` (its ``__init__``). A fresh copy each call (tests add edges to it); the package is
    parsed once per process."""
    return {name: set(targets) for name, targets in _parsed_graph().items()}


@functools.cache
def _parsed_graph() -> dict[str, frozenset[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(path) for path in paths}
    graph: dict[str, frozenset[str]] = {}
    for path in paths:
        name = _module_name(path)
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == "workbench" or node.module.startswith("workbench."):
                    for a in node.names:
                        sub = f"{node.module}.{a.name}"
                        targets.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name.startswith("workbench.")}
        targets.discard("workbench")  # the package root only re-exports, lazily
        targets.discard(name)
        graph[name] = frozenset(targets)
    return graph


def layer_of(module: str) -> str | None:
    """The layer key of ``workbench.x.y`` (``x``), or None for the package root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports that point up the flow, as readable lines."""
    out = []
    for source, targets in graph.items():
        src = layer_of(source)
        if src is None:  # the package root only re-exports, lazily
            continue
        if src not in RANK:
            out.append(f"{source}: not in any layer; add its folder to LAYERS")
            continue
        for target in sorted(targets):
            dst = layer_of(target)
            if dst is None:
                continue
            if dst not in RANK:
                out.append(f"{source} imports {target}: not in any layer")
            elif RANK[dst] > RANK[src]:
                out.append(f"{source} ({src}) imports {target} ({dst}), which is above it")
            elif src != dst and {src, dst} <= APART:
                out.append(f"{source} ({src}) imports {target} ({dst}): faces do not import faces")
    return out


def test_every_import_points_down_the_flow():
    """No module imports from a layer above its own."""
    assert violations(import_graph()) == []


def test_every_module_belongs_to_a_layer():
    """A new top-level module or folder must be placed in the flow before it can be imported."""
    tops = {layer_of(m) for m in import_graph()} - {None}
    assert tops <= set(RANK), sorted(tops - set(RANK))


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("workbench.replay.loop", "workbench.ui.sidebar"),
        ("workbench.replay.loop", "workbench.analysis.costs"),
        ("workbench.history.readers", "workbench.stagewise.estimate"),
        ("workbench.policies.base", "workbench.plots"),
        ("workbench.counting.tokens", "workbench.cli.common"),
        ("workbench.plots.sweep", "workbench.ui.sweep_shared"),
        ("workbench.ui.config_tab", "workbench.cli.common"),
        ("workbench.cli.tune", "workbench.ui.sweep_shared"),
        ("workbench.io.files", "workbench.history.model"),
    ],
    ids=["replay->face", "replay->analysis", "history->stagewise", "policy->plots", "counting->cli", "plots->ui",
         "ui->cli", "cli->ui", "io->history"],
)
def test_an_upward_import_is_caught(source, target):
    """The checker itself: an engine module importing a face (or the replay an analysis) is reported."""
    graph = import_graph()
    graph[source] = graph.get(source, set()) | {target}
    found = violations(graph)
    assert len(found) == 1 and source in found[0] and target in found[0]


def test_a_downward_import_between_faces_is_allowed():
    """The checker does not over-reach: the app draws plots, the CLI reads the engine and the display words."""
    graph = import_graph()
    graph["workbench.ui.charts"] = graph["workbench.ui.charts"] | {"workbench.plots.style"}
    graph["workbench.cli.sweep"] = graph["workbench.cli.sweep"] | {"workbench.display.labels"}
    assert violations(graph) == []


def test_faces_are_imported_by_no_engine_module():
    """Spelled out for the most important rule: nothing below the faces imports one."""
    for source, targets in import_graph().items():
        src = layer_of(source)
        if src is None or src in FACES:
            continue
        assert not {layer_of(t) for t in targets} & set(FACES), source


# -- no import cycles ------------------------------------------------------------------------------------------------

KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()  # none allowed; a pair listed here would be let through


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import one another, directly or round a loop (strongly connected components of
    two or more, Tarjan's algorithm, iterative), as one cycle through the group: ``[a, b, c, a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return [_loop_through(graph, set(group)) for group in sorted(groups)]


def _loop_through(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """One import path from the group's first module back to itself, inside the group (breadth first)."""
    start = min(group)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph.get(node, set()) & group):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if child not in previous:
                    previous[child] = node
                    nxt.append(child)
        frontier = nxt
    return sorted(group)


def test_no_module_imports_itself_round_a_loop():
    """No import cycles between modules, lazy and type-checking imports included: a cycle means two modules that
    cannot be read, tested or moved apart, and whose import order decides whether the package loads."""
    found = [c for c in cycles(import_graph()) if frozenset(c) not in KNOWN_CYCLES]
    assert found == [], "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_a_cycle_is_caught_and_named():
    """The checker itself: a lazy import back up a chain is reported as the loop it closes."""
    graph = import_graph()
    graph["workbench.history.errors"] = graph["workbench.history.errors"] | {"workbench.history.readers.parse"}
    found = [c for c in cycles(graph) if frozenset(c) not in KNOWN_CYCLES]
    assert len(found) == 1
    loop = found[0]
    assert loop[0] == loop[-1] and "workbench.history.errors" in loop and "workbench.history.readers.parse" in loop
    assert all(b in graph[a] for a, b in zip(loop, loop[1:], strict=False))
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


# -- mypy's skip list (pyproject.toml) names only packages workbench does not import ----------------------------

# litellm is imported (lazily) and skipped on purpose: its own override block in pyproject.toml says why.
SKIPPED_ON_PURPOSE = frozenset({"litellm"})


def _external_imports() -> set[str]:
    """The top-level name of every package outside workbench that a module of it imports, anywhere in the module."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
    names.discard("workbench")
    return names


def _mypy_skipped() -> list[str]:
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return [pattern for block in config["tool"]["mypy"].get("overrides", [])
            if block.get("follow_imports") == "skip" for pattern in block["module"]]


def skipped_but_imported(imported: set[str], skipped: list[str]) -> list[str]:
    """Patterns of mypy's skip list that match a package workbench imports (``foo.*`` matches ``foo`` too)."""
    return sorted(p for p in skipped if p.removesuffix(".*") in imported - SKIPPED_ON_PURPOSE)


def test_mypy_skips_no_package_that_workbench_imports():
    # a skipped package's names are Any to mypy: a package workbench calls must stay followed, or typos in those
    # calls stop being errors
    assert skipped_but_imported(_external_imports(), _mypy_skipped()) == []


def test_a_skipped_package_that_workbench_imports_is_caught():
    skipped = _mypy_skipped()
    assert "IPython.*" in skipped and "streamlit.*" not in skipped
    assert skipped_but_imported({"IPython", "streamlit", "litellm"}, skipped) == ["IPython.*"]
