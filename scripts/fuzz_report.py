"""Run the fuzz campaign of tests/fuzzing.py and write docs/reliability.md with the counts per family.

    python scripts/fuzz_report.py                 # the short budget (what CI runs), ~1 minute
    python scripts/fuzz_report.py --budget long   # the long budget, ~15 minutes on 2 cores
    python scripts/fuzz_report.py --no-write      # print the table only

Each family runs in one worker process; a case over the wall-clock bound counts as a hang. The
fault suite (tests/test_faults.py) is run with pytest and its outcome added to the page.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fuzzing import (  # noqa: E402
    BUDGETS,
    CASE_BOUND_S,
    Tally,
    Worker,
    hypothesis_family,
    knob_value_cases,
    knob_yaml_cases,
    mutation_cases,
    provider_cases,
    run_family,
)
from fuzzing_logs import FAMILY_SEEDS, MUTATORS, agent_log_cases, full_disk_cases  # noqa: E402
from test_faults import tmpfs  # noqa: E402

WHAT = {
    "samples": "mutations of the shipped samples (first lines of short, tool_heavy, long): truncation, bytes, "
               "lines, a JSON value swapped for a hostile one, deep nesting, whole-file format changes, lines of "
               "another format; run through simulate, probe, bundles, the offload log, presets",
    "shared": "the same mutations of ../shared real transcripts (real_histories, real_sessions)",
    "histories": "hypothesis-built histories in five formats, two in three well-formed and one hostile",
    "knob-values": "`--set` with huge, non-finite, YAML-tricky, unicode, regex-bomb and unknown values",
    "knob-yaml": "`--config` files: bad values, duplicate and non-text keys, alias bombs, deep nesting, 200k keys, "
                 "binary, UTF-16, cut files, wrong versions",
    "provider": "live cascades over HTTP against tests/fake_provider.py: slow, failing, short, leaking, trickling, "
                "key-echoing and key-parroting models, alone and in cascades",
    "numbers": "Claude Code, Codex, OpenCode, Copilot CLI, Gemini CLI and Pi logs (tests/fuzzing_logs.py seeds) with a number, usually a usage field, made "
               "Infinity, NaN, 1e400, 10^30, 2^64, negative, fractional, a 400-digit integer or text; run through "
               "simulate (agent's settings and stagewise's), reality (with and without usage), calibrate, probe",
    "types": "the same logs with any value (`type`, `payload`, `message`, `content`, `usage` more often) of another "
             "JSON type: objects, arrays, null, booleans, numbers, strings",
    "metadata": "the readers' own bookkeeping names (index, line, summary, kept, usage, loggedTokens, $set, ...) with "
                "hostile values inside compactMetadata, toolUseResult, message, payload, token_count info, OpenCode's "
                "info/state/tokens, Copilot's data, Gemini's tokens and $set",
    "images": "image blocks and input_image URLs with cut, corrupted or absurd PNG, GIF, WebP (VP8, VP8L, VP8X) and "
              "JPEG headers, payloads that are not base64, odd data URLs, in user messages and tool results (OpenCode "
              "file parts, Gemini inlineData, Pi image blocks, Copilot attachment paths)",
    "glued": "agent logs with records glued on one line, lines cut or split in the middle, CRLF, garbage lines: a "
             "damaged log without garbage must be read past the damage (exit 0), not refused (an OpenCode export, one "
             "document, is cut or wrapped instead)",
    "full-disk": "bundles (with and without --force), the offload log, sweep CSV and parquet, probe CSV and "
                 "calibrate's YAML written to a 1 MiB tmpfs left with 0 B to 150 kB: a complete result, or exit 1 with "
                 "one line and the previous file intact (a full stdout under `simulate --json`: the fault suite)",
}


def run(budget: str) -> list[tuple[Tally, float]]:
    from fake_provider import FakeProvider

    out = []
    with tempfile.TemporaryDirectory(prefix="workbench-fuzz-") as tmp, FakeProvider(slow_s=1.5) as fake:
        os.environ.setdefault("WORKBENCH_CACHE_DIR", str(Path(tmp) / "default-cache"))
        for family, n in BUDGETS[budget].items():
            folder = Path(tmp) / family
            folder.mkdir()
            worker = Worker({"WORKBENCH_CACHE_DIR": str(folder / "cache")})
            t0 = time.perf_counter()
            if family == "samples":
                tally = run_family(family, mutation_cases(folder, n, shared=False, seed=1), worker)
            elif family == "shared":
                tally = run_family(family, mutation_cases(folder, n, shared=True, seed=2), worker)
            elif family == "histories":
                tally = hypothesis_family(folder, n, worker, seed=3)
            elif family == "knob-values":
                tally = run_family(family, knob_value_cases(folder, n, seed=4), worker)
            elif family == "knob-yaml":
                tally = run_family(family, knob_yaml_cases(folder, n, seed=5), worker)
            elif family in MUTATORS:
                tally = run_family(family, agent_log_cases(family, folder, n, seed=FAMILY_SEEDS[family]), worker)
            elif family == "full-disk":
                with tmpfs(folder / "disk", "size=1m") as mounted:
                    if not mounted:
                        print("full-disk: cannot mount a tmpfs here (needs root): skipped")
                        worker.close()
                        continue
                    tally = run_family(family, full_disk_cases(folder / "disk", folder, n, seed=12), worker)
            else:
                tally = run_family(family, provider_cases(folder, fake.api_base), worker)
            worker.close()
            out.append((tally, time.perf_counter() - t0))
            print(f"{family:<12} tried {tally.tried:>5}  clean {tally.clean:>5}  crash {tally.crash:>3}  "
                  f"hang {tally.hang:>3}  (exit 0: {tally.exit0}, 1: {tally.exit1}, 2: {tally.exit2})  "
                  f"{time.perf_counter() - t0:.0f}s", flush=True)
            for f in tally.findings[:5]:
                print("    " + f.replace("\n", " | ")[:400])
    return out


def faults() -> str:
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/test_faults.py", "-q", "-p", "no:cacheprovider"],
                          capture_output=True, text=True, cwd=REPO)
    lines = [line for line in done.stdout.splitlines() if " passed" in line or " failed" in line]
    return lines[-1].strip("= ") if lines else f"pytest exited {done.returncode}"


def page(results: list[tuple[Tally, float]], budget: str, fault_line: str, seconds: float) -> str:
    rows = ["| family | what | tried | clean | crash | hang | exit 0 / 1 / 2 | seconds |", "|---|---|---|---|---|---|---|---|"]
    for t, s in results:
        rows.append(f"| {t.family} | {WHAT[t.family]} | {t.tried:,} | {t.clean:,} | {t.crash} | {t.hang} | "
                    f"{t.exit0:,} / {t.exit1:,} / {t.exit2:,} | {s:.0f} |")
    total = sum(t.tried for t, _ in results)
    bad = sum(t.crash + t.hang for t, _ in results)
    findings = [f"- {t.family}: {f.splitlines()[0][:300]}" for t, _ in results for f in t.findings[:3]]
    return f"""# Reliability

What the bounded fuzz and fault campaign of issues 12 and 19 found in the latest run, and how to run it again.
The rule for every case: exit 0 with a valid result (JSON with its sections, complete bundles, an offload
log that starts with a section), or exit 2 with exactly one error line that names the input (the file,
with its line and field where there is one, or `--set`); every stderr line (the error, warnings, notes)
is at most 700 characters. A live run that its guard stopped (every model failing) exits 1 with the JSON
of the run so far, and a write to a full disk exits 1 with one line naming it and the previous file intact;
those count as clean only then. An agent log damaged by a kill or a race (glued or cut lines) must be read
(exit 0), not refused. Anything else is a **crash** (a traceback, another exit 1, exit 3 (a bug the command
line caught), an unnamed or multi-line error); a case over {CASE_BOUND_S:g} s of wall clock is a **hang** (its
worker is killed and replaced). Each family runs in one worker process (recycled every 200 cases), so
a case costs milliseconds: ``workbench.cli.main`` is called with the case's arguments.

    python scripts/fuzz_report.py                 # short budget (the one CI runs in tests/test_fuzz.py)
    python scripts/fuzz_report.py --budget long   # long budget; also: python -m pytest -m long tests/test_fuzz.py

## Latest run

Budget **{budget}**, {total:,} cases, {bad} crashes or hangs, {seconds:.0f} s on {os.cpu_count()} cores
({platform.python_implementation()} {platform.python_version()}); seeds are fixed, so a rerun tries the same cases.

{chr(10).join(rows)}

Fault suite (`tests/test_faults.py`: cache under a regular file, on a read-only and on a full tmpfs, its
fallback read by a rerun, two concurrent live runs sharing one cache, a crashed in-flight holder, a full disk
under `simulate --json` and `sweep --out` (RLIMIT_FSIZE), kill -9 in the offload append, the sweep outputs,
the YAML export, the bundles and their `--force` swap, leftovers removed by the next run, and kills from
outside at random moments): {fault_line}.

{"Findings of this run:" + chr(10) + chr(10).join(findings) if findings else "No finding in this run."}

## Limits and policies the campaign checks

| what | limit or policy | where |
|---|---|---|
| history file | regular files only (a FIFO, a device, a folder are refused before reading); at most 1 GiB, `WORKBENCH_MAX_HISTORY_BYTES=N` or `load_history(..., max_bytes=N)` to change | `workbench/history/readers/loading.py` |
| memory of a parse | a file (or upload) whose values would take over 6 times its size is refused before parsing, from a count of its commas and braces (outside strings when the fast count is over); files under 64 MiB of values never are; a large array of non-objects is refused by its first item. Real logs count 1.8-2.4 times their size | `workbench/history/readers/parse_bounds.py` (`check_parse_cost`) |
| JSON nesting | 200 levels, checked on the text before parsing (a linear scan, brackets in strings ignored) | `workbench/history/readers/jsontext.py` |
| a cut-off last JSONL line | left out with a warning naming it (`History.warnings`), when earlier lines parsed | `workbench/history/readers/jsontext.py` |
| a damaged line inside an agent log | (two records glued on one line, half a record) skipped with a warning naming file and line, the rest read; in other formats, or past a quarter of the good lines (and 3), the first one's error | `workbench/history/readers/jsontext.py` (`corrupt_line_warnings`) |
| numbers in an agent log | a token count is a whole number from 0 to 10^13: any other (Infinity, NaN, 1e400, 10^30, negative, text) makes that call's usage (or that compaction's size, that window) unknown, with a warning naming file, line and field; a Codex window outside `context_window_tokens`' range is clamped with a warning | `workbench/history/session_log.py` (`token_count`), `analysis/real_logs/agent_settings.py` |
| record shapes | a `type` of any JSON type is an unknown record type (a warning); `compactMetadata` gives only `trigger` and `preTokens`; an image header cut short is an image of unknown size (`image_default_tokens`) | `workbench/history/readers/claude_code.py`, `codex.py`, `images.py` |
| folders given to `reality` and `calibrate` | symbolic links are followed only inside the folder: a link out of it (file or folder) is skipped with a note naming its target (name the target to read it); a file reached by two names is read once | `workbench/cli/reality.py` (`folder_logs`) |
| a bug that reaches the command line | a ValueError no workbench `raise` wrote (e.g. `int(nan)` in a count) prints its traceback and exits 3, never as bad input's exit 2 | `workbench/cli/__init__.py` |
| error and warning lines | one line; a quoted value is cut to 80 characters with its length; a HistoryError's text to 400; a CLI line to 500 | `workbench/history/warnings.py`, `errors.py`, `cli/common.py` |
| knobs YAML | no aliases (an alias bomb is refused before any expansion), 20 levels, 5,000 values, 1,000,000 characters (a file over 4 MB is not read), text keys only, duplicate keys refused by line | `workbench/knobs/yaml_io.py` |
| knob numbers | whole numbers at or above 10^18 refused before any float conversion; check lists of at most 9 digits a number | `workbench/knobs/values.py` |
| `pin_pattern` | the `regex` module, one time budget for all of a replay's searches (2 s + 1 s per 5 M characters searched): a catastrophic pattern fails with an error naming the knob, the budget and the message it stopped in | `workbench/knobs/pin_pattern.py` (`PinPattern.matches`) |
| uploads | any file name (`..`, empty, over 255 bytes): a SQLite store is copied under a fixed name, errors name the upload | `workbench/ui/sources.py` (`read_upload`) |
| lone surrogates | kept in the engine; JSON outputs write them as `\\udXXX` escapes (lossless); Markdown and XML get U+FFFD and the command says how many | `workbench/io/files.py` |
| exports | temp file in the same folder, fsync, rename (sweep/tune/probe outputs, YAML, samples, canonical JSONL); a full disk fails with one line naming the file, the old file kept; bundles: a temp folder renamed into place, or exchanged whole with an existing one (`--force`); a kill leaves at most a hidden `.NAME.<pid>.<hex>.tmp`, `.tmpdir` or `.old`, removed by the next write of that target | `workbench/io/files.py` |
| JSON on stdout | written whole with `os.write` in a loop: a full disk under `> file` is exit 1 with one line (`cannot write the output to stdout`), never exit 0 with part of the JSON | `workbench/io/files.py` (`write_stream`) |
| offload log | append-only, one journaled write per run under `flock`; an append cut by a kill or a full disk is rolled back (by the next run, or at once) and reported with its line; a torn tail without a journal is reported and the next section starts on its own line; one file per thread id (a safe id is its own name, any other a slug, `~` and a hash of the exact id) | `workbench/io/append.py`, `workbench/analysis/offload.py` |
| answer cache | a fault (read-only, under a file, full) is reported once and the answers go to a fallback folder named in the warning, where a rerun reads them (in memory only if that fails too); one payer per prompt across processes (in-flight marker, expires after the cascade's bound, taken over when its holder is gone); known key values scrubbed from answers | `workbench/briefing/cache.py`, `live.py` |
| count caches | a run on a cache shared with earlier runs (the app, sweep workers) equals a run on a fresh one: every knob-derived array is computed from the knobs' view (`knobs.counting`) alone and kept under it | `workbench/counting/counters.py`, `workbench/knobs/values.py` |

## What a write guarantees

- **An export** (sweep, tune, probe outputs, YAML, samples, canonical JSONL) is the old file or the new one,
  whole, whatever kills the writer (a kill before the rename leaves a hidden temporary beside it, removed by
  the next write of that file). A full disk is exit 1 with one line naming the file; the old file stays.
- **JSON on stdout** (`simulate`, `probe`, `real` with `--json`) is whole or the command exits 1 with one line.
  What a shell redirect already took stays in the file: the exit code, not the file, says it is cut.
- **Bundles** (`workbench bundles --out DIR`): DIR is the old folder or the new one, never a mix. A new DIR is
  one rename; an existing one (`--force`) is exchanged with the new folder in one `renameat2(RENAME_EXCHANGE)`
  where Linux has it, and the old one removed, so no bundle of earlier knobs stays. Where there is no exchange,
  the old folder is moved aside first: a kill between the two renames leaves DIR missing and the old folder
  hidden beside (`.DIR.<pid>.<hex>.old`), which the next run puts back. `--force` refuses a folder holding
  anything a bundles run does not write (it replaces the folder whole).
- **Leftovers** of killed writers (`.NAME.<pid>.<hex>.tmp`, `.tmpdir`, `.old`) are removed by the next write of
  the same target when their process is gone; another target's and a live process's are left alone (on a
  folder shared between machines, a pid is checked on this machine only).
- **The offload log** only ever holds whole appends. Each run's sections go out in one `write` on an `O_APPEND`
  descriptor under an exclusive `flock`, after a journal (`.NAME.append`: the size before and after) is synced
  beside the log, and the journal goes once the bytes are synced. A kill can stop the write at any byte: the
  next append finds the journal, cuts the file back to its size before that append (only when the file ends
  inside it), and says so with the line (`an append cut off by a crash (N of M bytes) was rolled back`). A full
  disk mid-append cuts it back at once and fails with one line. Nothing else is ever removed or rewritten. A
  torn tail that no journal explains (a log from before journals) is reported by its missing closing blank
  line, and the next section starts on its own line. Each thread id has its own file: an id that is already a
  portable file name is its own name (older logs stay appendable); any other is a slug, `~` and 16 hex digits
  of the sha256 of the exact id.
- **Paid answers** are never paid for twice by a rerun: when the cache cannot be written they go to
  `$TMPDIR/compaction-workbench-<uid>/briefings-fallback/<hash of the cache path>` (a folder only this user can
  write, refused otherwise), named in the warning, and a later run with the same cache reads it.
- **A replay's result never depends on what ran before it** in the same process: the app's sessions and the
  sweep workers share a `CountCache`, and `tests/test_cache_coherence.py` moves every knob of `KNOB_SPECS` one
  step on four cases and compares each run on the shared cache with one on a fresh cache.
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", choices=sorted(BUDGETS), default="short")
    parser.add_argument("--no-write", action="store_true", help="print only; do not rewrite docs/reliability.md")
    parser.add_argument("--no-faults", action="store_true", help="skip the fault suite")
    args = parser.parse_args()
    t0 = time.perf_counter()
    results = run(args.budget)
    fault_line = "not run" if args.no_faults else faults()
    print(f"fault suite: {fault_line}")
    if not args.no_write:
        (REPO / "docs" / "reliability.md").write_text(page(results, args.budget, fault_line, time.perf_counter() - t0),
                                                      encoding="utf-8")
        print("wrote docs/reliability.md")
    return 1 if any(t.crash or t.hang for t, _ in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
