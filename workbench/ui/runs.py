"""Cached engine calls for the app: one replay per (history, knobs, briefer), previews and cost frames.

``st.cache_resource`` keeps the values themselves (no pickling), which suits frozen runs and the large
History objects; the history is passed with a leading underscore and keyed by its content digest.
"""

from __future__ import annotations

import functools
import gc

import polars as pl
import streamlit as st

from workbench.history.model import History
from workbench.knobs import Knobs
from workbench.replay import Run


def briefer_of(name: str):  # noqa: ANN201 - a Briefer, or None for the simulated size model
    """The offline briefer a name picks (picklable, so sweeps and tunes can use it too)."""
    if name == "extractive":
        from workbench.briefing.extractive import ExtractiveBriefer

        return ExtractiveBriefer()
    return None


@st.cache_resource(show_spinner=False, max_entries=64)
def replay(history_key: str, knobs: Knobs, briefer: str, _history: History) -> Run:
    """``simulate`` once per (history digest, knobs, offline briefer)."""
    from workbench.replay import simulate

    return simulate(_history, knobs, briefer_of(briefer))


@st.cache_resource(show_spinner=False, max_entries=16)
def previews(history_key: str, _history: History) -> list[str]:
    """Hover text for every message of a history."""
    from workbench.analysis.inspector import message_previews

    return message_previews(_history)


@st.cache_resource(show_spinner=False, max_entries=64)
def costs(history_key: str, knobs: Knobs, briefer: str, _run: Run, _history: History) -> pl.DataFrame:
    """The per-check cumulative cost frame of a cached run."""
    from workbench.analysis.costs import cost_frame

    return cost_frame(_run, _history)


@st.cache_resource(show_spinner=False, max_entries=16)
def logged(history_key: str, _history: History) -> pl.DataFrame | None:
    """A real agent log's own context measure per message (None for a plain transcript)."""
    if _history.log is None or not _history.log.calls:
        return None
    from workbench.analysis.real_logs.reality import logged_context_frame

    return logged_context_frame(_history)


def against(run: Run, history: History):  # noqa: ANN201 - an AgainstLog, or None
    """The replay's compactions beside an agent log's own (None for a plain transcript): cheap, not cached."""
    from workbench.analysis.real_logs.free_replay import against_log

    return against_log(run, history)


@st.cache_resource(show_spinner=False, max_entries=16)
def _factual(history_key: str, _history: History) -> Knobs | None:
    from workbench.analysis.real_logs.free_replay import factual_knobs

    return factual_knobs(_history)


def counterfactual(history_key: str, knobs: Knobs, history: History) -> bool:
    """Whether ``knobs`` differ from the agent's own settings for this log (False for a plain transcript)."""
    own = _factual(history_key, history)
    return own is not None and knobs != own


@st.cache_resource(show_spinner=False, max_entries=16)
def logged_bill(history_key: str, _history: History):  # noqa: ANN201 - a Bill, or None for a plain transcript
    """A real agent log's own bill (its usage summed by class; None without usage)."""
    from workbench.analysis.real_logs.bill import logged_bill as bill_of

    return bill_of(_history)


@functools.cache
def freeze_heap() -> None:
    """Move every object alive now (the imports, the history, its counts: ~130k objects after the first run on the
    long sample) out of the garbage collector's reach, once per server process. Python's full collection walks them
    all, and a knob move allocates enough to start one on most moves: 0.3-0.7 s with the GIL held after each move's
    chart (benchmarks/README.md, browser_slider). Objects made later are collected as before. Only under a real
    server: AppTest's stand-in runtime runs the script in a test's or benchmark's own process, left as it was."""
    from streamlit.runtime import Runtime

    if Runtime.exists() and type(Runtime.instance()) is Runtime:
        gc.freeze()
