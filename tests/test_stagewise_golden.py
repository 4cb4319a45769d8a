"""Golden vectors produced by stagewise's own TypeScript: every expected field must match exactly.

Cases come from ``shared/golden/stagewise_visible.json`` by default, or from each ``--golden PATH``
(see conftest.py). Only ``userMessage`` is not compared: the prompt wording is the project's own.
"""

from __future__ import annotations

from typing import Any

from workbench.history.jsjson import utf16_len
from workbench.history.readers.uimessage import messages_from_uimessage_list
from workbench.stagewise.core import budget_bucket, select_boundary, trigger
from workbench.stagewise.estimate import estimate_message_tokens
from workbench.stagewise.serialize import previous_briefing_chars, serialize_compact_history, serialized_from_index

BOUNDARY_FIELDS = {
    "keptBudget": "kept_budget",
    "preferredFloor": "preferred_floor",
    "rawBoundaryIndex": "raw_boundary_index",
    "boundaryIndex": "boundary_index",
    "boundaryMessageId": "boundary_message_id",
    "outcome": "outcome",
    "keptCount": "kept_count",
    "keptTokens": "kept_tokens",
    "outcomeBeforeLt1Check": "outcome_before_lt1_check",
}
NOT_COMPARED = {"userMessage", "userMessageChars"}


def _same(got: Any, want: Any) -> bool:
    """Equal values of equal JSON kind (so True never passes for 1, nor 1 for '1')."""
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    return got == want


def _describe(got: Any, want: Any) -> str:
    if isinstance(got, str) and isinstance(want, str):
        at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
        return f"strings differ at {at} (lengths {len(got)}/{len(want)}): got {got[at - 40 : at + 40]!r}, want {want[at - 40 : at + 40]!r}"
    return f"got {got!r}, want {want!r}"


def _compare(where: str, got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    return [
        f"{where}.{k}: {_describe(got.get(k, '<missing>'), v)}" for k, v in want.items() if not _same(got.get(k), v)
    ]


def _actual(case: dict[str, Any]) -> dict[str, Any]:
    """Compute every golden field for one case, in the golden file's names."""
    cfg = case["config"]
    messages = messages_from_uimessage_list(case["messages"], source=case["id"])
    per = [estimate_message_tokens(m) for m in messages]
    total = sum(per)
    trig = trigger(total, cfg["contextWindow"], cfg["compactionThreshold"])
    b = select_boundary(
        messages,
        context_window=cfg["contextWindow"],
        min_uncompressed_messages=cfg["minUncompressedMessages"],
        token_of=per.__getitem__,
    )
    out: dict[str, Any] = {
        "perMessageTokens": per,
        "totalTokens": total,
        "usedTokens": total,  # the golden file's documented proxy
        "trigger": {
            "compactionThreshold": trig.threshold,
            "fractionalTriggerTokens": trig.fractional,
            "effectiveTriggerTokens": trig.effective,
            "fires": trig.fires,
            "usedTokens": total,
        },
        "boundary": {name: getattr(b, attr) for name, attr in BOUNDARY_FIELDS.items()},
        "wouldCompress": trig.fires and b.boundary_index is not None,
        "compression": None,
    }
    if b.boundary_index is not None:
        head = messages[: b.boundary_index]
        prev = previous_briefing_chars(head)
        ratio, percent, bucket = budget_bucket(prev)
        host, no_host = serialize_compact_history(head, host=True), serialize_compact_history(head, host=False)
        out["compression"] = {
            "messagesToCompactCount": len(head),
            "serializedFromIndex": serialized_from_index(head),
            "previousBriefingChars": prev,
            "ratio": ratio,
            "ratioPercentRounded": percent,
            "budgetBucket": bucket,
            "compactHistory": host,
            "compactHistoryNoHost": no_host,
            "compactHistoryChars": utf16_len(host),
            "compactHistoryNoHostChars": utf16_len(no_host),
        }
    return out


def test_golden_case(golden_case: Any) -> None:
    """Estimates, trigger, boundary, serializations and budget hint equal stagewise's, field by field."""
    if not isinstance(golden_case, dict):  # conftest.MissingGolden
        golden_case.handle()
        return
    want = golden_case["expected"]
    got = _actual(golden_case)
    problems: list[str] = []
    for key, value in want.items():
        if key in ("trigger", "boundary"):
            unknown = set(value) - set(got[key])
            problems += [f"{key}.{k}: field not known to this test" for k in sorted(unknown)]
            problems += _compare(key, got[key], value)
        elif key == "compression" and value is not None and got[key] is not None:
            for k in sorted(set(value) - set(got[key]) - NOT_COMPARED):
                problems.append(f"compression.{k}: field not known to this test")
            problems += _compare("compression", got[key], {k: v for k, v in value.items() if k not in NOT_COMPARED})
        elif key not in got:
            problems.append(f"{key}: field not known to this test")
        elif not _same(got[key], value):
            problems.append(f"{key}: {_describe(got[key], value)}")
    assert not problems, "\n".join(problems)


def test_trigger_vector(trigger_vector: Any) -> None:
    """The trigger fires exactly when used tokens exceed min(threshold x window, 100 000)."""
    if not isinstance(trigger_vector, dict):  # conftest.MissingGolden
        trigger_vector.handle()
        return
    v = trigger_vector
    r = trigger(v["usedTokens"], v["contextWindow"], v["compactionThreshold"])
    assert (r.fractional, r.effective, r.fires) == (
        v["fractionalTriggerTokens"],
        v["effectiveTriggerTokens"],
        v["fires"],
    )
    assert isinstance(r.fires, bool)


def test_token_of_matches_estimator() -> None:
    """Passing cached counts through ``token_of`` picks the same boundary as re-estimating."""
    messages = messages_from_uimessage_list(
        [{"id": f"m{i}", "role": "user", "parts": [{"type": "text", "text": "x" * (i * 300)}]} for i in range(30)]
        + [None],
        source="synthetic",
    )
    per = [estimate_message_tokens(m) for m in messages]
    calls: list[int] = []

    def token_of(i: int) -> int:
        calls.append(i)
        return per[i]

    fresh = select_boundary(messages, context_window=32_000, min_uncompressed_messages=30)
    cached = select_boundary(messages, context_window=32_000, min_uncompressed_messages=30, token_of=token_of)
    assert cached == fresh
    assert fresh.outcome == "budget" and fresh.kept_tokens == sum(per[fresh.boundary_index :])
    assert 30 not in calls  # the null entry is skipped, never counted
