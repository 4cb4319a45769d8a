#!/usr/bin/env bash
# Install everything the test suite needs into .venv (and Debian's chromium for the browser test), type-check
# the package, then run the suite.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# The package's bytecode, once: pip compiles what it installs but not an editable install, and where
# PYTHONDONTWRITEBYTECODE is set (as on our CI machine) no import writes it, so every process the suite starts
# (AppTest, the CLI, `streamlit run`) would compile ~110 modules again (~0.2 s each; stale files are ignored).
.venv/bin/python -m compileall -q workbench
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser test..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; the browser test will report why"
fi
export LITELLM_LOCAL_MODEL_COST_MAP=True
# Types before tests, so CI keeps `mypy workbench` clean (settings in pyproject.toml; ~1 s warm, ~30 s cold).
.venv/bin/python -m mypy workbench
exec .venv/bin/python -m pytest -n 2 --dist loadgroup "$@"
