"""An OpenAI-compatible chat-completions endpoint over one pool of keep-alive connections per judge.

Everything a request needs that does not change between calls is settled once, when the endpoint is
made: the URL (`api_base`, else $OPENAI_BASE_URL / $OPENAI_API_BASE, else OpenAI's), the headers
(the API key: the judge's `api_key_env`, else $OPENAI_API_KEY; $OPENAI_ORGANIZATION) and the
connection pool's size (the judge's max_concurrency). The pool keeps its connections alive between
calls and speaks HTTP/2 where the provider offers it (ALPN over TLS; `h2` installed); a plain-HTTP
local server is spoken to in HTTP/1.1 with keep-alive. Each connection is its own httpx client of
one connection, lent to one request at a time: httpx's shared pool scans every connection on each
request and response, which cost 2.5x the client CPU of a request at 16 connections (measured
side by side: 3.5 vs 1.35 ms a request). A pool belongs to the event loop that opened it (asyncio's
transports do), so a judge used under two `asyncio.run`s opens one per loop; `aclose` closes the
running loop's.

An answer is read as a stream and bounded in bytes before it is parsed (`max_bytes`, by default
judge.model.limits.MAX_ANSWER_BYTES; judge.judges.bounded): one longer, or announcing a longer
Content-Length, raises AnswerTooLarge unread, so a broken or hostile endpoint cannot make the process
hold its body.

A non-2xx answer raises an `HTTPError` subclass named as litellm names it (RateLimitError,
InternalServerError, ServiceUnavailableError, AuthenticationError, ...), with the response for its
Retry-After; a connection failure APIConnectionError, a request timeout Timeout. No retry happens
here: judge.judges.client retries (and counts) every request.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import weakref
from typing import Any

import msgspec

from judge.judges.bounded import read_bounded
from judge.model.limits import MAX_ANSWER_BYTES

OPENAI_BASE = "https://api.openai.com/v1"
USER_AGENT = "judge-llm-client (httpx)"


class HTTPError(Exception):
    """A request that got no usable answer; `response` is the httpx response, when there was one."""

    status: int | None = None

    def __init__(self, message: str, response: Any = None) -> None:
        super().__init__(message)
        self.response = response


class APIConnectionError(HTTPError):
    """The endpoint could not be reached (refused, reset, DNS, TLS)."""


class Timeout(HTTPError):
    """The endpoint did not answer in time."""


class APIError(HTTPError):
    """Any other non-2xx status."""


class BadRequestError(APIError):
    status = 400


class AuthenticationError(APIError):
    status = 401


class PermissionDeniedError(APIError):
    status = 403


class NotFoundError(APIError):
    status = 404


class UnprocessableEntityError(APIError):
    status = 422


class RateLimitError(APIError):
    status = 429


class InternalServerError(APIError):
    status = 500


class BadGatewayError(APIError):
    status = 502


class ServiceUnavailableError(APIError):
    status = 503


_BY_STATUS: dict[int, type[HTTPError]] = {c.status: c for c in (
    BadRequestError, AuthenticationError, PermissionDeniedError, NotFoundError, UnprocessableEntityError,
    RateLimitError, InternalServerError, BadGatewayError, ServiceUnavailableError)}
_BY_STATUS[408] = _BY_STATUS[504] = Timeout
TRANSIENT: tuple[type[HTTPError], ...] = (APIConnectionError, Timeout, RateLimitError, InternalServerError,
                                          BadGatewayError, ServiceUnavailableError)


def status_error(status: int, text: str, response: Any = None) -> HTTPError:
    """The error a non-2xx status raises (5xx not named: InternalServerError)."""
    kind = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else APIError)
    return kind(f"Error code: {status} - {text}", response)


def http2_available() -> bool:
    return importlib.util.find_spec("h2") is not None


class OpenAIEndpoint:
    """POST /chat/completions of one judge's endpoint (module docs). `api_key` is the key its
    `api_key_env` resolved to; `max_connections` bounds the pool (the judge's max_concurrency)."""

    def __init__(self, api_base: str | None, api_key: str | None, *, max_connections: int = 8,
                 max_bytes: int = MAX_ANSWER_BYTES) -> None:
        base = api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or OPENAI_BASE
        self.url = base.rstrip("/") + "/chat/completions"
        key = api_key or os.environ.get("OPENAI_API_KEY")
        self.needs_key = not key and api_base is None  # OpenAI itself; a local server may need none
        self.headers = {"content-type": "application/json", "accept": "application/json", "user-agent": USER_AGENT}
        if key:
            self.headers["authorization"] = f"Bearer {key}"
        organization = os.environ.get("OPENAI_ORGANIZATION")
        if organization:
            self.headers["openai-organization"] = organization
        self.max_connections = max_connections
        self.max_bytes = max_bytes
        self._pools: weakref.WeakKeyDictionary[Any, asyncio.LifoQueue] = weakref.WeakKeyDictionary()
        self._tls: Any = None
        self._target: Any = None  # `url` parsed once (httpx parses a str URL on every request: ~50 us)
        self._encode = msgspec.json.Encoder().encode
        self._decode = msgspec.json.Decoder().decode

    def _slots(self) -> asyncio.LifoQueue:
        """The running loop's connections: `max_connections` slots, each an httpx client of one
        keep-alive connection, made when first needed and reused most-recently-used first (so a
        quiet judge keeps few connections open)."""
        loop = asyncio.get_running_loop()
        slots = self._pools.get(loop)
        if slots is None:
            slots = self._pools[loop] = asyncio.LifoQueue()
            for _ in range(self.max_connections):
                slots.put_nowait(None)  # a slot whose client is not made yet
        return slots

    def _new_client(self) -> Any:
        import httpx

        if self._tls is None:
            self._tls = httpx.create_ssl_context()  # one TLS context for every slot (loading CAs is slow)
        if self._target is None:
            self._target = httpx.URL(self.url)
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=60.0)
        return httpx.AsyncClient(http2=http2_available(), limits=limits, headers=self.headers, timeout=None,
                                 verify=self._tls)

    async def complete(self, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """The JSON of one chat completion; raises an HTTPError (module docs)."""
        import httpx

        slots = self._slots()
        client = await slots.get()
        try:
            if client is None:
                client = self._new_client()
            request = client.build_request("POST", self._target, content=self._encode(body),
                                           timeout=httpx.Timeout(max(timeout, 0.001)))
            response = await client.send(request, stream=True)
            try:
                content = await read_bounded(response, self.url, self.max_bytes)
            finally:
                await response.aclose()
        except httpx.TimeoutException as exc:
            raise Timeout(f"no answer from {self.url} in time ({type(exc).__name__})") from None
        except httpx.TransportError as exc:
            raise APIConnectionError(f"cannot reach {self.url}: {type(exc).__name__}: {exc}") from None
        finally:
            slots.put_nowait(client)
        if response.status_code >= 300:
            raise status_error(response.status_code, content[:500].decode("utf-8", "replace"), response)
        try:
            data = self._decode(content)
        except msgspec.DecodeError as exc:
            raise InternalServerError(f"the endpoint answered with no JSON: {exc}", response) from None
        if not isinstance(data, dict):
            raise InternalServerError("the endpoint answered with JSON that is not an object", response)
        return data

    async def aclose(self) -> None:
        """Close the running event loop's connections."""
        slots = self._pools.pop(asyncio.get_running_loop(), None)
        while slots is not None and not slots.empty():
            client = slots.get_nowait()
            if client is not None:
                await client.aclose()
