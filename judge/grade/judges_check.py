"""`judge config check`: build every configured judge as a grade would (GradeSession.open: the
configuration validated, the prompt's lock verified, the API key's variable set, the calibration
record looked up by the judge's exact fingerprint) without calling any model; with `probe`, send each
llm judge one real request (judge.judges.probe) and report the form that answered, the latency and
the tokens (a probe that gets no valid answer is a problem: the judge cannot grade)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from judge.config import configured_judges, load_judge_config
from judge.errors import JudgeInputError
from judge.grade.session import GradeSession
from judge.judges.probe import Probe
from judge.model import Strict


class JudgeCheck(Strict):
    """What `judge config check` found for one configured judge: whether it can grade, and how far
    its verdicts would be trusted (calibration record, binding or advisory)."""

    name: str
    default: bool = False
    backend: str | None = None
    problems: list[str] = Field(default_factory=list, description="why the judge cannot grade (empty: it can)")
    calibration: str | None = Field(default=None, description="current, stale or missing")
    calibration_reasons: list[str] = Field(default_factory=list)
    binding: bool | None = None
    binding_reason: str | None = None
    probe: Probe | None = Field(default=None, description="what one real request found (--probe; llm judges)")

    @property
    def ok(self) -> bool:
        """The judge can grade (no problem found)."""
        return not self.problems


def check_judge(name: str, *, config_file: str | Path | None = None, default: bool = False,
                probe: bool = False) -> JudgeCheck:
    """Build the judge `name` as a grade would and say what stops it grading; `probe`: an llm judge
    is also sent one real request (judge.judges.probe), its cache off."""
    check = JudgeCheck(name=name, default=default)
    try:
        session = GradeSession.open(name, config_file=config_file)
    except JudgeInputError as exc:
        check.problems.append(str(exc))
        return check
    check.backend = (session.fingerprint or {}).get("backend")
    reasons = session.stale_reasons
    missing = any(r.startswith("no calibration record") for r in reasons)
    check.calibration = "missing" if missing else "stale" if reasons else "current"
    check.calibration_reasons = list(reasons)
    if session.trust is not None:
        check.binding, check.binding_reason = session.trust.binding, session.trust.reason
    if probe:
        check.probe = _probe(name, config_file)
        if check.probe is not None and not check.probe.ok:
            check.problems.append(f"the probe request got no valid answer: {check.probe.error}")
    return check


def _probe(name: str, config_file: str | Path | None) -> Probe | None:
    from judge.judges.factory import make_judge
    from judge.judges.probe import probe
    from judge.judges.spec import backend_spec

    config = load_judge_config(name, config_file=config_file)
    if not backend_spec(config.backend).prompted:
        return None  # no model to send a request to
    return probe(make_judge(config.model_copy(update={"cache": False})))


def check_judges(*, config_file: str | Path | None = None, probe: bool = False) -> list[JudgeCheck]:
    """Every configured judge (the built-in `local` too), the default first; `probe`: see check_judge."""
    judges, default, _ = configured_judges(config_file=config_file)
    names = sorted(judges, key=lambda n: (n != default, n))
    return [check_judge(n, config_file=config_file, default=n == default, probe=probe) for n in names]
