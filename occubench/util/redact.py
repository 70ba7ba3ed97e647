"""Keeping secrets off disk: every text the run writes passes through a :class:`Redactor`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from occubench.errors import OccuBenchError

MASK = "<redacted>"
_SECRET_QUERY_KEYS = re.compile(r"key|token|secret|password|signature", re.IGNORECASE)


class Redactor:
    """Replaces every known secret (API keys given on the command line or in the environment) with a mask."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        # Longest first, so a key that contains another is masked whole. Very short strings would mask noise.
        self._secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def text(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    @contextmanager
    def errors(self) -> Iterator[None]:
        """Our errors raised inside leave with every secret masked: a server may quote the key it refused."""
        try:
            yield
        except OccuBenchError as exc:
            exc.args = (self.text(str(exc)),)
            raise

    def value(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value."""
        if not self._secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(item) for item in value]
        return value


def url_secrets(url: str | None) -> list[str]:
    """The secrets a URL carries: the password of its user-info and the values of query parameters that look like
    credentials (``?api_key=...``), so they are masked wherever the text shows up."""
    if not url:
        return []
    parts = urlsplit(url)
    found = [parts.password] if parts.password else []
    return found + [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if _SECRET_QUERY_KEYS.search(k) and v]


def redact_url(url: str | None) -> str | None:
    """Drop a password in the URL and mask query parameters that look like credentials."""
    if not url:
        return url
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        netloc = f"{userinfo.split(':', 1)[0]}:{MASK}@{host}" if ":" in userinfo else f"{MASK}@{host}"
    query = urlencode([(k, MASK if _SECRET_QUERY_KEYS.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="<>")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
