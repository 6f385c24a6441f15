"""How far the fact-consistency weights (judge/text/consistency.json) move when their features move by
float noise, as another BLAS build or CPU kind would move them: the tolerance of the rebuild test
(tests/test_consistency.py, WEIGHT_TOLERANCE) comes from this.

Reads the features scripts/train_consistency.py cached (run it once first), refits with every feature
multiplied by (1 + rel * N(0, 1)) for a few relative noise levels, and prints the largest change of
any six-digit weight and how many predictions on the held-out pairs and SummEdits flags changed.

    .venv/bin/python scripts/train_consistency.py --out /tmp/consistency.json   # warms the cache
    .venv/bin/python scripts/consistency_tolerance.py
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("train_consistency", REPO / "scripts/train_consistency.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _flat(weights) -> np.ndarray:
    d = weights.model_dump()
    return np.array(d["mean"] + d["scale"] + sum(d["coef"], []) + d["intercept"] + [d["temperature_beta"]])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--trials", type=int, default=4)
    args = parser.parse_args(argv)
    tc = _script()
    cm = tc.cm
    X0, _, _ = tc.pair_rows(args.data, tc.SEED, tc.lazy_minilm())
    tune = tc.summedits_rows(args.data, tc.lazy_minilm())
    threshold = json.loads(cm.WEIGHTS_FILE.read_text())["threshold"]

    def fitted(X):
        weights = tc.to_weights(*tc.fit(X, tc.SEED), tc.SEED)
        model = cm.ConsistencyModel(weights)
        preds = [int(np.argmax(p)) for p in model.proba(X0["test"][0])]
        flags = [min(p[0] for p in model.proba(rows)) < threshold for d in sorted(tune) for rows, _ in tune[d]]
        return _flat(weights), preds, flags

    base, base_preds, base_flags = fitted(X0)
    rng = np.random.default_rng(0)
    for rel in (1e-7, 1e-6, 1e-5):
        worst, preds_changed, flags_changed = 0.0, 0, 0
        for _ in range(args.trials):
            X = {k: ([list(np.array(r) * (1 + rel * rng.standard_normal(len(r)))) for r in v[0]], v[1], v[2])
                 for k, v in X0.items()}
            flat, preds, flags = fitted(X)
            worst = max(worst, float(np.max(np.abs(flat - base))))
            preds_changed += sum(a != b for a, b in zip(preds, base_preds, strict=True))
            flags_changed += sum(a != b for a, b in zip(flags, base_flags, strict=True))
        print(f"relative feature noise {rel:g}: largest weight change {worst:.3g}; held-out predictions changed "
              f"{preds_changed}/{len(base_preds) * args.trials}, SummEdits flags changed "
              f"{flags_changed}/{len(base_flags) * args.trials} ({args.trials} trials)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
