"""``workbench real HISTORY``: check each real stagewise compression against the policy, diff a new briefing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.briefers import add_briefer_arguments, briefer_from_args
from workbench.cli.common import add_knob_arguments, knobs_from_args

NAME = "real"
HELP = "Replay the compressions stored in a stagewise chat: boundary check and a diff of a new briefing."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("history", type=Path, help="a stagewise instances.sqlite or a JSON export with briefings")
    parser.add_argument("--chat-id", help="only this chat of a stagewise store")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--diff", action="store_true", help="print the unified diff of each briefing")
    add_knob_arguments(parser)
    add_briefer_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from workbench.analysis.real_logs.stagewise_real import as_dict, load_real_histories, replay_real

    knobs = knobs_from_args(args)
    briefer = briefer_from_args(args)
    replays = [replay_real(h, knobs, briefer) for h in load_real_histories(args.history, chat_id=args.chat_id)
               if h.briefing_indices()]
    if args.json:
        from workbench.io.files import json_text, write_stream

        write_stream(sys.stdout, json_text([as_dict(r) for r in replays], indent=2) + "\n")
        return 0
    if not replays:
        print("no stored briefings found")
    for r in replays:
        print(r.summary())
        if args.diff:
            for c in r.compressions:
                if c.diff is not None:
                    print(c.diff.unified)
    return 0
