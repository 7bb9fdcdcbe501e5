"""What a gate asks of a run: thresholds as typed on a command line, checked before use.

Why a module: the same thresholds reach the gate from ``vae gate``, from
``vae run|rescore|demo`` and from their environment variables, so their
grammar and its error messages live in one place. Everything wrong with a
threshold is a :class:`GateSpecError` (exit 2: "you called it wrong"), raised
before anything is read, never a verdict about the agent.

Grammar:

- a rate is a fraction ``0.8`` or a percentage ``80%`` (0..1, 0..100 %);
- ``--min-success RATE`` gates the overall success rate,
  ``--min-success DOMAIN=RATE`` one domain's (repeatable, one rate each);
- ``--pass-k K=RATE`` gates pass^K over the repeated scenarios (K >= 1);
- ``--max-regressions N`` needs ``--baseline RUN`` (default 0 with one);
- ``--max-unscored N`` (default 0): sessions with no verdict tolerated.

``--min-success``, ``--pass-k`` and ``--baseline`` are thresholds: any of
them replaces the per-scenario rule (``rule.py``); ``--max-unscored`` is not
one (it bounds what could not be decided, not what failed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field


class GateSpecError(ValueError):
    """A threshold that cannot be used as given; the message names the option."""


_RATE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*$")


def parse_rate(text: str, option: str) -> float:
    """``0.8`` or ``80%`` -> 0.8; anything else (or outside 0..1) is a GateSpecError."""
    match = _RATE.match(text)
    if match is None:
        raise GateSpecError(f"{option}: {text!r} is not a rate (write 0.8 or 80%)")
    value = float(match.group(1))
    if match.group(2):
        value /= 100.0
    elif value > 1.0:
        raise GateSpecError(
            f"{option}: {text!r} is above 1 (a rate is 0..1; for a percentage write {text}%)"
        )
    if value > 1.0:
        raise GateSpecError(f"{option}: {text!r} is above 100%")
    return value


def _pair(text: str, option: str, what: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise GateSpecError(f"{option}: {text!r} is not {what}=RATE")
    return key.strip(), value.strip()


def parse_min_success(values: Iterable[str]) -> tuple[float | None, dict[str, float]]:
    """``--min-success`` values -> (overall rate or None, {domain: rate})."""
    overall: float | None = None
    domains: dict[str, float] = {}
    for text in values:
        if "=" not in text:
            if overall is not None:
                raise GateSpecError(f"--min-success: the overall rate is given twice ({text!r})")
            overall = parse_rate(text, "--min-success")
            continue
        domain, rate = _pair(text, "--min-success", "DOMAIN")
        if domain in domains:
            raise GateSpecError(f"--min-success: domain {domain!r} is given twice")
        domains[domain] = parse_rate(rate, f"--min-success {domain}")
    return overall, domains


def parse_pass_k(values: Iterable[str]) -> dict[int, float]:
    """``--pass-k K=RATE`` values -> {k: rate}."""
    out: dict[int, float] = {}
    for text in values:
        k_text, rate = _pair(text, "--pass-k", "K")
        if not k_text.isdigit() or int(k_text) < 1:
            raise GateSpecError(f"--pass-k: K must be a whole number >= 1, got {k_text!r}")
        k = int(k_text)
        if k in out:
            raise GateSpecError(f"--pass-k: k={k} is given twice")
        out[k] = parse_rate(rate, f"--pass-k {k}")
    return out


@dataclass(frozen=True)
class GateSpec:
    """The thresholds of one gate; without any, every scenario must end as expected."""

    min_success: float | None = None
    min_success_domains: dict[str, float] = field(default_factory=dict)
    baseline: str | None = None
    #: Scenario regressions tolerated against ``baseline`` (0 when a baseline is given).
    max_regressions: int | None = None
    #: Sessions without a verdict tolerated before the gate cannot decide.
    max_unscored: int = 0
    pass_k: dict[int, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_regressions is not None and not self.baseline:
            raise GateSpecError("--max-regressions needs --baseline RUN to count regressions")
        if self.max_regressions is not None and self.max_regressions < 0:
            raise GateSpecError("--max-regressions must be >= 0")
        if self.max_unscored < 0:
            raise GateSpecError("--max-unscored must be >= 0")

    @property
    def has_thresholds(self) -> bool:
        """A threshold on the agent was given: it replaces the per-scenario rule."""
        return (self.min_success is not None or bool(self.min_success_domains)
                or bool(self.pass_k) or bool(self.baseline))  # fmt: skip

    @property
    def regressions_allowed(self) -> int:
        return 0 if self.max_regressions is None else self.max_regressions

    @classmethod
    def from_options(
        cls,
        *,
        min_success: Iterable[str] = (),
        baseline: str | None = None,
        max_regressions: int | None = None,
        max_unscored: int | None = None,
        pass_k: Iterable[str] = (),
    ) -> GateSpec:
        """The spec of the command-line options (strings as typed); GateSpecError when bad."""
        overall, domains = parse_min_success(min_success)
        return cls(
            min_success=overall,
            min_success_domains=domains,
            baseline=baseline or None,
            max_regressions=max_regressions,
            max_unscored=0 if max_unscored is None else max_unscored,
            pass_k=parse_pass_k(pass_k),
        )
