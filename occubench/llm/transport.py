"""How a chat-completion request's bytes travel: the one place that knows the HTTP library.

The SDK's ``AsyncOpenAI`` is the client: it resolves the endpoint, writes the headers (the key, its own identity
and the organization's), and turns an error response into its exceptions, which the client's retry rules read. The
bytes go one of two ways:

- :class:`LeanTransport` (our own endpoints): aiohttp, the transport the SDK itself ships for high concurrency,
  called directly with the SDK's URL and headers. Through the SDK's request path the same call costs three to four
  times the CPU (its request options, httpx's client stack and the adapter to aiohttp come on top; see
  ``benchmarks/README.md``), which at a thousand requests in flight is the harness's whole budget.
- :class:`SDKTransport`: the SDK's own request path, for a client a user built (its transport, auth refresh and
  hooks are theirs) and for an endpoint whose URL carries credentials (the SDK sends them as basic auth).

Either reads the whole answer within ``timeout_s`` of wall-clock time, else raises :class:`Deadline`: a server
that stalls or trickles (even its headers) holds a request no longer.
"""

from __future__ import annotations

import asyncio
import urllib.request
from typing import Protocol
from urllib.parse import urlsplit

import aiohttp
import openai

try:  # the SDK's HTTP library: httpx2 in recent releases, httpx before
    import httpx2 as http
except ImportError:  # pragma: no cover - an older openai
    import httpx as http  # type: ignore[no-redef]

PATH = "/chat/completions"


class Deadline(Exception):
    """A request's whole time ran out before its answer was read."""


class Transport(Protocol):
    async def post(self, content: bytes, timeout_s: float) -> bytes:
        """The body of a successful answer to ``content``; an error answer raises the SDK's
        :class:`openai.APIStatusError`, a failed connection an ``aiohttp``, ``httpx`` or SDK connection error."""
        ...

    async def close(self) -> None: ...


class SDKTransport:
    def __init__(self, sdk: openai.AsyncOpenAI) -> None:
        self.sdk = sdk

    async def post(self, content: bytes, timeout_s: float) -> bytes:
        try:
            response = await asyncio.wait_for(self.sdk.post(
                PATH, cast_to=http.Response, content=content,
                options={"timeout": timeout_s, "headers": {"Content-Type": "application/json"}}), timeout_s)
        except asyncio.TimeoutError:
            raise Deadline from None
        return response.content

    async def close(self) -> None:
        await self.sdk.close()


class LeanTransport:
    """aiohttp with the SDK's URL, headers and error mapping; one keep-alive pool of ``connections``, opened as
    requests need them. Made on the event loop that will use it."""

    def __init__(self, sdk: openai.AsyncOpenAI, connections: int) -> None:
        self.sdk = sdk
        self.url = str(sdk.base_url).rstrip("/") + PATH
        # Omitted headers (no organization, say) are the SDK's Omit markers, not text.
        given = {**sdk.default_headers, **sdk.auth_headers, "X-Stainless-Async": "async:asyncio"}
        self.headers = {name: value for name, value in given.items() if isinstance(value, str)}
        # The environment's proxy, as the SDK's own transports take it: looked up once here (aiohttp's trust_env
        # would read the proxy variables and ~/.netrc again for every request).
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
                    raise self._status_error(answer, body)
                return body
        except asyncio.TimeoutError:  # aiohttp's own timeouts are asyncio's too
            raise Deadline from None

    def _status_error(self, answer: aiohttp.ClientResponse, body: bytes) -> openai.APIStatusError:
        """The SDK's exception for an error answer, made by the SDK from the answer as it would have seen it."""
        response = http.Response(answer.status, headers=list(answer.headers.items()), content=body,
                                 request=http.Request("POST", self.url))
        error: openai.APIStatusError = self.sdk._make_status_error_from_response(response)
        return error

    async def close(self) -> None:
        await self.session.close()


def transport_for(sdk: openai.AsyncOpenAI, connections: int, *, lean: bool) -> Transport:
    return LeanTransport(sdk, connections) if lean else SDKTransport(sdk)


#: A failed connection or exchange, whichever library raised it; and among them, those that are timeouts.
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (openai.APIConnectionError, http.TransportError,
                                                    aiohttp.ClientError, Deadline)
TIMEOUTS: tuple[type[BaseException], ...] = (openai.APITimeoutError, http.TimeoutException, Deadline)
