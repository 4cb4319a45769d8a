"""The engine stays pure and cheap to import: no UI, no LLM client, no network at import time."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("litellm", "streamlit", "plotly", "diskcache", "ipywidgets")


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(','.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.strip().split(","))


def test_import_workbench_pulls_in_nothing_heavy():
    loaded = _loaded_after("import workbench")
    assert not loaded & set(HEAVY)


@pytest.mark.slow
def test_a_whole_replay_pulls_in_no_ui_or_llm_client():
    loaded = _loaded_after(
        "import workbench; from workbench.history.model import History, Message, text_part; "
        "h = History(id='x', messages=tuple(Message(id=str(i), role='user', parts=(text_part('a'*9000),)) "
        "for i in range(50))); r = workbench.simulate(h, workbench.Knobs(context_window_tokens=32000))"
    )
    assert not loaded & set(HEAVY)


@pytest.mark.slow
def test_from_workbench_import_simulate_is_the_function_whatever_was_imported_first():
    code = (
        "import workbench.replay, workbench.plots, workbench.analysis.costs; from workbench import simulate; "
        "print(callable(simulate) and simulate.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "simulate"
