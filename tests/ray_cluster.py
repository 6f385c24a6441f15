"""A local Ray head on 127.0.0.1 (`ray start --head --block`), for the Ray engine's tests: started by the
test module, stopped by its process id (SIGTERM to `ray start --block` stops the processes it started),
skipped with a reason when Ray is not installed. Token authentication is off for this loopback-only
head; usage statistics are off."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from redis_server import free_port, missing

START_TIMEOUT_S = 180  # a loaded 2-core machine takes 20-60 s


@dataclass
class RayHead:
    process: subprocess.Popen
    address: str
    log: Path


def _ray_binary() -> str | None:
    try:
        import ray  # noqa: F401
    except ImportError:
        return None
    return shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")


def ray_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the head and of a driver connecting to it."""
    return {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", **(extra or {})}


def start_head(folder: Path, env: dict[str, str], cpus: int = 2) -> RayHead:
    binary = _ray_binary()
    if binary is None:
        missing("Ray is not installed (pip install 'judge-drift[ray]'; .ci/run installs it)")
    port = free_port()
    log = folder / "ray-head.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [binary, "start", "--head", "--block", "--port", str(port), "--node-ip-address", "127.0.0.1",
             "--num-cpus", str(cpus), "--include-dashboard", "false", "--disable-usage-stats",
             "--object-store-memory", str(100 * 1024 * 1024), "--temp-dir", str(folder / "ray")],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    head = RayHead(process, f"127.0.0.1:{port}", log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while b"Ray runtime started" not in log.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            text = log.read_text(errors="replace")[-2000:]
            stop_head(head)
            raise RuntimeError(f"the Ray head did not start:\n{text}")
        time.sleep(0.5)
    return head


def stop_head(head: RayHead) -> None:
    """Stop the head this module started, by its process id (and its process group, which it leads)."""
    if head.process.poll() is None:
        head.process.send_signal(signal.SIGTERM)
        try:
            head.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(head.process.pid, signal.SIGKILL)
            head.process.wait(10)
