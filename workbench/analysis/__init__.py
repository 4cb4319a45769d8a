"""Analyses that read a Run (or several): costs, A/B compare, inspector, probes, judge, offload log, stagewise's real compressions.

The replay never imports anything from here.
"""
