"""A model's price, looked up once per judge in litellm's price table (read offline from the copy
litellm ships, plus any `litellm.register_model` entries).

litellm's `cost_per_token` does the lookup again on every call (about a millisecond); a judge asks
one model, so `Prices` reads the per-token input and output prices once, on first use, and
multiplies. A model priced in tiers (`input_cost_per_token_above_200k_tokens`, ...) is still priced
by litellm for usage past its first tier; a model with no price gives None (the report's `cost_usd`
stays null where the provider's price is unknown).
"""

from __future__ import annotations

import re
from typing import Any

_TIER = re.compile(r"^(?:input|output)_cost_per_token_above_(\d+)k_tokens$")


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """litellm's price of this usage; None when the model has no known price."""
    from judge.judges.libs import litellm_lib

    try:
        prompt_cost, completion_cost = litellm_lib().cost_per_token(
            model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens)
    except Exception:  # litellm raises a plain Exception for an unmapped model
        return None
    return round(prompt_cost + completion_cost, 10)


class Prices:
    """One model's prices (module docs)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._looked_up = False
        self._per_token: tuple[float, float] | None = None
        self._first_tier: int | None = None  # input tokens from which a tier's price applies

    def _lookup(self) -> None:
        from judge.judges.libs import litellm_lib

        self._looked_up = True
        try:
            info: dict[str, Any] = dict(litellm_lib().get_model_info(model=self.model))
        except Exception:  # an unmapped model: litellm raises a plain Exception
            return
        inp, out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
        if inp is None and out is None:
            return
        self._per_token = (float(inp or 0.0), float(out or 0.0))
        tiers = [int(m.group(1)) * 1000 for key, value in info.items() if value and (m := _TIER.match(key))]
        self._first_tier = min(tiers, default=None)

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """The price of this usage in USD, or None when the model has no known price."""
        if not self._looked_up:
            self._lookup()
        if self._per_token is None:
            return None
        if self._first_tier is not None and input_tokens > self._first_tier:
            return cost_usd(self.model, input_tokens, output_tokens)
        inp, out = self._per_token
        return round(input_tokens * inp + output_tokens * out, 10)
