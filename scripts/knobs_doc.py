"""Write docs/knobs.md, the table of every knob, from ``KNOB_SPECS`` (so it cannot drift from the code).

    python scripts/knobs_doc.py            # rewrite docs/knobs.md
    python scripts/knobs_doc.py --check    # exit 1 when docs/knobs.md differs from what the specs generate

``tests/test_readme.py`` runs the check: after a change to a knob's spec, rerun this script and commit the page.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from workbench.io.files import atomic_write_text  # noqa: E402
from workbench.knobs import knobs_markdown  # noqa: E402

TARGET = REPO / "docs" / "knobs.md"
HEADER = """# Knobs

Every knob of `workbench.Knobs`, generated from `KNOB_SPECS` (`workbench/knobs/specs.py`) by
`python scripts/knobs_doc.py`; do not edit by hand (`tests/test_readme.py` checks this page matches the specs).

A knob's name is its address everywhere: the app's sidebar, a YAML file (`workbench simulate H --config
FILE.yaml`), `--set name=value` on the command line, and a sweep's columns. Which knobs a strategy reads is up to
the strategy (`workbench/policies/`); the presets set them from the agents' own sources (`workbench presets NAME`,
[strategies.md](strategies.md)). The groups: *policy* and *model* say what runs; *replay* when the context is
checked; *counting* how tokens are counted; *trigger* when a compaction starts; *keep* which recent messages stay
verbatim (the kept budget); *pins* what is never folded; *briefing* and *briefer* what the summary is like;
*guards* and *prune* the extra rules.

"""


def render() -> str:
    """The whole page: the header above, then ``knobs_markdown()``."""
    return HEADER + knobs_markdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when the page is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.is_file() else ""
        if current != text:
            print(f"{TARGET.relative_to(REPO)} is stale: run python scripts/knobs_doc.py", file=sys.stderr)
            return 1
        return 0
    atomic_write_text(TARGET, text)
    print(f"wrote {TARGET.relative_to(REPO)} ({len(knobs_markdown().splitlines()) - 2} knobs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
