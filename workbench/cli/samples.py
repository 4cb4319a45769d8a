"""``workbench samples``: write the synthetic sample histories and their README (``sample_histories/``).

The generator itself is ``workbench.history.samples.generate`` (pure); this face sizes the files with stagewise's
estimate for the README and writes them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from workbench.history.jsjson import js_stringify_len
from workbench.history.model import History
from workbench.history.samples.generate import SAMPLES, Sample
from workbench.history.samples.generate_claude_code import AGENT_LOG_SAMPLES, AgentLogSample
from workbench.history.words import counted
from workbench.io.files import atomic_write_bytes, atomic_write_text
from workbench.stagewise.estimate import estimate_message_tokens

NAME = "samples"
HELP = "Regenerate the synthetic sample histories and their README, byte for byte."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("sample_histories"), help="folder to write into")


def run(args: argparse.Namespace) -> int:
    write_samples(args.out)
    return 0


def history_stats(history: History) -> dict[str, Any]:
    """Messages, stagewise-estimated tokens and the share of them that tool outputs take."""
    tokens = sum(estimate_message_tokens(m) for m in history.messages)
    output_chars = sum(js_stringify_len(p.data["output"]) if "output" in p.data else len(p.error_text or "")
                       for m in history.messages for p in m.tool_parts())
    return {"messages": len(history.messages), "estimated_tokens": tokens,
            "tool_output_share": output_chars / 4 / tokens if tokens else 0.0,
            "tool_calls": sum(len(m.tool_parts()) for m in history.messages)}


def readme_text(rows: list[tuple[Sample | AgentLogSample, dict[str, Any], int]]) -> str:
    """``sample_histories/README.md``, written from the files' real numbers so it cannot drift."""
    lines = [
        "# Sample histories",
        "",
        "Synthetic coding-agent sessions, read with `workbench.load_history`. Most are in our canonical JSONL (a",
        "header line, then one stagewise / AI SDK v6 UIMessage per line), made by `workbench/history/samples/generate.py`;",
        "every decision and constraint planted in a user turn is listed in the header's `meta.facts`.",
        "`claude_code.jsonl` is a session log in Claude Code's own format, as `~/.claude/projects/` holds them, with",
        "the provider's billed usage on every call and one automatic compaction the agent logged, made by",
        "`workbench/history/samples/generate_claude_code.py`: what `workbench reality`, the app's Reality tab and notebook",
        "06 need when `../shared`'s real logs are not there. Regenerate them all byte for byte with:",
        "",
        "    workbench samples --out sample_histories",
        "",
        "Estimated tokens are stagewise's estimate (characters / 4 plus 100 per message).",
        "",
        "| file | format | messages | estimated tokens | tool outputs | tool calls | size | seed | why it exists |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for sample, stats, size in rows:
        lines.append(
            f"| `{sample.name}.jsonl` | {sample.format} | {stats['messages']:,} | {stats['estimated_tokens']:,} | "
            f"{stats['tool_output_share']:.0%} | {stats['tool_calls']:,} | {size / 1e6:.1f} MB | {sample.seed} | {sample.why} |")
    return "\n".join(lines) + "\n"


def write_samples(out: Path) -> None:
    """Write every sample and the README into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[Sample | AgentLogSample, dict[str, Any], int]] = []
    samples: tuple[Sample | AgentLogSample, ...] = (*SAMPLES, *AGENT_LOG_SAMPLES)
    for sample in samples:
        history, text = sample.history_and_text()
        data = text.encode("utf-8")
        atomic_write_bytes(out / f"{sample.name}.jsonl", data)
        rows.append((sample, history_stats(history), len(data)))
        print(f"{sample.name}.jsonl: {counted(len(history), 'message')}, {len(data):,} bytes")
    atomic_write_text(out / "README.md", readme_text(rows))
