"""Judge answers bounded in bytes before they are parsed.

An answer bounded by `max_tokens` is a few kilobytes; a broken or hostile endpoint may send hundreds
of megabytes (a 200 MB body read whole and parsed took the process from 0.33 to 2.19 GB). Every
answer is read as a stream and refused, unread past the bound, with `AnswerTooLarge` (a judge error
that names the bound, never retried):
- the direct client (judge.judges.http) reads its responses with `read_bounded`;
- litellm's OpenAI-compatible provider (models `openai/...`, through `options.transport = "litellm"`
  or an instructor mode) is handed an OpenAI SDK client whose httpx transport is `BoundedTransport`
  (`OpenAIClients`);
- litellm's providers that read with litellm's own HTTP handler and take it as `client`
  (`HANDLER_PROVIDERS`: Anthropic's, Gemini's and Ollama's chat API, models `anthropic/...`,
  `gemini/...`, `ollama_chat/...`) are handed one whose transport is
  `BoundedTransport` (`LitellmHandlers`). Other litellm providers read with clients judge does not
  reach (an SDK of their own, or a handler judge has not been shown they take): their answers are not
  bounded here.
The bound is judge.model.limits.MAX_ANSWER_BYTES. The wire bytes are counted: both clients ask for no
compression (`accept-encoding: identity`), so a compressed answer cannot grow past the bound once read.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from typing import Any

from judge.model.limits import MAX_ANSWER_BYTES

HANDLER_PROVIDERS = ("anthropic/", "gemini/", "ollama_chat/")
"""Model prefixes of the litellm providers that take litellm's AsyncHTTPHandler as `client` (each
held to the bound by a test against a local server: tests/test_llm_bounds.py)."""


class AnswerTooLarge(Exception):
    """An answer longer than the bound: refused before it was read whole."""

    def __init__(self, url: str, limit: int, response: Any = None) -> None:
        super().__init__(f"the answer from {url} exceeds the bound of {limit:,} bytes (judge.model.limits."
                         "MAX_ANSWER_BYTES): refused unread")
        self.limit = limit
        self.response = response


def too_large(exc: BaseException | None) -> AnswerTooLarge | None:
    """The AnswerTooLarge behind `exc`, however the clients between wrapped it (their causes and contexts)."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, AnswerTooLarge):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def announced_too_large(response: Any, limit: int) -> bool:
    """The response says (Content-Length) it is longer than `limit`."""
    announced = response.headers.get("content-length", "")
    return announced.isdigit() and int(announced) > limit


async def read_bounded(response: Any, url: str, limit: int = MAX_ANSWER_BYTES) -> bytes:
    """The body of a streamed httpx response, decoded, at most `limit` bytes; AnswerTooLarge past that."""
    if announced_too_large(response, limit):
        raise AnswerTooLarge(url, limit, response)
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise AnswerTooLarge(url, limit, response)
        chunks.append(chunk)
    return b"".join(chunks)


def bounded_transport(limit: int = MAX_ANSWER_BYTES) -> Any:
    """An httpx async transport whose responses stop at `limit` bytes (module docs)."""
    import httpx

    class BoundedStream(httpx.AsyncByteStream):
        def __init__(self, inner: Any, url: str) -> None:
            self.inner, self.url = inner, url

        async def __aiter__(self) -> AsyncIterator[bytes]:
            size = 0
            async for chunk in self.inner:
                size += len(chunk)
                if size > limit:
                    raise AnswerTooLarge(self.url, limit)
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    class BoundedTransport(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            response = await self.inner.handle_async_request(request)
            url = str(request.url)
            if announced_too_large(response, limit):
                await response.aclose()
                raise AnswerTooLarge(url, limit)
            return httpx.Response(response.status_code, headers=response.headers, request=request,
                                  stream=BoundedStream(response.stream, url), extensions=response.extensions)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return BoundedTransport()


class PerLoopClients:
    """One bounded client per event loop, made on first use by `make` (an httpx client belongs to the
    loop that opened it), closed by `aclose` from that loop. Each client has an async `close()`."""

    def __init__(self, limit: int = MAX_ANSWER_BYTES) -> None:
        self.limit = limit
        self._clients: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def make(self) -> Any:
        raise NotImplementedError

    def get(self) -> Any:
        """The running loop's client (made on first use)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self.make()
        return client

    async def aclose(self) -> None:
        """Close the running loop's client."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()


class OpenAIClients(PerLoopClients):
    """OpenAI SDK clients for litellm's OpenAI-compatible provider, over a bounded transport."""

    def __init__(self, api_base: str | None, api_key: str | None, limit: int = MAX_ANSWER_BYTES) -> None:
        super().__init__(limit)
        self.api_base, self.api_key = api_base, api_key

    def make(self) -> Any:
        import httpx
        import openai

        http = httpx.AsyncClient(transport=bounded_transport(self.limit), timeout=None,
                                 headers={"accept-encoding": "identity"})
        return openai.AsyncOpenAI(api_key=self.api_key or "no-key", base_url=self.api_base, max_retries=0,
                                  http_client=http)


class LitellmHandlers(PerLoopClients):
    """litellm's own AsyncHTTPHandlers over a bounded transport, for the providers of HANDLER_PROVIDERS."""

    def make(self) -> Any:
        from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

        handler = AsyncHTTPHandler(transport=bounded_transport(self.limit))
        handler.client.headers["accept-encoding"] = "identity"
        return handler
