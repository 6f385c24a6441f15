"""Combining judge answers: the parts of a long slice, then several samples of the same request.

Parts (windows) of one slice: per key, `violated` wins (the earliest part's, with its evidence);
otherwise `upheld` if any part upheld the key; otherwise `not-exercised`; `unassessed` (an abstention)
only when every part abstained.
Samples: per key, the majority verdict (ties go to the more severe verdict: violated, upheld,
not-exercised, unassessed); the confidence is the mean of the agreeing samples' confidences, and the share of
samples that agree is reported beside it as `agreement`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from judge.model import JudgeFinding

SEVERITY = {"violated": 0, "upheld": 1, "not-exercised": 2, "unassessed": 3}


def merge_windows(parts: Sequence[Sequence[JudgeFinding]], keys: Sequence[str]) -> list[JudgeFinding]:
    """One finding per key answered in any part, in the order of `keys`."""
    merged = []
    for key in keys:
        found = [f for part in parts for f in part if f.key == key]
        if not found:
            continue
        best = min(SEVERITY[f.verdict] for f in found)
        candidates = [f for f in found if SEVERITY[f.verdict] == best]
        if best == SEVERITY["violated"]:
            merged.append(candidates[0])
        else:
            merged.append(max(candidates, key=lambda f: f.confidence))
    return merged


def majority(samples: Sequence[Sequence[JudgeFinding]], keys: Sequence[str]
             ) -> tuple[list[JudgeFinding], dict[str, float]]:
    """The majority finding per key across samples, and the agreement (share of all samples)."""
    findings, agreement = [], {}
    total = len(samples)
    for key in keys:
        found = [f for sample in samples for f in sample if f.key == key]
        if not found:
            continue
        votes = Counter(f.verdict for f in found)
        top = max(votes.values())
        verdict = min((v for v, n in votes.items() if n == top), key=SEVERITY.__getitem__)
        agreeing = [f for f in found if f.verdict == verdict]
        evidence = Counter(f.evidence_event for f in agreeing if f.evidence_event)
        chosen = evidence.most_common(1)[0][0] if evidence else agreeing[0].evidence_event
        rationale = next((f.rationale for f in agreeing if f.evidence_event == chosen), agreeing[0].rationale)
        findings.append(JudgeFinding(
            key=key, verdict=verdict, evidence_event=chosen, rationale=rationale,
            confidence=round(sum(f.confidence for f in agreeing) / len(agreeing), 6)))
        agreement[key] = round(len(agreeing) / total, 6)
    return findings, agreement
