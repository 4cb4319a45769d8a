"""What a failed provider call says, in one line, and whether the request ever reached the provider.

litellm wraps a provider's error in layers ("litellm.InternalServerError: InternalServerError: OpenAIException -
…") and, for some providers, appends the Python traceback to the message (litellm 1.x's Gemini path: "Missing
Gemini API key…\\nTraceback (most recent call last): …"). A person needs the provider's sentence; ``error_line``
keeps that. litellm also gives errors raised before any byte was sent (a missing key checked locally, a refused
connection) an HTTP status of 500 it never received; ``reached_provider`` reads the exception's cause chain instead,
so a run reports only the requests a provider saw (and might bill).
"""

from __future__ import annotations

import re

_TRACEBACK = "Traceback (most recent call last)"
# "litellm.InternalServerError: InternalServerError: OpenAIException - ": the wrappers before the provider's words
_WRAPPERS = re.compile(r"^(?:litellm\.)?(?:[A-Z][A-Za-z]*(?:Error|Exception)(?::| -)\s*)+")
# An answer with a status: the provider saw the request. A timeout: it may have, and may bill it.
_REACHED = {"httpx.HTTPStatusError", "openai.APIStatusError", "anthropic.APIStatusError", "httpx.TimeoutException",
            "openai.APITimeoutError", "litellm.Timeout", "builtins.TimeoutError"}
_NOT_REACHED = {"httpx.ConnectError", "httpcore.ConnectError", "httpx.ConnectTimeout", "httpcore.ConnectTimeout",
                "openai.APIConnectionError", "anthropic.APIConnectionError", "aiohttp.ClientConnectorError",
                "requests.ConnectionError", "urllib3.NewConnectionError"}
_CONNECT_TIMEOUT = {"httpx.ConnectTimeout", "httpcore.ConnectTimeout"}  # timeouts (above) that never connected
# Packages that talk to the network: an exception from one of them (other than a connect error) may follow a send.
_NETWORK = ("httpx", "httpcore", "requests", "urllib3", "aiohttp", "botocore")


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _names(exc: BaseException) -> set[str]:
    """``package.Class`` for the exception's class and every base (``httpx._exceptions`` → ``httpx``)."""
    return {f"{c.__module__.split('.')[0]}.{c.__name__}" for c in type(exc).__mro__}


def reached_provider(exc: BaseException) -> bool:
    """Whether the failed call reached the provider: an HTTP answer or a timeout somewhere in the cause chain says
    yes; a connect error, or a chain raised with no network library in it (a key checked locally), says no. An
    exception this cannot place counts as reached, so a request cap never undercounts."""
    chain = _chain(exc)
    names = [_names(e) for e in chain]
    for n in reversed(names):  # the innermost decisive cause: a connect timeout is a timeout that sent nothing
        if n & _CONNECT_TIMEOUT:
            return False
        if n & _REACHED:
            return True
        if n & _NOT_REACHED:
            return False
    networked = any(name.split(".")[0] in _NETWORK or name in ("openai.APIError", "anthropic.APIError")
                    for n in names for name in n)
    return networked or not any(type(e).__module__.split(".")[0] == "litellm" for e in chain)


def error_line(exc: BaseException) -> str:
    """``Type (HTTP n): the provider's words``: no traceback, no wrapper prefixes, one line; the HTTP status only
    when the provider answered with it."""
    text = str(exc).split(_TRACEBACK, 1)[0]
    text = " ".join(text.split())
    text = _WRAPPERS.sub("", text).strip() or type(exc).__name__
    status = getattr(exc, "status_code", None)
    http = f" (HTTP {status})" if isinstance(status, int) and reached_provider(exc) else ""
    return f"{type(exc).__name__}{http}: {text}"
