"""Before/after check for speed work on the probes: the same facts, retention, at-risk rows and briefings.

    python benchmarks/probe_equality.py --against OTHER_CHECKOUT          # shipped samples + ../shared
    python benchmarks/probe_equality.py --against OTHER_CHECKOUT --extra big.jsonl

``OTHER_CHECKOUT`` is a tree of the commit to compare with (``git archive COMMIT | tar -x -C DIR``). Each
tree dumps, in its own fresh process, for every history (``sample_histories``, ``../shared/real_histories``,
``../shared/real_sessions``, any ``--extra`` file) and each of three knob sets: every fact (all fields), every
compression's briefing text from the extractive briefer, the probe report (the per-(compression, fact) rows,
summary, by compression, by probe, at risk), the sweep's fast ``probe_summary``, and for real sessions with
logged compactions ``score_briefings`` (the real summaries and the extractive briefer scored). The two dumps
are compared section by section; any difference is printed and the exit status is 1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plain import plain  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KNOB_SETS: dict[str, dict[str, Any]] = {
    "default": {},
    "window_32k": {"context_window_tokens": 32_000},
    "window_8k": {"context_window_tokens": 8_000, "trigger_hard_cap_tokens": 5_000},
}
SHOWN_CHARS = 400


def histories(extra: list[str]) -> list[Path]:
    shared = Path(os.environ.get("WORKBENCH_SHARED", ROOT.parent / "shared"))
    files = sorted((ROOT / "sample_histories").glob("*.jsonl"))
    for sub in ("real_histories", "real_sessions"):
        files += sorted((shared / sub).glob("*.jsonl"))
    return files + [Path(x) for x in extra]




def dump(paths: list[Path]) -> dict[str, dict[str, str]]:
    """Section name → (sha256, the first characters) per history and knob set, computed in this process."""
    from workbench.analysis.fact_probes.facts import extract_facts
    from workbench.analysis.fact_probes.probes import probe_run, probe_summary
    from workbench.analysis.real_logs.real_briefings import score_briefings
    from workbench.briefing.extractive import ExtractiveBriefer
    from workbench.history.readers import load_history
    from workbench.knobs import Knobs
    from workbench.replay import simulate

    out: dict[str, dict[str, str]] = {}

    def put(name: str, value: Any) -> None:
        text = json.dumps(plain(value), sort_keys=True, ensure_ascii=False)
        out[name] = {"sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
                     "head": text[:SHOWN_CHARS], "chars": str(len(text))}

    for path in paths:
        history = load_history(path)
        base = path.name
        put(f"{base} facts", extract_facts(history))
        if history.log is not None and history.log.compactions:
            put(f"{base} score_briefings", score_briefings(history))
        for label, values in KNOB_SETS.items():
            knobs = Knobs(**values)
            run = simulate(history, knobs, ExtractiveBriefer())
            key = f"{base} [{label}]"
            put(f"{key} briefings", [(c.chain_index, c.status, c.boundary, c.record.text) for c in run.compressions])
            report = probe_run(run, history)
            put(f"{key} probe rows", report.frame.to_dicts())
            put(f"{key} summary", report.summary())
            put(f"{key} by_compression", report.by_compression().to_dicts())
            put(f"{key} by_probe", report.by_probe().to_dicts())
            put(f"{key} at_risk", report.at_risk().select("chain_index", "kind", "key", "source_index").to_dicts())
            put(f"{key} probe_summary", probe_summary(run, history))
            out[f"{key} counts"] = {"sha256": "", "head": f"{len(run.compressions)} compressions, "
                                    f"{report.frame.height} rows, {len(report.facts)} facts", "chars": ""}
    return out


def run_dump(root: Path, paths: list[Path], target: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(root), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    code = (f"import json, sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import probe_equality as q; "
            f"json.dump(q.dump([__import__('pathlib').Path(p) for p in {[str(p) for p in paths]!r}]), "
            f"open({str(target)!r}, 'w'))")
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=root)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="a checkout of the commit to compare with")
    parser.add_argument("--extra", nargs="*", default=[], help="more history files")
    args = parser.parse_args()
    paths = histories(args.extra)
    with tempfile.TemporaryDirectory(prefix="probe-equality-") as tmp:
        dumps = []
        for root in (args.against.resolve(), ROOT):
            target = Path(tmp) / f"{len(dumps)}.json"
            run_dump(root, paths, target)
            dumps.append(json.loads(target.read_text()))
    before, after = dumps
    differ = [k for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
    checked = [k for k in before if not k.endswith(" counts")]
    for k in before:
        if k.endswith(" counts"):
            print(f"{k}: {before[k]['head']}")
    print(f"\n{len(paths)} histories, {len(KNOB_SETS)} knob sets, {len(checked)} sections compared: "
          f"{len(checked) - len(differ)} identical, {len(differ)} differ")
    for k in differ:
        print(f"\nDIFFERS: {k}\n  before: {before.get(k, {}).get('head')}\n  after:  {after.get(k, {}).get('head')}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
