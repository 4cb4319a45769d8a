"""Text that looks like a coding session's: source files, shell logs, test runs, grep hits, lint reports.

Every function takes a ``random.Random`` and a target size, so the generator controls both the seed and
the size distribution. A file's content depends only on (path, version), which makes a re-read return
what the first read returned, as in a real session. Pure: no I/O, no global random state.
"""

from __future__ import annotations

import random
import zlib

NOUNS = ("session", "user", "token", "invoice", "order", "theme", "route", "cache", "retry", "config", "payload",
         "request", "response", "project", "workspace", "message", "history", "filter", "page", "query", "setting",
         "account", "draft", "upload", "report", "schedule", "label", "comment", "tenant", "webhook")
VERBS = ("get", "fetch", "load", "save", "update", "compute", "format", "parse", "validate", "render", "build",
         "resolve", "normalize", "sync", "merge", "apply", "create", "delete", "refresh", "select")
ADJ = ("active", "pending", "cached", "stale", "default", "current", "next", "raw", "visible", "selected")
TYPES_TS = ("string", "number", "boolean", "Date", "string[]", "Record<string, unknown>", "Promise<void>")
MSGS = ("missing {n} id", "{n} not found", "invalid {n} payload", "{n} expired", "unexpected {n} state",
        "failed to {v} {n}")


def stable_rng(*key: object) -> random.Random:
    """A Random seeded from a key (crc32, not hash(): str hashes change between runs)."""
    return random.Random(zlib.crc32("\x1f".join(map(str, key)).encode()))


def lognormal_size(rng: random.Random, median: float, sigma: float, low: int, high: int) -> int:
    """A size drawn lognormally around ``median`` and clipped to [low, high]: few huge, many small."""
    return int(min(high, max(low, rng.lognormvariate(0.0, sigma) * median)))


def third_person(verb: str) -> str:
    """``fetch`` -> ``fetches``, ``apply`` -> ``applies``, ``load`` -> ``loads``."""
    if verb.endswith(("s", "x", "ch", "sh")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def plural(noun: str) -> str:
    return third_person(noun)


def camel(*words: str) -> str:
    return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])


def pascal(*words: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in words)


def _ident(rng: random.Random) -> str:
    return camel(rng.choice(VERBS), rng.choice(NOUNS)) if rng.random() < 0.6 else camel(rng.choice(ADJ), rng.choice(NOUNS))


def _ts_function(rng: random.Random) -> str:
    noun = rng.choice(NOUNS)
    name = camel(rng.choice(VERBS), noun)
    arg = camel(rng.choice(ADJ), noun)
    body = []
    for _ in range(rng.randint(3, 12)):
        r = rng.random()
        var = _ident(rng)
        if r < 0.25:
            body.append(f"  const {var} = await {camel(rng.choice(NOUNS), 'client')}.{_ident(rng)}({arg}.id);")
        elif r < 0.4:
            msg = rng.choice(MSGS).format(n=noun, v=rng.choice(VERBS))
            body.append(f"  if (!{var}) {{\n    throw new Error('{msg}');\n  }}")
        elif r < 0.55:
            body.append(f"  logger.debug('{name}: {rng.choice(VERBS)}', {{ {arg}, {var} }});")
        elif r < 0.7:
            item = rng.choice(NOUNS)
            body.append(f"  for (const {item} of {arg}.{plural(rng.choice(NOUNS))}) {{\n"
                        f"    {var}.set({item}.id, {camel(rng.choice(VERBS), item)}({item}));\n  }}")
        elif r < 0.85:
            body.append(f"  const {var} = {arg}.{plural(rng.choice(NOUNS))}.filter((x) => x.{rng.choice(ADJ)} !== undefined);")
        else:
            body.append(f"  // {rng.choice(VERBS)} before {rng.choice(VERBS)}: the {noun} may be {rng.choice(ADJ)} here")
    body.append(f"  return {{ ...{arg}, {rng.choice(ADJ)}: true }};")
    ret = pascal(noun)
    return (f"export async function {name}({arg}: {ret}, options: {pascal(noun, 'Options')} = {{}}): "
            f"Promise<{ret}> {{\n" + "\n".join(body) + "\n}\n")


def _ts_interface(rng: random.Random) -> str:
    noun = rng.choice(NOUNS)
    fields = [f"  {camel(rng.choice(ADJ), rng.choice(NOUNS))}{'?' if rng.random() < 0.3 else ''}: {rng.choice(TYPES_TS)};"
              for _ in range(rng.randint(2, 8))]
    return f"export interface {pascal(noun)} {{\n  id: string;\n" + "\n".join(fields) + "\n}\n"


def _tsx_component(rng: random.Random) -> str:
    noun = rng.choice(NOUNS)
    comp = pascal(rng.choice(ADJ), noun, "panel")
    lines = [f"export function {comp}({{ {noun}, onChange }}: {comp}Props) {{",
             f"  const [{noun}State, set{pascal(noun)}State] = useState<{pascal(noun)} | null>(null);",
             "  useEffect(() => {",
             f"    void {camel('load', noun)}({noun}.id).then(set{pascal(noun)}State);",
             f"  }}, [{noun}.id]);", "  return (",
             f'    <section className="flex flex-col gap-{rng.randint(1, 6)} p-{rng.randint(2, 8)}">']
    for _ in range(rng.randint(2, 7)):
        field = camel(rng.choice(ADJ), rng.choice(NOUNS))
        lines.append(f'      <label className="text-sm text-muted">{field}</label>')
        lines.append(f"      <Input value={{{noun}State?.{field} ?? ''}} onChange={{(e) => onChange?.(e.target.value)}} />")
    lines += ["    </section>", "  );", "}"]
    return "\n".join(lines) + "\n"


def _py_function(rng: random.Random) -> str:
    noun = rng.choice(NOUNS)
    name = f"{rng.choice(VERBS)}_{noun}"
    body = [f'    """{pascal(rng.choice(VERBS))} the {noun} for a {rng.choice(NOUNS)}."""']
    for _ in range(rng.randint(3, 10)):
        r = rng.random()
        var = f"{rng.choice(ADJ)}_{rng.choice(NOUNS)}"
        if r < 0.3:
            body.append(f"    {var} = await db.fetch_one(select({pascal(noun)}).where({pascal(noun)}.id == {noun}_id))")
        elif r < 0.5:
            body.append(f"    if {var} is None:\n        raise HTTPException(status_code=404, detail=\"{noun} not found\")")
        elif r < 0.7:
            body.append(f"    logger.info(\"{name}: %s\", {var})")
        else:
            body.append(f"    {var} = [{rng.choice(NOUNS)} for {rng.choice(NOUNS)} in {plural(var)} if {rng.choice(NOUNS)}.{rng.choice(ADJ)}]")
    body.append(f"    return {pascal(noun)}Out.model_validate({var})")
    return f"async def {name}({noun}_id: UUID, session: Session = Depends(get_session)) -> {pascal(noun)}Out:\n" + "\n".join(body) + "\n"


def file_content(path: str, version: int, size: int) -> str:
    """Source text for ``path`` of about ``size`` chars; the same (path, version, size) always gives the same text."""
    rng = stable_rng(path, version, size)
    if path.endswith(".py"):
        head = ("from uuid import UUID\n\nfrom fastapi import Depends, HTTPException\nfrom sqlalchemy import select\n\n"
                "from app.db import Session, get_session\nfrom app.models import *  # noqa: F403\n\n")
        blocks = [_py_function]
    elif path.endswith(".tsx"):
        head = "import { useEffect, useState } from 'react';\nimport { Input } from '@/components/ui/input';\n\n"
        blocks = [_tsx_component, _ts_interface, _ts_function]
    elif path.endswith(".css"):
        head, blocks = ":root {\n  --bg: #ffffff;\n  --fg: #0f172a;\n}\n\n", [_css_rule]
    elif path.endswith((".md", ".json")):
        head, blocks = f"# {path.rsplit('/', 1)[-1]}\n\n", [_prose_paragraph]
    else:
        head = "import { logger } from '@/lib/logger';\nimport type { Options } from '@/types';\n\n"
        blocks = [_ts_function, _ts_interface]
    out = [head]
    total = len(head)
    while total < size:
        block = rng.choice(blocks)(rng)
        out.append(block + "\n")
        total += len(block) + 1
    text = "".join(out)
    cut = text.rfind("\n", 0, size)  # end on a whole line, as a file does
    return text[: cut + 1] if cut > 0 else text[:size]


def _css_rule(rng: random.Random) -> str:
    sel = f".{rng.choice(ADJ)}-{rng.choice(NOUNS)}"
    props = [f"  {p}: {v};" for p, v in rng.sample([("display", "flex"), ("gap", f"{rng.randint(1, 5) * 4}px"),
                                                     ("color", "var(--fg)"), ("background", "var(--bg)"),
                                                     ("padding", f"{rng.randint(1, 6) * 4}px"),
                                                     ("border-radius", "6px")], k=rng.randint(2, 5))]
    return f"{sel} {{\n" + "\n".join(props) + "\n}\n"


def _prose_paragraph(rng: random.Random) -> str:
    return sentence(rng, rng.randint(2, 5)) + "\n"


def sentence(rng: random.Random, count: int = 1) -> str:
    """A few plain sentences about the code base (filler that still reads like engineering notes)."""
    out = []
    for _ in range(count):
        out.append(rng.choice((
            f"The {rng.choice(NOUNS)} {rng.choice(('layer', 'module', 'hook', 'service'))} {third_person(rng.choice(VERBS))} the {rng.choice(ADJ)} {rng.choice(NOUNS)} before it {third_person(rng.choice(VERBS))} it.",
            f"`{_ident(rng)}` is called from {rng.randint(2, 9)} places and assumes the {rng.choice(NOUNS)} is {rng.choice(ADJ)}.",
            f"When the {rng.choice(NOUNS)} is {rng.choice(ADJ)}, we skip the {rng.choice(NOUNS)} check to avoid a second round trip.",
            f"This keeps {rng.choice(NOUNS)} handling in one place instead of spreading it over the {rng.choice(NOUNS)} code.",
            f"The {rng.choice(ADJ)} path is covered by tests; the {rng.choice(ADJ)} one is not yet.",
        )))
    return " ".join(out)


# -- tool outputs ---------------------------------------------------------------------------------


def vitest_output(rng: random.Random, files: list[str], size: int, *, failing: int) -> str:
    """vitest-style output with ``failing`` failures, about ``size`` chars."""
    lines = ["", " RUN  v2.1.4 /workspace/app", ""]
    tests = [f for f in files if ".test." in f] or files[:3]
    fails_left = failing
    while sum(len(line) + 1 for line in lines) < size:
        f = rng.choice(tests)
        if fails_left and rng.random() < 0.3:
            fails_left -= 1
            name = f"{third_person(rng.choice(VERBS))} {rng.choice(ADJ)} {rng.choice(NOUNS)}"
            lines += [f" ❯ {f.removeprefix('w1/')} ({rng.randint(3, 30)} tests | 1 failed) {rng.randint(20, 900)}ms",
                      f"   × {name} {rng.randint(1, 80)}ms",
                      f"     → expected '{rng.choice(NOUNS)}-{rng.randint(1, 99)}' to be '{rng.choice(NOUNS)}-{rng.randint(1, 99)}'",
                      "", f" FAIL  {f.removeprefix('w1/')} > {name}",
                      f"AssertionError: expected {rng.randint(0, 9)} to equal {rng.randint(10, 99)}",
                      f" ❯ {f.removeprefix('w1/')}:{rng.randint(5, 200)}:{rng.randint(3, 40)}", ""]
        else:
            lines.append(f" ✓ {f.removeprefix('w1/')} ({rng.randint(2, 40)} tests) {rng.randint(3, 400)}ms")
    total = rng.randint(20, 60)
    lines += ["", f" Test Files  {f'{failing} failed | ' if failing else ''}{total} passed ({total + failing})",
              f"      Tests  {f'{failing} failed | ' if failing else ''}{total * 7} passed ({total * 7 + failing})",
              f"   Duration  {rng.uniform(1.5, 40):.2f}s", ""]
    return "\n".join(lines)


def type_check(rng: random.Random, files: list[str], size: int) -> str:
    """tsc --noEmit errors, about ``size`` chars."""
    lines: list[str] = []
    while sum(len(line) + 1 for line in lines) < size:
        f = rng.choice(files).removeprefix("w1/")
        code, text = rng.choice((
            (2322, f"Type '{rng.choice(TYPES_TS)}' is not assignable to type '{rng.choice(TYPES_TS)}'."),
            (2339, f"Property '{_ident(rng)}' does not exist on type '{pascal(rng.choice(NOUNS))}'."),
            (2345, f"Argument of type '{rng.choice(TYPES_TS)}' is not assignable to parameter of type '{rng.choice(TYPES_TS)}'."),
            (7006, f"Parameter '{rng.choice(NOUNS)}' implicitly has an 'any' type."),
        ))
        lines.append(f"{f}({rng.randint(1, 300)},{rng.randint(1, 60)}): error TS{code}: {text}")
    lines.append(f"\nFound {len(lines)} errors in {min(len(lines), rng.randint(1, 6))} files.")
    return "\n".join(lines)


def git_output(rng: random.Random, files: list[str], size: int) -> str:
    """``git status`` plus a diff, about ``size`` chars."""
    changed = rng.sample(files, k=min(len(files), rng.randint(1, 5)))
    lines = ["On branch feat/" + rng.choice(NOUNS) + "-" + rng.choice(VERBS), "Changes not staged for commit:"]
    lines += [f"\tmodified:   {f.removeprefix('w1/')}" for f in changed]
    while sum(len(line) + 1 for line in lines) < size:
        f = rng.choice(changed).removeprefix("w1/")
        start = rng.randint(1, 200)
        lines += [f"diff --git a/{f} b/{f}", f"--- a/{f}", f"+++ b/{f}", f"@@ -{start},7 +{start},8 @@"]
        for _ in range(rng.randint(3, 9)):
            mark = rng.choice((" ", " ", "-", "+"))
            lines.append(f"{mark}  const {_ident(rng)} = {_ident(rng)}({rng.choice(NOUNS)});")
    return "\n".join(lines)


def build_log(rng: random.Random, size: int) -> str:
    """A vite build log, about ``size`` chars."""
    lines = ["vite v5.4.8 building for production...", f"✓ {rng.randint(200, 2400)} modules transformed."]
    while sum(len(line) + 1 for line in lines) < size:
        name = f"{rng.choice(NOUNS)}-{rng.getrandbits(32):08x}"
        kb = rng.uniform(0.4, 320)
        lines.append(f"dist/assets/{name}.js{' ' * rng.randint(2, 12)}{kb:8.2f} kB │ gzip: {kb / 3.2:7.2f} kB")
    lines.append(f"✓ built in {rng.uniform(1.2, 19):.2f}s")
    return "\n".join(lines)


def install_log(rng: random.Random, package: str) -> str:
    return (f" WARN  deprecated {rng.choice(NOUNS)}-utils@{rng.randint(1, 4)}.{rng.randint(0, 9)}.0: no longer maintained\n"
            f"Already up to date\nPackages: +{rng.randint(1, 14)}\n{'+' * rng.randint(1, 14)}\n"
            f"Progress: resolved {rng.randint(300, 1400)}, reused {rng.randint(300, 1400)}, downloaded {rng.randint(0, 9)}, added {rng.randint(1, 14)}, done\n\n"
            f"dependencies:\n+ {package} {rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}\n\nDone in {rng.uniform(0.8, 12):.1f}s")
