#!/usr/bin/env python3
"""The LLM judge's price table, judge/judges/data/prices.json, made from litellm's price map.

    .venv/bin/python scripts/price_table.py --write    # after a litellm bump: regenerate, read the diff
    .venv/bin/python scripts/price_table.py --check    # exit 1 when the shipped table is not litellm's

The judge prices a model without importing litellm (about 3 CPU-s and 250 MB): judge.judges.prices
reads this table. Each entry is what `litellm.get_model_info(name)` gives for the name, as the judge
uses it: the input and output price per token, and the input tokens from which a tiered price
applies (null when untiered). The names are every model of litellm's bundled map that a judge can
ask (modes chat and responses, or none stated), as the map spells it and, for a name without a
provider prefix, with it (`openai/gpt-4o` beside `gpt-4o`): the spelling a judge's `model` has.
The table records the litellm version it was made from; tests/test_llm_prices.py holds it equal to
litellm's answers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "judge" / "judges" / "data" / "prices.json"
MODES = ("chat", "responses", None)


def litellm() -> Any:
    """litellm, offline: its bundled price map, not a fetched one."""
    for key, value in {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MODE": "PRODUCTION"}.items():
        os.environ.setdefault(key, value)
    sys.path.insert(0, str(ROOT))
    from judge.judges.libs import litellm_lib

    return litellm_lib()


def names(lib: Any) -> list[str]:
    """The models of litellm's map a judge can ask, spelt as the map does and with their provider: the
    entries of litellm's loaded map that its bundled file holds (not models registered at run time)."""
    bundled = json.loads(Path(lib.__file__).with_name("model_prices_and_context_window_backup.json").read_text(
        encoding="utf-8"))
    found: dict[str, None] = {}
    for key, info in lib.model_cost.items():
        if key not in bundled or not isinstance(info, dict) or info.get("mode") not in MODES:
            continue
        found[key] = None
        provider = info.get("litellm_provider")
        if "/" not in key and isinstance(provider, str) and re.fullmatch(r"[a-z0-9_\-]+", provider):
            found[f"{provider}/{key}"] = None
    return sorted(found)


def build() -> dict[str, Any]:
    """The table as litellm's installed version gives it."""
    lib = litellm()
    from judge.judges.prices import litellm_price

    prices = {name: list(found) for name in names(lib) if (found := litellm_price(name)) is not None}
    return {"litellm": version("litellm"), "made_by": "scripts/price_table.py", "prices": prices}


def text(table: dict[str, Any]) -> str:
    rows = ",\n".join(f"  {json.dumps(name)}: {json.dumps(value)}" for name, value in table["prices"].items())
    return (f'{{"litellm": {json.dumps(table["litellm"])}, "made_by": {json.dumps(table["made_by"])},\n'
            f'"prices": {{\n{rows}\n}}}}\n')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help=f"write {TABLE.relative_to(ROOT)}")
    mode.add_argument("--check", action="store_true", help="exit 1 when the shipped table differs")
    args = ap.parse_args()
    made = text(build())
    if args.write:
        tmp = TABLE.with_suffix(".tmp")
        tmp.write_text(made, encoding="utf-8")
        tmp.replace(TABLE)
        print(f"wrote {TABLE.relative_to(ROOT)}: {made.count(chr(10)) - 2} models")
        return
    same = TABLE.is_file() and TABLE.read_text(encoding="utf-8") == made
    print("the price table is litellm's" if same else "the price table differs from litellm's: run --write")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
