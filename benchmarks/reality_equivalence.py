"""What `workbench reality` computes over a folder of logs, written down so two commits can be compared.

    python benchmarks/reality_equivalence.py FOLDER > before.json      # on one commit
    python benchmarks/reality_equivalence.py FOLDER > after.json       # on another
    cmp before.json after.json

A speed change must leave every result alone. This prints, for every log of FOLDER: what the reader made of it
(a hash of every message, the session log, meta and warnings in full), ``follow_log``'s whole
output with the log's usage and with ``usage=False`` (every field, notes included), and, for every window
it replays, a fingerprint of that window's *whole* run (timeline frame, compressions, events, metrics),
which the command itself stops at the first compaction. One JSON document, sorted keys, no timings.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plain import plain  # noqa: E402


def _run_fingerprint(run: Any) -> dict[str, Any]:
    frame = run.timeline.write_csv()
    return {
        "timeline_rows": run.timeline.height,
        "timeline_sha256": hashlib.sha256(frame.encode()).hexdigest(),
        "compressions": plain(run.compressions),
        "events_sha256": hashlib.sha256(json.dumps(plain(run.events), sort_keys=True).encode()).hexdigest(),
        "metrics": plain(run.metrics),
    }


def _history_fingerprint(history: Any) -> dict[str, Any]:
    """What the reader made of the file: every message as its UIMessage, the session log, meta and warnings."""
    messages = json.dumps([m.to_dict() for m in history.messages], sort_keys=False, default=repr,
                          ensure_ascii=False).encode("utf-8", "surrogatepass")
    return {"id": history.id, "source_format": history.source_format,
            "messages_sha256": hashlib.sha256(messages).hexdigest(),
            "log": plain(history.log), "meta": plain(history.meta), "warnings": plain(history.warnings)}


def _cache(count_cache: Any) -> Any:
    """A count cache of the kind the command uses (keyed by the message objects, where this commit has that)."""
    try:
        return count_cache(by_identity=True)
    except TypeError:  # a commit from before CountCache.by_identity
        return count_cache()


def main() -> None:
    from workbench.analysis.real_logs import reality
    from workbench.briefing.simulated import SimulatedBriefer
    from workbench.counting.tokens import CountCache
    from workbench.history.errors import HistoryError
    from workbench.history.readers import load_history
    from workbench.history.readers.discover import agent_logs
    from workbench.replay import simulate

    folder = Path(sys.argv[1])
    windows: list[dict[str, Any]] = []
    first = reality._first_compaction

    def recording(seg: Any, knobs: Any, cache: Any, *, whole: bool) -> Any:
        # The same window replayed to its end in a cache of its own, beside the command's early-stopping one.
        windows.append({"segment": seg.id, "messages": len(seg.messages), "whole": whole,
                        "run": _run_fingerprint(simulate(seg, knobs, SimulatedBriefer(), cache=_cache(CountCache)))})
        return first(seg, knobs, cache, whole=whole)

    reality._first_compaction = recording  # type: ignore[assignment]
    out: dict[str, Any] = {}
    found, _notes = agent_logs(folder)  # as the command finds them: recursively, gzipped logs included
    for path in found:
        try:
            history = load_history(path)
        except HistoryError as exc:  # facts.json and the like: the command skips them too
            out[str(path.relative_to(folder))] = {"skipped": str(exc).replace(str(folder), "FOLDER")}
            continue
        entry: dict[str, Any] = {"messages": len(history.messages), "history": _history_fingerprint(history)}
        for label, usage in (("usage", True), ("ignore_usage", False)):
            windows.clear()
            entry[label] = plain(reality.follow_log(history, usage=usage))
            entry[f"{label}_windows"] = list(windows)
        out[str(path.relative_to(folder))] = entry
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
