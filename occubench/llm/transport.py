"""How a chat-completion request's bytes travel: the one place that knows the HTTP library.

Two ways, one contract (:class:`Transport`): the body of a successful answer, or :class:`StatusError` for an error
answer, :class:`Deadline` when the request's whole time ran out (a server that stalls or trickles, even its
headers, holds a request no longer), or a failed connection (:data:`TRANSPORT_ERRORS`).

- :class:`LeanTransport` (our own endpoints): aiohttp, the transport the ``openai`` SDK ships for high concurrency,
  called directly with what the SDK would send — the endpoint's URL, the key as a bearer token, the organization
  and project from ``OPENAI_ORG_ID`` and ``OPENAI_PROJECT_ID`` — and an error answer read as the SDK reads it
  ("Error code: 429 - <the server's message>", its code and param). Through the SDK's request path the same call
  costs two to four times the CPU (its request options, httpx's client stack, the adapter to aiohttp), and
  importing the SDK half a second of every run's start; at a thousand requests in flight those are the harness's
  whole budget (``benchmarks/README.md``).
- :class:`SDKTransport`: the SDK's own request path, for a client a user built (its transport, auth refresh and
  hooks are theirs) and for an endpoint whose URL carries credentials (the SDK sends them as basic auth).
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

import aiohttp

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
    def read(cls, status: int, headers: Mapping[str, str], body: bytes) -> StatusError:
        """The error of an answer, read as the SDK reads one."""
        text = body.decode("utf-8", "replace").strip()
        try:
            data = json.loads(text)
        except ValueError:
            data = text
        error = data.get("error", data) if isinstance(data, dict) else None
        said = error.get("message") if isinstance(error, dict) else None
        message = f"Error code: {status}" + (f" - {said}" if isinstance(said, str) and said else "")
        found = error if isinstance(error, dict) else {}
        return cls(status, message, headers, found.get("code"), found.get("param"))


class Transport(Protocol):
    async def post(self, content: bytes, timeout_s: float) -> bytes: ...

    async def close(self) -> None: ...


def endpoint_url(base_url: str | None) -> str:
    """The base URL as the SDK resolves it: given, else ``OPENAI_BASE_URL``, else OpenAI's."""
    return (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/") + "/"


class LeanTransport:
    """aiohttp with what the SDK would send; one keep-alive pool of ``connections``, opened as requests need them.
    Made on the event loop that uses it."""

    def __init__(self, base_url: str, api_key: str, connections: int) -> None:
        from occubench import __version__

        self.url = base_url.rstrip("/") + PATH
        self.headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json",
                        "Accept": "application/json", "User-Agent": f"occubench/{__version__}"}
        for header, variable in (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID")):
            if value := os.environ.get(variable):
                self.headers[header] = value
        # The environment's proxy, as the SDK takes it: looked up once here (aiohttp's trust_env would read the
        # proxy variables and ~/.netrc again for every request).
        parts = urlsplit(self.url)
        self.proxy = None if urllib.request.proxy_bypass(parts.hostname or "") else \
            urllib.request.getproxies().get(parts.scheme)
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
                    raise StatusError.read(answer.status, answer.headers, body)
                return body
        except asyncio.TimeoutError:  # aiohttp's own timeouts are asyncio's too
            raise Deadline from None

    async def close(self) -> None:
        await self.session.close()


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


#: A failed connection or exchange, and among them those that are timeouts.
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (aiohttp.ClientError, ConnectionFailed, Deadline)
TIMEOUTS: tuple[type[BaseException], ...] = (Deadline,)
