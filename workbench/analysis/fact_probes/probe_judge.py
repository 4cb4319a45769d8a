"""The optional LLM judge for post-compaction probes (Factory's method, seed 003).

For each landed compression, an agent model answers the four probe questions (recall, artifact,
continuation, decision) from the post-compaction context only (briefing + kept messages + pinned),
and a judge model grades each answer 0–5 on accuracy, context awareness, artifact trail,
completeness, continuity and instruction following, against the facts the folded span really held
(``workbench.analysis.fact_probes.probes.extract_facts``). Every call goes through litellm and the briefing disk cache, so
re-running a judged sweep costs nothing. The offline retention numbers in ``workbench.analysis.fact_probes.probes`` need
none of this; the judge only tells how well an agent *uses* what survived.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from workbench.analysis.fact_probes.probes import PROBES, Fact, fact_index
from workbench.briefing.live import TIMEOUT_S
from workbench.briefing.scrub import scrub_secrets, without_credentials
from workbench.counting.encodings import render_for_tokenizer

if TYPE_CHECKING:
    from workbench.briefing.cache import BriefingCache
    from workbench.history.model import History
    from workbench.replay import Compression, Run

JUDGE_VERSION = "workbench-probe-judge-v1"  # part of every cache key: bump when a prompt changes
DIMENSIONS = ("accuracy", "context_awareness", "artifact_trail", "completeness", "continuity", "instruction_following")
QUESTIONS = {
    "recall": "Which errors or failures have we met in this session, with their exact messages, and which links "
              "or URLs came up?",
    "artifact": "Which files have we created, modified or read in this session, and what happened to each?",
    "continuation": "What were we doing just before this point, and what exactly should happen next?",
    "decision": "What has the user decided or required, and which constraints must the work respect?",
}
KINDS_OF_PROBE = {"recall": ("error", "link"), "artifact": ("artifact",), "continuation": ("next_step",),
                  "decision": ("decision",)}
AGENT_SYSTEM = (
    "You are the coding agent continuing a session. Your earlier conversation was compacted: what follows "
    "is everything you still have. Answer the question from it alone. Where it is silent, say you do not know "
    "rather than guess."
)
JUDGE_SYSTEM = (
    "You grade how well a coding agent remembers its session after its context was compacted. You get the "
    "question, the agent's answer and the facts the session really contained. Score the answer from 0 (absent "
    "or wrong) to 5 (complete and exact) on each dimension: accuracy (no false statements), context_awareness "
    "(knows where the session stands), artifact_trail (files and what changed), completeness (covers the "
    "facts), continuity (could carry on without re-reading), instruction_following (respects the user's "
    "decisions and constraints). Reply with one JSON object with exactly these six integer fields."
)
MAX_FACTS = 40
_JSON_RE = re.compile(r"\{.*\}", re.DOTALL)


@dataclass(frozen=True, kw_only=True)
class Grade:
    """One probe question at one compression: the answer and its six scores (None when unparseable)."""

    chain_index: int
    probe: str
    question: str
    answer: str
    scores: Mapping[str, int | None]
    cache_hits: int
    error: str = ""

    @property
    def mean(self) -> float | None:
        vals = [v for v in self.scores.values() if v is not None]
        return sum(vals) / len(vals) if vals else None


def post_compaction_context(run: Run, history: History, compression: Compression,
                            *, max_chars: int = 60_000) -> str:
    """What the agent has right after ``compression`` lands: briefing, pinned and kept messages (as text).

    Over ``max_chars`` the oldest kept messages go first; the briefing always stays.
    """
    briefing = None
    for c in run.compressions:
        if c.status == "landed" and c.summarize:
            briefing = c.record.text
        if c is compression:
            break
    end = compression.index_landed if compression.index_landed is not None else compression.index_started
    pinned = [j for j in compression.pinned if j < compression.boundary]
    kept = [render_for_tokenizer(history.messages[j]) for j in [*pinned, *range(compression.boundary, end + 1)]]
    head = f"<briefing>\n{briefing}\n</briefing>\n" if briefing else ""
    budget = max(0, max_chars - len(head))
    tail: list[str] = []
    used = 0
    for text in reversed(kept):
        if used + len(text) > budget:
            break
        tail.append(text)
        used += len(text) + 1
    return head + "\n".join(reversed(tail))


def _truth(facts: Sequence[Fact], probe: str) -> str:
    kinds = KINDS_OF_PROBE[probe]
    chosen = [f for f in facts if f.kind in kinds]
    if probe == "continuation":
        last: dict[str, Fact] = {}
        for f in chosen:
            last[f.detail] = f
        chosen = list(last.values())
    lines = [f"- [{f.kind}{': ' + f.detail if f.detail else ''}] {f.key}" for f in chosen[-MAX_FACTS:]]
    return "\n".join(lines) if lines else "(the session had no such facts)"


def parse_scores(text: str) -> dict[str, int | None]:
    """The six scores from a judge reply (the first JSON object in it), clamped to 0–5; None where missing."""
    out: dict[str, int | None] = dict.fromkeys(DIMENSIONS)
    m = _JSON_RE.search(text or "")
    if not m:
        return out
    try:
        data = json.loads(m.group(0))
    except json.JSONDecodeError:
        return out
    if not isinstance(data, dict):
        return out
    for d in DIMENSIONS:
        v = data.get(d)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[d] = int(min(5, max(0, round(v))))
    return out


class _Caller:
    """litellm completions behind the briefing disk cache (the same cache the live briefer uses)."""

    def __init__(self, *, cache: BriefingCache | None, api_base: str | None, api_key: str | None,
                 max_tokens: int, extra_params: Mapping[str, Any] | None) -> None:
        self.cache, self.api_key = cache, api_key
        self.api_base = without_credentials(api_base)  # what is keyed on: never the URL's user:password
        self._endpoint = api_base  # what is called
        self.params = {"temperature": 0.0, "max_tokens": max_tokens}
        self.extra = dict(extra_params or {})
        self.requests = 0

    def scrub(self, text: str) -> str:
        """A provider error without the key or the endpoint's credentials, in any form."""
        return scrub_secrets(text, self.api_key, self._endpoint)

    def __call__(self, model: str, messages: list[dict[str, str]]) -> tuple[str, bool]:
        key = None
        if self.cache is not None:
            from workbench.briefing.cache import cache_key

            key = cache_key(model, messages, self.params, JUDGE_VERSION, api_base=self.api_base)
            hit = self.cache.get(key)
            if hit is not None and isinstance(hit.get("text"), str):
                return hit["text"], True
        from workbench.briefing.provider import import_litellm
        from workbench.briefing.scrub import scrub_known

        litellm = import_litellm()
        kwargs: dict[str, Any] = {**self.params, **self.extra}
        if self._endpoint:
            kwargs["api_base"] = self._endpoint
        if self.api_key:
            kwargs["api_key"] = self.api_key
        self.requests += 1
        response = litellm.completion(model=model, messages=messages, num_retries=0, timeout=TIMEOUT_S, **kwargs)
        text = scrub_known(response.choices[0].message.content or "", self.api_key, self._endpoint)  # never a key
        if self.cache is not None and key is not None:
            self.cache.set(key, {"text": text, "model": model, "kind": "probe-judge"})
        return text, False


def judge_run(
    run: Run,
    history: History,
    *,
    model: str,
    judge_model: str | None = None,
    cache: BriefingCache | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    probes: Sequence[str] = PROBES,
    max_compressions: int | None = None,
    max_context_chars: int = 60_000,
    max_tokens: int = 1_000,
    extra_params: Mapping[str, Any] | None = None,
) -> pl.DataFrame:
    """Ask ``probes`` after each landed compression and grade the answers; one row per (compression, probe).

    ``model`` answers as the agent, ``judge_model`` (default: the same) grades. ``extra_params`` go to
    ``litellm.completion`` and never into a cache key (``mock_response`` in tests). Columns:
    chain_index, probe, question, answer, the six dimensions, mean, cache_hits, error.
    """
    unknown = [p for p in probes if p not in QUESTIONS]
    if unknown:
        raise ValueError(f"unknown probe(s) {', '.join(unknown)}; known: {', '.join(QUESTIONS)}")
    call = _Caller(cache=cache, api_base=api_base, api_key=api_key, max_tokens=max_tokens, extra_params=extra_params)
    index = fact_index(history)
    landed = [c for c in run.compressions if c.status == "landed"]
    if max_compressions is not None:
        landed = landed[:max_compressions]
    grades: list[Grade] = []
    for c in landed:
        context = post_compaction_context(run, history, c, max_chars=max_context_chars)
        folded = [f for f in index.facts if f.index < c.boundary]
        for probe in probes:
            question = QUESTIONS[probe]
            hits = 0
            try:
                answer, hit = call(model, [{"role": "system", "content": AGENT_SYSTEM},
                                           {"role": "user", "content": f"{context}\n\nQuestion: {question}"}])
                hits += hit
                verdict = (f"Question: {question}\n\nAgent's answer:\n{answer}\n\n"
                           f"Facts the session contained:\n{_truth(folded, probe)}")
                reply, hit = call(judge_model or model, [{"role": "system", "content": JUDGE_SYSTEM},
                                                         {"role": "user", "content": verdict}])
                hits += hit
                scores = parse_scores(reply)
                error = "" if any(v is not None for v in scores.values()) else "judge reply had no scores"
            except Exception as exc:  # a provider error grades nothing but must not lose the other probes
                problem = call.scrub(f"{type(exc).__name__}: {exc}")[:300]
                answer, scores, error = "", dict.fromkeys(DIMENSIONS), problem
            grades.append(Grade(chain_index=c.chain_index, probe=probe, question=question, answer=answer,
                                scores=scores, cache_hits=hits, error=error))
    return grades_frame(grades)


def grades_frame(grades: Sequence[Grade]) -> pl.DataFrame:
    """Grades as a table: one row per (compression, probe), one column per dimension, plus the mean."""
    schema: dict[str, Any] = {"chain_index": pl.Int64, "probe": pl.Utf8, "question": pl.Utf8, "answer": pl.Utf8,
                              **dict.fromkeys(DIMENSIONS, pl.Int64), "mean": pl.Float64, "cache_hits": pl.Int64,
                              "error": pl.Utf8}
    rows = [{"chain_index": g.chain_index, "probe": g.probe, "question": g.question, "answer": g.answer,
             **g.scores, "mean": g.mean, "cache_hits": g.cache_hits, "error": g.error} for g in grades]
    return pl.DataFrame(rows, schema=schema)
