"""The part of the hidden prefix Claude Code's package sends, read from each version (analysis.real_logs.agent_prefix)."""

from __future__ import annotations

from workbench.analysis.real_logs.agent_prefix import CLAUDE_CODE_PACKAGE_PREFIX, package_prefix


def test_every_version_of_the_logs_has_its_package_row_and_a_later_one_takes_the_nearest_below():
    assert package_prefix("claude_code", "2.1.45") == 2651 + 13848
    assert package_prefix("claude_code", "2.1.44") == package_prefix("claude_code", "2.1.42")
    assert package_prefix("claude_code", "2.0.50") is None  # older than every version read
    assert package_prefix("codex", "0.142.0") is None and package_prefix("claude_code", None) is None
    totals = [s + t for s, t, _ in CLAUDE_CODE_PACKAGE_PREFIX.values()]
    # the package sends 15,497-16,510 tokens in every version: the spread of the logs' prefixes is the users'
    assert (min(totals), max(totals)) == (15_497, 16_510)

