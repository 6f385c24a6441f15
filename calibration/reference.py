"""Reference labels (the majority of a case's annotators) and their pairing with a judge's verdicts.

A case's reference label is the label most of its annotators gave. When two or more labels share the
top count the case is a tie: it has no reference, is left out of judge agreement, and is counted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from calibration.inputs import LabelRecord, VerdictRecord


class Reference(NamedTuple):
    """The reviewed answer for one case; `label` is None for a tie.

    A named tuple: label sets of 100k cases build one per case, and tuples are several times cheaper
    than dataclasses.
    """

    case: str
    label: str | None
    votes: dict[str, int]
    key: str | None
    evidence_events: frozenset[str]  # named by the annotators who gave the reference label


@dataclass(frozen=True)
class Matched:
    """Verdicts paired with the reference labels of the same cases, ties left out, in case order."""

    references: list[Reference]
    verdicts: list[VerdictRecord]
    ties_excluded: int
    n_unmatched: int

    @cached_property
    def y_true(self) -> np.ndarray:
        """The reference labels, in case order."""
        return np.array([ref.label for ref in self.references], dtype=str)

    @cached_property
    def y_pred(self) -> np.ndarray:
        """The judge's verdicts, in the same order."""
        return np.array([verdict.verdict for verdict in self.verdicts], dtype=str)

    @property
    def cases(self) -> list[str]:
        """The matched case ids, in order."""
        return [ref.case for ref in self.references]


def latest_labels(labels: list[LabelRecord]) -> list[LabelRecord]:
    """One label per (case, annotator): the last one read, since corrections are appended."""
    latest: dict[tuple[str, str], LabelRecord] = {}
    for record in labels:
        latest[(record.case, record.annotator)] = record
    return list(latest.values())


NO_EVIDENCE: frozenset[str] = frozenset()


def reference_labels(labels: list[LabelRecord]) -> dict[str, Reference]:
    """The majority label of each case over its annotators' latest labels (None on a tie)."""
    by_case: dict[str, list[LabelRecord]] = {}
    for record in latest_labels(labels):
        by_case.setdefault(record.case, []).append(record)
    return {case: _reference(case, by_case[case]) for case in sorted(by_case)}


def _reference(case: str, records: list[LabelRecord]) -> Reference:
    if len(records) == 1:  # the common case, kept cheap for large label sets
        only = records[0]
        evidence = NO_EVIDENCE if only.evidence_event is None else frozenset((only.evidence_event,))
        return Reference(case, only.label, {only.label: 1}, only.key, evidence)
    votes = Counter(record.label for record in records)
    ranked = votes.most_common()
    tie = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
    label = None if tie else ranked[0][0]
    keys = Counter(record.key for record in records if record.key is not None)
    evidence = frozenset(record.evidence_event for record in records
                         if record.label == label and record.evidence_event is not None)
    return Reference(case=case, label=label, votes=dict(sorted(votes.items())),
                     key=keys.most_common(1)[0][0] if keys else None, evidence_events=evidence)


def match(references: dict[str, Reference], verdicts: list[VerdictRecord]) -> Matched:
    """Pair each non-tied reference with the verdict on the same case.

    `n_unmatched` counts non-tied labelled cases without a verdict plus verdicts on unlabelled cases.
    """
    by_case = {verdict.case: verdict for verdict in verdicts}
    paired = [(ref, by_case[case]) for case, ref in references.items()
              if ref.label is not None and case in by_case]
    ties = sum(ref.label is None for ref in references.values())
    labelled_without_verdict = sum(ref.label is not None and case not in by_case
                                   for case, ref in references.items())
    verdict_without_label = sum(case not in references for case in by_case)
    return Matched(references=[ref for ref, _ in paired], verdicts=[v for _, v in paired],
                   ties_excluded=ties, n_unmatched=labelled_without_verdict + verdict_without_label)
