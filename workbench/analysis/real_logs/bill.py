"""A real session's bill as the replay models it, beside the bill its log records.

The replay follows the log (``analysis.real_logs.reality``): each model call (an assistant message) is sent with the context
the replay holds just before it, window by window between the logged compactions. The provider's prompt cache
then splits that context into what it reads from the cache, what it writes to it and what it bills uncached, by
its own rules against the log's timestamps (``CacheRules``, each cited):

- **Anthropic** (Claude Code): a call reads from the cache the prefix the previous call wrote (its whole input:
  Claude Code marks the last message of every request for caching), if that call was less than the cache's
  lifetime ago, and writes the rest; a few tokens after the last cache breakpoint are billed uncached. The
  lifetime is 5 minutes, or 1 hour where the request asks for it (``cache_control: {"ttl": "1h"}``, written at
  2x the input price): https://platform.claude.com/docs/en/build-with-claude/prompt-caching. Which one Claude
  Code asks for is in its logs (``usage.cache_creation.ephemeral_1h_input_tokens`` vs ``ephemeral_5m``): every
  session of 2.1.20 and later in ../shared/real_sessions_large and ../shared/real_sessions writes 1-hour entries,
  every one up to 2.1.14 (and 2.1.19) writes 5-minute ones; 2.1.17 does either (4 of 7 sessions 5 minutes): its
  npm package asks for 1 hour behind a feature-flag experiment (2.1.17 cli.js ``gUA``:
  ``prompt_cache_1h_experiment``), 2.1.20 for every claude.ai subscriber not on overage (2.1.20 cli.js ``cPA``), so
  nothing in a 2.1.17 transcript tells which. Past the sure lifetime (and its edge, ``LATE_EDGE``) the cache is
  gone, as documented, where the version's lifetime is known; in the experiment's versions a session has one
  lifetime or the other, and is billed by the one most of the fitted sessions had (``late_share``).
- **OpenAI** (Codex): caching is automatic, for prompts of 1,024 tokens or more, in increments of 128 tokens, and
  cached prefixes stay for 5 to 10 minutes of inactivity (up to an hour off-peak); nothing is billed for writing:
  https://platform.openai.com/docs/guides/prompt-caching. Earlier turns' reasoning items are not sent again
  (codex-rs ``get_total_token_usage`` counts them only as an estimate, @023fad26 history.rs), so the first call of
  a new user turn reads only up to where the previous turn began: the data show it (in the Codex rollouts of
  ../shared/real_sessions_large a new turn's cached tokens equal the previous turn's first input, to 128 tokens).
- **A compaction invalidates the cached prefix**: the first call after it reads only what precedes the messages
  (system prompt and tool schemas), as the logs show (e.g. 31,944 of 55,912 tokens after each compaction of
  ../shared/real_sessions' claude_code__ad_ff0201aecb_0, whose system part is 31,944 throughout).
- **A change of the thinking setting invalidates the cached messages** (tools and system prompt stay cached:
  https://platform.claude.com/docs/en/build-with-claude/prompt-caching, "What invalidates the cache"), and Claude
  Code before 2.1.38 switched thinking off for the rest of a turn whenever a prompt command or a skill ran: it
  takes the thinking budget of the command's or skill's expanded text from the user messages among it that carry
  ``thinkingMetadata``, of which there are none, so 0 (2.1.25 cli.js ``m7K`` ``$=dp([t1({content:X})],void 0)``,
  ``dp``/``$oY``; the Skill tool's ``contextModifier`` sets ``options.maxThinkingTokens`` to it, and a typed
  command's turn is queried with it; the same in 2.0.76-2.1.37's packages; 2.1.38 cli.js sets it ``void 0``), and
  the next plain prompt switched it back on. The messages each setting cached stay, as a model's do: a call after a
  switch reads what the latest call with its own setting wrote if that call's end is within the 20 content blocks
  the cache looks back from a breakpoint (same page, "Automatic prefix checking"), else only what a reset leaves
  (``thinking_read``; ``CacheRules.thinking_switch``).

Without usage the context of each call is the estimate's, and one thing in the transcript pins it: the agent
compacted automatically where its own measure crossed its trigger (the preset's ``trigger_limit``), so the call just
before each logged automatic compaction sent about that much (Claude Code, ../shared/real_sessions_large: within 1%
of its 167,000 or 155,000 at 55 of its 67 automatic compactions and within 2% at 63, as the logs billed it; Codex,
whose measure is not the bill, 82-97% of its 244,800). Each such window's calls are moved by what its last call misses of that anchor
(``anchor_share`` x the trigger, fitted): the estimate's error is mostly what the window starts with (the hidden
prefix, what the agent re-attached, and in a log that starts mid-session the 50,000-150,000 earlier tokens the file
lacks), so it is one shift per window, not a scale. A window that ends at a manual compaction or at the log's end
takes a share of the nearest anchored window's shift (``carry_share``, fitted: what the windows share is the hidden
prefix, whose spread between logs the fit weighs against the anchor's own).

What no rule tells is fitted per agent and version family on other sessions' logs (``fit_bill_model``): the
prefix a reset leaves cached, how often a new user turn (or any call) misses the cache anyway (Claude Code's
slash commands, hooks and model switches change the prompt, and in 2.1.20-2.1.37 so did a turn that changed its task
list; OpenAI routes some calls to a cold machine), the
uncached tokens per call, and the output tokens: a ratio of the assistant message's visible size plus a constant
per call (reasoning, which the transcript does not hold), except where the log counts each answer's output as its
stream began (Claude Code 2.1.12-2.1.30: ``CLAUDE_CODE_START_OUTPUT``), where it is that count, fitted by whether the
answer opens with a tool call (a token or two, or ~25, whatever the answer).
Pure: histories and arrays in, values out; the log's usage is read only by ``logged_bill`` and ``fit_bill_model``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from workbench.counting.usage import is_user_turn
from workbench.history.model import History, Message, tool_name_of
from workbench.history.session_log import parse_version

# Bill units: what each token class costs relative to an uncached input token (the yardstick, close to
# Anthropic's and OpenAI's list prices: cache writes 1.25x, reads 0.1x, output 5x for Claude, 8x for GPT-5). An agent
# other than these two is priced by the provider of its model (``provider_of``): Claude's for Anthropic, Codex's for
# OpenAI, Google's Gemini 3 Flash list prices for Google ($0.50 input, $3.00 output, cache reads 10%:
# https://ai.google.dev/gemini-api/docs/pricing, as litellm's registry has gemini-3-flash-preview).
BILL_UNITS = {"claude_code": {"input": 1.0, "cache_write": 1.25, "cache_read": 0.1, "output": 5.0},
              "codex": {"input": 1.0, "cache_write": 1.25, "cache_read": 0.1, "output": 8.0}}
PROVIDER_UNITS = {"anthropic": BILL_UNITS["claude_code"], "openai": BILL_UNITS["codex"],
                  "google": {"input": 1.0, "cache_write": 1.0, "cache_read": 0.1, "output": 6.0}}
ANTHROPIC_TTL_5M = 300.0
ANTHROPIC_TTL_1H = 3600.0
CLAUDE_CODE_1H_FROM = (2, 1, 20)  # the first version whose logged sessions all write 1-hour cache entries
# The versions whose lifetime no transcript tells: 2.1.17's package asks for 1 hour behind its experiment (cli.js
# ``gUA``); 2.1.14 and earlier and 2.1.19 write 5-minute entries in every logged session, 2.1.15-2.1.18 are between.
CLAUDE_CODE_TTL_EXPERIMENT = ((2, 1, 15), (2, 1, 19))
# From this version a prompt command or a skill leaves the thinking setting as it was (2.1.38 cli.js: the expanded
# command's ``maxThinkingTokens`` is ``void 0``; 2.0.76-2.1.37 compute 0 from it: ``THINKING_OFF`` below).
CLAUDE_CODE_THINKING_KEPT_FROM = (2, 1, 38)
# The versions whose log holds each answer's output count as the stream began, not as it ended. 2.1.12-2.1.29's packages
# write a line per content block at its ``content_block_stop`` with the ``message_start`` message's usage (2.1.29 cli.js
# ``message:{...e,content:HIA([f1],...)}``, ``e`` that message) and nothing updates it; 2.1.31's also gives the last
# line the final usage at ``message_delta`` (``f1.message={...f1.message,usage:O1}``), and the logs of 2.1.31-2.1.45
# hold the final count for some calls (a mean 43-473 output tokens a call by version and first part, a median 1-25). The
# lower edge is the logs': 2.1.5's and 2.1.7's calls log a mean 293 and 214 output tokens, 2.1.12-2.1.29's 2.2-7.1
# (../shared/real_sessions_large; the streaming code of the 2.1.5, 2.1.7 and 2.1.12 packages is the same, and what wrote
# the final count into the earlier logs is not traced).
CLAUDE_CODE_START_OUTPUT = ((2, 1, 12), (2, 1, 31))
OPENAI_TTL = 600.0  # "5 to 10 minutes of inactivity": in the Codex rollouts 98% of calls within 10 minutes hit
OPENAI_MAX_TTL = 3600.0  # "up to a maximum of one hour": past 10 minutes ~2 in 3 hit, past an hour none
OPENAI_MIN_TOKENS = 1024
OPENAI_INCREMENT = 128
# Google's implicit caching (Gemini 2.5 and newer, on by default, nothing billed for writing): the minimum prompt is
# 2,048 tokens for Gemini 2.5 and 4,096 for Gemini 3.x (https://ai.google.dev/gemini-api/docs/caching, updated
# 2026-10-13); the lifetime is not published, so OpenAI's in-memory one stands in (an assumption, said as such).
GOOGLE_MIN_TOKENS = {"gemini-2.5": 2048}
GOOGLE_MIN_TOKENS_DEFAULT = 4096


def provider_of(agent: str | None, model: str | None = None, endpoint: str | None = None) -> str:
    """Whose prompt cache bills a call: the endpoint an agent logs (OpenCode's ``providerID``, Pi's ``provider``)
    when it names a provider, else the model id's maker, else the agent's own (Claude Code: Anthropic; Codex,
    Copilot CLI's GPT models: OpenAI; Gemini CLI: Google). ``github-copilot`` is its own: GitHub's API bills
    through its own usage, which reports cache reads and no writes (../shared/real_sessions_large's OpenCode 1.4.3
    export: claude-sonnet-4.6 through github-copilot, 3,325,432 tokens read from the cache, none written)."""
    ep = (endpoint or "").lower()
    if ep == "github-copilot":
        return "github-copilot"
    if ep in ("anthropic", "google", "openai"):
        return ep
    if ep.startswith("openai") or ep == "azure":
        return "openai"
    name = (model or "").lower().rsplit("/", 1)[-1]
    if "claude" in name:
        return "anthropic"
    if name.startswith(("gpt-", "o1", "o3", "o4", "codex")):
        return "openai"
    if name.startswith(("gemini", "gemma")):
        return "google"
    return {"claude_code": "anthropic", "codex": "openai", "gemini_cli": "google"}.get(agent or "", "unknown")


def bill_units(agent: str | None, model: str | None = None) -> dict[str, float]:
    """The bill-unit weights of a session: its agent's (Claude Code, Codex), else its model's provider's."""
    if agent in BILL_UNITS:
        return BILL_UNITS[agent or ""]
    return PROVIDER_UNITS.get(provider_of(agent, model), BILL_UNITS["claude_code"])


@dataclass(frozen=True, kw_only=True)
class Bill:
    """Tokens per class over a session's model calls (output includes reasoning)."""

    calls: int = 0
    input: int = 0  # uncached input
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0

    def units(self, agent: str | None, model: str | None = None) -> float:
        """The bill in bill units (``bill_units``: the agent's, else its model's provider's)."""
        w = bill_units(agent, model)
        return (self.input * w["input"] + self.cache_write * w["cache_write"] + self.cache_read * w["cache_read"]
                + self.output * w["output"])

    def dollars(self, prices: Any, *, one_hour_writes: bool = False) -> float:
        """The bill at ``prices`` (a ``counting.prices.Prices``: cache reads and writes at their own prices; writes
        of 1-hour entries at theirs when ``one_hour_writes`` and the registry has it)."""
        read = prices.cache_read_per_token if prices.cache_read_per_token is not None else prices.input_per_token
        write = prices.cache_write_per_token if prices.cache_write_per_token is not None else prices.input_per_token
        if one_hour_writes and prices.cache_write_1h_per_token is not None:
            write = prices.cache_write_1h_per_token
        return (self.input * prices.input_per_token + self.cache_read * read + self.cache_write * write
                + self.output * prices.output_per_token)

    def to_json(self) -> dict[str, int]:
        return {"calls": self.calls, "input": self.input, "cache_read": self.cache_read,
                "cache_write": self.cache_write, "output": self.output}


@dataclass(frozen=True, kw_only=True)
class CacheRules:
    """The provider's prompt cache as the bill applies it (see the module docstring for the sources)."""

    provider: str  # anthropic | openai
    ttl_seconds: float  # past this the cache is gone
    writes_billed: bool
    sure_seconds: float | None = None  # until this the cache is sure to hold (None: until ttl_seconds)
    increment: int = 1  # cached tokens come in multiples of this
    min_tokens: int = 0  # a shorter prompt is not cached
    turn_reads_to_turn_start: bool = False  # a new user turn reads only up to where the previous turn began
    late_hits: bool = True  # the cache may outlive its sure lifetime (past its edge): False where the lifetime is known
    lifetime_per_session: bool = False  # one of two lifetimes for the whole session (an experiment's arm), not per call
    thinking_switch: bool = False  # a call whose thinking setting differs from the previous call's reads no message
    start_output: bool = False  # the log counts each answer's output as its stream began (``CLAUDE_CODE_START_OUTPUT``)

    @property
    def one_hour_writes(self) -> bool:
        """Whether writes are 1-hour entries (priced as such: Anthropic's ``ttl: "1h"``)."""
        return self.provider == "anthropic" and (self.sure_seconds or self.ttl_seconds) >= ANTHROPIC_TTL_1H

    def describe(self) -> str:
        def span(seconds: float) -> str:
            return f"{seconds / 60:g} minutes" if seconds < 3600 else f"{seconds / 3600:g} hour"
        life = span(self.ttl_seconds)
        if self.sure_seconds is not None and self.sure_seconds < self.ttl_seconds:
            life = f"{span(self.sure_seconds)} (at most {life})"
        return f"{self.provider} prompt cache, lifetime {life}"


def cache_rules(agent: str | None, version: str | None, model: str | None = None,
                endpoint: str | None = None) -> CacheRules:
    """The cache rules of the provider an agent's version calls (``provider_of``: by the endpoint it logs, else by
    the model's maker, else by the agent)."""
    provider = provider_of(agent, model, endpoint)
    if provider == "openai":
        return CacheRules(provider="openai", ttl_seconds=OPENAI_MAX_TTL, sure_seconds=OPENAI_TTL, writes_billed=False,
                          increment=OPENAI_INCREMENT, min_tokens=OPENAI_MIN_TOKENS,
                          turn_reads_to_turn_start=agent == "codex")
    if provider == "google":
        name = (model or "").lower()
        least = next((n for prefix, n in GOOGLE_MIN_TOKENS.items() if name.startswith(prefix)), GOOGLE_MIN_TOKENS_DEFAULT)
        return CacheRules(provider="google", ttl_seconds=OPENAI_MAX_TTL, sure_seconds=OPENAI_TTL, writes_billed=False,
                          min_tokens=least)
    if provider in ("github-copilot", "unknown"):
        # Reads reported, writes not billed; the lifetime is the model maker's shortest (Anthropic's 5 minutes for
        # Claude, OpenAI's 10 for the rest), since the proxy's own request options are not logged.
        sure = ANTHROPIC_TTL_5M if "claude" in (model or "").lower() else OPENAI_TTL
        return CacheRules(provider=provider, ttl_seconds=OPENAI_MAX_TTL, sure_seconds=sure, writes_billed=False)
    v = parse_version(version)
    one_hour = agent == "claude_code" and v >= CLAUDE_CODE_1H_FROM
    sure = ANTHROPIC_TTL_1H if one_hour else ANTHROPIC_TTL_5M
    lo, hi = CLAUDE_CODE_TTL_EXPERIMENT
    start_lo, start_hi = CLAUDE_CODE_START_OUTPUT
    # Claude Code's own lifetime is known but in its experiment's versions; another agent's request options are not
    known = agent == "claude_code" and not lo <= v < hi
    return CacheRules(provider="anthropic", ttl_seconds=ANTHROPIC_TTL_1H, sure_seconds=sure, writes_billed=True,
                      late_hits=not known, lifetime_per_session=agent == "claude_code" and not known,
                      thinking_switch=agent == "claude_code" and v < CLAUDE_CODE_THINKING_KEPT_FROM,
                      start_output=agent == "claude_code" and start_lo <= v < start_hi)


def log_cache_rules(log: Any) -> CacheRules:
    """``cache_rules`` of a ``SessionLog``: its agent, version, first model and the endpoint it logs."""
    providers = log.extra.get("providers") if isinstance(log.extra, dict) else None
    endpoint = providers[0] if isinstance(providers, list) and providers and isinstance(providers[0], str) else None
    model = log.models[0] if log.models else None
    return cache_rules(log.agent, log.version, model, endpoint)


# Version families: where the logs show one cache lifetime and one way of counting output (the docstring above), and
# where Claude Code almost stopped missing its cache at new user turns: 1 of the 77 plain and task-list turns (and 0
# of 3 after a command) of the large set's 2.1.38-2.1.45 sessions within the lifetime missed it, against 28 of 255
# (and 19 of 33) in 2.1.20-2.1.37 (the edge is the data's: 2.1.38's changelog names no cache change).
_FAMILIES = {"claude_code": ((2, 1, 2), (2, 1, 12), (2, 1, 20), (2, 1, 31), (2, 1, 38)), "codex": ((0, 140),)}


def bill_family(agent: str | None, version: str | None) -> str:
    """The version family a session's bill model is fitted by: ``agent`` plus the version range it falls in."""
    edges = _FAMILIES.get(agent or "", ())
    v = parse_version(version)
    lo: tuple[int, ...] | None = None
    hi: tuple[int, ...] | None = None
    for edge in edges:
        if v >= edge:
            lo = edge
        elif hi is None:
            hi = edge
    def name(t: tuple[int, ...]) -> str:
        return ".".join(str(x) for x in t)
    if lo is None and hi is None:
        return agent or "unknown"
    if lo is None:
        return f"{agent} <{name(hi)}" if hi else f"{agent}"
    return f"{agent} {name(lo)}+" if hi is None else f"{agent} {name(lo)}-<{name(hi)}"


@dataclass(frozen=True, kw_only=True)
class BillModel:
    """What the cache rules and the transcript do not tell, fitted per agent and version family."""

    agent: str
    family: str
    reset_cached_tokens: int = 0  # what a compaction leaves cached (system prompt, tool schemas)
    turn_miss_share: float = 0.0  # expected share of the cached prefix a new user turn loses anyway
    call_miss_share: float = 0.0  # the same at other calls
    command_miss_share: float = 0.0  # the same after a slash command or a skill's instructions (``command_turn``)
    task_miss_share: float = 0.0  # the same at a new user turn after a turn that changed the task list (``TASK_TOOLS``)
    late_hit_share: float = 0.0  # share of the cached prefix still there between sure_seconds and ttl_seconds
    edge_hit_share: float = 0.0  # the same within ``LATE_EDGE`` x sure_seconds
    uncached_per_call: float = 0.0  # Anthropic: input after the last cache breakpoint
    output_ratio: float = 1.0  # output tokens per visible token of the assistant message (chars / 4)
    output_per_call: float = 0.0
    # the output the log holds where it counts it as the stream began (``CacheRules.start_output``): the median logged
    # output of calls whose answer opens with text or reasoning, and of those that open with a tool call
    start_output: float = 0.0
    start_output_tool: float = 0.0
    anchor_share: float = 1.0  # context of the last call before an automatic compaction over the agent's trigger
    carry_share: float = 0.0  # share of the nearest anchored window's shift a window without an anchor takes
    sessions: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "family": self.family, "reset_cached_tokens": self.reset_cached_tokens,
                "turn_miss_share": round(self.turn_miss_share, 4), "call_miss_share": round(self.call_miss_share, 4),
                "command_miss_share": round(self.command_miss_share, 4),
                "task_miss_share": round(self.task_miss_share, 4),
                "late_hit_share": round(self.late_hit_share, 4), "edge_hit_share": round(self.edge_hit_share, 4),
                "uncached_per_call": round(self.uncached_per_call, 2), "output_ratio": round(self.output_ratio, 4),
                "output_per_call": round(self.output_per_call, 2), "start_output": round(self.start_output, 2),
                "start_output_tool": round(self.start_output_tool, 2), "anchor_share": round(self.anchor_share, 4),
                "carry_share": round(self.carry_share, 4),
                "sessions": self.sessions}


def bill_model_table(models: dict[str, BillModel], *, uncached: bool = False) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows) of fitted bill models, one row each, as ``workbench calibrate`` prints them and
    docs/reality.md shows them (``uncached``: with Anthropic's tokens after the last breakpoint, Claude Code's)."""
    columns: list[tuple[str, Callable[[BillModel], Any]]] = [
        ("logs", lambda m: m.sessions), ("cached after a reset", lambda m: f"{m.reset_cached_tokens:,}"),
        ("turn miss", lambda m: f"{m.turn_miss_share:.3f}"), ("command miss", lambda m: f"{m.command_miss_share:.3f}"),
        ("task miss", lambda m: f"{m.task_miss_share:.3f}"), ("call miss", lambda m: f"{m.call_miss_share:.4f}"),
        ("edge hit", lambda m: f"{m.edge_hit_share:.2f}"), ("late hit", lambda m: f"{m.late_hit_share:.2f}")]
    if uncached:
        columns.append(("uncached / call",
                        lambda m: f"{m.uncached_per_call:,.0f}" if m.agent == "claude_code" else "–"))
    columns += [("output / visible", lambda m: f"{m.output_ratio:.3f}"),
                ("output / call", lambda m: f"{m.output_per_call:.1f}"),
                ("output at start (tool first)", lambda m: f"{m.start_output:.0f} ({m.start_output_tool:.0f})"
                 if m.start_output or m.start_output_tool else "–"),
                ("anchor", lambda m: f"{m.anchor_share:.3f}"), ("carry", lambda m: f"{m.carry_share:.2f}")]
    return (["bill model"] + [h for h, _ in columns],
            [[name] + [cell(m) for _, cell in columns] for name, m in models.items()])


# Fitted by ``fit_bill_model`` on every session of ../shared/real_sessions_large with usage (``python
# scripts/reality_after_bill.py --print-fits`` prints them; docs/reality.md): the defaults ``workbench reality`` bills
# with, per version family and per agent (the fallback).
SHIPPED: dict[str, BillModel] = {
    "claude_code": BillModel(agent="claude_code", family="claude_code", reset_cached_tokens=25409, turn_miss_share=0.0230, call_miss_share=0.0023, command_miss_share=0.0473, task_miss_share=0.2963, late_hit_share=0.4286, edge_hit_share=0.5047, uncached_per_call=13.88, output_ratio=0.4630, output_per_call=33.60, start_output=1.00, start_output_tool=25.00, anchor_share=0.9991, carry_share=0.9950, sessions=58),
    "claude_code 2.1.12-<2.1.20": BillModel(agent="claude_code", family="claude_code 2.1.12-<2.1.20", reset_cached_tokens=18888, turn_miss_share=0.0470, call_miss_share=0.0042, command_miss_share=0.0000, task_miss_share=0.0373, late_hit_share=0.4286, edge_hit_share=0.2979, uncached_per_call=22.42, output_ratio=0.4630, output_per_call=33.60, start_output=1.00, start_output_tool=15.00, anchor_share=1.0002, carry_share=0.9950, sessions=11),
    "claude_code 2.1.2-<2.1.12": BillModel(agent="claude_code", family="claude_code 2.1.2-<2.1.12", reset_cached_tokens=34243, turn_miss_share=0.0077, call_miss_share=0.0037, command_miss_share=0.0473, task_miss_share=0.2963, late_hit_share=0.0000, edge_hit_share=0.6200, uncached_per_call=16.24, output_ratio=0.8119, output_per_call=11.93, start_output=1.00, start_output_tool=25.00, anchor_share=0.9982, carry_share=0.9950, sessions=14),
    "claude_code 2.1.20-<2.1.31": BillModel(agent="claude_code", family="claude_code 2.1.20-<2.1.31", reset_cached_tokens=25409, turn_miss_share=0.0376, call_miss_share=0.0005, command_miss_share=0.0767, task_miss_share=0.7646, late_hit_share=0.0000, edge_hit_share=0.0000, uncached_per_call=14.26, output_ratio=0.4630, output_per_call=33.60, start_output=1.00, start_output_tool=25.00, anchor_share=0.9995, carry_share=0.9950, sessions=8),
    "claude_code 2.1.31-<2.1.38": BillModel(agent="claude_code", family="claude_code 2.1.31-<2.1.38", reset_cached_tokens=16606, turn_miss_share=0.0211, call_miss_share=0.0007, command_miss_share=0.0473, task_miss_share=0.5641, late_hit_share=0.0000, edge_hit_share=0.0000, uncached_per_call=7.09, output_ratio=0.2020, output_per_call=30.80, start_output=2.00, start_output_tool=25.00, anchor_share=0.9992, carry_share=0.9950, sessions=12),
    "claude_code 2.1.38+": BillModel(agent="claude_code", family="claude_code 2.1.38+", reset_cached_tokens=19316, turn_miss_share=0.0038, call_miss_share=0.0013, command_miss_share=0.0000, task_miss_share=0.0000, late_hit_share=0.0000, edge_hit_share=0.0000, uncached_per_call=2.72, output_ratio=0.4865, output_per_call=0.00, start_output=2.00, start_output_tool=25.00, anchor_share=0.9969, carry_share=0.9950, sessions=11),
    "claude_code <2.1.2": BillModel(agent="claude_code", family="claude_code <2.1.2", reset_cached_tokens=34361, turn_miss_share=0.0000, call_miss_share=0.0008, command_miss_share=0.0473, task_miss_share=0.2963, late_hit_share=0.0000, edge_hit_share=0.0000, uncached_per_call=76.27, output_ratio=1.0533, output_per_call=0.00, start_output=1.00, start_output_tool=25.00, anchor_share=1.0003, carry_share=0.9950, sessions=2),
    "codex": BillModel(agent="codex", family="codex", reset_cached_tokens=9600, turn_miss_share=0.0660, call_miss_share=0.0115, command_miss_share=0.0000, task_miss_share=0.0660, late_hit_share=0.5998, edge_hit_share=0.9988, uncached_per_call=5635.49, output_ratio=1.2193, output_per_call=120.63, start_output=0.00, start_output_tool=0.00, anchor_share=0.9194, carry_share=0.5071, sessions=7),
    "codex 0.140+": BillModel(agent="codex", family="codex 0.140+", reset_cached_tokens=9600, turn_miss_share=0.0684, call_miss_share=0.0127, command_miss_share=0.0000, task_miss_share=0.0660, late_hit_share=0.7427, edge_hit_share=0.9988, uncached_per_call=5838.18, output_ratio=1.2936, output_per_call=80.96, start_output=0.00, start_output_tool=0.00, anchor_share=0.9334, carry_share=0.5071, sessions=5),
    "codex <0.140": BillModel(agent="codex", family="codex <0.140", reset_cached_tokens=14336, turn_miss_share=0.0036, call_miss_share=0.0073, command_miss_share=0.0000, task_miss_share=0.0660, late_hit_share=0.0336, edge_hit_share=0.9988, uncached_per_call=4895.61, output_ratio=1.1546, output_per_call=233.29, start_output=0.00, start_output_tool=0.00, anchor_share=0.8402, carry_share=0.5071, sessions=2),
}


# Whose fitted cache behaviour an agent without a fit of its own borrows, by the provider that bills it: the misses
# and the late hits are the provider's cache's (a call to OpenAI misses as often from Pi as from Codex), the output
# per visible token the model maker's; what a compaction leaves cached, the tokens after the last breakpoint and how
# near its trigger an agent's measure puts the bill (the anchor) are the agent's own, so they are not borrowed.
PROVIDER_MODEL = {"openai": "codex", "anthropic": "claude_code", "google": "codex", "github-copilot": "codex"}


def shipped_model(agent: str | None, version: str | None, provider: str | None = None) -> BillModel:
    """The shipped bill model of a session's family (its agent's; else, given the ``provider`` that bills it, the
    cache behaviour fitted on that provider's agent, ``PROVIDER_MODEL``; else an empty one)."""
    family = bill_family(agent, version)
    found = SHIPPED.get(family) or SHIPPED.get(agent or "")
    if found is not None:
        return found
    borrowed = SHIPPED.get(PROVIDER_MODEL.get(provider or "", ""))
    if borrowed is not None:
        return replace(borrowed, agent=agent or "unknown", family=family, reset_cached_tokens=0, uncached_per_call=0.0,
                       anchor_share=1.0, sessions=0)
    return BillModel(agent=agent or "unknown", family=family)


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model call as the replay models it."""

    index: int  # the assistant message
    context: int  # tokens sent: the replay's context just before the message
    visible: int  # the assistant message's visible size (``visible_chars`` / 4): what output is modelled from
    time: float | None  # when its request was sent (``request_time``, seconds)
    turn: bool  # a new user turn came before it
    reset: bool  # the first call after a logged compaction (or of the session), a resume or a synthetic message
    command: bool = False  # a slash command or a skill's instructions came before it (``command_turn``)
    task: bool = False  # a new user turn after a turn whose calls completed the task list (``TASK_TOOLS``, ``all_done``)
    model: str | None = None  # the model that answered (the log's): each model has its own cache
    anchor: float | None = None  # the last call before a logged automatic compaction: the agent's trigger (tokens)
    thinking: bool | None = None  # whether the request had thinking on (``window_calls``; None: not known yet)
    blocks: int = 0  # content blocks sent before it in its window (message parts, at least one a message)
    opens_with_tool: bool = False  # its answer's first part is a tool call (``CacheRules.start_output``)


def timestamp(msg: Message) -> float | None:
    """The message's ``createdAt`` in seconds (None when absent or unreadable)."""
    return seconds(msg.meta("createdAt"))


def request_time(messages: Sequence[Message], index: int) -> float | None:
    """When the call answered by ``messages[index]`` was sent: the time of the message before it (the prompt or tool
    result whose arrival sends the request), else the answer's own time.

    The cache's lifetime runs between requests, and an answer is written a response's length after its request (a
    long one, or one that first writes 100,000 tokens to the cache, takes a minute). Timed so, in the 5-minute Claude
    Code sessions of ../shared/real_sessions_large every call up to 321 s after the request before it read that
    call's prefix and none past 360 s (0 of 71); the held-out bill with usage ignored came within 10% for 51 of 65
    sessions with the repository left out, against 49 of 65 timed by the answers (``scripts/reality_targets.py``)."""
    if index > 0:
        sent = timestamp(messages[index - 1])
        if sent is not None:
            return sent
    return timestamp(messages[index])


def seconds(value: Any) -> float | None:
    """An ISO timestamp in seconds (None when it is not one)."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


# What a user message holds when the user ran a slash command or a skill was invoked (Claude Code logs them as user
# messages: <command-name>, <bash-input>, <local-command-stdout>, ..., and the skill's text marked isMeta). The next
# call missed the cache in 74 of 101 such turns of the Claude Code sessions of ../shared/real_sessions_large of
# 2.1.20 and later, against 59 of 378 plain user turns: a command changes the request (model, settings, tools).
COMMAND_TAGS = ("<command-", "<bash-", "<local-command-")
SKILL_PREFIX = "Base directory for this skill"


# The tools that change Claude Code's task list (2.1.x's TaskCreate and TaskUpdate, which replaced TodoWrite). What
# misses is the first call of the user turn after a turn whose task calls left every task completed (``all_done``:
# Claude Code resets such a list, 2.1.25 cli.js ``NM1``/``iq1``; how that reaches the prompt is not traced): in the
# large set's 2.1.20-2.1.37 sessions, within the lifetime and with no thinking switch, 6 of 6 such turns read only
# the system prompt and tools, against 1 of 9 after a turn that changed a list still open and 1 of 33 with a
# completed list not changed in the turn before (2.1.38-2.1.45: 1 of 10; 2.0.76-2.1.19: 1 of 2). Its share is
# still fitted (*task miss*), on those turns only.
TASK_TOOLS = ("TaskCreate", "TaskUpdate")


def _task_calls(msg: Message) -> list[tuple[str, dict[str, Any]]]:
    """(tool name, part object) of each of a message's calls that change the task list (names by ``tool_name_of``)."""
    out = []
    for p in msg.parts or ():
        data = p.data
        if isinstance(data, dict) and (name := tool_name_of(data)) in TASK_TOOLS:
            out.append((name, data))
    return out


def changes_tasks(msg: Message) -> bool:
    """Whether an assistant message calls a tool that changes the task list."""
    return bool(_task_calls(msg))


def track_tasks(msg: Message, tasks: dict[str, str], created: int) -> tuple[int, bool]:
    """How many tasks were created so far once an assistant message's task calls changed ``tasks`` (in place), and
    whether it made any: TaskCreate adds a pending task (numbered in order, as Claude Code numbers them), TaskUpdate
    sets a task's status (``deleted`` drops it)."""
    calls = _task_calls(msg)
    for name, data in calls:
        args = data.get("input")
        args = args if isinstance(args, dict) else {}
        if name == "TaskCreate":
            created += 1
            tasks[str(created)] = "pending"
        elif isinstance(args.get("status"), str) and args.get("taskId") is not None:
            key = str(args["taskId"])
            if args["status"] == "deleted":
                tasks.pop(key, None)
            else:
                tasks[key] = args["status"]
    return created, bool(calls)


def all_done(tasks: dict[str, str]) -> bool:
    """Whether a task list has tasks and every one is completed (Claude Code resets such a list: 2.1.25 cli.js
    ``NM1`` deletes its files 5 seconds after, ``iq1``)."""
    return bool(tasks) and all(status == "completed" for status in tasks.values())


def command_turn(msg: Message) -> bool:
    """Whether a user message is a slash command's record or a skill's instructions."""
    if msg.role != "user":
        return False
    text = msg.text.lstrip()
    return text.startswith(COMMAND_TAGS) or (msg.meta("isMeta") is True and text.startswith(SKILL_PREFIX))


# What switches Claude Code's thinking (``CacheRules.thinking_switch``, the module docstring): a command's or skill's
# expanded text, which Claude Code logs as an isMeta user message (a skill's "Base directory for this skill: ...", a
# custom command's body), switches it off for the calls after it until the next plain prompt, which switches it
# back on (unless its ``thinkingMetadata`` says off: the reader's ``thinkingOff``). A local command's caveat is isMeta
# too but expands nothing. In ../shared/real_sessions_large's 2.1.20-2.1.37 sessions, within the lifetime, 34 of the
# 38 first calls of a turn where the setting switched read only the system prompt and tools, against 14 of the 226
# turns where it did not; 9 of the 11 calls right after a skill the model invoked mid-turn, against 5 of 2,580
# other calls (2.0.76-2.1.19: 3 of 3; from 2.1.38, where nothing switches, 6 of 83 turns).
META_NOT_EXPANSION = ("<local-command-caveat>", "Caveat:")


def expands_command(msg: Message) -> bool:
    """Whether a user message is a prompt command's or a skill's expanded text (thinking off after it)."""
    return msg.role == "user" and msg.meta("isMeta") is True and not msg.text.lstrip().startswith(META_NOT_EXPANSION)


def prompt_thinking(msg: Message) -> bool | None:
    """The thinking setting a user message sets: off after a command's expansion, the prompt's own (on unless its
    ``thinkingMetadata`` said off) after a plain prompt, None (unchanged) for anything else."""
    if expands_command(msg):
        return False
    if (msg.role != "user" or msg.meta("isMeta") is True or msg.meta("isCompactSummary") is True
            or not is_user_turn(msg) or command_turn(msg)):
        return None
    return msg.meta("thinkingOff") is not True


def carried_thinking(history: History, end: int) -> bool | None:
    """The thinking setting of the last prompt among the log's messages before ``end`` (None where none sets one).

    Claude Code computes a query's thinking budget once, from the user input that starts it (2.1.33 cli.js: the
    input's processing returns ``maxThinkingTokens:eg([D],...)`` for the new prompt message alone), and an
    automatic compaction runs inside that query with the same options: the window after a compaction is sent with
    the setting of the prompt before it, not with none."""
    msgs = history.messages
    for k in range(min(end, len(msgs)) - 1, -1, -1):
        if msgs[k].role == "user":
            found = prompt_thinking(msgs[k])
            if found is not None:
                return found
    return None


def thinking_switched(c: ModelCall, prev: ModelCall | None) -> bool:
    """Whether ``c`` was sent with another thinking setting than ``prev`` (both known)."""
    return prev is not None and c.thinking is not None and prev.thinking is not None and c.thinking != prev.thinking


# How far back from a breakpoint the cache looks for a cached prefix, in content blocks ("The cache system checks
# for hits at each block boundary going backward from your explicit breakpoint, up to 20 blocks":
# https://platform.claude.com/docs/en/build-with-claude/prompt-caching). In the large set's 2.1.17-2.1.37 sessions
# 9 of the 11 calls after a switch whose own setting's latest call ended within 20 message parts read that call's
# whole prefix (to 2%); 32 of the 40 whose own setting's call was further back, or none, read less than half of what
# the call before them wrote (most only the system prompt and tools).
LOOKBACK_BLOCKS = 20


def thinking_read(c: ModelCall, own: ModelCall | None, rules: CacheRules, kept: float) -> float:
    """What a call after a thinking switch reads: the prefix ``own`` (the latest earlier call with ``c``'s setting
    and model) wrote, if within the lifetime and the cache's look-back, else what a reset leaves (``kept``)."""
    if own is not None and c.blocks - own.blocks <= LOOKBACK_BLOCKS:
        shared = expected_read(c, own, rules, 0)
        if shared:
            return shared
    return kept


# json.dumps(args, ensure_ascii=False, default=str), its encoder made once (dumps builds one per call with these
# options: most of its time on a tool call's few arguments); ``args_chars`` needs it only where orjson writes otherwise.
_ARGS_JSON = json.JSONEncoder(ensure_ascii=False, default=str).encode
_INT64 = 2**63


def _orjson_dumps() -> Callable[[Any], bytes] | None:
    try:
        import orjson
    except ImportError:  # pragma: no cover - a dependency; json is the fallback
        return None
    return orjson.dumps


_DUMPS = _orjson_dumps()


def _spaces(value: Any) -> int | None:
    """The spaces ``json.dumps`` writes into ``value`` (one after each ``,`` and ``:``), when orjson writes the rest of
    its text alike: strings (the same escapes), whole numbers of 64 bits, booleans, nulls, lists, objects with string
    keys. None for anything else (a float: ``1e+16`` against ``1e16``), which json then writes. Never looks inside a
    string, so a large argument costs no more than a small one."""
    spaces = 0
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        v = pop()
        t = type(v)
        if t is dict:
            if v:
                spaces += 2 * len(v) - 1
            for k, x in v.items():
                if type(k) is not str:
                    return None
                if type(x) is not str:
                    push(x)
        elif t is list:
            if v:
                spaces += len(v) - 1
            for x in v:
                if type(x) is not str:
                    push(x)
        elif t is int:
            if not -_INT64 <= v < _INT64:
                return None
        elif not (v is None or t is bool or t is str):
            return None
    return spaces


def args_chars(args: Any) -> int:
    """``len(json.dumps(args, ensure_ascii=False, default=str))``, from orjson's text and the spaces it leaves out
    (``_spaces``) where that is the same text: a Write or Edit call's arguments hold whole files, which orjson writes
    several times as fast. Anything orjson refuses (a lone surrogate) or writes otherwise goes to json."""
    if _DUMPS is not None:
        spaces = _spaces(args)
        if spaces is not None:
            try:
                out = _DUMPS(args)
            except TypeError:  # orjson.JSONEncodeError: a lone surrogate, nesting past its limit
                pass
            else:
                return (len(out) if out.isascii() else len(out.decode("utf-8"))) + spaces
    return len(_ARGS_JSON(args))


def visible_chars(msg: Message) -> int:
    """What an answer shows of itself, in chars: its text and reasoning text, and its tool calls' arguments."""
    total = 0
    for part in msg.parts or ():
        data = part.data
        if not isinstance(data, dict):
            continue
        text = data.get("text")
        if isinstance(text, str):
            total += len(text)
        args = data.get("input")
        if args is not None and str(data.get("type", "")).startswith(("tool-", "dynamic-tool")):
            total += len(args) if isinstance(args, str) else args_chars(args)
    return total


# The model Claude Code writes on an assistant message it makes itself, without calling the API (an API error's
# text, "No response requested.", an interrupted request): 16 of the large set's assistant messages, none with usage.
# No call, so no bill. The call after one, like the call after a resumed session's restart (the reader's
# ``resumed``: its SessionStart:resume hook), rebuilds its request and reads only the system part from the cache, as
# after a compaction: every such call of ../shared/real_sessions_large and real_sessions (14 after a resume, 7 after a
# synthetic message, an /exit or an API error) read less than half the prefix the call before it wrote (15,764-16,608
# tokens, the system prompt and tool schemas, or nothing past the 5-minute lifetime).
SYNTHETIC_MODEL = "<synthetic>"


def _model(msg: Message) -> str | None:
    model = msg.meta("model")
    return model if isinstance(model, str) else None


def _opens_with_tool(msg: Message) -> bool:
    """Whether the answer's first part is a tool call (by ``tool_name_of``, the tool call's one home)."""
    parts = msg.parts
    data = parts[0].data if parts else None
    return isinstance(data, dict) and tool_name_of(data) is not None


def window_calls(history: History, segment: History, offset: int, lo: int, hi: int, tokens: np.ndarray,
                 base: int, *, reset: bool, anchor: float | None = None) -> list[ModelCall]:
    """The calls at the assistant messages of ``segment`` whose log index is in [lo, hi): each sent with ``base``
    (hidden prefix, what the agent re-attached) plus the segment's tokens before it; the last one carries ``anchor``
    (the agent's trigger, when the window ends at a logged automatic compaction)."""
    before = np.concatenate(([0], np.cumsum(tokens, dtype=np.int64))).tolist()  # read one at a time: Python ints
    out: list[ModelCall] = []
    msgs = segment.messages
    blocks = 0  # content blocks of the messages before this one
    turn = command = rebuilt = tasks = False
    # the thinking setting the calls are sent with (``prompt_thinking``): the last prompt's in the log before ``lo``
    # too, since Claude Code sets it once per user input and its compaction keeps it (``carried_thinking``); not
    # before ``offset``, which lies before the window by what the segment carries in
    thinking = carried_thinking(history, lo)
    task_list: dict[str, str] = {}  # the task list as the window's task calls built it (``track_tasks``)
    created = 0
    # every message from the segment's start: those before lo count as blocks sent (the setting they made is
    # ``carried_thinking``'s: what the segment carries in are copies of earlier messages, not new prompts)
    for j in range(min(len(msgs), max(0, hi - offset))):
        m = msgs[j]
        g = j + offset
        if g >= lo:
            md = m.metadata  # m.meta, inlined: every message of every window
            if isinstance(md, dict) and md.get("resumed") is True:
                rebuilt = True
        sent, blocks = blocks, blocks + max(1, len(m.parts or ()))
        if m.role != "assistant":
            if m.role == "user" and g >= lo:
                switch = prompt_thinking(m)
                thinking = thinking if switch is None else switch
            if g >= lo and is_user_turn(m):
                turn = True
                command = command or command_turn(m)
            continue
        if g < lo:
            continue
        model = _model(m)
        if model == SYNTHETIC_MODEL:  # no call; what came before it was answered locally (a command's output)
            turn = command = False
            rebuilt = True
            continue
        task = turn and tasks and all_done(task_list)  # the turn before this one completed the task list
        created, changed = track_tasks(m, task_list, created)
        tasks = (tasks and not turn) or changed
        logged = history.messages[g]
        out.append(ModelCall(index=g, context=int(base + before[j]), visible=math.ceil(visible_chars(m) / 4),
                             time=request_time(history.messages, g), turn=turn, reset=(reset and not out) or rebuilt,
                             command=command, task=task, model=model if logged is m else _model(logged),
                             thinking=thinking, blocks=sent, opens_with_tool=_opens_with_tool(m)))
        turn = command = rebuilt = False
    if out and anchor is not None:
        out[-1] = replace(out[-1], anchor=anchor)
    return out


@dataclass(frozen=True, kw_only=True)
class BillWindow:
    """One window of a followed log, as the bill reads it: its calls at log indices [lo, hi), each sent with
    ``base`` plus the segment's per-message ``tokens`` before it."""

    segment: History
    offset: int
    lo: int
    hi: int
    tokens: np.ndarray
    base: int
    reset: bool
    trigger: float | None = None  # the agent's trigger (tokens) when the window ends at a logged automatic compaction
    estimated: bool = False  # its tokens are the estimate's (no usage): the trigger anchors them (``anchored``)


def anchor_shift(calls: Sequence[ModelCall], share: float) -> float | None:
    """What one window's calls must move by for its last one to send ``share`` x its anchor (the agent's trigger);
    None when the window ends at no automatic compaction."""
    if not calls or calls[-1].anchor is None:
        return None
    return share * calls[-1].anchor - calls[-1].context


def moved(calls: Sequence[ModelCall], shift: float) -> list[ModelCall]:
    """The calls with the same ``shift`` added to each one's context: what the window started with that the
    estimate got wrong."""
    return [replace(c, context=max(0, int(round(c.context + shift)))) for c in calls]


def anchored(calls: Sequence[ModelCall], share: float) -> list[ModelCall]:
    """One window's calls moved so that its last one sends ``share`` x its anchor (``anchor_shift``)."""
    shift = anchor_shift(calls, share)
    return list(calls) if shift is None else moved(calls, shift)


def session_calls(history: History, windows: Iterable[BillWindow],
                  model: BillModel | None = None) -> tuple[ModelCall, ...]:
    """Every model call of a followed log, window after window; with ``model``, each estimated window that ends at
    a logged automatic compaction anchored on the agent's trigger (``anchored``, ``model.anchor_share``), and each
    other estimated window moved by ``model.carry_share`` x the shift of the nearest anchored window of the session
    (the one before it, else the one after): what every window starts with, the hidden prefix, the estimate gets
    equally wrong. The first window of a log that starts mid-session lends no shift: most of its own is the
    earlier context the file lacks, which its compaction folded away."""
    windows = list(windows)
    per_window = [window_calls(history, w.segment, w.offset, w.lo, w.hi, w.tokens, w.base, reset=w.reset,
                               anchor=w.trigger) for w in windows]
    if model is None:
        return tuple(c for calls in per_window for c in calls)
    shifts = [anchor_shift(calls, model.anchor_share) if w.estimated else None
              for calls, w in zip(per_window, windows, strict=True)]
    mid = history.log is not None and history.log.starts_mid_session
    lenders = [k for k, s in enumerate(shifts) if s is not None and not (k == 0 and mid)]
    out: list[ModelCall] = []
    for k, calls in enumerate(per_window):
        shift = shifts[k]
        if shift is None and windows[k].estimated and model.carry_share and lenders:
            before = max((j for j in lenders if j < k), default=None)
            lender = shifts[before if before is not None else min(j for j in lenders if j > k)]
            assert lender is not None
            shift = model.carry_share * lender
        out += calls if shift is None else moved(calls, shift)
    return tuple(out)


def session_bill(history: History, windows: Iterable[BillWindow],
                 model: BillModel | None = None) -> tuple[Bill, tuple[ModelCall, ...]]:
    """(the modelled bill, the calls it was computed on) of a followed log, with ``model`` or the shipped one."""
    log = history.log
    agent, version = (log.agent, log.version) if log is not None else (None, None)
    rules = log_cache_rules(log) if log is not None else cache_rules(agent, version)
    model = model or shipped_model(agent, version, rules.provider)
    windows = list(windows)
    calls = session_calls(history, windows, model)
    own = first_call_own(windows, calls)
    return modelled_bill(calls, rules, model, earlier=earlier_call(history, calls, own)), calls


def first_call_own(windows: Sequence[BillWindow], calls: Sequence[ModelCall]) -> int:
    """The tokens of a followed log's own messages before its first call (``earlier_call``'s ``own``): not in what
    the call before it, which the file lacks, sent."""
    first = windows[0] if windows else None
    if first is None or not calls or not first.lo <= calls[0].index < first.hi:
        return 0
    return int(np.sum(first.tokens[: max(0, calls[0].index - first.offset)]))


def earlier_call(history: History, calls: Sequence[ModelCall], own: int = 0) -> ModelCall | None:
    """A log that starts mid-session: the last call of its earlier part, which the file lacks, as its first call
    finds it in the cache: what that call sent less the file's own messages before it, at the time of the file's
    first record (Claude Code opens such a file with the records that closed the turn before it: its stop hook's
    summary, the turn's duration). In ../shared/real_sessions_large the 5 of 10 such logs whose first call came within
    the 5-minute lifetime of that record read their whole prefix from the cache; the 5 past it read nothing. ``own``:
    the tokens of the file's messages before its first call."""
    log = history.log
    when = seconds(log.extra.get("earlier_time")) if log is not None and isinstance(log.extra, dict) else None
    if when is None or not calls or calls[0].reset:
        return None
    c = calls[0]
    return replace(c, index=-1, context=max(0, c.context - own), visible=0, time=when, turn=False, command=False, task=False,
                   anchor=None)


def modelled_bill(calls: Sequence[ModelCall], rules: CacheRules, model: BillModel, *,
                  earlier: ModelCall | None = None) -> Bill:
    """The bill of ``calls`` under the provider's cache rules and the fitted model (``earlier``: the call before
    them that the log lacks, ``earlier_call``, unbilled)."""
    tin = tread = twrite = 0
    tout = 0.0
    last: dict[str | None, ModelCall] = {}  # each model's latest call: a model reads only its own cache
    setting: dict[tuple[str | None, bool | None], ModelCall] = {}  # the same per thinking setting (``thinking_read``)
    turn_first = 0  # input of the first call of the turn the previous call belongs to
    if earlier is not None:
        last[earlier.model] = earlier
        turn_first = earlier.context
    for c in calls:
        prev, switched = previous_call(c, last)
        own = setting.get((c.model, c.thinking))
        shared = 0.0 if switched else _shared(c, prev, rules, model, turn_first, own)
        read = max(0, min(c.context, int(shared)))
        if rules.increment > 1:
            read -= read % rules.increment
        if c.context < rules.min_tokens:
            read = 0
        rest = c.context - read
        if rules.writes_billed:
            uncached = min(rest, int(round(model.uncached_per_call)))
            write = rest - uncached
        else:
            uncached, write = rest, 0
        tin += uncached
        tread += read
        twrite += write
        if rules.start_output:
            tout += model.start_output_tool if c.opens_with_tool else model.start_output
        else:
            tout += max(0.0, model.output_ratio * c.visible + model.output_per_call)
        if not last or c.turn or c.reset:
            turn_first = c.context
        if c.reset:  # what the calls before a reset wrote holds other messages: no later call reads it
            setting.clear()
        last[c.model] = c
        setting[(c.model, c.thinking)] = c
    return Bill(calls=len(calls), input=tin, cache_read=tread, cache_write=twrite, output=int(round(tout)))


def previous_call(c: ModelCall, last: dict[str | None, ModelCall]) -> tuple[ModelCall | None, bool]:
    """(the latest earlier call of ``c``'s model, whether ``c`` is the first call of a model after other models').

    A prompt cache holds one model's prefix: a call on another model (a ``/model`` change, Claude Code's fallback
    to another model) finds only what that model cached itself, and a call back on the first model reads what that
    model's latest call wrote, if within the lifetime (the large set's one switch between two calls with usage,
    claude-sonnet-4-5 to claude-haiku-4-5, reads 14% of the prefix the call before it wrote; the model reads 0). A call without a logged model (Codex logs the model per turn, not
    per call) shares the cache of the calls around it."""
    if not last:
        return None, False
    if c.model is None or (len(last) == 1 and None in last):  # no model is known: the latest call of all
        return max(last.values(), key=lambda x: x.index), False
    found = last.get(c.model)
    if found is None:
        return None, not c.reset
    return found if found.index >= (last[None].index if None in last else -1) else last[None], False


# How far past the sure lifetime a call still counts as at its edge: in the large set's 5-minute Claude Code
# sessions, timed by their requests (``request_time``), 12 of 23 calls 300-360 s after the request before them read
# its prefix and none of 71 later (2.1.17's sessions aside, whose 1-hour experiment reads it at 13 of 33 later gaps).
LATE_EDGE = 1.2


def near(c: ModelCall, prev: ModelCall, rules: CacheRules) -> bool:
    """Whether a late call (``late``) came within ``LATE_EDGE`` x the sure lifetime."""
    if rules.sure_seconds is None or c.time is None or prev.time is None:
        return False
    return c.time - prev.time <= rules.sure_seconds * LATE_EDGE


def late(c: ModelCall, prev: ModelCall, rules: CacheRules) -> bool:
    """Whether ``c`` came after the cache's sure lifetime (but within its longest)."""
    if rules.sure_seconds is None or c.time is None or prev.time is None:
        return False
    return rules.sure_seconds < c.time - prev.time <= rules.ttl_seconds


def expected_read(c: ModelCall, prev: ModelCall | None, rules: CacheRules, turn_first: int) -> float | None:
    """What the cache rules let ``c`` read, before any miss: None after a reset (or for the first call), 0 past
    the lifetime, else what the previous call wrote (OpenAI, at a new turn: up to where the previous turn began)."""
    if prev is None or c.reset:
        return None
    if c.time is not None and prev.time is not None and c.time - prev.time > rules.ttl_seconds:
        return 0.0
    shared = float(prev.context)
    if c.turn and rules.turn_reads_to_turn_start:
        shared = min(shared, float(turn_first))
    return shared


def late_share(model: BillModel, rules: CacheRules) -> float:
    """The share of the prefix a call past the edge of the sure lifetime reads: none where the lifetime is known;
    where each session has one of two lifetimes (Claude Code's experiment), all or nothing by the arm most of the
    fitted sessions were in (``late_hit_share`` is then that share of sessions); else the fitted share."""
    if not rules.late_hits:
        return 0.0
    if rules.lifetime_per_session:
        return 1.0 if model.late_hit_share > 0.5 else 0.0
    return model.late_hit_share


def _shared(c: ModelCall, prev: ModelCall | None, rules: CacheRules, model: BillModel, turn_first: int,
            own: ModelCall | None = None) -> float:
    """The prefix ``c`` reads from the cache: the rules' read, less the expected misses (after a thinking switch,
    ``thinking_read`` of ``own``, the latest earlier call with ``c``'s setting)."""
    kept = float(model.reset_cached_tokens)
    shared = expected_read(c, prev, rules, turn_first)
    if shared is None:
        return kept
    if not shared:
        return 0.0
    assert prev is not None
    if late(c, prev, rules):
        shared *= model.edge_hit_share if near(c, prev, rules) else late_share(model, rules)
    if rules.thinking_switch and thinking_switched(c, prev):
        return thinking_read(c, own, rules, min(shared, kept))
    miss = (model.command_miss_share if c.command else model.task_miss_share if c.task
            else model.turn_miss_share if c.turn else model.call_miss_share)
    return shared * (1.0 - miss)


def logged_bill(history: History) -> Bill | None:
    """The bill the log records: each logged call's usage once (the readers merge a response logged over several
    lines, Claude Code's content blocks, and drop a Codex call logged twice), summed by class."""
    log = history.log
    if log is None or not log.calls:
        return None
    seen: set[int] = set()
    tin = tread = twrite = tout = 0
    for call in log.calls:
        if call.index in seen:
            continue
        seen.add(call.index)
        u = call.usage
        tin += u.input_tokens
        tread += u.cache_read_tokens
        twrite += u.cache_write_tokens
        tout += u.output_tokens
    return Bill(calls=len(seen), input=tin, cache_read=tread, cache_write=twrite, output=tout)


def logged_calls_as_modelled(history: History, calls: Sequence[ModelCall]) -> list[ModelCall]:
    """``calls`` with each context replaced by what the log billed for it (input + cache reads + writes): what the
    fit measures the cache's behaviour on. Calls without usage are left out."""
    out = []
    for c in calls:
        usage = history.messages[c.index].usage
        if usage is not None:
            out.append(replace(c, context=usage.context_tokens))
    return out


def fit_bill_model(sessions: Iterable[tuple[History, Sequence[ModelCall]]], *, agent: str, family: str,
                   prior: BillModel | None = None) -> BillModel:
    """Fit the bill model to sessions with usage: (history, its modelled calls) pairs of one agent (and family).

    Each quantity is measured on the logged calls against the cache rules: the reset part as the median cache
    read of the first call after a compaction, the miss shares as the mean share of the expected read a call did
    not get (new user turns and other calls apart, calls past the lifetime left out), the uncached tokens as a
    mean, output as least squares of the logged output on the visible size and a constant, and the anchor share as
    the median of what the last call before each automatic compaction billed over the agent's trigger. A miss share
    is the tokens missed over the tokens expected (summed over calls, so that it predicts a session's total).

    A share no call of ``sessions`` measures (a family with no call at the edge of its lifetime, none after a
    command) is ``prior``'s, the agent's fit over all its families (``fit_bill_models``), not 0: no call measured
    is no evidence that none would read (``_measured``)."""
    resets: list[int] = []
    lost = {"command": 0.0, "task": 0.0, "turn": 0.0, "call": 0.0}  # what the expected read did not get, by kind
    expected = {"command": 0.0, "task": 0.0, "turn": 0.0, "call": 0.0}
    late_read = late_expected = edge_read = edge_expected = 0.0
    arms: list[bool] = []  # per session of one lifetime per session: whether its late calls read the cache
    edges = lates = False  # whether any session's rules let a call come past the sure lifetime, and read then
    uncached: list[int] = []
    anchors: list[float] = []
    triggers: list[float] = []
    firsts: list[int] = []  # each whole log's first call: its hidden prefix, mostly
    vis: list[float] = []
    outs: list[float] = []
    starts: dict[bool, list[float]] = {False: [], True: []}  # logged output counted as the stream began, by tool first
    n = 0
    for history, calls in sessions:
        log = history.log
        if log is None:
            continue
        n += 1
        rules = log_cache_rules(log)
        # the median call of 2.1.31 and later is still logged as its stream began (the final count reaches the log
        # only when its line is not yet written): their calls measure the start counts as well
        at_start = rules.start_output or (log.agent == "claude_code"
                                          and parse_version(log.version) >= CLAUDE_CODE_START_OUTPUT[1])
        edges = edges or (rules.sure_seconds or rules.ttl_seconds) < rules.ttl_seconds
        lates = lates or rules.late_hits
        logged = logged_calls_as_modelled(history, calls)
        if logged and not log.starts_mid_session and logged[0].index == calls[0].index:
            firsts.append(logged[0].context)
        last: dict[str | None, ModelCall] = {}
        turn_first = 0
        own_read = own_expected = 0.0
        for c in logged:
            prev, switched = previous_call(c, last)
            usage = history.messages[c.index].usage
            assert usage is not None
            uncached.append(usage.input_tokens)
            if c.anchor:
                anchors.append(c.context / c.anchor)
                triggers.append(c.anchor)
            if at_start:
                starts[c.opens_with_tool].append(float(usage.output_tokens))
            if not rules.start_output:  # a count as the stream began tells nothing of the answer's size
                vis.append(float(c.visible))
                outs.append(float(usage.output_tokens))
            shared = 0.0 if switched else expected_read(c, prev, rules, turn_first)
            if shared is None:
                if prev is not None and usage.cache_read_tokens > 0:
                    resets.append(usage.cache_read_tokens)
            elif shared > 0 and prev is not None and late(c, prev, rules) and near(c, prev, rules):
                edge_read += min(shared, usage.cache_read_tokens)
                edge_expected += shared
            elif shared > 0 and prev is not None and late(c, prev, rules) and not rules.late_hits:
                pass  # past the edge of a known lifetime: nothing is read, nothing to measure
            elif shared > 0 and prev is not None and late(c, prev, rules):
                late_read += min(shared, usage.cache_read_tokens)
                late_expected += shared
                own_read += min(shared, usage.cache_read_tokens)
                own_expected += shared
            elif shared > 0 and rules.thinking_switch and thinking_switched(c, prev):
                pass  # the thinking switch explains what it missed (``_shared``): no share of a kind to measure
            elif shared > 0:
                kind = "command" if c.command else "task" if c.task else "turn" if c.turn else "call"
                lost[kind] += max(0.0, shared - usage.cache_read_tokens)
                expected[kind] += shared
            if not last or c.turn or c.reset:
                turn_first = c.context
            last[c.model] = c
        if rules.lifetime_per_session and own_expected:
            arms.append(own_read >= own_expected / 2)
    kept = int(np.median(resets)) if resets else 0
    base = prior or BillModel(agent=agent, family=family)
    # no answer's size measured (every call logged as its stream began): the prior's
    ratio, per_call = _output_fit(np.asarray(vis), np.asarray(outs)) if vis else (base.output_ratio,
                                                                                   base.output_per_call)
    turn_miss = _measured(lost["turn"], expected["turn"], base.turn_miss_share)
    return BillModel(agent=agent, family=family, reset_cached_tokens=kept, turn_miss_share=turn_miss,
                     # no turn after a task list change to measure on: the prior's, else a plain turn's
                     task_miss_share=_measured(lost["task"], expected["task"],
                                               base.task_miss_share if prior is not None else turn_miss),
                     call_miss_share=_measured(lost["call"], expected["call"], base.call_miss_share),
                     command_miss_share=_measured(lost["command"], expected["command"], base.command_miss_share),
                     # one lifetime per session: the share of sessions whose late calls read the cache; none
                     # where the rules let no call read past the sure lifetime (1 hour, a known lifetime)
                     late_hit_share=(float(np.mean(arms)) if arms
                                     else _measured(late_read, late_expected, base.late_hit_share) if lates
                                     else 0.0),
                     edge_hit_share=_measured(edge_read, edge_expected, base.edge_hit_share) if edges else 0.0,
                     uncached_per_call=float(np.mean(uncached)) if uncached else 0.0,
                     output_ratio=ratio, output_per_call=per_call,
                     start_output=float(np.median(starts[False])) if starts[False] else base.start_output,
                     start_output_tool=float(np.median(starts[True])) if starts[True] else base.start_output_tool,
                     anchor_share=float(np.median(anchors)) if anchors else 1.0,
                     carry_share=_carry_share(firsts, anchors, triggers), sessions=n)


def _measured(part: float, expected: float, prior: float) -> float:
    """The share ``part`` of ``expected`` (tokens missed, or read), or ``prior`` where no call measured it."""
    return part / expected if expected else prior


# A version family is fitted on its own where this many logs have it; with fewer, its sessions take the agent's fit.
FAMILY_MIN_LOGS = 2


def fit_bill_models(agent: str, sessions: Sequence[tuple[History, Sequence[ModelCall], str | None]]
                    ) -> dict[str, BillModel]:
    """The agent's bill model on every (history, calls, version) of ``sessions``, then each version family's that
    ``FAMILY_MIN_LOGS`` of them have, on its own sessions with the agent's carry share (``with_agent_carry``) and
    the agent's shares where its own calls measure none (``fit_bill_model``'s ``prior``)."""
    fits = {agent: fit_bill_model([(h, calls) for h, calls, _ in sessions], agent=agent, family=agent)}
    families = [bill_family(agent, version) for *_, version in sessions]
    for family in sorted(set(families)):
        mine = [(h, calls) for (h, calls, _), f in zip(sessions, families, strict=True) if f == family]
        if len(mine) >= FAMILY_MIN_LOGS:
            fits[family] = with_agent_carry(fit_bill_model(mine, agent=agent, family=family, prior=fits[agent]),
                                            fits[agent])
    return fits


def with_agent_carry(family: BillModel, agent: BillModel) -> BillModel:
    """A version family's fit with its agent's carry share: what it weighs, the spread of the hidden prefix between
    logs, is the users' (their CLAUDE.md, tools, MCP servers), not the version's, and a family holds too few users
    to measure it (``_carry_share``)."""
    return replace(family, carry_share=agent.carry_share)


def _spread(values: Sequence[float]) -> float:
    """The sample standard deviation (0 for fewer than two values): over a few logs of two users, the median
    absolute deviation is the one user's and says 0."""
    return float(np.std(np.asarray(values, dtype=float), ddof=1)) if len(values) >= 2 else 0.0


def _typical_distance(values: Sequence[float]) -> float:
    """The median absolute deviation from the median (0 for fewer than two values): what one more value is
    typically off by, whatever a rare far one (an anchor 6% past the trigger, one compaction of 67)."""
    if len(values) < 2:
        return 0.0
    a = np.asarray(values, dtype=float)
    return float(np.median(np.abs(a - np.median(a))))


def _carry_share(firsts: Sequence[int], anchors: Sequence[float], triggers: Sequence[float]) -> float:
    """How much of an anchored window's shift another window of the session takes: the shift measures what every
    window starts with (the hidden prefix, which differs by user: the spread of the logs' first calls) plus the
    agent's measure's own distance from its bill at the trigger (the anchor shares' typical distance x the trigger,
    which belongs to that one compaction). The share is the first's variance over both (a precision weight): near 1
    where the agent compacts at its bill (Claude Code), near 0 where its measure is not the bill (Codex)."""
    prefix = _spread(firsts) ** 2
    noise = (_typical_distance(anchors) * float(np.median(triggers))) ** 2 if triggers else 0.0
    return prefix / (prefix + noise) if prefix + noise > 0 else 0.0


def _output_fit(vis: np.ndarray, out: np.ndarray) -> tuple[float, float]:
    """(ratio, per call) of out ~ ratio x vis + per call by least squares, both kept >= 0."""
    if not len(vis):
        return 1.0, 0.0
    a = np.vstack([vis, np.ones_like(vis)]).T
    coef, *_ = np.linalg.lstsq(a, out, rcond=None)
    ratio, per_call = float(coef[0]), float(coef[1])
    if ratio < 0:
        return 0.0, float(max(0.0, out.mean()))
    if per_call < 0:
        return float(max(0.0, (vis @ out) / max(1e-9, vis @ vis))), 0.0
    return ratio, per_call
