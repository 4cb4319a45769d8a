"""Shared pytest hooks: ``REPO``, the shared folder, the long sample's load and replay (once per worker), the
``--golden`` option and parametrization of the stagewise golden vectors, and the order the suite runs in."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]  # the checkout: every test file takes it from here
LONG_SAMPLE = REPO / "sample_histories" / "long.jsonl"


def shared_dir() -> Path:
    """Where the read-only reference material lives: ``$WORKBENCH_SHARED`` or ``../shared``."""
    env = os.environ.get("WORKBENCH_SHARED")
    return Path(env) if env else REPO.parent / "shared"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def need_shared(path: Path) -> Path:
    """``path`` from ../shared; skips with the reason when it is missing, fails under CI (CI has shared)."""
    if not path.exists():
        reason = f"shared data not found: {path} (set WORKBENCH_SHARED to the shared folder)"
        if in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def default_golden_files() -> list[Path]:
    return [shared_dir() / "golden" / "stagewise_visible.json"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--golden",
        action="append",
        default=None,
        metavar="PATH",
        help="stagewise golden-vector file (repeatable); replaces the default shared/golden/stagewise_visible.json",
    )


class MissingGolden:
    """Stands in for cases of a golden file that is not there; the test skips or fails on it."""

    def __init__(self, path: Path, *, explicit: bool = False) -> None:
        self.path = path
        self.explicit = explicit

    def handle(self) -> None:
        reason = f"golden file not found: {self.path} (set WORKBENCH_SHARED or pass --golden PATH)"
        if self.explicit or os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)  # a file named with --golden must exist: a typo must not pass as a skip
        pytest.skip(reason)


_LOADED: dict[Path, Any] = {}


def _load(path: Path) -> Any:
    if path not in _LOADED:
        _LOADED[path] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    return _LOADED[path]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    wanted = [name for name in ("golden_case", "trigger_vector") if name in metafunc.fixturenames]
    if not wanted:
        return
    option = metafunc.config.getoption("--golden")
    files = [Path(p).resolve() for p in option] if option else default_golden_files()
    prefix = len(files) > 1
    for name in wanted:
        params = []
        for path in files:
            data = _load(path)
            if data is None:
                params.append(pytest.param(MissingGolden(path, explicit=bool(option)), id=f"{path.stem}:missing"))
                continue
            items = data.get("cases", []) if name == "golden_case" else data.get("triggerVectors", [])
            for i, item in enumerate(items):
                ident = item["id"] if name == "golden_case" else f"v{i:03d}"
                params.append(pytest.param(item, id=f"{path.stem}:{ident}" if prefix else ident))
        metafunc.parametrize(name, params)


# ── briefers: offline litellm, an isolated cache, a local fake provider (issue 4) ──────────────
# litellm would otherwise fetch its price map from the network when first imported.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture(autouse=True)
def _isolated_briefing_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's real briefing cache (~/.cache/compaction-workbench)."""
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("briefing-cache")))


@pytest.fixture(scope="session")
def _fake_provider_server() -> Any:
    from fake_provider import FakeProvider

    with FakeProvider(slow_s=1.5) as server:
        yield server


@pytest.fixture
def fake_provider(_fake_provider_server: Any) -> Any:
    """A local OpenAI-compatible server (tests/fake_provider.py), counters and behaviours reset per test."""
    _fake_provider_server.reset()
    return _fake_provider_server


# ── the long sample: loaded and replayed under the defaults once per worker, shared by every file ──────────────


@pytest.fixture(scope="session")
def long_history() -> Any:
    """``sample_histories/long.jsonl`` (2,000+ messages, the app's default history); a History is immutable."""
    from workbench.history.readers import load_history

    return load_history(LONG_SAMPLE)


@pytest.fixture(scope="session")
def long_run(long_history: Any) -> Any:
    """The long sample replayed under the default knobs (stagewise's), the replay the app opens with."""
    from workbench.knobs import Knobs
    from workbench.replay import simulate

    return simulate(long_history, Knobs())


# ── the app served with `streamlit run`, once per worker for every browser test of the default app ─────────────


@pytest.fixture(scope="session")
def served_app(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The app with its default histories on a free local port (tests/test_browser.py's ``serve``); yields its URL.
    Here, not in a test file, so that test_browser.py and test_browser_fit.py share one server (a fixture is cached
    per file that defines it): each server is a cold start and a first replay of the long sample."""
    from test_browser import serve

    with serve(tmp_path_factory.mktemp("streamlit")) as url:
        yield url


@pytest.fixture(scope="session")
def served_logs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The app with one folder of logs for test_browser_untrusted.py and test_browser_reality.py: a hostile log
    whose links point at a recording listener, and the real Claude Code log from ../shared when it is there (the
    reality test skips without it). One server for both: each start is a cold start and a first replay (~5 s).
    Yields (URL, listener)."""
    import shutil

    from hostile_log import hostile_claude_log, hostile_name
    from test_browser import serve
    from test_browser_reality import LOG
    from test_browser_untrusted import Listener

    listener = Listener()
    folder = tmp_path_factory.mktemp("logs")
    (folder / f"{hostile_name()}.jsonl").write_bytes(hostile_claude_log(listener.host))
    real = shared_dir() / "real_sessions" / LOG
    if real.exists():
        shutil.copy(real, folder / LOG)
    try:
        with serve(tmp_path_factory.mktemp("streamlit"), "--histories", str(folder)) as url:
            yield url, listener
    finally:
        listener.close()


# ── Chromium: one per worker for each run of consecutive browser tests, a fresh page per test ──────────────────
# Starting playwright's driver and Chromium took ~1.5 s and ~1 CPU-s a test, and a page in a fresh browser context
# loads Streamlit's scripts again (~7 s to a drawn chart against ~3.5 s in a context that has them cached, at load
# 5 on 2 cores, 2026-12-03). Playwright's sync API marks its event loop as running between its calls, so an
# asyncio.run() in a later test of the worker would fail: the browser stops as soon as the next test is not a
# browser test (pytest_runtest_teardown below), and the next browser test starts another.


class Chromium:
    """Debian's chromium under playwright's sync API, started on first use; ``context`` is shared by the tests
    for its HTTP cache (each page is still its own Streamlit session)."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None
        self._context: Any = None

    @property
    def browser(self) -> Any:
        if self._browser is None or not self._browser.is_connected():
            self.close()
            from test_browser import ARGS, _chromium

            executable = _chromium()  # skips, or fails under CI, without chromium
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(executable_path=executable, args=ARGS)
        return self._browser

    @property
    def context(self) -> Any:
        if self._context is None or self._browser is None or not self._browser.is_connected():
            from test_browser import CONTEXT, COUNT_RUNS

            self._context = self.browser.new_context(**CONTEXT)
            self._context.add_init_script(COUNT_RUNS)  # after_rerun's count of the script runs
        return self._context

    def close(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._playwright = self._browser = self._context = None
        try:
            if browser is not None:
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


BROWSER = Chromium()


@pytest.fixture
def chromium() -> Chromium:
    """The worker's Chromium (started by the first browser test of a run of them)."""
    BROWSER.browser  # noqa: B018 - starts it here, so a missing chromium skips before a server starts
    return BROWSER


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    try:
        return (yield)  # the test's fixtures (its pages) are torn down first
    finally:
        if nextitem is None or nextitem.get_closest_marker("browser") is None:
            BROWSER.close()


# ── AppTest: the scan for installed Streamlit components, once per worker ─────────────────────────────────────
# Each new AppTest (streamlit 1.67) builds a BidiComponentManager that scans the metadata of every installed
# distribution for component manifests (streamlit/components/v2/manifest_scanner.py): ~370 packages, most of
# the time of a short app test. Nothing is installed during a run, so one scan per process gives the same result.


@pytest.fixture(scope="session", autouse=True)
def _component_scan_once() -> Any:
    import functools

    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # a streamlit without v2 components: nothing to cache
        yield
        return
    scan = manifest_scanner.scan_component_manifests
    manifest_scanner.scan_component_manifests = functools.cache(scan)  # type: ignore[assignment]
    yield
    manifest_scanner.scan_component_manifests = scan  # type: ignore[assignment]


# ── order: the long tests first ──────────────────────────────────────────────────────────────────────────────
# xdist (``-n 2 --dist loadgroup``) hands the tests out one at a time in collection order, so a long test collected
# last keeps one worker busy while the other has nothing left: the browser tests, then the others marked slow, go
# first, and the short ones fill in at the end so both workers finish together. Within each kind the order stays.
# Handed out one by one, a file's tests alternate between the workers, and a worker tears a module fixture down
# when its next test is another file's: an expensive fixture (a server, a tune) is session-scoped instead.


# ── xdist: the tests that share one expensive setup of their process run on one worker ──────────────────────────
# A setup made once per process (a session fixture, a module-level cache, an import) is paid once by each worker
# that runs one of its tests: on three workers, three servers, three imports of litellm. ``--dist loadgroup`` no
# longer groups by ``xdist_group`` marks under pytest 9.2 (pytest-dev/pytest-xdist#1386: a worker renames the test
# ids, which pytest 9.2 ignores), and the scheduler, in the controlling process, sees only test ids. So the groups
# are named here, by test id prefix, and ``SharedSetupScheduling`` sends each group to one worker as one unit. A
# renamed test leaves its group silently: only the speed changes. What each shares, and what it cost per worker:
SHARED_SETUP: dict[str, tuple[str, ...]] = {
    # ``served_app`` and the shared Chromium: a server's cold start and first replay of the long sample, and a
    # browser context that has not cached Streamlit's scripts yet (15 s of a test's setup at load 5).
    "served_app": ("tests/test_browser.py::", "tests/test_browser_fit.py::", "tests/test_browser_knob_move.py::"),
    "served_logs": ("tests/test_browser_untrusted.py::", "tests/test_browser_reality.py::"),
    # litellm, imported in this process by a live run, a pre-flight check or a route (~5 CPU-s with bytecode; the
    # tests found by logging every ``import_litellm`` call, 2026-12-03). The first request of a process also loads
    # litellm's provider code, inside the first attempt's time: the group keeps the timed attempts of
    # tests/test_briefing_live.py off a cold worker (2.4 s for a 0.5 s timeout at load 8, where 1.5 s is the bound).
    "litellm": (
        "tests/test_app_live.py::", "tests/test_endpoints.py::", "tests/test_live_guards.py::", "tests/test_secrets.py::",
        "tests/test_briefing_live.py::", "tests/test_briefing_calibrate.py::test_calibration_on_cached_live_runs",
        "tests/test_real.py::test_a_live_briefer_can_write_the_new_briefing",
        "tests/test_app.py::test_live_", "tests/test_app.py::test_a_key_typed_in_the_page",
        "tests/test_app.py::test_a_typed_base_is_refused", "tests/test_app.py::test_after_a_live_run",
        "tests/test_app.py::test_allow_page_api_base", "tests/test_app.py::test_an_api_base_typed_in_the_page",
        "tests/test_app.py::test_test_the_models", "tests/test_app.py::test_the_operators_api_base",
        "tests/test_robustness.py::test_a_key_inside_a_successful_answer",
        "tests/test_faults.py::test_cache_", "tests/test_faults.py::test_an_unwritable_cache_keeps_paid_answers",
        "tests/test_faults.py::test_two_concurrent_live_runs",
        "tests/test_probes.py::test_the_judge_grades",  # the judge's mock_response goes through litellm.completion
    ),
    # tests/test_layers.py's import graph: every module of the package parsed (~2-4 CPU-s).
    "import_graph": ("tests/test_layers.py::",),
}


def shared_setup_group(nodeid: str) -> str | None:
    """The SHARED_SETUP group a test id belongs to, None when it shares nothing."""
    return next((group for group, prefixes in SHARED_SETUP.items() if nodeid.startswith(prefixes)), None)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadgroup``: xdist's own scheduler, with SHARED_SETUP's groups as its units, in the order
    the tests were collected (``pytest_collection_modifyitems`` below), not largest group first."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class SharedSetupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return shared_setup_group(nodeid) or super()._split_scope(nodeid)

    config.option.loadscopereorder = False
    return SharedSetupScheduling(config, log)


def _kind(item: pytest.Item) -> int:
    if item.get_closest_marker("browser") is not None:
        return 0
    return 1 if item.get_closest_marker("slow") is not None else 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=_kind)
