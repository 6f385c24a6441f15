"""The section of benchmarks/RESULTS.md that benchmarks/llm_real.py writes, rendered from a run's record
alone (what `llm_real.py --out` saves), so a test can check RESULTS.md against the committed record."""

from __future__ import annotations

import numpy as np

SEED = 0  # benchmarks/llm_real.py's seed of the orders and the bootstrap


def cell(figure, scale: float = 1.0, digits: int = 2) -> str:
    point, low, high = (scale * v for v in figure)
    return "-" if np.isnan(point) else f"{point:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def spent(usage: dict) -> str:
    """Requests, tokens and latency, as a sentence's middle."""
    said = (f"{usage['requests']} requests ({usage['attempts']} attempts with the re-asks), "
            f"{usage['input_tokens']:,} prompt + {usage['output_tokens']:,} answer tokens, "
            f"{usage['cache_hits']} answers from the verdict cache")
    if usage["latency_s"]:
        median, p90, most = usage["latency_s"]
        said += f"; wall time per asked request {median:.0f} s median, {p90:.0f} s p90, {most:.0f} s max"
    return said


def rows(judges, total: int, metrics: tuple[str, ...], digits: int) -> list[str]:
    """A table row per (title, figures, judge errors): scored of `total`, the errors, each metric's
    interval (figures None: nothing scored)."""
    out = []
    for title, figures, errors in judges:
        if figures is None:
            out.append(f"| {title} | 0 / {total} | {errors} | " + " | ".join("-" for _ in metrics) + " |")
        else:
            out.append(f"| {title} | {figures['n']} / {total} | {errors} | "
                       + " | ".join(cell(figures[m], digits=digits) for m in metrics) + " |")
    return out


def report(record: dict) -> str:
    """The RESULTS.md section's body, from a run's record alone (what --out writes): rerendered by the
    test that checks RESULTS.md against the committed record."""
    name, labels, rjudge, limit = record["name"], record["labels"], record["rjudge"], record["checkpoints"]
    lines = [f"`{record['command']}` ({record['wall_s'] / 60:.0f} min on the 2-core VM shared with other sessions, "
             f"load average {record['load'][0]:.1f} at the start and {record['load'][1]:.1f} at the end; record: "
             f"`{record['out']}`). Judge: {name} ({record['note']}) through the bundled prompt "
             "goal-fidelity@3, `mode = \"strict\"`, temperature 0, `timeout_s = 600`, one request at a time. "
             "A model this small is expected at chance as a judge: read the intervals, not the points. Judge errors "
             "(no valid answer after the re-asks, or the asked key left out of it) are counted and not scored. "
             "Intervals: 95% percentile bootstrap, 1,000 resamples, seed 0. The command with `--results` measures again "
             f"and rewrites this section; `python benchmarks/llm_real.py --render {record['out']} --results` rewrites it "
             "from the committed record (tests/test_llm_real_benchmark.py checks they agree).", ""]
    if labels is not None and labels["checkpoints"]:
        subset = f"the first {limit} of 26 checkpoints in a seeded order, " if limit else ""
        if labels["checkpoints"] < labels["drawn"]:
            subset += (f"**only the first {labels['checkpoints']} of these {labels['drawn']} checkpoints (seeded order) "
                       "were asked before the run's time budget (`--budget-min`) ran out**, ")
        lines += [f"**Reference labels, test split** (`split: test`; {subset}{labels['checkpoints']} checkpoints, "
                  f"{labels['cases']} cases with a reference, {labels['ties']} ties left out; "
                  f"{spent(labels['usage'])}):", "",
                  "| judge | scored / cases | judge errors | accuracy | Cohen's kappa | F1 (violated) |",
                  "|---|---:|---:|---|---|---|"]
        lines += rows(((f"**{name}**", labels["llm"], labels["errors"]),
                       ("`local` (stored verdicts, same cases; not held out for it)", labels["local"], 0),
                       ("always `upheld`", labels["upheld"], 0)), labels["cases"], ("accuracy", "kappa", "f1"), 2)
        lines.append("")
    if rjudge is not None and rjudge["records"]:
        cut = "" if rjudge["records"] == rjudge["drawn"] else \
            (f"**only the first {rjudge['records']} of the {rjudge['drawn']} drawn were asked before the run's "
             "time budget (`--budget-min`) ran out**; ")
        lines += [f"**R-Judge, odd ids** (held out; {cut}{rjudge['records']} records in a seeded order (seed {SEED}), "
                  f"{rjudge['unsafe']} unsafe; {spent(rjudge['usage'])}):", "",
                  "| judge | scored / records | judge errors | F1 (unsafe), % | recall, % | specificity, % |",
                  "|---|---:|---:|---|---|---|"]
        lines += rows(((f"**{name}**", rjudge["llm"], rjudge["errors"]), ("`local` (same records)", rjudge["local"], 0),
                       ("always unsafe", rjudge["unsafe_always"], 0)), rjudge["records"],
                      ("f1", "recall", "specificity"), 1)
        from rjudge_local import PUBLISHED

        lines += [f"| {model} (published, all 564, no interval) | 564 | - | {f1} | - | - |" for model, f1, _, _ in PUBLISHED]
        lines.append("")
    lines.append("For scale, on another task: on LLMBar Natural (which of two outputs follows an instruction), "
                 "GPT-4's stored verdicts (../shared/data/llmbar, docs/calibration.md) are right on 95/100 pairs "
                 "(96/100 with the outputs swapped); the 0.5B model was right on 17 of 35 pairs in the measurement "
                 "issue 40 cites (chance: 17.5). Not rerun here: the bundled prompt grades ledger keys, not pairs.")
    return "\n".join(lines) + "\n"


def title(name: str) -> str:
    return f"The LLM judge through a real local model: {name} (issue 40, benchmarks/llm_real.py)"
