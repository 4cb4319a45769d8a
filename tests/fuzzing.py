"""The bounded fuzz campaign of issue 12: case generators per family, a worker that runs the CLI, a judge.

Every case is a ``workbench`` command line (plus the files it reads), run by ``workbench.cli.main`` in a
long-lived worker process (``python tests/fuzzing.py --worker``) so a case costs milliseconds, not an
interpreter start. The parent enforces a wall-clock bound per case: a case over it is a *hang*, the
worker is killed and replaced. The judge calls a case *clean* when it exits 0 with a valid result (JSON
that parses with its sections, complete bundles, an offload log that starts with a section) or exits 2
with exactly one error line naming the input (the file, or ``--set`` for a knob); every stderr line
(errors, warnings, notes) is at most ``MAX_LINE`` characters; anything else (a traceback, exit 1, a
multi-line or unnamed error) is a *crash*.

Families: ``samples`` (mutations of sample_histories/), ``shared`` (mutations of ../shared transcripts),
``histories`` (hypothesis-built histories in every format), ``knob-values`` (``--set``), ``knob-yaml``
(``--config`` files) and ``provider`` (live cascades against tests/fake_provider.py); the agent-log families
of issue 19 and the full disk are in tests/fuzzing_logs.py. Used by
tests/test_fuzz.py (short budget in CI, long behind ``-m long``) and scripts/fuzz_report.py.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import random
import select
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import REPO

CASE_BOUND_S = 60.0  # wall clock per case before it counts as a hang
RECYCLE_EVERY = 200  # cases per worker process
MAX_LINE = 700  # "workbench simulate: error: " + a bounded message
SMALL = ["--set", "context_window_tokens=8000", "--set", "trigger_hard_cap_tokens=5000"]
NASTY: list[Any] = [
    None, True, False, 0, -1, 2**63, -(2**70), 10**400, 1e308, -1e-308, 0.5, "", " ", "\ud800", "\udfff x \ud83d",
    "\u2028\u2029", "\x00", "a" * 100_000, "💥" * 1000, [], {}, [[[]]], {"": {}}, {"type": "text"},
    {"type": "text", "text": None}, {"type": "tool-x", "input": {"a": [1, {"b": None}]}}, ["x"] * 50,
    {"id": {"x": 1}}, {"role": ["user"]}, {"kind": "workbench.history"}, "<previous-chat-history>", "${x}",
    "user", "assistant", "tool", "system", "robot", "NaN", "1e400",
]


# ── the worker ─────────────────────────────────────────────────────────────────────────────────


def _worker() -> None:
    """Read one JSON case per line on stdin, run it, answer one JSON line on the real stdout."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from workbench.cli import main

    proto = sys.stdout
    for raw in sys.stdin:
        case = json.loads(raw)
        out, err = io.StringIO(), io.StringIO()
        code: int | None = None
        tb = None
        t0 = time.perf_counter()
        os.chdir(case["cwd"])
        args = [base64.b64decode(a).decode("utf-8", "surrogateescape") for a in case["args"]]
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(args)
                except SystemExit as exc:  # argparse usage errors exit 2 by themselves
                    code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # noqa: BLE001 - exactly what the campaign looks for
            tb = traceback.format_exc()[-4000:]
        reply = {"code": code, "out": out.getvalue()[:50_000_000], "err": err.getvalue()[:20_000], "tb": tb,
                 "secs": time.perf_counter() - t0}
        proto.write(json.dumps(reply, ensure_ascii=True) + "\n")
        proto.flush()


class Worker:
    """The parent's handle on one worker process; ``run`` enforces the per-case wall-clock bound."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO),
                    "OPENAI_API_KEY": "sk-fake-provider-key-for-fuzzing", **(env or {})}
        self.proc: subprocess.Popen[str] | None = None
        self.cases = 0

    def _log(self) -> Any:
        """Where the worker's own stderr goes: $WORKBENCH_FUZZ_LOG when set (to see why a worker died)."""
        path = os.environ.get("WORKBENCH_FUZZ_LOG")
        return open(path, "a") if path else subprocess.DEVNULL  # noqa: SIM115 - kept open by the child

    def _start(self) -> subprocess.Popen[str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log(),
                                         text=True, env=self.env, cwd=REPO)
        return self.proc

    def run(self, args: list[str], cwd: Path, bound_s: float = CASE_BOUND_S) -> dict[str, Any] | None:
        """The case's reply, or None when it ran past ``bound_s`` (the worker is then replaced)."""
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        encoded = [base64.b64encode(a.encode("utf-8", "surrogateescape")).decode() for a in args]
        proc.stdin.write(json.dumps({"args": encoded, "cwd": str(cwd)}) + "\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], bound_s)
        if not ready:
            self.close()
            return None
        line = proc.stdout.readline()
        if not line:  # the worker died (a crash of the interpreter itself, or the OOM killer)
            code = proc.wait()
            self.close()
            return {"code": None, "out": "", "err": "", "tb": f"worker process died (exit {code})", "secs": 0.0}
        self.cases += 1
        if self.cases % RECYCLE_EVERY == 0:  # per-process caches grow with every history seen: start afresh
            self.close()
        return json.loads(line)

    def close(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            self.proc.wait()
            self.proc = None


# ── cases and the judge ─────────────────────────────────────────────────────────────────────────


@dataclass
class Case:
    """One command line to run, the names an error must mention, and how to check a success."""

    args: list[str]
    names: tuple[str, ...]  # any one of these must be in an error line (the file, or --set)
    check: str = "json"  # json | probe | bundles | offload | text | reality | calibrate | disk-*
    out_dir: Path | None = None
    label: str = ""
    keep: Path | None = None  # a file that was there before: a failed write must leave it as it was
    keep_text: str | None = None
    must_read: bool = False  # damage a reader must read past (a glued or cut line in an agent log): exit 2 is a crash


@dataclass
class Tally:
    family: str
    tried: int = 0
    clean: int = 0
    crash: int = 0
    hang: int = 0
    exit0: int = 0
    exit1: int = 0  # only a live run its guard stopped, with its JSON (the provider family)
    exit2: int = 0
    findings: list[str] = field(default_factory=list)

    def add(self, verdict: str, detail: str = "", code: int | None = None) -> None:
        self.tried += 1
        setattr(self, verdict, getattr(self, verdict) + 1)
        if code == 0:
            self.exit0 += 1
        elif code == 1:
            self.exit1 += 1
        elif code == 2:
            self.exit2 += 1
        if verdict != "clean" and len(self.findings) < 20:
            self.findings.append(detail[:1500])


def judge(case: Case, reply: dict[str, Any] | None) -> tuple[str, str]:
    """('clean' | 'crash' | 'hang', why)."""
    if reply is None:
        return "hang", f"over {CASE_BOUND_S:g}s: {case.label} {case.args[:3]}"
    if reply["tb"]:
        return "crash", f"{case.label}: traceback\n{reply['tb']}"
    code, err = reply["code"], reply["err"]
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if ": error: " in line]  # other lines are notes and warnings
    if any(len(line) > MAX_LINE for line in lines):
        return "crash", f"{case.label}: a stderr line of {max(len(x) for x in lines):,} chars"
    if code == 2:
        if case.must_read and not err.lstrip().startswith("usage:"):
            return "crash", f"{case.label}: refused a log it should read past the damage: {err[:500]}"
        if len(errors) != 1:
            return "crash", f"{case.label}: exit 2 with {len(errors)} error lines: {err[:500]}"
        usage = err.lstrip().startswith("usage:")
        if not usage and not any(n in errors[0] for n in case.names):
            return "crash", f"{case.label}: the error names none of {case.names}: {errors[0][:400]}"
        return "clean", ""
    if code == 1 and case.check == "live":  # a live run its guard stopped (all models failing): said, and exit 1
        return _valid(case, reply["out"])
    if code == 1 and case.check.startswith("disk-"):  # the machine's fault (a full disk): one line, nothing lost
        if len(errors) != 1 or not any(n in errors[0] for n in case.names):
            return "crash", f"{case.label}: exit 1 without one error line naming the disk: {err[:500]}"
        return _kept(case)
    if code != 0:
        return "crash", f"{case.label}: exit {code}: {err[:600]}"
    if errors or "Traceback" in err:
        return "crash", f"{case.label}: exit 0 with an error on stderr: {err[:400]}"
    return _valid(case, reply["out"])


def _kept(case: Case) -> tuple[str, str]:
    """Clean when the file that was there before a failed write is still there, as it was."""
    if case.keep is not None:
        try:
            text = case.keep.read_text(encoding="utf-8")
        except OSError as exc:
            return "crash", f"{case.label}: the previous {case.keep.name} is gone after a failed write ({exc})"
        if text != case.keep_text:
            return "crash", f"{case.label}: the previous {case.keep.name} was overwritten by a failed write"
    return "clean", ""


def _valid(case: Case, out: str) -> tuple[str, str]:
    try:
        if case.check.startswith("disk-"):
            return _written(case)
        if case.check == "reality":
            data = json.loads(out)
            assert {"sessions", "summary"} <= set(data) and data["sessions"]
        elif case.check == "calibrate":
            assert json.loads(out)["fits"]
        elif case.check in ("json", "live"):
            data = json.loads(out)
            assert {"knobs", "metrics", "compressions"} <= set(data)
            assert case.check == "json" or "live" in data
        elif case.check == "probe":
            assert "summary" in json.loads(out)
        elif case.check == "bundles":
            assert out.startswith("wrote ")
            if case.out_dir is not None and case.out_dir.exists():
                for folder in case.out_dir.rglob("compression-*"):
                    assert len(list(folder.iterdir())) == 5, folder
                    json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
        elif case.check == "offload":
            if case.out_dir is not None:
                for log in case.out_dir.rglob("*.md"):
                    assert log.read_text(encoding="utf-8").startswith("## Offloaded at "), log
        else:
            assert out.strip()
    except (AssertionError, ValueError, OSError) as exc:
        return "crash", f"{case.label}: exit 0 but the result is not valid ({exc!r}): {out[:300]}"
    return "clean", ""


def _written(case: Case) -> tuple[str, str]:
    """A writer that said it succeeded on a nearly full disk: its outputs are whole."""
    assert case.out_dir is not None
    for path in case.out_dir.rglob("*"):
        if path.is_file() and path.suffix == ".csv":
            text = path.read_text(encoding="utf-8")
            assert text.endswith("\n") and len(text.splitlines()) >= 2, path
        elif path.is_file() and path.suffix == ".yaml":
            from workbench.knobs import load_knobs

            load_knobs(path.read_text(encoding="utf-8"), source=str(path))
        elif path.is_file() and path.suffix == ".md":
            assert path.read_text(encoding="utf-8").startswith("## Offloaded at "), path
    for folder in case.out_dir.rglob("compression-*"):
        assert len(list(folder.iterdir())) == 5, folder
    return "clean", ""


# ── history mutations ───────────────────────────────────────────────────────────────────────────


def _lines_of(path: Path, limit: int) -> list[bytes]:
    with path.open("rb") as fh:
        return [line for _, line in zip(range(limit), fh, strict=False)]


def seed_files(shared: bool) -> list[tuple[str, bytes]]:
    """(name, bytes) of the files to mutate: the shipped samples (cut to their first lines) or ../shared."""
    out: list[tuple[str, bytes]] = []
    if not shared:
        for name, n in (("short.jsonl", 60), ("tool_heavy.jsonl", 60), ("long.jsonl", 40)):
            out.append((name, b"".join(_lines_of(REPO / "sample_histories" / name, n))))
        return out
    root = Path(os.environ.get("WORKBENCH_SHARED") or REPO.parent / "shared")
    for folder in ("real_histories", "real_sessions"):
        for path in sorted((root / folder).glob("*.jsonl")):
            out.append((path.name, b"".join(_lines_of(path, 80))))
    return out


def _nasty(rng: random.Random) -> Any:
    value = rng.choice(NASTY)
    roll = rng.random()
    if roll < 0.08:  # spliced in as text after dumping (the generator must not recurse either)
        return f"__DEEP_{rng.choice([50, 199, 201, 1500, 20_000])}__"
    if roll < 0.12:
        return "y" * rng.choice([1_000_000, 3_000_000])
    return value


def _paths(value: Any, prefix: tuple[Any, ...] = (), out: list[tuple[Any, ...]] | None = None,
           depth: int = 0) -> list[tuple[Any, ...]]:
    out = [] if out is None else out
    out.append(prefix)
    if depth > 6:
        return out
    if isinstance(value, dict):
        for k, v in value.items():
            _paths(v, (*prefix, k), out, depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value[:20]):
            _paths(v, (*prefix, i), out, depth + 1)
    return out


def _set_at(value: Any, path: tuple[Any, ...], new: Any, *, delete: bool = False) -> Any:
    if not path:
        return new
    node = value
    for step in path[:-1]:
        node = node[step]
    if delete and isinstance(node, dict):
        node.pop(path[-1], None)
    else:
        node[path[-1]] = new
    return value


_DEEP_RE = __import__("re").compile(r'"__DEEP_(\d+)__"')


def _dumps(value: Any) -> bytes:
    from workbench.io.files import json_text

    text = _DEEP_RE.sub(lambda m: '{"k":' * int(m.group(1)) + "1" + "}" * int(m.group(1)), json_text(value))
    return text.encode("utf-8")


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One random mutation of a JSONL file: bytes, lines or one JSON value; returns (bytes, what)."""
    lines = data.split(b"\n")
    kind = rng.choice(["truncate", "bytes", "lines", "value", "value", "value", "delete-key", "wrap", "deep-line",
                       "mixed-format"])
    if kind == "truncate":
        return data[: rng.randrange(1, max(2, len(data)))], kind
    if kind == "bytes":
        buf = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            buf[rng.randrange(len(buf))] = rng.choice([0, 0xFF, 0xC3, ord("{"), ord('"'), ord("\\"), ord("]"), 10])
        return bytes(buf), kind
    if kind == "lines":
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        op = rng.choice(["dup", "swap", "drop", "blank"])
        if op == "dup":
            lines.insert(i, lines[j])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "drop":
            del lines[i]
        else:
            lines[i] = b"   "
        return b"\n".join(lines), f"lines-{op}"
    if kind == "wrap":  # the same messages as one JSON array (stagewise / OpenAI document formats)
        values = []
        for line in lines:
            with contextlib.suppress(ValueError, RecursionError):
                values.append(json.loads(line))
        return _dumps(values), kind
    if kind == "deep-line":
        depth = rng.choice([150, 199, 205, 999, 3000, 100_000])
        lines.insert(rng.randrange(len(lines) + 1), b"[" * depth + b"]" * depth)
        return b"\n".join(lines), kind
    if kind == "mixed-format":
        foreign = rng.choice([{"role": "user", "content": "from OpenAI"},
                              {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "a UIMessage"}]},
                              {"type": "user", "uuid": "x", "sessionId": "s", "message": {"role": "user", "content": "cc"}},
                              {"timestamp": "t", "type": "response_item", "payload": {"type": "message", "role": "user",
                                                                                      "content": "codex"}}])
        lines.insert(rng.randrange(1, len(lines) + 1), _dumps(foreign))
        return b"\n".join(lines), kind
    # a JSON value somewhere in one line
    candidates = [i for i, line in enumerate(lines) if line.strip()]
    i = rng.choice(candidates)
    if len(lines[i]) > 1_000_000 or lines[i].count(b"[") + lines[i].count(b"{") > 5_000:
        return data, "noop"  # a line an earlier mutation made huge or deep: leave it
    try:
        obj = json.loads(lines[i])
    except (ValueError, RecursionError):
        return data, "noop"
    path = rng.choice(_paths(obj))
    obj = _set_at(obj, path, _nasty(rng), delete=kind == "delete-key" and bool(path))
    lines[i] = _dumps(obj)
    return b"\n".join(lines), f"{kind}@{'/'.join(map(str, path))[:60]}"


COMMANDS: list[tuple[list[str], str]] = [
    (["simulate", "{file}", "--json", "--no-timeline", *SMALL], "json"),
    (["simulate", "{file}", "--briefer", "extractive", "--json", "--no-timeline", *SMALL], "json"),
    (["probe", "{file}", "--json", *SMALL], "probe"),
    (["bundles", "{file}", "--out", "{out}", *SMALL], "bundles"),
    (["simulate", "{file}", "--preset", "msagent", "--offload-dir", "{out}", *SMALL], "offload"),
    (["simulate", "{file}", "--preset", "codex_cli", "--json", "--no-timeline", *SMALL], "json"),
]


def history_case(folder: Path, index: int, name: str, data: bytes, rng: random.Random, label: str) -> Case:
    suffix = rng.choice([Path(name).suffix or ".jsonl", ".jsonl", ".json"])
    path = folder / f"case{index:05d}{suffix}"
    path.write_bytes(data)
    template, check = rng.choice(COMMANDS)
    out = folder / f"out{index:05d}"
    args = [a.replace("{file}", str(path)).replace("{out}", str(out)) for a in template]
    return Case(args=args, names=(path.name,), check=check, out_dir=out, label=f"{label} {path.name}")


def _sub(folder: Path, name: str) -> Path:
    out = folder / name
    out.mkdir(parents=True, exist_ok=True)
    return out


def mutation_cases(folder: Path, n: int, *, shared: bool, seed: int) -> Iterator[Case]:
    folder = _sub(folder, "shared" if shared else "samples")
    rng = random.Random(seed)
    seeds = seed_files(shared)
    for i in range(n):
        name, data = seeds[i % len(seeds)]
        mutated, what = mutate(data, rng)
        if rng.random() < 0.3:
            mutated, more = mutate(mutated, rng)
            what += "+" + more
        yield history_case(folder, i, name, mutated, rng, f"{name} {what}")


# ── knobs ───────────────────────────────────────────────────────────────────────────────────────

KNOB_VALUES = ["9" * 400, "-" + "9" * 30, "1e400", "-1e400", ".nan", ".inf", "0x1F", "0o17", "1_000", "[1, 2]",
               "{a: 1}", "[" * 5000 + "]" * 5000, "&a [*a]", "!!python/object:os.system ls", "~", "null", "yes",
               "'", '"', "é", "\udcff", "0", "-1", "1", "2", "0.5", "1e-320", "3.0", "true", "", " ", "a" * 100_000,
               "^(a|a)*$", "(a+)+$", "(", "[", "\\", "(?P<x>a)(?P=x)", "(?i)agents", "1,2,3", "7" * 5000]


def knob_value_cases(folder: Path, n: int, *, seed: int) -> Iterator[Case]:
    from workbench.knobs import knob_names

    folder = _sub(folder, "knob-values")
    rng = random.Random(seed)
    history = folder / "knobs-history.jsonl"
    if not history.exists():
        history.write_bytes(b"".join(_lines_of(REPO / "sample_histories" / "short.jsonl", 60)))
    names = [*knob_names(), "unknown_knob", "", "=", "strategy"]
    for _i in range(n):
        sets: list[str] = []
        for _ in range(rng.randint(1, 3)):
            sets += ["--set", f"{rng.choice(names)}={rng.choice(KNOB_VALUES)}"]
        preset = ["--preset", rng.choice(["msagent", "opencode", "staged", "nope"])] if rng.random() < 0.3 else []
        yield Case(args=["simulate", str(history), *preset, *sets, "--json", "--no-timeline"],
                   names=("--set", "preset", "pin_pattern"), label=f"knobs {sets[1::2]}"[:200])


def _yaml_text(rng: random.Random) -> bytes:
    from workbench.knobs import Knobs, dump_knobs, knob_names

    text = dump_knobs(Knobs())
    lines = text.splitlines()
    kind = rng.choice(["value", "value", "dup", "key", "alias-bomb", "deep", "many", "binary", "utf16", "cut",
                       "version", "list"])
    if kind == "value":
        i = rng.randrange(1, len(lines))
        key = lines[i].split(":", 1)[0]
        lines[i] = f"{key}: {rng.choice(KNOB_VALUES)}"
    elif kind == "dup":
        lines.append(rng.choice(lines[1:]))
    elif kind == "key":
        lines.append(f"{rng.choice(['1', '~', '[a]', '? {a: 1}', 'trigger_ratoi', 'é'])}: 2")
    elif kind == "alias-bomb":
        bomb = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        for j, name in enumerate("bcdefghi"):
            prev = "abcdefghi"[j]
            bomb.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        lines = ["version: 1", f"{rng.choice(knob_names())}:", *("  " + b for b in bomb)]
    elif kind == "deep":
        lines.append(f"trigger_ratio: {'[' * rng.choice([30, 1000, 100_000])}")
    elif kind == "many":
        lines += [f"k{j}: {j}" for j in range(rng.choice([4000, 200_000]))]
    elif kind == "binary":
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 400)))
    elif kind == "utf16":
        return text.encode("utf-16")
    elif kind == "cut":
        return text.encode()[: rng.randrange(1, len(text))]
    elif kind == "version":
        lines[0] = f"version: {rng.choice(['2', 'x', '[1]', '9' * 400])}"
    else:
        lines = ["- " + line for line in lines]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


def knob_yaml_cases(folder: Path, n: int, *, seed: int) -> Iterator[Case]:
    folder = _sub(folder, "knob-yaml")
    rng = random.Random(seed)
    history = folder / "yaml-history.jsonl"
    if not history.exists():
        history.write_bytes(b"".join(_lines_of(REPO / "sample_histories" / "short.jsonl", 60)))
    for i in range(n):
        cfg = folder / f"knobs{i:05d}.yaml"
        cfg.write_bytes(_yaml_text(rng))
        preset = ["--preset", "opencode"] if rng.random() < 0.3 else []
        yield Case(args=["simulate", str(history), *preset, "--config", str(cfg), "--json", "--no-timeline"],
                   names=(cfg.name,), label=f"yaml {cfg.name}")


# ── histories built from scratch (hypothesis) ───────────────────────────────────────────────────


def history_strategy() -> Any:
    """Hypothesis strategy: (format, JSON text) of a plausible-to-hostile history in any format."""
    from hypothesis import strategies as st

    scalar = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                       st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40),
                       st.sampled_from(["\ud800", "user", "assistant", "tool", "system", "text", "tool-read", ""]))
    value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                         max_leaves=12)
    good_role = st.sampled_from(["user", "assistant", "user", "assistant", "tool", "system"])
    text = st.one_of(st.text(max_size=300), st.text(max_size=3000),
                     st.sampled_from(["see `src/app.py` and https://x.io/a", "\ud800 x", "Error: boom\nexit code 1"]))
    good_part = st.fixed_dictionaries({"type": st.just("text"), "text": text})

    def shapes(hostile: bool) -> dict[str, Any]:
        """Message strategies per format; ``hostile`` lets any field hold any JSON value."""
        role = st.one_of(good_role, st.sampled_from(["developer", "robot", ""]), value) if hostile else good_role
        ident = st.one_of(st.text(max_size=6), value) if hostile else st.text(max_size=6)
        tool = st.fixed_dictionaries({"type": st.sampled_from(["tool-read", "tool-shell", "dynamic-tool"]),
                                      "toolCallId": ident,
                                      "state": st.sampled_from(["output-available", "output-error", "input-available"]),
                                      "input": value, "output": value})
        part = st.one_of(good_part, tool, value) if hostile else st.one_of(good_part, good_part, tool)
        parts = st.one_of(st.lists(part, max_size=4), value) if hostile else st.lists(part, max_size=4)
        meta = st.one_of(st.just({}), st.just({"createdAt": "t"}), st.just({"compressedHistory": "old"}),
                         *([value] if hostile else []))
        uimessage = st.fixed_dictionaries({"id": ident, "role": role, "parts": parts}, optional={"metadata": meta})
        content = st.one_of(text, value) if hostile else text
        openai = st.fixed_dictionaries({"role": role, "content": content})
        blocks = st.lists(st.one_of(good_part, value) if hostile else good_part, max_size=3)
        anthropic = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]) if not hostile else role,
                                           "content": st.one_of(text, blocks)})
        return {"stagewise": uimessage, "canonical": uimessage, "openai_jsonl": openai, "openai": openai,
                "anthropic": anthropic}

    clean, hostile = shapes(False), shapes(True)
    fmt = st.sampled_from(["stagewise", "canonical", "openai_jsonl", "openai", "anthropic"])

    def build(args: tuple[str, list[Any]]) -> tuple[str, str]:
        from workbench.io.files import json_text

        kind, msgs = args
        if kind == "stagewise":
            return "json", json_text(msgs)
        if kind == "openai":
            return "json", json_text({"messages": msgs})
        if kind == "anthropic":
            return "json", json_text({"system": "be brief", "messages": msgs})
        head = [json_text({"kind": "workbench.history", "version": 1, "id": "h", "meta": {}})] if kind == "canonical" else []
        return "jsonl", "\n".join(head + [json_text(m) for m in msgs]) + "\n"

    def messages_for(kind: str) -> Any:  # two histories in three well-formed, one hostile
        return st.one_of(*[st.lists(clean[kind], min_size=1, max_size=60)] * 2,
                         st.lists(hostile[kind], min_size=1, max_size=60))

    return fmt.flatmap(lambda k: messages_for(k).map(lambda m: (k, m))).map(build)


# ── live provider faults ────────────────────────────────────────────────────────────────────────

PROVIDER_CASES: list[list[str]] = [
    ["fake-good"], ["fake-slow", "fake-good"], ["fake-fail", "fake-good"], ["fake-short", "fake-good"],
    ["fake-leak"], ["fake-trickle", "fake-good"], ["fake-echo", "fake-good"], ["fake-parrot"], ["fake-fail"],
    ["fake-short"], ["fake-slow"], ["fake-echo"], ["fake-fail", "fake-short", "fake-slow"], ["fake-trickle"],
    ["fake-leak", "fake-good"], ["fake-good", "fake-fail"],
]


def provider_cases(folder: Path, api_base: str) -> Iterator[Case]:
    folder = _sub(folder, "provider")
    history = folder / "live-history.jsonl"  # two compressions: a slow model costs its timeout twice
    if not history.exists():
        history.write_bytes(b"".join(_lines_of(REPO / "sample_histories" / "short.jsonl", 20)))
    for i, models in enumerate(PROVIDER_CASES):
        args = ["simulate", str(history), "--set", "context_window_tokens=16000", "--briefer", "live", "--api-base",
                api_base, "--timeout", "0.5", "--cache-dir", str(folder / f"cache{i}"), "--json", "--no-timeline"]
        for m in models:
            args += ["--model", f"openai/{m}"]
        yield Case(args=args, names=("--",), check="live", label=f"provider {'>'.join(models)}")


# ── running a family ────────────────────────────────────────────────────────────────────────────


def _clean_up(case: Case) -> None:
    """Remove what a judged case wrote (its input and outputs): long budgets write gigabytes otherwise."""
    import shutil

    if case.out_dir is not None:
        shutil.rmtree(case.out_dir, ignore_errors=True)
    for arg in case.args:
        if "/case" in arg or "/knobs0" in arg:
            with contextlib.suppress(OSError):
                Path(arg).unlink()


def run_family(family: str, cases: Iterator[Case], worker: Worker, on_case: Callable[[Case, str], None] | None = None,
               bound_s: float = CASE_BOUND_S) -> Tally:
    tally = Tally(family)
    for case in cases:
        reply = worker.run(case.args, Path(case.args[1]).parent if len(case.args) > 1 else REPO, bound_s)
        verdict, why = judge(case, reply)
        _clean_up(case)
        tally.add(verdict, why, None if reply is None else reply["code"])
        if on_case is not None:
            on_case(case, verdict)
    return tally


BUDGETS = {  # cases per family: short runs in CI (~1.5 min of the suite), long behind -m long
    "short": {"samples": 110, "shared": 50, "histories": 50, "knob-values": 70, "knob-yaml": 50, "provider": 16,
              "numbers": 40, "types": 40, "metadata": 30, "images": 30, "glued": 30, "full-disk": 12},
    "long": {"samples": 2500, "shared": 1000, "histories": 1000, "knob-values": 600, "knob-yaml": 600,
             "provider": 16, "numbers": 600, "types": 600, "metadata": 400, "images": 400, "glued": 400,
             "full-disk": 150},
}



def hypothesis_family(folder: Path, n: int, worker: Worker, *, seed: int = 0,
                      bound_s: float = CASE_BOUND_S) -> Tally:
    """``n`` hypothesis-built histories, each run through a rotating command (no shrinking: every
    example is tallied, and the findings keep the failing ones)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed

    tally = Tally("histories")
    folder = _sub(folder, "histories")
    rng = random.Random(seed)
    counter = {"i": 0}

    @hseed(seed)
    @settings(max_examples=n, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(history_strategy())
    def one(example: tuple[str, str]) -> None:
        suffix, text = example
        counter["i"] += 1
        case = history_case(folder, 90_000 + counter["i"], f"x.{suffix}", text.encode("utf-8"), rng, "hypothesis")
        reply = worker.run(case.args, folder, bound_s)
        verdict, why = judge(case, reply)
        _clean_up(case)
        tally.add(verdict, why, None if reply is None else reply["code"])

    one()
    return tally


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    _worker()
