"""Judge configuration: `[tool.judge]` in a TOML file (pyproject.toml or a `--config` file).

```toml
[tool.judge]
default = "local"
[tool.judge.judges.gpt]
backend = "llm"
model = "openai/gpt-4o-mini"
```
Where it is read from, first found wins: the `config_file` argument (`--config FILE`), the
`JUDGE_CONFIG` environment variable, the nearest pyproject.toml above the working directory. A
project with no `[tool.judge]` table still has the built-in offline judge `local`.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judge.errors import ConfigError
from judge.registry import BACKENDS as BACKEND_ENTRY_POINTS
from judge.registry import Registry


def _backend_of(spec: Any, where: str) -> Any:
    if not isinstance(getattr(spec, "name", None), str) or not callable(getattr(spec, "make", None)):
        raise ConfigError(f"{where} is no judge backend: it needs `SPEC` with a `name` and `make(config)` "
                          "(judge.judges.spec.BackendSpec)")
    return spec


BACKENDS: Registry[Any] = Registry("judge backend", BACKEND_ENTRY_POINTS, check=_backend_of,
                                   name_of=lambda spec: spec.name, order=lambda spec: getattr(spec, "position", 1000))
"""The registered judge backends, by name (`backend = "..."` in a judge's table): the built-in ones
(judge.judges.backends.BUILT_IN, handed in by the composition root, judge/__init__.py, on first use),
then the `judge.backends` entry points. This layer imports no backend."""

MODES = ("tools", "tools_strict", "json", "json_schema", "md_json", "strict")
DEFAULT_PROMPT = "goal-fidelity@3"


class JudgeConfig(BaseModel):
    """One `[tool.judge.judges.NAME]` table."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="default", description="the table name; set by the loader")
    backend: str = Field(description="a registered judge backend: llm, embedding, replay, or a plug-in's")
    model: str | None = Field(default=None, description="litellm model string, or an embedding model name/path")
    prompt: str = DEFAULT_PROMPT
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    samples: int = Field(default=1, ge=1, le=50, description=">1: majority verdict per key")
    seed: int | None = None
    api_base: str | None = None
    api_key_env: str | None = Field(default=None, description="environment variable holding the API key")
    max_concurrency: int = Field(default=8, ge=1, le=1024)
    timeout_s: float = Field(default=60.0, gt=0, description="deadline of one whole call, retries included")
    max_tokens: int | None = Field(default=None, ge=1, description="answer bound; unset: 128 + 160 per asked key")
    max_retries: int = Field(default=2, ge=0, le=10, description="re-asks after an invalid answer")
    transport_retries: int = Field(default=4, ge=0, le=20, description="retries on 429, 5xx, timeouts")
    backoff_s: float = Field(default=1.0, ge=0, description="first backoff delay; doubles per retry")
    mode: str = Field(default="tools", description=(
        "how the answer schema is sent: `tools` (a forced function tool) or `strict` (OpenAI structured outputs: "
        "response_format json_schema, strict), direct to OpenAI-compatible endpoints, each falling back to the "
        "forms an endpoint takes; or an instructor mode (tools_strict, json, json_schema, md_json)"))
    window_tokens: int = Field(default=1000, ge=200, description=(
        "split slices whose request, as sent (messages and the schema it carries), exceeds this"))
    cache: bool | str = Field(default=True, description=(
        "the verdict cache: true (the SQLite file in the cache folder, one machine), false (off) or a Redis "
        "URL, redis://HOST:PORT/DB (one cache shared by the machines of a cluster; the `redis` extra)"))
    path: str | None = Field(default=None, description="replay: the recorded verdicts (JSONL)")
    params: str | None = Field(default=None, description="embedding only: its thresholds, ID@N (params/ID/vN.json)")
    options: dict[str, Any] = Field(default_factory=dict, description="backend-specific settings")
    authority: Literal["calibrated", "binding", "advisory"] = Field(default="calibrated", description=(
        "how far the judge decides: `calibrated` (binding only with a current, certified calibration "
        "record for its fingerprint), `binding` (always), `advisory` (never: its violations are flagged)"))

    @model_validator(mode="after")
    def _fits_backend(self) -> JudgeConfig:
        if isinstance(self.cache, str) and (problem := check_redis_url(self.cache)):
            raise ValueError(problem)
        if self.mode.lower() not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        self.mode = self.mode.lower()
        backends = BACKENDS.specs()
        if self.backend not in backends:
            raise ValueError(f"unknown judge backend {self.backend!r}; known: {', '.join(backends)}")
        check = getattr(backends[self.backend], "check_config", None)
        problem = check(self) if check is not None else None
        if problem:
            raise ValueError(problem)
        return self


def check_redis_url(url: str) -> str | None:
    """Why `url` is not a usable Redis URL for `cache` (None when it is): a scheme, a host, a numeric DB."""
    from urllib.parse import urlsplit

    parts, problem = urlsplit(url), None
    db, port = parts.path.strip("/"), parts.netloc.rpartition(":")[2] if ":" in parts.netloc else ""
    if parts.scheme not in ("redis", "rediss", "unix"):
        problem = "cache must be true, false or a Redis URL (redis://HOST:PORT/DB), not a {!r} URL"
    elif parts.scheme != "unix" and (not parts.hostname or (db and not db.isdigit()) or (port and not port.isdigit())):
        problem = "the Redis URL of cache needs a host, a number for its port and a number for its database"
    return problem.format(parts.scheme or "schemeless") if problem else None  # never the URL: it may hold a password


BUILTIN_JUDGES: dict[str, dict[str, Any]] = {
    "local": {"backend": "embedding", "model": "all-MiniLM-L6-v2"},
}


def project_root(start: str | Path | None = None) -> Path | None:
    """The nearest folder holding a pyproject.toml, walking up from `start` (default: the cwd)."""
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    return None


def config_source(config_file: str | Path | None = None) -> Path | None:
    """The TOML file the configuration comes from (None: no file, built-in judges only). A file named
    by `config_file` or $JUDGE_CONFIG must hold a `[tool.judge]` table: else it is the wrong file."""
    env = os.environ.get("JUDGE_CONFIG")
    if config_file is None and not env:
        root = project_root()
        return root / "pyproject.toml" if root else None
    path = Path(config_file if config_file is not None else str(env))
    if not path.is_file():
        raise ConfigError("config file not found" if config_file is not None else
                          "config file named by JUDGE_CONFIG not found", file=str(path))
    _judge_table(path, required=True)
    return path


# The limits of every reader (judge.model.limits, which this layer may not import): a file read
# whole is at most 64 MB, and nesting deeper than 200 levels is refused.
MAX_CONFIG_BYTES = 64 * 1024 * 1024
MAX_CONFIG_DEPTH = 200
_TOML_AT = re.compile(r"^(?P<what>.*?) \(at line (?P<line>\d+), column (?P<column>\d+)\)$")


def _depth(value: Any) -> int:
    stack, deepest = [(value, 0)], 0
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file, read within the limits above; a ConfigError names the file and line."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=str(path)) from None
    if len(raw) > MAX_CONFIG_BYTES or b"\x00" in raw[:8192]:
        raise ConfigError("binary file, expected TOML" if b"\x00" in raw[:8192] else
                          f"larger than the limit of {MAX_CONFIG_BYTES >> 20} MB", file=str(path))
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_AT.match(str(exc))
        if found is None:
            raise ConfigError(f"cannot read TOML: {exc}", file=str(path)) from None
        raise ConfigError(f"cannot read TOML: {found['what']} (column {found['column']})", file=str(path),
                          line=int(found["line"])) from None
    except RecursionError:
        data = None
    if data is None or _depth(data) > MAX_CONFIG_DEPTH:
        raise ConfigError(f"nested deeper than {MAX_CONFIG_DEPTH} levels (the limit of every reader)",
                          file=str(path))
    return data


# The keys of `[tool.judge]` (docs/configuration.md); any other is an error naming the nearest one.
TABLE_KEYS = ("default", "judges", "stale", "review", "on_judge_error", "log_dir")


def unknown_key(key: str, known: Any, path: Path | None, where: str) -> ConfigError:
    """The error for a key no table of that kind has: its line where it can be found, and the
    nearest known key (difflib) as a suggestion."""
    import difflib

    nearest = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    hint = f" (did you mean {nearest[0]!r}?)" if nearest else f" (known: {', '.join(known)})"
    line = None
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        found = re.search(rf"^[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*=", text, re.MULTILINE)
        line = text.count("\n", 0, found.start()) + 1 if found else None
    return ConfigError(f"unknown key {key!r}{hint}", file=str(path) if path else None, line=line,
                       field=f"{where}.{key}")


def _judge_table(path: Path | None, *, required: bool = False) -> dict[str, Any]:
    """`[tool.judge]` of `path` ({} when it has none, unless `required`: a file named to hold it)."""
    if path is None:
        return {}
    tool = read_toml(path).get("tool")
    table = tool.get("judge") if isinstance(tool, dict) else None
    if table is None and (required or tool is not None and not isinstance(tool, dict)):
        raise ConfigError("no [tool.judge] table: a config file holds judge's settings there (docs/configuration.md)",
                          file=str(path), field="tool.judge")
    table = {} if table is None else table
    if not isinstance(table, dict):
        raise ConfigError("[tool.judge] must be a table", file=str(path), field="tool.judge")
    for key in table:
        if key not in TABLE_KEYS:
            raise unknown_key(key, TABLE_KEYS, path, "tool.judge")
    return table


def _build(name: str, raw: Any, path: Path | None) -> JudgeConfig:
    where = f"tool.judge.judges.{name}"
    if not isinstance(raw, dict):
        raise ConfigError("must be a table", file=str(path) if path else None, field=where)
    raw = dict(raw, name=name)
    if raw.get("path") and path is not None and not Path(raw["path"]).is_absolute():
        raw["path"] = str((path.parent / raw["path"]).resolve())
    try:
        return JudgeConfig.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        if err["type"] == "extra_forbidden" and len(err["loc"]) == 1:
            known = [f for f in JudgeConfig.model_fields if f != "name"]
            raise unknown_key(str(err["loc"][0]), known, path, where) from None
        field = ".".join([where, *(str(p) for p in err["loc"])])
        raise ConfigError(err["msg"], file=str(path) if path else None, field=field) from exc


def configured_judges(*, config_file: str | Path | None = None
                      ) -> tuple[dict[str, tuple[Any, Path | None]], str, Path | None]:
    """Every configured judge's raw table by name, with the file it comes from (the built-ins have
    none; a file's table of the same name replaces one), the default judge's name and the file read."""
    path = config_source(config_file)
    table = _judge_table(path)
    tables = table.get("judges", {})
    if not isinstance(tables, dict):
        raise ConfigError("must be a table of judges", file=str(path), field="tool.judge.judges")
    judges: dict[str, tuple[Any, Path | None]] = {n: (raw, None) for n, raw in BUILTIN_JUDGES.items()}
    judges.update({n: (raw, path) for n, raw in tables.items()})
    default = table.get("default") or "local"
    if not isinstance(default, str):
        raise ConfigError("must be a judge name", file=str(path), field="tool.judge.default")
    return judges, default, path


def load_judge_config(name: str | None = None, *, config_file: str | Path | None = None) -> JudgeConfig:
    """The configuration of judge `name` (default: `[tool.judge].default`, else `local`)."""
    judges, default, path = configured_judges(config_file=config_file)
    name = name or default
    if name not in judges:
        raise ConfigError(f"unknown judge {name!r}; configured: {', '.join(sorted(judges))}",
                          file=str(path) if path else None)
    raw, source = judges[name]
    return _build(name, raw, source)


OnJudgeError = Literal["inconclusive", "ignore"]


class GradePolicy(BaseModel):
    """`[tool.judge]` settings that decide what a stale calibration, a review mark or a judge error
    does to a run."""

    stale: Literal["warn", "error"] = "warn"
    review: Literal["report", "fail"] = "report"
    on_judge_error: OnJudgeError = "inconclusive"


def grade_policy(*, config_file: str | Path | None = None) -> GradePolicy:
    path = config_source(config_file)
    table = _judge_table(path)
    try:
        return GradePolicy(stale=table.get("stale", "warn"), review=table.get("review", "report"),
                           on_judge_error=table.get("on_judge_error", "inconclusive"))
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(err["msg"], file=str(path) if path else None,
                          field=f"tool.judge.{err['loc'][0]}") from None


LOG_DIR_ENV = "JUDGE_LOG_DIR"
DEFAULT_LOG_DIR = ".judge/runs"


def run_log_dir(*, config_file: str | Path | None = None) -> tuple[Path, str]:
    """Where `judge grade` keeps the JSON report of every grade, and where that choice comes from:
    $JUDGE_LOG_DIR, else `[tool.judge] log_dir` (relative to the file that sets it), else
    `.judge/runs` in the project (the folder of the nearest pyproject.toml, else the cwd)."""
    env = os.environ.get(LOG_DIR_ENV)
    if env:
        return Path(env).expanduser(), f"env {LOG_DIR_ENV}"
    path = config_source(config_file)
    value = _judge_table(path).get("log_dir")
    if value is not None:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError("must be a folder path (a string)", file=str(path), field="tool.judge.log_dir")
        folder = Path(value).expanduser()
        return (folder if folder.is_absolute() or path is None else path.parent / folder), str(path)
    return (project_root() or Path.cwd()) / DEFAULT_LOG_DIR, "built-in default"


def resolve_api_key(config: JudgeConfig) -> str | None:
    """The API key named by `api_key_env` (None when the judge needs none); unset is a ConfigError."""
    env = config.api_key_env
    if not env:
        return None
    value = os.environ.get(env)
    if not value:
        raise ConfigError(f"environment variable {env} (api_key_env of judge {config.name!r}) is not set")
    return value


# ---------------------------------------------------------------- what is in effect, and from where

SECRET_WORDS = {"key", "apikey", "token", "secret", "password", "passwd", "credential", "credentials", "auth"}
MASK = "****"


class Setting(BaseModel):
    """One effective setting (`judge config show`): its dotted key, value and where it comes from
    (a file, an environment variable, a built-in judge or the built-in default)."""

    model_config = ConfigDict(extra="forbid")

    key: str
    value: Any = None
    source: str


def _masked(field: str, value: Any) -> Any:
    """Secrets never shown: options whose name says key/token/secret/password, credentials in a URL."""
    if isinstance(value, dict):
        return {k: _masked(str(k), v) for k, v in value.items()}
    words = set(re.split(r"[^a-z0-9]+", field.lower()))
    if words & SECRET_WORDS and field != "api_key_env" and value not in (None, ""):
        return MASK
    if isinstance(value, str) and "://" in value and "@" in value.split("://", 1)[1].split("/", 1)[0]:
        scheme, rest = value.split("://", 1)
        return f"{scheme}://{MASK}@{rest.split('@', 1)[1]}"
    return value


def effective_settings(*, config_file: str | Path | None = None) -> list[Setting]:
    """Every setting `judge` would use here, with where each comes from, secrets masked (an API key
    is shown only as set or not set)."""
    path = config_source(config_file)
    table = _judge_table(path)
    origin = str(path) if path else None
    chosen_by = "--config" if config_file is not None else "env JUDGE_CONFIG" if os.environ.get("JUDGE_CONFIG") \
        else "the nearest pyproject.toml"
    out = [Setting(key="config file", value=origin or "(none: built-in settings only)",
                   source=chosen_by if path else "no pyproject.toml above the current folder")]
    judges, default, _ = configured_judges(config_file=config_file)
    out.append(Setting(key="tool.judge.default", value=default,
                       source=origin if origin and "default" in table else "built-in default"))
    for name, fallback in GradePolicy.model_fields.items():
        out.append(Setting(key=f"tool.judge.{name}", value=table.get(name, fallback.default),
                           source=origin if origin and name in table else "built-in default"))
    folder, where = run_log_dir(config_file=config_file)
    out.append(Setting(key="tool.judge.log_dir", value=str(folder), source=where))
    cache = os.environ.get("JUDGE_CACHE_DIR")
    out.append(Setting(key="cache folder", value=cache or "(the user cache folder)",
                       source="env JUDGE_CACHE_DIR" if cache else "built-in default"))
    for name in sorted(judges):
        raw, source = judges[name]
        raw = raw if isinstance(raw, dict) else {}
        given = str(source) if source else f"built-in judge {name!r}"
        for field, info in JudgeConfig.model_fields.items():
            if field == "name":
                continue
            value = raw.get(field, info.get_default(call_default_factory=True))
            out.append(Setting(key=f"tool.judge.judges.{name}.{field}", value=_masked(field, value),
                               source=given if field in raw else "built-in default"))
        env = raw.get("api_key_env")
        if isinstance(env, str) and env:
            out.append(Setting(key=f"tool.judge.judges.{name}.api_key", value=f"{MASK} (set)" if os.environ.get(env)
                               else "(not set)", source=f"env {env}"))
        out += [Setting(key=f"tool.judge.judges.{name}.{k}", value=_masked(k, v), source=given)
                for k, v in raw.items() if k not in JudgeConfig.model_fields]
    return out
