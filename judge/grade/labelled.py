"""Run a judge over labelled ledger cases (each label row names scenario, trace, after_turn and key)
and return verdict records the `calibration` package reads (`judge calibrate --judge`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError
from judge.grade.run import grade_trace
from judge.ledger import load_ledger, read_structured
from judge.model.limits import DepthError, depth_message, loads_json, read_capped


def _label_rows(path: Path) -> list[tuple[Path, int, dict[str, Any]]]:
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    rows = []
    for file in files:
        try:
            text = read_capped(file).decode("utf-8")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise JudgeInputError(f"cannot read labels: {exc}", file=str(file)) from None
        for lineno, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                try:
                    rows.append((file, lineno, loads_json(line)))
                except DepthError:
                    raise JudgeInputError(depth_message(), file=str(file), line=lineno) from None
                except ValueError as exc:
                    message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                    raise JudgeInputError(f"not a JSON object: {message}", file=str(file), line=lineno) from None
    return rows


def _label_trace(labels_file: Path, trace: str) -> Path:
    """A label's trace: relative to its labels file's folder (the label format), else to the
    project root (the folder of the nearest pyproject.toml), else as given."""
    from judge.config import project_root

    here = (labels_file.parent / trace).resolve()
    if here.is_file() or Path(trace).is_absolute():
        return here
    root = project_root(labels_file.parent)
    if root is not None and (root / trace).is_file():
        return (root / trace).resolve()
    return here


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
    from calibration import read_labels

    read_labels(labels)  # the label format, strictly (a CalibrationInputError names file, line and field)
    by_trace: dict[tuple[Path, str], dict[str, dict[str, Any]]] = {}
    for file, lineno, row in _label_rows(labels):
        for name in ("case", "scenario", "trace", "after_turn", "key"):
            if name not in row:
                raise JudgeInputError("a ledger label needs case, scenario, trace, after_turn and key",
                                      file=str(file), line=lineno, field=name)
        trace = _label_trace(file, str(row["trace"]))
        by_trace.setdefault((trace, row["scenario"]), {})[row["case"]] = row
    fingerprint = judge.fingerprint()
    out = VerdictRun()
    for done, ((trace, scenario_id), cases) in enumerate(sorted(by_trace.items()), start=1):
        ledger = load_ledger(_scenario_file(scenario_id, trace, scenarios))
        report = grade_trace(ledger, trace, judge=judge)
        found = {(cp.after_turn, f.key): f for cp in report.checkpoints for f in cp.findings}
        for case, row in cases.items():
            finding = found.get((row["after_turn"], row["key"]))
            if finding is not None and finding.verdict == "judge-error":
                out.judge_errors.append(case)
            elif finding is None or finding.judge_verdict is None:
                out.missing.append(case)  # not asked, or asked of the rules alone: no judge verdict to score
            else:
                # The judge's own evidence: a finding it decided (or flagged), not one a summary audit replaced
                own = finding.source == "judge" and finding.verdict in (finding.judge_verdict, "flagged")
                evidence = finding.evidence_event if own else None
                out.verdicts.append({"case": case, "verdict": finding.judge_verdict,
                                     "confidence": finding.confidence, "judge": fingerprint,
                                     "key": row["key"], "evidence_event": evidence})
        if progress is not None:
            progress(done, len(by_trace))
    return out


