"""A model's price, looked up once per judge in a table made from litellm's price map, without
importing litellm (about 3 CPU-s and 250 MB, for a multiplication).

The table (data/prices.json, made by scripts/price_table.py from the map litellm ships; a test holds
it equal to `litellm.get_model_info`) gives, for every model of litellm's map a judge can ask, spelt
as the map does and with its provider prefix (`openai/gpt-4o` beside `gpt-4o`), the price per input
and output token and the input tokens from which a tiered price applies. `Prices` reads the judge's
model once, on first use, and multiplies. A name is looked up as written (litellm's own matching
of other spellings, `OpenAI/GPT-4o`, is not consistent enough to copy: respelt in upper or title
case, 800 sampled names of the table got another price than as written from litellm on 40-48).

litellm itself is asked instead of the table:
- when it is already imported (the application loaded it, maybe with `litellm.register_model`
  entries): its answer, for every model;
- for a model the table lacks, when the installed litellm is not the version the table was made
  from (its map may know the model): this imports litellm, once per judge;
- for usage past a tiered model's first tier (`cost_usd`).
Otherwise a model the table lacks has no known price (None: the report's `cost_usd` stays null), as
litellm's map of the table's version says, the common case of a model on a local server. Names that
only litellm's rules resolve (a family rule of an unlisted release, which litellm prices at 0; a
fine-tuned model's `ft:` name) are priced only when litellm is loaded.
"""

from __future__ import annotations

import json
import re
import sys
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("data") / "prices.json"
_TIER = re.compile(r"^(?:input|output)_cost_per_token_above_(\d+)k_tokens$")
Price = tuple[float, float, int | None]  # per input token, per output token, first tier (input tokens)


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """litellm's price of this usage; None when the model has no known price."""
    from judge.judges.libs import litellm_lib

    try:
        prompt_cost, completion_cost = litellm_lib().cost_per_token(
            model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens)
    except Exception:  # litellm raises a plain Exception for an unmapped model
        return None
    return round(prompt_cost + completion_cost, 10)


@lru_cache(maxsize=1)
def table() -> tuple[str, dict[str, Price]]:
    """(the litellm version the table was made from, prices by model name)."""
    data = json.loads(TABLE.read_text(encoding="utf-8"))
    return data["litellm"], {name: (float(inp), float(out), tier) for name, (inp, out, tier) in data["prices"].items()}


def table_price(model: str) -> Price | None:
    """The table's price of `model` as written; None when the table lacks it."""
    return table()[1].get(model)


def _installed_litellm() -> str | None:
    try:
        return version("litellm")
    except PackageNotFoundError:
        return None


def litellm_price(model: str) -> Price | None:
    """litellm's own answer for `model` (imports litellm); None when it has no price."""
    from judge.judges.libs import litellm_lib

    try:
        info: dict[str, Any] = dict(litellm_lib().get_model_info(model=model))
    except Exception:  # an unmapped model: litellm raises a plain Exception
        return None
    inp, out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if inp is None and out is None:
        return None
    tiers = [int(m.group(1)) * 1000 for key, value in info.items() if value and (m := _TIER.match(key))]
    return float(inp or 0.0), float(out or 0.0), min(tiers, default=None)


def lookup(model: str) -> tuple[Price | None, str]:
    """`model`'s price and where it came from: "litellm" (asked) or "table" (module docs)."""
    if "litellm" in sys.modules:
        return litellm_price(model), "litellm"
    found = table_price(model)
    if found is not None:
        return found, "table"
    installed = _installed_litellm()
    if installed is not None and installed != table()[0]:
        return litellm_price(model), "litellm"
    return None, "table"


class Prices:
    """One model's prices (module docs). `source` says where they came from once looked up: "table"
    (judge's table of litellm's map) or "litellm" (litellm asked)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.source: str | None = None
        self._per_token: tuple[float, float] | None = None
        self._first_tier: int | None = None  # input tokens from which a tier's price applies

    def _lookup(self) -> None:
        price, self.source = lookup(self.model)
        if price is not None:
            self._per_token, self._first_tier = (price[0], price[1]), price[2]

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """The price of this usage in USD, or None when the model has no known price."""
        if self.source is None:
            self._lookup()
        if self._per_token is None:
            return None
        if self._first_tier is not None and input_tokens > self._first_tier:
            return cost_usd(self.model, input_tokens, output_tokens)
        inp, out = self._per_token
        return round(input_tokens * inp + output_tokens * out, 10)
