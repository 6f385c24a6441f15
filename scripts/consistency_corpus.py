"""Real sentences for training the fact-consistency model, read from ../shared/data at train time.

Sources (all MIT-licensed, see each folder's SOURCE.md; nothing is copied into the repository):
tau-bench airline conversations (user and assistant turns) and task instructions, Who&When
multi-agent logs, LLMBar instructions and outputs; plus this repository's examples/ traces and
scenario values. A sentence is kept when it reads as prose: 6 to 40 words, starts with a capital,
ends with . ! or ?, no code or markup characters, at least 85% alphabetic words.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from judge.text.consistency import split_sentences

_CODE = re.compile(r"[{}<>=|\\`#*_\[\]@~^]|https?:|www\.|\.py\b|\.json\b")
CAPS = {"tau-bench": 1500, "who-and-when": 1000, "llmbar": 1300, "examples": 400}


def prose(sentence: str) -> bool:
    words = sentence.split()
    if not 6 <= len(words) <= 40 or _CODE.search(sentence) or not sentence[:1].isupper():
        return False
    if not sentence.endswith((".", "!", "?")) or not sentence.isascii():
        return False
    alpha = sum(bool(re.fullmatch(r"[A-Za-z][A-Za-z'’,.;:!?()-]*", w)) for w in words)
    return alpha / len(words) >= 0.85


def _texts_tau(root: Path) -> Iterable[tuple[str, str, Path]]:
    runs = root / "tau-bench/historical_trajectories/gpt-4o-airline.json"
    for run in json.loads(runs.read_text(encoding="utf-8")):
        for message in run["traj"]:
            if message.get("role") in ("user", "assistant") and isinstance(message.get("content"), str):
                yield f"tau-bench/task-{run['task_id']}", message["content"], runs
    for tasks in sorted((root / "tau-bench/tau_bench/envs").glob("*/tasks_*.json")):
        for task in json.loads(tasks.read_text(encoding="utf-8")):
            yield f"tau-bench/{tasks.parent.name}-{task.get('task_index')}", task.get("instruction", ""), tasks


def _texts_who(root: Path) -> Iterable[tuple[str, str, Path]]:
    for log in sorted((root / "who-and-when/Who&When").glob("*/*.json")):
        data = json.loads(log.read_text(encoding="utf-8"))
        for message in data.get("history", []):
            if isinstance(message.get("content"), str):
                yield f"who-and-when/{log.parent.name}/{log.stem}", message["content"], log
        yield f"who-and-when/{log.parent.name}/{log.stem}", str(data.get("question", "")), log


def _texts_llmbar(root: Path) -> Iterable[tuple[str, str, Path]]:
    for dataset in sorted((root / "llmbar/Dataset/LLMBar").glob("**/dataset.json")):
        for i, item in enumerate(json.loads(dataset.read_text(encoding="utf-8"))):
            for field in ("input", "output_1", "output_2"):
                yield f"llmbar/{dataset.parent.name}/{i}", str(item.get(field, "")), dataset


# The example folders the shipped weights were trained on, named so that a new example does not
# change the weights (a new folder joins the training data only with a retrained, re-committed model).
TRAINING_EXAMPLES = ("account-twice", "authorized-migration", "checkout-firefox", "keep-database",
                     "local-container", "long-distance", "refund-agent")


def _texts_examples(repo: Path) -> Iterable[tuple[str, str, Path]]:
    traces = [t for name in TRAINING_EXAMPLES for t in sorted((repo / "examples" / name).glob("*.jsonl"))]
    for trace in sorted(traces):
        for line in trace.read_text(encoding="utf-8").splitlines():
            event = json.loads(line) if line.strip() else {}
            if event.get("kind") in ("user", "assistant", "summary") and isinstance(event.get("text"), str):
                yield f"examples/{trace.parent.name}", event["text"], trace


def _digest(paths: set[Path], base: Path) -> str:
    lines = [f"{p.relative_to(base)} {hashlib.sha256(p.read_bytes()).hexdigest()}" for p in sorted(paths)]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def load(data: Path, repo: Path, seed: int) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    """(source, sentence) pairs, sampled per corpus with `seed` up to CAPS, and a record of each
    corpus: files, their combined sha256, sentences found and taken."""
    readers = {"tau-bench": (_texts_tau, data), "who-and-when": (_texts_who, data),
               "llmbar": (_texts_llmbar, data), "examples": (_texts_examples, repo)}
    rng = random.Random(seed)
    out, records = [], []
    for name in sorted(readers):
        reader, base = readers[name]
        found: dict[str, str] = {}
        files: set[Path] = set()
        for source, text, path in reader(base):
            files.add(path)
            for sentence in split_sentences(re.sub(r"\s+", " ", text)):
                if prose(sentence):
                    found.setdefault(sentence, source)
        taken = sorted(found)
        if len(taken) > CAPS[name]:
            taken = sorted(rng.sample(taken, CAPS[name]))
        out += [(found[s], s) for s in taken]
        records.append({"corpus": name, "files": len(files), "sha256": _digest(files, base),
                        "sentences_found": len(found), "sentences_taken": len(taken)})
    return out, records


def summedits(data: Path, domain: str, split: str) -> list[dict[str, Any]]:
    """SummEdits records of one domain and split, with only what the audit may see (the seed
    summary, the edited summary) beside the label and edit types kept for scoring."""
    path = data / "summedits" / f"summedits_{domain}.json"
    rows = [r for r in json.loads(path.read_text(encoding="utf-8")) if r["split"] == split]
    return [{"seed": r["original_summary"], "summary": r["summary"], "label": int(r["label"]),
             "edit_types": list(r["edit_types"])} for r in rows]
