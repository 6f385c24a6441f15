"""The HTTP service (FastAPI) over the same library as the CLI: `create_app` builds it, `judge serve`
runs it with uvicorn.

Endpoints: `POST /v1/grade` (the report `judge grade --json` writes), `POST /v1/audit-summary` (the
summary audit of `judge audit-summary --json`), `GET /v1/judges`, `GET /v1/schema[/{name}]`, `GET /healthz`, the
OpenAPI docs at `/docs` and `/redoc` (served from the fastapi-offline package's files: no CDN), and the review page at
`/review` (judge/review_web.py).

Errors a client causes are JSON `{"detail": "<one line>"}` whose text is the CLI's message for the
same input (file, line, field): 422 for bad content, 401 without the token, 404 for an unknown
schema, 413 over the body limit, 503 when grading one request takes longer than the deadline. Grading
runs in worker processes (judge/service/workers.py), each request under the deadline, so no request
can hold up `/healthz` or another client.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from judge import __version__
from judge.errors import JudgeInputError
from judge.service.auth import BearerAuth, guard_access_log
from judge.service.grade import GradeRequest, JudgePool
from judge.service.http import (
    EXIT_HEADER,
    LOOPBACK_HOSTS,
    BodyLimit,
    ExitCodes,
    SecurityHeaders,
    TrustedHosts,
)
from judge.service.summary import AuditRequest, audit_request
from judge.service.workers import DEFAULT_DEADLINE_S, DEFAULT_WORKERS, DeadlineExceeded, GradeWorkers

DEFAULT_MAX_BODY = 32 * 1024 * 1024
TOKEN_ENV = "JUDGE_API_TOKEN"
HOSTS_ENV = "JUDGE_ALLOWED_HOSTS"


class ErrorBody(BaseModel):
    detail: str
    errors: list[dict[str, Any]] | None = None


ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "A token is configured and the request lacks it."},
    413: {"model": ErrorBody, "description": "The body is over the limit."},
    422: {"model": ErrorBody, "description": "Bad input or configuration: one line naming the file, line and "
                                             f"field ({EXIT_HEADER}: 2)."},
    500: {"model": ErrorBody, "description": f"Internal error: one line; the traceback is in the server log "
                                             f"({EXIT_HEADER}: 4)."},
    503: {"model": ErrorBody, "description": "Grading took longer than the server's deadline (judge serve "
                                             f"--deadline), or every worker stayed busy that long ({EXIT_HEADER}: 2)."},
}


def create_app(*, reports_dir: str | Path | None = None, labels_path: str | Path | None = None,
               token: str | None = None, max_body: int = DEFAULT_MAX_BODY,
               config_file: str | Path | None = None, scenarios: Iterable[str | Path] = (),
               annotator: str | None = None, allowed_hosts: Iterable[str] | None = None,
               workers: int = DEFAULT_WORKERS, deadline_s: float = DEFAULT_DEADLINE_S) -> FastAPI:
    """The service. `token`: every /v1 and /review request needs it as a bearer token; None reads
    $JUDGE_API_TOKEN (so `uvicorn judge.service:create_app --factory` is guarded too), "" turns auth
    off. `allowed_hosts`: the Host names it answers to; None reads $JUDGE_ALLOWED_HOSTS (comma
    separated), else the loopback names. `reports_dir`, `labels_path`, `scenarios`, `annotator`:
    the review page's inputs. `workers`: grading processes; `deadline_s`: the longest one request's
    grading may take (503 beyond it)."""
    from judge.service.review import review_router

    if token is None:
        token = os.environ.get(TOKEN_ENV) or None
    if allowed_hosts is None:
        from_env = [h.strip() for h in os.environ.get(HOSTS_ENV, "").split(",") if h.strip()]
        allowed_hosts = from_env or LOOPBACK_HOSTS

    from fastapi_offline import FastAPIOffline

    # FastAPIOffline: a FastAPI app whose /docs (Swagger UI) and /redoc load their scripts from files
    # the fastapi-offline package ships, served by the app itself: they work with no network.
    app = FastAPIOffline(title="judge", version=__version__, static_url="/docs/assets",
                  summary="Grade multi-turn agent runs for state drift against a reviewed ledger.",
                  description="The JSON report of `POST /v1/grade` is the one `judge grade --json` "
                              "writes. Send `Authorization: Bearer <token>` when the server runs "
                              "with JUDGE_API_TOKEN.")
    app.state.pool = JudgePool(config_file)
    app.state.workers = GradeWorkers(config_file, size=workers, deadline_s=deadline_s)
    app.router.on_startup.append(app.state.workers.warm)
    app.router.on_shutdown.append(app.state.workers.close)
    app.add_middleware(BodyLimit, max_body=max_body)
    app.add_middleware(BearerAuth, token=token or None)
    guard_access_log()  # a token in a request line is blanked in uvicorn's access log
    app.add_middleware(SecurityHeaders)
    app.add_middleware(TrustedHosts, hosts=tuple(allowed_hosts))
    app.add_middleware(ExitCodes)  # added last: runs first, so every refusal carries the exit code
    _error_handlers(app)
    _api_routes(app)
    _add_report_schema(app)  # the report model in the OpenAPI components, for /v1/grade's $ref
    app.include_router(review_router(reports_dir=reports_dir, labels_path=labels_path,
                                     scenarios=[Path(s) for s in scenarios], annotator=annotator))
    return app


def _error_handlers(app: FastAPI) -> None:
    """422 (exit code 2) for what a client or the configuration got wrong; 500 (exit code 4, one line,
    the traceback in the server's log) for a bug. Each carries X-Judge-Exit-Code as the CLI would exit."""
    import logging

    from calibration.errors import CalibrationInputError

    async def input_error(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422, headers={EXIT_HEADER: "2"})

    # Starlette types a handler as taking any Exception; each is registered for its own class only.
    async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = [{"type": e.get("type"), "loc": [str(p) for p in e.get("loc", ())], "msg": e.get("msg")}
                  for e in exc.errors()]
        return JSONResponse({"detail": _one_line(exc.errors()), "errors": errors}, status_code=422,
                            headers={EXIT_HEADER: "2"})

    async def deadline(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, DeadlineExceeded)
        return JSONResponse({"detail": exc.message}, status_code=503, headers={EXIT_HEADER: "2"})

    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        from judge.errors import one_line

        logging.getLogger("judge.service").error("internal error on %s", request.url.path, exc_info=exc)
        detail = one_line(f"internal error: {type(exc).__name__}: {exc}")[:300] + " (traceback in the server log)"
        return JSONResponse({"detail": detail}, status_code=500, headers={EXIT_HEADER: "4"})

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        if isinstance(exc.__cause__, RecursionError):  # FastAPI's body parse hit the stack
            from judge.model import depth_message

            return JSONResponse({"detail": f"request: body {depth_message()}"}, status_code=422)
        return await http_exception_handler(request, exc)

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(JudgeInputError, input_error)
    app.add_exception_handler(CalibrationInputError, input_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(DeadlineExceeded, deadline)
    app.add_exception_handler(Exception, internal_error)


_UNION_TAG = re.compile(r"^(str|int|float|bool|none|(list|dict)\[.*\])$")
_UNION_HELP = {
    "scenario": "must be a JSON object (the scenario) or the text of a scenario file (YAML or JSON)",
    "traces.N": "must be a list of JSON objects (the run header, then the events) or the JSONL text of a trace",
}


def _one_line(errors: Sequence[Any]) -> str:
    """`request: traces.0: Input should be a valid list` (the first problem, as the CLI names fields)."""
    from judge.errors import one_line

    if not errors:
        return "request: invalid"
    err = errors[0]
    if err.get("type") == "json_invalid":
        return one_line(f"request: body is not valid JSON: {err.get('ctx', {}).get('error', err.get('msg'))}")
    loc = [str(p) for p in err.get("loc", ()) if p != "body"]
    message = "unknown field" if err.get("type") == "extra_forbidden" else err.get("msg", "invalid")
    message = message.removeprefix("Value error, ")
    tag = next((i for i, part in enumerate(loc) if _UNION_TAG.match(part)), None)
    if tag is not None:  # a value that fits no member of a union: say what the field takes
        loc = loc[:tag]
        name = (loc[0] if len(loc) == 1 else f"{loc[0]}.N") if loc else ""
        message = _UNION_HELP.get(name, message)
        more = ""
    else:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    field = ".".join(loc) or "(body)"
    return one_line(f"request: {field}: {message}{more}")


def _api_routes(app: FastAPI) -> None:
    @app.get("/healthz", tags=["service"])
    def healthz() -> dict[str, str]:
        """Liveness: no auth, no work."""
        return {"status": "ok", "version": __version__}

    @app.post("/v1/grade", tags=["grading"], response_model=None,
              responses={200: {"description": "The grade report (as `judge grade --json`). Header "
                               f"{EXIT_HEADER}: the CLI's exit code (0 passed, 1 a veto or failing run, "
                               "3 inconclusive).",
                               "content": {"application/json": {"schema": {
                                   "$ref": "#/components/schemas/GradeReport"}}}}, **ERRORS})
    async def grade(body: GradeRequest, request: Request) -> Response:
        """Grade one or more traces of one scenario; the report of `judge grade --json`.

        Each run's `outcome` is pass, fail or inconclusive (a key only a judge could decide got no
        verdict, or a safety-critical key was flagged); `veto` names the safety-critical violation
        that vetoed it. The header gives the exit code the CLI would return."""
        # In a worker process, under the deadline: the event loop only waits on its pipe.
        text, code = await run_in_threadpool(request.app.state.workers.grade, body.model_dump())
        return Response(text, media_type="application/json", headers={EXIT_HEADER: str(code)})

    @app.post("/v1/audit-summary", tags=["grading"], response_model=None, responses=ERRORS)
    async def audit_summary(body: AuditRequest) -> Response:
        """Audit a compaction or handoff summary against the ledger after `after_turn`: one
        finding per entry (as `judge audit-summary --json`); header: the CLI's exit code."""
        text, code = await run_in_threadpool(audit_request, body)
        return Response(text, media_type="application/json", headers={EXIT_HEADER: str(code)})

    @app.get("/v1/judges", tags=["judges"], responses=ERRORS)
    async def judges(request: Request) -> dict[str, Any]:
        """The configured judges: backend, model, fingerprint and calibration status
        (`current`, `stale` or `missing`, with the reasons) from the calibration records."""
        return await run_in_threadpool(request.app.state.pool.describe)

    @app.get("/v1/schema", tags=["formats"])
    def schema_names() -> dict[str, list[str]]:
        """The names `GET /v1/schema/{name}` knows."""
        from judge.api import format_schemas

        return {"schemas": list(format_schemas())}

    @app.get("/v1/schema/{name}", tags=["formats"],
             responses={404: {"model": ErrorBody, "description": "Unknown format name."}})
    def schema(name: str) -> JSONResponse:
        """The JSON Schema of a file format, as `judge schema NAME` prints it."""
        from judge.api import format_schemas
        from judge.errors import UsageError
        from judge.model import json_schema

        try:
            return JSONResponse(json_schema(name, format_schemas()))
        except UsageError as exc:
            return JSONResponse({"detail": exc.message}, status_code=404)


def _add_report_schema(app: FastAPI) -> None:
    from fastapi.openapi.utils import get_openapi
    from pydantic import TypeAdapter

    from judge.model import GradeReport

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, summary=app.summary,
                                 description=app.description, routes=app.routes)
            report = TypeAdapter(GradeReport).json_schema(
                by_alias=True, ref_template="#/components/schemas/{model}")
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.update(report.pop("$defs", {}))
            components["GradeReport"] = report
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
