"""The charts an AppTest page holds, however they are drawn: ``st.plotly_chart`` elements and the workbench's
basic-bundle chart component (``workbench/ui/fast_chart.py``), each as (element id, figure JSON)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

COMPONENT = "workbench_chart"


def charts(at: AppTest) -> list[tuple[str, str]]:
    out = [(c.proto.id, c.proto.spec) for c in at.get("plotly_chart")]
    out += [(c.proto.id, c.proto.bytes.decode("utf-8")) for c in at.get("bidi_component")
            if c.proto.component_name == COMPONENT]
    return out


def fast_charts(at: AppTest) -> list[tuple[str, str]]:
    """Only those drawn by the component (plotly.js's basic bundle)."""
    return [(c.proto.id, c.proto.bytes.decode("utf-8")) for c in at.get("bidi_component")
            if c.proto.component_name == COMPONENT]
