"""Before/after check for work on the replay loop: every preset's run of every history, identical.

    python benchmarks/replay_equality.py --against OTHER_CHECKOUT          # shipped samples + ../shared
    python benchmarks/replay_equality.py --against OTHER_CHECKOUT --extra big.jsonl

``OTHER_CHECKOUT`` is a tree of the commit to compare with (``git archive COMMIT | tar -x -C DIR``). Each tree
replays, in its own fresh process, every history (``sample_histories``, ``../shared/real_sessions``, any
``--extra`` file) under the default knobs, every preset, and three of them with every guard on (cooldown,
manual checks, reactive compaction, latency, thrash and ineffective flags), with the size-model briefer, and hashes the whole
Run: the timeline (every column), every compression (its briefing text included), the events, the metrics, the
limits and the notes. The two dumps are compared run by run; any difference is printed and the exit status is 1.
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
SHOWN_CHARS = 300
GUARDS = {"context_window_tokens": 60_000, "trigger_hard_cap_tokens": 40_000, "cooldown_checks": 3,
          "manual_compact_checks": "2, 9, 40", "reactive_compaction": True, "latency_steps": 2,
          "thrash_window_checks": 6, "min_savings_ratio": 0.3}


def histories(extra: list[str]) -> list[Path]:
    shared = Path(os.environ.get("WORKBENCH_SHARED", ROOT.parent / "shared"))
    files = sorted((ROOT / "sample_histories").glob("*.jsonl")) + sorted((shared / "real_sessions").glob("*.jsonl"))
    return files + [Path(x) for x in extra]


def dump(paths: list[Path]) -> dict[str, dict[str, str]]:
    """"history [knob set]" → (sha256, the first characters) of its Run, computed in this process."""
    from workbench.counting.tokens import CountCache
    from workbench.history.readers import load_history
    from workbench.knobs import Knobs
    from workbench.presets import get_preset, list_preset_names
    from workbench.replay import simulate

    sets: dict[str, Knobs] = {"default": Knobs(), **{name: get_preset(name) for name in list_preset_names()}}
    for name, base in (("default", Knobs()), ("claude_code", get_preset("claude_code")),
                       ("staged", get_preset("staged"))):  # every guard at work: no preset turns them all on
        sets[f"{name}+guards"] = base.replace(**GUARDS)
    out: dict[str, dict[str, str]] = {}
    for path in paths:
        history = load_history(path)
        cache = CountCache()
        for label, knobs in sets.items():
            run = simulate(history, knobs, cache=cache)
            value = {"timeline": run.timeline.to_dict(as_series=False), "compressions": [c.to_dict() for c in
                     run.compressions], "events": run.events, "metrics": run.metrics, "limits": run.limits,
                     "notes": run.notes, "log_notes": run.log_notes, "billed": run.billed}
            text = json.dumps(plain(value), sort_keys=True, ensure_ascii=False)
            out[f"{path.name} [{label}]"] = {
                "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
                "head": f"{len(run.compressions)} compressions; {text[:SHOWN_CHARS]}"}
    return out


def run_dump(root: Path, paths: list[Path], target: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(root), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    code = (f"import json, sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import replay_equality as q; "
            f"json.dump(q.dump([__import__('pathlib').Path(p) for p in {[str(p) for p in paths]!r}]), "
            f"open({str(target)!r}, 'w'))")
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=root)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="a checkout of the commit to compare with")
    parser.add_argument("--before", type=Path, help="instead: a dump kept by an earlier --keep (its before.json)")
    parser.add_argument("--extra", nargs="*", default=[], help="more history files")
    parser.add_argument("--keep", type=Path, help="also write both dumps into this folder")
    args = parser.parse_args()
    if (args.against is None) == (args.before is None):
        parser.error("give one of --against and --before")
    paths = histories(args.extra)
    with tempfile.TemporaryDirectory(prefix="replay-equality-") as tmp:
        dumps: list[dict[str, Any]] = [json.loads(args.before.read_text())] if args.before else []
        for root in ([] if args.before else [args.against.resolve()]) + [ROOT]:
            target = Path(tmp) / f"{len(dumps)}.json"
            run_dump(root, paths, target)
            dumps.append(json.loads(target.read_text()))
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / ("before.json" if len(dumps) == 1 else "after.json")).write_text(target.read_text())
    before, after = dumps
    differ = [k for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
    compressions = sum(int(v["head"].split(" ", 1)[0]) for v in before.values())
    print(f"{len(paths)} histories, {len(before)} runs ({compressions:,} compressions) compared: "
          f"{len(before) - len(differ)} identical, {len(differ)} differ")
    for k in differ:
        print(f"\nDIFFERS: {k}\n  before: {before.get(k, {}).get('head')}\n  after:  {after.get(k, {}).get('head')}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
