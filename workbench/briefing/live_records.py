"""The records a live cascade produces: a briefing a model wrote, a compression no model answered, and the
JSON-able form an answer takes in the disk cache (with the request's features, for calibrating the size model).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from workbench.briefing.base import Attempt, BriefRecord, BriefRequest, briefing_tokens
from workbench.briefing.prompt import PROMPT_VERSION, detect_leaks
from workbench.history.jsjson import utf16_len


def failed_record(attempts: list[Attempt]) -> BriefRecord:
    """The record of a compression no model answered: the replay leaves the history uncompressed."""
    last = next((a for a in reversed(attempts) if a.outcome not in ("ok", "skipped")), None)
    last = last or next((a for a in reversed(attempts) if a.outcome != "ok"), None)
    error = f"{last.outcome}: {last.detail}" if last else "all history compression models failed"
    return BriefRecord(
        text=None,
        chars=0,
        tokens=0,
        model="",
        attempts=tuple(attempts),
        cost_usd=sum(a.cost_usd for a in attempts),
        input_tokens=sum(a.input_tokens for a in attempts),
        output_tokens=sum(a.output_tokens for a in attempts),
        failed=True,
        latency_s=sum(a.latency_s for a in attempts),
        error=error,
    )


def _text_record(text: str, request: BriefRequest, **rest: Any) -> BriefRecord:
    """A record of ``text`` as the replay reads it (size in UTF-16 units, tokens, the leaks it shows)."""
    previous, xml = detect_leaks(text)
    return BriefRecord(text=text, chars=utf16_len(text), tokens=briefing_tokens(text, request.knobs),
                       leak_previous_tag=previous, leak_xml=xml, **rest)


def answer_record(request: BriefRequest, model: str, text: str, attempts: list[Attempt]) -> BriefRecord:
    """The record of a briefing a model wrote: its size, the leaks it shows, every attempt's cost and time."""
    return _text_record(
        text, request,
        model=model,
        attempts=tuple(attempts),
        cost_usd=sum(a.cost_usd for a in attempts),
        input_tokens=sum(a.input_tokens for a in attempts),
        output_tokens=sum(a.output_tokens for a in attempts),
        latency_s=sum(a.latency_s for a in attempts),
    )


def cached_record(value: Mapping[str, Any], request: BriefRequest, text: str) -> BriefRecord:
    """A stored answer (``cache_value``'s form, its text already scrubbed) as a record with ``cache_hit=True``:
    same text, model, attempts and cost."""
    attempts = tuple(Attempt(**{k: a[k] for k in Attempt.__dataclass_fields__ if k in a}) for a in value["attempts"])
    return _text_record(
        text, request,
        model=str(value.get("model", "")),
        attempts=attempts,
        cost_usd=float(value.get("cost_usd", 0.0)),
        input_tokens=int(value.get("input_tokens", 0)),
        output_tokens=int(value.get("output_tokens", 0)),
        cache_hit=True,
        latency_s=float(value.get("latency_s", 0.0)),
    )


def cache_value(request: BriefRequest, record: BriefRecord) -> dict[str, Any]:
    """What the disk cache keeps of an answer: JSON-able, with the request's features for calibration."""
    return {
        "prompt_version": PROMPT_VERSION,
        "text": record.text,
        "model": record.model,
        "chars": record.chars,
        "input_tokens": record.input_tokens,
        "output_tokens": record.output_tokens,
        "cost_usd": record.cost_usd,
        "latency_s": record.latency_s,
        "attempts": [
            {
                "model": a.model,
                "outcome": a.outcome,
                "latency_s": a.latency_s,
                "detail": a.detail,
                "input_tokens": a.input_tokens,
                "output_tokens": a.output_tokens,
                "cost_usd": a.cost_usd,
            }
            for a in record.attempts
        ],
        "request": request_features(request),
        "created_at": time.time(),
    }


def request_features(request: BriefRequest) -> dict[str, Any]:
    """The numbers the size model reads from a request (stored with each cached answer for calibration)."""
    return {
        "chain_index": request.chain_index,
        "previous_chars": request.previous_chars,
        "new_material_chars": request.new_material_chars,
        "compact_history_chars": request.compact_history_chars,
        "target_chars": request.target_chars,
        "bucket": request.bucket,
        "regenerate": request.regenerate,
    }
