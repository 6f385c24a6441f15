"""Errors a user can cause. The CLI renders each as one line and exits 2; bugs keep their tracebacks."""

from __future__ import annotations

import re

# Characters that would break a message over several lines (str.splitlines() breaks on all of them).
_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def one_line(text: str) -> str:
    """Escape line breaks and other control characters a file's content may put into a message."""
    return _BREAKS.sub(lambda m: repr(m.group())[1:-1], text)


def with_article(word: str) -> str:
    """`an 'assistant'`, `a 'tool-call'`: the indefinite article a word (quoted or not) takes."""
    first = word.lstrip("'\"`")[:1].lower()
    return f"{'an' if first and first in 'aeiou' else 'a'} {word}"


class JudgeInputError(Exception):
    """Bad input: names the file, the line and the field where it can."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.field = field

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = str(self.file)
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        field = f"{self.field}: " if self.field else ""
        return one_line(f"{where}{field}{self.message}")


class FixtureError(JudgeInputError):
    """A scenario (ledger fixture) that breaks the transition rules or names missing keys."""


class TraceError(JudgeInputError):
    """A trace line that is not a valid event, or events out of order."""


class ConfigError(JudgeInputError):
    """A judge configuration that cannot be used."""


class UsageError(JudgeInputError):
    """Arguments that do not fit together."""


# The optional parts of judge-drift: each extra of pyproject.toml and the top-level modules it brings
# that judge imports (tests/test_extras.py holds the two in step). The first extra that lists a module
# is the one a missing module is blamed on when no entry point said more (missing_extra).
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "local": ("numpy", "onnxruntime", "tokenizers", "all_minilm_l6_v2"),
    "sentence-transformers": ("sentence_transformers", "torch", "transformers"),
    "llm": ("openai", "instructor", "litellm", "tiktoken", "httpx", "h2"),
    "service": ("fastapi", "fastapi_offline", "uvicorn", "starlette"),
    "calibration": ("scipy", "statsmodels", "sklearn", "matplotlib"),
    "ray": ("ray",),
    "redis": ("redis",),
}
# what an extra brings besides its own modules (pyproject.toml: sentence-transformers includes local)
EXTRA_ALSO: dict[str, tuple[str, ...]] = {
    "sentence-transformers": ("numpy",),
    "service": ("jinja2",),
    "calibration": ("numpy",),
    "drive": ("openai",),
}


class MissingExtraError(UsageError):
    """An optional part of judge-drift that is not installed: names the extra that brings it."""

    def __init__(self, what: str, extra: str, missing: list[str]) -> None:
        super().__init__(f"{what} needs the {extra} extra: pip install 'judge-drift[{extra}]'")
        self.extra = extra
        self.missing = missing


def extra_modules(extra: str) -> tuple[str, ...]:
    """Every top-level module the extra must make importable."""
    return EXTRA_MODULES.get(extra, ()) + EXTRA_ALSO.get(extra, ())


def _importable(module: str) -> bool:
    import importlib.util
    import sys

    if module in sys.modules:
        return sys.modules[module] is not None  # None: an import of it was blocked (and would fail)
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_extra(extra: str, what: str) -> None:
    """A MissingExtraError (exit 2, one line) naming `extra` when one of its modules is not installed;
    `what` is the command or part that needs it (`judge serve`). Modules are found, not imported."""
    missing = [module for module in extra_modules(extra) if not _importable(module)]
    if missing:
        raise MissingExtraError(what, extra, missing)


def missing_extra(exc: BaseException, what: str) -> MissingExtraError | None:
    """The MissingExtraError for an import that failed because an extra is not installed (its module is
    one an extra brings), else None: a failed import of anything else is a bug and keeps its traceback."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.partition(".")[0]
    for extra in (*EXTRA_MODULES, *EXTRA_ALSO):
        if top in extra_modules(extra):
            return MissingExtraError(what, extra, [top])
    return None
