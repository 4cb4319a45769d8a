"""Timing helpers and benchmark histories: everything the measures share, nothing they measure.

Histories are generated once per run (``workbench.history.samples.generate``, the same mix as the shipped
``long`` sample: user turns with decisions and file links, assistant steps of tool calls with
lognormal output sizes and a few failures). Sizes beyond the generated base repeat it with fresh
message ids, so every message is a distinct cache key. Each call returns new Message objects, so
no per-object cache (digest, content chars) survives from one measurement to the next.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from workbench.history.model import History, Message
from workbench.history.readers.claude_code import parse_claude_code
from workbench.history.samples.generate import generate_session
from workbench.history.samples.generate_claude_code import claude_code_log
from workbench.history.writers import write_canonical_jsonl

SEED = 20260507
TOOL_HEAVY = 0.1  # the shipped `long` sample's mix: ~3 KB a message, tool outputs about half the tokens
BASE_MESSAGES = 10_000  # generated for real; larger sizes repeat it (generating 100k takes a minute)
AGENT_LOGS = 6  # Claude Code sample logs chained into the agent-format base (~1,100 messages, 6 logged compactions)


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes, after a collection so earlier garbage is not charged to it."""
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def timed_paused(fn: Callable[[], object]) -> float:
    """Like ``timed`` with the cyclic GC off, as our readers run (the fastest, so the strictest reference)."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    finally:
        gc.enable()


def timed_pair(ours: Callable[[], object], ref: Callable[[], object], run: int, *,
               ref_timer: Callable[[Callable[[], object]], float] = timed) -> tuple[float, float]:
    """(our seconds, the reference's seconds), taken back to back; who goes first alternates by run."""
    if run % 2:
        t_ref = ref_timer(ref)
        return timed(ours), t_ref
    t_ours = timed(ours)
    return t_ours, ref_timer(ref)


@dataclass
class Series:
    """Samples of one quantity (seconds, bytes or a ratio) and their min / median / max."""

    values: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        self.values.append(value)

    @property
    def min(self) -> float:
        return min(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def max(self) -> float:
        return max(self.values)


@dataclass
class Result:
    """One row of the table: a ratio over runs, its target, and how the measured quantity grows."""

    key: str
    measure: str
    reference: str
    target: str
    ratio: Series  # per-run ratio in the target's direction (ours/ref for "<=", ref/ours for "x faster")
    unit: str  # how to print the ratio: "x", "x faster" or "+s"
    passed: bool
    ours: Series  # the measured quantity at the headline size (seconds or bytes)
    growth: dict[int, float] = field(default_factory=dict)  # messages -> median of the measured quantity
    growth_ratio: dict[int, float] = field(default_factory=dict)  # messages -> median ratio at that size
    growth_unit: str = "s"
    notes: list[str] = field(default_factory=list)
    skipped: str = ""  # why the row could not be measured here (its data is missing); the table says so

    @classmethod
    def skip(cls, key: str, measure: str, reference: str, target: str, reason: str) -> Result:
        return cls(key, measure, reference, target, Series(), "x", False, Series(), skipped=reason)


class Histories:
    """Benchmark histories by size, generated once; files written on demand into ``folder``."""

    def __init__(self, folder: Path, *, base_messages: int = BASE_MESSAGES) -> None:
        self.folder = folder
        self.base_messages = base_messages
        self._base: History | None = None
        self._files: dict[int, Path] = {}
        self._serial = 0
        self._agent: History | None = None

    @property
    def base(self) -> History:
        if self._base is None:
            self._base = generate_session(SEED, turns=self.base_messages // 2, tool_heavy=TOOL_HEAVY, id="bench")
        return self._base

    def fresh(self, n: int) -> History:
        """An n-message history of new Message objects (no per-object caches); ids unique past the base."""
        base = self.base.messages
        size = len(base)
        msgs = []
        for i in range(n):
            m = base[i % size]
            rep = i // size
            msgs.append(Message(id=m.id if rep == 0 else f"{m.id}~{rep}", role=m.role, parts=m.parts,
                                metadata=m.metadata, extra=m.extra))
        # A new id each time: caches keyed by History (functools.lru_cache in the policies) would otherwise
        # compare a new history with an equal one from an earlier measure message by message.
        self._serial += 1
        return History(id=f"bench_{n}_{self._serial}", messages=tuple(msgs), source_format="generated")

    @property
    def agent_base(self) -> History:
        """A Claude Code log (``AGENT_LOGS`` sample sessions chained into one, each with its logged compaction,
        billed usage per call, Read/Edit/Write/TodoWrite steps), read by the Claude Code reader."""
        if self._agent is None:
            lines: list[str] = []
            last, session = None, None
            for s in range(AGENT_LOGS):
                for line in claude_code_log(SEED + s).splitlines():
                    record = json.loads(line)
                    session = session or record.get("sessionId")
                    if "sessionId" in record:
                        record["sessionId"] = session
                    if "uuid" in record:
                        if record.get("parentUuid") is None and last is not None:
                            record["parentUuid"] = last  # the next sample continues the same session
                        last = record["uuid"]
                    lines.append(json.dumps(record))
            self._agent = parse_claude_code("\n".join(lines) + "\n", source="bench_agent.jsonl")
        return self._agent

    def agent(self, n: int) -> History:
        """An n-message agent-format history: ``agent_base`` repeated (new Message objects and ids, its log's
        calls and compactions moved along with their messages)."""
        base = self.agent_base
        log = base.log
        assert log is not None
        size = len(base.messages)
        msgs, calls, compactions = [], [], []
        for rep in range(-(-n // size)):
            shift = rep * size
            for m in base.messages[: n - shift]:
                msgs.append(Message(id=m.id if rep == 0 else f"{m.id}~{rep}", role=m.role, parts=m.parts,
                                    metadata=m.metadata, extra=m.extra))
            calls += [replace(c, index=c.index + shift) for c in log.calls if c.index + shift < n]
            compactions += [replace(c, index=c.index + shift,
                                    summary_index=None if c.summary_index is None else c.summary_index + shift)
                            for c in log.compactions if c.index + shift < n]
        self._serial += 1
        return History(id=f"bench_agent_{n}_{self._serial}", messages=tuple(msgs), source_format=base.source_format,
                       log=replace(log, calls=tuple(calls), compactions=tuple(compactions)))

    def file(self, n: int) -> Path:
        """The n-message history as canonical JSONL (what users load), written once."""
        path = self._files.get(n)
        if path is None:
            path = self.folder / f"bench_{n}.jsonl"
            path.write_bytes(write_canonical_jsonl(self.fresh(n)).encode("utf-8"))
            self._files[n] = path
        return path
