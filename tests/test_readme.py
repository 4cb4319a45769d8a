"""The README stays true: its commands exist and run, its numbers are the ones the repo measured (the docs and
benchmarks it cites, or a replay run here), its links resolve, and docs/knobs.md is the page the specs generate."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

from conftest import REPO

from workbench import Knobs, simulate
from workbench.history.readers import FORMATS
from workbench.knobs import knobs_markdown
from workbench.policies.trigger import trigger_knob, with_trigger

README = REPO / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _section(title: str) -> str:
    """The README's ``## title`` section, up to the next ``## `` heading."""
    text = _readme()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"scripts_{name}", REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules.setdefault(f"scripts_{name}", importlib.util.module_from_spec(spec))  # dataclasses look it up
    spec.loader.exec_module(module)
    return module


def test_docs_knobs_page_is_what_the_specs_generate():
    """docs/knobs.md is scripts/knobs_doc.py's output (rerun it after changing a KnobSpec) and holds every knob."""
    page = (REPO / "docs" / "knobs.md").read_text(encoding="utf-8")
    assert page == _script("knobs_doc").render(), "docs/knobs.md is stale: run python scripts/knobs_doc.py"
    assert knobs_markdown() in page
    assert "](docs/knobs.md)" in _readme()


def test_readme_is_short_enough_for_a_newcomer():
    """Issue 21: at most ~15 KB; the long tables live in docs/ and benchmarks/."""
    assert len(README.read_bytes()) <= 16_000
    assert "| `trigger_ratio` |" not in _readme()  # the knobs table moved to docs/knobs.md


def test_quick_start_commands_point_at_real_files():
    readme = _readme()
    assert (".venv/bin/pip install -e . && .venv/bin/python -m compileall -q workbench && "
            ".venv/bin/streamlit run workbench/app.py") in readme
    assert "bash scripts/test.sh" in readme
    assert (REPO / "workbench" / "app.py").is_file() and (REPO / "scripts" / "test.sh").is_file()
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_engine_snippet_runs(tmp_path, monkeypatch, capsys):
    """The README's ten-line engine example runs as written (from a folder holding sample_histories/)."""
    snippet = _readme().split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "sample_histories").symlink_to(REPO / "sample_histories")
    monkeypatch.chdir(tmp_path)
    exec(compile(snippet, "README.md", "exec"), {})
    first = capsys.readouterr().out.splitlines()[0].split()
    assert int(first[0]) >= 10  # the long sample chains at least ten compressions
    assert (tmp_path / "chosen.yaml").read_text(encoding="utf-8").startswith("version: 1")


def test_first_five_minutes_numbers_are_the_replays(long_history, long_run):
    """Steps 1 and 2 quote the long sample at stagewise's defaults and with the trigger control at 80,000 tokens
    (what the sidebar's slider writes, ``with_trigger``): the replay's own figures and the knob it names."""
    steps = " ".join(_section("Your first five minutes").split())
    history = long_history
    moved = with_trigger(Knobs(), 80_000)
    base, lower = long_run, simulate(history, moved)
    assert len(history.messages) == 2_200 and "2,200 messages" in steps
    assert f"compacts {base.metrics.compressions} times" in steps
    assert f"{lower.metrics.compressions} compressions instead of {base.metrics.compressions}" in steps
    assert (f"{lower.metrics.tokens_per_task / 1e6:.1f} M tokens per task instead of "
            f"{base.metrics.tokens_per_task / 1e6:.1f} M") in steps
    knob = trigger_knob(Knobs())
    assert f"`{knob}`" in steps and f"--set {knob}={getattr(moved, knob)}`" in steps
    assert "trigger 80,000 tokens" in lower.limits.trigger.describe() and "drops to 80,000" in steps
    label = "Trigger threshold (tokens)"  # the control the README says to drag is the sidebar's
    assert f"*{label}*" in steps and f'"{label}"' in (REPO / "workbench" / "ui" / "sidebar.py").read_text()


def test_every_reader_format_is_in_the_agents_table():
    table = _section("Agents supported")
    missing = [name for name in FORMATS if f"`{name}`" not in table]
    assert not missing, f"formats load_history reads but the README's table does not name: {missing}"


def test_every_notebook_is_listed():
    notebooks = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    section = _section("Notebooks")
    words = ["No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"]
    assert section.split("\n\n", 1)[1].startswith(f"{words[len(notebooks)]}, in `notebooks/`")
    for nb in notebooks:
        assert f"`{nb.stem}`" in section, f"{nb.name} is not listed in the README"


def test_speed_figures_are_the_benchmarks():
    """Each row of the README's speed table (target, median, met) is a row of benchmarks/README.md's tables."""
    bench_rows = [line for line in (REPO / "benchmarks" / "README.md").read_text(encoding="utf-8").splitlines()
                  if line.startswith("| ")]
    rows = [line for line in _section("Speed").splitlines() if line.startswith("| ") and "**" in line]
    assert len(rows) >= 6
    for row in rows:
        _, target, median, met = (c.strip() for c in row.strip("|").split(" | "))
        assert any(f"| {target} |" in b and f"| {median} |" in b and b.rstrip().endswith(f"| {met} |")
                   for b in bench_rows), f"not in benchmarks/README.md: {row}"


def test_reality_numbers_are_docs_reality():
    """The Reality section's headline counts are the ones docs/reality.md (generated by the scripts it names) shows."""
    section = " ".join(_section("Reality").split())
    doc = (REPO / "docs" / "reality.md").read_text(encoding="utf-8")
    usage = re.search(r"\*\*(\d+) automatic compactions; within ±0: (\d+) ", doc)
    assert usage, "docs/reality.md lost its summary line"
    assert f"{usage[2]} of {usage[1]} automatic compactions are predicted at their exact message" in section
    free = re.findall(r"\| \*\*all\*\* \| (\d+) \| (\d+) \| (\d+) \(\d+%\) \| \d+ \(\d+%\) \| (\d+) \(\d+%\)", doc)
    large, small = free[0], free[2]  # real_sessions_large billed, real_sessions billed (scripts/replay_report.py)
    assert f"{large[3]} of {large[1]} automatic compactions of the {large[0]} sessions" in section
    assert f"({large[2]} at the exact message)" in section and f"{small[3]} of {small[1]} on the small set" in section
    held = re.search(r"(\d+)/(\d+) \(\d+%\) with each session left out", doc)
    assert held and f"{held[1]} of {held[2]} within ±5 messages with each session left out" in section
    ceiling = re.search(r"(\d+)/(\d+) \(\d+%\) even counting as hits", doc)  # scripts/reality_estimate.py
    assert ceiling and f"passes {ceiling[1]} of {ceiling[2]} even with perfect growth" in section


def test_links_resolve():
    """Every relative link in the README and in docs/install.md and docs/knobs.md points at a file (and heading)."""
    for page in (README, REPO / "docs" / "install.md", REPO / "docs" / "knobs.md"):
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://")):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve()
            assert file.exists(), f"{page.name}: {target}"
            if anchor:
                assert anchor in _anchors(file), f"{page.name}: no heading for #{anchor} in {path}"


def test_every_doc_is_linked_from_the_readme():
    readme = _readme()
    for doc in sorted((REPO / "docs").glob("*.md")):
        assert f"](docs/{doc.name})" in readme, f"the README does not link docs/{doc.name}"


def test_docs_hold_no_notes_addressed_to_the_team():
    """Published docs speak to the reader: no "for the lead to paste" drafts left in them (issue 13)."""
    for path in [README, *sorted((REPO / "docs").glob("*.md"))]:
        assert "for the lead" not in path.read_text(encoding="utf-8").lower(), path.name


def _anchors(file: Path) -> set[str]:
    """GitHub's anchors for the headings of a Markdown file: lower case, punctuation dropped, spaces as hyphens."""
    return {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in file.read_text(encoding="utf-8").splitlines() if line.startswith("#")}


def test_the_screenshot_script_retakes_every_picture_the_docs_show():
    """scripts/screenshots.py takes every docs/*.png the README and docs/*.md show, at 1280 or 1500 px."""
    shown = set()
    for page in [README, *sorted((REPO / "docs").glob("*.md"))]:
        shown |= {Path(t).stem for t in LINK.findall(page.read_text(encoding="utf-8")) if t.endswith(".png")}
    shots = _script("screenshots").SHOTS
    assert shown <= {s.name for s in shots}, f"pictures no script retakes: {shown - {s.name for s in shots}}"
    assert {s.width for s in shots} == {1280, 1500}
