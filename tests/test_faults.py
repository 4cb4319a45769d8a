"""Faults (issue 12 items 9-12): the cache unwritable or full, kill -9 during every writer, two live runs
sharing one cache. What must hold: the run goes on and says so once, everything paid for is in the
results, a previous file is never destroyed, no torn section or half bundle, requests = distinct prompts.

A full disk is a real 1 MiB tmpfs when this process may mount one (root: CI and the dev machines); if
not, ENOSPC is injected at diskcache's write (``_enospc``), and the test says which in its output.
Kills are ``SIGKILL`` sent by the process to itself at a chosen point of the writer (tests/kill_driver.py),
plus kills from outside at random moments; SIGKILL runs no cleanup either way. The runs that are not killed,
not limited and not concurrent run in this process (``here``): the filesystem faults are real either way.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, redirect_stderr, redirect_stdout, suppress
from pathlib import Path

import pytest
from conftest import REPO
from scripted import uniform_history

from workbench.briefing.cache import INFLIGHT, BriefingCache
from workbench.history.writers import write_canonical_jsonl

DRIVER = REPO / "tests" / "kill_driver.py"
GUARD_S = 180  # a hang guard, not a speed target


def _env() -> dict[str, str]:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO),
            "OPENAI_API_KEY": "sk-fake-provider-key-for-tests"}


def cli(*args: str, point: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(DRIVER), point, "--", *args] if point else [sys.executable, "-m", "workbench", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=GUARD_S, env=env or _env(), cwd=REPO)


def here(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI run in this process, its output captured: for the runs where a process of its own is not what is
    tested (a cache on a real faulty filesystem, a run before or after a kill). A child process would import the
    engine again and, for a live run, litellm (~5 CPU-s each, of ~7 for a whole live ``simulate`` subprocess,
    measured 2026-12-03); this process imports them once. Kills, rlimits and concurrent runs keep their own
    processes (``cli``, ``cli_full``)."""
    from workbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["workbench", *args], code, out.getvalue(), err.getvalue())


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake provider's key, as ``_env`` gives a child process."""
    monkeypatch.setenv("OPENAI_API_KEY", _env()["OPENAI_API_KEY"])


def killed(done: subprocess.CompletedProcess[str]) -> bool:
    return done.returncode == -signal.SIGKILL


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "h.jsonl"
    path.write_text(write_canonical_jsonl(uniform_history(60)), encoding="utf-8")
    return path


def live_args(history: Path, fake, cache: Path) -> list[str]:  # noqa: ANN001
    return ["simulate", str(history), "--set", "context_window_tokens=32000", "--briefer", "live",
            "--model", "openai/fake-good", "--api-base", fake.api_base, "--cache-dir", str(cache), "--json",
            "--no-timeline"]


# ── the cache unwritable or full ───────────────────────────────────────────────────────────────


@contextmanager
def tmpfs(path: Path, options: str):
    """A real tmpfs at ``path`` (mount needs root); yields False when mounting is not allowed here."""
    path.mkdir(parents=True, exist_ok=True)
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True).returncode == 0
    try:
        yield ok
    finally:
        if ok:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _assert_went_on(done: subprocess.CompletedProcess[str], fake, cache: Path) -> dict:  # noqa: ANN001
    assert done.returncode == 0, done.stderr[-2000:]
    warnings = [line for line in done.stderr.splitlines() if "briefing cache" in line]
    assert 1 <= len(warnings) <= 2, done.stderr  # the cache's fault, and the fallback's if it fails too
    assert str(cache) in warnings[0] and ("answers go to " in warnings[0] or "answers kept in memory" in warnings[0])
    data = json.loads(done.stdout)
    comps = data["compressions"]
    assert comps and fake.total_requests == len(comps)  # every answer paid for once, none lost
    assert all(c["status"] == "landed" and c["briefing_text"] and c["briefer_attempts"] == ["ok:openai/fake-good"]
               for c in comps)
    m = data["metrics"]  # what was paid for is counted (the fake model has no list price: tokens, not dollars)
    assert m["briefer_requests"] == len(comps) and m["briefer_input_tokens"] > 0 and m["briefer_output_tokens"] > 0
    return data


@pytest.mark.slow
def test_cache_under_a_regular_file(history, tmp_path, fake_provider, key):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a folder")
    cache = blocker / "cache"
    _assert_went_on(here(*live_args(history, fake_provider, cache)), fake_provider, cache)


@pytest.mark.slow
def test_an_unwritable_cache_keeps_paid_answers_where_a_rerun_finds_them(history, tmp_path, fake_provider, key,
                                                                         monkeypatch):
    """The answers of a run whose cache cannot be written go to a fallback folder (named in the warning), so the
    same command run again reads them there and pays for nothing."""
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a folder")
    cache = blocker / "cache"
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", None)  # looked up again from $TMPDIR, as a new process would
    first = here(*live_args(history, fake_provider, cache))
    data = _assert_went_on(first, fake_provider, cache)
    paid = fake_provider.total_requests
    (warning,) = [line for line in first.stderr.splitlines() if "briefing cache" in line]
    assert "answers go to " + str(tmp_path / "tmp") in warning and "a rerun" in warning
    again = here(*live_args(history, fake_provider, cache))
    assert again.returncode == 0, again.stderr[-2000:]
    assert fake_provider.total_requests == paid  # nothing paid twice
    comps = json.loads(again.stdout)["compressions"]
    assert [c["briefing_text"] for c in comps] == [c["briefing_text"] for c in data["compressions"]]
    assert all(c["briefer_cache_hit"] for c in comps)


@pytest.mark.slow
def test_cache_on_a_read_only_filesystem(history, tmp_path, fake_provider, key):
    mount = tmp_path / "ro"
    with tmpfs(mount, "ro,size=1m") as mounted:
        if not mounted:  # not root: a folder we cannot create in stands in (it fails the same way)
            pytest.skip("cannot mount a read-only tmpfs here (needs root)")
        cache = mount / "cache"
        _assert_went_on(here(*live_args(history, fake_provider, cache)), fake_provider, cache)


def _fill(folder: Path, leave_bytes: int) -> None:
    """Fill the filesystem of ``folder`` until ``leave_bytes`` are free."""
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    with (folder / "filler.bin").open("wb") as fh, suppress(OSError):
        fh.write(b"\0" * max(0, free - leave_bytes))


@pytest.mark.slow
def test_cache_on_a_full_disk_after_some_paid_requests(history, tmp_path, fake_provider, capsys, key,
                                                       monkeypatch):
    """The disk fills mid-run: earlier answers went to disk, later ones stay in memory; nothing is lost."""
    mount = tmp_path / "tiny"
    with tmpfs(mount, "size=1m") as mounted:
        cache = mount / "cache"
        if mounted:
            BriefingCache(cache).set("warm-up", {"text": "creates the database"})
            _fill(mount, leave_bytes=24_000)
            done = here(*live_args(history, fake_provider, cache))
            how = "a real 1 MiB tmpfs"
        else:
            done = _enospc_run(history, fake_provider, tmp_path / "cache", monkeypatch)
            cache = tmp_path / "cache"
            how = "ENOSPC injected at diskcache's write"
        _assert_went_on(done, fake_provider, cache)
        assert "full" in done.stderr or "No space" in done.stderr
    with capsys.disabled():
        print(f"\n[full disk simulated with {how}]")


def _enospc_run(history: Path, fake, cache: Path, monkeypatch: pytest.MonkeyPatch) -> subprocess.CompletedProcess[str]:  # noqa: ANN001
    """The live run with diskcache's third write and later failing as on a full disk (ENOSPC)."""
    import errno

    import diskcache

    real, calls = diskcache.Cache.set, {"n": 0}

    def full(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - diskcache's signature
        calls["n"] += 1
        if calls["n"] > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(diskcache.Cache, "set", full)
    return here(*live_args(history, fake, cache))


# ── a full disk under the outputs ──────────────────────────────────────────────────────────────


def file_size_limit(limit: int):  # noqa: ANN201 - a preexec_fn
    """A disk that fills after ``limit`` bytes of any one file, without root: RLIMIT_FSIZE with SIGXFSZ ignored, so
    a write past it is cut short and the next one fails (EFBIG), as on a full disk (ENOSPC): same calls, same path."""
    def limit_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_files


def cli_full(args: list[str], limit: int, *, stdout=subprocess.PIPE, env=None):  # noqa: ANN001, ANN201
    return subprocess.run([sys.executable, "-m", "workbench", *args], stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=GUARD_S, env=env or _env(), cwd=REPO, preexec_fn=file_size_limit(limit))


def one_error_line(done: subprocess.CompletedProcess[str], command: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"workbench {command}: error: "), done.stderr[-2000:]
    return lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("unbuffered", ["1", ""], ids=["PYTHONUNBUFFERED", "buffered"])
def test_simulate_json_into_a_full_disk_fails_with_one_line(tmp_path, unbuffered):
    """``simulate --json > file`` where the disk fills at 4 KiB: exit 1 with one line, never exit 0 with half a JSON
    (Python's unbuffered stdout drops the rest of a short write without an error: the JSON is written by us)."""
    out = tmp_path / "out.json"
    env = {**_env(), "PYTHONUNBUFFERED": unbuffered}
    with out.open("w") as fh:
        done = cli_full(["simulate", str(REPO / "sample_histories" / "long.jsonl"), "--json", "--no-timeline"], 4096,
                        stdout=fh, env=env)
    assert done.returncode == 1
    line = one_error_line(done, "simulate")
    assert "stdout" in line and ("too large" in line or "No space" in line)
    assert out.stat().st_size == 4096  # what the disk took; the exit code says it is not the whole output


@pytest.mark.slow
def test_sweep_out_on_a_full_disk_fails_with_one_line_and_keeps_the_old_file(history, tmp_path):
    target = tmp_path / "prev.parquet"
    args = ["sweep", str(history), "--grid", "trigger_ratio=0.5,0.6", "--workers", "1", "--no-progress",
            "--out", str(target)]
    assert here(*args).returncode == 0
    before = target.read_bytes()
    done = cli_full([*args[:-1], str(target), "--grid", "kept_budget_ratio=0.1,0.2,0.3"], len(before) // 2)
    assert done.returncode == 1
    line = one_error_line(done, "sweep")
    assert str(target) in line and "Traceback" not in done.stderr
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.jsonl", "prev.parquet"]  # no temp file left behind


# ── concurrent runs sharing one cache ───────────────────────────────────────────────────────────


@pytest.mark.slow
def test_two_concurrent_live_runs_pay_once_per_distinct_prompt(history, tmp_path, fake_provider, key):
    """Two processes share one cache, a child and this one: the child starts first, and this run starts once the
    child's first request is at the provider (1.5 s an answer), so the two overlap whichever is faster to import.
    (Two children paid litellm's import twice, ~5 CPU-s each; this process has it once.)"""
    from workbench.briefing.provider import import_litellm

    import_litellm()  # before the child starts: this run can then begin within the child's first answer
    fake_provider.set_behaviour("openai/fake-good", "slow")
    cache = tmp_path / "shared-cache"
    args = live_args(history, fake_provider, cache)
    child = subprocess.Popen([sys.executable, "-m", "workbench", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=_env(), cwd=REPO)
    deadline = time.monotonic() + GUARD_S
    while not fake_provider.total_requests and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    mine = here(*args)
    outs = [child.communicate(timeout=GUARD_S), (mine.stdout, mine.stderr)]
    assert [child.returncode, mine.returncode] == [0, 0], [o[1][-1000:] for o in outs]
    runs = [json.loads(o[0]) for o in outs]
    texts = [[c["briefing_text"] for c in r["compressions"]] for r in runs]
    assert texts[0] == texts[1] and texts[0]
    distinct = len({(c["boundary"], c["previous_chars"]) for c in runs[0]["compressions"]})
    assert fake_provider.total_requests == distinct == len(texts[0])
    hits = [sum(c["briefer_cache_hit"] for c in r["compressions"]) for r in runs]
    assert sum(hits) == distinct  # every prompt: one run paid, the other read its answer


def test_a_crashed_holder_does_not_block_the_prompt(tmp_path):
    """An in-flight marker whose process died (kill -9 mid-request) is taken over at once."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    cache = BriefingCache(tmp_path)
    disk = cache._open()
    import socket

    disk.set(INFLIGHT + "k", json.dumps({"pid": child.pid, "host": socket.gethostname(), "at": time.time()}),
             expire=3600)
    assert cache.claim("k", 60) is True
    other = BriefingCache(tmp_path)
    assert other.claim("k", 60) is False  # we hold it now, alive
    cache.release("k")
    assert other.claim("k", 60) is True


def test_a_marker_expires_after_its_bound(tmp_path):
    cache = BriefingCache(tmp_path)
    disk = cache._open()
    disk.set(INFLIGHT + "k", json.dumps({"pid": 1, "host": "elsewhere", "at": 0}), expire=0.2)
    assert cache.claim("k", 60) is False
    time.sleep(0.3)
    assert cache.claim("k", 60) is True


# ── kill -9 during every writer ─────────────────────────────────────────────────────────────────


def _sections(text: str) -> list[str]:
    return [s for s in text.split("## Offloaded at ")[1:]]


@pytest.mark.slow
@pytest.mark.parametrize("point", ["write-half"])
def test_kill_during_the_offload_append_is_rolled_back_by_the_next_run(history, tmp_path, point):
    """A kill cuts the log's append short; the next run rolls exactly those bytes back (its journal says which),
    reports it, and appends its own: the log holds whole appends only, the earlier ones untouched."""
    out = tmp_path / "off"
    base = ["simulate", str(history), "--preset", "msagent", "--set", "context_window_tokens=32000",
            "--offload-dir", str(out), "--thread-id", "t1"]
    first = here(*base)
    assert first.returncode == 0
    log = out / "conversation_history" / "t1.md"
    good = log.read_bytes()
    assert killed(cli(*base, point=point))
    torn = log.read_bytes()
    assert torn.startswith(good) and len(torn) > len(good) and not torn.endswith(b"\n\n")
    torn_line = good.count(b"\n") + 1
    again = here(*base)
    assert again.returncode == 0
    assert f"t1.md:{torn_line}: an append cut off by a crash ({len(torn) - len(good):,} of " in again.stderr
    final = log.read_bytes()
    assert final.startswith(good)
    stamps = re.compile(rb"## Offloaded at [^\n]*")
    assert stamps.sub(b"", final[len(good):]) == stamps.sub(b"", good)  # the same replay appended the same sections
    assert len(_sections(final.decode())) == 2 * len(_sections(good.decode()))
    assert [p.name for p in log.parent.iterdir()] == ["t1.md"]  # no journal left


@pytest.mark.slow
@pytest.mark.parametrize("point", ["write-half", "before-rename"])
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_kill_during_sweep_out_keeps_the_previous_file(history, tmp_path, point, suffix):
    target = tmp_path / f"prev{suffix}"
    args = ["sweep", str(history), "--grid", "trigger_ratio=0.5,0.6", "--workers", "1", "--no-progress",
            "--out", str(target)]
    assert here(*args).returncode == 0
    before = target.read_bytes()
    assert killed(cli(*args[:-1], str(target), "--grid", "kept_budget_ratio=0.1,0.2", point=point))
    assert target.read_bytes() == before
    from workbench.explore.sweep import read_sweep

    assert read_sweep(target).height == 2


@pytest.mark.slow
@pytest.mark.parametrize("point", ["write-half", "before-rename"])
def test_kill_during_the_yaml_export_keeps_the_previous_file(history, tmp_path, point):
    target = tmp_path / "winner.yaml"
    target.write_text("version: 1\ntrigger_ratio: 0.5\n")
    before = target.read_bytes()
    args = ["tune", str(history), "--points", "2", "--rounds", "0", "--workers", "1", "--no-progress",
            "--out", str(target)]
    assert killed(cli(*args, point=point))
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".winner.yaml.")]  # only a hidden temp file


@pytest.mark.slow
@pytest.mark.parametrize("point", ["nth-file-3", "before-rename"])
def test_kill_during_bundles_leaves_no_half_bundle(history, tmp_path, point):
    out = tmp_path / "bundles"
    args = ["bundles", str(history), "--set", "context_window_tokens=32000", "--out", str(out)]
    assert killed(cli(*args, point=point))
    assert not out.exists()  # all or nothing: the temp folder was never put in place
    done = here(*args)
    assert done.returncode == 0
    folders = [p for p in out.rglob("compression-*") if p.is_dir()]
    assert folders and all(len(list(p.iterdir())) == 5 for p in folders)


@pytest.mark.slow
def test_kill_during_bundles_force_keeps_every_file_whole(history, tmp_path):
    out = tmp_path / "bundles"
    args = ["bundles", str(history), "--set", "context_window_tokens=32000", "--out", str(out), "--force"]
    assert here(*args).returncode == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert killed(cli(*args, point="nth-file-3"))
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _leftovers(folder: Path) -> list[str]:
    """Hidden temporary files and folders of writers beside the outputs (``.NAME.<pid>.<hex>.tmp...``)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _bundle_args(history: Path, out: Path, window: int) -> list[str]:
    return ["bundles", str(history), "--set", f"context_window_tokens={window}", "--out", str(out), "--force"]


@pytest.mark.slow
def test_bundles_force_over_bundles_of_other_knobs_leaves_exactly_the_new_ones(history, tmp_path):
    """A completed --force replaces the whole folder: no compression folder of the earlier knobs stays."""
    out, fresh = tmp_path / "bundles", tmp_path / "fresh"
    assert here(*_bundle_args(history, out, 16_000)).returncode == 0
    assert here(*_bundle_args(history, fresh, 48_000)).returncode == 0
    assert len(_tree(out)) > len(_tree(fresh)) > 0  # the earlier knobs made more compressions
    assert here(*_bundle_args(history, out, 48_000)).returncode == 0
    assert _tree(out) == _tree(fresh)
    assert _leftovers(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("point", ["after-swap", "between-renames"])
def test_kill_during_the_bundles_swap_leaves_old_or_new_never_mixed(history, tmp_path, point):
    """Killed as the new folder goes in (with the atomic exchange, and with the two renames used where there is
    none): the folder is all old or all new, and the next run puts things right and leaves nothing hidden."""
    out, fresh = tmp_path / "bundles", tmp_path / "fresh"
    assert here(*_bundle_args(history, out, 16_000)).returncode == 0
    old = _tree(out)
    assert here(*_bundle_args(history, fresh, 48_000)).returncode == 0
    new = _tree(fresh)
    assert killed(cli(*_bundle_args(history, out, 48_000), point=point))
    if out.exists():
        assert _tree(out) in (old, new)
    else:  # between the two renames: the old folder waits beside, hidden, until the next run puts it back
        assert [n for n in _leftovers(tmp_path) if n.endswith(".old")]
    assert _leftovers(tmp_path)  # what the killed run left
    assert here(*_bundle_args(history, out, 48_000)).returncode == 0
    assert _tree(out) == new and _leftovers(tmp_path) == []


@pytest.mark.slow
def test_temporary_files_and_folders_of_killed_writers_are_removed_by_the_next_run(history, tmp_path):
    out = tmp_path / "bundles"
    for _ in range(2):
        assert killed(cli(*_bundle_args(history, out, 32_000), point="nth-file-3"))
    target = tmp_path / "prev.parquet"
    sweep = ["sweep", str(history), "--grid", "trigger_ratio=0.5,0.6", "--workers", "1", "--no-progress",
             "--out", str(target)]
    assert killed(cli(*sweep, point="write-half"))
    assert len([n for n in _leftovers(tmp_path) if n.endswith(".tmpdir")]) == 1  # the 2nd run removed the 1st's
    assert [n for n in _leftovers(tmp_path) if n.startswith(".prev.parquet.")]
    assert here(*_bundle_args(history, out, 32_000)).returncode == 0
    assert here(*sweep).returncode == 0
    assert _leftovers(tmp_path) == []


@pytest.mark.slow
def test_bundles_force_refuses_a_folder_holding_other_files(history, tmp_path):
    """--force replaces a bundles folder whole, so it will not touch a folder that holds anything else."""
    out = tmp_path / "bundles"
    assert here(*_bundle_args(history, out, 32_000)).returncode == 0
    (out / "notes.txt").write_text("mine")
    before = _tree(out)
    done = here(*_bundle_args(history, out, 48_000))
    assert done.returncode == 2
    assert "notes.txt" in one_error_line(done, "bundles")
    assert _tree(out) == before


def _kill_at_random(args: list[str], seconds: float, rng: random.Random) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "workbench", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=_env(), cwd=REPO)
    time.sleep(rng.uniform(0, seconds))
    proc.kill()
    proc.wait()


def _random_kills(history: Path, tmp_path: Path, tries: int) -> None:
    rng = random.Random(12)
    target = tmp_path / "prev.parquet"
    args = ["sweep", str(history), "--grid", "trigger_ratio=0.4,0.5,0.6,0.7", "--workers", "1", "--no-progress",
            "--out", str(target)]
    t0 = time.perf_counter()
    assert cli(*args).returncode == 0
    seconds = time.perf_counter() - t0
    from workbench.explore.sweep import read_sweep

    for _ in range(tries):
        _kill_at_random(args, seconds, rng)
        assert read_sweep(target).height == 4  # the old file or the new one, always whole


@pytest.mark.slow
def test_kill_from_outside_at_random_moments_never_tears_the_sweep_output(history, tmp_path):
    _random_kills(history, tmp_path, tries=3)


@pytest.mark.long
def test_many_kills_from_outside(history, tmp_path):
    _random_kills(history, tmp_path, tries=25)
