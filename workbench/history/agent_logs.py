"""Readers for the native session logs of coding agents: Claude Code ``.jsonl`` and Codex CLI rollouts.

Both logs hold far more than the model saw (UI events, snapshots, token counts); only model-facing
records become messages, following ``shared/real_histories/SOURCES.md``. What the agent logged about
itself (billed usage per call, version, model, window, its own compactions with their real summaries)
becomes a typed ``SessionLog`` on ``History.log``; each message remembers its source line. What is
dropped is counted in ``History.meta`` so a reader can tell a quiet log from a lossy read. Text in,
History out; no I/O. The readers live in ``claude_code`` and ``codex``; this module keeps their old
import path.
"""

from workbench.history.agent_log_common import logged_calls
from workbench.history.claude_code import claude_code_from_records, parse_claude_code
from workbench.history.codex import codex_from_records, parse_codex

__all__ = ["claude_code_from_records", "codex_from_records", "logged_calls", "parse_claude_code", "parse_codex"]
