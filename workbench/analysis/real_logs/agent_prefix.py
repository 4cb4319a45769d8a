"""The part of a hidden prefix an agent's own package sends: Claude Code's system prompt and tool schemas by version.

What a model call carries before the transcript's first message is the agent's system prompt and tool schemas (the
package's, the same for every user of a version) plus what the user adds (CLAUDE.md and rules files, MCP servers'
tool schemas, skills, the reminders of the first message). The package's part is read, not fitted:
``scripts/claude_code_prefix.py`` runs each published ``@anthropic-ai/claude-code`` version once (``npm pack``,
``node cli.js -p``) against a local stand-in for the Messages API, with no user settings, and counts the
``system`` text and the ``tools`` JSON of its main request in o200k tokens. The rows below are its output for
the versions of ../shared/real_sessions_large and ../shared/real_sessions (Opus 4.5 before 2.1.32, Opus 4.6 from it;
Sonnet 4.5 gives the same counts at 2.1.14, 2.1.17 and 2.1.39; the system prompt holds the working directory and the
date, so another run's count differs by a few tokens: 2,655 and 2,540 in a temporary folder for 2.1.45 and 2.1.7).

What they show: the package's part is 15,497-16,510 tokens in every version from 2.0.76 to 2.1.45 (17 tools from
2.1.1, 18 at 2.0.76); the logs bill it at about that (a call that lost the rest of its cache read 16,496 tokens at
2.1.29 against 16,276 counted, 16,606 at 2.1.39 against 16,337). The first calls of the large set's logs measure
24,168-45,081 tokens of prefix: the other 8,000-29,000 are the user's, which no package holds and no transcript
shows. Moving the fitted prefix by each version's package (the fit measuring it at a reference package, a log
replayed with its own version's) was tried: the estimate alone held out did worse (29/75 within ±5 messages with
the session left out against 31/75, 15/75 against 17/75 with the repository left out), so the fit keeps one prefix
per agent and this table states what part of it the package is (docs/reality.md). Pure data; no I/O.
"""

from __future__ import annotations

from workbench.history.session_log import parse_version

# version -> (system prompt tokens, tool schema tokens, tools), o200k_base, ``scripts/claude_code_prefix.py``.
CLAUDE_CODE_PACKAGE_PREFIX: dict[str, tuple[int, int, int]] = {
    "2.0.76": (2648, 13283, 18),
    "2.1.1": (2536, 12961, 17),
    "2.1.2": (2536, 13014, 17),
    "2.1.5": (2536, 13339, 17),
    "2.1.7": (2536, 13974, 17),
    "2.1.12": (2580, 13906, 17),
    "2.1.14": (2580, 13490, 17),
    "2.1.17": (2606, 13867, 17),
    "2.1.19": (2606, 13766, 17),
    "2.1.20": (2578, 13739, 17),
    "2.1.25": (2608, 13669, 17),
    "2.1.29": (2607, 13669, 17),
    "2.1.31": (2609, 13854, 17),
    "2.1.32": (2602, 13854, 17),
    "2.1.33": (2600, 13751, 17),
    "2.1.36": (2655, 13751, 17),
    "2.1.37": (2654, 13751, 17),
    "2.1.38": (2654, 13750, 17),
    "2.1.39": (2654, 13683, 17),
    "2.1.42": (2651, 13678, 17),
    "2.1.45": (2651, 13848, 17),
}


def package_prefix(agent: str | None, version: str | None) -> int | None:
    """The system prompt and tool schemas (o200k tokens) the agent's package sends at ``version``: the row of the
    nearest version read at or below it, None for another agent, an unknown version or one older than every row."""
    if agent != "claude_code" or not version:
        return None
    v = parse_version(version)
    rows = sorted((parse_version(k), sum(row[:2])) for k, row in CLAUDE_CODE_PACKAGE_PREFIX.items())
    found = [tokens for key, tokens in rows if key <= v]
    return found[-1] if found else None

