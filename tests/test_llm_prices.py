"""The LLM judge's prices come from a table made from litellm's price map (judge/judges/data/prices.json,
scripts/price_table.py), without importing litellm (issue 41): the table is litellm's answer for every
model it lists, and litellm is asked only when it is loaded already or newer than the table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from judge.judges import prices
from judge.judges.llm import libs

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import price_table  # noqa: E402


def _in_a_fresh_process(code: str) -> list:
    """Run `code` (its last line prints JSON) where litellm is not imported; also says whether it was after."""
    script = ("import json, sys\nfrom judge.judges import prices\n" + code +
              "\nprint(json.dumps([found, 'litellm' in sys.modules]))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO,
                         env=dict(os.environ), timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_table_is_made_from_the_installed_litellm():
    version_, table = prices.table()
    assert version_ == version("litellm")  # a litellm bump: scripts/price_table.py --write
    assert table["openai/gpt-4o-mini"] == table["gpt-4o-mini"] and table["gpt-4o-mini"][0] > 0
    assert len(table) > 1000


@pytest.mark.slow
def test_the_table_is_litellms_answer_for_every_model_it_lists_and_lists_them_all():
    made = price_table.build()
    shipped = json.loads(prices.TABLE.read_text(encoding="utf-8"))
    assert shipped["litellm"] == made["litellm"]
    assert shipped["prices"] == made["prices"]  # every name litellm prices, each as litellm prices it
    assert prices.TABLE.read_text(encoding="utf-8") == price_table.text(made)  # the file, byte for byte


def test_a_sample_of_the_table_is_litellms_answer():
    _, table = prices.table()
    names = sorted(table)[::40] + ["gpt-4o", "openai/gpt-4o-mini", "gemini/gemini-2.5-pro", "gpt-4.1"]
    for name in names:
        assert prices.litellm_price(name) == table[name], name


def test_the_price_is_the_tables_without_importing_litellm():
    inp, out, _ = prices.table()[1]["openai/gpt-4o-mini"]
    found, imported = _in_a_fresh_process("p = prices.Prices('openai/gpt-4o-mini')\n"
                                          "found = [p.cost(1000, 200), p.source]")
    assert found == [round(1000 * inp + 200 * out, 10), "table"] and not imported
    assert found[0] == prices.Prices("openai/gpt-4o-mini").cost(1000, 200)  # what litellm, loaded here, says


def test_a_model_litellm_does_not_know_has_no_price_and_imports_nothing():
    assert prices.litellm_price("openai/qwen2.5-coder-0.5b-instruct") is None  # litellm's word
    found, imported = _in_a_fresh_process("p = prices.Prices('openai/qwen2.5-coder-0.5b-instruct')\n"
                                          "found = [p.cost(1000, 200), p.source]")
    assert found == [None, "table"] and not imported


@pytest.mark.slow
def test_a_model_missing_from_a_table_of_another_litellm_is_asked_of_litellm():
    found, imported = _in_a_fresh_process(
        "made = prices.table()\nprices.table = lambda: ('0.0.0', made[1])\n"
        "found = prices.lookup('openai/gpt-4o-mini') + prices.lookup('openai/not-in-the-table')")
    assert found[1] == "table" and found[2:] == [None, "litellm"] and imported


def test_a_loaded_litellm_answers_with_its_registered_models():
    """An application that loaded litellm and registered a price gets it (the table is not asked)."""
    model = "openai/judge-price-test-model"
    assert prices.table_price(model) is None
    libs()[0].register_model({model: {"input_cost_per_token": 1e-3, "output_cost_per_token": 2e-3,
                                      "litellm_provider": "openai", "mode": "chat"}})
    priced = prices.Prices(model)
    assert priced.cost(10, 1) == 0.012 and priced.source == "litellm"


def test_the_table_ships_in_the_wheel_and_tiktoken_is_declared():
    """A wheel without the table would price every model as unknown (cost_usd null), silently; tiktoken
    comes with the `llm` extra, which an LLM judge requires (judge.errors.require_extra)."""
    import fnmatch
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    globs = project["tool"]["setuptools"]["package-data"]["judge.judges"]
    relative = prices.TABLE.relative_to(REPO / "judge" / "judges").as_posix()
    assert any(fnmatch.fnmatch(relative, g) for g in globs)
    assert any(dep.startswith("tiktoken") for dep in project["project"]["optional-dependencies"]["llm"])
    from judge.errors import EXTRA_MODULES

    assert "tiktoken" in EXTRA_MODULES["llm"]
