"""The scores of ``workbench.analysis.real_logs.real_briefings`` as a terminal table, JSON rows and a markdown section.

The same rows and totals feed ``workbench reality --briefings`` (table, ``--json`` "briefings" list) and the
generator of docs/reality.md (``briefings_markdown``). Pure: values in, text out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.analysis.real_logs.real_briefings import EXAMPLES, BriefingScore

COLUMNS = ("file", "#", "index", "line", "trigger", "facts", "real", "extractive", "at risk", "re-fetches", "tokens")


def _refetch_cell(n: int, restored: int, lost: int) -> str:
    """``6 (2 lost, 3 restored)``: re-fetches, of which files the summary had lost and files the agent restored."""
    extra = ([f"{lost} lost"] if lost else []) + ([f"{restored} restored"] if restored else [])
    return f"{n} ({', '.join(extra)})" if extra else str(n)


def _refetches(s: BriefingScore) -> str:
    return _refetch_cell(s.refetches, s.refetches_restored, s.refetches_at_risk)


def _total_refetches(t: dict[str, Any]) -> str:
    return _refetch_cell(t["refetches"], t["refetches_restored"], t["refetches_at_risk"])


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def briefings_summary(scores: Sequence[BriefingScore]) -> dict[str, Any]:
    """Totals over every scored compaction (pooled over facts), overall and per agent."""
    def totals(rows: Sequence[BriefingScore]) -> dict[str, Any]:
        facts = sum(s.facts for s in rows)
        real = sum(s.retained_real for s in rows)
        ours = sum(s.retained_extractive for s in rows)
        return {
            "compactions": len(rows), "facts": facts, "retained_real": real, "retained_extractive": ours,
            "retention_real": round(real / facts, 4) if facts else None,
            "retention_extractive": round(ours / facts, 4) if facts else None,
            "at_risk": sum(len(s.at_risk) for s in rows), "extractive_at_risk": sum(s.extractive_at_risk for s in rows),
            "refetches": sum(s.refetches for s in rows), "refetch_tokens": sum(s.refetch_tokens for s in rows),
            "refetches_restored": sum(s.refetches_restored for s in rows),
            "refetches_at_risk": sum(s.refetches_at_risk for s in rows),
            "summaries_readable": sum(s.summary_readable for s in rows),
        }

    out = totals(scores)
    agents = sorted({s.agent for s in scores})
    if len(agents) > 1:
        out["by_agent"] = {a: totals([s for s in scores if s.agent == a]) for a in agents}
    return out


def briefings_json(scores: Sequence[BriefingScore]) -> list[dict[str, Any]]:
    """The ``briefings`` list of ``workbench reality --briefings --json``: one object per logged compaction."""
    return [s.to_json() for s in scores]


RIGHT = (False, True, True, True, False, True, True, True, True, True, True)


def briefings_rows(scores: Sequence[BriefingScore]) -> list[list[str]]:
    """The table's rows (``COLUMNS``; right-aligned where ``RIGHT`` says), the pooled totals last."""
    rows = [[s.file, str(s.ordinal), str(s.index), "" if s.source_line is None else str(s.source_line), s.trigger,
             str(s.facts), f"{_pct(s.retention_real)}{'' if s.summary_readable else '*'}",
             _pct(s.retention_extractive), str(len(s.at_risk)), _refetches(s), f"{s.refetch_tokens:,}"]
            for s in scores]
    total = briefings_summary(scores)
    rows.append(["all", "", "", "", "", str(total["facts"]), _pct(total["retention_real"]),
                 _pct(total["retention_extractive"]), str(total["at_risk"]), _total_refetches(total),
                 f"{total['refetch_tokens']:,}"])
    return rows


def briefings_footer(scores: Sequence[BriefingScore]) -> list[str]:
    """The lines under the table: what the asterisk means and two facts at risk per compaction."""
    out = []
    if any(not s.summary_readable for s in scores):
        out.append("* the summary is not readable (Codex: encrypted): only what the agent kept verbatim is scored")
    for s in scores:
        if s.at_risk:
            out.append(f"{s.file} #{s.ordinal} at risk: " + "; ".join(s.at_risk_examples()))
    return out


def format_briefings_table(scores: Sequence[BriefingScore]) -> str:
    """A fixed-width table, one row per logged compaction, then the pooled totals and the footer."""
    rows = briefings_rows(scores)
    widths = [max(len(r[i]) for r in [list(COLUMNS), *rows]) for i in range(len(COLUMNS))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if right else c.ljust(w)
                         for c, w, right in zip(cells, widths, RIGHT, strict=True)).rstrip()

    return "\n".join([line(COLUMNS), line(["-" * w for w in widths]), *(line(r) for r in rows),
                      *briefings_footer(scores)])


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'").replace("\n", " ")


def briefings_markdown(scores: Sequence[BriefingScore], *, heading: str = "## Real briefings, scored") -> str:
    """The docs/reality.md section: per logged compaction, real vs extractive retention, facts at risk
    (count and two examples) and the re-fetches after it (count, tokens), then the totals and how it was measured."""
    total = briefings_summary(scores)
    out = [heading, "",
           "For each compaction the agent logged: the facts of what it folded (files, decisions and constraints, "
           "errors, links, the latest request and plan; `workbench.analysis.fact_probes.facts`), how many its real summary "
           "kept (with what it carried over verbatim), how many the extractive briefer keeps of the same input "
           "at the real summary's length, the facts at risk (in the span, in neither the summary nor what was "
           "kept) and the files the agent read again after it that it had read before (seed 003's re-fetching "
           "frequency; tokens by the agent preset's own estimate of the read results). Claude Code re-attaches "
           "its most recent files itself right after compacting (not logged; the preset's restore model): their "
           "paths count as kept, and a re-fetch of one is marked *restored* (its tokens were paid twice); a "
           "re-fetch marked *lost* reads back a file that was at risk (the summary had dropped it). "
           "Codex's summary is encrypted: its real column (marked \\*) scores only the messages Codex kept "
           "verbatim, and its length is unknown (the extractive target is then the preset's). The extractive "
           "briefer writes what these probes look for (every path, the user's sentences, error lines, verbatim), "
           "so its column is what a text of that length *can* keep by the probes' measure, not a verdict on "
           "which summary serves the agent better.", "",
           "| session | compaction | trigger | facts | real summary | extractive | chars (real / extractive) "
           "| at risk | examples at risk | re-fetches | re-fetch tokens |",
           "|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for s in scores:
        where = f"#{s.ordinal} → {s.index}" + ("" if s.source_line is None else f" (line {s.source_line})")
        mark = "" if s.summary_readable else "\\*"
        examples = "; ".join(f"`{_md(e)}`" for e in s.at_risk_examples(EXAMPLES)) or "–"
        out.append(f"| {_md(s.file)} | {where} | {s.trigger} | {s.facts} | {_pct(s.retention_real)}{mark} "
                   f"({s.retained_real}) | {_pct(s.retention_extractive)} ({s.retained_extractive}) | "
                   f"{'–' if s.summary_chars is None else f'{s.summary_chars:,}'} / {s.extractive_chars:,} | "
                   f"{len(s.at_risk)} | {examples} | {_refetches(s)} | {s.refetch_tokens:,} |")
    rows = [("**all**", total), *((f"*{a}*", t) for a, t in (total.get("by_agent") or {}).items())]
    for label, t in rows:
        out.append(f"| {label} | {t['compactions']} | | {t['facts']} | {_pct(t['retention_real'])} "
                   f"({t['retained_real']}) | {_pct(t['retention_extractive'])} ({t['retained_extractive']}) | | "
                   f"{t['at_risk']} | | {_total_refetches(t)} | {t['refetch_tokens']:,} |")
    notes = [f"- {_md(s.file)} #{s.ordinal}: {_md(n)}" for s in scores for n in s.notes
             if not n.startswith("the summary is encrypted")]
    if notes:
        out += ["", "Notes:", *notes]
    return "\n".join(out) + "\n"
