"""ASGI middleware of the HTTP service: trusted hosts, security headers, the exit-code header and the
request body limit (bearer-token auth and the review page's sign-in: judge/service/auth.py).

- TrustedHosts answers 400 to a request whose Host header is not one the server was told it is
  (loopback names by default): a page elsewhere cannot reach a server without a token through a
  DNS name it points at 127.0.0.1 (DNS rebinding).
- SecurityHeaders adds `X-Content-Type-Options: nosniff` to every answer, and to the review page a
  Content-Security-Policy (its own script and style only, no frames) and `X-Frame-Options: DENY`.

Both are plain ASGI (no BaseHTTPMiddleware), so a refused request costs no body read: a request over
the limit by its Content-Length is answered 413 before a byte of its body is read, and a body sent
without one (chunked) is counted as it streams and refused once it crosses the limit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from fastapi import HTTPException
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

EXIT_HEADER = "X-Judge-Exit-Code"

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
REVIEW_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
              "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


def host_name(header: str) -> str:
    """The host of a Host header, without its port, lower case (`[::1]:8321` -> `::1`)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class TrustedHosts:
    """400 for a Host header outside `hosts` (`*` allows any; `*.example.org` a domain's names)."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...]) -> None:
        self.app = app
        self.any = "*" in hosts
        self.hosts = {host_name(h) for h in hosts if not h.startswith("*.")}
        self.suffixes = tuple(h[1:].lower() for h in hosts if h.startswith("*."))

    def allowed(self, host: str) -> bool:
        return self.any or host in self.hosts or (bool(self.suffixes) and host.endswith(self.suffixes))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.any:
            await self.app(scope, receive, send)
            return
        host = host_name(Headers(scope=scope).get("host", ""))
        if self.allowed(host):
            await self.app(scope, receive, send)
            return
        await send_json(send, 400, {"detail": f"Host {host!r} is not a name this server answers to "
                                              "(judge serve --allowed-host NAME)"})


class ExitCodes:
    """Every answer says how the CLI would have exited: a grade or audit sets X-Judge-Exit-Code itself
    (0, 1, 3); any other 4xx is the caller's input or usage (2), any 5xx a bug of ours (4). Outermost,
    so the refusals of the other middleware (host, token, body size) carry it too."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_exit_code(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                headers = list(message.get("headers", []))
                if not any(k.lower() == _EXIT_KEY for k, _ in headers):
                    headers.append((_EXIT_KEY, b"2" if message["status"] < 500 else b"4"))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_exit_code)


_EXIT_KEY = EXIT_HEADER.lower().encode()


class SecurityHeaders:
    """nosniff on every answer; a CSP and no framing on the review page."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        review = scope.get("path", "").startswith("/review")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() not in (b"x-content-type-options", b"x-frame-options")]
                headers.append((b"x-content-type-options", b"nosniff"))
                if review:
                    headers += [(b"content-security-policy", REVIEW_CSP.encode()), (b"x-frame-options", b"DENY"),
                                (b"referrer-policy", b"no-referrer")]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


async def send_json(send: Send, status: int, body: dict,
                    headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    data = json.dumps(body).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode()), *headers]})
    await send({"type": "http.response.body", "body": data})


def too_large_detail(limit: int) -> str:
    return f"request body larger than the limit of {limit} bytes (judge serve --max-body)"


class BodyLimit:
    """413 for a request body over `max_body` bytes, by Content-Length or while streaming."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length")
        if length is not None and length.strip().isdigit() and int(length) > self.max_body:
            await send_json(send, 413, {"detail": too_large_detail(self.max_body)},
                            [(b"connection", b"close")])
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    # FastAPI re-raises an HTTPException from the body read; it renders as JSON.
                    raise HTTPException(413, too_large_detail(self.max_body))
            return message

        await self.app(scope, limited, send)
