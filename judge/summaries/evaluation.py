"""Labelled summaries: read them, split them, learn the semantic thresholds, measure every layer.

A labelled summary (labels/summaries/*.jsonl, one per line) is a summary text, the scenario and
turn it summarises, and the reviewer's expected finding for every ledger entry at that turn. The
split is deterministic: a row that names its `split` (`dev` or `test`) is in it; among the
others, within each `kind`, rows sorted by the sha256 of their id, every third one is held out for
testing. Thresholds are learnt on the training rows only (Youden's J = TPR - FPR on
"the entry is addressed" vs "missing", per entry class, with the global threshold for a class with
fewer than MIN_PER_SIDE examples of either side; the competition weight is the grid value with the
best total J) and written with the label set's hash. Precision and recall per finding type come
from the calibration package (labels and verdicts as plain records).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from judge.checks.kinds.summary_phrases import SummaryPhrasesRule
from judge.errors import JudgeInputError
from judge.model import Strict
from judge.summaries import cues as sc
from judge.summaries.audit import STATUSES, SummaryAuditor, audit_entries
from judge.summaries.semantic import (
    AuditEntry,
    Thresholds,
    entry_scores,
    piece_similarities,
    unique_tokens,
    unit_scores,
)

ANNOTATOR_FIELD = "annotator"
COMPETITION_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
MIN_PER_SIDE = 8
HELD_OUT_EVERY = 3


class LabelledSummary(Strict):
    id: str
    scenario: str
    scenario_file: str
    after_turn: int
    reason: str = "compaction"
    kind: str
    text: str
    expected: dict[str, str]
    annotator: str
    note: str | None = None
    split: Literal["dev", "test"] | None = None  # None: the hash rule of `split` decides


@dataclass
class Row:
    label: LabelledSummary
    ledger: Any
    entries: list[AuditEntry]


def read_labelled(path: str | Path) -> list[Row]:
    """Rows of every *.jsonl under `path` (or the one file), validated against their scenarios."""
    from judge.ledger import load_ledger

    path = Path(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files or not all(f.is_file() for f in files):
        raise JudgeInputError("no labelled summaries (*.jsonl) here", file=str(path))
    ledgers: dict[Path, Any] = {}
    rows: list[Row] = []
    for file in files:
        for number, line in enumerate(file.read_text(encoding="utf-8").split("\n"), start=1):
            if not line.strip():
                continue
            try:
                label = LabelledSummary.model_validate_json(line)
            except ValidationError as exc:
                err = exc.errors()[0]
                raise JudgeInputError(err["msg"], file=str(file), line=number,
                                      field=".".join(str(p) for p in err["loc"]) or None) from None
            scenario = (file.parent / label.scenario_file).resolve()
            if scenario not in ledgers:
                ledgers[scenario] = load_ledger(scenario)
            ledger = ledgers[scenario]
            entries = audit_entries(ledger, label.after_turn)
            keys = {e.key for e in entries}
            if set(label.expected) != keys or any(v not in STATUSES for v in label.expected.values()):
                raise JudgeInputError(f"expected findings must cover exactly {sorted(keys)} with one of "
                                      f"{list(STATUSES)}", file=str(file), line=number, field="expected")
            rows.append(Row(label, ledger, entries))
    return rows


def labels_digest(rows: list[Row]) -> str:
    payload = sorted((r.label.id, r.label.text, sorted(r.label.expected.items())) for r in rows)
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()


def split(rows: list[Row]) -> tuple[list[Row], list[Row]]:
    """(training or development rows, held-out test rows): a row's own `split` when it names one,
    else every third row of its kind by the sha256 of its id."""
    by_kind: dict[str, list[Row]] = defaultdict(list)
    train: list[Row] = [r for r in rows if r.label.split == "dev"]
    test: list[Row] = [r for r in rows if r.label.split == "test"]
    for row in rows:
        if row.label.split is None:
            by_kind[row.label.kind].append(row)
    for kind in sorted(by_kind):
        ordered = sorted(by_kind[kind], key=lambda r: hashlib.sha256(r.label.id.encode()).hexdigest())
        for i, row in enumerate(ordered):
            (test if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 else train).append(row)
    return train, test


# ---------------------------------------------------------------- fitting


def _youden(scores: list[float], positive: list[bool]) -> tuple[float, float]:
    """(best J, threshold): the threshold halfway between the two scores where J peaks."""
    pos = sum(positive)
    neg = len(positive) - pos
    if not pos or not neg:
        return 0.0, min(scores) if scores else 0.5
    pairs = sorted(zip(scores, positive, strict=False), reverse=True)
    best_j, best_t, tp, fp = -1.0, pairs[0][0], 0, 0
    for i, (score, is_pos) in enumerate(pairs):
        tp += is_pos
        fp += not is_pos
        nxt = pairs[i + 1][0] if i + 1 < len(pairs) else score - 0.01
        if nxt == score:
            continue
        j = tp / pos - fp / neg
        if j > best_j:
            best_j, best_t = j, (score + nxt) / 2
    return best_j, round(best_t, 4)


def _best_scores(prepared: list[tuple[Row, list[str], list[str], Any, list[int]]],
                 weight: float) -> list[tuple[str, float, bool]]:
    """(class, best score, addressed) for every required entry."""
    out = []
    for row, units, contexts, sims, owner in prepared:
        scores_by_unit = unit_scores(sims, owner, len(units), weight)
        tokens = unique_tokens(row.entries)
        for i, entry in enumerate(row.entries):
            if not entry.required:
                continue
            scores = entry_scores(entry, units, [float(s) for s in scores_by_unit[i]],
                                  tokens.get(entry.key, set()), contexts)
            out.append((entry.class_, max(scores), row.label.expected[entry.key] != "missing"))
    return out


def _prepare(rows: list[Row], model: Any) -> list[tuple[Row, list[str], list[str], Any, list[int]]]:
    prepared = []
    for row in rows:
        split = sc.split_units(row.label.text)
        units, contexts = [u for u, _ in split], [c for _, c in split]
        sims, owner = piece_similarities(model, row.ledger.scenario.id, row.label.after_turn, row.entries, units)
        prepared.append((row, units, contexts, sims, owner))
    return prepared


def fit_thresholds(rows: list[Row], model: Any, *, model_name: str = "all-MiniLM-L6-v2") -> tuple[Thresholds, dict]:
    best: tuple[float, float, list] | None = None
    prepared = _prepare(rows, model)
    for weight in COMPETITION_GRID:
        scored = _best_scores(prepared, weight)
        j, _ = _youden([s for _, s, _ in scored], [p for _, _, p in scored])
        if best is None or j > best[0] + 1e-9:
            best = (j, weight, scored)
    assert best is not None  # COMPETITION_GRID is not empty
    j_all, weight, scored = best
    _, default = _youden([s for _, s, _ in scored], [p for _, _, p in scored])
    by_class, support = {}, {}
    for class_ in sorted({c for c, _, _ in scored}):
        mine = [(s, p) for c, s, p in scored if c == class_]
        pos = sum(p for _, p in mine)
        support[class_] = {"addressed": pos, "missing": len(mine) - pos}
        if pos >= MIN_PER_SIDE and len(mine) - pos >= MIN_PER_SIDE:
            by_class[class_] = _youden([s for s, _ in mine], [p for _, p in mine])[1]
    thresholds = Thresholds(by_class=by_class, default=default, competition=weight, model=model_name)
    return thresholds, {"youden_j_train": round(j_all, 4), "support_train": support}


# ---------------------------------------------------------------- measuring


def run_layers(rows: list[Row], model: Any, thresholds: Thresholds, judge: Any = None) -> dict[str, dict[str, str]]:
    """Per layer ('phrase', 'semantic' unless `model` is None, 'merged', and 'judge' when given),
    case -> status, where a case is `<summary id>/<key>` and a layer that did not assess an entry
    says 'unassessed'."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    auditors: dict[int, SummaryAuditor] = {}
    for row in rows:
        auditor = auditors.setdefault(id(row.ledger), SummaryAuditor(row.ledger, model=model,
                                                                     thresholds=thresholds, judge=judge))
        audit = auditor.audit(row.label.text, row.label.after_turn)
        for finding in audit.findings:
            case = f"{row.label.id}/{finding.key}"
            out["merged"][case] = finding.status
            for layer in ("phrase", "semantic", "judge"):
                if (layer == "judge" and judge is None) or (layer == "semantic" and model is None):
                    continue
                found = finding.layers.get(layer)
                status = found.status if found is not None and found.status else None
                if status is None and layer == "phrase" and not finding.required:
                    status = "not-required"  # the phrase layer knows the ledger's requirement too
                out[layer][case] = status or "unassessed"
    return dict(out)


def measure(rows: list[Row], verdicts: dict[str, str]) -> dict[str, Any]:
    """Per finding type precision/recall (calibration.metrics.per_class) and accuracy."""
    from calibration.inputs import LabelRecord, VerdictRecord
    from calibration.metrics import accuracy, per_class
    from calibration.reference import match, reference_labels

    labels = [LabelRecord(case=f"{r.label.id}/{k}", label=v, annotator=r.label.annotator)
              for r in rows for k, v in r.label.expected.items()]
    records = [VerdictRecord(case=c, verdict=v, judge="layer") for c, v in verdicts.items()]
    matched = match(reference_labels(labels), [v for v in records if v.case in {label.case for label in labels}])
    stats = per_class(matched.y_true, matched.y_pred, labels=list(STATUSES))
    required = [i for i, ref in enumerate(matched.references) if ref.label != "not-required"]
    failed_true = [matched.y_true[i] not in ("preserved",) for i in required]
    failed_pred = [matched.y_pred[i] not in ("preserved", "unassessed") for i in required]
    tp = sum(a and b for a, b in zip(failed_true, failed_pred, strict=False))
    return {
        "cases": len(matched.references),
        "accuracy": round(accuracy(matched.y_true, matched.y_pred), 4),
        "per_class": {k: v.model_dump() for k, v in stats.items()},
        "lost_entry": {"precision": round(tp / sum(failed_pred), 4) if sum(failed_pred) else None,
                       "recall": round(tp / sum(failed_true), 4) if sum(failed_true) else None,
                       "support": sum(failed_true)},
        "unassessed": sum(v == "unassessed" for v in matched.y_pred.tolist()),
    }


def accuracy_on(rows: list[Row], verdicts: dict[str, str], keys: set[str] | None = None) -> dict[str, Any]:
    """Share of entries whose status equals the label (optionally only the given `<id>/<key>` cases)."""
    cases = [(f"{r.label.id}/{k}", v) for r in rows for k, v in r.label.expected.items()]
    if keys is not None:
        cases = [(c, v) for c, v in cases if c in keys]
    right = sum(verdicts.get(c) == v for c, v in cases)
    return {"n": len(cases), "correct": right, "accuracy": round(right / len(cases), 4) if cases else None}


def write_thresholds(path: str | Path, thresholds: Thresholds, *, labels_sha256: str, fit_info: dict,
                     held_out: dict, train: int, test: int) -> None:
    from judge.summaries.facts import weights_sha256

    data = {"version": 1, "model": thresholds.model, "labels": "labels/summaries",
            "labels_sha256": labels_sha256, "consistency_sha256": weights_sha256(),
            "split": {"train": train, "test": test,
                                                      "rule": "within each kind, sorted by sha256(id), "
                                                              f"every {HELD_OUT_EVERY}rd held out"},
            "method": "Youden's J on addressed-vs-missing per entry class (global where a class has < "
                      f"{MIN_PER_SIDE} of either); competition weight chosen on the grid {list(COMPETITION_GRID)}",
            "thresholds": thresholds.as_dict(), "fit": fit_info,
            "held_out": held_out, "held_out_with": "the semantic layer with the fact-consistency model whose "
                                                   "weights hash is consistency_sha256"}
    from judge.model.atomic import write_atomic

    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")




# ---------------------------------------------------------------- the whole evaluation


def summary_level(rows: list[Row], verdicts: dict[str, str]) -> dict[str, Any]:
    """Does the layer pass the summaries the labels pass and fail the ones they fail?"""
    right = failing = caught = 0
    for row in rows:
        should_fail = any(v in FAILURE_LABELS for v in row.label.expected.values())
        fails = any(verdicts.get(f"{row.label.id}/{k}") in FAILURE_LABELS for k in row.label.expected)
        right += should_fail == fails
        failing += should_fail
        caught += should_fail and fails
    return {"summaries": len(rows), "correct": right, "failing": failing, "caught": caught}


FAILURE_LABELS = ("missing", "distorted", "obsolete-as-current", "assumption-promoted")


def evaluate(path: str | Path, model: Any, *, fit: bool = False, model_name: str = "all-MiniLM-L6-v2",
             out: str | Path | None = None) -> dict[str, Any]:
    """Measure the phrase, semantic and merged layers on the train and held-out splits (learning the
    thresholds on the train split first when `fit`, and writing them to `out`). `model` None: the
    phrase layer only, as `judge audit-summary --model none`."""
    rows = read_labelled(path)
    train, test = split(rows)
    digest = labels_digest(rows)
    fit_info: dict[str, Any] = {}
    if fit:
        thresholds, fit_info = fit_thresholds(train, model, model_name=model_name)
    else:
        thresholds = Thresholds.load(out) if out is not None else Thresholds.load()
    report: dict[str, Any] = {"labels_sha256": digest, "rows": len(rows), "train": len(train), "test": len(test),
                              "thresholds": thresholds.as_dict(), "fit": fit_info,
                              "thresholds_match_labels": fit or thresholds.labels_sha256 == digest,
                              "splits": {}}
    for name, part in (("train", train), ("test", test), ("all", rows)):
        verdicts = run_layers(part, model, thresholds)
        paraphrased = [r for r in part if r.label.kind == "paraphrased"]
        ruled = {f"{r.label.id}/{rule.key}" for r in paraphrased for rule in r.ledger.scenario.rules
                 if isinstance(rule, SummaryPhrasesRule)}
        report["splits"][name] = {
            layer: {**measure(part, v), "summaries": summary_level(part, v),
                    "paraphrased": {"all_entries": accuracy_on(paraphrased, v),
                                    "phrase_rule_entries": accuracy_on(paraphrased, v, ruled)}}
            for layer, v in verdicts.items()}
    if fit and out is not None:
        held = report["splits"]["test"]
        write_thresholds(out, thresholds, labels_sha256=digest, fit_info=fit_info, train=len(train),
                         test=len(test), held_out={layer: {"accuracy": m["accuracy"], "lost_entry": m["lost_entry"],
                                                           "summaries": m["summaries"]}
                                                   for layer, m in held.items()})
    return report


def markdown_table(report: dict[str, Any], split_name: str = "test") -> str:
    """Precision / recall per finding type and layer on one split, as a Markdown table."""
    layers = [layer for layer in ("phrase", "semantic", "merged", "judge") if layer in report["splits"][split_name]]
    stats = report["splits"][split_name]

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    lines = ["| finding | support | " + " | ".join(f"{layer} P / R" for layer in layers) + " |",
             "|---|---:|" + "---|" * len(layers)]
    for status in STATUSES:
        support = stats[layers[0]]["per_class"][status]["support"]
        row = [f"{cell(stats[layer]['per_class'][status]['precision'])} / "
               f"{cell(stats[layer]['per_class'][status]['recall'])}" for layer in layers]
        lines.append(f"| {status} | {support} | " + " | ".join(row) + " |")
    lost = [f"{cell(stats[layer]['lost_entry']['precision'])} / {cell(stats[layer]['lost_entry']['recall'])}"
            for layer in layers]
    lines.append(f"| any failure (lost entry) | {stats[layers[0]]['lost_entry']['support']} | "
                 + " | ".join(lost) + " |")
    acc = [f"{stats[layer]['accuracy']:.2f}" for layer in layers]
    lines.append("| entry accuracy | " + str(stats[layers[0]]["cases"]) + " | " + " | ".join(acc) + " |")
    summ = [f"{stats[layer]['summaries']['correct']}/{stats[layer]['summaries']['summaries']}" for layer in layers]
    lines.append("| summary pass/fail right | | " + " | ".join(summ) + " |")
    return "\n".join(lines)
