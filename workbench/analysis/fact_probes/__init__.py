"""The fact-probe family: facts a continuing agent needs (``facts``, ``fact_rules``, ``fact_matcher``), whether
each compaction keeps them (``probes``), and the optional LLM judge (``probe_judge``).
"""
