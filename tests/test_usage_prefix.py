"""The usage counter's measure with any hidden prefix, from one walk without it (``counting.usage``): the replays of a
followed log's window (its own prefix, the measured one) count it once. The same arrays as ``usage_tokens``'s."""

from __future__ import annotations

import random

import numpy as np

from workbench.counting.usage import agent_measure, first_anchor, prefixed_usage_tokens, usage_tokens
from workbench.history.model import Message, Part


def _messages(rng: random.Random, n: int) -> list[Message]:
    out = []
    for i in range(n):
        role = rng.choice(["user", "assistant", "tool", "assistant"])
        meta: dict[str, object] = {}
        if role == "assistant" and rng.random() < 0.5:
            meta["usage"] = {"input_tokens": rng.randint(0, 9000), "cache_read_tokens": rng.randint(0, 50_000),
                             "cache_write_tokens": rng.randint(0, 900), "output_tokens": rng.randint(1, 800),
                             "reasoning_tokens": rng.randint(0, 300)}
        if rng.random() < 0.05:
            meta["loggedContextTokens"] = rng.randint(0, 90_000)
        if rng.random() < 0.03:
            meta["loggedContextTokens"] = True  # not a measure: a bool is no int here
        out.append(Message(id=f"m{i}", role=role, parts=(Part(data={"type": "text", "text": "x" * i}),),
                           metadata=meta))
    return out


def test_any_hidden_prefix_moves_the_unprefixed_measure_from_its_first_anchor_on():
    rng = random.Random(7)
    for case in range(60):
        msgs = _messages(rng, rng.randint(0, 40))
        estimate = np.array([rng.randint(0, 3000) for _ in msgs], dtype=np.int64)
        checks = np.array(sorted(rng.sample(range(len(msgs)), k=len(msgs) // 2)), dtype=np.int64)
        count_added = case % 3 != 0
        ratio = 0.0 if case % 2 else 0.25
        plain = agent_measure(msgs, estimate, 0, count_added=count_added, reasoning_ratio=ratio)
        anchor = first_anchor(msgs)
        for prefix in (0, 1, 15_000, 123_457):
            want = usage_tokens(msgs, estimate, prefix, checks, count_added=count_added, reasoning_ratio=ratio)
            got = prefixed_usage_tokens(plain, anchor, prefix, checks)
            assert got.dtype == want.dtype and np.array_equal(got, want), (case, prefix)
        assert np.array_equal(plain, agent_measure(msgs, estimate, 0, count_added=count_added,
                                                   reasoning_ratio=ratio))  # the walk's array is left as it was
