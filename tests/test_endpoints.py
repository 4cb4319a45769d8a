"""Where a key from the environment may be sent (``workbench.briefing.endpoints``): the rule, and the wire."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
from conftest import REPO

from workbench.briefing.endpoints import (
    KEY_ONLY_PROVIDERS,
    Operator,
    operator_settings,
    page_route,
    providers_of,
)

FAKE = "http://127.0.0.1:9/v1"
OPENAI = {"openai/m": "openai"}


def test_operator_settings_come_from_the_command_line_then_the_environment():
    assert operator_settings([], {}) == Operator()
    assert operator_settings(["--histories", "d", "--api-base", FAKE], {}) == Operator(api_base=FAKE)
    assert operator_settings([f"--api-base={FAKE}", "--allow-page-api-base"], {}) == Operator(
        api_base=FAKE, allow_page_api_base=True)
    env = {"WORKBENCH_API_BASE": FAKE, "WORKBENCH_ALLOW_PAGE_API_BASE": "1"}
    assert operator_settings([], env) == Operator(api_base=FAKE, allow_page_api_base=True)
    assert operator_settings([], {"WORKBENCH_ALLOW_PAGE_API_BASE": "0"}).allow_page_api_base is False


def test_the_page_shows_the_operators_base_without_its_credentials():
    assert Operator(api_base="http://u:pw@127.0.0.1:9/v1").shown_base == FAKE


def test_no_typed_base_is_the_providers_own_endpoint_with_the_environments_key():
    assert page_route(Operator(), page_base="", page_key=None, providers=OPENAI) == page_route(
        Operator(), page_base=None, page_key=None, providers=OPENAI)
    route = page_route(Operator(), page_base=" ", page_key=None, providers=OPENAI)
    assert (route.api_base, route.api_key, route.refused) == (None, None, "")


def test_a_typed_base_without_a_typed_key_is_refused():
    route = page_route(Operator(), page_base="http://evil.example/v1", page_key=None, providers=OPENAI)
    assert "gets only a key typed in this page" in route.refused


def test_a_typed_base_with_a_typed_key_sends_that_key_only():
    route = page_route(Operator(), page_base="http://evil.example/v1", page_key="typed", providers=OPENAI)
    assert (route.api_base, route.api_key, route.refused) == ("http://evil.example/v1", "typed", "")


def test_the_operators_base_typed_back_is_the_operators_with_its_credentials():
    operator = Operator(api_base="http://u:pw@127.0.0.1:9/v1")
    route = page_route(operator, page_base=FAKE + "/", page_key=None, providers=OPENAI)
    assert (route.api_base, route.api_key, route.refused) == ("http://u:pw@127.0.0.1:9/v1", None, "")
    other = page_route(operator, page_base="http://127.0.0.1:10/v1", page_key=None, providers=OPENAI)
    assert other.refused  # another port is another server


def test_allowing_page_bases_lets_them_use_the_environment():
    route = page_route(Operator(allow_page_api_base=True), page_base="http://x/v1", page_key=None, providers=OPENAI)
    assert (route.api_base, route.api_key, route.refused) == ("http://x/v1", None, "")


def test_a_provider_outside_the_key_only_list_is_refused_a_typed_base():
    route = page_route(Operator(), page_base="http://x/v1", page_key="typed",
                       providers={"bedrock/m": "bedrock", "openai/m": "openai"})
    assert route.refused.startswith("bedrock/m (bedrock): this provider may sign requests")
    unknown = page_route(Operator(), page_base="http://x/v1", page_key="typed", providers={"nonsense": ""})
    assert "a provider litellm does not know" in unknown.refused


# -- the wire: a typed base with a typed key, every credential variable litellm names set to a sentinel ---------


def _credential_vars(model: str, monkeypatch) -> list[str]:
    """The environment variables litellm reads for this model's provider (what it reports missing in an empty
    environment), plus the common provider keys."""
    import litellm

    common = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY",
              "GROQ_API_KEY", "OPENROUTER_API_KEY", "AZURE_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]
    for name in common:
        monkeypatch.delenv(name, raising=False)
    found = litellm.validate_environment(model=model).get("missing_keys") or []
    return sorted({*common, *found})


@pytest.mark.parametrize("provider", sorted(KEY_ONLY_PROVIDERS))
def test_each_key_only_provider_sends_the_typed_key_and_nothing_from_the_environment(fake_provider, monkeypatch,
                                                                                      provider):
    from workbench.briefing.live import LiveBriefer

    model = f"{provider}/fake-good"
    assert providers_of([model], fake_provider.api_base) == {model: provider}
    names = _credential_vars(model, monkeypatch)
    sentinels = {name: f"SENTINEL-{i:03d}-{name.lower()}-do-not-send" for i, name in enumerate(names)}
    for name, value in sentinels.items():
        monkeypatch.setenv(name, value)
    route = page_route(Operator(), page_base=fake_provider.api_base, page_key="typed-key-0123456789",
                       providers=providers_of([model], fake_provider.api_base))
    assert not route.refused
    briefer = LiveBriefer([model], api_base=route.api_base, api_key=route.api_key, timeout_s=5)
    briefer.check_models()  # one tiny request; whatever the fake server answers on that provider's path
    wire = " ".join(f"{r['path']} {r['headers']}" for r in fake_provider.wire)
    assert fake_provider.wire, f"{provider}: nothing reached the server"
    assert "typed-key-0123456789" in wire
    assert not [name for name, value in sentinels.items() if value in wire]


# -- who can open the app at all --------------------------------------------------------------------------------


def _outside_address() -> str | None:
    """This machine's first non-loopback IPv4 address (None when it has none)."""
    psutil = pytest.importorskip("psutil")
    for addrs in psutil.net_if_addrs().values():
        for a in addrs:
            if a.family == socket.AF_INET and not a.address.startswith("127."):
                return str(a.address)
    return None


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("address", [None, "0.0.0.0"], ids=["default", "opened"])
def test_the_app_listens_on_loopback_unless_started_open(tmp_path, address):
    """``streamlit run workbench/app.py`` from the repository binds 127.0.0.1 (``.streamlit/config.toml``); the
    documented ``--server.address 0.0.0.0`` opens it to the network."""
    outside = _outside_address()
    if outside is None:
        pytest.skip("this machine has no non-loopback address to try")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    extra = ["--server.address", address] if address else []
    with (tmp_path / "streamlit.log").open("w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "workbench/app.py", "--server.headless",
                                 "true", "--server.port", str(port), "--server.fileWatcherType", "none", *extra],
                                cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not _reachable("127.0.0.1", port) and not _reachable(outside, port):
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "streamlit.log").read_text()
            time.sleep(0.3)
        assert _reachable(outside, port) is (address == "0.0.0.0")
        if address is None:
            assert _reachable("127.0.0.1", port)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
