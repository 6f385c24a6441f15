"""Glue between the grader and the `calibration` package.

- `judge_verdicts_for_labels`: run a judge over labelled ledger cases (each label row names scenario,
  trace, after_turn and key) and return verdict records the calibration code reads;
- `records_dir`, `check_calibration`: find the calibration record of a judge and say what is stale;
- `apply_calibration`: in a grade report, put the calibrated confidence beside the raw one and mark
  `needs_review` below the record's review threshold.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from judge.errors import JudgeInputError
from judge.fixture import read_structured

BUILTIN_RECORDS = Path(__file__).resolve().parents[1] / "calibration" / "records"


def records_dir(project_root: Path | None = None) -> Path:
    """The user's calibration/records beside their pyproject.toml, else the built-in records."""
    if project_root is not None and (project_root / "calibration" / "records").is_dir():
        return project_root / "calibration" / "records"
    import calibration

    return Path(calibration.__file__).resolve().parent / "records"


def _label_rows(path: Path) -> list[tuple[Path, int, dict[str, Any]]]:
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    rows = []
    for file in files:
        for lineno, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    rows.append((file, lineno, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise JudgeInputError(f"not a JSON object: {exc.msg}", file=str(file), line=lineno) from None
    return rows


def _scenario_file(scenario_id: str, trace: Path, search: Iterable[Path]) -> Path:
    """A scenario file with this id: beside the trace, in its parent, or in the given folders."""
    places = [trace.parent, trace.parent.parent, *search]
    for folder in places:
        for candidate in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml"), *folder.glob("*.json")]):
            try:
                data, _ = read_structured(candidate)
            except JudgeInputError:
                continue
            if isinstance(data, dict) and data.get("id") == scenario_id:
                return candidate
    raise JudgeInputError(f"no scenario file with id {scenario_id!r} beside {trace} (use --scenarios DIR)")


@dataclass
class VerdictRun:
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    judge_errors: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def judge_verdicts_for_labels(labels: Path, judge, *, scenarios: Iterable[Path] = (),
                              progress: Callable[[int, int], None] | None = None) -> VerdictRun:
    """Grade every labelled trace once with `judge` and read the judge's own verdict per case."""
    from judge.api import load_ledger
    from judge.grade import grade_trace

    by_trace: dict[tuple[Path, str], dict[str, dict[str, Any]]] = {}
    for file, lineno, row in _label_rows(labels):
        for name in ("case", "scenario", "trace", "after_turn", "key"):
            if name not in row:
                raise JudgeInputError("a ledger label needs case, scenario, trace, after_turn and key",
                                      file=str(file), line=lineno, field=name)
        trace = (file.parent / row["trace"]).resolve()
        by_trace.setdefault((trace, row["scenario"]), {})[row["case"]] = row
    fingerprint = judge.fingerprint()
    out = VerdictRun()
    for done, ((trace, scenario_id), cases) in enumerate(sorted(by_trace.items()), start=1):
        ledger = load_ledger(_scenario_file(scenario_id, trace, scenarios))
        report = grade_trace(ledger, trace, judge=judge)
        found = {(cp.after_turn, f.key): f for cp in report.checkpoints for f in cp.findings}
        for case, row in cases.items():
            finding = found.get((row["after_turn"], row["key"]))
            if finding is None:
                out.missing.append(case)
            elif finding.judge_verdict is None:
                out.judge_errors.append(case)
            else:
                evidence = finding.evidence_event if finding.source == "judge" else None
                out.verdicts.append({"case": case, "verdict": finding.judge_verdict,
                                     "confidence": finding.confidence, "judge": fingerprint,
                                     "key": row["key"], "evidence_event": evidence})
        if progress is not None:
            progress(done, len(by_trace))
    return out


def labels_sha(labels: Path) -> str:
    from calibration import labels_sha256, read_labels

    return labels_sha256(read_labels(labels))


def check_calibration(fingerprint: dict[str, Any], directory: Path, name: str,
                      labels: Path | None = None) -> list[str]:
    """Reasons the calibration of judge `name` is stale; empty when a record matches."""
    from calibration import find_record, load_record, stale_reasons

    sha = labels_sha(labels) if labels is not None and labels.exists() else None
    if find_record(directory, fingerprint, sha) is not None:
        return []
    path = directory / f"{name}.json"
    if not path.exists():
        return [f"no calibration record for judge {name!r} in {directory}"]
    return stale_reasons(load_record(path), fingerprint, sha) or ["no record matches this fingerprint"]


def apply_calibration(report, fingerprint: dict[str, Any], directory: Path, name: str) -> list[str]:
    """Calibrated confidence and needs_review on every judge finding; returns stale reasons."""
    from calibration import find_record

    record = find_record(directory, fingerprint)
    if record is None:
        return check_calibration(fingerprint, directory, name)
    calibrator = record.calibrator
    for run in report.runs:
        for cp in run.checkpoints:
            for f in cp.findings:
                if f.confidence is None or calibrator is None:
                    continue
                f.confidence_calibrated = round(float(calibrator.predict([f.confidence])[0]), 4)
                threshold = record.review_threshold
                if threshold is None or f.confidence_calibrated < threshold:
                    f.needs_review = True
    return []
