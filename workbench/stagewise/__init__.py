"""The exact port of stagewise's compression code (commit 18ac8a27b18c; spec/stagewise.md).

``estimate`` (chars/4 + overhead token estimate), ``serialize`` (the compact transcript the briefer reads)
and ``core`` (trigger, boundary walk, budget buckets). The values they read and the JS string/JSON
semantics they need live one floor down, in ``workbench.history`` (``model``, ``jsjson``), with the reader
of stagewise's SQLite store (``history.readers.stagewise_store``); the replay of its real compressions and its
playground bundles use the replay, so they are analyses (``workbench.analysis.real_logs.stagewise_real``, ``bundles``).
"""
