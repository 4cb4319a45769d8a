"""Write pytest's assertion-rewritten bytecode of the test files once, before scripts/test.sh starts its workers.

pytest rewrites the asserts of every test file (``test_*.py``, ``conftest.py``) when it imports it, and caches the
result in ``__pycache__`` unless ``PYTHONDONTWRITEBYTECODE`` is set, as it is on our CI machine: there each of the
three workers rewrote all ~95 files at collection, every run (about half of a worker's collection time). Written
here once, each worker finds the file and reads it back, as pytest does whenever it is there and matches the
source's hash. This uses pytest's own rewrite and file format (``_pytest.assertion.rewrite``, internal): should
they move, this script says so and exits 0, and the workers rewrite as before.

Usage: python scripts/pytest_bytecode.py [TEST_DIR]   (default: tests/)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _test_files(folder: Path) -> list[Path]:
    """The files pytest rewrites under this checkout's settings (``python_files`` is pytest's default here)."""
    return sorted({*folder.glob("test_*.py"), *folder.glob("*_test.py"), *folder.glob("conftest.py")})


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else ROOT / "tests"
    try:
        from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, _rewrite_test, _write_pyc_fp, get_cache_dir
    except ImportError as exc:
        print(f"[pytest_bytecode] skipped: pytest's rewrite module has moved ({exc})")
        return 0
    written = 0
    for path in _test_files(folder):
        cache = get_cache_dir(path)
        pyc = cache / (path.name[:-3] + PYC_TAIL)
        try:
            if _read_pyc(path, pyc) is not None:
                continue  # already there and current
            # config=None: the rewrite then reads no ini option; the one that changes the code,
            # enable_assertion_pass_hook, is off here (pyproject.toml), as it is by default.
            source_hash, code = _rewrite_test(path, None)  # type: ignore[arg-type]
            cache.mkdir(parents=True, exist_ok=True)
            part = pyc.with_name(f"{pyc.name}.{os.getpid()}")
            with open(part, "wb") as out:
                _write_pyc_fp(out, source_hash, code)
            os.replace(part, pyc)  # atomic, as pytest writes it: a reader sees the whole file or none
        except (OSError, SyntaxError, TypeError, AttributeError) as exc:
            print(f"[pytest_bytecode] {path.name}: not written ({exc}); pytest will rewrite it")
            continue
        if _read_pyc(path, pyc) is None:  # pytest would not read it back: do not leave it there
            pyc.unlink(missing_ok=True)
            print(f"[pytest_bytecode] {path.name}: pytest does not read what was written; removed")
            continue
        written += 1
    print(f"[pytest_bytecode] {written} rewritten test files written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
