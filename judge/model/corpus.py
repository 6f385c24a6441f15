"""A corpus report (`judge grade --policy P CORPUS/`): per policy key the violation rate over many runs,
and a corpus diff (`judge corpus diff OLD NEW`): which keys' rates moved."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from judge.model.base import EntryClass, Outcome, Sensitivity, Strict
from judge.model.event_ids import SliceIds
from judge.model.fingerprint import ReportJudge
from judge.model.report import Divergence


class RateInterval(Strict):
    """A two-sided interval of a rate (null bounds: no bootstrap resample gave a defined value)."""

    lower: float | None
    upper: float | None
    level: float = 0.95


class KeyRate(Strict):
    """One policy key over the corpus: how many graded runs violated it, and the rate with its interval."""

    key: str
    class_: EntryClass = Field(alias="class")
    sensitivity: Sensitivity
    runs: int = Field(description="graded runs (the denominator; runs that could not be read are left out)")
    violated: int = Field(description="runs with a violation as observed: by a rule, or the judge's verdict")
    deterministic: int = Field(description="runs a rule found violating (certain: never corrected)")
    judged: int = Field(description="runs whose verdict on the key came from the judge")
    judged_violated: int = Field(description="of those, runs the judge said violate it (violated or flagged)")
    observed_rate: float = Field(description="violated / runs")
    rate: float = Field(description="the violation rate: observed, or corrected by the judge's calibration record")
    interval: RateInterval
    corrected: bool = Field(description="whether `rate` is corrected for the judge's measured errors")
    method: str = Field(description="how the rate and its interval were computed")


class FailingRun(Strict):
    """A failing run of the sample: where it is, why it failed, and its minimal slice."""

    run_id: str
    trace: str = Field(description="the trace file, `FILE@LINE` for a trace inside a JSONL of many")
    outcome: Outcome
    violated: list[str] = Field(description="the keys it violated")
    first_divergence: Divergence | None = None
    slice: SliceIds = Field(default_factory=list, description="the event ids of its minimal failing slice")


class CorpusReport(Strict):
    """What `judge grade --policy P CORPUS --json FILE` writes."""

    kind: Literal["corpus-report"] = "corpus-report"
    policy: str = Field(description="the policy file the corpus was graded against")
    policy_sha256: str | None = Field(default=None, description=(
        "sha256 of the policy as graded (its entries and rules with every policy it extends merged): two "
        "corpora graded against the same path but different contents differ here"))
    judge_version: str | None = Field(default=None, description="the version of judge that graded the corpus")
    corpus: list[str] = Field(description="the folders and JSONL files given")
    judge: ReportJudge | None = Field(description="the judge (null: deterministic checks only)")
    calibration_record: str | None = Field(default=None, description=(
        "the calibration record whose TPR and TNR corrected the judged rates (null: none matched the judge)"))
    runs: int = Field(description="traces found")
    graded: int
    errors: int = Field(description="traces that could not be read (one-line reasons in `error_samples`)")
    outcomes: dict[str, int] = Field(description="graded runs per outcome: pass, fail, inconclusive")
    keys: list[KeyRate]
    failing_sample: list[FailingRun] = Field(description=(
        "up to `sample_size` failing runs, drawn uniformly with `seed` (the same corpus gives the same sample)"))
    sample_size: int
    seed: int
    error_samples: list[str] = Field(default_factory=list, description="up to 10 unreadable traces, one line each")
    warnings: list[str] = Field(default_factory=list)


class KeyChange(Strict):
    """One key's rate in the old and the new corpus and the test of their difference."""

    key: str
    sensitivity: Sensitivity
    old_rate: float
    new_rate: float
    old: str = Field(description="violated/runs in the old corpus")
    new: str = Field(description="violated/runs in the new corpus")
    z: float | None
    p_value: float = Field(description="two-proportion z-test, two-sided, on the observed counts")
    p_holm: float = Field(description="Holm-adjusted over every key tested")
    moved: bool = Field(description="p_holm < alpha")
    direction: Literal["rose", "fell", "same"]


class CorpusDiff(Strict):
    """What `judge corpus diff OLD NEW --json FILE` writes; `failed`: a safety-critical rate rose significantly."""

    kind: Literal["corpus-diff"] = "corpus-diff"
    old: str
    new: str
    alpha: float
    test: str
    changes: list[KeyChange]
    only_old: list[str] = Field(default_factory=list, description="keys the new corpus's policy does not have")
    only_new: list[str] = Field(default_factory=list, description="keys the old corpus's policy does not have")
    failed: bool
    reasons: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
