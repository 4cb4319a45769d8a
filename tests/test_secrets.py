"""API keys never reach a stored, shown or exported message, whatever their shape."""

from __future__ import annotations

import base64
import json

import pytest
from scripted import uniform_history

from workbench.briefing.live import LiveBriefer
from workbench.briefing.scrub import scrub_known, scrub_secrets, without_credentials
from workbench.cli import main
from workbench.history.writers import write_canonical_jsonl


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


# -- credentials inside a URL (``--api-base http://user:key@host/v1``) ------------------------------------------

USER, PASSWORD = "alice", "hunter2-url-secret"
PAIR_B64 = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()  # what httpx sends: Authorization: Basic …


def url_forms(user: str = USER, password: str = PASSWORD) -> list[str]:
    """Every way the URL's credentials could be written back: as written, the password alone, the base64."""
    b64 = base64.b64encode(f"{user}:{password}".encode()).decode()
    return [f"{user}:{password}", password, b64, b64.rstrip("=")]


def test_without_credentials_keeps_everything_but_the_user_password_part():
    assert without_credentials("https://alice:pw@host.example:8443/v1?api-version=2") == (
        "https://host.example:8443/v1?api-version=2")
    assert without_credentials("http://token@127.0.0.1/v1") == "http://127.0.0.1/v1"
    assert without_credentials("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert without_credentials(None) is None


@pytest.mark.parametrize("scrub", [scrub_secrets, scrub_known], ids=["errors", "answers"])
def test_a_urls_credentials_are_scrubbed_in_every_form(scrub):
    base = f"http://{USER}:{PASSWORD}@127.0.0.1:9/v1"
    for form in url_forms():
        text = f"the server saw {form} in your request"
        assert form not in scrub(text, None, base)
    decoded = scrub(f"Basic {PAIR_B64}", None, "http://alice:hunter2%2Durl%2Dsecret@127.0.0.1:9/v1")
    assert PAIR_B64 not in decoded  # percent-encoded in the URL, decoded by the client before base64
    # the rest of the URL is no secret: an error naming the endpoint stays readable
    assert "127.0.0.1:9/v1" in scrub("could not reach http://127.0.0.1:9/v1", None, base)


def test_a_token_as_the_user_name_is_the_secret():
    token = "ghp_tokeninusername1234"
    assert token not in scrub_known(f"hello {token}", None, f"https://{token}@proxy.example/v1")


def test_an_unknown_basic_credential_in_an_error_is_scrubbed():
    assert "dXNlcjpwYXNzd29yZA" not in scrub_secrets("401: Authorization: Basic dXNlcjpwYXNzd29yZA==")


def test_credentials_of_a_url_in_the_environment_are_known(monkeypatch):
    monkeypatch.setenv("WORKBENCH_API_BASE", f"http://{USER}:{PASSWORD}@127.0.0.1:9/v1")
    for form in url_forms():
        assert form not in scrub_known(f"echo: {form}")


@pytest.mark.parametrize("model", ["fake-parrot", "fake-echo"], ids=["answer", "error"])
def test_url_credentials_never_reach_the_cache_the_output_or_the_json(fake_provider, tmp_path, capsys, monkeypatch,
                                                                   model):
    """A server that quotes the request's Authorization header (in a good answer, or in a 401): the URL's
    user:password reached it as ``Basic base64(user:password)``, and no form of it is stored or printed."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-0123456789abcdef")  # the client needs one; the URL's wins
    history = tmp_path / "h.jsonl"
    history.write_text(write_canonical_jsonl(uniform_history(40)))
    cache = tmp_path / "cache"
    base = fake_provider.api_base.replace("http://", f"http://{USER}:{PASSWORD}@")
    failures = "0" if model == "fake-parrot" else "2"
    code = main(["simulate", str(history), "--set", "context_window_tokens=32000", "--briefer", "live",
                 "--model", f"openai/{model}", "--api-base", base, "--cache-dir", str(cache), "--json",
                 "--no-timeline", "--max-failures", failures])
    out, err = capsys.readouterr()
    sent = [r["headers"].get("authorization", "") for r in fake_provider.requests]
    assert sent and all(s == f"Basic {PAIR_B64}" for s in sent)  # the server did see (and quote) the credentials
    if model == "fake-parrot":
        assert code == 0, err
        assert all("you called me with Basic ***" in c["briefing_text"] for c in json.loads(out)["compressions"])
    else:  # two 401s quoting the header, then the guard stops the run
        assert code != 0 and "2 compressions failed in a row" in err and "invalid credentials: Basic ***" in err
    stored = b"".join(p.read_bytes() for p in cache.rglob("*") if p.is_file())
    for form in url_forms():
        assert form not in out and form not in err
        assert form.encode() not in stored


def test_the_probe_judge_keeps_no_form_of_the_urls_credentials(fake_provider, tmp_path, monkeypatch):
    """The judge calls through the same endpoint rules: a parroting server's answers are stored scrubbed."""
    from test_probes import SMALL, CannedBriefer, scripted_session

    from workbench.analysis.fact_probes.probe_judge import judge_run
    from workbench.briefing.cache import BriefingCache
    from workbench.replay import simulate

    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-0123456789abcdef")
    history = scripted_session(padding=8)
    run = simulate(history, SMALL, CannedBriefer("[](path:src/auth/login.py) edited"))
    base = fake_provider.api_base.replace("http://", f"http://{USER}:{PASSWORD}@")
    with BriefingCache(tmp_path / "cache") as cache:
        grades = judge_run(run, history, model="openai/fake-parrot", cache=cache, api_base=base, max_compressions=1)
    assert fake_provider.counts["fake-parrot"] > 0
    assert all("Basic ***" in a for a in grades["answer"].to_list())
    stored = b"".join(p.read_bytes() for p in (tmp_path / "cache").rglob("*") if p.is_file())
    shown = str(grades.to_dicts())
    for form in url_forms():
        assert form.encode() not in stored and form not in shown
