"""`judge align --judge local`: the offline judge's decision thresholds refitted on the dev split of
the labels, written as a new locked parameters version beside the old (never an edit of a locked
one), both versions on the test split in the output and in --json; the fit reads dev rows only (a
changed test label changes no fitted threshold); a bad labels file is exit 2, one line.

The labels are the repository's own rows for two scenarios (local-container, dev; keep-database,
test), their traces named by absolute path, in a project folder of the test's own whose judge starts
from the hand-chosen thresholds (params = "local@1")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.judges.local import params as local_params

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "params"
runner = CliRunner()
pytestmark = pytest.mark.slow  # each run embeds two scenarios' traces


def _rows(scenarios: tuple[str, ...]) -> list[dict]:
    rows = []
    for file in sorted((REPO / "labels").glob("*.jsonl")):
        for line in file.read_text().splitlines():
            row = json.loads(line)
            if row["scenario"] in scenarios:
                row["trace"] = str((file.parent / row["trace"]).resolve())
                rows.append(row)
    return rows


def _project(root: Path, rows: list[dict]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[tool.judge]\ndefault = "local"\n\n[tool.judge.judges.local]\n'
                                         'backend = "embedding"\nmodel = "all-MiniLM-L6-v2"\nparams = "local@1"\n')
    (root / "labels").mkdir(exist_ok=True)
    (root / "labels" / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _shipped_bytes() -> dict[str, bytes]:
    return {str(p.relative_to(SHIPPED)): p.read_bytes() for p in sorted(SHIPPED.rglob("*")) if p.is_file()}


def _align(project: Path, monkeypatch) -> tuple[object, dict]:
    monkeypatch.chdir(project)
    result = runner.invoke(app, ["align", "--judge", "local", "--json", "align.json"], terminal_width=200)
    report = json.loads((project / "align.json").read_text()) if (project / "align.json").exists() else {}
    return result, report


ROWS = _rows(("local-container", "keep-database"))


def test_align_local_writes_a_new_locked_version_beside_the_old_and_reports_test(tmp_path, monkeypatch):
    before = _shipped_bytes()
    project = _project(tmp_path / "p", ROWS)
    result, report = _align(project, monkeypatch)
    assert result.exit_code in (0, 1), result.output
    assert report["old"] == "local@1" and report["split"] == "labels"
    assert report["new"] == "local@3"  # local@2 is taken (built in)
    assert report["dev_cases"] == 20 and report["test_cases"] == 18
    new = project / "params" / "local" / "v3.json"
    assert report["path"] == str(new) and new.is_file()
    written = local_params.read_params_file(new)
    assert written.thresholds.model_dump() == report["thresholds"]["new"] != report["thresholds"]["old"]
    assert written.fit is not None and written.fit.from_version == "local@1" and written.fit.dev_cases == 20
    lock = json.loads((project / "params" / "params.lock").read_text())["params"]
    assert set(lock) == {"local@3"} and lock["local@3"] == local_params.content_hash(new)
    assert _shipped_bytes() == before  # the locked versions (and their lock) are untouched
    test = report["test"]  # both versions on the test split: accuracy, kappa, McNemar
    assert test["n"] == 18 and {"accuracy_a", "accuracy_b", "kappa_a", "kappa_b", "mcnemar"} <= set(test)
    assert set(report["test_rates"]) == {"local@1", "local@3"}
    assert report["no_worse"] == (test["accuracy_b"] >= test["accuracy_a"])
    assert result.exit_code == (0 if report["no_worse"] else 1)
    assert report["dev"]["after"]["cohen_kappa"] > report["dev"]["before"]["cohen_kappa"]
    for text in ("test split (held out)", "local@1", "local@3", "Cohen's kappa", "TPR (violated)", "TNR",
                 "decision thresholds fitted on the dev split", "locked in params.lock"):
        assert text in result.output
    # The new version is the judge's once configured, and a judge refuses it once edited.
    config = project / "pyproject.toml"
    config.write_text(config.read_text().replace('params = "local@1"', 'params = "local@3"'))
    from judge.config import load_judge_config
    from judge.judges.factory import make_judge

    judge = make_judge(load_judge_config("local", config_file=config))
    assert judge.fingerprint()["params"] == {"id": "local", "version": 3, "sha256": lock["local@3"]}
    assert judge.fitted_on == "dev" and "fitted on the dev split only" in judge.fitted_note
    # What the search scored (rules re-run on prepared slices, decisions reused) is what the judge says.
    from judge.grade.cases import ask, case_set, verdict_of

    cases = case_set(project / "labels")
    test_cases = [c for c in cases.of_split("test") if c.label]
    answers = ask(judge, [cases.requests[c.case] for c in test_cases])
    right = sum(verdict_of(a, c.key) == c.label for a, c in zip(answers, test_cases, strict=True))
    assert right / len(test_cases) == pytest.approx(test["accuracy_b"])
    again, second = _align(project, monkeypatch)  # v3 already holds dev's optimum: nothing to learn
    assert again.exit_code == 0 and second["new"] is None and "no new version written" in again.output
    assert not (project / "params" / "local" / "v4.json").exists()
    new.write_text(new.read_text().replace('"version": 3', '"version": 3 '))
    from judge.errors import ConfigError

    with pytest.raises(ConfigError, match="changed after it was locked"):
        make_judge(load_judge_config("local", config_file=config))


def test_the_fit_reads_dev_rows_only(tmp_path, monkeypatch):
    flipped = []
    for row in ROWS:
        row = dict(row)
        if row["split"] == "test":  # every test label changed: violated <-> upheld, the rest not-exercised
            row["label"] = {"violated": "upheld", "upheld": "violated"}.get(row["label"], "upheld")
        flipped.append(row)
    _, first = _align(_project(tmp_path / "a", ROWS), monkeypatch)
    _, second = _align(_project(tmp_path / "b", flipped), monkeypatch)
    assert first["thresholds"]["new"] == second["thresholds"]["new"]
    assert first["dev"] == second["dev"]
    assert first["test"]["kappa_a"] != second["test"]["kappa_a"]  # the test labels did change the report
    a = local_params.read_params_file(tmp_path / "a" / "params" / "local" / "v3.json")
    b = local_params.read_params_file(tmp_path / "b" / "params" / "local" / "v3.json")
    assert a.thresholds == b.thresholds and a.fit.best_range == b.fit.best_range


@pytest.mark.parametrize("damage, expected", [
    (lambda rows: [{k: v for k, v in rows[0].items() if k != "key"}, *rows[1:]], "labels.jsonl:1: key:"),
    (lambda rows: [{**rows[0], "split": "train"}, *rows[1:]], "labels.jsonl:1: split: split must be dev or test"),
    (lambda rows: [r for r in rows if r["split"] == "dev"], "needs labelled cases in both splits"),
])
def test_a_bad_labels_file_is_exit_2_one_line(tmp_path, monkeypatch, damage, expected):
    project = _project(tmp_path / "p", damage([dict(r) for r in ROWS]))
    result, _ = _align(project, monkeypatch)
    assert result.exit_code == 2, result.output
    assert expected in result.output and len(result.output.strip().splitlines()) == 1
    assert "Traceback" not in result.output and not (project / "params").exists()
