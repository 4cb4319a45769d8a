"""``workbench bundles HISTORY --out DIR``: playground bundles, one folder per compression (stagewise §10)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.briefers import add_briefer_arguments, briefer_from_args
from workbench.cli.common import add_knob_arguments, knobs_from_args, show_warnings
from workbench.history.words import counted

NAME = "bundles"
HELP = "Write playground bundles (prompt, user message, compact history, output, metadata) per compression."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("history", type=Path, help="history file; a stagewise instances.sqlite gives every chat")
    parser.add_argument("--out", type=Path, required=True, help="folder to write into (must be empty or new)")
    parser.add_argument("--force", action="store_true",
                        help="replace a bundles folder written before, whole (one that holds other files is refused)")
    parser.add_argument("--chat-id", help="only this chat of a stagewise store")
    parser.add_argument("--channel", default="workbench", help="the channel field of metadata.json")
    parser.add_argument("--no-host", action="store_true",
                        help="serialize without the app's browser markers (byte-identical to stagewise's script)")
    add_knob_arguments(parser)
    add_briefer_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from workbench.analysis.bundles import make_bundles
    from workbench.analysis.real_logs.stagewise_real import load_real_histories
    from workbench.replay import simulate

    out: Path = args.out
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not args.force:
            raise ValueError(f"--out {out} is not empty; pass --force to replace the bundles in it")
        _refuse_foreign(out)
    knobs = knobs_from_args(args)
    histories = load_real_histories(args.history, chat_id=args.chat_id)
    for h in histories:
        show_warnings(NAME, h)
    # Chats are numbered newest first, as stagewise's script lists them.
    histories.sort(key=lambda h: -_number(h.meta.get("last_message_at")) if isinstance(h.meta, dict) else 0)
    briefer = None
    files: dict[str, str] = {}
    number = 0
    for history in histories:
        if not history.messages:
            continue
        run_ = None
        if not history.briefing_indices():
            briefer = briefer or briefer_from_args(args)
            run_ = simulate(history, knobs, briefer)
            if not any(c.summarize for c in run_.compressions):
                continue
        number += 1
        files.update(make_bundles(history, run_, channel=args.channel, chat_number=number, host=not args.no_host))
    replaced = write_bundle_files(out, files)
    folders = len({rel.rsplit("/", 1)[0] for rel in files})
    print(f"wrote {counted(folders, 'compression bundle')} for {counted(number, 'chat')} into {out}")
    if replaced:
        print(f"workbench bundles: warning: {replaced:,} lone surrogate(s) written as U+FFFD in the Markdown and XML "
              "files (metadata.json keeps them as \\u escapes)", file=sys.stderr)
    return 0


def _refuse_foreign(out: Path) -> None:
    """--force replaces the folder whole: refuse one that holds anything a bundles run did not write (a link too)."""
    import os

    from workbench.analysis.bundles import foreign_paths

    paths: list[str] = []
    links: list[str] = []
    for folder, dirs, names in os.walk(out):  # links are not followed
        for name in dirs + names:
            path = Path(folder, name)
            (links if path.is_symlink() else paths).append(path.relative_to(out).as_posix())
    foreign = sorted(links + foreign_paths(paths))
    if foreign:
        more = f" and {len(foreign) - 1:,} more" if len(foreign) > 1 else ""
        raise ValueError(f"--out {out} holds files that are not bundles ({foreign[0]}{more}); --force replaces the "
                         "folder whole, so give it a bundles folder or an empty one")


def write_bundle_files(out: Path, files: dict[str, str]) -> int:
    """Write every bundle file into a temporary folder, then put it in place (a killed run leaves no half
    bundle). JSON keeps lone surrogates as escapes; Markdown and XML get U+FFFD. Returns how many were replaced."""
    from workbench.io.files import atomic_folder, encodable, escape_surrogates

    replaced = 0
    with atomic_folder(out) as tmp:
        for rel, text in files.items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if rel.endswith(".json"):
                clean = escape_surrogates(text)
            else:
                clean, n = encodable(text)
                replaced += n
            path.write_bytes(clean.encode("utf-8"))
    return replaced


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
