#!/usr/bin/env bash
# Install everything the test suite needs into .venv (and Debian's chromium for the browser tests), type-check
# the package, then run the suite on two workers.
# Usage: bash scripts/test.sh [--quick] [pytest args...]
#   --quick   the inner loop: the tests not marked slow or browser (docs/design.md, "Tests"), and no chromium
#             install; the whole suite is what CI runs.
# The install steps run only when needed: pip when .venv is new or pyproject.toml changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=0
if [ "${1:-}" = "--quick" ]; then
  QUICK=1
  shift
fi
# Debian's chromium (the browser tests) installs in the background while pip, mypy and the other tests run: on a
# new CI machine it is most of a minute of downloads (54 s here on 2026-12-03, longer than the venv's install). The
# browser tests wait for it themselves (tests/test_browser.py, `_chromium`): the install writes its exit status to
# WORKBENCH_CHROMIUM_INSTALL when it ends.
APT_PID=
if [ "$QUICK" = 0 ] && ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] \
    && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser tests (in the background)..."
  APT_STATUS_DIR=$(mktemp -d)
  export WORKBENCH_CHROMIUM_INSTALL="$APT_STATUS_DIR/status"
  (set +e
   apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1
   echo $? > "$WORKBENCH_CHROMIUM_INSTALL.part" && mv "$WORKBENCH_CHROMIUM_INSTALL.part" "$WORKBENCH_CHROMIUM_INSTALL") &
  APT_PID=$!
fi
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# Bytecode is written by the imports that need it, into .venv and the package's __pycache__ (both ignored by git),
# even where PYTHONDONTWRITEBYTECODE is set, as on our CI machine: compiling all of site-packages at install took
# 64.6 + 5.8 CPU-s for 14,964 files (2026-12-03, load ~6), where the suite's processes import ~4,400 of them
# (60 of 199 MB). Without any bytecode every process would compile every import again (`import litellm`: 9.3
# CPU-s instead of 4.5), so it must be written once, by whoever imports first.
unset PYTHONDONTWRITEBYTECODE
# pyproject.toml's hash as of the last successful install; a fresh clone has none, so it installs.
STAMP=.venv/.workbench-test-install
WANT=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  # uv (from PyPI, into the venv) downloads in parallel: the same versions as pip, in about two thirds of pip's CPU
  # time on a fresh venv (docs/design.md, "Tests"). uv reads no pip.conf: where it cannot install, pip does it as
  # before.
  if ! { .venv/bin/python -m pip install --quiet uv \
         && .venv/bin/python -m uv pip install --quiet --python .venv/bin/python -e '.[test]'; }; then
    echo "[test.sh] uv could not install; pip instead"
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e '.[test]'
  fi
  echo "$WANT" > "$STAMP"
fi
# The package's bytecode, once, before the three workers import it at collection: each would otherwise compile the
# same 188 modules at the same time.
.venv/bin/python -m compileall -q workbench
export LITELLM_LOCAL_MODEL_COST_MAP=True
echo "[test.sh] installed in ${SECONDS} s"
# Types beside the tests, so CI keeps `mypy workbench` clean (settings in pyproject.toml; ~1 s warm, ~40 s cold):
# mypy runs in the background while pytest collects and runs, and its verdict is waited for at the end.
MYPY_LOG=$(mktemp)
.venv/bin/python -m mypy workbench >"$MYPY_LOG" 2>&1 &
MYPY_PID=$!
# pytest's assert-rewritten test files, written once here beside mypy instead of by each worker at collection
# (scripts/pytest_bytecode.py says why): a worker's collection took 8.9 s of CPU instead of 16.3 s, for 6.3 s once here
# (measured at load 11-14 on 2 cores, 2026-12-02).
.venv/bin/python scripts/pytest_bytecode.py
# Three workers on two cores: a fifth of the suite's time is spent waiting on a browser, a kernel or a served
# app (pytest used 1.6 cores on -n 2), and a third worker fills it. WORKBENCH_TEST_WORKERS overrides.
WORKERS=${WORKBENCH_TEST_WORKERS:-3}
set +e
if [ "$QUICK" = 1 ]; then
  .venv/bin/python -m pytest -n "$WORKERS" --dist loadgroup -m "not slow and not browser and not live and not long" "$@"
else
  .venv/bin/python -m pytest -n "$WORKERS" --dist loadgroup "$@"
fi
TESTS=$?
wait "$MYPY_PID"
TYPES=$?
set -e
if [ -n "$APT_PID" ]; then
  wait "$APT_PID" || true
  if [ "$(cat "$WORKBENCH_CHROMIUM_INSTALL" 2>/dev/null)" != "0" ]; then
    echo "warning: could not install chromium; the browser tests said why"
  fi
  rm -rf "$APT_STATUS_DIR"
fi
cat "$MYPY_LOG"
rm -f "$MYPY_LOG"
echo "[test.sh] done in ${SECONDS} s (pytest exit $TESTS, mypy exit $TYPES)"
if [ "$TESTS" != 0 ]; then exit "$TESTS"; fi
exit "$TYPES"
