"""`judge view [DIR]`: serve, on loopback only, an index of every grade and suite report under a folder
(default: the run log, .judge/runs/), each rendered as the page `judge grade --html` writes
(judge.service.viewer).

Exit codes: 0 when stopped (Ctrl-C); 2 for a folder that does not exist or a host beyond loopback
(reports hold trace text: `judge view` never serves them to the network).
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import typer

from judge.cli.common import err, user_errors
from judge.cli.serve import is_loopback
from judge.errors import UsageError, require_extra


def check_view_host(host: str) -> None:
    """A UsageError for any address but a loopback one."""
    if not is_loopback(host):
        raise UsageError(f"refusing to serve reports on {host}: judge view listens on loopback only "
                         "(127.0.0.1, ::1 or localhost), since reports hold trace text", field="--host")


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror}", field="--port") from None
    sock.listen(64)
    return sock


@user_errors
def view_cmd(
    folder: Path | None = typer.Argument(None, help="Folder of JSON reports (`judge grade --json`, `judge suite "
                                            "--json`), searched recursively (default: the run log, .judge/runs/)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Loopback address to listen on (127.0.0.1, ::1 or "
                             "localhost); any other is refused."),
    port: int = typer.Option(8322, "--port", min=0, max=65535, help="Port to listen on (0: any free port)."),
    open_browser: bool = typer.Option(False, "--open", help="Open the index in the default web browser."),
    config: Path | None = typer.Option(None, "--config", metavar="FILE", help="A TOML file holding a "
                                          "[tool.judge] table, for the run log's folder (log_dir)."),
) -> None:
    """Serve an index of every report under FOLDER on loopback, each opened as the page `judge grade
    --html` writes; its traces are read (redacted) from beside the reports. Without FOLDER: the run
    log, every grade kept (`judge runs list`). Ctrl-C stops it."""
    require_extra("service", "judge view")
    check_view_host(host)
    if folder is None:
        from judge.config import run_log_dir

        folder = run_log_dir(config_file=config)[0]
        if not folder.is_dir():
            raise UsageError("no runs logged here yet (every `judge grade` adds one; or name a folder of "
                             "reports)", file=str(folder))
    if not folder.is_dir():
        raise UsageError("no such folder", file=str(folder))
    sock = _bind(host, port)
    import uvicorn

    from judge.service.viewer import create_viewer_app

    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}/"
    err.print(f"judge view: {url}  (reports under {folder}; Ctrl-C stops)", markup=False, highlight=False)
    if open_browser:
        import webbrowser

        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    server_config = uvicorn.Config(create_viewer_app(folder), log_level="warning", server_header=False)
    uvicorn.Server(server_config).run(sockets=[sock])


def register(app: typer.Typer) -> None:
    """Add `view` to the `judge` typer app."""
    app.command("view")(view_cmd)
