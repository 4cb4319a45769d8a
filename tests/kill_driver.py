"""Run ``workbench`` with a ``kill -9`` of itself injected at one point of a writer (tests/test_faults.py).

    python tests/kill_driver.py POINT -- workbench-args...

POINT: ``write-half`` (the process dies after writing half of a file's bytes: a torn write),
``before-rename`` (a finished temporary file, killed before it is renamed into place),
``nth-file-N`` (dies while writing the N-th file of a folder, e.g. the bundles),
``after-swap`` (a new folder exchanged with the old one, killed before the old one is removed),
``between-renames`` (where no atomic exchange exists: the old folder moved aside, the new one not yet in place).
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
    import workbench.io.files as files

    if point == "write-half":
        import workbench.io.append as append

        real = files.write_all

        def half(fd: int, data: bytes) -> None:
            real(fd, data[: max(1, len(data) // 2)])
            die()

        files.write_all = half
        append.write_all = half
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
    elif point == "after-swap":
        real_exchange = files._exchange

        def swapped(a: Path, b: Path) -> bool:
            if not real_exchange(a, b):
                raise SystemExit("after-swap: this system has no atomic exchange")
            die()
            return True

        files._exchange = swapped
    elif point == "between-renames":
        real_move = os.replace
        aside = {"done": False}

        def second_dies(src: object, dst: object) -> None:
            if aside["done"] and os.fspath(src).endswith(".tmpdir"):  # type: ignore[call-overload]
                die()
            real_move(src, dst)  # type: ignore[arg-type]
            aside["done"] = aside["done"] or os.fspath(dst).endswith(".old")  # type: ignore[call-overload]

        files._exchange = lambda a, b: False  # type: ignore[assignment]
        files.os.replace = second_dies  # type: ignore[assignment]
    else:
        raise SystemExit(f"unknown kill point {point!r}")


if __name__ == "__main__":
    point, sep, *args = sys.argv[1:]
    assert sep == "--"
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    arm(point)
    from workbench.cli import main

    raise SystemExit(main(args))
