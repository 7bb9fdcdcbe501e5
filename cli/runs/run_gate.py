"""``vae run``'s gate: score the run it just recorded, then gate that scoring.

Why: a run is only recordings; a gate needs verdicts. With any gate option
``vae run`` scores its run once it ends — in-process on ``--db`` (the
bridge's database file, env ``VAE_DB``) as ``vae rescore`` does, or through a
scorer service with ``--scorer`` — with the judge options of ``vae rescore``,
and gates that new scoring (read from ``--db``). Scenarios that need a judge
while none is configured are refused before the run starts (exit 2), not
after it.

Exit codes with a gate: the gate's (0 passed, 1 failed, 3 could not decide,
2 usage). A run that did not complete is still scored (its finished
sessions get verdicts for the files) and gates "could not decide"; a bridge
that cannot be reached or a judge that cannot be used is "could not decide"
too, and the JUnit file and the scorecard say so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from vae.cli.common import DEFAULT_DB, STORE
from vae.cli.gate.gate_opts import gate_active, gate_options, gate_spec, pop_gate_options
from vae.cli.scoring.rescore_opts import judge_options

if TYPE_CHECKING:
    from vae.recordings.backends.locator import Locator
    from vae.scorer_service.config import ScoringConfig
    from vae.scorer_service.gate import GateSpec

F = TypeVar("F", bound=Callable[..., Any])

#: The judge keywords ``judge_options`` adds (popped with the scoring options).
_JUDGE_KEYS = (
    *(f"judge_{k}" for k in ("base_url", "model", "api_key", "temperature", "seed", "max_tokens",
                             "top_p", "timeout", "retries", "concurrency", "threshold",
                             "include_conversation", "prompt")),
    "no_judge",
    "no_judge_cache",
)  # fmt: skip


def run_gate_options(func: F) -> F:
    """The gate block, plus where and how ``vae run`` scores its run for the gate."""
    func = judge_options(func)
    func = click.option("--scorer", "scorer_addr", default=None, envvar="VAE_SCORER",
                        help="With gate options: score through the scorer service at host:port "
                        "(env VAE_SCORER); default: in-process on --db.")(func)  # fmt: skip
    func = click.option("--db", "db_path", type=STORE,
                        default=DEFAULT_DB, show_default=True, envvar="VAE_DB",
                        help="With gate options: the bridge's database, where the run is "
                        "scored and gated (env VAE_DB).")(func)  # fmt: skip
    return gate_options()(func)


@dataclass
class RunGate:
    db_path: Locator
    scorer_addr: str | None
    spec: GateSpec
    opts: dict[str, Any]
    judge_kw: dict[str, Any]
    #: ``vae run --json`` fills this with the run's document instead of printing it.
    document: dict[str, Any] = field(default_factory=dict)
    #: ``--otel-endpoint`` (resolved): the run's trace and the scoring's, sent after scoring.
    otel_endpoint: str | None = None

    @classmethod
    def take(cls, kw: dict[str, Any]) -> RunGate | None:
        """Pop the gate and scoring options from ``vae run``'s keywords; None without a gate."""
        opts = pop_gate_options(kw)
        judge_kw = {key: kw.pop(key) for key in _JUDGE_KEYS}
        db_path, scorer = kw.pop("db_path"), kw.pop("scorer_addr")
        if not gate_active(opts):
            return None
        return cls(db_path, scorer, gate_spec(opts), opts, judge_kw)

    def config(self) -> ScoringConfig:
        from vae.cli.scoring.rescore_opts import asr_defaults, scoring_config

        return scoring_config({**asr_defaults(), **self.judge_kw, "scorers": (), "overrides": None,
                               "strict_match": None, "min_agent_turns": None,
                               "end_policy": None, "label": "vae run (gate)"})  # fmt: skip

    def precheck(self, scenarios: tuple[str, ...]) -> None:
        """Refuse before the run what would refuse the scoring after it (exit 2)."""
        from vae.cli.gate.gate_opts import check_baseline
        from vae.recordings.scenarios.lint import lint_arguments
        from vae.scorer_service.config import ConfigError
        from vae.scorer_service.judge.need import require_judge

        check_baseline(self.db_path, self.spec)
        local = [s for s in scenarios if Path(s).exists()]
        try:
            config = self.config()
            config.validate()
            require_judge(config, lint_arguments(local).scenarios if local else [])
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from exc

    def unreachable(self, reason: str, as_json: bool) -> NoReturn:
        """Nothing was run (the bridge could not be used): could not decide, exit 3."""
        from vae.cli.gate.gate_output import finish, undecided

        click.echo(f"error: {reason}", err=True)
        finish(undecided("", self.spec, reason, self.opts), self.opts, as_json=as_json,
               document=self.document or None)  # fmt: skip
        raise AssertionError("finish exits")  # pragma: no cover

    def finish(self, run_id: str, token: str | None, tls_ca: Path | None, as_json: bool) -> None:
        """Score ``run_id``, gate the scoring, write the files; exits with the gate's code."""
        import grpc

        from vae.cli.gate.gate_output import evaluate, finish
        from vae.cli.scoring.gate_hooks import could_not_score, started_ns
        from vae.recordings.errors import RunSelectionError, ScenarioError
        from vae.scorer_service.config import ConfigError
        from vae.scorer_service.edge.wire_client import remote_rescore
        from vae.scorer_service.judge.client import JudgeUnusableError
        from vae.scorer_service.scoring.rescore import RescoreError, rescore

        since = started_ns()
        if not as_json:
            click.echo(f"scoring run {run_id} for the gate ...", err=True)
        try:
            if self.scorer_addr:
                scoring, _ = asyncio.run(remote_rescore(self.scorer_addr, run_id, self.config(),
                                                        token=token, tls_ca=tls_ca))  # fmt: skip
            else:
                scoring = asyncio.run(rescore(self.db_path, run_id, self.config())).scoring
        except (ConfigError, ScenarioError, RescoreError) as exc:
            raise click.UsageError(str(exc)) from exc
        except (RunSelectionError, FileNotFoundError) as exc:
            raise click.UsageError(
                f"{exc}; with gate options vae run scores its run in --db, which must be the "
                "bridge's database (env VAE_DB)"
            ) from exc
        except (JudgeUnusableError, grpc.aio.AioRpcError, OSError) as exc:
            could_not_score(self.db_path, run_id, since, self.spec, self.opts, _describe(exc),
                            as_json)  # fmt: skip
        if self.otel_endpoint:
            from vae.cli.telemetry import export_trace, session_verdicts

            verdicts = session_verdicts(self.db_path, scoring.scoring_id)
            export_trace(self.db_path, run_id, self.otel_endpoint, verdicts=verdicts,
                         scoring_id=scoring.scoring_id)  # fmt: skip
        result = evaluate(self.db_path, run_id, self.spec, self.opts, scoring_id=scoring.scoring_id)
        finish(result, self.opts, as_json=as_json, document=self.document or None, cases=True)


def _describe(exc: BaseException) -> str:
    code, details = getattr(exc, "code", None), getattr(exc, "details", None)
    if callable(code) and callable(details):
        return f"{code().name}: {details()}"
    return str(exc)
