"""Briefer options shared by the commands that write briefings (``simulate``, ``bundles``, ``real``).

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
    g.add_argument("--max-failures", type=int, default=3, metavar="N",
                   help="live: stop after N failed compressions in a row (default 3; 0 = never)")
    g.add_argument("--max-requests", type=int, metavar="N",
                   help="live: send at most N provider requests (simulate: default from the estimate)")
    g.add_argument("--max-dollars", type=float, metavar="USD",
                   help="live: stop before a request that would take spending past USD (simulate: default from "
                        "the estimate)")
    g.add_argument("--test-models", action="store_true",
                   help="live: first send one tiny real request to each model (a few tokens each) and stop if one fails")
    g.add_argument("--skip-preflight", action="store_true",
                   help="live: start even if the offline check finds no credentials for a model")


def open_cache(args: argparse.Namespace) -> Any:
    """The answer cache the options name; a disk fault is printed once on stderr and the run goes on in memory."""
    import sys

    from workbench.briefing.cache import BriefingCache

    command = getattr(args, "command", None) or "workbench"
    return BriefingCache(args.cache_dir,
                         on_problem=lambda m: print(f"workbench {command}: warning: {m}", file=sys.stderr))


def briefer_from_args(args: argparse.Namespace, *, limits: Any = None, largest_request_tokens: int | None = None) -> Any:
    """The briefer the options name; raises ValueError with the option's name when one is missing.

    A live briefer is checked first (``preflight``: credentials, provider, price and window, offline);
    a check that fails stops here, before any request, unless ``--skip-preflight``.
    """
    if args.briefer == "simulated":
        from workbench.briefing.simulated import SimulatedBriefer

        return SimulatedBriefer()
    if args.briefer == "extractive":
        from workbench.briefing.extractive import ExtractiveBriefer

        return ExtractiveBriefer()
    from workbench.briefing.guard import LiveLimits, blocking, preflight
    from workbench.briefing.live import LiveBriefer
    from workbench.cli.progress import note

    if not args.models and not args.fallback_model:
        raise ValueError("--briefer live needs at least one --model")
    key = None
    if args.api_key_env:
        key = os.environ.get(args.api_key_env)
        if not key:
            raise ValueError(f"--api-key-env: environment variable {args.api_key_env} is not set")
    limits = limits or LiveLimits(max_consecutive_failures=args.max_failures, max_requests=args.max_requests,
                                  max_dollars=args.max_dollars)
    models = list(args.models) + ([args.fallback_model] if args.fallback_model else [])
    checks = preflight(models, api_key=key, api_base=args.api_base, largest_request_tokens=largest_request_tokens)
    for check in checks:
        if check.level != "ok":
            note(f"pre-flight {check.level}: {check.message}")
    errors = blocking(checks)
    if errors and not args.skip_preflight:
        raise ValueError("pre-flight check failed, nothing was sent: " + "; ".join(c.message for c in errors))
    cache = None if args.no_cache else open_cache(args)
    briefer = LiveBriefer(args.models, fallback_model=args.fallback_model, api_base=args.api_base, api_key=key,
                          timeout_s=args.timeout, cache=cache, limits=limits)
    if args.test_models:
        for check in briefer.check_models():
            note(f"test request {check.level}: {check.message}")
            if check.level == "error":
                raise ValueError(f"--test-models: {check.message}")
    return briefer
