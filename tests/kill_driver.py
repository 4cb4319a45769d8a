"""Run ``workbench`` with a ``kill -9`` of itself injected at one point of a writer (tests/test_faults.py).

    python tests/kill_driver.py POINT -- workbench-args...

POINT: ``write-half`` (the process dies after writing half of a file's bytes: a torn write),
``before-rename`` (a finished temporary file, killed before it is renamed into place),
``nth-file-N`` (dies while writing the N-th file of a folder, e.g. the bundles).
SIGKILL cannot be caught: no ``finally`` runs, exactly like ``kill -9`` from outside.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def arm(point: str) -> None:
    import workbench.history.files as files

    if point == "write-half":
        real = files._write_all

        def half(fd: int, data: bytes) -> None:
            real(fd, data[: max(1, len(data) // 2)])
            die()

        files._write_all = half
    elif point == "before-rename":
        from workbench.counting.registry import default_cache_dir

        real_replace = os.replace
        cache = default_cache_dir().resolve()

        def boom(src: object, dst: object) -> None:
            if Path(os.fspath(dst)).resolve().is_relative_to(cache):  # type: ignore[arg-type]
                real_replace(src, dst)  # type: ignore[arg-type]  # the price registry's cache, not a writer tested
                return
            die()

        files.os.replace = boom  # type: ignore[assignment]
    elif point.startswith("nth-file-"):
        limit = int(point.rsplit("-", 1)[1])
        real_bytes = Path.write_bytes
        count = {"n": 0}

        def counted(self: Path, data: bytes) -> int:
            count["n"] += 1
            if count["n"] >= limit:
                self.open("wb").write(data[: len(data) // 2])
                die()
            return real_bytes(self, data)

        Path.write_bytes = counted  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown kill point {point!r}")


if __name__ == "__main__":
    point, sep, *args = sys.argv[1:]
    assert sep == "--"
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    arm(point)
    from workbench.cli import main

    raise SystemExit(main(args))
