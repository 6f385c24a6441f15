"""Give every case of the bundled reference labels its split, by scenario, seeded (issue 24).

    .venv/bin/python scripts/split_labels.py            # write `split` into labels/reference-*.jsonl
    .venv/bin/python scripts/split_labels.py --check    # exit 1 when a row's split is not the drawn one

The draw: the scenarios of labels/reference-a.jsonl, sorted, go through scikit-learn's
GroupShuffleSplit(n_splits=1, test_size=0.5, random_state=SEED) with the scenario as the group, so no
scenario is in both halves; every row of a scenario (in every reference file) gets that scenario's
split. SEED is fixed here and was not chosen by looking at any judge's figures. Only the `split`
field is set; each row keeps its other fields and their order. The files are rewritten atomically
(a temporary file in the same folder, then a rename): these are the project's own bundled labels;
a user's labels are never rewritten by `judge` (append a corrected line instead).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from sklearn.model_selection import GroupShuffleSplit

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "labels"
FILES = ("reference-a.jsonl", "reference-b.jsonl")
SEED = 0
TEST_SIZE = 0.5


def draw(scenarios: list[str], *, seed: int = SEED) -> dict[str, str]:
    """scenario -> `dev` or `test`."""
    scenarios = sorted(set(scenarios))
    splitter = GroupShuffleSplit(n_splits=1, test_size=TEST_SIZE, random_state=seed)
    _, test = next(splitter.split(scenarios, groups=scenarios))
    test_scenarios = {scenarios[i] for i in test}
    return {s: "test" if s in test_scenarios else "dev" for s in scenarios}


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def write_atomic(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that every row carries the drawn split")
    args = parser.parse_args(argv)
    splits = draw([row["scenario"] for row in rows(LABELS / FILES[0])])
    wrong = 0
    for name in FILES:
        path = LABELS / name
        data = rows(path)
        wrong += sum(row.get("split") != splits[row["scenario"]] for row in data)
        if not args.check:
            text = "".join(json.dumps({**row, "split": splits[row["scenario"]]}, ensure_ascii=False) + "\n"
                           for row in data)
            write_atomic(path, text)
    for split in ("dev", "test"):
        chosen = sorted(s for s, v in splits.items() if v == split)
        print(f"{split}: {', '.join(chosen)}")
    if args.check and wrong:
        print(f"{wrong} rows do not carry the drawn split: run scripts/split_labels.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
