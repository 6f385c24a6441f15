"""A real LLM for the tests marked `llm`: llama.cpp's OpenAI-compatible server (xllamacpp, the `local-llm`
extra) with Qwen2.5-Coder-0.5B-Instruct, started by scripts/local_llm.py in a subprocess on a free loopback
port, once per test session, and stopped by its process id.

The weights are fetched into the model cache when absent (`$JUDGE_MODEL_CACHE`, else the user cache;
`.ci/run` fetches them before the suite). Skipped with a reason when xllamacpp is missing or the weights
cannot be fetched; under CI (CI=true) that fails instead, since `make install` and `.ci/run` provide both.
The model tests plumbing (requests, JSON answers, usage), not verdicts: it is at chance as a judge.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from redis_server import free_port, missing

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "local_llm.py"
MODEL = "qwen2.5-coder-0.5b"
FETCH_TIMEOUT_S = 1800  # a first fetch downloads ~490 MB
START_TIMEOUT_S = 180   # the 0.5B model loads in 2-12 s; a loaded machine is slower


def script():
    """scripts/local_llm.py, imported once (scripts/ is not a package)."""
    if "local_llm_script" not in sys.modules:
        spec = importlib.util.spec_from_file_location("local_llm_script", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        sys.modules["local_llm_script"] = module  # its dataclasses look their module up by name
        spec.loader.exec_module(module)
    return sys.modules["local_llm_script"]


@dataclass
class LocalLLM:
    process: subprocess.Popen
    port: int
    model: str
    log: Path

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (an `api_base` for litellm, a `base_url` for openai)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def start_local_llm(folder: Path, model: str = MODEL) -> LocalLLM:
    """Fetch the weights when absent, start llama-server on 127.0.0.1 and wait until /health answers."""
    if importlib.util.find_spec("xllamacpp") is None:
        missing("xllamacpp is not installed (pip install -e '.[local-llm]'; make install has it)")
    fetched = subprocess.run([sys.executable, str(SCRIPT), "--model", model, "fetch"], capture_output=True,
                             text=True, timeout=FETCH_TIMEOUT_S, stdin=subprocess.DEVNULL)
    if fetched.returncode != 0:
        missing(f"the {model} weights could not be fetched: {fetched.stderr.strip()[-400:]}")
    port = free_port()
    log = folder / "llama-server.log"
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen([sys.executable, str(SCRIPT), "--model", model, "serve", "--port", str(port)],
                                   stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = LocalLLM(process, port, model, log)
    try:
        script().wait_until_ready(f"http://127.0.0.1:{port}", START_TIMEOUT_S, alive=lambda: process.poll() is None)
    except TimeoutError as error:
        stop_local_llm(server)
        raise RuntimeError(f"{error}; its log ends:\n{server.log_tail()}") from None
    return server


def stop_local_llm(server: LocalLLM) -> None:
    """Stop the server this session started (by its process id)."""
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(30)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(10)


_SERVER: LocalLLM | None = None


@pytest.fixture(scope="session")
def local_llm(tmp_path_factory):
    """One server per test session. Each test module that imports this fixture gets a fixture of its own
    from pytest, so the server is kept here, started by the first and reused by the others (all of them
    are torn down at the session's end; stopping is idempotent)."""
    global _SERVER
    if _SERVER is None or _SERVER.process.poll() is not None:
        _SERVER = start_local_llm(tmp_path_factory.mktemp("local-llm"))
    yield _SERVER
    stop_local_llm(_SERVER)
