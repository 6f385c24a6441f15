"""`judge align` for the offline `local` judge: its decision thresholds refitted on the dev split of
the labels, written as a new locked parameters version beside the old, both measured on test.

The thresholds (judge.judges.local.params.Thresholds) are cosines between MiniLM embeddings; the
model work of a slice (units, similarities, restatement verdicts) does not depend on them, so every
request is prepared once (EmbeddingJudge.prepare) and the rules alone are re-run per grid point
(judge.judges.local.judge.verdict_of), which takes milliseconds.

The fit: a cyclic coordinate search on grids of 0.01 (the resolution the thresholds are written
at) over fixed ranges (`RANGES`): starting from the old version, each threshold
in turn is set to its best value with the others held, until a whole cycle changes none (an
exhaustive product of six such grids would be about 10^10 points). "Best" maximises Cohen's kappa
of the judge's verdicts against the dev cases' reference labels over the three verdicts (violated,
upheld, not-exercised; scikit-learn `cohen_kappa_score`, kappa = (p_o - p_e) / (1 - p_e), Cohen
1960: the figure a calibration record reports); ties break toward the higher balanced accuracy of
`violated` against the rest (scikit-learn `balanced_accuracy_score`: the mean of TPR and TNR), then
toward the value nearest the old one, so a threshold moves only when the dev split prefers another
value, and a threshold whose every value scores the same on dev keeps its old value (the result
names these `undetermined`: dev says nothing about them). Only dev cases are read by the search;
test cases are asked once, after, with the old and the new version (calibration.compare_judges; TPR
and TNR with exact intervals). Tied reference labels are left out, as calibration does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judge.config import JudgeConfig
from judge.errors import UsageError
from judge.grade.calibration import labels_sha
from judge.grade.cases import CaseSet, LabelledCase, case_set, unique

# The values tried per threshold: a 0.01 grid (the resolution thresholds are written at) over a
# range fixed before the search, wide enough for what each cosine means.
RANGES: dict[str, tuple[float, float]] = {
    "related": (0.10, 0.60),
    "near_tie": (0.00, 0.20),
    "long_value_match": (0.30, 0.80),
    "long_value_margin": (0.00, 0.20),
    "regressed_similarity": (0.10, 0.60),
    "summary_carries": (0.20, 0.70),
}
STEP = 0.01
MAX_CYCLES = 10
VERDICTS = ["violated", "upheld", "not-exercised", "unassessed"]  # unassessed: the judge abstained (never a label)
OBJECTIVE = ("Cohen's kappa over the three verdicts against the dev cases' reference labels (scikit-learn "
             "cohen_kappa_score); ties: the higher balanced accuracy of violated vs the rest "
             "(balanced_accuracy_score), "
             "then the value nearest the old version's")


@dataclass
class LocalAlignResult:
    """What `align_local_judge` did: the thresholds before and after, the version it wrote (None when
    the dev split prefers the old thresholds), both versions' dev figures and their test comparison
    (`comparison`: a calibration Comparison, old = A, new = B)."""

    judge: str
    old_ref: str
    split_source: str
    dev_cases: int
    test_cases: int
    disagreements: int  # dev cases the old version got wrong
    old: dict[str, float]
    new: dict[str, float]
    points: int
    undetermined: list[str] = field(default_factory=list)
    best_range: dict[str, tuple[float, float]] = field(default_factory=dict)
    dev: dict[str, Any] = field(default_factory=dict)  # before / after -> SplitScore
    new_ref: str | None = None
    path: Path | None = None
    comparison: Any = None
    rates: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # version -> (TPR, TNR) on test
    leaking: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def no_worse(self) -> bool:
        """The new version is at least as accurate as the old on the test split (or none was written)."""
        c = self.comparison
        return c is None or c.accuracy_b >= c.accuracy_a


class _Reading:
    """Thresholds that note which of them a decision read (see `Prepared`)."""

    def __init__(self, thresholds: Any) -> None:
        self._thresholds = thresholds
        self.read: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        self.read.add(name)
        return getattr(self._thresholds, name)


class Prepared:
    """Every labelled case's request prepared once; verdicts under any thresholds, cheaply.

    A decision is deterministic in the prepared slice and the thresholds it reads, so a decision
    made under thresholds that agree with an earlier one on every threshold that one read takes
    the same path: its verdict is reused (memo per case, keyed by the thresholds read and their
    values). The grid search then runs each distinct path of the rules once, not once per point."""

    def __init__(self, judge: Any, cases: CaseSet, chosen: list[LabelledCase]) -> None:
        self.cases, self.chosen = cases, chosen
        self.views = {id(r): judge.prepare(r) for r in unique(cases.requests[c.case] for c in chosen)}
        self._memo: dict[str, list[tuple[dict[str, float], str]]] = {}

    def verdicts(self, thresholds: Any, only: Iterable[LabelledCase] | None = None) -> dict[str, str]:
        """Case -> verdict under `thresholds` (of `only`, default every prepared case)."""
        values = thresholds.model_dump()
        return {c.case: self._verdict(c, thresholds, values) for c in (only if only is not None else self.chosen)}

    def _verdict(self, case: LabelledCase, thresholds: Any, values: dict[str, float]) -> str:
        from judge.judges.local.judge import decide

        memo = self._memo.setdefault(case.case, [])
        for read, verdict in memo:
            if all(values[name] == value for name, value in read.items()):
                return verdict
        request = self.cases.requests[case.case]
        view = self.views[id(request)]
        row = next((r for r in request.ledger if r.key == case.key), None)
        reading = _Reading(thresholds)
        view.thresholds = reading  # duck-typed Thresholds
        verdict = "not-exercised" if row is None else decide(row, view, list(request.ledger)).verdict
        view.thresholds = thresholds
        memo.append(({name: values[name] for name in reading.read}, verdict))
        return verdict


def score(cases: list[LabelledCase], verdicts: dict[str, str]) -> Any:
    """Kappa, balanced accuracy, TPR and TNR of `verdicts` on the labelled `cases` (a SplitScore)."""
    import warnings

    from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score, confusion_matrix

    from judge.judges.local.params import SplitScore

    truth = [c.label for c in cases if c.label is not None]
    said = [verdicts[c.case] for c in cases if c.label is not None]
    if not truth:
        return SplitScore(n=0, cohen_kappa=None, balanced_accuracy=None, tpr=None, tnr=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one class only: kappa is nan, reported as None
        kappa = float(cohen_kappa_score(truth, said, labels=VERDICTS))
        positive = [t == "violated" for t in truth], [s == "violated" for s in said]
        balanced = float(balanced_accuracy_score(*positive))
    (tn, fp), (fn, tp) = confusion_matrix(*positive, labels=[False, True])
    return SplitScore(n=len(truth), cohen_kappa=None if kappa != kappa else kappa,
                      balanced_accuracy=balanced, tpr=float(tp / (tp + fn)) if tp + fn else None,
                      tnr=float(tn / (tn + fp)) if tn + fp else None)


def grid(old: dict[str, float]) -> dict[str, list[float]]:
    """The 0.01 grid of each threshold over its range, its old value added."""
    out = {}
    for name, (low, high) in RANGES.items():
        steps = round((high - low) / STEP)
        out[name] = sorted({round(low + i * STEP, 2) for i in range(steps + 1)} | {old[name]})
    return out


@dataclass
class FitOutcome:
    """The search's result: the thresholds chosen, the points scored, the cycles run, and the
    thresholds whose every value gave the same objective on dev at the chosen point (dev cannot
    tell their values apart: they keep the old version's)."""

    thresholds: dict[str, float]
    points: int
    cycles: int
    undetermined: list[str]
    best_range: dict[str, tuple[float, float]]  # lowest and highest value scoring the best on dev


def fit(prepared: Prepared, dev: list[LabelledCase], old: dict[str, float]) -> FitOutcome:
    """Cyclic coordinate search on the 0.01 grids (module doc): each threshold in turn set to its
    best value on `dev` with the others fixed, until a whole cycle changes none."""
    from judge.judges.local.params import Thresholds

    values, scores = grid(old), {}
    point, points = dict(old), 0

    def objective(candidate: dict[str, float]) -> tuple[float, float]:
        nonlocal points
        points += 1
        said = prepared.verdicts(Thresholds(**candidate), dev)
        signature = tuple(said[c.case] for c in dev)
        if signature not in scores:
            s = score(dev, said)
            scores[signature] = (s.cohen_kappa if s.cohen_kappa is not None else -2.0, s.balanced_accuracy or 0.0)
        return scores[signature]

    cycles, best_range = 0, {}
    undetermined: list[str] = []
    for cycles in range(1, MAX_CYCLES + 1):  # noqa: B007 (the count is reported)
        changed, undetermined = False, []
        for name in values:
            ranked = [(objective({**point, name: v}), -abs(v - old[name]), v) for v in values[name]]
            best = max(ranked)
            if len({r[0] for r in ranked}) == 1:
                undetermined.append(name)
            tied = [v for o, _, v in ranked if o == best[0]]
            best_range[name] = (min(tied), max(tied))
            if best[2] != point[name]:
                point[name], changed = best[2], True
        if not changed:
            break
    return FitOutcome(thresholds=point, points=points, cycles=cycles, undetermined=undetermined,
                      best_range=best_range)


def align_local_judge(config: JudgeConfig, labels: Path, *, scenarios: Iterable[Path] = (), seed: int = 0,
                      cases: CaseSet | None = None) -> LocalAlignResult:
    """Refit the thresholds of the embedding judge `config` on the dev split, write them as a new
    locked version when they differ, and compare both versions on the test split (module doc)."""
    from judge.judges.local.judge import EmbeddingJudge

    judge = EmbeddingJudge(config)
    cases = cases or case_set(labels, scenarios=scenarios, seed=seed)
    dev, test = cases.of_split("dev"), cases.of_split("test")
    if not [c for c in dev if c.label] or not [c for c in test if c.label]:
        raise UsageError(f"judge align needs labelled cases in both splits; dev has {len(dev)}, test {len(test)} "
                         f"(split by {cases.split_source})")
    old = judge.params.thresholds.model_dump()
    prepared = Prepared(judge, cases, dev + test)
    outcome = fit(prepared, dev, old)
    new = outcome.thresholds
    before_dev = prepared.verdicts(judge.params.thresholds, dev)
    result = LocalAlignResult(
        judge=config.name, old_ref=judge.params.ref, split_source=cases.split_source, dev_cases=len(dev),
        test_cases=len(test), disagreements=sum(1 for c in dev if c.label and before_dev[c.case] != c.label),
        old=old, new=new, points=outcome.points, undetermined=outcome.undetermined,
        best_range=outcome.best_range, leaking=cases.leaking, missing=cases.missing)
    result.dev["before"] = score(dev, before_dev)
    if new == old:
        result.dev["after"] = result.dev["before"]
        return result
    from judge.judges.local.params import Thresholds

    result.dev["after"] = score(dev, prepared.verdicts(Thresholds(**new), dev))
    written = _write(judge, cases, labels, result, outcome)
    result.new_ref, result.path = written.ref, written.path
    _compare_on_test(result, prepared, test, judge.params.thresholds, written.thresholds, judge.fingerprint())
    return result


def _write(judge: Any, cases: CaseSet, labels: Path, result: LocalAlignResult, outcome: FitOutcome) -> Any:
    from judge.judges.local.params import Fit, LocalParams, Thresholds, next_version, write_params

    old = judge.params.params
    version = next_version(old.id)
    notes = (f"Written by `judge align --judge {result.judge}` from {old.ref}: its thresholds refitted by a "
             f"coordinate-wise grid search on the dev split only ({result.dev_cases} cases of the label set with "
             f"sha256 {labels_sha(labels)}, split by {cases.split_source}); the test split was read once, after, to "
             "compare the two versions. The rules, cue words and confidences these thresholds serve are code, "
             "unchanged by the fit.")
    fitted = Fit(method=(f"cyclic coordinate search on 0.01 grids ({outcome.cycles} cycles, {outcome.points} "
                         "points scored), from the old version"), objective=OBJECTIVE,
                 labels_sha256=labels_sha(labels), split_source=cases.split_source, dev_cases=result.dev_cases,
                 from_version=old.ref, from_thresholds=old.thresholds, grid=RANGES, step=STEP,
                 points=outcome.points, dev=result.dev,
                 undetermined=outcome.undetermined, best_range=outcome.best_range,
                 fitted_at=datetime.now(UTC))
    return write_params(LocalParams(id=old.id, version=version, notes=notes,
                                    thresholds=Thresholds(**outcome.thresholds), fit=fitted))


def _compare_on_test(result: LocalAlignResult, prepared: Prepared, test: list[LabelledCase], old: Any, new: Any,
                     fingerprint: dict[str, Any]) -> None:
    assert result.new_ref is not None  # written before the comparison
    from calibration import LabelRecord, VerdictRecord, compare_judges
    from calibration.rates import sensitivity_specificity

    labels = [LabelRecord(case=c.case, label=c.label, annotator="reference", key=c.key) for c in test if c.label]
    verdicts = {}
    for ref, thresholds in ((result.old_ref, old), (result.new_ref, new)):
        said = prepared.verdicts(thresholds, test)
        verdicts[ref] = [VerdictRecord(case=case, verdict=v, judge={**fingerprint, "params": ref})
                         for case, v in said.items()]
        pairs = [(c.label, said[c.case]) for c in test if c.label]
        result.rates[ref] = sensitivity_specificity([t for t, _ in pairs], [p for _, p in pairs])
    result.comparison = compare_judges(labels, verdicts[result.old_ref], verdicts[result.new_ref])
