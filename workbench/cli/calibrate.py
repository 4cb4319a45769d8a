"""``workbench calibrate PATH... --out knobs.yaml``: fit the counting knobs of your agent to its own logs.

Fits the hidden prefix (what every call carries that the transcript lacks), the token ratio (billed tokens per
counted token), the tokens restored after a compaction and, with ``--trigger``, the trigger itself; then the
briefing size model (``sim_*``) to the agent's own summaries and the restore to the context each compaction left
(``explore.briefer_calibration.fit_after``), and the bill model (``analysis.real_logs.bill.fit_bill_model``, reported, not a
knob). Reports how well the fit explains the logs and its leave-one-session-out error (each session predicted,
without usage, by a fit that did not see it). The YAML written is the agent's preset with the fitted values: your
agent as it really behaves, the starting point for tuning.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from workbench.history.words import counted

NAME = "calibrate"
HELP = "Fit hidden prefix, token ratio, restore and (opt-in) trigger to agent logs; write them as knobs YAML."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="agent logs, or folders of them")
    parser.add_argument("--out", type=Path, help="write the calibrated knobs here (one file per agent found)")
    parser.add_argument("--preset", help="the preset the fitted values go into (default: the newest log's)")
    parser.add_argument("--trigger", action="store_true", help="also fit the trigger threshold to the logged ones")
    parser.add_argument("--no-held-out", action="store_true", help="skip the leave-one-session-out check")
    parser.add_argument("--json", action="store_true", help="print the fit as JSON")


def run(args: argparse.Namespace) -> int:
    from workbench.cli.reality import loaded, log_paths

    logs = log_paths(list(args.paths))  # a missing path is refused before polars and the engine load
    from workbench.analysis.real_logs.agent_settings import agent_settings
    from workbench.analysis.real_logs.calibration import calibrate
    from workbench.cli.progress import note
    from workbench.history.session_log import parse_version
    from workbench.knobs import dump_knobs

    histories = loaded(logs, list(args.paths), NAME)
    usable = [h for h in histories if h.log is not None and h.log.calls]
    for h in histories:
        if h not in usable:
            why = (f"a {h.log.agent} log" if h.log is not None else "not an agent log")  # Copilot CLI logs hold none
            note(f"{h.source_path or h.id}: no billed usage in it ({why}): left out")
    if not usable:
        names = ", ".join(str(h.source_path or h.id) for h in histories[:5]) + (" ..." if len(histories) > 5 else "")
        raise ValueError(f"{names}: no agent log with billed usage among them (Claude Code, Codex, OpenCode, Gemini CLI, "
                         "Pi): nothing to fit")
    try:
        result = calibrate(usable, fit_trigger=args.trigger, held_out=not args.no_held_out)
    except ValueError as exc:  # the fit's own words name no file: say which logs were fitted
        names = ", ".join(str(h.source_path or h.id) for h in usable[:5]) + (" ..." if len(usable) > 5 else "")
        raise ValueError(f"{names}: {exc}") from None
    afters, bills = _after_and_bill_fits(usable)
    written: list[tuple[str, Path]] = []
    outputs: dict[str, str] = {}
    for fit in result.fits:
        mine = [h for h in usable if h.log is not None and h.log.agent == fit.agent]
        newest = max(mine, key=lambda h: parse_version(h.log.version if h.log else None))
        base = agent_settings(newest, preset=args.preset)
        knobs = fit.knobs_for(base.knobs, trigger=args.trigger, preset=base.preset)
        after = afters.get(fit.agent)
        if after is not None:
            knobs = after.knobs(knobs)
        outputs[fit.agent] = _header(fit, base.preset, result.held_out_summary, after) + dump_knobs(knobs)
    if args.out is not None:
        for agent, text in outputs.items():
            path = args.out if len(outputs) == 1 else args.out.with_name(f"{args.out.stem}.{agent}{args.out.suffix}")
            _write_atomic(path, text)
            written.append((agent, path))
    if args.json:
        out = _as_json(result, written)
        out["after_compaction"] = {agent: _after_json(a) for agent, a in afters.items()}
        out["bill_models"] = {name: m.to_json() for name, m in bills.items()}
        json.dump(out, sys.stdout, indent=2)
        print()
        return 0
    _print_fits(result)
    _print_after_and_bills(afters, bills)
    for agent, path in written:
        print(f"wrote {path} ({agent}): load it with --config, or in the app's YAML tab")
    return 0


def _after_and_bill_fits(histories: list[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per agent, the size model and restore fitted to its logged compactions; per agent and version family
    (when two logs or more have it), the bill model."""
    from workbench.analysis.real_logs.agent_settings import agent_settings
    from workbench.analysis.real_logs.bill import fit_bill_models
    from workbench.analysis.real_logs.reality import follow_log
    from workbench.counting.tokens import CountCache
    from workbench.explore.briefer_calibration import fit_after

    cache = CountCache(by_identity=True)
    runs = [(h, follow_log(h, usage=True, cache=cache)) for h in histories]
    afters: dict[str, Any] = {}
    bills: dict[str, Any] = {}
    for agent in sorted({r.agent for _, r in runs if r.agent}):
        mine = [(h, r) for h, r in runs if r.agent == agent]
        records = [a for _, r in mine for a in r.afters]
        if records:
            afters[agent] = fit_after(records, agent_settings(mine[-1][0], dollars=False).knobs)
        bills.update(fit_bill_models(agent, [(h, r.calls, r.version) for h, r in mine]))
    return afters, bills


def _after_json(after: Any) -> dict[str, Any]:
    m = after.model
    return {"sim_new_chars_ratio": round(m.new_chars_ratio, 4), "sim_overshoot_ratio": round(m.overshoot_ratio, 4),
            "sim_min_chars": m.min_chars, "compaction_restore_tokens": after.restore_tokens,
            "compactions": after.compactions, "summaries": after.pairs}


def _print_after_and_bills(afters: dict[str, Any], bills: dict[str, Any]) -> None:
    from workbench.cli.progress import print_table

    if afters:
        rows = [[agent, a.pairs, a.compactions, f"{a.model.new_chars_ratio:.3f}", f"{a.model.min_chars:,}",
                 f"{a.model.overshoot_ratio:.2f}", f"{a.restore_tokens:,}"] for agent, a in afters.items()]
        print_table(["agent", "summaries", "compactions", "sim_new_chars_ratio", "sim_min_chars", "sim_overshoot_ratio",
                     "compaction_restore_tokens"], rows, title="Briefing size and restore, fitted to the logged "
                    "compactions (written into the YAML)", right=[False] + [True] * 6, width=200)
    if bills:
        from workbench.analysis.real_logs.bill import bill_model_table

        headers, rows = bill_model_table(bills)
        print_table(headers, rows, title="Bill model (analysis.real_logs.bill): what the cache rules and the transcript "
                    "do not tell", right=[False] + [True] * (len(headers) - 1), width=240)


def _header(fit: Any, preset: str | None, held_out: dict[str, Any], after: Any = None) -> str:
    lines = [f"# Calibrated by `workbench calibrate` on {counted(len(fit.sessions), f'{fit.agent} log')}: "
             + ", ".join(fit.sessions),
             f"# from preset {preset}; fitted: hidden_prefix_tokens {fit.hidden_prefix_tokens:,}, "
             f"token_ratio {fit.token_ratio:.3f}, compaction_restore_tokens {fit.compaction_restore_tokens:,} "
             f"({counted(fit.checks, 'call interval')}, median error {fit.residual_tokens_median:,.0f} tokens)"]
    if fit.structure:
        lines.append("# the structure's weights: " + ", ".join(f"{k} {v:g}" for k, v in fit.structure.items()))
    if after is not None:
        m = after.model
        summaries = counted(after.pairs, "logged summary", "logged summaries")
        lines.append(f"# briefing size fitted to {summaries}: sim_new_chars_ratio "
                     f"{m.new_chars_ratio:.3f}, sim_min_chars {m.min_chars:,}; compaction_restore_tokens "
                     f"{after.restore_tokens:,} from the context after {counted(after.compactions, 'compaction')}")
    per = (held_out.get("by_agent") or {}).get(fit.agent) or held_out
    if per.get("auto_compactions"):
        lines.append(f"# leave-one-session-out: {per['within_5']} of {counted(per['auto_compactions'], 'automatic compaction')} "
                     f"predicted within 5 messages without usage")
    return "\n".join(lines) + "\n"


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, so a crash leaves the old file."""
    import os
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


FIT_COLUMNS = ["agent", "logs", "hidden prefix", "token ratio", "per tool call", "per user turn", "per reasoning block",
               "per encrypted char", "restore", "intervals", "median error", "p90 error", "image tokens",
               "trigger share of window"]


def fit_rows(fits: Any, *, none: str = "-") -> list[list[Any]]:
    """One row per agent fit, in ``FIT_COLUMNS`` order (the CLI's table and docs/reality.md's)."""
    rows = []
    for f in fits:
        trigger = "; ".join(f"{p} {lo:.2%}–{hi:.2%}" for p, (lo, hi) in f.trigger_intervals.items()) or none
        images = "; ".join(f"{n}: {m:,} billed vs {r:,} by the rule" for n, m, r in f.image_tokens_measured) or none
        weights = [f.structure.get(k) for k in ("tool_call_tokens", "user_turn_tokens", "reasoning_block_tokens")]
        per_char = f.structure.get("reasoning_encrypted_ratio")
        rows.append([f.agent, len(f.sessions), f"{f.hidden_prefix_tokens:,}", f"{f.token_ratio:.3f}",
                     *(none if w is None else f"{w:,.0f}" for w in weights),
                     none if per_char is None else f"{per_char:.4f}",
                     f"{f.compaction_restore_tokens:,}", f"{f.checks:,}", f"{f.residual_tokens_median:,.0f}",
                     f"{f.residual_tokens_p90:,.0f}", images, trigger])
    return rows


def _print_fits(result: Any) -> None:
    from workbench.cli.progress import print_table

    print_table(FIT_COLUMNS, fit_rows(result.fits), title="Fitted to the logs' billed usage",
                right=[False, *[True] * 11, False, False], width=240)
    held = result.held_out
    if held:
        rows = []
        for s in held:
            for c in s.compactions:
                rows.append([s.file, s.agent, c.real_index, c.trigger,
                             "none" if c.predicted_index is None else c.predicted_index,
                             "-" if c.error is None else f"{c.error:+d}"])
        print_table(["file", "agent", "real", "trigger", "predicted", "delta"], rows,
                    title="Leave-one-session-out: each log predicted without usage by a fit that left it out",
                    right=[False, False, True, False, True, True])
        s = result.held_out_summary
        auto = s.get("auto_compactions") or 0
        print(f"held out: {counted(auto, 'automatic compaction')}; within ±2: {s.get('within_2')}, within ±5: "
              f"{s.get('within_5')} ({(s.get('within_5') or 0) / auto:.0%}); missed: {s.get('missed')}"
              if auto else "held out: no automatic compaction to predict")
    for f in result.fits:
        for line in f.notes:
            print(f"note: {line}", file=sys.stderr)


def _as_json(result: Any, written: list[tuple[str, Path]]) -> dict[str, Any]:
    fits = []
    for f in result.fits:
        fits.append({"agent": f.agent, "sessions": list(f.sessions), "hidden_prefix_tokens": f.hidden_prefix_tokens,
                     "token_ratio": round(f.token_ratio, 4), "compaction_restore_tokens": f.compaction_restore_tokens,
                     "structure": dict(f.structure),
                     "checks": f.checks, "residual_tokens_median": round(f.residual_tokens_median, 1),
                     "residual_tokens_p90": round(f.residual_tokens_p90, 1),
                     "image_tokens_measured": [{"file": a, "billed": b, "rule": c} for a, b, c in
                                               f.image_tokens_measured],
                     "trigger_intervals": {p: list(v) for p, v in f.trigger_intervals.items()},
                     "notes": list(f.notes)})
    return {"fits": fits, "held_out": {"sessions": [s.to_json() for s in result.held_out],
                                       "summary": result.held_out_summary},
            "written": {agent: str(path) for agent, path in written}}
