"""The bounded fuzz campaign (issues 12 and 19): every case exits 0 with a valid result or 2 with one line that
names the input, never a traceback, never a hang. Short budgets here (CI); ``-m long`` runs the long
ones; ``python scripts/fuzz_report.py`` runs every family and rewrites docs/reliability.md."""

from __future__ import annotations

import pytest
from conftest import need_shared, shared_dir
from fuzzing import (
    BUDGETS,
    Worker,
    hypothesis_family,
    knob_value_cases,
    knob_yaml_cases,
    mutation_cases,
    provider_cases,
    run_family,
)
from fuzzing_logs import FAMILY_SEEDS, MUTATORS, agent_log_cases, full_disk_cases
from test_faults import tmpfs

FAMILIES = ("samples", "shared", "histories", "knob-values", "knob-yaml", "provider", *MUTATORS, "full-disk")


@pytest.fixture(scope="session")
def _fuzz_worker(tmp_path_factory):
    """One worker process for every family an xdist worker runs: starting one and importing the CLI into it costs
    ~3 s, once per family before. Each case sets its own cwd and arguments, and ``Worker.run`` replaces a hung or
    dead process and recycles it every ``RECYCLE_EVERY`` cases, as within one family."""
    w = Worker(env={"WORKBENCH_CACHE_DIR": str(tmp_path_factory.mktemp("fuzz-briefing-cache"))})
    yield w
    w.close()


@pytest.fixture
def worker(_fuzz_worker):
    return _fuzz_worker


def _run(family: str, budget: str, tmp_path, worker, fake=None):  # noqa: ANN001
    n = BUDGETS[budget][family]
    if family == "samples":
        return run_family(family, mutation_cases(tmp_path, n, shared=False, seed=1), worker)
    if family == "shared":
        need_shared(shared_dir() / "real_histories")
        return run_family(family, mutation_cases(tmp_path, n, shared=True, seed=2), worker)
    if family == "histories":
        return hypothesis_family(tmp_path, n, worker, seed=3)
    if family == "knob-values":
        return run_family(family, knob_value_cases(tmp_path, n, seed=4), worker)
    if family == "knob-yaml":
        return run_family(family, knob_yaml_cases(tmp_path, n, seed=5), worker)
    if family in MUTATORS:
        return run_family(family, agent_log_cases(family, tmp_path, n, seed=FAMILY_SEEDS[family]), worker)
    if family == "full-disk":
        with tmpfs(tmp_path / "disk", "size=1m") as mounted:
            if not mounted:
                pytest.skip("cannot mount a 1 MiB tmpfs here (needs root): no full disk to write to")
            return run_family(family, full_disk_cases(tmp_path / "disk", tmp_path, n, seed=12), worker)
    return run_family(family, provider_cases(tmp_path, fake.api_base), worker)


def _assert_clean(tally) -> None:  # noqa: ANN001
    assert tally.tried > 0
    assert (tally.crash, tally.hang) == (0, 0), "\n\n".join(tally.findings)


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_fuzz_short(family, tmp_path, worker, fake_provider):
    _assert_clean(_run(family, "short", tmp_path, worker, fake_provider))


@pytest.mark.long
@pytest.mark.parametrize("family", FAMILIES)
def test_fuzz_long(family, tmp_path, worker, fake_provider):
    _assert_clean(_run(family, "long", tmp_path, worker, fake_provider))
