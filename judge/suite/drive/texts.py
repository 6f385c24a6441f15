"""The words `judge run` says to the agent on its own account (texts.yaml beside this module): the
turns a stressor inserts, the summary requests, the faults of a failed action."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field

from judge.model import Strict

TEXTS_FILE = Path(__file__).with_name("texts.yaml")


class Distraction(Strict):
    question: str
    resume: str


class Contradiction(Strict):
    permission: str
    stale: str


class Texts(Strict):
    """texts.yaml, validated."""

    version: int
    distance: list[str] = Field(min_length=1)
    distraction: Distraction
    correction: str
    contradiction: Contradiction
    failed: dict[str, dict[str, str]]
    compaction_request: str
    handoff_request: str
    handoff_to: str


class _Blank(dict):
    """Placeholders the scenario cannot fill stay as they are written."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def fill(template: str, **values: Any) -> str:
    """`template` with its {placeholders} filled (a value's own braces are left alone)."""
    return template.format_map(_Blank({k: v if isinstance(v, str) else _shown(v) for k, v in values.items()}))


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


@functools.lru_cache(maxsize=1)
def texts() -> Texts:
    """The packaged texts."""
    return Texts.model_validate(yaml.safe_load(TEXTS_FILE.read_text(encoding="utf-8")))


@functools.lru_cache(maxsize=1)
def texts_sha256() -> str:
    """The sha256 of texts.yaml (every driven trace's header carries it)."""
    return hashlib.sha256(TEXTS_FILE.read_bytes()).hexdigest()
