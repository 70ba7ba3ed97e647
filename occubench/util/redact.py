"""Keeping secrets out of what the harness writes, prints and sends: every such text passes through a
:class:`Redactor`, which knows the keys the run sends and every credential in the harness's environment (an agent
program inherits that environment, and may print it)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from occubench.errors import OccuBenchError

MASK = "<redacted>"
_SECRET_QUERY_KEYS = re.compile(r"key|token|secret|password|signature", re.IGNORECASE)
#: Environment variables that hold credentials: a name ending in the word KEY, APIKEY, TOKEN, SECRET or PASSPHRASE,
#: or in PASSWORD or PASSWD, perhaps numbered (``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, ``OPENAI_API_KEY_2``,
#: ``PGPASSWORD``). Names that go on past the word (``HF_TOKEN_PATH``, ``AWS_ACCESS_KEY_ID``) hold paths and
#: identifiers, not secrets.
_SECRET_VARIABLE = re.compile(r"((^|_)(KEY|APIKEY|TOKEN|SECRET|PASSPHRASE)|PASSWORD|PASSWD)(_?[0-9]+)?$", re.IGNORECASE)
#: Shorter values found in the environment are left alone: a guessed credential of a few characters ("true",
#: "1234") would mask ordinary text. Keys the run sends are masked from 4 characters, as they are known secrets.
MIN_ENVIRONMENT_SECRET = 8


class Redactor:
    """Replaces every known secret (API keys given on the command line or in the environment, see
    :func:`environment_secrets`) with a mask."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        # Longest first, so a key that contains another is masked whole. Very short strings would mask noise.
        self._secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)
        # Each as it is written inside a JSON string, for request bodies already encoded.
        self._in_json = [(json.dumps(s, ensure_ascii=False)[1:-1].encode(), MASK.encode()) for s in self._secrets]

    def text(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def body(self, content: bytes) -> bytes:
        """A JSON request body with every secret in its strings masked: the last step before it is sent."""
        for secret, mask in self._in_json:
            if secret in content:
                content = content.replace(secret, mask)
        return content

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


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The credentials in ``environ`` (the process's environment by default): the values of variables named as
    credentials (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``...) and each line of them, and the passwords and
    credential parameters of the URLs any variable holds (``HTTPS_PROXY=http://user:pass@...``); none shorter than
    :data:`MIN_ENVIRONMENT_SECRET`."""
    found: list[str] = []
    for name, value in (os.environ if environ is None else environ).items():
        if _SECRET_VARIABLE.search(name):
            found += [value, *value.splitlines()]  # a key of several lines (PEM) may be printed a line at a time
        elif "://" in value:
            try:
                found += url_secrets(value)
            except ValueError:  # not a URL after all (an unclosed "[" reads as a bad IPv6 address)
                continue
    return list(dict.fromkeys(value for value in found if len(value) >= MIN_ENVIRONMENT_SECRET))


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
