"""How a chat-completion request's bytes travel: the one place that knows the HTTP library.

Two ways, one contract (:class:`Transport`): the body of a successful answer, or :class:`StatusError` for an error
answer, :class:`Deadline` when the request's whole time ran out (a server that stalls or trickles, even its
headers, holds a request no longer), or :class:`ConnectionFailed` for anything else on the way: a refused or broken
connection, an answer cut short or garbled, a redirect loop (:data:`TRANSPORT_ERRORS`; nothing of the HTTP
library's own leaves a transport).

- :class:`LeanTransport` (our own endpoints): aiohttp, the transport the ``openai`` SDK ships for high concurrency,
  called directly with what the SDK would send — the endpoint's URL, the key as a bearer token, the organization
  and project from ``OPENAI_ORG_ID`` and ``OPENAI_PROJECT_ID``, through the environment's proxy — and an error
  answer read as the SDK reads it ("Error code: 429 - <the server's message>", its code and param);
  ``tests/llm/test_sdk_parity.py`` holds it to the SDK. Through the SDK's request path the same call costs two to
  four times the CPU (its request options, httpx's client stack, the adapter to aiohttp), and importing the SDK
  half a second of every run's start; at a thousand requests in flight those are the harness's whole budget
  (``benchmarks/README.md``). It needs no SDK installed.
- :class:`SDKTransport`: the SDK's own request path, for a client a user built (its transport, auth refresh and
  hooks are theirs) and for an endpoint whose URL carries credentials (the SDK sends them as basic auth). The SDK
  is the ``openai`` extra: :func:`openai_sdk` says so when it is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

import aiohttp

from occubench.errors import ConfigError

if TYPE_CHECKING:
    import openai

PATH = "/chat/completions"
#: Where the SDK sends requests when no base URL is set.
OPENAI_URL = "https://api.openai.com/v1"


class Deadline(Exception):
    """A request's whole time ran out before its answer was read."""


class ConnectionFailed(Exception):
    """A connection that failed or broke (what lies under it, in ``__cause__``, says why)."""


class StatusError(Exception):
    """An error answer: its status, the server's message as the SDK words it, the error's code and param, and the
    headers (Retry-After)."""

    def __init__(self, status_code: int, message: str, headers: Mapping[str, str], code: Any = None,
                 param: Any = None) -> None:
        super().__init__(message)
        self.status_code, self.message, self.headers, self.code, self.param = status_code, message, headers, code, param

    @classmethod
    def read(cls, status: int, headers: Mapping[str, str], text: str) -> StatusError:
        """The error of an answer (its body decoded by its charset, else as UTF-8), read as the SDK reads one: the
        code as text, whatever type the server gave it."""
        try:
            data = json.loads(text.strip())
        except ValueError:
            data = None
        error = data.get("error", data) if isinstance(data, dict) else None
        said = error.get("message") if isinstance(error, dict) else None
        message = f"Error code: {status}" + (f" - {said}" if isinstance(said, str) and said else "")
        found = error if isinstance(error, dict) else {}
        code = found.get("code")
        return cls(status, message, headers, None if code is None else str(code), found.get("param"))


class Transport(Protocol):
    async def post(self, content: bytes, timeout_s: float) -> bytes: ...

    async def close(self) -> None: ...


def endpoint_url(base_url: str | None) -> str:
    """The base URL as the SDK resolves it: given, else ``OPENAI_BASE_URL``, else OpenAI's."""
    return (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/") + "/"


def environment_proxy(url: str) -> str | None:
    """The proxy the environment gives ``url``, by the rules of the SDK's HTTP client (httpx): the scheme's
    variable (``HTTPS_PROXY``, ``HTTP_PROXY``), else ``ALL_PROXY``, a bare ``host:port`` taken as ``http://``; none
    for a host ``NO_PROXY`` exempts. (httpx also reads CIDR ranges and ``scheme://host`` entries there.)"""
    found = urllib.request.getproxies()
    parts = urlsplit(url)
    names = {(parts.hostname or "").lower(), parts.netloc.rpartition("@")[2].lower()}  # with its port if given
    for entry in (entry.strip().lower() for entry in found.get("no", "").split(",")):
        if entry == "*" or entry and any(_exempts(entry, name) for name in names):
            return None
    proxy = found.get(parts.scheme) or found.get("all")
    return proxy if not proxy or "://" in proxy else f"http://{proxy}"


def _exempts(entry: str, name: str) -> bool:
    """Whether a ``NO_PROXY`` entry exempts a host (or ``host:port``): ``.name`` and ``*.name`` its subdomains,
    a bare name itself and its subdomains, an address itself."""
    if entry.startswith((".", "*.")):
        return name.endswith(entry.lstrip("*"))
    return name == entry or name.endswith("." + entry)


def openai_sdk(needed_for: str) -> ModuleType:
    """The ``openai`` SDK, imported; a :class:`ConfigError` naming the extra that installs it if it is missing."""
    try:
        import openai
    except ImportError as exc:
        raise ConfigError(f"{needed_for} needs the openai SDK, which is not installed: "
                          'pip install "occubench[openai]"') from exc
    return openai


class LeanTransport:
    """aiohttp with what the SDK would send; one keep-alive pool of ``connections``, opened as requests need them.
    Made on the event loop that uses it."""

    def __init__(self, base_url: str, api_key: str, connections: int) -> None:
        from occubench import __version__

        self.url = base_url.rstrip("/") + PATH
        self.headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json",
                        "Accept": "application/json", "User-Agent": f"occubench/{__version__}"}
        for header, variable in (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID")):
            if (value := os.environ.get(variable)) is not None:  # set but empty, the SDK sends it empty
                self.headers[header] = value
        # Looked up once here: aiohttp's trust_env would read the proxy variables and ~/.netrc for every request.
        self.proxy = environment_proxy(self.url)
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=connections, limit_per_host=0))
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}

    async def post(self, content: bytes, timeout_s: float) -> bytes:
        if (timeout := self._timeouts.get(timeout_s)) is None:
            timeout = self._timeouts[timeout_s] = aiohttp.ClientTimeout(total=timeout_s)
        try:
            async with self.session.post(self.url, data=content, headers=self.headers, timeout=timeout,
                                         proxy=self.proxy) as answer:
                body = await answer.read()
                if answer.status >= 400:
                    raise StatusError.read(answer.status, answer.headers, _text(body, answer.get_encoding()))
                return body
        except asyncio.TimeoutError:  # aiohttp's own timeouts are asyncio's too (and OSErrors: caught first)
            raise Deadline from None
        except (aiohttp.ClientError, OSError) as exc:  # a broken or garbled exchange, an unusable URL or redirect
            raise ConnectionFailed(f"{type(exc).__name__}: {exc}") from exc

    async def close(self) -> None:
        await self.session.close()


def _text(body: bytes, charset: str) -> str:
    try:
        return body.decode(charset, "replace")
    except LookupError:  # a charset that names no text encoding (base64): read as the SDK's default, UTF-8
        return body.decode("utf-8", "replace")


class SDKTransport:
    def __init__(self, sdk: openai.AsyncOpenAI) -> None:
        import openai

        self.sdk, self._errors = sdk, openai
        try:  # the SDK's HTTP response class, asked for raw: httpx2 in recent releases, httpx before
            from httpx2 import Response
        except ImportError:  # pragma: no cover - an older openai
            from httpx import Response  # type: ignore[assignment]
        self._raw = Response

    async def post(self, content: bytes, timeout_s: float) -> bytes:
        errors = self._errors
        try:
            response: Any = await asyncio.wait_for(self.sdk.post(
                PATH, cast_to=self._raw, content=content,
                options={"timeout": timeout_s, "headers": {"Content-Type": "application/json"}}), timeout_s)
        except asyncio.TimeoutError:
            raise Deadline from None
        except errors.APIStatusError as exc:
            raise StatusError(exc.status_code, exc.message, exc.response.headers, exc.code, exc.param) from None
        except errors.APITimeoutError as exc:  # what lies under it may be a refused connection: kept as the cause
            raise Deadline from exc
        except errors.APIConnectionError as exc:
            raise ConnectionFailed(str(exc)) from exc
        return bytes(response.content)

    async def close(self) -> None:
        await self.sdk.close()


#: What a transport raises for a request that got no answer, and among them the timeouts.
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (ConnectionFailed, Deadline)
TIMEOUTS: tuple[type[BaseException], ...] = (Deadline,)
