"""The issue's held-out targets in one short run (items 2, 3 and 4 of #20), by session and by repository.

``python scripts/reality_targets.py`` prints, for ../shared/real_sessions_large: the estimate alone within ±5
messages (item 4), the context after a compaction within ±10% with usage (item 2) and the bill within ±10% in
bill units with usage ignored (item 3), each with the session left out and with its repository left out (and the
bill of the repository fold's context by the session fold's bill model: how far a bill model alone can take it). The
same folds as docs/reality.md (``scripts/reality_after_bill.py``), without the rest of the report: the command
each step of the work measured itself with.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from reality_after_bill import _after_count, _bill_count, _oracle, _target_line, load_folds  # noqa: E402
from reality_estimate import share  # noqa: E402

from workbench.counting.tokens import CountCache  # noqa: E402


def targets(large: Path, small: Path) -> dict[str, tuple[int, int]]:
    """(hits, n) per target and fold on the large set."""
    cache = CountCache(by_identity=True)
    folds, _ = load_folds(large, small, cache)
    out: dict[str, tuple[int, int]] = {}
    for fold in ("session", "repository"):
        ignored = folds.held_out(usage=False, fold=fold, groups=("large",))
        used = folds.held_out(usage=True, fold=fold, groups=("large",))
        out[f"item4 estimate ±5 msgs, {fold} out"] = share(ignored)
        out[f"item2 after ±10% with usage, {fold} out"] = _target_line({(True, fold): used}, _after_count,
                                                                      (True, fold), "large")
        out[f"item3 bill ±10% usage ignored, {fold} out"] = _target_line({(False, fold): ignored}, _bill_count,
                                                                        (False, fold), "large")
        out[f"bill, cache model on logged context, {fold} out"] = _oracle(folds, ignored)
    # The repository fold's context billed by the session fold's bill model (fitted with the rest of the repository):
    # what any bill model could reach on that fold's context.
    seen = folds.held_out(usage=False, fold="repository", groups=("large",), bill_fold="session")
    out["bill, repository out, bill model session out"] = _target_line({(False, "repository"): seen}, _bill_count,
                                                                      (False, "repository"), "large")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--large", type=Path, default=ROOT.parent / "shared" / "real_sessions_large")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    found = targets(args.large, Path("/nonexistent"))
    if args.json:
        print(json.dumps(found, indent=1))
    else:
        for name, (hit, n) in found.items():
            print(f"{name}: {hit}/{n} ({hit / max(n, 1):.0%})")
        print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
