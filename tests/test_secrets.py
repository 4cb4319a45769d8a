"""API keys never reach a stored, shown or exported message, whatever their shape."""

from __future__ import annotations

import pytest

from workbench.briefing.live import LiveBriefer, scrub_secrets


@pytest.mark.parametrize(
    ("text", "leaked"),
    [
        ("401: bad key sk-proj-abcdefgh12345678", "sk-proj-abcdefgh12345678"),
        ("Gemini said AIzaSyA1234567890abcdefghijklmnop is invalid", "AIzaSyA1234567890abcdefghijklmnop"),
        ("headers: Authorization: Bearer eyJhbGciOi.JIUzI1NiJ9.abc", "eyJhbGciOi.JIUzI1NiJ9.abc"),
        ("calling https://alice:hunter2pass@proxy.local/v1", "alice:hunter2pass"),
    ],
    ids=["openai-shape", "google-shape", "bearer", "url-userinfo"],
)
def test_key_shapes_are_scrubbed(text, leaked):
    assert leaked not in scrub_secrets(text)


def test_a_shapeless_key_from_the_environment_is_scrubbed(monkeypatch):
    monkeypatch.setenv("MYPROVIDER_API_KEY", "plainwordsecretvalue42")
    assert "plainwordsecretvalue42" not in scrub_secrets("error: key plainwordsecretvalue42 rejected")


def test_the_given_key_is_scrubbed_even_without_a_known_shape():
    assert "zzzzzzzzzz" not in scrub_secrets("bad zzzzzzzzzz", "zzzzzzzzzz")


def test_repr_of_a_live_briefer_holds_no_credentials():
    briefer = LiveBriefer(["openai/m"], api_key="sk-secret-abcdefgh123", api_base="https://u:pw@host.example/v1")
    text = repr(briefer)
    assert "sk-secret" not in text and "u:pw" not in text and "host.example" in text
