"""The reality family: a real agent log replayed with the agent's own settings and checked against what it did.

``reality`` (where it compacts), ``agent_settings`` (the preset its version implies), ``calibration`` (counting knobs
fitted to the log; the estimate's weights by ``estimate_fit``), ``after_compaction`` and ``bill`` (the context after
each compaction, the session's bill), ``free_replay``, ``real_briefings`` (its real summaries scored, with ``refetch`` and a report), and
``stagewise_real`` (the compressions a stagewise store recorded).
"""
