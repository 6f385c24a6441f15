"""A judge's fingerprint: what makes two judges the same judge (DESIGN.md: prompt id, version and
content hash + backend + model + sampling settings). Every verdict, report and calibration record
carries it; calibration records are keyed on its canonical JSON.

One model for every backend, each using the fields that identify it, written with exactly those
(judge.model.parts.SetFields): an llm judge's `prompt`, `sampling` and `render_version`; the
embedding judge's `weights_sha256`, `rule_version`, `code_sha256`, `consistency_model_sha256`, `params`
(and `prompt: null`); a replay of verdicts recorded by several judges its `path` and `fingerprints`.
The JSON is the contract: fields are added, never renamed. The built-in backends build theirs in
judge.judges.prompted (the llm-backed calls) and judge.judges.local; any other judge returns the
same fields as a dict and `as_fingerprint` validates them (an unknown field is a ConfigError: a
plug-in puts what else identifies it under `identity`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from judge.model.parts import SetFields


class PromptFingerprint(SetFields):
    """The prompt a judge asks: id, version and the sha256 of its file (judge.prompts; every built-in
    backend sets all three)."""

    id: str
    version: int | None = None
    sha256: str | None = None


class ParamsFingerprint(SetFields):
    """The decision thresholds an embedding judge uses: id, version and the sha256 of their file
    (judge.judges.local.params)."""

    id: str
    version: int
    sha256: str


class Sampling(SetFields):
    """How an llm-backed call samples; each kind of call records the settings its answers depend on."""

    temperature: int | float | None = Field(default=None, description=(
        "as configured (an int stays an int: the canonical JSON a record is keyed on must not change)"))
    samples: int | None = Field(default=None, description="answers per window, merged by majority")
    seed: int | None = None
    mode: str | None = Field(default=None, description="how the response schema travels (tools, strict, ...)")
    window_tokens: int | None = Field(default=None, description="the largest request a slice is split into")


class JudgeFingerprint(SetFields):
    """What identifies a judge (module docs). `name` is the configured name, added by the grade."""

    name: str | None = Field(default=None, description="the judge's name in [tool.judge.judges]")
    backend: str = Field(description="llm, embedding, replay, or a third-party backend's name")
    model: str | None = None
    weights_sha256: str | None = Field(default=None, description="embedding: the model weights' sha256")
    rule_version: str | None = Field(default=None, description="embedding: the version of its decision rules")
    code_sha256: str | None = Field(default=None, description="embedding: sha256 of the code that decides")
    consistency_model_sha256: str | None = Field(default=None, description=(
        "embedding: sha256 of the fact-consistency model's weights"))
    params: ParamsFingerprint | None = Field(default=None, description=(
        "embedding: the version of its decision thresholds (params/<id>/v<N>.json) and its file's sha256"))
    prompt: PromptFingerprint | str | None = None
    sampling: Sampling | None = None
    render_version: int | None = Field(default=None, description="the version of how a request is rendered")
    path: str | None = Field(default=None, description="replay: the recorded file, when its lines disagree")
    fingerprints: list[str] | None = Field(default=None, description=(
        "replay: the distinct fingerprints its lines carry, as canonical JSON"))
    identity: dict[str, Any] | None = Field(default=None, description=(
        "a third-party backend's own settings its verdicts depend on (judge.backends plug-ins): "
        "the fields above are the built-in backends'"))

    def dump(self) -> dict[str, Any]:
        """The fingerprint as JSON data (what `Judge.fingerprint()` returns and records store)."""
        return self.model_dump(mode="json")

    def named(self, name: str | None) -> JudgeFingerprint:
        """The same fingerprint with the configured name first (what a report carries)."""
        if not name:
            return self
        return type(self).model_validate({"name": name, **self.dump()})


def as_fingerprint(value: JudgeFingerprint | dict[str, Any], *, judge: str | None = None) -> JudgeFingerprint:
    """A judge's fingerprint as the model; a dict with a field the model does not have, or a wrong
    type, is a ConfigError naming the field (a third-party judge's `fingerprint()`)."""
    if isinstance(value, JudgeFingerprint):
        return value
    try:
        return JudgeFingerprint.model_validate(value)
    except ValidationError as exc:
        from judge.errors import ConfigError

        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or None
        who = f"judge {judge!r}" if judge else "the judge"
        raise ConfigError(f"{who} returned a fingerprint the report cannot carry: {error['msg']} "
                          "(fields: see judge.model.JudgeFingerprint)",
                          field=f"fingerprint.{where}" if where else None) from exc


class ReportJudge(JudgeFingerprint):
    """A grade report's `judge`: the judge's name and fingerprint, and how far the grade trusted it
    (judge.grade.trust)."""

    authority: Literal["calibrated", "binding", "advisory"] | None = Field(default=None, description=(
        "as configured: calibrated, binding or advisory"))
    binding: bool | None = Field(default=None, description="whether its violations decided keys")
    binding_reason: str | None = None
    calibration_record: str | None = Field(default=None, description="the record consulted, or null")
