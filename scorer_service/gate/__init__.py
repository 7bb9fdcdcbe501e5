"""The CI gate: one verdict on a run's scoring, and the files CI tools read.

``vae gate RUN`` and the gate options of ``vae run|rescore|demo`` call
:func:`gate` (``decide.py``) with a :class:`GateSpec` (``spec.py``); the
result's cases (``cases.py``) and checks (``checks.py``) are written as JUnit
XML (``junit.py``) and a Markdown scorecard (``markdown.py``). Exit codes:
0 passed, 1 the agent failed the gate, 3 the gate could not be decided
(2, usage, belongs to the CLI). docs/ci.md is the user's guide.
"""

from vae.scorer_service.gate.cases import Case, SignalResult, run_cases
from vae.scorer_service.gate.checks import Check
from vae.scorer_service.gate.decide import EXIT_CODES, GateResult, gate, gate_with_reader
from vae.scorer_service.gate.spec import GateSpec, GateSpecError

__all__ = [
    "EXIT_CODES",
    "Case",
    "Check",
    "GateResult",
    "GateSpec",
    "GateSpecError",
    "SignalResult",
    "gate",
    "gate_with_reader",
    "run_cases",
]
