"""Where `judge slice` finds what a report graded: the run in a grade or suite report, its trace and
its scenario. A report records paths as they were given (relative to the folder `judge grade` ran
in) and the sha256 of each file; a path is looked for from the current folder, from the report's
folder and from each folder above it (a report in out/ or in the run log .judge/runs/ finds the
project's files), and where a sha256 was recorded, the file that matches it is the one taken."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError
from judge.grade.provenance import sha256_file


def read_report(path: Path) -> Any:
    from judge.model.limits import read_json_file

    return read_json_file(path, "a JSON report")  # within the size and depth limits of every reader


def find_run(report_path: Path, run_id: str) -> tuple[dict[str, Any], str, str | None]:
    """(the run's entry, its scenario id, the scenario file the report names) from a grade report
    (`runs[]`, the scenario named in each run's provenance) or a suite report (`scenarios[].results[]`)."""
    data = read_report(report_path)
    found: list[tuple[dict, str, str | None]] = []
    if isinstance(data, dict) and isinstance(data.get("runs"), list):
        found = [(r, r.get("scenario", ""), _recorded(r, "scenario").get("path")) for r in data["runs"]
                 if isinstance(r, dict)]
    elif isinstance(data, dict) and isinstance(data.get("scenarios"), list):
        found = [(r, s.get("id", ""), s.get("file")) for s in data["scenarios"] if isinstance(s, dict)
                 for r in s.get("results") or [] if isinstance(r, dict)]
    else:
        raise JudgeInputError("not a grade or suite report (no `runs` or `scenarios` list)", file=str(report_path))
    matches = [f for f in found if f[0].get("run_id") == run_id]
    if not matches:
        known = ", ".join(sorted({str(f[0].get("run_id")) for f in found})[:10])
        raise JudgeInputError(f"no run {run_id!r} in the report (runs: {known})", file=str(report_path))
    if len(matches) > 1:
        raise JudgeInputError(f"run id {run_id!r} names {len(matches)} runs in the report: "
                              + ", ".join(str(m[0].get("trace")) for m in matches), file=str(report_path))
    return matches[0]


def _recorded(run: dict[str, Any], what: str) -> dict[str, Any]:
    """The `{"path", "sha256"}` the run's provenance recorded for its scenario or (first) trace."""
    inputs = (run.get("provenance") or {}).get("inputs") or {}
    if what == "scenario":
        return inputs.get("scenario") or {}
    return (inputs.get("traces") or [{}])[0] or {}


def candidates(path: str, report_path: Path) -> list[Path]:
    """Existing files `path` may name: itself (from the current folder), then from the report's
    folder and each folder above it; an absolute path is only itself."""
    given = Path(path)
    folders = (report_path.parent.resolve(), *report_path.parent.resolve().parents)
    places = [given] if given.is_absolute() else [given, *(folder / given for folder in folders)]
    seen: dict[Path, Path] = {}
    for place in places:
        if place.is_file():
            seen.setdefault(place.resolve(), place)
    return list(seen.values())


def _matching(files: list[Path], sha256: str | None) -> list[Path]:
    return [f for f in files if sha256 is None or sha256_file(f) == sha256]


def locate_trace(run: dict[str, Any], report_path: Path, given: Path | None = None) -> Path:
    """The run's trace file: `given` (`judge slice --trace`), else the first place its path names
    that holds the graded content; either must hold what was graded (its sha256, when recorded)."""
    name = run.get("trace")
    sha = run.get("sha256") or _recorded(run, "trace").get("sha256")
    if given is not None:
        if not given.is_file():
            raise JudgeInputError("no such trace file", file=str(given), field="--trace")
        if not _matching([given], sha):
            raise JudgeInputError(f"is not the trace run {run.get('run_id')!r} was graded with (sha256 differs)",
                                  file=str(given), field="--trace")
        return given
    found = candidates(str(name), report_path) if name else []
    if not found:
        raise JudgeInputError(f"trace of run {run.get('run_id')!r} not found: {name!r} (looked from the current "
                              f"folder and from {report_path.parent} upwards; give it with --trace PATH)",
                              file=str(report_path))
    hits = _matching(found, sha)
    if not hits:
        raise JudgeInputError(f"{found[0]} changed since the report was written (sha256 differs)",
                              file=str(report_path))
    return hits[0]


def _scan(scenario_id: str, folders: list[Path]) -> list[Path]:
    """Scenario files with `scenario_id` in these folders."""
    from judge.ledger.fixture import read_structured

    out = []
    for folder in dict.fromkeys(folders):
        for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml"), *folder.glob("*.json")]):
            try:
                data, _ = read_structured(path)
            except JudgeInputError:
                continue
            if isinstance(data, dict) and data.get("id") == scenario_id and "ledger" in data:
                out.append(path)
    return out


def locate_scenario(scenario_id: str, run: dict[str, Any], trace: Path, report_path: Path,
                    named: str | None) -> Path:
    """The run's scenario: the file the report names, else a file with its id beside the trace, in
    the trace's parent folder or beside the report; where the report recorded the scenario's sha256,
    only a file with that content. None found: a JudgeInputError suggesting --scenario."""
    sha = _recorded(run, "scenario").get("sha256")
    found = candidates(named, report_path) if named else []
    found += _scan(scenario_id, [trace.parent, trace.parent.parent, report_path.parent])
    found = list({p.resolve(): p for p in found[::-1]}.values())[::-1]
    hits = _matching(found, sha)
    if hits:
        return hits[0]
    if found:
        raise JudgeInputError(f"no scenario file with id {scenario_id!r} has the content the run was graded with "
                              f"(sha256 differs: {', '.join(str(p) for p in found[:3])}); give it with --scenario FILE",
                              file=str(report_path))
    raise JudgeInputError(f"no scenario file with id {scenario_id!r} beside {trace} or the report "
                          "(give it with --scenario FILE)", file=str(report_path))
