"""Replay the compressions that really happened in a stagewise chat, and compare them with ours.

A stagewise history keeps every briefing on its boundary message (``metadata.compressedHistory``,
spec §9 and §13.6), and the summarized messages stay in the store. For each real compression point b
this module reports:

- **Boundary check.** The stored data do not say when the compression fired, only where it cut. The
  trigger fired after some message e ≥ b (stagewise always keeps at least message b). We run the
  workbench's boundary walk (``stagewise_core.select_boundary`` with the given knobs) on
  ``messages[:e+1]`` for every e from b up to the next compression point (at most ``max_scan``
  messages), with briefings stored at or after b removed because they did not exist yet. If some e
  gives exactly b, the real cut is *reproduced* and the first such e is the assumed trigger point;
  otherwise the e whose boundary comes closest to b is reported, with the signed difference. The
  estimated context at that e (from the previous briefing on) is shown next to the knobs' trigger.
- **Briefing diff.** A new briefing for the same input (extractive by default, or live) against the
  stored one: a line-level similarity ratio, a unified diff, lines only in one of them, and the
  links the stored briefing has that the new one lost.

Pure apart from the briefer that is handed in; reading a file is left to ``load_real_histories``.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.briefing.base import Briefer, BriefRecord, BriefRequest
from workbench.briefing.extractive import ExtractiveBriefer
from workbench.briefing.prompt import PREVIOUS_TAG
from workbench.briefing.textrefs import LINK_RE
from workbench.history.jsjson import utf16_len
from workbench.history.model import History, Message
from workbench.knobs import Knobs
from workbench.stagewise.core import budget_bucket, select_boundary
from workbench.stagewise.estimate import estimate_message_tokens

if TYPE_CHECKING:
    import polars as pl

MAX_SCAN = 400


@dataclass(frozen=True, kw_only=True)
class BoundaryCheck:
    """Where the workbench's policy would have cut, at the trigger point that best explains the real cut."""

    real_boundary: int
    trigger_index: int | None  # assumed last message when the compression fired
    policy_boundary: int | None
    delta: int | None  # policy_boundary − real_boundary
    reproduced: bool
    policy_outcome: str
    estimated_context_tokens: int | None  # estimate from the previous briefing through trigger_index
    trigger_tokens: float
    would_fire: bool | None
    candidates: tuple[tuple[int, int | None], ...]  # (trigger index e, policy boundary at e)


@dataclass(frozen=True, kw_only=True)
class BriefingDiff:
    """A new briefing against the stored one."""

    similarity: float  # difflib ratio over lines, 0..1
    unified: str
    only_in_new: tuple[str, ...]
    only_in_actual: tuple[str, ...]
    actual_links: int
    links_missing_from_new: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class RealCompression:
    """One real compression point with our boundary check and (optionally) our briefing for it."""

    number: int
    boundary: int
    boundary_id: str
    boundary_role: str
    previous_index: int | None
    previous_chars: int
    bucket: str
    new_material_chars: int
    compact_history_chars: int
    actual_chars: int
    actual_leak_previous_tag: bool
    check: BoundaryCheck
    record: BriefRecord | None
    diff: BriefingDiff | None


@dataclass(frozen=True, kw_only=True)
class RealReplay:
    """All real compression points of one chat."""

    history_id: str
    title: str
    knobs: Knobs
    compressions: tuple[RealCompression, ...]

    def to_frame(self) -> pl.DataFrame:
        """One row per real compression (texts and diffs left out)."""
        import polars as pl

        rows = []
        for c in self.compressions:
            row = _row(c)
            missing = row.pop("links_missing_from_new")
            rows.append({**row, "links_missing": None if missing is None else len(missing)})
        return pl.DataFrame(rows) if rows else pl.DataFrame(schema={"number": pl.Int64})

    def summary(self) -> str:
        lines = [f"{self.title or self.history_id}: {len(self.compressions)} real compressions"]
        for c in self.compressions:
            chk = c.check
            policy = "-" if chk.policy_boundary is None else f"{chk.policy_boundary} ({chk.delta:+d})"
            new = f", new {c.record.chars:,} chars, similarity {c.diff.similarity:.2f}" if c.record and c.diff else ""
            lines.append(
                f"  #{c.number} boundary {c.boundary} ({c.boundary_role}), actual {c.actual_chars:,} chars, "
                f"policy {policy}{' reproduced' if chk.reproduced else ''}{new}"
            )
        return "\n".join(lines)


def compression_points(history: History) -> tuple[int, ...]:
    """Indices of messages that carry a stored briefing (present, even ``''``: stagewise's script rule)."""
    return history.briefing_indices()


def _as_of(messages: Sequence[Message], b: int, end: int) -> list[Message]:
    """messages[:end] as they were before the compression at b landed: no briefing at or after b."""
    out = list(messages[:end])
    for i in range(b, len(out)):
        if out[i] is not None and out[i].briefing is not None:
            out[i] = out[i].with_metadata(compressedHistory=None)
    return out


def _last_truthy_briefing(messages: Sequence[Message], end: int) -> int | None:
    return next((i for i in range(end - 1, -1, -1) if messages[i] and messages[i].briefing), None)


def check_boundary(history: History, b: int, knobs: Knobs, *, max_scan: int = MAX_SCAN) -> BoundaryCheck:
    """Compare the real cut at ``b`` with the policy's cut at each possible trigger point (module doc)."""
    msgs = history.messages
    later = [p for p in compression_points(history) if p > b]
    # The compression fired before the next one could start, so scan up to the next point.
    last_e = max(b, min(len(msgs) - 1, (later[0] - 1) if later else len(msgs) - 1, b + max_scan))
    view = _as_of(msgs, b, last_e + 1)

    def token_of(i: int) -> int:
        return estimate_message_tokens(view[i], overhead_chars=knobs.overhead_chars_per_message,
                                       chars_per_token=knobs.chars_per_token)

    candidates: list[tuple[int, int | None]] = []
    outcomes: dict[int, str] = {}
    for end in range(b, last_e + 1):
        res = select_boundary(view[: end + 1], context_window=knobs.context_window_tokens,
                              min_uncompressed_messages=knobs.min_kept_messages,
                              kept_fraction=knobs.kept_budget_ratio, kept_cap=knobs.kept_budget_cap_tokens,
                              token_of=token_of)
        candidates.append((end, res.boundary_index))
        outcomes[end] = res.outcome
    hits = [end for end, bound in candidates if bound == b]
    scored = [(abs(bound - b), end, bound) for end, bound in candidates if bound is not None]
    e: int | None = None
    policy: int | None = None
    if hits:
        e, policy = hits[0], b
    elif scored:
        _, e, policy = min(scored)
    est: int | None = None
    would: bool | None = None
    if e is not None:
        start = _last_truthy_briefing(view, b) or 0
        est = sum(token_of(i) for i in range(start, e + 1))
        would = est > knobs.effective_trigger_tokens if knobs.trigger_ratio >= 0 else False
    return BoundaryCheck(
        real_boundary=b,
        trigger_index=e,
        policy_boundary=policy,
        delta=None if policy is None else policy - b,
        reproduced=bool(hits),
        policy_outcome=outcomes.get(e, "no-boundary") if e is not None else "no-boundary",
        estimated_context_tokens=est,
        trigger_tokens=knobs.effective_trigger_tokens,
        would_fire=would,
        candidates=tuple(candidates),
    )


def real_request(history: History, b: int, knobs: Knobs, *, chain_index: int = 1, host: bool = True) -> BriefRequest:
    """The request stagewise's briefer saw at point b: ``messages[:b]`` from the last briefing on (§6–§7)."""
    from workbench.stagewise.serialize import serialize_compact_history, serialize_message

    msgs = history.messages
    p = _last_truthy_briefing(msgs, b)
    start = p if p is not None else 0
    previous = msgs[p].briefing if p is not None else None
    chunks = [c for c in (serialize_message(m, host=host) for m in msgs[start:b]) if c is not None]
    new_chars = sum(utf16_len(c) for c in chunks) + max(0, len(chunks) - 1)
    compact = serialize_compact_history(msgs[:b], host=host)
    prev_chars = utf16_len(previous) if previous else 0
    ratio, percent, bucket = budget_bucket(prev_chars, knobs.target_briefing_chars)
    return BriefRequest(
        chain_index=chain_index,
        folded=tuple(msgs[start:b]),
        folded_from=start,
        boundary=b,
        previous_briefing=previous,
        previous_chars=prev_chars,
        new_material_chars=new_chars,
        compact_history_chars=utf16_len(compact),
        target_chars=knobs.target_briefing_chars,
        bucket=bucket,
        ratio=ratio,
        percent=percent,
        knobs=knobs,
        compact_history_fn=lambda: compact,
    )


def diff_briefings(new: str, actual: str, *, context_lines: int = 2) -> BriefingDiff:
    """Line-level comparison of a new briefing with the stored one."""
    a_lines, n_lines = actual.splitlines(), new.splitlines()
    ratio = difflib.SequenceMatcher(None, a_lines, n_lines, autojunk=False).ratio()
    unified = "\n".join(difflib.unified_diff(a_lines, n_lines, "actual-output.md", "new-output.md",
                                             n=context_lines, lineterm=""))
    a_set, n_set = set(a_lines), set(n_lines)
    actual_links = list(dict.fromkeys(LINK_RE.findall(actual)))
    return BriefingDiff(
        similarity=ratio,
        unified=unified,
        only_in_new=tuple(x for x in n_lines if x.strip() and x not in a_set),
        only_in_actual=tuple(x for x in a_lines if x.strip() and x not in n_set),
        actual_links=len(actual_links),
        links_missing_from_new=tuple(x for x in actual_links if x not in new),
    )


def replay_real(
    history: History,
    knobs: Knobs | None = None,
    briefer: Briefer | None = None,
    *,
    brief: bool = True,
    max_scan: int = MAX_SCAN,
) -> RealReplay:
    """Check every real compression of ``history``; with ``brief`` also write and diff a new briefing."""
    knobs = knobs or Knobs()
    writer: Callable[[BriefRequest], BriefRecord] = briefer if briefer is not None else ExtractiveBriefer()
    msgs = history.messages
    out = []
    for n, b in enumerate(compression_points(history), start=1):
        req = real_request(history, b, knobs, chain_index=n)
        actual = msgs[b].briefing or ""
        record = writer(req) if brief else None
        diff = diff_briefings(record.text, actual) if record is not None and record.text is not None else None
        out.append(
            RealCompression(
                number=n,
                boundary=b,
                boundary_id=msgs[b].id,
                boundary_role=msgs[b].role,
                previous_index=_last_truthy_briefing(msgs, b),
                previous_chars=req.previous_chars,
                bucket=req.bucket,
                new_material_chars=req.new_material_chars,
                compact_history_chars=req.compact_history_chars,
                actual_chars=utf16_len(actual),
                actual_leak_previous_tag=PREVIOUS_TAG in actual,
                check=check_boundary(history, b, knobs, max_scan=max_scan),
                record=record,
                diff=diff,
            )
        )
    title = history.meta.get("title", "") if isinstance(history.meta, dict) else ""
    return RealReplay(history_id=history.id, title=str(title or ""), knobs=knobs, compressions=tuple(out))


def load_real_histories(path: str | Path, chat_id: str | None = None) -> list[History]:
    """Every chat in a stagewise store (or the one ``chat_id``), or the one history of a JSON export."""
    from workbench.history.readers import check_history_file, load_history

    p = Path(path)
    check_history_file(p)
    with p.open("rb") as fh:
        head = fh.read(16)
    if head == b"SQLite format 3\x00":
        from workbench.history.readers.stagewise_store import load_stagewise_sqlite

        if chat_id is not None:
            return [load_stagewise_sqlite(p, chat_id=chat_id)]
        return list(load_stagewise_sqlite(p))
    return [load_history(p)]


def _row(c: RealCompression) -> dict[str, Any]:
    """One real compression as plain values: real and policy boundary, sizes, the briefing diff."""
    return {
        "number": c.number,
        "boundary": c.boundary,
        "boundary_id": c.boundary_id,
        "boundary_role": c.boundary_role,
        "previous_index": c.previous_index,
        "previous_chars": c.previous_chars,
        "bucket": c.bucket,
        "new_material_chars": c.new_material_chars,
        "actual_chars": c.actual_chars,
        "policy_boundary": c.check.policy_boundary,
        "boundary_delta": c.check.delta,
        "reproduced": c.check.reproduced,
        "trigger_index": c.check.trigger_index,
        "new_chars": c.record.chars if c.record else None,
        "new_model": c.record.model if c.record else None,
        "similarity": c.diff.similarity if c.diff else None,
        "links_missing_from_new": list(c.diff.links_missing_from_new) if c.diff else None,
    }


def as_dict(replay: RealReplay) -> dict[str, Any]:
    """A JSON-able view (for the CLI and notebooks)."""
    return {
        "history": replay.history_id,
        "title": replay.title,
        "compressions": [_row(c) for c in replay.compressions],
    }
