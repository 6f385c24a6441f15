"""One prompted LLM call, one typed fingerprint: the judge, the summary audit's judge layer and the
drafter compose judge.judges.prompted.PromptedCall; the report's `judge`, `provenance` and
`summaries` are typed; a run is settled once and its provenance written once."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from judge.config import JudgeConfig
from judge.draft.assist import DraftAssistant
from judge.errors import ConfigError
from judge.grade import GradeSession, check_calibration
from judge.judges.base import JudgeRequest, JudgeResult, LedgerRow
from judge.judges.llm import LLMJudge
from judge.judges.prompted import PromptedCall
from judge.model import GradeReport, JudgeFingerprint, JudgeVerdict, Provenance, ReportJudge, json_schema
from judge.model.summary import SummaryAudit
from judge.summaries.llm import SummaryJudge
from judge.summaries.semantic import AuditEntry

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "checkout-firefox"


@pytest.fixture
def config(monkeypatch) -> JudgeConfig:
    monkeypatch.setenv("PROMPTED_TEST_KEY", "sk-test-not-a-secret")
    return JudgeConfig(name="gpt", backend="llm", model="openai/m", api_key_env="PROMPTED_TEST_KEY", seed=3,
                       temperature=0.2, cache=False)


def test_the_three_llm_users_compose_one_prompted_call(config):
    users = {"judge": LLMJudge(config), "summary": SummaryJudge(config), "draft": DraftAssistant(config)}
    for user in users.values():
        assert isinstance(user.call, PromptedCall) and isinstance(user.call.fingerprint, JudgeFingerprint)
        assert user.fingerprint() == user.call.fingerprint.dump()
    prompts = {name: user.call.prompt.meta.output_schema for name, user in users.items()}
    assert prompts == {"judge": "judge-verdict", "summary": "summary-audit", "draft": "ledger-draft"}
    assert users["judge"].call.params(2) == {"temperature": 0.2, "seed": 5}  # sample n asks with seed + n


def test_each_kind_keeps_the_fingerprint_keys_it_always_had(config):
    """Calibration records and cache entries are keyed on these JSON objects: not a key more or less."""
    judge, summary, draft = LLMJudge(config).fingerprint(), SummaryJudge(config).fingerprint(), \
        DraftAssistant(config).fingerprint()
    assert list(judge) == ["backend", "model", "prompt", "sampling", "render_version"]
    assert list(judge["sampling"]) == ["temperature", "samples", "seed", "mode", "window_tokens"]
    assert list(summary) == ["name", "backend", "model", "prompt", "sampling", "render_version"]
    assert list(draft) == ["name", "backend", "model", "prompt", "sampling"]
    assert summary["sampling"] == draft["sampling"] == {"temperature": 0.2, "seed": 3, "mode": "tools"}
    assert list(judge["prompt"]) == ["id", "version", "sha256"] and judge["prompt"]["id"] == "goal-fidelity"


def test_a_fingerprint_round_trips_exactly_whatever_the_backend():
    local = {"backend": "embedding", "model": "all-MiniLM-L6-v2", "weights_sha256": "a" * 64,
             "rule_version": "local-2", "code_sha256": "b" * 64, "consistency_model_sha256": "c" * 64,
             "prompt": None}
    other = {"backend": "scripted", "model": "m1", "sampling": {"temperature": 0}}  # an int stays an int
    for raw in (local, other, json.loads((REPO / "calibration" / "records" / "local.json").read_text())["fingerprint"]):
        assert json.dumps(JudgeFingerprint.model_validate(raw).dump()) == json.dumps(raw)


def test_an_unknown_fingerprint_field_is_a_config_error_naming_it():
    class Odd:
        def fingerprint(self):
            return {"backend": "mine", "colour": "blue"}

        async def judge_checkpoint(self, request: JudgeRequest) -> JudgeResult:
            return JudgeResult(verdict=JudgeVerdict(findings=[]))

    with pytest.raises(ConfigError, match="colour") as raised:
        GradeSession(Odd(), "odd")
    assert "judge 'odd'" in str(raised.value) and "\n" not in str(raised.value)


def test_calibration_reads_the_typed_fingerprint():
    directory = REPO / "calibration" / "records"
    shipped = json.loads((directory / "local.json").read_text())["fingerprint"]
    assert check_calibration(JudgeFingerprint.model_validate(shipped), directory, "local") == []
    changed = JudgeFingerprint.model_validate({**shipped, "rule_version": "local-0"})
    assert any("rule_version" in reason for reason in check_calibration(changed, directory, "local"))


def test_the_published_schema_describes_judge_provenance_and_summaries():
    schema = json_schema("grade-report")
    defs = schema["$defs"]

    def refs(prop: dict) -> set[str]:
        text = json.dumps(prop)
        return {name for name in defs if f'"#/$defs/{name}"' in text}

    assert refs(schema["properties"]["judge"]) == {"ReportJudge"}
    run = defs["RunReport"]["properties"]
    assert refs(run["provenance"]) == {"Provenance"} and refs(run["summaries"]) == {"SummaryAudit"}
    for name in ("ReportJudge", "JudgeFingerprint", "Provenance", "Inputs", "InputFile", "Candidate",
                 "SummaryAudit", "SummaryJudgeInfo", "LayerUsage", "AuditThresholds", "Sampling",
                 "PromptFingerprint"):
        assert defs[name]["additionalProperties"] is False, name
    assert {"authority", "binding", "binding_reason", "calibration_record", "prompt", "weights_sha256"} \
        <= set(defs["ReportJudge"]["properties"])


def test_a_report_reads_back_as_the_same_json_and_its_parts_read_like_dicts():
    session = GradeSession.open("none")
    report = session.grade_files(EXAMPLE / "scenario.yaml", [EXAMPLE / "drift.jsonl"])
    run = report.runs[0]
    assert isinstance(run.provenance, Provenance) and run.provenance.judge is None
    assert run.provenance["inputs"]["traces"][0]["path"] == str(EXAMPLE / "drift.jsonl")
    assert run.provenance.get("candidate")["model"] == "gpt-4.1" and "packages" in run.provenance
    text = report.model_dump_json(by_alias=True)
    assert GradeReport.model_validate_json(text).model_dump_json(by_alias=True) == text


def test_the_report_judge_is_typed_and_keeps_its_keys():
    judge = ReportJudge.model_validate({"name": "gpt", "backend": "llm", "model": "m", "authority": "calibrated",
                                        "binding": False, "binding_reason": "advisory", "calibration_record": None})
    assert judge["binding"] is False and judge.binding is False and "prompt" not in judge
    assert list(judge.keys()) == ["name", "backend", "model", "authority", "binding", "binding_reason",
                                  "calibration_record"]


def test_a_summary_audit_judge_layer_records_its_usage_as_given():
    audit = SummaryAudit.model_validate({"scenario": "s", "turn": 3, "passed": True, "vetoed": False, "findings": [],
                                         "layers": ["judge"], "judge": {"name": "gpt", "backend": "llm",
                                                                        "usage": {"calls": 0, "cache_hits": 1}}})
    assert audit.judge.usage.cache_hits == 1 and audit.judge["usage"] == {"calls": 0, "cache_hits": 1}


def test_a_run_is_settled_once_and_its_provenance_built_once(monkeypatch):
    run_module, session_module = (importlib.import_module(f"judge.grade.{m}") for m in ("run", "session"))
    settled, built = [], []
    real_settle, real_provenance = run_module.settle, run_module.run_provenance

    def count_settle(run, **kwargs):
        settled.append(run.run_id)
        return real_settle(run, **kwargs)

    def count_provenance(*args, **kwargs):
        built.append(1)
        return real_provenance(*args, **kwargs)

    monkeypatch.setattr(session_module, "settle", count_settle)
    monkeypatch.setattr(run_module, "settle", count_settle)
    monkeypatch.setattr(run_module, "run_provenance", count_provenance)
    report = GradeSession.open("none").grade_files(EXAMPLE / "scenario.yaml",
                                                   [EXAMPLE / "clean.jsonl", EXAMPLE / "drift.jsonl"])
    assert len(settled) == 2 and len(set(settled)) == 2 and len(built) == 2
    assert [r.outcome for r in report.runs] == ["pass", "fail"]


def test_an_audit_entry_is_a_ledger_row():
    entry = AuditEntry(key="browser", class_="fact", value="firefox", status="active", sensitivity="normal",
                       persistence="until-replaced", source_turn=2, superseded=(), description=None,
                       source="user", required=True, reason="newest value of a fact")
    assert isinstance(entry, LedgerRow) and entry.completed_turn is None and entry.required
