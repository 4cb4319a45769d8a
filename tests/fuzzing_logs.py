"""The fuzz families of issue 19 (item 10): agent logs made hostile field by field, and writers on a full disk.

Seeds are small Claude Code and Codex logs built by tests/agent_log_builders.py (usage on every call, an
automatic compaction, images, tool calls and results, a Read result with its line counts) and OpenCode, Copilot CLI,
Gemini CLI and Pi logs built by tests/native_log_builders.py (each with its compaction), so the families need
no ../shared. Each case is one mutation of one seed, run through ``simulate`` (the agent's own settings and
stagewise's), ``reality`` (with and without usage), ``calibrate`` and ``probe``, and judged by tests/fuzzing.py's
rule. Families: ``numbers`` (non-finite and huge numbers: Infinity, NaN, 1e400, 10**30, negative, fractional,
as text), ``types`` (a value of the wrong JSON type anywhere, ``type`` included), ``metadata`` (the reader's own
bookkeeping names inside ``compactMetadata``, ``compacted``, ``token_count`` and the session's fields),
``images`` (cut, corrupt and absurd PNG, GIF, WebP and JPEG headers, payloads that are not base64, odd data
URLs), ``glued`` (records glued on one line, lines cut, garbage lines) and ``full-disk`` (the writers onto a
1 MiB tmpfs filled to a few bytes or kilobytes: one error line and the old file intact, or a complete result).
"""

from __future__ import annotations

import base64
import json
import random
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_log_builders import ClaudeLog, CodexLog, image_block, png_bytes, text_block, tool_use
from fuzzing import REPO, SMALL, Case, _paths, _set_at, _sub
from native_log_builders import CopilotLog, GeminiLog, OpenCodeLog, PiLog, oc_tool

RAW_NUMBERS = ["Infinity", "-Infinity", "NaN", "1e400", "-1e400", "1" + "0" * 30, str(2**63), str(2**64), "-1",
               "1.5", "1e-300", "-0.0", "0", '"12"', "true", "null", "9" * 400, "123456789012345678901234567890.5"]
WRONG_TYPES: list[Any] = [{}, [], [[]], {"a": 1}, "", "x", 0, -1, True, None, [1, "a"], {"type": {"x": 1}},
                          ["user"], {"input_tokens": "many"}]
BOOKKEEPING = ["index", "summary", "line", "summary_index", "timestamp", "parent_missing", "source_line", "trigger",
               "preTokens", "uuid", "kept", "opaque", "before", "after", "sourceLine", "usage", "model", "id",
               # the OpenCode, Copilot CLI, Gemini CLI and Pi readers' own names and the fields they take in
               "briefingUsage", "loggedTokens", "outputTokens", "preCompactionTokens", "summaryContent",
               "tokensBefore", "firstKeptEntryId", "compacted", "$set", "$rewindTo", "parentToolCallId", "agentId",
               "parentId", "createdAt", "tokens", "parts", "toolCalls"]
NASTY_META: list[Any] = [None, "zzz", -1, 10**30, [1], {"a": 1}, True, "", "auto", "manual", 1e308, "\ud800"]

AGENT_COMMANDS: list[tuple[list[str], str]] = [
    (["simulate", "{file}", "--json", "--no-timeline"], "json"),
    (["simulate", "{file}", "--preset", "stagewise", "--json", "--no-timeline", *SMALL], "json"),
    (["reality", "{file}", "--json"], "reality"),
    (["reality", "{file}", "--ignore-usage", "--json"], "reality"),
    (["calibrate", "{file}", "--no-held-out", "--json"], "calibrate"),
    (["probe", "{file}", "--json", *SMALL], "probe"),
]


# ── seeds ───────────────────────────────────────────────────────────────────────────────────────


def claude_seed() -> list[dict[str, Any]]:
    log = ClaudeLog(version="2.1.25")
    for i in range(5):
        log.user(f"Fix test {i}: " + "the date parser fails on leap years. " * 40)
        log.assistant([{"type": "thinking", "thinking": "look first", "signature": "sig"}, text_block("Looking."),
                       tool_use(f"t{i}", "Read", file_path=f"src/m{i}.py")],
                      input_total=4_000 + 2_500 * i, output=150, snapshots=[1, 3, 150])
        log.user([{"type": "tool_result", "tool_use_id": f"t{i}", "content": "def f():\n    pass\n" * 60}],
                 toolUseResult={"file": {"filePath": f"src/m{i}.py", "startLine": 1, "numLines": 120,
                                         "totalLines": 400}})
        log.assistant([text_block("Done " * 50)], input_total=5_500 + 2_500 * i, output=80)
    log.user([text_block("and this screenshot"), image_block(64, 48)])
    log.assistant([text_block("I see it.")], input_total=17_000, output=40)
    log.compact("auto", 17_500, "This session is being continued from a previous conversation. Summary: ...")
    for i in range(3):
        log.user(f"next {i} " + "more work to do here " * 30)
        log.assistant([text_block("ok " * 40)], input_total=6_000 + 1_000 * i, output=60)
    return log.lines


def codex_seed() -> list[dict[str, Any]]:
    log = CodexLog(version="0.142.2", window_logged=258_400)
    log.turn().user("# AGENTS.md instructions for /repo\nBe careful.").user("Triage the issues. " * 50)
    for i in range(5):
        log.reasoning().call(f"c{i}", f"rg pattern{i}").output(f"c{i}", "match line\n" * 80)
        log.tokens(5_000 + 3_000 * i, 200, cached=2_000 + 2_500 * i, reasoning=100)
    log.say("Here is the plan.").tokens(21_000, 120, cached=19_000).end_turn()
    log.turn()._add("response_item", {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "look at this"},
        {"type": "input_image", "image_url": "data:image/png;base64," + base64.b64encode(png_bytes(40, 30)).decode()}]})
    log.reasoning().call("c9").output("c9", "ok")
    log.compacted(["Triage the issues."], after_estimate=9_000)
    log.say("Continuing.").tokens(10_000, 50, cached=8_000).end_turn()
    return log.lines


def opencode_seed() -> list[dict[str, Any]]:
    """An OpenCode export (one JSON document: the only record): steps with tools, a pruned output, a compaction."""
    log = OpenCodeLog()
    for i in range(4):
        log.user(f"step {i}: " + "refactor the parser module. " * 30)
        log.assistant("Reading. " * 20, total=20_000 + 10_000 * i,
                      tools=[oc_tool("read", f"c{i}", "line of code\n" * 120, compacted=log.t + 500 if i == 1 else None)])
    log.compaction().assistant("## Goal\nrefactor the parser", total=50_000, summary=True)
    log.user("go on").assistant("ok", total=9_000)
    return [log.doc()]


def copilot_seed() -> list[dict[str, Any]]:
    log = CopilotLog().system("You are the GitHub Copilot CLI. " * 20)
    for i in range(4):
        log.user(f"task {i} " + "fix the build " * 30).assistant("Looking. " * 10, calls=[(f"c{i}", "powershell")],
                                                                  out=300 + i)
        log.result(f"c{i}", "output line\n" * 80)
    log.event("assistant.message", agent="sub-1", messageId="s", model="claude-opus-4.8", content="sub work",
              toolRequests=[], outputTokens=12, parentToolCallId="c1")
    log.compaction(pre=40_000).user("continue").assistant("Done.", out=20)
    return log.lines


def gemini_seed() -> list[dict[str, Any]]:
    log = GeminiLog()
    for i in range(4):
        log.user(f"read file {i} " + "and explain it " * 30).gemini("Reading it.", prompt=20_000 + 5_000 * i,
                                                                     cached=10_000, calls=[(f"r{i}", "read_file",
                                                                                            "text\n" * 100)])
    log.user("<state_snapshot>\n<overall_goal>explain</overall_goal>\n</state_snapshot>").gemini("ok", prompt=9_000)
    head = {k: v for k, v in log.doc().items() if k != "messages"}
    return [head, *log.messages, {"$set": {"summary": "explained"}}]


def pi_seed() -> list[dict[str, Any]]:
    log = PiLog()
    kept = ""
    for i in range(4):
        log.user(f"review part {i} " + "look for bugs " * 30)
        log.assistant("Checking. " * 10, total=10_000 + 8_000 * i, call=f"c{i}")
        entry = log.result(f"c{i}", "func main() {}\n" * 80)
        kept = kept or (entry if i == 2 else "")
    log.compaction(kept, before=34_000)
    log.user("next")
    log.assistant("Done.", total=8_000, stop="stop")
    return log.lines


SEEDS = (("claude", claude_seed), ("codex", codex_seed), ("opencode", opencode_seed), ("copilot", copilot_seed),
         ("gemini", gemini_seed), ("pi", pi_seed))
DOCUMENT_SEEDS = frozenset({"opencode"})  # one JSON document, written as a .json file


# ── mutations ───────────────────────────────────────────────────────────────────────────────────

_MARK = "__FUZZ_RAW__"


def _lines(records: list[dict[str, Any]], raw: dict[int, str] | None = None) -> list[str]:
    texts = [json.dumps(o) for o in records]
    for i, value in (raw or {}).items():
        texts[i] = texts[i].replace(json.dumps(_MARK), value)
    return texts


def _leaves(value: Any) -> list[tuple[Any, ...]]:
    return [p for p in _paths(value) if p and not isinstance(_get(value, p), (dict, list))]


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def mutate_numbers(records: list[dict[str, Any]], rng: random.Random) -> tuple[list[str], str]:
    """A number somewhere (a usage field more often than not) becomes a hostile literal."""
    i = rng.randrange(len(records))
    leaves = _leaves(records[i])
    numeric = [p for p in leaves if isinstance(_get(records[i], p), (int, float))]
    usage = [p for p in numeric if any(k in ("usage", "info", "compactMetadata", "toolUseResult", "tokens", "data",
                                             "time", "state") for k in p)]
    pool = usage if usage and rng.random() < 0.7 else numeric or leaves
    if not pool:
        return _lines(records), "noop"
    path = rng.choice(pool)
    raw = rng.choice(RAW_NUMBERS)
    _set_at(records[i], path, _MARK)
    return _lines(records, {i: raw}), f"number {raw[:12]}@{i}:{'/'.join(map(str, path))[:60]}"


def mutate_types(records: list[dict[str, Any]], rng: random.Random) -> tuple[list[str], str]:
    """Any value (a container, ``type``, ``payload``, ``message``, ``usage``...) becomes one of another JSON type."""
    i = rng.randrange(len(records))
    paths = [p for p in _paths(records[i]) if p]
    named = [p for p in paths if p[-1] in ("type", "payload", "message", "content", "usage", "info", "role", "source",
                                           "compactMetadata", "replacement_history", "last_token_usage", "data",
                                           "parts", "state", "tokens", "toolRequests", "toolCalls", "messages")]
    path = rng.choice(named if named and rng.random() < 0.6 else paths)
    new = rng.choice(WRONG_TYPES)
    _set_at(records[i], path, json.loads(json.dumps(new)))
    return _lines(records), f"type {json.dumps(new)[:20]}@{i}:{'/'.join(map(str, path))[:60]}"


# The objects whose keys a reader takes in (Claude Code, Codex, OpenCode info/state/tokens, Copilot data, Gemini
# tokens and $set, Pi message/usage).
HOLDERS = frozenset({"compactMetadata", "toolUseResult", "message", "payload", "info", "data", "tokens", "usage",
                     "state", "time", "$set"})


def mutate_metadata(records: list[dict[str, Any]], rng: random.Random) -> tuple[list[str], str]:
    """The reader's bookkeeping names (and nasty values) inside the objects whose keys a reader takes in."""
    holders: list[tuple[int, tuple[Any, ...]]] = []
    for i, o in enumerate(records):
        holders.extend((i, p) for p in _paths(o) if p and p[-1] in HOLDERS and isinstance(_get(o, p), dict))
        holders.append((i, ()))
    i, path = rng.choice(holders)
    target = _get(records[i], path)
    what = []
    for _ in range(rng.randint(1, 4)):
        key, value = rng.choice(BOOKKEEPING), rng.choice(NASTY_META)
        target[key] = value
        what.append(key)
    if rng.random() < 0.15 and path:
        _set_at(records[i], path, rng.choice(WRONG_TYPES))
        what.append("replaced")
    return _lines(records), f"meta {','.join(what)}@{i}:{'/'.join(map(str, path))}"


def _image_payload(rng: random.Random) -> tuple[bytes, str]:
    """Header bytes of an image, often cut, corrupted or absurd, and the media type claimed for them."""
    w, h = rng.choice([(1, 1), (64, 48), (0, 0), (2**31, 2**31), (0xFFFF, 0xFFFF), (70_000, 3)])
    kinds = {
        "png": (png_bytes(4, 3)[:16] + struct.pack(">II", w % 2**32, h % 2**32) + b"\x08\x00\x00\x00\x00", "image/png"),
        "gif": (b"GIF89a" + struct.pack("<HH", w % 2**16, h % 2**16) + b"\x00" * 8, "image/gif"),
        "webp-vp8": (b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 10 + struct.pack("<HH", w % 2**16, h % 2**16), "image/webp"),
        "webp-vp8l": (b"RIFF\x10\x00\x00\x00WEBPVP8L\x05\x00\x00\x00\x2f" + bytes(rng.randrange(256) for _ in range(4)),
                      "image/webp"),
        "webp-vp8x": (b"RIFF\x10\x00\x00\x00WEBPVP8X" + b"\x00" * 8 + (w % 2**24).to_bytes(3, "little")
                      + (h % 2**24).to_bytes(3, "little"), "image/webp"),
        "jpeg": (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 9 + b"\xff\xc0\x00\x11\x08"
                 + struct.pack(">HH", h % 2**16, w % 2**16), "image/jpeg"),
        "junk": (bytes(rng.randrange(256) for _ in range(rng.randint(0, 64))), rng.choice(["image/png", "image/*", ""])),
    }
    weights = {"png": 2, "gif": 1, "webp-vp8": 2, "webp-vp8l": 3, "webp-vp8x": 2, "jpeg": 2, "junk": 1}
    raw, media = kinds[rng.choices(list(weights), weights=list(weights.values()))[0]]
    roll = rng.random()
    if roll < 0.5:
        raw = raw[: rng.randrange(len(raw) + 1)]
    elif roll < 0.55 and raw:
        buf = bytearray(raw)
        buf[rng.randrange(len(buf))] = rng.randrange(256)
        raw = bytes(buf)
    return raw, media


def _image_data(rng: random.Random) -> tuple[str, str]:
    raw, media = _image_payload(rng)
    data = base64.b64encode(raw).decode()
    roll = rng.random()
    if roll < 0.1:
        data = rng.choice(["!!!", "a", "====", "\ud800", "", "a" * 5, "data:" + data])
    elif roll < 0.2:
        data = data.rstrip("=") + rng.choice(["", "=", "==="])
    return data, media


def mutate_images(records: list[dict[str, Any]], rng: random.Random) -> tuple[list[str], str]:
    """An image block (or several) with a hostile header goes into a user message or a tool result."""
    data, media = _image_data(rng)
    native = _native_image(records, rng, data, media)
    if native is not None:
        return native
    claude = any("uuid" in o for o in records)
    users = [i for i, o in enumerate(records) if (o.get("type") == "user" if claude else
             o.get("type") == "response_item" and o["payload"].get("role") == "user")]
    i = rng.choice(users)
    if claude:
        block = {"type": "image", "source": {"type": rng.choice(["base64", "url", 7]), "media_type": media, "data": data}}
        content = records[i]["message"]["content"]
        if isinstance(content, list) and content and content[0].get("type") == "tool_result" and rng.random() < 0.5:
            inner = content[0].get("content")
            content[0]["content"] = [{"type": "text", "text": str(inner)[:200]}, block]
        else:
            records[i]["message"]["content"] = [{"type": "text", "text": "see"}, *[block] * rng.randint(1, 3)]
    else:
        url = rng.choice([f"data:{media};base64,{data}", f"data:{media},{data}", "data:,", "data:image/png;base64",
                          "http://127.0.0.1:9/x.png", "", f"data:text/plain;base64,{data}"])
        records[i]["payload"]["content"] = [{"type": "input_text", "text": "see"}, {"type": "input_image", "image_url": url}]
    return _lines(records), f"image {media} {len(data)} chars@{i}"


def _native_image(records: list[dict[str, Any]], rng: random.Random, data: str,
                  media: str) -> tuple[list[str], str] | None:
    """An image where the newer formats keep one: an OpenCode file part, a Gemini inlineData part, a Pi image block
    (Copilot CLI logs attachments as paths: a hostile path instead). None for Claude Code and Codex logs."""
    url = f"data:{media};base64,{data}"
    first = records[0]
    if isinstance(first.get("messages"), list) and isinstance(first.get("info"), dict):  # OpenCode
        users = [m for m in first["messages"] if isinstance(m, dict) and m.get("info", {}).get("role") == "user"]
        rng.choice(users)["parts"].append({"type": "file", "mime": media, "url": url, "filename": "x.png"})
        return _lines(records), f"image {media} {len(data)} chars (opencode)"
    if isinstance(first.get("projectHash"), str):  # Gemini
        users = [o for o in records if o.get("type") == "user"]
        rng.choice(users)["content"] = [{"text": "see"}, {"inlineData": {"mimeType": media, "data": data}}]
        return _lines(records), f"image {media} {len(data)} chars (gemini)"
    if first.get("type") == "session":  # Pi
        users = [o for o in records if o.get("type") == "message" and o["message"].get("role") == "user"]
        rng.choice(users)["message"]["content"] = [{"type": "text", "text": "see"},
                                                   {"type": "image", "data": data, "mimeType": media}]
        return _lines(records), f"image {media} {len(data)} chars (pi)"
    if isinstance(first.get("data"), dict):  # Copilot CLI
        users = [o for o in records if o.get("type") == "user.message"]
        rng.choice(users)["data"]["attachments"] = [{"type": "file", "path": rng.choice([url, "", "\ud800", "../x"]),
                                                      "mimeType": media}]
        return _lines(records), f"attachment {media} (copilot)"
    return None


GARBAGE = ["{", "}{", "\x00\x00", "null", "[]", '{"type": ', "\ufeff{}", "42", '"text"', "{}" * 3, "]]]", "\\"]


def mutate_glued(records: list[dict[str, Any]], rng: random.Random) -> tuple[list[str], str]:
    """Records glued on one line, a line cut in the middle, a garbage line: what kills and races leave."""
    texts = _lines(records)
    what = []
    for _ in range(rng.randint(1, 3)):
        if len(texts) < 3:  # one JSON document (an OpenCode export): cut it, or put garbage around it
            i, op = 0, rng.choice(["cut", "garbage", "crlf", "split"])
        else:
            i = rng.randrange(1, len(texts) - 1)
            op = rng.choice(["glue", "glue", "glue3", "cut", "garbage", "crlf", "split"])
        if op == "glue":
            texts[i : i + 2] = [texts[i] + texts[i + 1]]
        elif op == "glue3" and i + 2 < len(texts):
            texts[i : i + 3] = ["".join(texts[i : i + 3])]
        elif op == "cut":
            texts[i] = texts[i][: rng.randrange(1, max(2, len(texts[i])))]
        elif op == "garbage":
            texts.insert(i, rng.choice(GARBAGE))
        elif op == "crlf":
            texts[i] += "\r"
        else:  # a record split over two lines
            at = rng.randrange(1, max(2, len(texts[i])))
            texts[i : i + 1] = [texts[i][:at], texts[i][at:]]
        what.append(f"{op}@{i}")
    return texts, "glued " + ",".join(what)


MUTATORS = {"numbers": mutate_numbers, "types": mutate_types, "metadata": mutate_metadata, "images": mutate_images,
            "glued": mutate_glued}
FAMILY_SEEDS = {"numbers": 6, "types": 7, "metadata": 8, "images": 9, "glued": 10}  # fixed: a rerun tries the same


def agent_log_cases(family: str, folder: Path, n: int, *, seed: int) -> Iterator[Case]:
    """``n`` cases of ``family``: one mutation (sometimes two) of a seed log, run through a rotating command."""
    folder = _sub(folder, family)
    rng = random.Random(seed)
    mutate = MUTATORS[family]
    for index in range(n):
        name, make = SEEDS[index % len(SEEDS)]
        records = make()
        texts, what = mutate(records, rng)
        if rng.random() < 0.2:  # a second mutation of the same kind, on the text of the first
            try:
                again = [json.loads(t) for t in texts]
            except ValueError:
                again = None
            if again is not None and all(isinstance(o, dict) for o in again):
                texts, more = mutate(again, rng)
                what += " + " + more
        path = folder / f"case{index:05d}_{name}.{'json' if name in DOCUMENT_SEEDS else 'jsonl'}"
        path.write_text("\n".join(texts) + "\n", encoding="utf-8", errors="surrogatepass")
        template, check = rng.choice(AGENT_COMMANDS)
        args = [a.replace("{file}", str(path)) for a in template]
        # A damaged line of an agent log is skipped; a damaged document (an OpenCode export) cannot be read past.
        must_read = family == "glued" and "garbage" not in what and check != "calibrate" and name not in DOCUMENT_SEEDS
        yield Case(args=args, names=(path.name,), check=check, label=f"{family} {path.name} {what}"[:300],
                   must_read=must_read)


# ── writers on a full disk ──────────────────────────────────────────────────────────────────────

FULL_DISK_WRITERS: list[tuple[list[str], str]] = [
    (["bundles", "{history}", "--out", "{out}/bundles", *SMALL], "disk-bundles"),
    (["bundles", "{history}", "--out", "{out}/bundles", "--force", *SMALL], "disk-bundles"),
    (["simulate", "{history}", "--preset", "msagent", "--offload-dir", "{out}/offload", *SMALL], "disk-offload"),
    (["sweep", "{history}", "--out", "{out}/sweep.csv", "--grid", "trigger_ratio=0.5,0.7", "--workers", "1",
      "--no-progress", *SMALL], "disk-file"),
    (["sweep", "{history}", "--out", "{out}/sweep.parquet", "--grid", "trigger_ratio=0.5,0.7", "--workers", "1",
      "--no-progress", *SMALL], "disk-file"),
    (["probe", "{history}", "--out", "{out}/probe.csv", *SMALL], "disk-file"),
    (["calibrate", "{log}", "--no-held-out", "--out", "{out}/knobs.yaml"], "disk-file"),
]
# `simulate --json` to a full stdout is not here (the worker's stdout is a pipe): tests/test_faults.py covers it
# under RLIMIT_FSIZE.


def full_disk_cases(mount: Path, folder: Path, n: int, *, seed: int) -> Iterator[Case]:
    """``n`` writer cases onto ``mount`` (a small tmpfs), each filled to leave a random few bytes or kilobytes."""
    from test_faults import _fill

    from workbench.history.readers import load_history
    from workbench.history.writers import write_canonical_jsonl

    folder = _sub(folder, "full-disk")
    rng = random.Random(seed)
    history = folder / "disk-history.jsonl"
    if not history.exists():
        with (REPO / "sample_histories" / "short.jsonl").open("rb") as fh:
            history.write_bytes(b"".join(line for _, line in zip(range(60), fh, strict=False)))
    log = folder / "disk-log.jsonl"
    if not log.exists():
        log.write_text("\n".join(json.dumps(o) for o in claude_seed()) + "\n", encoding="utf-8")
    assert load_history(log).log is not None and write_canonical_jsonl  # seeds read back
    for index in range(n):
        out = mount / f"out{index:04d}"
        for leftover in mount.iterdir():  # the previous case's outputs and filler
            _remove(leftover)
        out.mkdir()
        template, check = rng.choice(FULL_DISK_WRITERS)
        args = [a.replace("{history}", str(history)).replace("{log}", str(log)).replace("{out}", str(out))
                for a in template]
        old = None
        if check == "disk-file" and rng.random() < 0.6:  # a previous result the failed write must leave alone
            old = Path(args[args.index("--out") + 1])
            old.write_text("previous result\n", encoding="utf-8")
        _fill(mount, rng.choice([0, 512, 4096, 20_000, 60_000, 150_000]))
        yield Case(args=args, names=(str(mount), "No space left"), check=check, out_dir=out, label=f"full-disk {args[0]}",
                   keep=old, keep_text="previous result\n" if old else None)


def _remove(path: Path) -> None:
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
