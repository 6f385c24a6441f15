"""Bearer-token auth of the HTTP service, the review page's sign-in, and an access log without tokens.

With a token configured, every /v1 and /review request needs `Authorization: Bearer <token>`. A
browser cannot send that header when it opens a page, so the review page signs in with a form: an
unauthenticated browser asking for /review gets the sign-in page (401), whose form POSTs the token in
its body to /review/sign-in; that sets an HttpOnly, SameSite=Strict cookie and redirects to /review,
whose page and label posts then carry the cookie. The token is never put in a URL (a query string
is written to the access log, the browser's history and any proxy's log): `/review?token=` signs
nothing in, and `AccessLogWithoutTokens` blanks `token=` in logged request lines all the same.
/healthz, the OpenAPI docs and the page's static files stay open (they hold no data).
"""

from __future__ import annotations

import hmac
import html
import logging
import re
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from judge.service.http import send_json

TOKEN_COOKIE = "judge_token"
PROTECTED = ("/v1/", "/review")
OPEN = ("/review/static/",)
SIGN_IN = "/review/sign-in"
MAX_FORM = 4096
_PAGE = Path(__file__).resolve().parent / "templates" / "sign_in.html"


def _token_in(scope: Scope) -> tuple[str | None, str | None]:
    """(bearer token of the Authorization header, token of the review cookie)."""
    headers = Headers(scope=scope)
    bearer = None
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        bearer = value.strip()
    cookie = None
    if "cookie" in headers:
        jar = SimpleCookie()
        try:
            jar.load(headers["cookie"])
        except Exception:  # a malformed Cookie header is no token
            jar = SimpleCookie()
        if TOKEN_COOKIE in jar:
            cookie = unquote(jar[TOKEN_COOKIE].value)
    return bearer, cookie


async def _form_token(receive: Receive) -> str | None:
    """The `token` field of a small urlencoded form body (None past MAX_FORM bytes)."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > MAX_FORM:
            return None
        if not message.get("more_body", False):
            break
    return (parse_qs(body.decode("latin-1")).get("token") or [None])[0]


async def _sign_in_page(send: Send, status: int, message: str | None = None) -> None:
    note = f'<p class="error" role="alert">{html.escape(message)}</p>' if message else ""
    data = _PAGE.read_text(encoding="utf-8").replace("{message}", note).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/html; charset=utf-8"),
                            (b"content-length", str(len(data)).encode()), (b"cache-control", b"no-store"),
                            (b"www-authenticate", b"Bearer")]})
    await send({"type": "http.response.body", "body": data})


class BearerAuth:
    """The token check of every /v1 and /review request, and the review page's sign-in (above)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token or ""  # "": no token, so no sign-in

    def _ok(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(candidate.encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not self.token or not path.startswith(PROTECTED) or path.startswith(OPEN):
            await self.app(scope, receive, send)
            return
        if path == SIGN_IN:
            await self._sign_in(scope, receive, send)
            return
        bearer, cookie = _token_in(scope)
        if self._ok(bearer) or (path.startswith("/review") and self._ok(cookie)):
            await self.app(scope, receive, send)
            return
        browser = "text/html" in Headers(scope=scope).get("accept", "")
        if path == "/review" and browser:
            in_url = "token" in parse_qs(scope.get("query_string", b"").decode("latin-1"))
            await _sign_in_page(send, 401, "A token in the URL is not accepted (it would be written to access "
                                           "logs): sign in here." if in_url else None)
            return
        detail = ("missing or wrong bearer token: send 'Authorization: Bearer <token>' (the value of "
                  "JUDGE_API_TOKEN the server runs with)")
        if path.startswith("/review"):
            detail += f"; in a browser, sign in at /review (the form POSTs the token to {SIGN_IN})"
        await send_json(send, 401, {"detail": detail}, [(b"www-authenticate", b"Bearer")])

    async def _sign_in(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            await _sign_in_page(send, 200)
            return
        if not self._ok(await _form_token(receive)):
            await _sign_in_page(send, 401, "Wrong token.")
            return
        cookie = f"{TOKEN_COOKIE}={quote(self.token, safe='')}; HttpOnly; SameSite=Strict; Path=/review"
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", b"/review"), (b"set-cookie", cookie.encode()),
                                (b"content-length", b"0"), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": b""})


_TOKEN_IN_QUERY = re.compile(r"([?&](?:token|access_token)=)[^&\s\"]*", re.IGNORECASE)


class AccessLogWithoutTokens(logging.Filter):
    """Blanks `token=` values in the request lines uvicorn's access log writes."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_TOKEN_IN_QUERY.sub(r"\1[REDACTED]", a) if isinstance(a, str) else a
                                for a in record.args)
        return True


def guard_access_log() -> None:
    """Install AccessLogWithoutTokens on uvicorn's access logger (once)."""
    logger = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, AccessLogWithoutTokens) for f in logger.filters):
        logger.addFilter(AccessLogWithoutTokens())
