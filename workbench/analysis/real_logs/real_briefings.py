"""Real briefings, scored: for each compaction an agent logged, which facts of what it folded its own summary
kept, what the extractive briefer keeps of the same input, and what the agent read again afterwards.

**The folded span** of a logged compaction runs from the previous real compaction (or the start) up to it:
that is what the agent summarized. Claude Code regenerates its summary from the whole conversation it had, i.e.
the previous summary (the compact-summary message that opens the span) plus every message since; Codex's
remote compaction reads its whole context, i.e. what the previous compaction kept (``kept``: real user messages
and the initial context) plus every message since. **Facts** are those of ``workbench.analysis.fact_probes.facts``
(artifacts, decisions and constraints, errors, links, next steps) mentioned in the span, as
``workbench.analysis.fact_probes.probes`` picks them: only the latest request and the latest plan of the span, and none
first met in a message the agent injected itself (a compact summary: the summarizer's words; Claude Code's
``isMeta`` messages: command caveats, skill bodies), which are not what the user or the work produced.

A fact is **retained** when the new context names it: the real summary's text, or what the agent carried
over verbatim (Codex ``kept`` messages; Claude Code's restored files, which it re-attaches itself and never
logs: modelled by the preset's restore knobs, their paths count). **At risk**: in the span, retained by
neither. Codex's summary is encrypted (``opaque_items``), so for Codex only the readable part, the kept
messages, is scored, and the row says so.

**The extractive briefer** gets the same input as the agent: the previous real summary as its previous
briefing (Codex: none, the kept messages are folded instead) and the span's messages, with the real summary's
length as its target (the same budget; Codex's is unreadable, so the preset's ``target_briefing_chars``).
Its retention counts the same verbatim carry-over, since a briefing only replaces the summary.

**Re-fetches** (``workbench.analysis.real_logs.refetch``): files first re-read after the compaction and before the next
one that a read before it had brought in, with their result tokens by the agent preset's own per-message
estimate (the boundary walk's counter, images by the provider's rule, tool output caps). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.analysis.fact_probes.fact_rules import word_set
from workbench.analysis.fact_probes.facts import PROBES, Fact, fact_found
from workbench.analysis.fact_probes.probes import fact_index
from workbench.analysis.real_logs.agent_settings import agent_settings
from workbench.analysis.real_logs.refetch import FileRead, Refetch, file_reads, normalise, refetches
from workbench.briefing.base import BriefRequest
from workbench.counting.counters import walk_tokens
from workbench.counting.encodings import render_for_tokenizer
from workbench.counting.restore import restore_args, restored_files
from workbench.counting.tokens import CountCache
from workbench.history.jsjson import utf16_len
from workbench.history.model import History, Message
from workbench.history.session_log import LoggedCompaction
from workbench.knobs import Knobs
from workbench.stagewise.estimate import content_chars

if TYPE_CHECKING:
    from workbench.briefing.base import Briefer

EXAMPLES = 2


@dataclass(frozen=True, kw_only=True)
class BriefingScore:
    """One logged compaction: the real summary and the extractive briefing probed, and the re-fetches after it."""

    file: str
    agent: str
    ordinal: int  # 1 for the session's first logged compaction
    index: int  # first message after the compaction (the loader's numbering)
    source_line: int | None
    trigger: str
    span_from: int  # first message of the folded span (the span ends at ``index``)
    facts: int
    retained_real: int  # in the real summary or carried verbatim
    retained_extractive: int  # in the extractive briefing or carried verbatim
    kept_verbatim: int  # of which carried verbatim (kept messages, restored files)
    summary_readable: bool
    summary_chars: int | None  # the real summary's UTF-16 length (None: not readable)
    extractive_chars: int
    target_chars: int
    at_risk: tuple[Fact, ...]  # at risk with the real summary: next steps, decisions, changed files, errors first
    extractive_at_risk: int
    by_probe: tuple[tuple[str, int, int, int], ...]  # (probe, facts, retained real, retained extractive)
    refetched: tuple[Refetch, ...]
    restored: tuple[str, ...] = ()  # files the agent re-attached itself right after it (Claude Code; modelled)
    refetches_at_risk: int = 0  # re-fetches of a file that was at risk: what the summary lost, read back
    notes: tuple[str, ...] = ()
    extractive_text: str = field(default="", repr=False)

    @property
    def retention_real(self) -> float | None:
        return self.retained_real / self.facts if self.facts else None

    @property
    def retention_extractive(self) -> float | None:
        return self.retained_extractive / self.facts if self.facts else None

    @property
    def refetches(self) -> int:
        return len(self.refetched)

    @property
    def refetch_tokens(self) -> int:
        return sum(r.tokens for r in self.refetched)

    @property
    def refetches_restored(self) -> int:
        """Re-fetches of a file the agent had just restored itself: tokens paid twice."""
        return sum(r.restored for r in self.refetched)

    def at_risk_examples(self, n: int = EXAMPLES) -> tuple[str, ...]:
        return tuple(_fact_label(f) for f in self.at_risk[:n])

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file, "agent": self.agent, "ordinal": self.ordinal, "index": self.index,
            "source_line": self.source_line, "trigger": self.trigger, "span_from": self.span_from,
            "facts": self.facts, "retained_real": self.retained_real, "retained_extractive": self.retained_extractive,
            "retention_real": _round(self.retention_real), "retention_extractive": _round(self.retention_extractive),
            "kept_verbatim": self.kept_verbatim, "summary_readable": self.summary_readable,
            "summary_chars": self.summary_chars, "extractive_chars": self.extractive_chars,
            "target_chars": self.target_chars, "at_risk": len(self.at_risk),
            "at_risk_examples": list(self.at_risk_examples(5)), "extractive_at_risk": self.extractive_at_risk,
            "by_probe": {p: {"facts": n, "retained_real": r, "retained_extractive": e} for p, n, r, e in self.by_probe},
            "refetches": self.refetches, "refetch_tokens": self.refetch_tokens,
            "refetches_restored": self.refetches_restored, "refetches_at_risk": self.refetches_at_risk,
            "restored": list(self.restored),
            "refetched": [{"path": r.path, "index": r.index, "first_read": r.first_read, "tokens": r.tokens,
                           "via": r.via, "restored": r.restored} for r in self.refetched],
            "notes": list(self.notes),
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _fact_label(f: Fact) -> str:
    key = " ".join(f.key.split())
    return f"{f.kind}: {key if len(key) <= 100 else key[:99] + '…'}"


def _risk_rank(f: Fact) -> int:
    """Which lost facts to show first: what to do next, what the user decided, files changed, errors, the rest."""
    if f.kind == "artifact":
        return 2 if any(a in f.detail for a in ("created", "edited", "deleted")) else 4
    return {"next_step": 0, "decision": 1, "error": 3}.get(f.kind, 5)


def _text_of(messages: Sequence[Message]) -> str:
    return "\n".join(render_for_tokenizer(m) for m in messages).lower()


def _found(facts: Sequence[Fact], text_lower: str) -> np.ndarray:
    if not text_lower:
        return np.zeros(len(facts), dtype=bool)
    ws = word_set(text_lower)
    return np.array([fact_found(f, text_lower, ws) for f in facts], dtype=bool)


def _span_facts(history: History, start: int, end: int, carried: str, injected: set[int]) -> list[int]:
    """Indices (into the fact index) of the facts of the span [start, end) plus what the agent carried into it,
    none first met in a message the agent wrote into the transcript itself (``injected``)."""
    index = fact_index(history)
    facts = index.facts
    inside = index.mentioned_in(start, end - 1) if end > start else np.zeros(len(facts), dtype=bool)
    if carried:
        older = np.array([f.index < start for f in facts], dtype=bool)
        if older.any():
            ids = np.flatnonzero(older)
            inside[ids] |= _found([facts[int(k)] for k in ids], carried)
    chosen = [k for k in np.flatnonzero(inside).tolist()
              if facts[k].index < end and facts[k].index not in injected]
    keep: list[int] = []
    latest: dict[str, int] = {}
    for k in chosen:
        f = facts[k]
        if f.kind == "next_step" and f.detail in ("request", "plan"):
            if f.detail not in latest or f.index >= facts[latest[f.detail]].index:
                latest[f.detail] = k
        else:
            keep.append(k)
    return sorted(keep + list(latest.values()), key=lambda k: (facts[k].index, k))


def _extractive_request(knobs: Knobs, ordinal: int, folded: tuple[Message, ...], start: int, end: int,
                        previous: str | None, target: int) -> BriefRequest:
    chars = sum(max(0, int(content_chars(m) or 0)) for m in folded) + (utf16_len(previous) if previous else 0)
    return BriefRequest(chain_index=ordinal, folded=folded, folded_from=start, boundary=end,
                        previous_briefing=previous, previous_chars=utf16_len(previous) if previous else 0,
                        new_material_chars=chars, compact_history_chars=chars, target_chars=max(100, target),
                        bucket="none", ratio=0.0, percent=0, knobs=knobs, sections=True)


def score_briefings(history: History, *, briefer: Briefer | None = None, knobs: Knobs | None = None,
                    preset: str | None = None) -> tuple[BriefingScore, ...]:
    """Every logged compaction of ``history`` scored (empty when its log records none).

    ``briefer`` defaults to the extractive one; any text briefer (a live LLM) can be scored against the real
    summaries the same way. ``knobs``/``preset`` replace the agent's own preset (tokens, restore, target).
    """
    log = history.log
    if log is None or not log.compactions:
        return ()
    if briefer is None:
        from workbench.briefing.extractive import ExtractiveBriefer

        briefer = ExtractiveBriefer()
    k = agent_settings(history, preset=preset, base=knobs).knobs
    msgs = history.messages
    tokens = walk_tokens(CountCache().counts_for(history), k.replace(log_counter="estimate"))  # the agent's estimate
    cwd = history.meta.get("cwd") if isinstance(history.meta.get("cwd"), str) else None
    reads = file_reads(msgs, tokens, cwd=cwd)
    real = sorted(log.compactions, key=lambda c: c.index)
    summaries = {c.summary_index for c in real if c.summary_index is not None}
    summaries |= {i for i, m in enumerate(msgs) if m.meta("isCompactSummary") is True}
    injected = summaries | {i for i, m in enumerate(msgs) if m.meta("isMeta") is True}
    file = (history.source_path or history.id).replace("\\", "/").rsplit("/", 1)[-1]
    index = fact_index(history)
    out = []
    for n, c in enumerate(real):
        prev = real[n - 1] if n else None
        until = real[n + 1].index if n + 1 < len(real) else len(msgs)
        out.append(_score_one(history, k, briefer, index.facts, reads, file, log.agent, n + 1, c, prev, until,
                              summaries, injected, cwd))
    return tuple(out)


def _score_one(history: History, k: Knobs, briefer: Briefer, all_facts: tuple[Fact, ...], reads: tuple[FileRead, ...],
               file: str, agent: str, ordinal: int, c: LoggedCompaction, prev: LoggedCompaction | None, until: int,
               summaries: set[int], injected: set[int], cwd: str | None) -> BriefingScore:
    msgs = history.messages
    start, end = (prev.index if prev else 0), c.index
    carried = ""
    if prev is not None:  # what the agent carried into the span that the transcript does not repeat
        carried = _text_of(prev.kept) if prev.kept else ""
        if prev.summary and start not in summaries:
            carried += "\n" + prev.summary.lower()
    ids = _span_facts(history, start, end, carried, injected)
    facts = [all_facts[i] for i in ids]
    notes: list[str] = []
    restored: tuple[tuple[str, int], ...] = ()
    if agent == "claude_code" and k.restore_files:
        restored = restored_files(msgs[:end], **restore_args(k))
    verbatim = _text_of(c.kept) + ("\n" + "\n".join(p for p, _ in restored).lower() if restored else "")
    in_kept = _found(facts, verbatim)
    readable = c.summary is not None
    in_summary = _found(facts, c.summary.lower()) if c.summary else np.zeros(len(facts), dtype=bool)
    if not readable:
        notes.append(f"the summary is encrypted ({c.opaque_items} compaction item(s)): only the kept messages are "
                     f"scored" if c.opaque_items else "no summary in the log: only the kept messages are scored")
    # The agent's input, given to the extractive briefer: the previous summary (the message opening the span, or
    # the log's text when the transcript lacks it) as its previous briefing, what was kept, the span's messages.
    in_transcript = start in summaries and start < end
    previous = prev.summary if prev is not None and prev.summary else (msgs[start].text if in_transcript else None)
    span_from = start + 1 if in_transcript else start
    folded = (tuple(prev.kept) if prev is not None else ()) + tuple(msgs[span_from:end])
    target = utf16_len(c.summary) if c.summary else k.target_briefing_chars
    record = briefer(_extractive_request(k, ordinal, folded, start, end, previous, target))
    text = record.text or ""
    if record.text is None:
        notes.append(f"the {briefer.name} briefer wrote no text")
    elif utf16_len(text) > 1.05 * target:
        notes.append(f"the {briefer.name} briefing is {utf16_len(text):,} chars for a {target:,} target "
                     f"(it never cuts files or links)")
    in_extractive = _found(facts, text.lower())
    real_ok = in_summary | in_kept
    ours_ok = in_extractive | in_kept
    risk = sorted((facts[j] for j in np.flatnonzero(~real_ok).tolist()), key=lambda f: (_risk_rank(f), -f.index))
    by_probe = []
    for p in PROBES:
        sel = np.array([f.probe == p for f in facts], dtype=bool)
        if sel.any():
            by_probe.append((p, int(sel.sum()), int(real_ok[sel].sum()), int(ours_ok[sel].sum())))
    back = [normalise(p, cwd) for p, _ in restored]
    again = refetches(reads, end, until, restored=back)
    lost_files = [f for f in risk if f.kind == "artifact"]
    lost = sum(1 for r in again if any(fact_found(f, r.path.lower()) for f in lost_files))
    return BriefingScore(
        file=file, agent=agent, ordinal=ordinal, index=c.index, source_line=c.source_line, trigger=c.trigger,
        span_from=start, facts=len(facts), retained_real=int(real_ok.sum()), retained_extractive=int(ours_ok.sum()),
        kept_verbatim=int(in_kept.sum()), summary_readable=readable,
        summary_chars=utf16_len(c.summary) if c.summary else None, extractive_chars=utf16_len(text),
        target_chars=target, at_risk=tuple(risk), extractive_at_risk=int((~ours_ok).sum()),
        by_probe=tuple(by_probe), refetched=again, restored=tuple(back), refetches_at_risk=lost, notes=tuple(notes), extractive_text=text)
