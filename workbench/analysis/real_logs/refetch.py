"""Re-fetches after a compaction: files an agent reads again that it had already read before its context was folded.

Seed 003 ("Context Compression Strategies", /work/shared/seeds/003_*.txt) names re-fetching frequency as a
compression quality signal: what a briefing lost, the agent pays for again by re-reading it. Measured here on
real logs, so "read" is defined across agents, conservatively (a path is counted only when the call surely
brought that file's content into the context):

- **file tools**: a call whose name is a read tool (Claude Code ``Read``, ``read_file``, ``view``, ``open_file``,
  ...; an editor tool with ``command: view``), path from its path keys;
- **shell reads**: a shell call (input ``command``/``cmd``: Claude Code ``Bash``, Codex ``exec_command``,
  ``local_shell``) whose script runs ``cat``, ``nl``, ``bat``, ``less``, ``more``, ``tac``, ``head``, ``tail`` or
  ``sed`` (not in place) on explicit file operands, or reads a file by ``< path``; ``cd DIR`` and the call's
  working directory resolve relative paths; heredoc bodies, variables, globs and process substitutions are
  not read;
- **searches**: the ``Grep`` tool, ``rg``/``grep``/``ag``/``ack`` count only for operands that name one file
  (an extension in the last segment, no glob): a search of a directory, ``Glob`` and ``rg --files`` list
  names, not content.
A read counts only when it returned content (no tool error, no non-zero exit code in a Codex output). The same
file is the same normalised absolute path, whatever range was read. Tokens are the result's, by the per-message
tokens the caller passes (the workbench's estimate), shared equally among the files one call read. Pure.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.history.model import Message

READ_TOOLS = frozenset({"read", "read_file", "readfile", "view", "view_file", "open_file", "notebookread", "fs_read",
                        "read_many_files", "cat"})
EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "text_editor", "editor"})
SEARCH_TOOLS = frozenset({"grep", "search", "ripgrep", "grep_search", "search_file_content"})
PATH_KEYS = ("file_path", "path", "notebook_path", "filePath", "target_file", "absolute_path", "file", "filename")
_DIR_KEYS = ("workdir", "cwd", "working_directory", "directory")
_READ_PROGRAMS = frozenset({"cat", "nl", "bat", "batcat", "less", "more", "tac", "head", "tail", "sed"})
_SEARCH_PROGRAMS = frozenset({"rg", "grep", "egrep", "fgrep", "ag", "ack"})
_PREFIXES = frozenset({"do", "then", "else", "elif", "if", "while", "until", "{", "!", "time", "sudo", "command",
                       "exec", "nice", "nohup"})
# Options that take a value as the next token, per program (GNU coreutils, sed, grep; ripgrep 14 --help).
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "head": frozenset({"-n", "-c", "--lines", "--bytes"}),
    "tail": frozenset({"-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid"}),
    "sed": frozenset({"-e", "-f", "-l", "--expression", "--file", "--line-length"}),
    "nl": frozenset({"-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"}),
    "bat": frozenset({"-r", "--line-range", "-l", "--language", "-H", "--highlight-line", "--style", "--theme",
                      "-m", "--map-syntax", "--tabs", "--wrap", "--terminal-width"}),
    "rg": frozenset({"-e", "-f", "-g", "--glob", "--iglob", "-t", "--type", "-T", "--type-not", "-A", "-B", "-C",
                     "-m", "--max-count", "-M", "--max-columns", "-j", "--threads", "-r", "--replace", "--sort",
                     "--sortr", "--type-add", "-E", "--encoding", "-d", "--max-depth", "--max-filesize", "--pre",
                     "--pre-glob", "--context-separator", "--path-separator", "--engine", "--colors"}),
    "grep": frozenset({"-e", "-f", "-A", "-B", "-C", "-m", "--max-count", "--include", "--exclude", "--exclude-dir",
                       "--label", "-d", "--directories", "-D", "--devices", "--context"}),
}
_VALUE_OPTIONS["batcat"] = _VALUE_OPTIONS["bat"]
_VALUE_OPTIONS["egrep"] = _VALUE_OPTIONS["fgrep"] = _VALUE_OPTIONS["grep"]
_NAMES_ONLY = frozenset({"--files", "-l", "--files-with-matches", "-L", "--files-without-match", "-c", "--count",
                         "--count-matches", "-q", "--quiet"})
_EXIT_RE = re.compile(r"(?:process exited with code|exit code:?)\s*(-?\d+)", re.IGNORECASE)
_FILE_NAME_RE = re.compile(r"[^/]*[^/.]\.[A-Za-z0-9_+\-]{1,12}")
_OPERATOR_CHARS = frozenset("();<>|&")


@dataclass(frozen=True, kw_only=True)
class FileRead:
    """One file a call brought into the context."""

    index: int  # the message holding the call
    path: str  # normalised (absolute when a working directory is known)
    via: str  # read (a file tool) | shell | search
    tool: str
    tokens: int  # the result's tokens, this file's share
    ok: bool  # the call returned content


@dataclass(frozen=True, kw_only=True)
class Refetch:
    """The first read after a compaction of a file the agent had read before it."""

    path: str
    index: int  # the re-reading call's message
    first_read: int  # the message of the earliest read before the compaction
    tokens: int
    via: str
    restored: bool = False  # the agent had already put this file back into the context itself (Claude Code restore)


def normalise(path: str, cwd: str | None) -> str:
    """One spelling per file: relative paths joined to ``cwd``, ``.``/``..`` folded."""
    p = path.strip()
    if not p.startswith(("/", "~")) and cwd:
        p = posixpath.join(cwd, p)
    return posixpath.normpath(p) if p else p


def _plain(token: str) -> bool:
    """A literal operand: no variable, glob, substitution, URL or stdin dash."""
    return bool(token) and token != "-" and not any(c in token for c in "$`*?[]{}") and "://" not in token \
        and not token.startswith("/dev/")


def _file_like(token: str) -> bool:
    return _plain(token) and _FILE_NAME_RE.fullmatch(token.rstrip("/").rsplit("/", 1)[-1]) is not None \
        and not token.endswith("/")


def _operands(prog: str, args: list[str]) -> tuple[list[str], set[str]]:
    """(operands, options) of one simple command; a value option's value is neither."""
    values = _VALUE_OPTIONS.get(prog, frozenset())
    operands: list[str] = []
    options: set[str] = set()
    skip = False
    ended = False
    for tok in args:
        if skip:
            skip = False
            continue
        if not ended and tok == "--":
            ended = True
        elif not ended and tok.startswith("-") and tok != "-":
            name = tok.split("=", 1)[0]
            options.add(name)
            if name in values and "=" not in tok:
                skip = True
                if name in ("-e", "--expression", "-f", "--file", "--regexp"):
                    options.add("+script")
        else:
            operands.append(tok)
    return operands, options


def _command_reads(tokens: list[str], cwd: str | None) -> tuple[list[tuple[str, str]], str | None]:
    """(path, via) pairs one simple command reads, and the working directory after it (``cd``)."""
    while tokens and (tokens[0] in _PREFIXES or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", tokens[0])):
        tokens = tokens[1:]
    if not tokens:
        return [], cwd
    prog = tokens[0].rsplit("/", 1)[-1]
    if prog == "cd":
        target = tokens[1] if len(tokens) > 1 else ""
        return [], normalise(target, cwd) if _plain(target) and not target.startswith("~") else None
    args: list[str] = []
    out: list[tuple[str, str]] = []
    i = 1
    while i < len(tokens):  # redirections: `< f` reads f; `> f`, `2>&1` and fds are not operands
        tok = tokens[i]
        if tok and set(tok) <= _OPERATOR_CHARS:
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if tok == "<" and _plain(target):
                out.append((normalise(target, cwd), "shell"))
            i += 2
            continue
        if not (tok.isdigit() and i + 1 < len(tokens) and set(tokens[i + 1]) <= _OPERATOR_CHARS):
            args.append(tok)
        i += 1
    operands, options = _operands(prog, args)
    if prog in _READ_PROGRAMS:
        if prog == "sed":
            if any(o in ("--in-place",) or (o.startswith("-i") or (not o.startswith("--") and "i" in o[1:]))
                   for o in options):
                return out, cwd  # edits the file in place: not a read
            if "+script" not in options:
                operands = operands[1:]
        out += [(normalise(t, cwd), "shell") for t in operands if _plain(t) and not t.isdigit()]
    elif prog in _SEARCH_PROGRAMS and not options & _NAMES_ONLY:
        if "+script" not in options:
            operands = operands[1:]
        out += [(normalise(t, cwd), "search") for t in operands if _file_like(t)]
    return out, cwd


def shell_reads(script: str, cwd: str | None = None) -> list[tuple[str, str]]:
    """The files a shell script reads, in order, as (normalised path, "shell" | "search")."""
    out: list[tuple[str, str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        heredoc = "<<" in line
        head = line.split("<<", 1)[0] if heredoc else line
        lexer = shlex.shlex(head, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            tokens = list(lexer)
        except ValueError:  # unbalanced quotes: skip the line rather than guess
            tokens = []
        command: list[str] = []
        for tok in [*tokens, ";"]:
            if tok and set(tok) <= _OPERATOR_CHARS and "<" not in tok and ">" not in tok:
                found, cwd = _command_reads(command, cwd)
                out += found
                command = []
            else:
                command.append(tok)
        if heredoc:
            break  # the rest is the heredoc's body (or after it): not commands we can tell apart
    return out


def _script(inp: dict[str, Any]) -> str | None:
    for key in ("command", "cmd"):
        value = inp.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            if len(value) >= 3 and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and value[1] in ("-c", "-lc"):
                return value[2]
            return shlex.join(value)
    return None


def call_reads(name: str, inp: Any, cwd: str | None) -> list[tuple[str, str]]:
    """(path, via) for the files one tool call reads (see the module docstring for what counts)."""
    if not isinstance(inp, dict):
        return []
    if "action" in inp and isinstance(inp["action"], dict):  # Codex local_shell: {"action": {"command": [...]}}
        inp = inp["action"]
    n = name.lower()
    workdir = next((inp[k] for k in _DIR_KEYS if isinstance(inp.get(k), str) and inp[k]), None)
    here = normalise(workdir, cwd) if workdir else cwd
    paths = [inp[k] for k in PATH_KEYS if isinstance(inp.get(k), str) and inp[k].strip()][:1]
    if isinstance(inp.get("paths"), list):
        paths += [p for p in inp["paths"] if isinstance(p, str) and p.strip()]
    if n in READ_TOOLS or (n in EDITOR_TOOLS and inp.get("command") == "view"):
        return [(normalise(p, here), "read") for p in paths if _plain(p)]
    if n in SEARCH_TOOLS:
        return [(normalise(p, here), "search") for p in paths if _file_like(p)]
    script = _script(inp)
    return shell_reads(script, here) if script is not None else []


def _failed(part: Any) -> bool:
    if part.state == "output-error" or part.get("isError") is True:
        return True
    output = part.output
    text = output if isinstance(output, str) else None
    if isinstance(output, dict) and isinstance(output.get("output"), str):
        text = output["output"]
        if isinstance(output.get("exit_code"), int) and output["exit_code"] != 0:
            return True
    if text is not None:
        m = _EXIT_RE.search(text[:2000])
        return m is not None and int(m.group(1)) != 0
    return False


def file_reads(messages: Sequence[Message], message_tokens: Sequence[int] | np.ndarray, *,
               cwd: str | None = None) -> tuple[FileRead, ...]:
    """Every file read of a transcript, in order; ``message_tokens`` gives each message's tokens."""
    results: dict[str, tuple[int, Any]] = {}
    for j, msg in enumerate(messages):
        for part in msg.parts or ():
            if part.kind == "tool-result" and part.tool_call_id:
                results[part.tool_call_id] = (j, part)
    out: list[FileRead] = []
    for j, msg in enumerate(messages):
        for part in msg.parts or ():
            if part.kind != "tool":
                continue
            reads = list(dict.fromkeys(call_reads(part.tool_name or "", part.input, cwd)))
            if not reads:
                continue
            found = results.get(part.tool_call_id or "")
            if found is not None:
                k, result = found
                shares = sum(1 for p in messages[k].parts or () if p.kind == "tool-result") or 1
                tokens, ok = int(message_tokens[k]) // shares, not _failed(result) and not _failed(part)
            else:  # the result sits in the call (AI SDK shape) or was never logged (then nothing came back)
                inline = isinstance(part.data, dict) and "output" in part.data
                tokens, ok = (int(message_tokens[j]) if inline else 0), inline and not _failed(part)
            each = tokens // len(reads)
            out += [FileRead(index=j, path=p, via=via, tool=part.tool_name or "", tokens=each, ok=ok)
                    for p, via in reads]
    return tuple(out)


def refetches(reads: Iterable[FileRead], compaction: int, until: int, *,
              restored: Iterable[str] = ()) -> tuple[Refetch, ...]:
    """Files first re-read in [compaction, until) that a successful read before ``compaction`` had brought in.

    One per file: the first read after the compaction is the one the compaction caused; later ones would be
    re-reads of what the new context already holds.
    """
    reads = list(reads)
    before: dict[str, int] = {}
    for r in reads:
        if r.ok and r.index < compaction and r.path not in before:
            before[r.path] = r.index
    back = {normalise(p, None) for p in restored}
    out: list[Refetch] = []
    seen: set[str] = set()
    for r in reads:
        if r.ok and compaction <= r.index < until and r.path in before and r.path not in seen:
            seen.add(r.path)
            out.append(Refetch(path=r.path, index=r.index, first_read=before[r.path], tokens=r.tokens, via=r.via,
                               restored=r.path in back))
    return tuple(out)
