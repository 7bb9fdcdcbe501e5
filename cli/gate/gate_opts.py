"""The gate options: one click block for ``vae gate``, ``vae run``, ``vae rescore``, ``vae demo``.

Why one block: the four commands must read the same thresholds the same way
(same names, same ``VAE_*`` variables, same errors), and a threshold added
here reaches all of them. Declaring the options imports nothing heavy;
``scorer_service`` is imported only when a gate is built.

Any gate option makes a command's exit code the gate's (docs/ci.md, "Exit
codes"): 0 passed, 1 the agent failed the gate, 3 the gate could not be
decided, 2 usage. Options that only write files (``--junit-xml``, ``--summary-
md``) or bound the unscored (``--max-unscored``) gate on the per-scenario
rule: every scenario passes or fails as it was built to. The command's own
rules fold into the gate: a run that did not complete and a scoring that
failed (a judge that cannot be used) are "could not decide"; unscored sessions
are counted by ``--max-unscored`` (so ``--allow-unscored`` is refused beside a
gate), and ``vae rescore --fail-under`` gives way to ``--min-success``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator
    from vae.scorer_service.gate import GateSpec

F = TypeVar("F", bound=Callable[..., Any])

#: Keywords of the block that make a gate when given.
GATE_KEYS = ("min_success", "baseline", "max_regressions", "max_unscored", "pass_k",
             "junit_xml", "summary_md")  # fmt: skip
#: Every keyword the block adds (commands pop them with :func:`pop_gate_options`).
ALL_KEYS = (*GATE_KEYS, "no_step_summary", "report_url", "report")

_FILE = click.Path(dir_okay=False, path_type=Path)


def gate_options(*, report: bool = True) -> Callable[[F], F]:
    """The block; ``report=False`` leaves out ``--report`` (``vae demo`` always writes one)."""

    def decorate(func: F) -> F:
        opts = [
            click.option("--min-success", "min_success", multiple=True, metavar="[DOMAIN=]RATE",
                         envvar="VAE_MIN_SUCCESS",
                         help="Gate: the success rate (scenarios built to fail left out) must "
                         "be at least RATE (0.8 or 80%); DOMAIN=RATE for one domain (repeatable; "
                         "env VAE_MIN_SUCCESS). A threshold replaces the default rule: every "
                         "scenario passes unless built to fail."),
            click.option("--baseline", default=None, metavar="RUN", envvar="VAE_BASELINE",
                         help="Gate: count scenario regressions against RUN, as vae compare "
                         "does (env VAE_BASELINE)."),
            click.option("--max-regressions", type=click.IntRange(min=0), default=None,
                         envvar="VAE_MAX_REGRESSIONS",
                         help="Gate: regressions allowed against --baseline [0]."),
            click.option("--max-unscored", type=click.IntRange(min=0), default=None,
                         envvar="VAE_MAX_UNSCORED",
                         help="Gate: sessions without a verdict allowed before the gate cannot "
                         "decide (exit 3) [0]."),
            click.option("--pass-k", "pass_k", multiple=True, metavar="K=RATE",
                         envvar="VAE_PASS_K",
                         help="Gate: pass^K over repeated trials must be at least RATE "
                         "(repeatable)."),
            click.option("--junit-xml", type=_FILE, default=None, envvar="VAE_JUNIT_XML",
                         help="Write the gated scoring as JUnit XML to FILE (env VAE_JUNIT_XML)."),
            click.option("--summary-md", type=_FILE, default=None, envvar="VAE_SUMMARY_MD",
                         help="Write a Markdown scorecard to FILE; it is also appended to "
                         "$GITHUB_STEP_SUMMARY when that is set (env VAE_SUMMARY_MD)."),
            click.option("--no-step-summary", is_flag=True, envvar="VAE_NO_STEP_SUMMARY",
                         help="Do not append the scorecard to $GITHUB_STEP_SUMMARY."),
            click.option("--report-url", default=None, envvar="VAE_REPORT_URL",
                         help="A link to the report (e.g. the CI run page) for the JUnit "
                         "properties and the scorecard (env VAE_REPORT_URL)."),
        ]  # fmt: skip
        if report:
            help_text = ("Also write the HTML report of the gated scoring to FILE (linked "
                         "from the JUnit file and the scorecard).")  # fmt: skip
            opts.append(click.option("--report", type=_FILE, default=None, help=help_text))
        for opt in reversed(opts):
            func = opt(func)
        return func

    return decorate


def pop_gate_options(kw: dict[str, Any]) -> dict[str, Any]:
    """Take the block's keywords out of a command's keywords."""
    return {key: kw.pop(key, None) for key in ALL_KEYS}


def gate_active(opts: dict[str, Any]) -> bool:
    """True when any option that makes a gate was given."""
    return any(opts.get(key) not in (None, (), "") for key in GATE_KEYS)


def gate_spec(opts: dict[str, Any]) -> GateSpec:
    """The :class:`GateSpec` of the options; a bad threshold is a usage error (exit 2)."""
    from vae.scorer_service.gate import GateSpec, GateSpecError

    try:
        return GateSpec.from_options(
            min_success=opts.get("min_success") or (),
            baseline=opts.get("baseline"),
            max_regressions=opts.get("max_regressions"),
            max_unscored=opts.get("max_unscored"),
            pass_k=opts.get("pass_k") or (),
        )
    except GateSpecError as exc:
        raise click.UsageError(str(exc)) from exc


def refuse_conflicts(opts: dict[str, Any], *, allow_unscored: bool = False,
                     fail_under: float | None = None) -> None:  # fmt: skip
    """Options of the command that say something else than the gate: usage errors."""
    if not gate_active(opts):
        return
    if allow_unscored:
        raise click.UsageError(
            "--allow-unscored (or VAE_ALLOW_UNSCORED) cannot be combined with gate options: "
            "the gate counts unscored sessions with --max-unscored N"
        )
    if fail_under is not None:
        raise click.UsageError("--fail-under cannot be combined with gate options: use "
                               "--min-success RATE")  # fmt: skip


def check_baseline(db_path: Locator, spec: GateSpec | None) -> None:
    """Refuse an unknown ``--baseline`` before a command runs or scores anything (exit 2)."""
    if spec is None or not spec.baseline:
        return
    from vae.recordings.errors import RunSelectionError
    from vae.recordings.read.reader import RecordingReader
    from vae.recordings.read.selection import select_run

    if not db_path.exists():
        raise click.UsageError(f"--baseline {spec.baseline}: no database at {db_path}")
    try:
        with RecordingReader(db_path) as reader:
            select_run(reader, spec.baseline)
    except RunSelectionError as exc:
        raise click.UsageError(f"--baseline: {exc}") from exc
