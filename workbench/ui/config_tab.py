"""The YAML & CLI tab: download the knobs as YAML, load a YAML into every widget, copy a CLI command."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from workbench.display.untrusted import literal
from workbench.knobs import Knobs, dump_knobs
from workbench.ui import state as ui_state


def _queue_yaml_upload() -> None:
    upload = st.session_state.get("yaml_upload")
    if upload is not None:
        try:
            text = upload.getvalue().decode("utf-8")
        except UnicodeDecodeError:
            ui_state.flash(st.session_state, "error", f"{literal(upload.name)}: not UTF-8 text")
            return
        st.session_state[ui_state.PENDING_YAML] = (upload.name, text, _mode())


def _mode() -> str:
    return "replace" if st.session_state.get(ui_state.YAML_MODE) == "replace" else "merge"


def _queue_pasted_yaml() -> None:
    st.session_state[ui_state.PENDING_YAML] = ("pasted YAML", st.session_state.get("yaml_paste", ""), _mode())


def _short_path(path: str) -> str:
    """A path relative to the working directory when it lies below it (what a user would type)."""
    try:
        return os.path.relpath(path) if Path(path).resolve().is_relative_to(Path.cwd()) else path
    except (OSError, ValueError):
        return path


def render(knobs: Knobs, history_path: str) -> None:
    from workbench.knobs.command import cli_command

    text = dump_knobs(knobs)
    left, right = st.columns(2)
    with left:
        st.subheader("Knobs as YAML")
        st.download_button("Download knobs.yaml", text, file_name="knobs.yaml", mime="application/x-yaml",
                           key="yaml_download", type="primary")
        st.code(text, language="yaml", height=480)
    with right:
        st.subheader("Load a YAML")
        st.session_state.setdefault(ui_state.YAML_MODE, "merge")
        st.radio("a YAML that names only some knobs", ["merge", "replace"], key=ui_state.YAML_MODE, horizontal=True,
                 format_func={"merge": "changes only those knobs", "replace": "replace all (the rest to defaults)"}.get,
                 help="The download names every knob, so it sets them all either way.")
        st.file_uploader("upload knobs.yaml", type=["yaml", "yml"], key="yaml_upload", on_change=_queue_yaml_upload,
                         help="The format of the download (version 1); an unknown or repeated knob is refused "
                              "with its line.")
        st.text_area("or paste YAML", key="yaml_paste", height=140)
        st.button("Apply pasted YAML", key="yaml_apply", on_click=_queue_pasted_yaml)
        st.subheader("Command line")
        st.caption("The same replay from a shell (knobs that differ from the defaults):")
        st.code(cli_command(_short_path(history_path), knobs), language="bash", wrap_lines=True)
