"""The command line: ``workbench <command> ...``. Each command is a module of this package.

Bad input (a broken history, invalid YAML, an out-of-range knob) prints one line naming what is
wrong and where, and exits with code 2; nothing the user had is touched. The machine's faults (a full disk)
exit 1; a ValueError no workbench ``raise`` wrote (a bug) prints its traceback and exits 3.
"""

from __future__ import annotations

import argparse
import dis
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

# Each module defines NAME, HELP, add_arguments(parser) and run(args) -> int.
COMMAND_MODULES = (
    "workbench.cli.simulate",
    "workbench.cli.presets",
    "workbench.cli.bundles",
    "workbench.cli.cache",
    "workbench.cli.real",
    "workbench.cli.reality",
    "workbench.cli.calibrate",
    "workbench.cli.sweep",
    "workbench.cli.tune",
    "workbench.cli.probe",
    "workbench.cli.samples",
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone when it names one: a run parses its own arguments only
    (the eleven parsers take ~7 ms to build, 5% of ``workbench reality`` over ../shared/real_sessions)."""
    parser = argparse.ArgumentParser(
        prog="workbench", description="Replay agent conversations against compaction knobs."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    names: tuple[str, ...] = COMMAND_MODULES
    if command is not None and f"workbench.cli.{command}" in COMMAND_MODULES:
        names = (f"workbench.cli.{command}",)
    for name in names:
        module = importlib.import_module(name)
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (2 for bad input)."""
    from workbench.cli.common import one_line

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    try:
        return int(args._run(args))
    except (ValueError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as exc:
        if isinstance(exc, ValueError) and not raised_on_purpose(exc):
            return internal_error(args.command, exc)
        print(f"workbench {args.command}: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except RecursionError:  # a guard missed something nested: still one line, never a traceback
        print(f"workbench {args.command}: error: input nested too deeply to process", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # a live run's guard (LiveRunStopped) in bundles/real: said, not a traceback
        from workbench.briefing.guard import LiveRunStopped

        if not isinstance(exc, LiveRunStopped):
            raise
        print(f"workbench {args.command}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `workbench ... | head`: the reader left; say nothing more
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # the machine, not the input: a full disk, a read-only folder
        print(f"workbench {args.command}: error: {one_line(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


INTERNAL_ERROR_EXIT = 3  # a bug: not the input's fault (2), nor the machine's (1)
_PACKAGE = str(Path(__file__).resolve().parents[1])


def raised_on_purpose(exc: BaseException) -> bool:
    """Whether a ``raise`` statement of the workbench raised ``exc``: a message written for the user (bad input,
    a knob out of range). A ValueError that Python or a library raised (``int(nan)``, a numpy shape) is a bug of
    ours that reached bad input's ``except``: the innermost frame of its traceback tells them apart."""
    tb = exc.__traceback__
    if tb is None:
        return True
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if not code.co_filename.startswith(_PACKAGE):
        return False
    return dis.opname[code.co_code[tb.tb_lasti]] in ("RAISE_VARARGS", "RERAISE")


def internal_error(command: str, exc: BaseException) -> int:
    """A bug reported as one: the traceback, then one line saying so (exit 3, never bad input's 2)."""
    import traceback

    from workbench.cli.common import one_line

    traceback.print_exception(exc, file=sys.stderr)
    print(f"workbench {command}: internal error (a bug, not your input; please report it with the traceback above): "
          f"{type(exc).__name__}: {one_line(str(exc), 300)}", file=sys.stderr)
    return INTERNAL_ERROR_EXIT


if __name__ == "__main__":
    raise SystemExit(main())
