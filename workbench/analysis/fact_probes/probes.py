"""Post-compaction probes: which facts a continuing agent needs survive each compaction.

Factory's probe method (seed 003) asks an agent four kinds of question after a compaction: recall
(errors met, links given), artifact (files created, edited, read), continuation (what to do next) and
decision (what the user decided or forbade). Here the answers are checked without an LLM: facts come
from ``workbench.analysis.fact_probes.facts`` (extracted once per history), and for every landed compression we look for
each fact met before the boundary in the post-compaction context (briefing text + kept messages +
pinned messages). A fact found in none of them is *at risk*: only the folded span had it. With the
simulated briefer (no text) the briefing retains nothing, so retention is then what the kept messages
alone carry; a text briefer (extractive, live) shows what a briefing keeps. Pure: no I/O; the optional
LLM judge lives in ``workbench.analysis.fact_probes.probe_judge``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import polars as pl

from workbench.analysis.fact_probes.fact_matcher import FactMatcher
from workbench.analysis.fact_probes.fact_rules import word_set
from workbench.analysis.fact_probes.facts import KINDS, PROBE_OF_KIND, PROBES, Fact, extract_facts, fact_found
from workbench.counting.encodings import render_for_tokenizer
from workbench.history.model import History

if TYPE_CHECKING:
    from workbench.briefing.base import Briefer
    from workbench.knobs import Knobs
    from workbench.replay import Run

__all__ = [
    "KINDS", "PROBES", "PROBE_COLUMNS", "PROBE_OF_KIND", "Fact", "FactIndex", "ProbeReport", "extract_facts",
    "fact_found", "fact_index", "facts_frame", "probe_briefer", "probe_history", "probe_run", "probe_summary",
    "retention_table", "summarize_frame",
]


# ── the per-history index ─────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, eq=False)
class FactIndex:
    """Facts of one history and which facts each message mentions, found when first asked.

    A probe asks about the kept and pinned messages of each compression, so each message is matched
    at most once (``FactMatcher``: cost grows with the message, not with the number of facts) and
    nothing of size facts × messages is ever built (the old prefix-sum matrix took 2.5 GB at 30k).
    """

    history: History
    facts: tuple[Fact, ...]
    first: np.ndarray  # message index where each fact was first met
    probe_codes: np.ndarray  # index into PROBES per fact
    is_request: np.ndarray
    is_plan: np.ndarray
    matcher: FactMatcher
    _mentions: dict[int, np.ndarray] = field(default_factory=dict)
    _briefings: dict[bytes, np.ndarray] = field(default_factory=dict)

    @property
    def history_digest(self) -> str:
        return self.history.digest

    def mentions_of(self, j: int) -> np.ndarray:
        """Sorted indices of the facts message ``j`` mentions (facts first met at or before ``j``)."""
        found = self._mentions.get(j)
        if found is None:
            text = render_for_tokenizer(self.history.messages[j]).lower()
            found = self._mentions[j] = self.matcher.found_in(text, word_set(text), max_index=j)
        return found

    def found_in_briefing(self, text: str) -> np.ndarray:
        """Sorted indices of the facts a briefing text mentions. Remembered by the text's digest (not the text: a few
        hundred briefings of tens of thousands of characters per history): a briefing is probed at several
        compressions of a run, and the replays of one history under many knobs write many of the same briefings."""
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        found = self._briefings.get(key)
        if found is None:
            if len(self._briefings) >= _BRIEFINGS_MAX:
                self._briefings.pop(next(iter(self._briefings)), None)
            found = self._briefings[key] = self.matcher.found_in_lines(text.lower())
        return found

    def mentioned_in(self, lo: int, hi: int, ids: np.ndarray | None = None) -> np.ndarray:
        """Per fact (of ``ids``, default all): is it mentioned in messages [lo, hi]?"""
        facts = np.arange(len(self.facts), dtype=np.int64) if ids is None else np.asarray(ids, dtype=np.int64)
        if hi < lo or not len(facts):
            return np.zeros(len(facts), dtype=bool)
        hits = [self.mentions_of(j) for j in range(max(0, lo), min(hi, len(self.history.messages) - 1) + 1)]
        return np.isin(facts, np.concatenate(hits)) if hits else np.zeros(len(facts), dtype=bool)


_BRIEFINGS_MAX = 512  # briefings' fact hits remembered per index (the oldest dropped first)
_INDEX_CACHE: dict[str, FactIndex] = {}
_INDEX_CACHE_MAX = 64


def fact_index(history: History) -> FactIndex:
    """The (cached) fact index of ``history``: facts are extracted once, mentions matched on demand."""
    cached = _INDEX_CACHE.get(history.digest)
    if cached is not None:
        return cached
    facts = extract_facts(history)
    index = FactIndex(
        history=history,
        facts=facts,
        first=np.array([x.index for x in facts], dtype=np.int64),
        probe_codes=np.array([PROBES.index(x.probe) for x in facts], dtype=np.int64),
        is_request=np.array([x.kind == "next_step" and x.detail == "request" for x in facts], dtype=bool),
        is_plan=np.array([x.kind == "next_step" and x.detail == "plan" for x in facts], dtype=bool),
        matcher=FactMatcher(facts),
    )
    if len(_INDEX_CACHE) >= _INDEX_CACHE_MAX:
        _INDEX_CACHE.pop(next(iter(_INDEX_CACHE)))
    _INDEX_CACHE[history.digest] = index
    return index


# ── probing a run ────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, kw_only=True)
class _Probe:
    chain_index: int
    boundary: int
    folded_from: int
    end: int
    facts: np.ndarray  # indices into the FactIndex
    in_briefing: np.ndarray
    in_kept: np.ndarray
    in_pinned: np.ndarray


def _probes(run: Run, index: FactIndex) -> list[_Probe]:
    out: list[_Probe] = []
    briefing: str | None = None
    for c in run.compressions:
        if c.status != "landed":
            continue
        if c.summarize:
            briefing = c.record.text
        b = c.boundary
        end = c.index_landed if c.index_landed is not None else c.index_started
        folded = index.first < b
        next_step = index.is_request | index.is_plan
        sel = folded & ~next_step
        for mask in (index.is_request, index.is_plan):
            cand = np.flatnonzero(mask & folded)
            if len(cand):
                sel[cand[np.argmax(index.first[cand])]] = True
        ids = np.flatnonzero(sel)
        kept = index.mentioned_in(b, end, ids)
        pinned_idx = [j for j in c.pinned if j < b]
        pinned = np.zeros(len(ids), dtype=bool)
        if briefing:
            in_brief = np.isin(ids, index.found_in_briefing(briefing))
        else:
            in_brief = np.zeros(len(ids), dtype=bool)
        for j in pinned_idx:
            pinned |= index.mentioned_in(j, j, ids)
        out.append(_Probe(chain_index=c.chain_index, boundary=b, folded_from=c.folded_from, end=end, facts=ids,
                          in_briefing=in_brief, in_kept=kept, in_pinned=pinned))
    return out


@dataclass(frozen=True, kw_only=True)
class ProbeReport:
    """Fact retention of one run: one row per (landed compression, fact met before its boundary)."""

    history_id: str
    briefer: str
    frame: pl.DataFrame
    facts: tuple[Fact, ...]

    def by_compression(self) -> pl.DataFrame:
        """Per compression: facts checked, retained, at risk, and retention by probe type."""
        if self.frame.is_empty():
            return pl.DataFrame(schema={"chain_index": pl.Int64, "facts": pl.Int64, "retained": pl.Int64,
                                        "at_risk": pl.Int64, "retention": pl.Float64})
        base = self.frame.group_by("chain_index", maintain_order=True).agg(
            pl.col("boundary").first(),
            pl.len().alias("facts"),
            pl.col("new").sum().alias("new_facts"),
            pl.col("retained").sum().alias("retained"),
            pl.col("at_risk").sum().alias("at_risk"),
            pl.col("in_briefing").sum().alias("in_briefing"),
            pl.col("retained").mean().alias("retention"),
        )
        per = self.frame.group_by("chain_index", "probe").agg(pl.col("retained").mean().alias("r"))
        wide = per.pivot(on="probe", index="chain_index", values="r")
        for p in PROBES:
            if p not in wide.columns:
                wide = wide.with_columns(pl.lit(None, dtype=pl.Float64).alias(p))
        wide = wide.select("chain_index", *[pl.col(p).alias(f"retention_{p}") for p in PROBES])
        return base.join(wide, on="chain_index", how="left").sort("chain_index")

    def by_probe(self) -> pl.DataFrame:
        """Retention by probe type over every compression (recall, artifact, continuation, decision)."""
        rows = []
        for p in PROBES:
            sub = self.frame.filter(pl.col("probe") == p)
            n = sub.height
            kept = int(sub["retained"].sum()) if n else 0
            rows.append({"probe": p, "checked": n, "retained": kept, "at_risk": n - kept,
                         "retention": kept / n if n else None})
        return pl.DataFrame(rows, schema={"probe": pl.Utf8, "checked": pl.Int64, "retained": pl.Int64,
                                          "at_risk": pl.Int64, "retention": pl.Float64})

    def at_risk(self) -> pl.DataFrame:
        """The facts only the folded span had, per compression (what the agent could not re-read)."""
        return self.frame.filter(pl.col("at_risk"))

    def summary(self) -> dict[str, Any]:
        """Run-level numbers (the ones a sweep adds to its rows)."""
        return summarize_frame(self.frame)


def summarize_frame(frame: pl.DataFrame) -> dict[str, Any]:
    """Retention numbers of a probe frame: pooled over every (compression, fact) pair."""
    n = frame.height
    retained = int(frame["retained"].sum()) if n else 0
    out: dict[str, Any] = {
        "probe_compressions": int(frame["chain_index"].n_unique()) if n else 0,
        "facts_checked": n,
        "facts_retained": retained,
        "facts_at_risk": int(frame.filter(pl.col("at_risk"))["fact_id"].n_unique()) if n else 0,
        "retention": retained / n if n else 1.0,
    }
    for p in PROBES:
        sub = frame.filter(pl.col("probe") == p) if n else frame
        out[f"retention_{p}"] = float(cast(float, sub["retained"].mean())) if sub.height else 1.0
    return out


def probe_summary(run: Run, history: History) -> dict[str, Any]:
    """The numbers of :meth:`ProbeReport.summary` without building a frame (fast path for sweeps)."""
    index = fact_index(history)
    probes = _probes(run, index)
    total = sum(len(p.facts) for p in probes)
    kept_pairs = 0
    at_risk: set[int] = set()
    per = np.zeros(len(PROBES), dtype=np.int64)
    per_n = np.zeros(len(PROBES), dtype=np.int64)
    for p in probes:
        retained = p.in_briefing | p.in_kept | p.in_pinned
        kept_pairs += int(retained.sum())
        at_risk.update(int(x) for x in p.facts[~retained])
        codes = index.probe_codes[p.facts]
        per += np.bincount(codes[retained], minlength=len(PROBES))
        per_n += np.bincount(codes, minlength=len(PROBES))
    out: dict[str, Any] = {
        "probe_compressions": len(probes),
        "facts_checked": total,
        "facts_retained": kept_pairs,
        "facts_at_risk": len(at_risk),
        "retention": kept_pairs / total if total else 1.0,
    }
    for i, name in enumerate(PROBES):
        out[f"retention_{name}"] = float(per[i] / per_n[i]) if per_n[i] else 1.0
    return out


PROBE_COLUMNS = ("probe_compressions", "facts_checked", "facts_retained", "facts_at_risk", "retention",
                 *(f"retention_{p}" for p in PROBES))


def probe_run(run: Run, history: History) -> ProbeReport:
    """Check every fact met before each landed compression's boundary against the post-compaction context.

    ``history`` must be the history ``run`` replayed. Rows: chain_index, boundary, fact_id, kind, probe,
    detail, key, source_index, new (first met in this compression's newly folded span), in_briefing,
    in_kept, in_pinned, retained (any of the three) and at_risk (none of them: only the folded span had it).
    """
    index = fact_index(history)
    rows: dict[str, list[Any]] = {k: [] for k in (
        "chain_index", "boundary", "fact_id", "kind", "probe", "detail", "key", "source_index", "new",
        "in_briefing", "in_kept", "in_pinned")}
    for p in _probes(run, index):
        for j, k in enumerate(p.facts):
            f = index.facts[int(k)]
            rows["chain_index"].append(p.chain_index)
            rows["boundary"].append(p.boundary)
            rows["fact_id"].append(int(k))
            rows["kind"].append(f.kind)
            rows["probe"].append(f.probe)
            rows["detail"].append(f.detail)
            rows["key"].append(f.key)
            rows["source_index"].append(f.index)
            rows["new"].append(f.index >= p.folded_from)
            rows["in_briefing"].append(bool(p.in_briefing[j]))
            rows["in_kept"].append(bool(p.in_kept[j]))
            rows["in_pinned"].append(bool(p.in_pinned[j]))
    schema = {"chain_index": pl.Int64, "boundary": pl.Int64, "fact_id": pl.Int64, "kind": pl.Utf8,
              "probe": pl.Utf8, "detail": pl.Utf8, "key": pl.Utf8, "source_index": pl.Int64, "new": pl.Boolean,
              "in_briefing": pl.Boolean, "in_kept": pl.Boolean, "in_pinned": pl.Boolean}
    frame = pl.DataFrame(rows, schema=schema).with_columns(
        (pl.col("in_briefing") | pl.col("in_kept") | pl.col("in_pinned")).alias("retained"),
        (~(pl.col("in_briefing") | pl.col("in_kept") | pl.col("in_pinned"))).alias("at_risk"),
    )
    return ProbeReport(history_id=run.history_id, briefer=run.briefer, frame=frame, facts=index.facts)


def facts_frame(facts: Iterable[Fact]) -> pl.DataFrame:
    """Facts as a table (kind, probe, key, detail, index) for display."""
    rows = [{"index": f.index, "kind": f.kind, "probe": f.probe, "key": f.key, "detail": f.detail} for f in facts]
    return pl.DataFrame(rows, schema={"index": pl.Int64, "kind": pl.Utf8, "probe": pl.Utf8, "key": pl.Utf8,
                                      "detail": pl.Utf8})


# ── briefer choice ───────────────────────────────────────────────────────────────────────────


def probe_briefer() -> Briefer:
    """The briefer probes use by default: the extractive one, because it writes text offline.

    The simulated briefer writes no text, so with it the briefing retains nothing and retention only
    counts what the kept messages carry; pass it explicitly to measure exactly that.
    """
    from workbench.briefing.extractive import ExtractiveBriefer

    return cast("Briefer", ExtractiveBriefer())


def probe_history(history: History, knobs: Knobs | None = None, briefer: Briefer | None = None) -> ProbeReport:
    """Replay ``history`` with the probe briefer (extractive when present) and probe the run."""
    from workbench.replay import simulate

    run = simulate(history, knobs, briefer or probe_briefer())
    return probe_run(run, history)


def retention_table(reports: Sequence[ProbeReport], labels: Sequence[str] | None = None) -> pl.DataFrame:
    """One row per report: label, history, briefer and the run-level retention numbers."""
    rows = []
    for i, r in enumerate(reports):
        row: dict[str, Any] = {"label": labels[i] if labels else r.history_id, "history": r.history_id,
                               "briefer": r.briefer}
        row.update(r.summary())
        rows.append(row)
    return pl.DataFrame(rows)
