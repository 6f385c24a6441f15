"""The answer model of `ledger-draft` prompts, built per request so that an answer can only cite what
it was shown: `evidence_event` is an enum of the user-message and tool-result ids of the trace, a
rule's `tool` an enum of the known tools, and every `quote` must be words of the cited event
(instructor re-asks with the validation error when it is not)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, create_model, field_validator, model_validator

from judge.checks import spec_for, specs
from judge.errors import with_article

ENTRY_CLASSES = ("goal", "constraint", "permission", "fact", "completion", "uncertainty")
SENSITIVITIES = ("normal", "costly", "safety-critical")
DELTA_OPS = ("set", "revoke", "complete")
KEY_PATTERN = r"^[a-z][a-z0-9_]{0,59}$"


def specs_drafted() -> dict:
    """The specs of the rule kinds a draft may propose (each kind's DraftSpec), in registry order."""
    return {check: spec for check, spec in specs().items() if spec.draft is not None}


def normalise(text: str) -> str:
    """Text as quotes are compared: case, whitespace and escapes folded."""
    return " ".join(text.replace("\\n", " ").replace('\\"', '"').lower().split())


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Cited(_Closed):
    @field_validator("quote", check_fields=False)
    @classmethod
    def _quoted_from_the_event(cls, quote: str, info: ValidationInfo) -> str:
        texts = (info.context or {}).get("texts") or _TEXTS.get(cls.__name__.split("_", 1)[-1], {})
        event = info.data.get("evidence_event")
        if texts and isinstance(event, str) and event in texts and normalise(quote) not in texts[event]:
            raise ValueError(f"the quote is not in event {event}: copy the words exactly from that event")
        return quote


class _RuleBase(_Cited):
    if TYPE_CHECKING:  # the fields every Rule_<digest> model defines (_answer_model); not fields here,
        check: str     # so the models' field order (the schema the judge is shown) stays as it is
        tool: str | None
        arg: str | None
        values: list[str]

    @model_validator(mode="after")
    def _fields_of_the_check(self) -> _RuleBase:
        check = self.check
        draft = spec_for(check).draft
        if draft is not None and draft.needs_tool and self.tool is None:
            raise ValueError(f"{with_article(check)} rule needs `tool`")
        if draft is not None and draft.needs_arg_and_values and (not self.arg or not self.values):
            raise ValueError(f"{with_article(check)} rule needs `arg` and the allowed `values`")
        return self


# The texts a request's quotes are checked against, by the request's model name (pydantic builds
# validators per class, so the texts live beside them, keyed by a digest in the class name).
_TEXTS: dict[str, dict[str, str]] = {}


def _literal(values: Sequence[str]) -> Any:
    return Literal[tuple(dict.fromkeys(values))]


def answer_model(texts: dict[str, str], tools: Sequence[str]) -> type[BaseModel]:
    """The answer model for one request: `texts` maps each shown event id to its shown text."""
    import hashlib

    digest = hashlib.sha256(repr((sorted(texts.items()), sorted(tools))).encode()).hexdigest()[:16]
    _TEXTS[digest] = {k: normalise(v) for k, v in texts.items()}
    return _answer_model(tuple(texts), tuple(sorted(tools)), digest)


@lru_cache(maxsize=256)
def _answer_model(ids: tuple[str, ...], tools: tuple[str, ...], digest: str) -> type[BaseModel]:
    evidence = (_literal(ids), Field(description="id of the user message or tool result it comes from"))
    quote = (str, Field(min_length=1, max_length=400, description="words copied exactly from that event"))
    key = (str, Field(pattern=KEY_PATTERN, description="snake_case key; an offline key to refer to it"))
    tool: Any = (_literal(tools) | None if tools else Literal[None] | None, Field(default=None))
    entry = create_model(f"Entry_{digest}", __base__=_Cited, key=key,
                         entry_class=(_literal(ENTRY_CLASSES), ...), value=(str, Field(min_length=1, max_length=400)),
                         sensitivity=(_literal(SENSITIVITIES), ...), evidence_event=evidence, quote=quote)
    delta = create_model(f"Delta_{digest}", __base__=_Cited, op=(_literal(DELTA_OPS), ...), key=key,
                         value=(str | None, Field(default=None, description="the new value of a set")),
                         evidence_event=evidence, quote=quote)
    drafted = specs_drafted()
    values_help = "; ".join(spec.draft.values_help for spec in drafted.values() if spec.draft.values_help)
    rule = create_model(f"Rule_{digest}", __base__=_RuleBase, check=(_literal(tuple(drafted)), ...), key=key,
                        tool=tool, arg=(str | None, Field(default=None)),
                        values=(list[str], Field(default_factory=list, max_length=20, description=values_help)),
                        evidence_event=evidence, quote=quote)
    model = create_model(f"LedgerDraft_{digest}", __base__=_Closed,
                         entries=(list[entry], Field(default_factory=list, max_length=60)),
                         deltas=(list[delta], Field(default_factory=list, max_length=60)),
                         rules=(list[rule], Field(default_factory=list, max_length=60)))
    model.__doc__ = "Proposed entries, deltas and rules, each citing the event and words it comes from."
    return model


def digest_of(model: type[BaseModel]) -> str:
    return re.sub(r"^LedgerDraft_", "", model.__name__)
