"""The notebooks: committed without outputs, open with their question, use only the public API, run offline,
with or without ../shared's real transcripts, and write their exports outside the repository."""

from __future__ import annotations

import ast
import contextlib
import fcntl
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from queue import Empty
from typing import Any

import nbformat
import pytest
from conftest import REPO
from real_histories import real_history_paths

NOTEBOOK_DIR = REPO / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
# Notebooks whose run reads no environment (no ../shared, no key, no output folder): the same with or without
# them, so they run once, in the fresh-clone test (test_a_notebook_run_alone_reads_no_environment holds them to it).
SAME_EITHER_WAY = ("01_explore_knobs.ipynb",)
ENVIRONMENT_WORDS = ("os.environ", "getenv", "WORKBENCH_", "shared", "real_", "Study", "API_KEY")
# Kernels start one at a time, across xdist workers and concurrent runs: concurrent starts raced for ports and
# stalled. A lock file, as xdist_group no longer groups under pytest 9.2 (pytest-dev/pytest-xdist#1386).
KERNEL_START_LOCK = Path(tempfile.gettempdir()) / "pytest-workbench-kernel-start.lock"
# How long one cell may run. The heaviest (03's sweep of every preset over the real transcripts) is ~15 CPU-s; at
# a load of 7 on 2 cores it ran past the 45 s this was before (an nbclient timeout in a full run). 180 s tolerates a
# load of ~20 and still fails a hang.
CELL_TIMEOUT_S = 180
# Notebook 05 sweeps the presets at 32k as 03 does (same briefer, probes; 05 repeated 03's 32k half, ~40 s of a full
# run): the suite runs 03 with every preset, and 05's own code (its table by probe, its detail) on these three.
PROBE_PRESETS = ("stagewise", "msagent", "claude_code")
# What a notebook may import: the engine's public modules and the display stack, nothing private.
ALLOWED_IMPORTS = {"workbench", "polars", "plotly", "ipywidgets", "IPython", "os", "pathlib", "tempfile"}


def _code_cells(path: Path) -> list[str]:
    book = nbformat.read(path, as_version=4)
    return [c.source for c in book.cells if c.cell_type == "code"]


def test_there_are_six_notebooks():
    assert [p.name for p in NOTEBOOKS] == [
        "01_explore_knobs.ipynb",
        "02_sweep_threshold_kept.ipynb",
        "03_strategy_shootout.ipynb",
        "04_live_llm_calibration.ipynb",
        "05_probes_by_strategy.ipynb",
        "06_reality_calibration.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_outputs_are_committed(path):
    """Outputs are stripped before commit: no outputs, no execution counts, no saved widget state."""
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    for i, cell in enumerate(book.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name} cell {i} has outputs"
            assert cell.execution_count is None, f"{path.name} cell {i} has an execution count"
    assert "widgets" not in book.metadata


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_opens_with_its_question_and_history(path):
    first = nbformat.read(path, as_version=4).cells[0]
    assert first.cell_type == "markdown"
    assert "**Question:**" in first.source
    assert "**History:**" in first.source or "**Histories:**" in first.source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_only_the_public_engine_api_is_used(path):
    """Imports come from workbench's public modules and the display stack; no classes, no private names."""
    for source in _code_cells(path):
        tree = ast.parse(source)
        for node in ast.walk(tree):
            assert not isinstance(node, ast.ClassDef), f"{path.name} defines a class"
            if isinstance(node, ast.Import):
                roots = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                roots = [node.module or ""]
                assert not any(a.name.startswith("_") for a in node.names), f"{path.name} imports a private name"
            else:
                continue
            for name in roots:
                assert name.split(".")[0] in ALLOWED_IMPORTS, f"{path.name} imports {name}"
                assert not any(part.startswith("_") for part in name.split(".")), f"{path.name} imports {name}"


def _ensure_kernel() -> None:
    """The python3 kernelspec of this interpreter (installed into the venv when missing)."""
    from jupyter_client.kernelspec import KernelSpecManager

    if "python3" not in KernelSpecManager().find_kernel_specs():
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix"], check=True,
                       capture_output=True)


@contextlib.contextmanager
def _kernel_start_lock():  # noqa: ANN202 - a context manager
    with open(KERNEL_START_LOCK, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _poll_in_slices(channel: Any, slice_s: float = 1.0) -> None:
    """Make ``channel.get_msg`` wait in slices of a second up to its timeout, instead of in one poll.

    An execute reply that has arrived is now and then not seen until the poll's timeout runs out, and is then read
    as if nothing had happened (zmq.asyncio's poll missing a wakeup, cf. zeromq/pyzmq#1065): after notebook 01's
    widget cell the next cell started exactly one cell timeout late in 4 of 21 runs, and in 0 of 10 with the slices
    (2026-12-03, jupyter_client 8.10.0, pyzmq 27.3.0). Each new poll sees the reply; a cell that really runs too long
    still raises Empty at its timeout, as before (checked with a sleeping cell)."""
    get_msg = channel.get_msg

    async def get_msg_in_slices(timeout: float | None = None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await get_msg(timeout=slice_s if left is None else min(slice_s, left))
            except Empty:
                if left is not None and left <= slice_s:
                    raise

    channel.get_msg = get_msg_in_slices


def _execute(path: Path) -> nbformat.NotebookNode:
    """Run the notebook in a fresh kernel (nbclient) from notebooks/, as JupyterLab would; returns it with outputs."""
    from nbclient import NotebookClient

    _ensure_kernel()
    book = nbformat.read(path, as_version=4)
    client = NotebookClient(book, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    start_kernel = client.async_start_new_kernel

    async def start_alone(**kwargs: object) -> None:
        """The kernel and its client, ready, under the lock; nbclient then finds both started."""
        with _kernel_start_lock():
            await start_kernel(**kwargs)
            await client.async_start_new_kernel_client()
        _poll_in_slices(client.kc.shell_channel)

    client.async_start_new_kernel = start_alone  # type: ignore[method-assign]
    client.execute()
    return book


def _text(book: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.outputs)


def _errors(book: nbformat.NotebookNode) -> list:
    return [o for c in book.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


def _assert_presets(path: Path, text: str, *, histories: int) -> None:
    """03 swept every preset (and no compaction) at both windows, 05 the PROBE_PRESETS only: what 05 leaves out
    the suite still runs, in 03."""
    from workbench.presets import list_presets

    if path.name == "03_strategy_shootout.ipynb":
        assert f"{(len(list_presets()) + 1) * 2 * histories} runs, briefer: " in text
    if path.name == "05_probes_by_strategy.ipynb":
        assert f"{len(PROBE_PRESETS)} presets: {', '.join(PROBE_PRESETS)}" in text


@pytest.fixture
def notebook_env(monkeypatch, fake_provider):
    """The LLM is the local fake provider; litellm uses its bundled price map; no judge; 05 on PROBE_PRESETS."""
    monkeypatch.setenv("WORKBENCH_NOTEBOOK_PRESETS", ",".join(PROBE_PRESETS))
    monkeypatch.setenv("WORKBENCH_LIVE_MODEL", "openai/fake-good")
    monkeypatch.setenv("WORKBENCH_LIVE_API_BASE", fake_provider.api_base)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.delenv("WORKBENCH_JUDGE_MODEL", raising=False)
    return fake_provider


def test_a_notebook_run_alone_reads_no_environment():
    """What lets a notebook run once: its code names no environment variable, no ../shared and no key."""
    for name in SAME_EITHER_WAY:
        for source in _code_cells(NOTEBOOK_DIR / name):
            assert not [w for w in ENVIRONMENT_WORDS if w in source], f"{name}: {source[:200]}"


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name not in SAME_EITHER_WAY], ids=lambda p: p.stem)
def test_the_notebook_runs_top_to_bottom_offline(path, tmp_path, monkeypatch, notebook_env):
    """Executed with the real transcripts of ../shared and a key for the fake provider; any cell error fails."""
    shared = real_history_paths()[0].parents[1]
    monkeypatch.setenv("WORKBENCH_SHARED", str(shared))
    monkeypatch.setenv("WORKBENCH_NOTEBOOK_OUT", str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-notebook-key")
    book = _execute(path)
    assert not _errors(book)
    text = _text(book)
    if path.name in ("02_sweep_threshold_kept.ipynb", "03_strategy_shootout.ipynb", "05_probes_by_strategy.ipynb"):
        assert "2 generated samples + 14 real transcripts" in text
    _assert_presets(path, text, histories=16)
    if path.name == "02_sweep_threshold_kept.ipynb":
        assert (tmp_path / "picked_knobs.yaml").is_file()
        assert (tmp_path / "threshold_kept_sweep.parquet").is_file()
    if path.name == "06_reality_calibration.ipynb":
        assert "11 agent logs: 11 real session logs from" in text
        assert (tmp_path / "calibrated-claude_code.yaml").is_file()
    if path.name == "04_live_llm_calibration.ipynb":
        assert "second run: 0 provider requests" in text and "live run complete" in text
        assert notebook_env.counts, "the live run reached the fake provider"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_notebook_runs_from_a_fresh_clone_without_shared_data_or_a_key(path, tmp_path, monkeypatch, notebook_env,
                                                                           request):
    """../shared hidden (an empty folder), no API key, no output folder named: every notebook still runs, on the
    generated samples; 04 runs its offline half and sends nothing; exports go to a temporary folder."""
    empty = tmp_path / "empty-shared"
    empty.mkdir()
    monkeypatch.setenv("WORKBENCH_SHARED", str(empty))
    monkeypatch.delenv("WORKBENCH_NOTEBOOK_OUT", raising=False)
    # The kernel's own temporary directory, to see what a run leaves there; short, as a forkserver's socket path
    # in it must fit AF_UNIX's 108 bytes (a pytest tmp_path under xdist does not).
    temp = Path(tempfile.mkdtemp(prefix="nb-"))
    request.addfinalizer(lambda: shutil.rmtree(temp, ignore_errors=True))
    monkeypatch.setenv("TMPDIR", str(temp))
    for var in ("OPENAI_API_KEY", "AZURE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    before = sorted(p.name for p in NOTEBOOK_DIR.iterdir())
    book = _execute(path)
    assert not _errors(book), _errors(book)
    text = _text(book)
    assert sorted(p.name for p in NOTEBOOK_DIR.iterdir()) == before  # nothing written beside the notebooks
    assert not [p.name for p in temp.iterdir() if p.name.startswith("workbench-")]  # nor left in the temp folder
    if path.name in ("02_sweep_threshold_kept.ipynb", "03_strategy_shootout.ipynb", "05_probes_by_strategy.ipynb"):
        assert "2 histories: 2 generated samples (no real transcripts" in text
    _assert_presets(path, text, histories=2)
    if path.name == "02_sweep_threshold_kept.ipynb":
        line = next(line for line in text.splitlines() if line.startswith("exports go to "))
        out = Path(line[len("exports go to "):].split(" (a temporary folder", 1)[0])
        assert out.parent == temp and f"wrote {out / 'picked_knobs.yaml'}" in text  # written...
        assert f"removed {out}" in text and not out.exists()  # ...then cleaned up by the last cell
    if path.name == "06_reality_calibration.ipynb":  # the generated Claude Code log, not empty tables
        assert "1 agent log: 1 generated sample (no real session logs" in text
        assert "'auto_compactions': 1, 'within_0': 1" in text
        assert "claude_code: hidden prefix" in text and "calibrated-claude_code.yaml" in text
    if path.name == "04_live_llm_calibration.ipynb":
        assert "pre-flight error" in text and "OPENAI_API_KEY" in text
        assert "estimate from a dry replay with the size model" in text
        assert "skipped: no credentials for openai/fake-good" in text
        assert notebook_env.total_requests == 0


def test_the_notebooks_extra_brings_jupyterlab_and_the_readme_names_it():
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(dep.startswith("jupyterlab") for dep in extras["notebooks"])
    assert "pip install -e '.[notebooks]'" in (REPO / "README.md").read_text(encoding="utf-8")
