"""Which rates moved between two corpora: a two-proportion z-test per key, Holm-corrected over the keys.

The test (statsmodels' `proportions_ztest`, pooled variance): z = (p2 - p1) / sqrt(p (1 - p) (1/n1 + 1/n2))
with p the pooled share (k1 + k2) / (n1 + n2), two-sided (Agresti, "Categorical Data Analysis", 3rd ed.
2013, sec. 3.1.2: the score test of H0 p1 = p2; equal to Pearson's chi-squared on the 2 x 2 table). It is
run on the violation counts as observed (binomial): exact for keys rules decided, and for judge-decided
keys a test of the true rates too when both corpora were graded by the same judge, since the
correction maps observed to true rates by the same increasing function in both.

Holm's step-down procedure (Holm 1979, "A simple sequentially rejective multiple test procedure",
Scand. J. Statist. 6(2):65-70; statsmodels' `multipletests(method="holm")`) controls the family-wise
error rate over the keys tested at `alpha`, with no assumption about their dependence.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class RateChange(BaseModel):
    """One key's rates in the old and new corpus, the test's raw and Holm-adjusted p-values."""

    model_config = ConfigDict(extra="forbid")
    key: str
    old_k: int
    old_n: int
    new_k: int
    new_n: int
    z: float | None
    p_value: float
    p_holm: float
    significant: bool
    direction: Literal["rose", "fell", "same"]


def rate_changes(counts: dict[str, tuple[int, int, int, int]], *, alpha: float = 0.05) -> list[RateChange]:
    """Per key, (old violated, old runs, new violated, new runs) -> the tests, in the keys' order.
    A key with no run on one side, or the same share on both, has p = 1 (no evidence of a change)."""
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.proportion import proportions_ztest

    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}")
    keys = list(counts)
    zs: list[float | None] = []
    ps: list[float] = []
    for key in keys:
        k1, n1, k2, n2 = counts[key]
        if n1 == 0 or n2 == 0 or k1 * n2 == k2 * n1 or (k1 + k2) in (0, n1 + n2):
            zs.append(None if n1 == 0 or n2 == 0 or k1 * n2 != k2 * n1 else 0.0)
            ps.append(1.0)
            continue
        z, p = proportions_ztest([k2, k1], [n2, n1], alternative="two-sided")
        zs.append(float(z))
        ps.append(float(p))
    if not keys:
        return []
    reject, adjusted, _, _ = multipletests(ps, alpha=alpha, method="holm")
    out = []
    for key, z, p, r, adj in zip(keys, zs, ps, reject, adjusted, strict=True):
        k1, n1, k2, n2 = counts[key]
        old, new = (k1 / n1 if n1 else 0.0), (k2 / n2 if n2 else 0.0)
        direction: Literal["rose", "fell", "same"] = "rose" if new > old else "fell" if new < old else "same"
        out.append(RateChange(key=key, old_k=k1, old_n=n1, new_k=k2, new_n=n2, z=z, p_value=p,
                              p_holm=float(adj), significant=bool(r) and direction != "same", direction=direction))
    return out
