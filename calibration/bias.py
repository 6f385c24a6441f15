"""Verdict stability under perturbation: flip rates, McNemar's test and the bias gate.

A bias battery asks a judge twice about each labelled case: as it is, and after a controlled
perturbation that must not change the answer (ledger entries reordered, neutral padding, an
irrelevant event, ...). This module sees only plain records of the answers, (case, perturbation,
unperturbed verdict, perturbed verdict), and returns figures:

- the **flip rate** of a perturbation: the share of cases whose verdict changed, with a 95%
  interval, exact (Clopper & Pearson 1934, Biometrika 26(4)) by default or Wilson's score interval
  (Wilson 1927, JASA 22(158)), both through scipy.stats.binomtest(...).proportion_ci;
- **McNemar's test** (McNemar 1947, Psychometrika 12(2)) of the paired binary answers "says
  `positive`" before and after: does the perturbation push the judge one way? With b cases that
  stopped saying `positive` and c that started, the exact form (a two-sided binomial test of b of
  b + c at 1/2; Fagerland, Lydersen & Laake 2013, BMC Med. Res. Methodol. 13:91) is used while
  b + c < 25, the chi-square form with Edwards' continuity correction, (|b - c| - 1)^2 / (b + c) on
  1 degree of freedom, above;
- the **bias gate**: passed when no measured perturbation's flip rate exceeds `max_flip`.

Functions follow scikit-learn's convention f(y_base, y_perturbed, *, ...): two 1-d sequences of
categorical verdicts of equal length, the unperturbed answers first.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict, Field

from calibration.bootstrap import CI_LEVEL
from calibration.errors import CalibrationInputError
from calibration.inputs import Fingerprint
from calibration.metrics import check_pair
from calibration.rates import RateStat, clopper_pearson

IntervalMethod = Literal["exact", "wilson"]
MAX_FLIP = 0.05
EXACT_BELOW = 25  # discordant pairs under which McNemar's test is the exact binomial one


class FlipObservation(BaseModel):
    """One case asked as it is and perturbed. A verdict of None is a judge error (left out, counted)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    case: str = Field(min_length=1)
    perturbation: str = Field(min_length=1)
    base: str | None
    perturbed: str | None


class McNemarTest(BaseModel):
    """McNemar's test of "says `positive`" before and after a perturbation.

    `lost`: cases that said `positive` unperturbed and not perturbed (b); `gained`: the reverse (c).
    `method` is `exact` (binomial) or `chi2` (continuity-corrected; `statistic` is its value)."""

    model_config = ConfigDict(extra="forbid")
    positive: str
    lost: int
    gained: int
    method: Literal["exact", "chi2"]
    statistic: float | None
    p_value: float


class PerturbationResult(BaseModel):
    """The flip figures of one perturbation. `passed` is None when no case was measured."""

    model_config = ConfigDict(extra="forbid")
    name: str
    n: int
    flipped: int
    flip_rate: RateStat | None
    mcnemar: McNemarTest | None
    not_applicable: int = 0
    judge_errors: int = 0
    passed: bool | None
    flipped_cases: list[str] = Field(default_factory=list)


class BiasGate(BaseModel):
    """The bias battery's result for one judge (by fingerprint) on one label set (by sha256)."""

    model_config = ConfigDict(extra="forbid")
    fingerprint: Fingerprint
    labels_sha256: str | None
    created_at: datetime
    max_flip: float
    level: float
    interval: IntervalMethod
    n_cases: int
    perturbations: list[PerturbationResult]
    certified: bool
    reason: str


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise CalibrationInputError(f"must lie in (0, 1); got {level!r}", field="level")


def wilson(k: int, n: int, *, level: float = CI_LEVEL) -> RateStat:
    """k/n with Wilson's score interval, via scipy.stats.binomtest(...).proportion_ci(method="wilson")."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1; got k={k}, n={n}")
    from scipy.stats import binomtest  # here: reading a record (every judged grade does) needs no scipy.stats

    interval = binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return RateStat(value=k / n, lower=float(interval.low), upper=float(interval.high), n=int(n),
                    k=int(k), level=level)


def flip_rate(y_base: ArrayLike, y_perturbed: ArrayLike, *, level: float = CI_LEVEL,
              interval: IntervalMethod = "exact") -> RateStat:
    """Share of cases whose verdict differs between `y_base` and `y_perturbed`, with a `level`
    interval: exact Clopper-Pearson (default) or Wilson."""
    _check_level(level)
    base, perturbed = check_pair(y_base, y_perturbed)
    k = int(np.sum(base != perturbed))
    if interval == "exact":
        return clopper_pearson(k, len(base), level=level)
    if interval == "wilson":
        return wilson(k, len(base), level=level)
    raise CalibrationInputError(f"must be 'exact' or 'wilson'; got {interval!r}", field="interval")


def mcnemar_test(y_base: ArrayLike, y_perturbed: ArrayLike, *, positive: str = "violated",
                 exact_below: int = EXACT_BELOW) -> McNemarTest:
    """McNemar's test of the paired answers "says `positive`", unperturbed vs perturbed: exact
    binomial while the discordant pairs are fewer than `exact_below`, else the continuity-corrected
    chi-square. No discordant pair gives p = 1."""
    from scipy.stats import binomtest, chi2  # (as in wilson)

    base, perturbed = check_pair(y_base, y_perturbed)
    was, now = base == positive, perturbed == positive
    lost, gained = int(np.sum(was & ~now)), int(np.sum(~was & now))
    discordant = lost + gained
    if discordant == 0:
        return McNemarTest(positive=positive, lost=0, gained=0, method="exact", statistic=None, p_value=1.0)
    if discordant < exact_below:
        p = binomtest(lost, discordant, 0.5).pvalue
        return McNemarTest(positive=positive, lost=lost, gained=gained, method="exact", statistic=None,
                           p_value=float(min(1.0, p)))
    statistic = (abs(lost - gained) - 1) ** 2 / discordant
    return McNemarTest(positive=positive, lost=lost, gained=gained, method="chi2",
                       statistic=float(statistic), p_value=float(chi2.sf(statistic, 1)))


def perturbation_result(name: str, observations: Sequence[FlipObservation], *, max_flip: float = MAX_FLIP,
                        level: float = CI_LEVEL, interval: IntervalMethod = "exact",
                        positive: str = "violated", not_applicable: int = 0) -> PerturbationResult:
    """The figures of one perturbation from its observations (judge errors left out and counted)."""
    answered = [o for o in observations if o.base is not None and o.perturbed is not None]
    errors = len(observations) - len(answered)
    if not answered:
        return PerturbationResult(name=name, n=0, flipped=0, flip_rate=None, mcnemar=None,
                                  not_applicable=not_applicable, judge_errors=errors, passed=None)
    base = [o.base for o in answered if o.base is not None]  # every one is: answered filtered them
    perturbed = [o.perturbed for o in answered if o.perturbed is not None]
    rate = flip_rate(base, perturbed, level=level, interval=interval)
    return PerturbationResult(
        name=name, n=rate.n, flipped=rate.k, flip_rate=rate,
        mcnemar=mcnemar_test(base, perturbed, positive=positive), not_applicable=not_applicable,
        judge_errors=errors, passed=rate.value <= max_flip,
        flipped_cases=sorted(o.case for o in answered if o.base != o.perturbed))


def bias_gate(observations: Sequence[FlipObservation], *, fingerprint: Fingerprint,
              labels_sha256: str | None = None, perturbations: Sequence[str] | None = None,
              not_applicable: dict[str, int] | None = None, max_flip: float = MAX_FLIP,
              level: float = CI_LEVEL, interval: IntervalMethod = "exact",
              positive: str = "violated") -> BiasGate:
    """Every perturbation's figures and the gate: certified when at least one perturbation was
    measured and none has a flip rate above `max_flip`. `perturbations` fixes the order (default:
    as first observed); `not_applicable` counts, per perturbation, the cases it could not change."""
    if not 0.0 <= max_flip < 1.0:
        raise CalibrationInputError(f"must lie in [0, 1); got {max_flip!r}", field="max_flip")
    _check_level(level)
    names = list(perturbations) if perturbations is not None else list(dict.fromkeys(
        o.perturbation for o in observations))
    unknown = {o.perturbation for o in observations} - set(names)
    if unknown:
        raise CalibrationInputError(f"observations of unlisted perturbations: {sorted(unknown)}",
                                    field="perturbation")
    skipped = not_applicable or {}
    results = [perturbation_result(name, [o for o in observations if o.perturbation == name],
                                   max_flip=max_flip, level=level, interval=interval, positive=positive,
                                   not_applicable=skipped.get(name, 0)) for name in names]
    certified, reason = _gate_reason(results, max_flip)
    return BiasGate(fingerprint=fingerprint, labels_sha256=labels_sha256, created_at=datetime.now(UTC),
                    max_flip=max_flip, level=level, interval=interval,
                    n_cases=len({o.case for o in observations}), perturbations=results,
                    certified=certified, reason=reason)


def _figure(result: PerturbationResult) -> str:
    rate = result.flip_rate
    if rate is None:  # not measured: no case the perturbation applies to
        return f"{result.name} not measured"
    return (f"{result.name} {rate.value:.3f} ({rate.k}/{rate.n}; {rate.level:.0%} "
            f"[{rate.lower:.3f}, {rate.upper:.3f}])")


def _gate_reason(results: list[PerturbationResult], max_flip: float) -> tuple[bool, str]:
    measured = [r for r in results if r.passed is not None]
    unmeasured = [r.name for r in results if r.passed is None]
    note = f" Not measured (no case it applies to): {', '.join(unmeasured)}." if unmeasured else ""
    if not measured:
        return False, "Bias gate not passed: no perturbation could be measured." + note
    failed = [r for r in measured if not r.passed]
    if failed:
        return False, (f"Bias gate failed: flip rate above max_flip {max_flip:.2f} for "
                       + "; ".join(_figure(r) for r in failed) + "." + note)
    return True, (f"Bias gate passed: every flip rate is at most max_flip {max_flip:.2f} ("
                  + "; ".join(_figure(r) for r in measured) + ")." + note)
