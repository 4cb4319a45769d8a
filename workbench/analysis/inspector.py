"""What one compression saw and wrote: folded and kept messages, the briefer's input, its output.

The replay keeps sizes, not the briefer's input text, so ``compression_view`` rebuilds it the way the
replay did: the compact transcript from the last briefing before the boundary (stagewise §6), with
that briefing wrapped in ``<previous-chat-history>``. Size-only briefings have no text; a bracketed
placeholder stands in for them and the budget hint still uses the real size. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from workbench.briefing.prompt import build_user_message
from workbench.history.model import History, Message
from workbench.io.files import encodable
from workbench.replay import Compression, Run
from workbench.stagewise.serialize import serialize_compact_history, serialize_message

PREVIEW_CHARS = 120


def message_preview(msg: Message, width: int = PREVIEW_CHARS) -> str:
    """The first ``width`` characters a reader would recognise: text, else tool markers, else part kinds."""
    text = " ".join(msg.text.split())
    if not text:
        chunk = serialize_message(msg)
        if chunk:
            text = " ".join(chunk.replace("<assistant>", "").replace("</assistant>", "").split())
    if not text:
        kinds = []
        for part in msg.parts or ():
            name = part.tool_name
            kinds.append(f"{part.kind} {name}" if name else part.kind)
        text = "[" + ", ".join(kinds) + "]" if kinds else "[no parts]"
    text = text if len(text) <= width else text[: width - 1] + "…"
    return encodable(text)[0]  # display text: a lone surrogate shows as U+FFFD (polars and the browser need UTF-8)


def message_previews(history: History, width: int = PREVIEW_CHARS) -> list[str]:
    """``message_preview`` of every message, in order (the context chart's hover text)."""
    return [message_preview(m, width) for m in history.messages]


def messages_frame(history: History, lo: int, hi: int, *, width: int = PREVIEW_CHARS) -> pl.DataFrame:
    """Messages [lo, hi) as rows: index, role, parts, preview."""
    rows = [
        {"index": i, "role": m.role, "parts": len(m.parts or ()), "preview": message_preview(m, width)}
        for i, m in enumerate(history.messages[lo:hi], start=lo)
    ]
    schema = {"index": pl.Int64, "role": pl.Utf8, "parts": pl.Int64, "preview": pl.Utf8}
    return pl.DataFrame(rows, schema=schema)


@dataclass(frozen=True, kw_only=True)
class CompressionView:
    """Everything the inspector shows for one compression."""

    compression: Compression
    folded: pl.DataFrame  # messages newly folded into the briefing by this compression
    kept: pl.DataFrame  # messages kept verbatim when it started
    compact_history: str  # the transcript the briefer read
    user_message: str  # compact history + budget hint + closing instruction
    briefing: str | None  # the text written (extractive, live, cached), None for size-only
    briefing_label: str  # what kind of briefing this is, for a caption


def _placeholder(chars: int) -> str:
    return f"[simulated briefing: {chars:,} characters, size only]"


def compression_view(run: Run, history: History, position: int) -> CompressionView:
    """The inspector's view of ``run.compressions[position]`` (history: the one the run replayed)."""
    comp = run.compressions[position]
    h = history if run.knobs.keep_existing_briefings else history.without_briefings()
    msgs = list(h.messages[: comp.boundary])
    # Put each earlier landed briefing back on its boundary message, as stagewise stores it.
    earlier = [c for c in run.compressions[:position] if c.status == "landed" and c.summarize]
    if comp.previous_chars:
        for c in earlier:
            if 0 <= c.boundary < len(msgs):
                text = c.record.text if c.record.text is not None else _placeholder(c.briefing_chars)
                msgs[c.boundary] = msgs[c.boundary].with_metadata(compressedHistory=text)
    else:  # first of a chain, or a regenerating policy: the briefer reads the raw history from the start
        msgs = [m.with_metadata(compressedHistory=None) if m.briefing is not None else m for m in msgs]
    compact = serialize_compact_history(msgs) if comp.summarize else ""
    user = build_user_message(compact, comp.previous_chars, run.knobs.target_briefing_chars) if comp.summarize else ""
    if not comp.summarize:
        label = "no briefing: this policy drops the folded messages"
    elif comp.record.failed:
        label = f"failed, no briefing: {comp.record.error or 'every briefer attempt failed'}"
    elif comp.record.text is None:
        label = f"simulated size only ({comp.briefing_chars:,} chars): pick the extractive or a live briefer for text"
    elif comp.record.cache_hit:
        label = f"{comp.record.model} (from the cache)"
    else:
        label = comp.record.model
    end = comp.index_started + 1
    return CompressionView(
        compression=comp,
        folded=messages_frame(history, comp.folded_from, comp.boundary),
        kept=messages_frame(history, comp.boundary, end),
        compact_history=compact,
        user_message=user,
        briefing=comp.record.text,
        briefing_label=label,
    )
