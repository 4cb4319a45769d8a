"""The measures of ``benchmarks/run.py``: each times our code and its reference in the same run.

Every measure returns ``Result`` rows (see ``harness``): a ratio per run, reference and ours taken
back to back so both see the same machine load, and the median of our own figure at each size so
growth from 1k to 10k to 100k messages shows whether it stays linear.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import Histories, Result, Series, timed, timed_pair, timed_paused
from naive import naive_simulate, same_run

from workbench.counting.encodings import get_encoding, render_for_tokenizer
from workbench.counting.tokens import CountCache
from workbench.history.model import History
from workbench.knobs import Knobs
from workbench.presets import get_preset
from workbench.replay import simulate

ROOT = Path(__file__).resolve().parents[1]
LARGE = 100_000


@dataclass
class Config:
    """What to run: growth sizes, runs per size, the headline sizes and the shared histories."""

    histories: Histories
    sizes: tuple[int, ...]
    runs: int
    large_runs: int  # runs at sizes >= 100k, where one run can take many seconds
    replay_size: int
    app_size: int
    sweep_size: int
    sweep_runs: int  # knob sets per sweep
    sweep_growth: tuple[int, ...]
    app_growth: tuple[int, ...]
    growth_sizes: tuple[int, int] = (10_000, LARGE)  # the replay's growth rows: time per message, large over small
    growth_runs: int = 3

    def runs_at(self, n: int) -> int:
        return self.large_runs if n >= LARGE else self.runs


def _headline(series: dict[int, Series], size: int) -> Series:
    return series[size] if size in series else series[max(series)]


# -- replay ---------------------------------------------------------------------------------------


def _json_lines(path: Path) -> list[object]:
    loads = json.loads
    return [loads(line) for line in path.read_bytes().decode("utf-8").split("\n") if line]


GROWTH_PRESETS = ("stagewise", "claude_code", "codex_cli")  # "stagewise": the default knobs


def replay(cfg: Config) -> list[Result]:
    """Replay with warm counts vs json.loads of the file; then how the time per message grows with the history."""
    knobs = Knobs()
    sizes = sorted(set(cfg.sizes) | {cfg.replay_size})
    ours: dict[int, Series] = {}
    vs_json: dict[int, Series] = {}
    notes = []
    for n in sizes:
        history = cfg.histories.fresh(n)
        path = cfg.histories.file(n)
        cache = CountCache()
        run = simulate(history, knobs, cache=cache)  # counts tokens once: the replays below are warm
        if n == min(sizes) and not same_run(run, naive_simulate(history, knobs, cache=cache)):
            raise AssertionError(f"naive replay disagrees with simulate at {n:,} messages")
        if n == cfg.replay_size:
            notes.append(f"{n:,} messages, {path.stat().st_size / 1e6:.0f} MB, {run.metrics.checks:,} checks, "
                         f"{run.metrics.compressions} compressions (default knobs)")
        ours[n], vs_json[n] = Series(), Series()
        for r in range(cfg.runs_at(n)):
            t_ours, t_json = timed_pair(lambda h=history, c=cache: simulate(h, knobs, cache=c),
                                        lambda path=path: _json_lines(path), r, ref_timer=timed_paused)
            ours[n].add(t_ours)
            vs_json[n].add(t_ours / t_json)
    head = cfg.replay_size
    return [
        Result("replay", f"replay of a {head:,}-message history (tokens already counted)",
               "`json.loads` of the same file (read + decode + loads per line, GC paused)", "<= 0.5x",
               vs_json[head], "x", vs_json[head].median <= 0.5, ours[head],
               {n: s.median for n, s in ours.items()}, {n: s.median for n, s in vs_json.items()}, notes=notes),
        *replay_growth(cfg),
    ]


def replay_growth(cfg: Config) -> list[Result]:
    """Time per message of a replay of the agent-format history at the large size over that at the small size, per
    preset: 1.0 is linear. Both replays warm (counts cached), taken back to back, who goes first alternating."""
    small, large = cfg.growth_sizes
    histories = {n: cfg.histories.agent(n) for n in (small, large)}
    caches = {n: CountCache() for n in histories}  # one per size: the presets share its counts
    out = []
    for name in GROWTH_PRESETS:
        knobs = Knobs() if name == "stagewise" else get_preset(name)
        made = {n: simulate(h, knobs, cache=caches[n]) for n, h in histories.items()}  # counts once
        ratio, times = Series(), {small: Series(), large: Series()}
        for r in range(cfg.growth_runs):
            t_large, t_small = timed_pair(lambda k=knobs: simulate(histories[large], k, cache=caches[large]),
                                          lambda k=knobs: simulate(histories[small], k, cache=caches[small]), r)
            times[large].add(t_large)
            times[small].add(t_small)
            ratio.add((t_large / large) / (t_small / small))
        label = "default knobs" if name == "stagewise" else f"`{name}` preset"
        out.append(Result(
            f"replay_growth_{name}", f"replay time per message at {large:,} messages, {label}",
            f"the same at {small:,} messages (agent-format history: Claude Code sample logs chained, tokens counted)",
            "<= 1.5x", ratio, "x", ratio.median <= 1.5, times[large], {n: s.median for n, s in times.items()},
            notes=[f"{made[small].metrics.compressions:,} and {made[large].metrics.compressions:,} compressions at "
                   f"{small:,} and {large:,} messages"]))
    return out


# -- token counting -------------------------------------------------------------------------------


def counting(cfg: Config) -> list[Result]:
    """Cold cl100k counts vs raw encode_ordinary_batch; warm counts after a knob change vs cold."""
    from workbench.counting import tokens

    threads = getattr(tokens, "ENCODE_THREADS", 2)
    enc = get_encoding("cl100k_base")
    knobs = Knobs()
    sizes = sorted(set(cfg.sizes) | {cfg.replay_size})
    cold: dict[int, Series] = {}
    warm: dict[int, Series] = {}
    vs_raw: dict[int, Series] = {}
    vs_cold: dict[int, Series] = {}
    kw = {"overhead_chars": knobs.overhead_chars_per_message, "chars_per_token": knobs.chars_per_token}
    for n in sizes:
        texts = [render_for_tokenizer(m) for m in cfg.histories.fresh(n).messages]
        cold[n], warm[n], vs_raw[n], vs_cold[n] = Series(), Series(), Series(), Series()
        primed: tuple[History, CountCache] | None = None
        for r in range(cfg.runs_at(n)):
            history = cfg.histories.fresh(n)  # new Message objects: no digest or count cached on them
            cache = CountCache()
            t_cold, t_raw = timed_pair(lambda h=history, c=cache: c.counts_for(h).tokens("cl100k_base", **kw),
                                       lambda texts=texts: enc.encode_ordinary_batch(texts, num_threads=threads), r)
            if primed is None:  # the boundary counter too, once: then every count a replay needs is cached
                cache.counts_for(history).tokens("estimate", **kw)
                primed = history, cache
            kw2 = {"overhead_chars": 300 + r, "chars_per_token": 3.5 + r / 10}  # a knob moved

            def warm_counts(h: History = primed[0], c: CountCache = primed[1], kw2: dict = kw2) -> None:
                table = c.counts_for(h)
                table.tokens("cl100k_base", **kw2)
                table.tokens("estimate", **kw2)

            t_warm = timed(warm_counts)
            cold[n].add(t_cold)
            warm[n].add(t_warm)
            vs_raw[n].add(t_cold / t_raw)
            vs_cold[n].add(t_warm / t_cold)
    head = cfg.replay_size
    return [
        Result("count_cold", f"cold cl100k counting of a {head:,}-message history (digests, render, encode)",
               f"raw `enc.encode_ordinary_batch(texts, num_threads={threads})` over the same rendered texts",
               "<= 1.3x", vs_raw[head], "x", vs_raw[head].median <= 1.3, cold[head],
               {n: s.median for n, s in cold.items()}, {n: s.median for n, s in vs_raw.items()}),
        Result("count_warm", "warm counting (overhead and chars/token changed, same history; cl100k + estimate)",
               "cold counting", "<= 0.05x", vs_cold[head], "x", vs_cold[head].median <= 0.05, warm[head],
               {n: s.median for n, s in warm.items()}, {n: s.median for n, s in vs_cold.items()}),
    ]


# -- sweeps ---------------------------------------------------------------------------------------


def _cold_inline_sweep() -> None:
    """Forget what earlier sweeps in this process loaded, counted and indexed: workers=1 starts cold, like
    the fresh processes of a pool (and like a new ``python -m workbench sweep``)."""
    from workbench.explore import sweep as sweep_mod
    from workbench.policies import base

    histories = getattr(sweep_mod, "_WORKER_HISTORIES", None)
    if isinstance(histories, dict):
        histories.clear()
    if hasattr(sweep_mod, "_WORKER_CACHE"):
        sweep_mod._WORKER_CACHE = CountCache(max_tables=256)
    base.clear_caches()  # per-history indexes, keyed by digest


def _sweep_knobs(count: int) -> list[Knobs]:
    from workbench.explore.sweep import knob_grid

    side = max(1, round(count**0.5))
    ratios = [round(0.3 + 0.6 * i / max(1, side - 1), 4) for i in range(side)]
    kept = [round(0.05 + 0.3 * i / max(1, side - 1), 4) for i in range(max(1, count // side))]
    return knob_grid({"trigger_ratio": ratios, "kept_budget_ratio": kept})


def sweeps(cfg: Config) -> list[Result]:
    """A knob grid over one history: ``sweep(workers=2)`` vs ``sweep(workers=1)`` (both cold)."""
    from workbench.explore.sweep import sweep

    knobs = _sweep_knobs(cfg.sweep_runs)
    t1s: dict[int, Series] = {}
    t2s: dict[int, Series] = {}
    speed: dict[int, Series] = {}
    sizes = sorted(set(cfg.sweep_growth) | {cfg.sweep_size})
    for n in sizes:
        path = cfg.histories.file(n)
        t1s[n], t2s[n], speed[n] = Series(), Series(), Series()
        for _ in range(cfg.runs_at(n)):
            _cold_inline_sweep()
            t1 = timed(lambda path=path: sweep([path], knobs, workers=1))
            _cold_inline_sweep()  # this process takes a share of a 2-process sweep: it starts as cold as the worker
            t2 = timed(lambda path=path: sweep([path], knobs, workers=2))
            t1s[n].add(t1)
            t2s[n].add(t2)
            speed[n].add(t1 / t2)
    head = cfg.sweep_size
    warm1, warm2 = _warm_sweeps(cfg.histories.file(head), knobs, runs=min(cfg.runs, 3))
    return [Result(
        "sweep", f"sweep of {len(knobs)} runs on 2 workers ({head:,}-message history, path given)",
        "the same sweep on 1 worker (in-process, caches cleared)", ">= 1.7x faster", speed[head], "x faster",
        speed[head].median >= 1.7, t2s[head], {n: s.median for n, s in t2s.items()},
        {n: s.median for n, s in speed.items()},
        notes=[f"cold (as measured): 1 worker {t1s[head].median:.2f} s, 2 workers {t2s[head].median:.2f} s: a new "
               f"pool starts, and each worker loads and counts the history before it replays",
               f"warm (the same pool kept between sweeps, histories and counts cached in its workers): "
               f"1 worker {warm1.median:.2f} s, 2 workers {warm2.median:.2f} s, {warm1.median / warm2.median:.1f}x"],
    )]


def _warm_sweeps(path: Path, knobs: list[Knobs], runs: int) -> tuple[Series, Series]:
    """Sweeps after a first one warmed the caches: in-process, and on a kept 2-process pool."""
    from workbench.explore.sweep import default_executor, sweep

    one, two = Series(), Series()
    sweep([path], knobs, workers=1)
    for _ in range(runs):
        one.add(timed(lambda: sweep([path], knobs, workers=1)))
    pool = default_executor(2)
    try:
        sweep([path], knobs, executor=pool, workers=2)
        for _ in range(runs):
            two.add(timed(lambda: sweep([path], knobs, executor=pool, workers=2)))
    finally:
        pool.shutdown(wait=True)
    return one, two


# -- the extractive briefer -----------------------------------------------------------------------

EXTRACTIVE_SIZE = 2000  # messages: the size the target was first set at (a tool history of 2,001, ~20 compactions)


def extractive(cfg: Config) -> list[Result]:
    """A replay with the extractive briefer (every briefing's text built) vs the same replay with the size model
    (no text), counts warm for both; the target is absolute, as the unit test that held it was."""
    from workbench.briefing.extractive import ExtractiveBriefer, clear_caches

    knobs = Knobs(context_window_tokens=200_000)
    ours, ratio = Series(), Series()
    compressions = 0
    for r in range(cfg.runs):
        history = cfg.histories.fresh(EXTRACTIVE_SIZE)
        cache = CountCache()
        compressions = simulate(history, knobs, cache=cache).metrics.compressions  # counts once: untimed
        clear_caches()  # each run's history has the same messages: its replay writes its own briefings
        t_ours, t_ref = timed_pair(lambda h=history, c=cache: simulate(h, knobs, ExtractiveBriefer(), cache=c),
                                   lambda h=history, c=cache: simulate(h, knobs, cache=c), r)
        ours.add(t_ours)
        ratio.add(t_ours / t_ref)
    return [Result(
        "extractive", f"replay of a {EXTRACTIVE_SIZE:,}-message history with the extractive briefer (tokens already "
        "counted)", "the same replay with the simulated briefer (no briefing text)", "<= 2 s median",
        ratio, "x", ours.median <= 2.0, ours, notes=[f"{compressions} compressions; {ours.median:.2f} s median"],
    )]


# -- the app --------------------------------------------------------------------------------------


def _app_times(path: Path, runs: int) -> tuple[Series, Series]:
    from streamlit.testing.v1 import AppTest

    os.environ["WORKBENCH_HISTORIES"] = str(path.parent)
    at = AppTest.from_file(str(ROOT / "workbench" / "app.py"), default_timeout=600)
    at.run()
    at.selectbox(key="history").set_value(f"{path.parent.name}/{path.name}").run()  # loads and counts: untimed
    at.run()
    if at.exception:
        raise RuntimeError(f"the app failed: {at.exception}")
    still, moved = Series(), Series()
    for _ in range(runs):
        still.add(timed(at.run))
        slider = at.slider(key="trigger_tokens")  # the trigger control (workbench/ui/sidebar.py TRIGGER)
        value = int(slider.value) - int(slider.step)  # a value not seen before: the cached replay misses
        moved.add(timed(lambda slider=slider, value=value: slider.set_value(value).run()))
        if at.exception:
            raise RuntimeError(f"the app failed after a slider move: {at.exception}")
    return still, moved


def app(cfg: Config) -> list[Result]:
    """AppTest: a rerun after a slider move vs a rerun with nothing changed."""
    sizes = sorted(set(cfg.app_growth) | {cfg.app_size})
    moved_t: dict[int, Series] = {}
    ratio: dict[int, Series] = {}
    for n in sizes:
        still, moved = _app_times(cfg.histories.file(n), cfg.runs_at(n))
        moved_t[n] = moved
        ratio[n] = Series([m / s for m, s in zip(moved.values, still.values, strict=True)])
    head = cfg.app_size
    ok = ratio[head].median <= 2 and moved_t[head].median <= 0.5
    return [Result(
        "app", f"app rerun after a slider move, {head:,}-message history (AppTest)",
        "app rerun with nothing changed", "<= 2x, and <= 0.5 s median", ratio[head], "x", ok, moved_t[head],
        {n: s.median for n, s in moved_t.items()}, {n: s.median for n, s in ratio.items()},
        notes=[f"slider move: median {moved_t[head].median:.3f} s"],
    )]


# -- import time ----------------------------------------------------------------------------------


def _python_time(code: str) -> float:
    return timed(lambda: subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT))


def imports(cfg: Config) -> list[Result]:
    """``python -c 'import workbench'`` minus ``python -c pass``, in fresh interpreters."""
    extra, extra_engine = Series(), Series()
    for _ in range(cfg.runs):
        base = _python_time("pass")
        extra.add(_python_time("import workbench") - base)
        extra_engine.add(_python_time("from workbench import simulate, load_history") - base)
    return [Result(
        "import", "`import workbench`", "`python -c pass`", "<= +0.5 s", extra, "+s", extra.median <= 0.5, extra,
        notes=[f"`from workbench import simulate, load_history` (the engine: numpy, polars; tiktoken loads on first use): "
               f"+{extra_engine.median:.2f} s median (min {extra_engine.min:.2f}, max {extra_engine.max:.2f})"],
    )]


# -- peak memory ----------------------------------------------------------------------------------


def _memory_runs(path: Path, runs: int, parallel: int) -> list[dict[str, float]]:
    probe = Path(__file__).with_name("memory_probe.py")
    out: list[dict[str, float]] = []
    pending = runs
    while pending:
        batch = [subprocess.Popen([sys.executable, str(probe), str(path)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
                 for _ in range(min(parallel, pending))]
        for proc in batch:
            stdout, _ = proc.communicate()
            if proc.returncode:
                raise RuntimeError(f"memory probe failed on {path}")
            out.append(json.loads(stdout.strip().splitlines()[-1]))
        pending -= len(batch)
    return out


def memory(cfg: Config) -> list[Result]:
    """Peak RSS growth of load + replay in a fresh process, over the file's size."""
    sizes = sorted(set(cfg.sizes) | {LARGE if max(cfg.sizes) >= LARGE else max(cfg.sizes)})
    ratio: dict[int, Series] = {}
    peak: dict[int, Series] = {}
    loaded: dict[int, Series] = {}
    for n in sizes:
        path = cfg.histories.file(n)
        size = path.stat().st_size
        # Peak RSS of one process does not depend on others running, so two probes share the two cores.
        # Peak memory, unlike time, does not depend on what else runs: probes go 2 at a time.
        rows = _memory_runs(path, cfg.runs if n == max(sizes) else min(cfg.runs, 3), parallel=2)
        peak[n] = Series([r["peak_bytes"] - r["baseline_bytes"] for r in rows])
        ratio[n] = Series([(r["peak_bytes"] - r["baseline_bytes"]) / size for r in rows])
        loaded[n] = Series([(r["loaded_bytes"] - r["baseline_bytes"]) / size for r in rows])
    head = max(sizes)
    return [Result(
        "memory", f"peak memory of load + replay, {head:,}-message history (RSS growth in a fresh process)",
        "the history's file size", "<= 3x", ratio[head], "x", ratio[head].median <= 3, peak[head],
        {n: s.median for n, s in peak.items()}, {n: s.median for n, s in ratio.items()}, growth_unit="bytes",
        notes=[f"file {cfg.histories.file(head).stat().st_size / 1e6:.0f} MB; after loading alone "
               f"{loaded[head].median:.2f}x, so the replay adds {ratio[head].median - loaded[head].median:.2f}x "
               f"(fixed costs included: the price registry, first-use imports)"],
    )]


# -- the app in a real browser -------------------------------------------------------------------


def _bytecode() -> str:
    """How many of the package's modules had up-to-date bytecode when the servers started (none: each fresh
    server compiled the modules it imports, ~0.2 s of its first run here)."""
    import importlib.util

    sources = sorted((ROOT / "workbench").rglob("*.py"))
    fresh = 0
    for src in sources:
        pyc = Path(importlib.util.cache_from_source(str(src)))
        fresh += pyc.exists() and pyc.stat().st_mtime >= src.stat().st_mtime
    return f"{fresh} of {len(sources)} modules compiled"


def browser(cfg: Config) -> list[Result]:
    """Chromium via playwright on the long sample: cold start to the first chart, slider move to the new chart, each
    as a ratio to a bare Streamlit page measured in the same run (#21 item 15): the cold start to a one-chart page's
    (``st.plotly_chart``, so Streamlit's full plotly.js; <= 1.1x), the slider move to a one-slider, one-chart page's
    (<= 1.5x). The seconds are in the notes.
    """
    from browser import chromium, measure

    if chromium() is None:
        print("[browser: skipped, Debian's chromium is not installed]", file=sys.stderr)
        return []
    runs = 2 if cfg.runs <= 3 else cfg.runs
    found = measure(runs=runs, moves=max(5, cfg.runs * 2))
    cold, floor, slider, settled = (Series(found.cold), Series(found.floor), Series(found.slider),
                                    Series(found.settled))
    bare = Series(found.slider_floor)
    returning, returning_floor = Series(found.returning), Series(found.returning_floor)
    cold_ratio = Series([c / f for c, f in zip(found.cold, found.floor, strict=True)])
    slider_ratio = Series([s / b for s, b in zip(found.slider, found.slider_floor, strict=True)])  # pairs, alternated
    load = ", ".join(f"{x:.1f}" for x in found.load)
    notes = [f"{found.notes[0]}; load average before each cold start {load}",
             f"ours {cold.median:.2f} s median (min {cold.min:.2f}, max {cold.max:.2f}); the one-chart page (no "
             f"workbench; `st.plotly_chart`, Streamlit's full plotly.js) {floor.median:.2f} s (min {floor.min:.2f}, "
             f"max {floor.max:.2f}), each run's pair back to back",
             f"the package's bytecode: {_bytecode()} (see docs/install.md: `compileall`)"]
    return [
        Result("browser_cold", "cold start to the first chart, long sample (Chromium, fresh server, first visit)",
               "a one-chart Streamlit page, started and timed the same way back to back", "<= 1.1x",
               cold_ratio, "x", cold_ratio.median <= 1.1, cold, notes=notes),
        Result("browser_cold_returning", "the same cold start for a returning browser (same port, its cache kept)",
               "none: absolute target (the floor is in the notes)", "<= 2.5 s median", returning, "s",
               returning.median <= 2.5, returning,
               notes=[f"a fresh server each time, one browser context on one port (as `streamlit run` serves on "
                      f"8501 every launch), a first visit to fill the cache not counted; the one-chart page the "
                      f"same way: {returning_floor.median:.2f} s median (min {returning_floor.min:.2f}, "
                      f"max {returning_floor.max:.2f})"]),
        Result("browser_slider", "trigger control move to the updated context chart, long sample (Chromium)",
               "a one-slider, one-chart Streamlit page: a key press on its slider to its redrawn chart, alternating with"
               " ours",
               "<= 1.5x", slider_ratio, "x", slider_ratio.median <= 1.5, slider,
               notes=[f"ours {slider.median:.3f} s median (min {slider.min:.3f}, max {slider.max:.3f}); the bare "
                      f"page {bare.median:.3f} s (min {bare.min:.3f}, max {bare.max:.3f})",
                      f"until the whole page is idle again: {settled.median:.3f} s median "
                      f"(min {settled.min:.3f}, max {settled.max:.3f})"]),
    ]


# -- workbench reality on real agent logs --------------------------------------------------------------


def shared_dir() -> Path:
    """The read-only reference data: ``$WORKBENCH_SHARED`` or ``../shared`` beside the repository."""
    env = os.environ.get("WORKBENCH_SHARED")
    return Path(env) if env else ROOT.parent / "shared"


def _probe(folder: Path, runs: int, *, ignore_usage: bool, registry_cache: str = "cold",
           one_process: bool = False) -> dict[str, Any]:
    probe = Path(__file__).with_name("reality_probe.py")
    cmd = [sys.executable, str(probe), str(folder), str(runs), "--registry-cache", registry_cache]
    cmd += ["--with-ignore-usage"] if ignore_usage else []
    cmd += ["--with-one-process"] if one_process else []
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        raise RuntimeError(f"reality probe failed: {proc.stderr[-2000:]}")
    data: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return data


def reality(cfg: Config) -> list[Result]:
    """``workbench reality`` over ../shared/real_sessions vs read + json.loads of every line, in fresh processes.

    The command shares the logs between its process and workers forked from it, one per CPU it may use (the
    first probe also times a later run with ``--workers 1``, all in one process, for the notes)."""
    folder = shared_dir() / "real_sessions"
    measure = ("`workbench reality` over ../shared/real_sessions, first run in a process (modules imported first), "
               "registry cache cold")
    cached_measure = "the same first run in a new process, the registry cache warm (written by an earlier process)"
    reference = "read + `json.loads` of every line of the same logs, same process"
    warm_measure = "same command, a later run in the same process (per-history caches cleared)"
    if not folder.is_dir() or not any(folder.glob("*.jsonl")):
        reason = f"{folder} not found (set WORKBENCH_SHARED to the shared folder)"
        return [Result.skip("reality", measure, reference, "<= 2x", reason),
                Result.skip("reality_cached", cached_measure, reference, "<= 2x", reason),
                Result.skip("reality_warm", warm_measure, reference, "<= 2x", reason)]
    cold, warm, cold_t, warm_t = Series(), Series(), Series(), Series()
    cached, cached_t, cached_cpu = Series(), Series(), Series()
    cold_cpu, warm_cpu, imports, with_imports = Series(), Series(), Series(), Series()
    cpu_s = Series()  # CPU seconds of a first run
    one = Series()  # a later run with --workers 1, over its reference
    ignore: tuple[float, float] | None = None
    probes = []  # one first run each, the registry cache cold and warm, alternating
    for i in range(cfg.runs):
        probes.append(_probe(folder, cfg.runs, ignore_usage=i == 0, registry_cache="cold", one_process=True))
        probes.append(_probe(folder, cfg.runs, ignore_usage=False, registry_cache="warm"))
    for d in probes:
        if d["registry_cache"] == "warm":
            cached.add(d["cold"][0] / d["cold_ref"][0])
            cached_cpu.add(d["cold"][1] / d["cold_ref"][1])
            cached_t.add(d["cold"][0])
        else:
            cold.add(d["cold"][0] / d["cold_ref"][0])
            cold_cpu.add(d["cold"][1] / d["cold_ref"][1])
            cold_t.add(d["cold"][0])
            cpu_s.add(d["cold"][1])
        imports.add(d["imports"][0])
        with_imports.add((d["imports"][0] + d["cold"][0]) / d["cold_ref"][0])
        for ours, ref in d["pairs"]:
            warm.add(ours[0] / ref[0])
            warm_cpu.add(ours[1] / ref[1])
            warm_t.add(ours[0])
        if d.get("one_process") is not None:
            one.add(d["one_process"][0] / d["one_process_ref"][0])
        if d["ignore_usage"] is not None:
            ignore = (d["ignore_usage"][0], d["ignore_usage"][0] / d["ignore_usage_ref"][0])
    d = probes[0]
    ref_t = Series([p["cold_ref"][0] for p in probes])
    notes = [
        f"{d['files']} logs, {d['bytes'] / 1e6:.0f} MB, {d['lines']:,} lines; the reference takes {ref_t.median:.3f} s "
        f"(median); every run's table is printed into a buffer, as `main(['reality', FOLDER])`",
        f"modules a run imports ({d['modules']}: numpy, polars, rich, the command modules), timed apart: "
        f"{imports.median:.2f} s median, the same for any number of logs; with them the first run is "
        f"{with_imports.median:.1f}x the reference",
        f"the command's workers: {d['workers']} processes (this one and {d['workers'] - 1} forked); all in one "
        f"process (`--workers 1`), a later run is {one.median:.2f}x the reference (median of {len(one.values)})",
        f"CPU time instead of wall time (the workers' included): first run {cold_cpu.median:.2f}x (registry cache cold; "
        f"{cpu_s.median:.3f} s), {cached_cpu.median:.2f}x (warm), later runs {warm_cpu.median:.2f}x",
        f"registry cache: a cold first run starts with an empty cache folder, a warm one with what an earlier "
        f"process wrote there (files before it: "
        f"{', '.join(next(p for p in probes if p['registry_cache'] == 'warm')['cache_files_before']) or 'none'}); "
        f"the command looks no price up (it reports positions, not dollars), so both do the same work",
    ]
    if ignore is not None:
        notes.append(f"`--ignore-usage` (the estimate alone: o200k_base counts of every message), a later run: "
                     f"{ignore[0]:.2f} s, {ignore[1]:.1f}x the reference")
    return [
        Result("reality", measure, reference, "<= 2x", cold, "x", cold.median <= 2, cold_t, notes=notes),
        Result("reality_cached", cached_measure, reference, "<= 2x", cached, "x", cached.median <= 2, cached_t),
        Result("reality_warm", warm_measure, reference, "<= 2x", warm, "x", warm.median <= 2, warm_t),
    ]


def scale(cfg: Config) -> list[Result]:
    """Sweeps on ../shared/real_sessions_large: per-core rate, 2 over 1 worker (pool, cluster), shipping, growth."""
    from scale import scale as measure

    folder = shared_dir() / "real_sessions_large"
    if not any(folder.glob("*.jsonl.gz")):
        reason = f"{folder} not found (set WORKBENCH_SHARED to the shared folder)"
        return [Result.skip("scale_rate", "replays per core on real_sessions_large", "json.loads of the same logs",
                            "<= 0.5x", reason)]
    return measure(cfg, folder)


MEASURES: dict[str, Callable[[Config], list[Result]]] = {
    "replay": replay,
    "counting": counting,
    "sweep": sweeps,
    "extractive": extractive,
    "app": app,
    "import": imports,
    "memory": memory,
    "browser": browser,
    "reality": reality,
    "scale": scale,
}


def temp_folder() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="workbench-bench-")
