"""Where a key from the environment may be sent: the rule a face applies to an API base typed in a page.

Whoever starts the app owns its environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, …); whoever can open the page
can type an API base. A key from the environment goes only to the provider's own endpoint or to the API base the
operator named when starting the app (``streamlit run workbench/app.py -- --api-base URL``, or
``WORKBENCH_API_BASE``). An API base typed in the page gets only a key typed in the page, unless the operator
started the app with ``-- --allow-page-api-base`` (or ``WORKBENCH_ALLOW_PAGE_API_BASE=1``).

litellm reads a provider's key from the environment whenever ``api_key`` is None, so a page-typed base is always
called with the page's key given explicitly, and refused without one. Some providers sign with other credentials
from the environment even when a key is given (cloud roles, OAuth files, token exchanges: litellm's gigachat
provider sent its environment credential, not the key given, in our check), so a page-typed base is accepted only
for providers whose one credential is the key (``KEY_ONLY_PROVIDERS``; ``tests/test_endpoints.py`` sends a request
through each with every credential variable litellm names for it set, and finds none on the wire). The command
line and notebooks are the operator's own: an ``api_base`` given there is the operator's choice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.briefing.scrub import without_credentials

ENV_BASE = "WORKBENCH_API_BASE"
ENV_ALLOW = "WORKBENCH_ALLOW_PAGE_API_BASE"
BASE_FLAG = "--api-base"
ALLOW_FLAG = "--allow-page-api-base"
_TRUE = ("1", "true", "yes", "on")

# litellm providers (``get_llm_provider``'s second value) that authenticate with the key alone: an explicit
# ``api_key`` replaces whatever the environment holds. Checked on the wire by tests/test_endpoints.py.
KEY_ONLY_PROVIDERS = frozenset({
    "openai", "text-completion-openai", "custom_openai", "anthropic", "gemini", "mistral", "groq", "deepseek", "xai",
    "openrouter", "together_ai", "fireworks_ai", "deepinfra", "perplexity", "cerebras", "nvidia_nim", "hosted_vllm",
    "ollama", "ollama_chat", "lm_studio", "llamafile", "litellm_proxy",
})


@dataclass(frozen=True, kw_only=True)
class Operator:
    """What the person who started the app chose: an API base for the environment's keys, and whether a base
    typed in the page may receive them too."""

    api_base: str | None = None
    allow_page_api_base: bool = False

    @property
    def shown_base(self) -> str:
        """The operator's API base as the page may show it: without any user:password part."""
        return without_credentials(self.api_base) or ""


def operator_settings(argv: Sequence[str], environ: Mapping[str, str]) -> Operator:
    """``--api-base URL`` (or ``--api-base=URL``) and ``--allow-page-api-base`` after ``--`` on the
    ``streamlit run`` line, else ``WORKBENCH_API_BASE`` and ``WORKBENCH_ALLOW_PAGE_API_BASE``."""
    args = list(argv)
    base: str | None = None
    allow = False
    for i, arg in enumerate(args):
        if arg == BASE_FLAG and i + 1 < len(args):
            base = args[i + 1]
        elif arg.startswith(BASE_FLAG + "="):
            base = arg.split("=", 1)[1]
        elif arg == ALLOW_FLAG:
            allow = True
    base = (base or environ.get(ENV_BASE, "")).strip() or None
    allow = allow or environ.get(ENV_ALLOW, "").strip().lower() in _TRUE
    return Operator(api_base=base, allow_page_api_base=allow)


@dataclass(frozen=True, kw_only=True)
class Route:
    """Where a page's request goes and with which key; ``refused`` says why nothing may be sent ("" = send)."""

    api_base: str | None
    api_key: str | None  # None: litellm takes the provider's key from the environment
    refused: str = ""


def _same(a: str | None, b: str | None) -> bool:
    return (without_credentials(a) or "").rstrip("/") == (without_credentials(b) or "").rstrip("/")


def page_route(operator: Operator, *, page_base: str | None, page_key: str | None,
               providers: Mapping[str, str]) -> Route:
    """The endpoint and key for a request the page asks for.

    ``page_base`` / ``page_key``: what was typed (empty: nothing); ``providers``: model → litellm provider, for the
    models the request goes to. The operator's own base (typed back as the page shows it) is the operator's.
    """
    page_base = (page_base or "").strip() or None
    page_key = page_key or None
    if page_base is None:
        return Route(api_base=None, api_key=page_key)
    if operator.api_base and _same(page_base, operator.api_base):
        return Route(api_base=operator.api_base, api_key=page_key)
    if operator.allow_page_api_base:
        return Route(api_base=page_base, api_key=page_key)
    if page_key is None:
        return Route(api_base=page_base, api_key=None, refused=(
            "an API base typed in this page gets only a key typed in this page, never one from the environment. "
            "Type the endpoint's key (any placeholder for a local server that needs none), clear the API base to use "
            f"the provider's own endpoint, or start the app with “-- {BASE_FLAG} URL” (or “-- {ALLOW_FLAG}” to let "
            "typed bases use the environment's keys)"))
    others = {m: p for m, p in providers.items() if p not in KEY_ONLY_PROVIDERS}
    if others:
        named = ", ".join(f"{m} ({p or 'a provider litellm does not know'})" for m, p in others.items())
        return Route(api_base=page_base, api_key=page_key, refused=(
            f"{named}: this provider may sign requests with credentials from the environment, so it is not sent to "
            f"an API base typed in this page; start the app with “-- {BASE_FLAG} URL” (or “-- {ALLOW_FLAG}”)"))
    return Route(api_base=page_base, api_key=page_key)


def providers_of(models: Sequence[str], api_base: str | None) -> dict[str, str]:
    """model → litellm's provider for it ("" when litellm cannot route it: the pre-flight check names those)."""
    from workbench.briefing.provider import import_litellm

    litellm = import_litellm()
    out: dict[str, str] = {}
    for model in dict.fromkeys(models):
        try:
            out[model] = str(litellm.get_llm_provider(model, api_base=api_base)[1])
        except Exception:  # noqa: BLE001 - litellm raises its own BadRequestError here
            out[model] = ""
    return out
