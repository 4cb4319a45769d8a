"""The README stays true: its knobs table is the one the code generates, and its quick start names real files."""

from __future__ import annotations

from conftest import REPO

from workbench.knobs import knobs_markdown


def test_knobs_table_matches_the_code():
    assert knobs_markdown() in (REPO / "README.md").read_text(encoding="utf-8")


def test_quick_start_commands_point_at_real_files():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert ".venv/bin/streamlit run workbench/app.py" in readme
    assert "bash scripts/test.sh" in readme
    assert (REPO / "workbench" / "app.py").is_file()
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_engine_snippet_runs(tmp_path, monkeypatch, capsys):
    """The README's ten-line engine example runs as written (from a folder holding sample_histories/)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    snippet = readme.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "sample_histories").symlink_to(REPO / "sample_histories")
    monkeypatch.chdir(tmp_path)
    exec(compile(snippet, "README.md", "exec"), {})
    first = capsys.readouterr().out.splitlines()[0].split()
    assert int(first[0]) >= 10  # the long sample chains at least ten compressions
    assert (tmp_path / "chosen.yaml").read_text(encoding="utf-8").startswith("version: 1")


def test_docs_hold_no_notes_addressed_to_the_team():
    """Published docs speak to the reader: no "for the lead to paste" drafts left in them (issue 13)."""
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        assert "for the lead" not in path.read_text(encoding="utf-8").lower(), path.name
