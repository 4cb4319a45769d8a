"""The browser tests wait for the chromium install scripts/test.sh runs in the background, so the rest of the suite
starts without it: they read its exit status from the file WORKBENCH_CHROMIUM_INSTALL names, once it is there."""

from __future__ import annotations

import threading
import time

from test_browser import _wait_for_chromium_install


def test_without_a_background_install_nothing_is_waited_for(monkeypatch):
    monkeypatch.delenv("WORKBENCH_CHROMIUM_INSTALL", raising=False)
    assert _wait_for_chromium_install(limit_s=0.0) == ""


def test_the_wait_ends_when_the_install_writes_its_status(monkeypatch, tmp_path):
    status = tmp_path / "status"
    monkeypatch.setenv("WORKBENCH_CHROMIUM_INSTALL", str(status))
    def finish() -> None:  # as scripts/test.sh writes it: the whole status, then renamed into place
        part = status.with_name("status.part")
        part.write_text("0\n")
        part.rename(status)

    timer = threading.Timer(1.0, finish)
    started = time.monotonic()
    timer.start()
    try:
        assert _wait_for_chromium_install(limit_s=60.0) == ""
    finally:
        timer.cancel()
    assert time.monotonic() - started >= 1.0  # it waited for the file, not less


def test_a_failed_or_unfinished_install_is_named_in_the_reason(monkeypatch, tmp_path):
    status = tmp_path / "status"
    monkeypatch.setenv("WORKBENCH_CHROMIUM_INSTALL", str(status))
    assert _wait_for_chromium_install(limit_s=0.0) == " (scripts/test.sh's install had not ended after 0 s)"
    status.write_text("100\n")
    assert _wait_for_chromium_install(limit_s=0.0) == " (scripts/test.sh's apt-get install exited 100)"
