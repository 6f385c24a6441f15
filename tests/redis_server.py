"""A `redis-server` (Debian's `redis-server` package; `.ci/run` installs it) on a free loopback port, for the
shared verdict cache's tests: started by the test itself, stopped by its process id, skipped with a reason
when the binary or the Python client is missing. Nothing is saved to disk."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass

import pytest


def missing(reason: str):
    """Skip: the tool is absent here; under CI (CI=true) fail instead, since .ci/run installs it."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " under CI")
    pytest.skip(reason)


@dataclass
class RedisServer:
    process: subprocess.Popen
    port: int

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def client(self, db: int = 0):
        import redis

        return redis.Redis.from_url(self.url(db))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis(folder) -> RedisServer:
    """Start redis-server on 127.0.0.1 (no persistence, its working folder `folder`); wait for PING."""
    binary = shutil.which("redis-server")
    if binary is None:
        missing("redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)")
    try:
        import redis
    except ImportError:
        missing("the redis client is not installed (pip install 'judge-drift[redis]'; .ci/run installs it)")
    port = free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                "--dir", str(folder), "--daemonize", "no", "--protected-mode", "yes"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=1)
    deadline = time.monotonic() + 20
    while True:
        try:
            if client.ping():
                break
        except redis.ConnectionError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            stop_redis(RedisServer(process, port))
            raise RuntimeError(f"redis-server did not start on port {port}")
        time.sleep(0.05)
    client.close()
    return RedisServer(process, port)


def stop_redis(server: RedisServer) -> None:
    """Stop the server this test started (by its process id)."""
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(10)


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server
    stop_redis(server)
