"""API keys out of everything stored or shown: error details, answers, cached values.

``scrub_secrets`` is for provider errors (known key values, then anything shaped like a key, a bearer or basic
credential, or a URL's user:password); ``scrub_known`` for answers, where only known values go (a key-shaped word
a model wrote is left alone). Known values are the key given and every credential-like environment variable, and
for a URL (an ``api_base`` given, or any environment value that is one) the credentials in it: its user:password
as written and percent-decoded, the password alone, and the base64 of ``user:password`` that an HTTP client sends
as ``Authorization: Basic …`` (a server that echoes its headers would otherwise hand it back in an answer).
``without_credentials`` is the URL to keep or show: the same URL with no user:password part.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

_KEY_LIKE = re.compile(r"\b(?:sk|pk|rk|key|api)[-_][A-Za-z0-9_\-]{8,}|\bAIza[0-9A-Za-z_\-]{20,}")
_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-]{8,}")
_BASIC = re.compile(r"(?i)\bbasic\s+[A-Za-z0-9+/_\-]{8,}={0,2}")
_URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
_SECRET_ENV = re.compile(r"(?i)(api_?key|token|secret|password)")
MIN_PASSWORD_CHARS = 4  # a shorter password alone is not replaced (it would blank common words); its other forms are


def without_credentials(url: str | None) -> str | None:
    """``url`` with its user:password part removed (everything else, query included, as given)."""
    if not url or "@" not in url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return _URL_USERINFO.sub("", url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def url_credentials(url: str) -> list[str]:
    """Every form the credentials of ``url`` can take in a message: user:password as written and decoded, the
    password alone (the user name alone when there is no password: then it is the token), and their base64."""
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        netloc = url.split("://", 1)[-1].split("/", 1)[0]
    if "@" not in netloc:
        return []
    userinfo = netloc.rsplit("@", 1)[0]
    out: list[str] = []
    for info in dict.fromkeys((userinfo, unquote(userinfo))):
        user, sep, password = info.partition(":")
        secret = password if sep and password else user
        out.append(info)
        if len(secret) >= MIN_PASSWORD_CHARS:
            out.append(secret)
        pair = f"{user}:{password}".encode("utf-8", "surrogatepass")
        for encoded in (base64.b64encode(pair), base64.urlsafe_b64encode(pair)):
            text = encoded.decode("ascii")
            out += [text, text.rstrip("=")]
    return [s for s in dict.fromkeys(out) if s]


def _forms(value: str) -> list[str]:
    """A key as itself; a URL as its credentials only (the rest of a URL is no secret and stays readable)."""
    return url_credentials(value) if "://" in value else [value]


def _environment() -> list[str]:
    """Credential-like environment variables' values, and the credentials of every environment value that is a
    URL with a user:password part (WORKBENCH_API_BASE, OPENAI_BASE_URL, HTTPS_PROXY, …)."""
    out: list[str] = []
    for name, value in os.environ.items():
        if not value:
            continue
        if _SECRET_ENV.search(name) and len(value) >= 8:
            out.append(value)
        if "://" in value and "@" in value:
            out += url_credentials(value)
    return out


def known_secrets(secrets: Iterable[str | None]) -> list[str]:
    """The values to replace, longest first: each given secret's forms, then the environment's."""
    found = [f for s in secrets if s for f in _forms(s)] + _environment()
    return sorted(set(found), key=len, reverse=True)


def _replace(text: str, known: list[str]) -> str:
    for value in known:
        if value in text:
            text = text.replace(value, "***")
    return text


def scrub_secrets(text: str, *secrets: str | None) -> str:
    """Remove API keys from a message before it is stored, shown or exported.

    Known values first (the key given, the credentials of an ``api_base`` given, and every credential-like
    environment variable, whatever its shape), then key-shaped strings, bearer and basic credentials and
    user:password parts of URLs.
    """
    text = _replace(text, known_secrets(secrets))
    text = _BASIC.sub("Basic ***", _BEARER.sub("Bearer ***", _KEY_LIKE.sub("***", text)))
    return _URL_USERINFO.sub("***@", text)


def scrub_known(text: str, *secrets: str | None) -> str:
    """Remove known values only (the key given, an ``api_base``'s credentials in every form, credential-like
    environment variables) from any text that is stored or shown, successful answers included; key-shaped words
    in an answer are left alone."""
    return _replace(text, known_secrets(secrets))
