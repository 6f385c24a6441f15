"""`judge serve`: the HTTP service and the review page, run with uvicorn.

Binding beyond loopback needs a bearer token: `JUDGE_API_TOKEN` must be set, or the command refuses
to start (one line, exit 2). With a token set, every /v1 and /review request must carry it.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import typer

from judge.cli.common import error_line, refuse_overwriting_inputs
from judge.errors import JudgeInputError, UsageError

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
    allowed_host: list[str] = typer.Option([], "--allowed-host", help="A Host name clients reach the "
                                           "server by (repeatable; `*.example.org`, or `*` for any). "
                                           "Default: $JUDGE_ALLOWED_HOSTS, else the loopback names and "
                                           "the --host address; other Host headers get 400."),
) -> None:
    """Serve the HTTP API (POST /v1/grade, ...; docs at /docs) and the review page (/review)."""
    token = os.environ.get(TOKEN_ENV) or None
    try:
        check_bind(host, token)
        if reports is not None and not reports.is_dir():
            raise UsageError("no such folder", file=str(reports), field="--reports")
        if labels is not None and labels.is_dir():
            raise UsageError("is a folder; give the labels JSONL file to append to", file=str(labels),
                             field="--labels")
        for folder in scenarios:
            if not folder.is_dir():
                raise UsageError("no such folder", file=str(folder), field="--scenarios")
        refuse_overwriting_inputs([labels], [reports, *scenarios])  # labels are appended to
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
                     config_file=config, scenarios=scenarios, annotator=annotator, allowed_hosts=hosts)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"judge serve: http://{shown}:{port}  (API docs /docs, review page /review"
               f"{', bearer token required' if token else ''})", err=True)
    uvicorn.run(app, host=host, port=port, log_level="info", server_header=False)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
