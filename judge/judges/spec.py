"""What the grader knows about one judge backend: its spec, declared once beside the backend.

A backend is one module of judge.judges.backends (or a third-party module registered in the
`judge.backends` entry-point group) holding `SPEC = BackendSpec(...)`: its name (`backend = "..."`
in a judge's `[tool.judge.judges.NAME]` table), what its configuration needs, how to build the judge
(imports of heavy libraries stay inside `make`), and what else it can do besides grading keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judge.config import BACKENDS
from judge.errors import ConfigError, with_article

if TYPE_CHECKING:
    from judge.config import JudgeConfig
    from judge.judges.base import Judge


@dataclass(frozen=True)
class BackendSpec:
    """One judge backend.

    `make(config)` builds the judge (a judge.judges.base.Judge); `check_config(config)` returns what
    the configuration lacks, or None. Capabilities: `audits_while_grading` (the grade audits the
    run's summaries with the judge's own model, offline), `prompted` (an LLM that answers versioned
    prompts: the summary audit's `--judge` and model-assisted drafts use it), `shows_prompt` (its
    configuration's `prompt` is part of what it is)."""

    name: str
    make: Callable[[JudgeConfig], Judge]
    description: str
    check_config: Callable[[JudgeConfig], str | None] | None = None
    audits_while_grading: bool = False
    prompted: bool = False
    asked_only_when_needed: bool = False
    """Ask the judge only when a key needs it (its model is costly to load: judge.grade.consult)."""
    extra: str | None = None
    """The extra of judge-drift its libraries come with (`local`, `llm`): building the judge without
    them is one line naming it (judge.errors.require_extra), not an ImportError from inside."""
    position: int = 1000


def backend_specs() -> dict[str, BackendSpec]:
    """Every registered backend's spec, by name."""
    return BACKENDS.specs()


def backend_spec(name: str) -> BackendSpec:
    """The spec of one backend (a ConfigError names the unknown one and the known ones)."""
    specs = backend_specs()
    if name not in specs:
        raise ConfigError(f"unknown judge backend {name!r}; known: {', '.join(specs)}")
    return specs[name]


def require_prompted(config: JudgeConfig, command: str) -> None:
    """A ConfigError unless the judge is a prompted LLM with a model (what `command` needs)."""
    if not backend_spec(config.backend).prompted or not config.model:
        raise ConfigError(f"judge {config.name!r} is {with_article(repr(config.backend))} judge: `{command}` needs an "
                          "llm judge (backend = \"llm\" with a `model`)")
