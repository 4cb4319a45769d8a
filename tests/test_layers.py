"""Imports point one way, down the flow: io -> history -> knobs -> stagewise -> counting -> policies -> briefing ->
replay -> analysis -> explore -> display -> plots -> the faces (cli, ui) -> the entry points (app, __main__). A face
is never imported by the engine; the replay never imports an analysis; the faces never import each other (what
both need belongs below them). Every import counts, including those inside functions (a lazy import is still a
dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "workbench"

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
    """Every ``workbench.*`` module each module of the package imports (top level or inside functions)."""
    submodules = {p.stem for p in PACKAGE.iterdir()} | {p.name for p in PACKAGE.iterdir() if p.is_dir()}
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == "workbench":  # from workbench import plots -> the submodule
                    targets |= {f"workbench.{a.name}" for a in node.names if a.name in submodules}
                elif node.module.startswith("workbench."):
                    targets.add(node.module)
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name.startswith("workbench.")}
        graph[name] = targets
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
