"""API keys out of everything stored or shown: error details, answers, cached values.

``scrub_secrets`` is for provider errors (known key values, then anything shaped like a key, a bearer token or
a URL's user:password); ``scrub_known`` for answers, where only known values go (a key-shaped word a model
wrote is left alone). Known values are the key given and every credential-like environment variable.
"""

from __future__ import annotations

import os
import re

_KEY_LIKE = re.compile(r"\b(?:sk|pk|rk|key|api)[-_][A-Za-z0-9_\-]{8,}|\bAIza[0-9A-Za-z_\-]{20,}")
_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-]{8,}")
_URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
_SECRET_ENV = re.compile(r"(?i)(api_?key|token|secret|password)")


def scrub_secrets(text: str, *secrets: str | None) -> str:
    """Remove API keys from a message before it is stored, shown or exported.

    Known values first (the key given, and every credential-like environment variable, whatever its
    shape), then key-shaped strings, bearer tokens and user:password parts of URLs.
    """
    known = [s for s in secrets if s] + [
        v for k, v in os.environ.items() if _SECRET_ENV.search(k) and v and len(v) >= 8
    ]
    for value in sorted(set(known), key=len, reverse=True):
        text = text.replace(value, "***")
    return _URL_USERINFO.sub("***@", _BEARER.sub("Bearer ***", _KEY_LIKE.sub("***", text)))


def scrub_known(text: str, *secrets: str | None) -> str:
    """Remove known key values only (the key given, credential-like environment variables) from any text
    that is stored or shown, successful answers included; key-shaped words in an answer are left alone."""
    known = [s for s in secrets if s] + [
        v for k, v in os.environ.items() if _SECRET_ENV.search(k) and v and len(v) >= 8
    ]
    for value in sorted(set(known), key=len, reverse=True):
        if value in text:
            text = text.replace(value, "***")
    return text
