"""`judge corpus diff OLD NEW`: which policy keys' violation rates moved between two corpus reports
(calibration.drift: a two-proportion z-test per key on the observed counts, Holm-corrected over the
keys), and whether a safety-critical rate rose significantly (the command then exits 1)."""

from __future__ import annotations

from pathlib import Path

from judge.model.corpus import CorpusDiff, CorpusReport, KeyChange

TEST = ("two-proportion z-test (pooled, two-sided; statsmodels proportions_ztest) on each key's observed "
        "violated/runs, Holm-corrected over the keys (statsmodels multipletests)")


def diff_corpora(old: CorpusReport, new: CorpusReport, *, alpha: float = 0.05, old_name: str = "old",
                 new_name: str = "new") -> CorpusDiff:
    """The keys both reports rate, tested old against new; `failed` when a safety-critical key rose."""
    from calibration.drift import rate_changes

    old_keys = {k.key: k for k in old.keys}
    new_keys = {k.key: k for k in new.keys}
    shared = [key for key in new_keys if key in old_keys]
    tests = rate_changes({key: (old_keys[key].violated, old_keys[key].runs, new_keys[key].violated,
                                new_keys[key].runs) for key in shared}, alpha=alpha)
    changes, reasons = [], []
    for test in tests:
        was, now = old_keys[test.key], new_keys[test.key]
        sensitivity = "safety-critical" if "safety-critical" in (was.sensitivity, now.sensitivity) else now.sensitivity
        change = KeyChange(key=test.key, sensitivity=sensitivity, old_rate=was.rate, new_rate=now.rate,
                           old=f"{test.old_k}/{test.old_n}", new=f"{test.new_k}/{test.new_n}", z=test.z,
                           p_value=test.p_value, p_holm=test.p_holm, moved=test.significant,
                           direction=test.direction)
        changes.append(change)
        if change.moved and change.direction == "rose" and sensitivity == "safety-critical":
            reasons.append(f"safety-critical key {test.key!r} rose from {change.old} to {change.new} "
                           f"(Holm-adjusted p = {test.p_holm:.2g} < {alpha})")
    warnings = []
    if old.judge != new.judge:
        warnings.append("the corpora were graded by different judges: a judged key's change mixes the two "
                        "judges' errors with the traffic's")
    if old.policy != new.policy:
        warnings.append(f"the corpora were graded against different policies ({old.policy}, {new.policy})")
    elif old.policy_sha256 and new.policy_sha256 and old.policy_sha256 != new.policy_sha256:
        warnings.append(f"the policy {new.policy} changed between the corpora (sha256 {old.policy_sha256[:12]} "
                        f"-> {new.policy_sha256[:12]}): a key's change may come from the policy, not the traffic")
    if old.judge_version and new.judge_version and old.judge_version != new.judge_version:
        warnings.append(f"the corpora were graded by judge {old.judge_version} and {new.judge_version}: a rule "
                        "changed between versions can move a rate")
    return CorpusDiff(old=old_name, new=new_name, alpha=alpha, test=TEST, changes=changes,
                      only_old=[k for k in old_keys if k not in new_keys],
                      only_new=[k for k in new_keys if k not in old_keys], failed=bool(reasons), reasons=reasons,
                      warnings=warnings)


def load_corpus_report(path: str | Path) -> CorpusReport:
    """A corpus report file (`judge grade --policy P CORPUS --json FILE`), validated; else a one-line error."""
    from pydantic import ValidationError

    from judge.errors import JudgeInputError
    from judge.model.limits import read_json_file

    data = read_json_file(path, "a JSON corpus report")
    if not isinstance(data, dict) or data.get("kind") != "corpus-report":
        raise JudgeInputError("not a corpus report (written by `judge grade --policy P CORPUS --json FILE`)",
                              file=str(path), field="kind")
    try:
        return CorpusReport.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        message = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
        raise JudgeInputError(message, file=str(path), field=".".join(str(p) for p in err["loc"])) from None
