"""Reader speed as a ratio to ``json.loads`` of the same lines, measured in the same run.

    python benchmarks/bench_readers.py [--messages 100000]

Builds a canonical JSONL and an OpenAI JSONL of N messages from the shipped long sample (repeated with
fresh ids), then times our readers against plain ``json.loads`` per line. Ratios, not seconds, so
the numbers compare across machines. Target: each reader at most ``TARGET`` times ``json.loads`` (it was a unit
test's assert on 20k canonical lines before speed targets moved here).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from workbench.history import History, Message, load_history, parse_history, write_canonical_jsonl
from workbench.history.readers.jsontext import gc_paused

ROOT = Path(__file__).resolve().parents[1]
TARGET = 6.0  # reader time over json.loads of the same lines


def _best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    n = parser.parse_args().messages
    base = load_history(ROOT / "sample_histories" / "long.jsonl").messages
    msgs = tuple(Message(id=f"b{i}", role=m.role, parts=m.parts, metadata=m.metadata)
                 for i, m in zip(range(n), (base[i % len(base)] for i in range(n)), strict=True))
    canonical = write_canonical_jsonl(History(id="bench", messages=msgs))
    openai = "\n".join(json.dumps({"id": f"o{i}", "role": "user" if i % 2 else "assistant",
                                   "content": m.text}) for i, m in enumerate(msgs))
    for name, text in (("canonical", canonical), ("openai_jsonl", openai)):
        lines = [line for line in text.split("\n") if line]
        # the reference gets the same GC pause the readers use, so the ratio is the readers' own work
        ref = _best(gc_paused(lambda lines=lines: [json.loads(line) for line in lines]))
        ours = _best(lambda text=text, source=f"bench.{name}.jsonl": parse_history(text, source=source))
        met = "met" if ours <= TARGET * ref else "NOT met"
        print(f"{name:13s} {n:>7,} messages {len(text) / 1e6:7.1f} MB  json.loads {ref:6.2f}s  "
              f"reader {ours:6.2f}s  ratio {ours / ref:4.2f} (target <= {TARGET:g}x: {met})")


if __name__ == "__main__":
    main()
