"""`judge align`: a new locked prompt version of an llm judge, made from the dev split's
disagreements with the labels, measured against the old one on the held-out test split.

Steps: the labelled cases and their requests (judge.grade.cases; split by the labels' `split`
field, else by scenario hash); the judge's answers on both splits; its dev disagreements chosen as
few-shot examples (judge.grade.align.examples); the new version written and locked beside the old
(judge.grade.align.version); the same judge with the new version asked the test cases; both
versions compared on test (calibration.compare_judges: accuracy, kappa, exact McNemar, flipped
cases; TPR and TNR with exact intervals). Test cases never choose an example. The judge's
configuration is never edited: the user points it at the new version.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.config import JudgeConfig
from judge.errors import UsageError
from judge.grade.align.examples import Example, choose, examples_section, kind_of
from judge.grade.align.version import write_version
from judge.grade.calibration import labels_sha
from judge.grade.cases import CaseSet, LabelledCase, ask, case_set, evidence_of, unique, verdict_of


@dataclass
class AlignResult:
    """What `align_judge` did: the examples it chose, the version it wrote and both versions'
    figures on the test split (`comparison`: a calibration Comparison, old = A, new = B)."""

    judge: str
    old_ref: str
    split_source: str
    dev_cases: int
    test_cases: int
    disagreements: int
    examples: list[Example] = field(default_factory=list)
    new_ref: str | None = None
    path: Path | None = None
    comparison: Any = None
    rates: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # version -> (TPR, TNR) on test
    leaking: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def no_worse(self) -> bool:
        """The new version is at least as accurate as the old on the test split."""
        c = self.comparison
        return c is None or c.accuracy_b >= c.accuracy_a


def _answers(judge: Any, cases: CaseSet, chosen: list[LabelledCase]) -> dict[str, tuple[str | None, str | None]]:
    requests = unique(cases.requests[c.case] for c in chosen)
    by_request = {id(r): a for r, a in zip(requests, ask(judge, requests), strict=False)}
    return {c.case: (verdict_of(by_request[id(cases.requests[c.case])], c.key),
                     evidence_of(by_request[id(cases.requests[c.case])], c.key)) for c in chosen}


def _verdicts(answers: dict[str, tuple[str | None, str | None]], fingerprint: dict[str, Any]) -> list:
    from calibration import VerdictRecord

    return [VerdictRecord(case=case, verdict=verdict, judge=fingerprint)
            for case, (verdict, _) in answers.items() if verdict is not None]


def _labels(test: list[LabelledCase]) -> list:
    from calibration import LabelRecord

    return [LabelRecord(case=c.case, label=c.label, annotator="reference", key=c.key) for c in test if c.label]


def _rates(test: list[LabelledCase], answers: dict[str, tuple[str | None, str | None]]) -> tuple[Any, Any]:
    from calibration.rates import sensitivity_specificity

    pairs = [(c.label, verdict) for c in test if c.label and (verdict := answers[c.case][0]) is not None]
    if not pairs:
        return None, None
    return sensitivity_specificity([t for t, _ in pairs], [p for _, p in pairs])


def align_judge(config: JudgeConfig, labels: Path, *, scenarios: Iterable[Path] = (), max_examples: int = 6,
                seed: int = 0) -> AlignResult:
    """Propose, write and measure a new prompt version of the llm judge `config` (see the module)."""
    from calibration import compare_judges
    from judge.judges.factory import make_judge

    if max_examples < 1:
        raise UsageError(f"--max-examples must be at least 1; got {max_examples}")
    from judge.prompts import load_prompt

    judge = make_judge(config)
    old = getattr(judge, "prompt", None) or load_prompt(config.prompt)
    cases = case_set(labels, scenarios=scenarios, seed=seed)
    dev, test = cases.of_split("dev"), cases.of_split("test")
    if not dev or not test:
        raise UsageError(f"judge align needs labelled cases in both splits; dev has {len(dev)}, test {len(test)} "
                         f"(split by {cases.split_source})")
    before = _answers(judge, cases, dev + test)
    disagreements = [Example(c, verdict, before[c.case][1], kind_of(c.label, verdict))
                     for c in dev if c.label and (verdict := before[c.case][0]) is not None and verdict != c.label]
    result = AlignResult(judge=config.name, old_ref=old.ref, split_source=cases.split_source,
                         dev_cases=len(dev), test_cases=len(test), disagreements=len(disagreements),
                         leaking=cases.leaking, missing=cases.missing)
    if not disagreements:
        return result
    result.examples = choose(disagreements, max_examples)
    section = examples_section(result.examples, cases.requests, cases.names)
    cited = ", ".join(e.case.case for e in result.examples)
    notes = (f"Written by `judge align --judge {config.name}` from {old.ref}: its text plus "
             f"{len(result.examples)} examples chosen from the judge's disagreements with the dev split of "
             f"the labels (label set sha256 {labels_sha(labels)}; split by {cases.split_source}): {cited}.")
    prompt = write_version(old, section, notes)
    result.new_ref, result.path = prompt.ref, prompt.path
    aligned = make_judge(config.model_copy(update={"prompt": prompt.ref}))
    after = _answers(aligned, cases, test)
    old_test = {c.case: before[c.case] for c in test}
    result.comparison = compare_judges(_labels(test), _verdicts(old_test, judge.fingerprint()),
                                       _verdicts(after, aligned.fingerprint()))
    result.rates = {result.old_ref: _rates(test, old_test), prompt.ref: _rates(test, after)}
    return result
