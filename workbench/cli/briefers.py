"""Briefer options shared by the commands that write briefings (``bundles``, ``real``).

API keys are never taken on the command line (shell history keeps them): litellm reads the
provider's usual variable (OPENAI_API_KEY, GEMINI_API_KEY, ...), or ``--api-key-env`` names one.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

BRIEFERS = ("simulated", "extractive", "live")


def add_briefer_arguments(parser: argparse.ArgumentParser, *, default: str = "extractive") -> None:
    g = parser.add_argument_group("briefer")
    g.add_argument("--briefer", choices=BRIEFERS, default=default, help=f"who writes briefings (default {default})")
    g.add_argument("--model", dest="models", action="append", default=[], metavar="MODEL",
                   help="live: a litellm model name, tried in the order given (repeatable)")
    g.add_argument("--fallback-model", help="live: tried last if not already in the list")
    g.add_argument("--api-base", help="live: an OpenAI-compatible endpoint for every model")
    g.add_argument("--api-key-env", metavar="VAR", help="live: read the API key from this environment variable")
    g.add_argument("--timeout", type=float, default=30.0, help="live: seconds per attempt (default 30)")
    g.add_argument("--cache-dir", type=Path, help="live: answer cache (default $WORKBENCH_CACHE_DIR or ~/.cache/...)")
    g.add_argument("--no-cache", action="store_true", help="live: do not read or write the answer cache")


def briefer_from_args(args: argparse.Namespace) -> Any:
    """The briefer the options name; raises ValueError with the option's name when one is missing."""
    if args.briefer == "simulated":
        from workbench.briefing.simulated import SimulatedBriefer

        return SimulatedBriefer()
    if args.briefer == "extractive":
        from workbench.briefing.extractive import ExtractiveBriefer

        return ExtractiveBriefer()
    from workbench.briefing.cache import BriefingCache
    from workbench.briefing.live import LiveBriefer

    if not args.models and not args.fallback_model:
        raise ValueError("--briefer live needs at least one --model")
    key = None
    if args.api_key_env:
        key = os.environ.get(args.api_key_env)
        if not key:
            raise ValueError(f"--api-key-env: environment variable {args.api_key_env} is not set")
    cache = None if args.no_cache else BriefingCache(args.cache_dir)
    return LiveBriefer(args.models, fallback_model=args.fallback_model, api_base=args.api_base, api_key=key,
                       timeout_s=args.timeout, cache=cache)
