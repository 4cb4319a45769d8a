"""The main replay against the agents' own compactions, by repository: what `workbench simulate LOG --json` does
with each log's own settings (its agent's preset, window, model and the user's /compact; no flags), its n-th
compression against the n-th logged compaction.

    python scripts/replay_report.py [DIR ...] [--counter billed|estimate] [--json]

DIR defaults to ../shared/real_sessions_large and ../shared/real_sessions. A compaction's place is the first
message after it (the replay's ``index_started + 1``, the log's loader index). Only automatic compactions are
scored (manual ones are replayed at their place). Files no reader loads (OpenCode, Copilot CLI) are listed as
skipped. ``reality_report.py`` puts the same tables in docs/reality.md (``markdown``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from workbench.analysis.real_logs.agent_settings import agent_settings  # noqa: E402
from workbench.analysis.real_logs.free_replay import AgainstLog, against_log, summary  # noqa: E402
from workbench.counting.prices import Prices  # noqa: E402
from workbench.counting.tokens import CountCache  # noqa: E402
from workbench.history.errors import HistoryError  # noqa: E402
from workbench.history.readers import load_history  # noqa: E402
from workbench.replay import simulate  # noqa: E402

SHARED = Path(os.environ.get("WORKBENCH_SHARED") or ROOT.parent / "shared")
DEFAULT_DIRS = (SHARED / "real_sessions_large", SHARED / "real_sessions")


def _repositories(directory: Path) -> dict[str, str]:
    """file name -> the repository it was published in (``facts.json``'s ``source.repo``)."""
    facts = directory / "facts.json"
    if not facts.is_file():
        return {}
    data = json.loads(facts.read_text(encoding="utf-8"))
    return {s["file"]: (s.get("source") or {}).get("repo", "unknown") for s in data.get("sessions", [])}


def replay_directory(directory: Path, counter: str = "billed", *,
                     cache: CountCache | None = None) -> tuple[dict[str, list[AgainstLog]], list[str]]:
    """Per repository, every log's replay against its compactions; and the files skipped (with why). ``cache``: the
    counts of another pass over the same logs (another counter), so each log is counted and tokenized once."""
    repos = _repositories(directory)
    cache = CountCache() if cache is None else cache
    out: dict[str, list[AgainstLog]] = {}
    skipped: list[str] = []
    for path in sorted(p for p in directory.iterdir() if p.name != "facts.json" and p.suffix in (".jsonl", ".gz", ".json")):
        try:
            history = load_history(path)
        except (HistoryError, ValueError) as exc:
            reason = "no reader for its format" if "unknown history format" in str(exc) else "unreadable"
            skipped.append(f"`{path.name}` ({reason})")
            continue
        if history.log is None:
            skipped.append(f"`{path.name}` (read, but not as an agent log)")
            continue
        knobs = agent_settings(history, dollars=False).knobs.replace(log_counter=counter)
        run = simulate(history, knobs, cache=cache, prices=Prices(model=knobs.model),
                       briefer_prices=Prices(model=knobs.briefer_model))  # positions, not dollars
        row = against_log(run, history)
        assert row is not None
        out.setdefault(repos.get(path.name, "unknown"), []).append(row)
    return out, skipped


def _share(part: int, whole: int) -> str:
    return f"{part} ({part / whole:.0%})" if whole else "–"


COLUMNS = ["repository", "sessions", "automatic compactions", "within ±0", "within ±2", "within ±5", "missed",
           "median error (messages)", "after the log's first: within ±5"]


def table_rows(by_repo: dict[str, list[AgainstLog]]) -> list[list[Any]]:
    """One row per repository and one for all of them (only automatic compactions are counted)."""
    rows = []
    everything: list[AgainstLog] = []
    for repo in sorted(by_repo, key=lambda r: (-len(by_repo[r]), r)):
        everything += by_repo[repo]
        rows.append(_row(f"`{repo}`", summary(by_repo[repo]), summary(by_repo[repo], later=True)))
    rows.append(_row("**all**", summary(everything), summary(everything, later=True)))
    return rows


def _row(name: str, s: dict[str, Any], later: dict[str, Any]) -> list[Any]:
    n = s["auto_compactions"]
    med = "–" if s["median_abs_error"] is None else f"{s['median_abs_error']:g}"
    m = later["auto_compactions"]
    return [name, s["sessions"], n, _share(s["within_0"], n), _share(s["within_2"], n), _share(s["within_5"], n),
            s["missed"], med, f"{later['within_5']} of {m}" if m else "–"]


def markdown(directories: Sequence[Path] = DEFAULT_DIRS, counters: Sequence[str] = ("billed", "estimate")) -> str:
    """The tables for docs/reality.md: per directory and counter, by repository."""
    parts = []
    for directory in directories:
        if not directory.is_dir():
            continue
        cache = CountCache()  # one per folder: its logs are counted once for every counter
        for counter in counters:
            by_repo, skipped = replay_directory(directory, counter, cache=cache)
            parts.append(f"**`{directory.name}`, `log_counter: {counter}`**\n")
            parts.append(_table(COLUMNS, table_rows(by_repo)))
            if skipped:
                parts.append("\nSkipped: " + ", ".join(skipped) + ".")
            parts.append("")
    return "\n".join(parts)


def _table(columns: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    out += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path, default=list(DEFAULT_DIRS))
    parser.add_argument("--counter", choices=("billed", "estimate"), action="append",
                        help="log_counter to replay with (repeatable; default: billed, then estimate)")
    parser.add_argument("--json", action="store_true", help="print the summaries as JSON")
    args = parser.parse_args(argv)
    counters = args.counter or ["billed", "estimate"]
    started = time.perf_counter()
    if args.json:
        out = {}
        for directory in args.dirs:
            cache = CountCache()
            for counter in counters:
                by_repo, skipped = replay_directory(directory, counter, cache=cache)
                every = [r for rows in by_repo.values() for r in rows]
                out[f"{directory.name}:{counter}"] = {
                    "by_repository": {repo: summary(rows) for repo, rows in by_repo.items()},
                    "all": summary(every), "after_the_first": summary(every, later=True), "skipped": skipped}
        print(json.dumps(out, indent=1))
    else:
        print(markdown(args.dirs, counters))
        print(f"_Generated in {time.perf_counter() - started:.1f} s._")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
