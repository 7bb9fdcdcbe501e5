"""Cohen's κ with its 95 % confidence interval, from a confusion matrix.

Why here, by hand: vae's runtime has no statistics library, and these few
lines are easier to check against hand-computed values than a dependency.

``table[i][j]`` counts items the first rater (the labels) put in class ``i``
and the second (the judge) in class ``j``. With proportions ``p_ij``, row
margins ``p_i.`` and column margins ``p_.j``:

- observed agreement ``p_o = Σ p_ii``; chance agreement ``p_e = Σ p_i. p_.i``;
- ``κ = (p_o − p_e) / (1 − p_e)``;
- its large-sample standard error (Fleiss, Cohen & Everitt 1969)::

      var(κ) = ( Σ_i p_ii [1 − (p_i. + p_.i)(1 − κ)]²
               + (1 − κ)² Σ_{i≠j} p_ij (p_.i + p_j.)²
               − [κ − p_e (1 − κ)]² ) / ( n (1 − p_e)² )

- the interval ``κ ± 1.96 · SE``, clipped to [−1, 1].

κ is **undefined** — ``None``, shown as such, never 0 or 1 — when there is
nothing to compare (n = 0) or when either rater used a single class: then
chance agreement explains everything the data can show (κ is 0 whatever the
other rater did, or 0/0 when both used the same single class), so it says
nothing about the judge. Percent agreement is still reported.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Two-sided 95 % normal quantile.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Kappa:
    n: int
    agreed: int
    #: Observed agreement in [0, 1]; None when n = 0.
    percent: float | None
    kappa: float | None
    se: float | None
    ci: tuple[float, float] | None
    #: Why κ is undefined ("" when it is defined).
    undefined: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "n": self.n,
            "agreed": self.agreed,
            "percent_agreement": self.percent,
            "kappa": self.kappa,
            "kappa_se": self.se,
            "kappa_ci95": list(self.ci) if self.ci else None,
            "kappa_undefined": self.undefined or None,
        }


def _why_undefined(n: int, rows: list[int], cols: list[int], names: tuple[str, str]) -> str:
    if n == 0:
        return "n = 0: nothing decided on both sides"
    one_row = sum(1 for r in rows if r) == 1
    one_col = sum(1 for c in cols if c) == 1
    if one_row and one_col:
        return "a single class on both sides"
    if one_row:
        return f"all {names[0]} are the same class"
    if one_col:
        return f"all {names[1]} are the same class"
    return ""


def cohen_kappa(
    table: Sequence[Sequence[int]], names: tuple[str, str] = ("labels", "verdicts")
) -> Kappa:
    """κ, its standard error and 95 % interval for a square table of counts.

    ``names`` say what the rows and the columns are, for the reason κ is undefined.
    """
    k = len(table)
    if any(len(row) != k for row in table):
        raise ValueError("the confusion matrix must be square")
    if any(c < 0 for row in table for c in row):
        raise ValueError("counts must not be negative")
    n = sum(sum(row) for row in table)
    agreed = sum(table[i][i] for i in range(k))
    rows = [sum(table[i]) for i in range(k)]
    cols = [sum(table[i][j] for i in range(k)) for j in range(k)]
    percent = agreed / n if n else None
    why = _why_undefined(n, rows, cols, names)
    if why:
        return Kappa(n, agreed, percent, None, None, None, why)
    p = [[c / n for c in row] for row in table]
    pr = [r / n for r in rows]
    pc = [c / n for c in cols]
    po = agreed / n
    pe = sum(pr[i] * pc[i] for i in range(k))
    kappa = (po - pe) / (1 - pe)
    a = sum(p[i][i] * (1 - (pr[i] + pc[i]) * (1 - kappa)) ** 2 for i in range(k))
    b = (1 - kappa) ** 2 * sum(
        p[i][j] * (pc[i] + pr[j]) ** 2 for i in range(k) for j in range(k) if i != j
    )
    c = (kappa - pe * (1 - kappa)) ** 2
    var = max(0.0, (a + b - c) / (n * (1 - pe) ** 2))
    se = math.sqrt(var)
    ci = (max(-1.0, kappa - Z95 * se), min(1.0, kappa + Z95 * se))
    return Kappa(n, agreed, po, kappa, se, ci)
