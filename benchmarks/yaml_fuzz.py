"""Does libyaml read scenario files as PyYAML's pure-Python parser does? A mutation fuzz.

    .venv/bin/python benchmarks/yaml_fuzz.py [--seed 1] [--cases 3000]

Takes the bundled YAML files (examples/, judge/), applies 1-3 random edits to each case (inserting,
replacing or deleting one of the characters YAML gives a meaning to, tabs, carriage returns and
byte order marks), and composes every case twice: over the pure-Python parser (judge.ledger.fixture's
loader, what judge reads with) and over libyaml's C parser (PyYAML's composer over it). A case
libyaml refuses is not counted (a reader could fall back to the pure parser there); the others are
counted when the pure parser refuses what libyaml accepts, or when both accept and the node trees
differ (tag, value, line, column). Prints the counts and a few examples.

Seed 1, 3,000 cases (2026-12-07; tests/test_yaml_parser.py checks these figures): 101 accepted that
the pure parser refuses, 35 other trees (2026-12-02: 99 and 36; the cases are mutations of the bundled
files, so the figures move when those files change, as the agent-safety policy did). That is why judge
reads YAML with the pure parser only.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judge.ledger import fixture  # noqa: E402

EDITS = ["\t", "?", ":", "-", "#", "&", "*", "!", "|", ">", "'", '"', "\ufeff", " ", "\n", "{", "}", "[", "]",
         ",", "%", "@", "`", "\r", "\\", "\x85", "\u2028", "..."]


def _libyaml_loader() -> type:
    """PyYAML's composer and safe constructor over libyaml's parser (the bounds of judge's loader are
    left out: no case here comes near them)."""
    from yaml._yaml import CParser
    from yaml.composer import Composer
    from yaml.constructor import SafeConstructor
    from yaml.resolver import Resolver

    class ComposingCParser(Composer, CParser, SafeConstructor, Resolver):
        def __init__(self, stream):
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
    return ComposingCParser


def _tree(node):
    if isinstance(node, yaml.ScalarNode):
        return node.tag, node.value, node.start_mark.line, node.start_mark.column
    if isinstance(node, yaml.MappingNode):
        return node.tag, node.start_mark.line, tuple((_tree(k), _tree(v)) for k, v in node.value)
    return node.tag, node.start_mark.line, tuple(_tree(i) for i in node.value)


def _compose(text: str, loader: type):
    try:
        return "ok", _tree(yaml.compose(text, Loader=loader))
    except fixture._NodeError as exc:
        return "bound", str(exc)
    except (yaml.YAMLError, UnicodeEncodeError) as exc:
        return "error", type(exc).__name__


def fuzz(seed: int, cases: int) -> tuple[dict[str, int], list[str]]:
    """The counts of disagreements over `cases` mutated files, and up to five examples."""
    files = sorted((p for d in ("examples", "judge") for p in (ROOT / d).rglob("*.yaml")), key=str)
    texts = [t for t in (p.read_text(encoding="utf-8") for p in files) if len(t) < 20_000]
    fast, rng = _libyaml_loader(), random.Random(seed)
    counts, examples = {"accepted, pure refuses": 0, "other tree": 0}, []
    for _ in range(cases):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text) + 1)
            op = rng.random()
            edit = rng.choice(EDITS)
            text = (text[:at] + edit + text[at:] if op < 0.5 else text[:at] + edit + text[at + 1:] if op < 0.8
                    else text[:at] + text[at + 1:])
        c, pure = _compose(text, fast), _compose(text, fixture._BoundedLoader)
        if c[0] == "error" or c == pure:
            continue
        kind = "other tree" if pure[0] == "ok" else "accepted, pure refuses"
        counts[kind] += 1
        if len(examples) < 5:
            examples.append(f"{kind}: ...{text[max(0, at - 30):at + 30]!r}...")
    return counts, examples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=3000)
    args = ap.parse_args()
    if not yaml.__with_libyaml__:
        raise SystemExit("this PyYAML has no libyaml")
    counts, examples = fuzz(args.seed, args.cases)
    print(f"{args.cases} cases (seed {args.seed}): " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    print("\n".join(examples))


if __name__ == "__main__":
    main()
