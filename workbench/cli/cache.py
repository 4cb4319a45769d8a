"""``workbench cache stats|clear``: inspect or empty the disk cache of live briefings."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "cache"
HELP = "Show statistics of the live-briefing cache, or clear it."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("stats", "clear"), help="stats: entries, size, hits; clear: remove all")
    parser.add_argument("--dir", type=Path, help="cache directory (default $WORKBENCH_CACHE_DIR or "
                                                 "~/.cache/compaction-workbench)")


def run(args: argparse.Namespace) -> int:
    from workbench.briefing.cache import BriefingCache
    from workbench.history.words import counted

    with BriefingCache(args.dir) as cache:
        if args.action == "clear":
            removed = cache.clear()
            print(f"removed {counted(removed, 'cached briefing')} from {cache.directory}")
            return 0
        s = cache.stats()
        print(f"directory  {s.directory}")
        print(f"entries    {s.entries:,}")
        print(f"size       {s.size_bytes:,} bytes (limit {s.size_limit_bytes:,})")
        print(f"hits       {s.hits:,}  misses {s.misses:,}  ({s.hit_ratio:.0%} hits)")
    return 0
