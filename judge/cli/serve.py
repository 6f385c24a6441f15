"""`judge serve`: the HTTP service and the review page, run with uvicorn.

Binding beyond loopback needs a bearer token: `JUDGE_API_TOKEN` must be set, or the command refuses
to start (one line, exit 2). With a token set, every /v1 and /review request must carry it. The
listening socket is bound here, before uvicorn starts: a port in use (or one this user may not bind)
is one line naming it and exit 2.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
from pathlib import Path

import typer

from judge.cli.common import error_line
from judge.errors import JudgeInputError, UsageError, require_extra

TOKEN_ENV = "JUDGE_API_TOKEN"  # as judge.service.TOKEN_ENV; fastapi is imported only to serve



def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve anywhere


def check_bind(host: str, token: str | None) -> None:
    """A UsageError when `host` is beyond loopback and no token is set."""
    if not is_loopback(host) and not token:
        raise UsageError(f"refusing to listen on {host} without a token: set {TOKEN_ENV} (clients then send "
                         "'Authorization: Bearer <token>'), or bind to 127.0.0.1", field="--host")


def bind(host: str, port: int) -> socket.socket:
    """The listening socket on host:port (as uvicorn binds it); a UsageError naming the port when it
    is in use or not allowed."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            why = f"port {port} on {host} is already in use (another server listens there); pick another with --port"
        elif exc.errno == errno.EACCES:
            why = f"port {port} on {host} needs privileges this user lacks; pick one above 1023 with --port"
        else:
            why = f"cannot listen on {host}:{port}: {exc.strerror or exc}"
        raise UsageError(why, field="--port") from None
    sock.set_inheritable(True)
    return sock


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind. Beyond loopback, "
                             f"{TOKEN_ENV} must be set."),
    port: int = typer.Option(8321, "--port", min=0, max=65535, help="Port to bind."),
    reports: Path | None = typer.Option(None, "--reports", help="Folder of `judge grade --json` "
                                           "reports: the review page's queue."),
    labels: Path | None = typer.Option(None, "--labels", help="Labels JSONL the review page "
                                          "appends answers to (never rewritten)."),
    scenarios: list[Path] = typer.Option([], "--scenarios", help="Folder of scenario files, for the "
                                         "ledger entries of the review page (repeatable; the trace's "
                                         "folder and its parent are searched too)."),
    annotator: str | None = typer.Option(None, "--annotator", help="Default annotator name on the "
                                            "review page (default: $JUDGE_ANNOTATOR, else $USER)."),
    config: Path | None = typer.Option(None, "--config", help="A TOML file holding a [tool.judge] "
                                          "table (default: $JUDGE_CONFIG, else the nearest pyproject.toml)."),
    max_body: int = typer.Option(32 * 1024 * 1024, "--max-body", min=1, help="Largest request body in "
                                 "bytes (413 beyond it)."),
    workers: int = typer.Option(2, "--workers", min=1, max=64, help="Grading worker processes: each grades "
                                "one request at a time, so no request holds up another or /healthz."),
    deadline: float = typer.Option(120.0, "--deadline", min=0.1, help="Seconds one request's grading may "
                                   "take; beyond it the request gets 503 and its worker is replaced."),
    allowed_host: list[str] = typer.Option([], "--allowed-host", help="A Host name clients reach the "
                                           "server by (repeatable; `*.example.org`, or `*` for any). "
                                           "Default: $JUDGE_ALLOWED_HOSTS, else the loopback names and "
                                           "the --host address; other Host headers get 400."),
) -> None:
    """Serve the HTTP API (POST /v1/grade, ...; docs at /docs) and the review page (/review)."""
    token = os.environ.get(TOKEN_ENV) or None
    try:
        require_extra("service", "judge serve")
        check_bind(host, token)
        if reports is not None and not reports.is_dir():
            raise UsageError("no such folder", file=str(reports), field="--reports")
        if labels is not None and labels.is_dir():
            raise UsageError("is a folder; give the labels JSONL file to append to", file=str(labels),
                             field="--labels")
        for folder in scenarios:
            if not folder.is_dir():
                raise UsageError("no such folder", file=str(folder), field="--scenarios")
        refuse_labels_that_are_not_labels(labels)
        sock = bind(host, port)
    except JudgeInputError as exc:
        error_line(str(exc))
        raise typer.Exit(2) from None

    import uvicorn

    from judge.service import create_app
    from judge.service.app import HOSTS_ENV
    from judge.service.http import LOOPBACK_HOSTS

    hosts = list(allowed_host) or [h.strip() for h in os.environ.get(HOSTS_ENV, "").split(",") if h.strip()]
    if not hosts:
        hosts = [*LOOPBACK_HOSTS, *([host] if host not in ("0.0.0.0", "::", "") else [])]
    app = create_app(reports_dir=reports, labels_path=labels, token=token or "", max_body=max_body,
                     config_file=config, scenarios=scenarios, annotator=annotator, allowed_hosts=hosts,
                     workers=workers, deadline_s=deadline)
    shown = f"[{host}]" if ":" in host else host
    port = sock.getsockname()[1]
    typer.echo(f"judge serve: http://{shown}:{port}  (API docs /docs, review page /review"
               f"{', bearer token required' if token else ''})", err=True)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="info", server_header=False))
    server.run(sockets=[sock])


def refuse_labels_that_are_not_labels(labels: Path | None) -> None:
    """Answers are appended to the labels file, so it may sit anywhere (inside --scenarios or --reports
    too, across restarts); only a file that is a scenario or a report (YAML or JSON, not JSONL) is refused."""
    if labels is not None and labels.suffix.lower() in (".yaml", ".yml", ".json"):
        raise UsageError("is a YAML or JSON file, not a labels JSONL: answers are appended as JSON lines",
                         file=str(labels), field="--labels")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
