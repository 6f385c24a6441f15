"""Convert LLMBar's Natural set into calibration label and verdict files (an external check).

LLMBar (Zeng et al., ICLR 2024, https://github.com/princeton-nlp/LLMBar, MIT licence) pairs an
instruction with two outputs and a gold label saying which output follows it better ("1" or "2").
Its repository also stores GPT-4's verdicts, made twice per pair: with the outputs in the original
order and swapped (the swapped winner is already mapped back to the original numbering).

This script reads, from the shared data folder (default: ../shared/data/llmbar beside the repo),
    Dataset/LLMBar/Natural/dataset.json                      gold labels
    Dataset/LLMBar/Natural/evaluators/GPT-4/<EVALUATOR>/result.json   stored GPT-4 verdicts
and writes three JSONL files into OUT_DIR (which must lie outside this repository: extracts of the
data are never committed):
    labels.jsonl                  {"case", "label", "annotator": "llmbar-gold"}
    verdicts-original.jsonl       {"case", "verdict", "judge"}   outputs in the original order
    verdicts-swapped.jsonl        {"case", "verdict", "judge"}   outputs swapped
Case ids are "llmbar-natural/<row>" (row = 0-based position in dataset.json). The stored verdicts
have no confidence, so calibration reports no ECE/Brier/calibrator for them. A verdict the repository
could not parse (winner null) is written as "unparsed" and counts as wrong, as in LLMBar's own script.

Usage:
    python scripts/llmbar_to_calibration.py OUT_DIR [--data DIR] [--evaluator Vanilla|CoT]
then, for example:
    judge calibrate --labels OUT_DIR/labels.jsonl --verdicts OUT_DIR/verdicts-original.jsonl \
        --out OUT_DIR/records --name gpt4-llmbar-original --positive 1
    judge agreement --verdicts OUT_DIR/verdicts-original.jsonl --verdicts OUT_DIR/verdicts-swapped.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "llmbar"
NATURAL = Path("Dataset/LLMBar/Natural")
SOURCE = "princeton-nlp/LLMBar@900616bff90b6c6c8e1681f7d079250637c55992"
ORDERS = {"original": "swap = False", "swapped": "swap = True"}


def _load(path: Path) -> list[dict]:
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"error: {path}: {exc}") from None
    if not isinstance(rows, list):
        raise SystemExit(f"error: {path}: expected a JSON list")
    return rows


def convert(data_dir: Path, out_dir: Path, evaluator: str = "Vanilla") -> dict[str, Path]:
    """Write labels.jsonl and one verdict file per order; return their paths."""
    dataset = _load(data_dir / NATURAL / "dataset.json")
    results = _load(data_dir / NATURAL / "evaluators" / "GPT-4" / evaluator / "result.json")
    if len(results) != len(dataset):
        raise SystemExit(f"error: {len(results)} results for {len(dataset)} dataset rows")
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"labels": out_dir / "labels.jsonl"}
    with paths["labels"].open("w", encoding="utf-8") as labels:
        for row, item in enumerate(dataset):
            labels.write(json.dumps({"case": f"llmbar-natural/{row}", "label": str(item["label"]),
                                     "annotator": "llmbar-gold"}) + "\n")
    for order, field in ORDERS.items():
        judge = {"model": "gpt-4", "prompt": f"LLMBar GPT-4/{evaluator}", "order": order,
                 "source": SOURCE}
        paths[order] = out_dir / f"verdicts-{order}.jsonl"
        with paths[order].open("w", encoding="utf-8") as verdicts:
            for row, (item, result) in enumerate(zip(dataset, results, strict=False)):
                if result["input"] != item["input"]:
                    raise SystemExit(f"error: row {row}: result and dataset disagree on the input")
                winner = result["results"][-1][field]["winner"]
                verdicts.write(json.dumps({"case": f"llmbar-natural/{row}",
                                           "verdict": winner if winner is not None else "unparsed",
                                           "judge": judge}) + "\n")
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="folder for the JSONL files (outside the repo)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the llmbar data folder")
    parser.add_argument("--evaluator", default="Vanilla", choices=["Vanilla", "CoT"])
    args = parser.parse_args(argv)
    out_dir = args.out_dir.resolve()
    if out_dir == REPO or REPO in out_dir.parents:
        parser.error(f"{out_dir} is inside the repository; write extracts of the data elsewhere")
    if not (args.data / NATURAL).is_dir():
        parser.error(f"{args.data / NATURAL} not found (give --data)")
    for name, path in convert(args.data, out_dir, args.evaluator).items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
