"""Analyses that read a Run (or several): costs, A/B compare, inspector, offload log, bundles, binding knobs,
health; the fact-probe family in ``fact_probes/`` and the reality family (real agent logs) in ``real_logs/``.

The replay never imports anything from here.
"""
