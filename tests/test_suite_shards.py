"""Suites in shards (issue 15): `judge suite --shard K/N --out PART` grades a slice, `judge suite merge`
makes the report an unsharded run makes, byte for byte; parts that do not belong together are
refused; and a suite worker reads each trace once (its sha256 computed on the way)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.suite import grade_part, grade_suite, merge_parts, report_of
from judge.suite.part import in_shard

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
runner = CliRunner()


@pytest.fixture
def suite(tmp_path) -> Path:
    """The example suite with a run missing (r-10 of checkout-firefox), a broken trace (an `error`
    run) and a run that passes, so every kind of result crosses the shards."""
    runs = tmp_path / "runs"
    shutil.copytree(EXAMPLES / "suite" / "runs", runs)
    (runs / "checkout-firefox" / "r-10.jsonl").unlink()
    (runs / "account-twice" / "r-11.jsonl").write_text(
        '{"kind": "run", "run_id": "broken", "scenario": "account-twice"}\nnot json\n')
    manifest = tmp_path / "suite.yaml"
    manifest.write_text((EXAMPLES / "suite" / "suite.yaml").read_text()
                        .replace("../checkout-firefox/", str(EXAMPLES / "checkout-firefox") + "/")
                        .replace("../account-twice/", str(EXAMPLES / "account-twice") + "/"))
    return manifest


def _cli(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def _outputs(folder: Path) -> list[str]:
    return ["--json", str(folder / "r.json"), "--junit", str(folder / "r.xml"), "--md", str(folder / "r.md")]


@pytest.mark.slow
def test_a_sharded_suite_merges_to_the_unsharded_report_byte_for_byte(suite, tmp_path):
    whole = tmp_path / "whole"
    unsharded = _cli("suite", suite, "--judge", "none", "-j", "1", "-q", *_outputs(whole))
    assert unsharded.exit_code == 1, unsharded.output
    data = json.loads((whole / "r.json").read_text())
    statuses = {r["status"] for s in data["scenarios"] for r in s["results"]}
    assert {"passed", "failed", "vetoed", "error", "missing"} <= statuses  # every kind crosses the shards
    for n in (2, 3, 7):
        parts = []
        for k in reversed(range(1, n + 1)):  # graded in any order, one shard with a process pool
            parts.append(tmp_path / f"n{n}" / f"part-{k}.json")
            shard = _cli("suite", suite, "--judge", "none", "-j", "2" if k == 1 else "1", "-q",
                         "--shard", f"{k}/{n}", "--out", parts[-1])
            assert shard.exit_code == 0, shard.output
        merged = _cli("suite", "merge", *parts, *_outputs(tmp_path / f"n{n}"))
        assert merged.exit_code == unsharded.exit_code, merged.output
        # The reports carry no timing (the parts do, in `timing`): nothing to remove before comparing.
        for name in ("r.json", "r.xml", "r.md"):
            assert (tmp_path / f"n{n}" / name).read_bytes() == (whole / name).read_bytes(), (n, name)


def test_the_shards_are_run_index_modulo_n(suite, tmp_path):
    whole, _ = grade_part(suite, jobs=1)
    total = len(whole.runs)
    for n in (1, 2, 3, 5, total + 2):
        slices = [grade_part(suite, shard=(k, n), jobs=1)[0] for k in range(1, n + 1)]
        assert [len(p.runs) for p in slices] == [len(range(k - 1, total, n)) for k in range(1, n + 1)]
        for k, part in enumerate(slices, start=1):
            assert all(in_shard(r.index, k, n) and r.index % n == k - 1 for r in part.runs)
            assert part.timing is not None and part.timing.workers >= 1
        assert {p.runs_sha256 for p in slices} == {whole.runs_sha256}
        paths = []
        for part in slices:
            paths.append(tmp_path / f"{n}-{part.shard}.json")
            paths[-1].write_text(part.model_dump_json(by_alias=True))
        assert report_of(merge_parts(paths)) == report_of(whole)
    assert slices[-1].runs == []  # more shards than runs: the extra ones are empty, and merge all the same


def test_a_part_is_validated_json_with_its_schema_listed(suite, tmp_path):
    out = tmp_path / "p.json"
    assert _cli("suite", suite, "--judge", "none", "-q", "--shard", "2/3", "--out", out).exit_code == 0
    data = json.loads(out.read_text())
    assert data["format"] == "judge-suite-part/1" and (data["shard"], data["shards"]) == (2, 3)
    assert data["selection"] == "index-modulo" and data["timing"]["wall_s"] >= 0
    assert data["manifest_sha256"] == hashlib.sha256(suite.read_bytes()).hexdigest()
    listed = _cli("schema").output.split()
    assert {"suite-part", "suite-report"} <= set(listed)
    schema = json.loads(_cli("schema", "suite-part").output)
    assert schema["additionalProperties"] is False and "runs_sha256" in schema["required"]
    data["extra"] = 1
    out.write_text(json.dumps(data))
    refused = _cli("suite", "merge", out)
    assert refused.exit_code == 2 and f"{out}: extra: unknown field" in refused.output


def _parts(suite: Path, folder: Path, n: int, *extra: str) -> list[Path]:
    """The parts of all n shards, graded with `extra` options (default: --judge none)."""
    paths = []
    for k in range(1, n + 1):
        paths.append(folder / f"part-{k}.json")
        result = _cli("suite", suite, *(extra or ("--judge", "none")), "-j", "1", "-q", "--shard", f"{k}/{n}",
                      "--out", paths[-1])
        assert result.exit_code == 0, result.output
    return paths


def _refused(parts: list[Path], needle: str) -> str:
    result = _cli("suite", "merge", "-q", *parts)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.slow
def test_merge_refuses_parts_that_do_not_belong_together(suite, tmp_path):
    two = _parts(suite, tmp_path / "two", 2)
    three = _parts(suite, tmp_path / "three", 3)
    _refused([two[0]], f"{two[0]}: shard: shard(s) 2 of 2 missing")
    _refused([two[0], two[1], two[1]], f"{two[1]}: shard: shard 2/2 is also {two[1]}")
    _refused([two[0], three[1]], f"{three[1]}: shards: graded with another shard count")
    # other settings: the judge-error policy decides outcomes, so it must be the same everywhere
    other = _parts(suite, tmp_path / "ignore", 2, "--judge", "none", "--on-judge-error", "ignore")
    _refused([two[0], other[1]], f"{other[1]}: settings: graded with other settings")
    # another set of runs: a trace added after shard 1 was graded
    shutil.copy(suite.parent / "runs" / "account-twice" / "r-01.jsonl", suite.parent / "runs" / "account-twice" / "r-12.jsonl")
    late = _parts(suite, tmp_path / "late", 2)
    _refused([two[0], late[1]], f"{late[1]}: runs_sha256: graded another set of runs")
    # a scenario file edited between the shards (the manifest unchanged)
    scenario = suite.parent / "checkout.yaml"
    shutil.copy(EXAMPLES / "checkout-firefox" / "scenario.yaml", scenario)
    suite.write_text(suite.read_text().replace(str(EXAMPLES / "checkout-firefox" / "scenario.yaml"), str(scenario)))
    first = _parts(suite, tmp_path / "first", 2)
    scenario.write_text(scenario.read_text() + "\n# reviewed again\n")
    edited = _parts(suite, tmp_path / "edited", 2)
    _refused([first[0], edited[1]], f"{edited[1]}: provenance.inputs.scenarios: graded with other scenario files")
    # another manifest: a release rule changed
    suite.write_text(suite.read_text().replace("nightlyQualityFloor: 0.95", "nightlyQualityFloor: 0.9"))
    changed = _parts(suite, tmp_path / "changed", 2)
    _refused([edited[0], changed[1]], f"{changed[1]}: manifest_sha256: graded from another manifest")
    # a part that claims another judge, and one whose run sits in the wrong shard
    data = json.loads(two[1].read_text())
    data["judge"] = {"name": "gpt", "model": "openai/gpt-4.1"}
    (tmp_path / "judge.json").write_text(json.dumps(data))
    _refused([two[0], tmp_path / "judge.json"], f"{tmp_path / 'judge.json'}: judge: graded with another judge")
    data = json.loads(two[1].read_text())
    data["runs"][1]["index"] = 2
    (tmp_path / "moved.json").write_text(json.dumps(data))
    _refused([two[0], tmp_path / "moved.json"], f"{tmp_path / 'moved.json'}: runs.1.index: run 2 belongs to shard 1")
    # not a part at all: a suite report, and no file
    report = tmp_path / "report.json"
    assert _cli("suite", suite, "--judge", "none", "-q", "--json", report).exit_code == 1
    _refused([report], f"{report}: format: not a suite part")
    _refused([tmp_path / "nope.json"], f"{tmp_path / 'nope.json'}: cannot read")


def test_shard_options_that_do_not_fit_are_usage_errors(suite, tmp_path):
    for args, needle in ((["--shard", "1/2"], "--out: --shard needs --out"),
                         (["--out", tmp_path / "p.json"], "--out: writes a shard's part: give --shard K/N"),
                         (["--shard", "3/2", "--out", tmp_path / "p.json"], "--shard: expected K/N"),
                         (["--shard", "0/2", "--out", tmp_path / "p.json"], "--shard: expected K/N"),
                         (["--shard", "x", "--out", tmp_path / "p.json"], "--shard: expected K/N"),
                         (["--shard", "1/2", "--out", tmp_path / "p.json", "--junit", tmp_path / "j.xml"],
                          "--junit: a shard writes only its part")):
        result = _cli("suite", suite, "--judge", "none", "-q", *args)
        assert result.exit_code == 2 and needle in result.output, (args, result.output)
    assert not (tmp_path / "p.json").exists()
    assert "judge suite merge part-1.json part-2.json" in _cli("suite", "--help").output
    assert "suite merge [OPTIONS] PART..." in _cli("suite", "merge", "--help").output


def test_merge_exit_codes_are_those_of_the_suite(tmp_path, monkeypatch):
    """Pass (0) and inconclusive (3: an unreachable judge) merged as the unsharded suite decides them."""
    from llm_server import llm_judge_config, unreachable_api_base

    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUDGE_DOWN_KEY", "sk-test-not-a-secret")
    config = llm_judge_config(tmp_path / "judge.toml", model="openai/judge-down", api_base=unreachable_api_base(),
                              key_env="JUDGE_DOWN_KEY", timeout_s=5, transport_retries=0)
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("r-01.jsonl", "r-02.jsonl", "r-04.jsonl"):  # runs of the example that pass
        shutil.copy(EXAMPLES / "suite" / "runs" / "checkout-firefox" / name, runs / name)
    manifest = tmp_path / "suite.yaml"
    manifest.write_text(f"""
suites:
  nightly: {{scenarios: [checkout-firefox], repetitions: 3}}
scenarios:
  checkout-firefox: {{file: {EXAMPLES / 'checkout-firefox' / 'scenario.yaml'}, runs: runs}}
""")
    for judge, code in ((["--judge", "none"], 0), (["--config", config], 3)):
        whole = _cli("suite", manifest, *judge, "-j", "1", "-q", "--json", tmp_path / f"w{code}.json")
        assert whole.exit_code == code, whole.output
        parts = _parts(manifest, tmp_path / f"p{code}", 2, *judge)
        merged = _cli("suite", "merge", *parts, "-q", "--json", tmp_path / f"m{code}.json")
        assert merged.exit_code == code, merged.output
        assert (tmp_path / f"m{code}.json").read_bytes() == (tmp_path / f"w{code}.json").read_bytes()
    report = json.loads((tmp_path / "m3.json").read_text())
    assert report["judge"]["name"] == "gpt" and report["release"]["decision"] == "inconclusive"


def test_the_documented_github_actions_matrix_shards_and_merges_every_part():
    """docs/suites.md's workflow: one shard per matrix entry, K/N with N the matrix's size, parts
    uploaded under the names the merge job downloads, and the commands' options exist."""
    import re

    import yaml

    text = (REPO / "docs" / "suites.md").read_text()
    block = text.split("**In GitHub Actions**", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    jobs = yaml.safe_load(block)["jobs"]
    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    runs = [step["run"] for step in jobs["shard"]["steps"] if "run" in step]
    shard_cmd = next(r for r in runs if r.startswith("judge suite "))
    assert re.search(r"--shard \$\{\{ matrix.shard \}\}/(\d+)", shard_cmd)[1] == str(len(shards))
    assert shards == list(range(1, len(shards) + 1))
    upload = next(s for s in jobs["shard"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    download = next(s for s in jobs["release"]["steps"] if s.get("uses", "").startswith("actions/download-artifact"))
    assert jobs["release"]["needs"] == "shard" and download["with"]["merge-multiple"] is True
    assert upload["with"]["name"].startswith(download["with"]["pattern"].rstrip("*"))
    merge_cmd = next(s["run"] for s in jobs["release"]["steps"] if s.get("run", "").startswith("judge suite merge"))
    for cmd, help_args in ((shard_cmd, ["suite", "--help"]), (merge_cmd, ["suite", "merge", "--help"])):
        known = _cli(*help_args).output
        for flag in re.findall(r"(--[a-z-]+)", cmd):
            assert flag in known, (flag, cmd)


# ------------------------------------------------------------------ each trace read once


def test_the_reader_hashes_the_bytes_it_reads(tmp_path):
    from judge.trace import TraceReader

    trace = EXAMPLES / "suite" / "runs" / "account-twice" / "r-01.jsonl"
    reader = TraceReader(trace, digest=True)
    assert reader.sha256 is None and reader.bytes_read is None  # not read to its end yet
    events = list(reader)
    assert events and reader.bytes_read == trace.stat().st_size
    assert reader.sha256 == hashlib.sha256(trace.read_bytes()).hexdigest()
    plain = TraceReader(trace)
    list(plain)
    assert plain.sha256 is None and plain.bytes_read == trace.stat().st_size


def _rchar() -> int:
    """Bytes this process has read through read(2) and friends, as the kernel counts them."""
    with open("/proc/self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


def test_a_suite_worker_reads_each_trace_once():
    """Measured by the kernel, not by counting our own calls: grading a run reads about its size in
    bytes (the header read, the sha256 pass and the grading each read it before: about 4.7x)."""
    try:
        _rchar()
    except OSError:
        pytest.skip("no /proc/self/io on this system")
    from judge.suite.worker import JudgeSpec, Task, grade_task, init_worker

    trace = EXAMPLES / "suite" / "runs" / "account-twice" / "r-01.jsonl"
    task = Task("account-twice", str(EXAMPLES / "account-twice" / "scenario.yaml"), str(trace))
    init_worker(JudgeSpec())
    grade_task(task)  # imports and the ledger, once
    before = _rchar()
    results = [grade_task(task) for _ in range(20)]
    ratio = (_rchar() - before) / (20 * trace.stat().st_size)
    assert 1.0 <= ratio < 1.2, ratio
    assert {r["sha256"] for r in results} == {hashlib.sha256(trace.read_bytes()).hexdigest()}
    assert results[0]["candidate"] and results[0]["run_id"] == "account-twice-r01"


def test_an_unreadable_trace_still_gets_its_sha256_and_run_id(suite):
    report = grade_suite(suite, jobs=1).report
    broken = next(r for s in report.scenarios for r in s.results if r.status == "error")
    assert broken.run_id == "broken" and "not a JSON object" in (broken.error or "")
    assert broken.sha256 == hashlib.sha256(Path(broken.trace).read_bytes()).hexdigest()


def test_merge_refuses_hostile_files_in_one_line(suite, tmp_path):
    # Parts and --compare reports are read whole: a binary file, a device and a deep nest are refused,
    # never read without end or parsed into a RecursionError.
    two = _parts(suite, tmp_path / "two", 2)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"{\x00\x01")
    _refused([binary], f"{binary}: not a JSON suite part: binary file")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    _refused([deep], f"{deep}: not a JSON suite part: nested deeper than 200 levels")
    nest = tmp_path / "nest.json"
    nest.write_text("[" * 300 + "]" * 300)
    _refused([nest], f"{nest}: not a JSON suite part: nested deeper than 200 levels")
    if Path("/dev/zero").exists():
        result = _cli("suite", "merge", "-q", *two, "--compare", "/dev/zero")
        assert result.exit_code == 2 and result.output.strip().splitlines() == [
            "error: /dev/zero: not a JSON suite report: binary file, expected text"], result.output
