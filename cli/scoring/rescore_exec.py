"""Where ``vae rescore`` scores, and what each way's failure means for the exit code.

A rescore runs in this process on ``--db``, as Ray tasks (``--ray``), or in a
running scorer service (``--scorer ADDR``), with a progress bar on stderr.
Each way fails its own way — a bad ``--ray`` address, Ray missing, a judge
that cannot be used, a scorer that answers NOT_FOUND or is unreachable — and
this module turns each into the command's ending: exit 2 for bad input, exit
1 for a failed rescore, or, with gate options, the gate's "could not decide"
(exit 3). Why apart from ``cli/scoring/rescore_cmd.py``: that module changes
with the command's options and its verdict; this one with the ways of running
a scoring. Everything heavy (grpc, tqdm, the scorer, Ray) is imported inside
the functions, so ``vae rescore --help`` stays instant.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from vae.recordings.models import ScoringRecord
    from vae.scorer_service.config import ScoringConfig
    from vae.scorer_service.gate import GateSpec
    from vae.scorer_service.ledger.aggregate import SessionOutcome
    from vae.scorer_service.ray_scoring.runner import RayRunner


def _progress(disable: bool | None) -> tuple[Any, Callable[[int, int, SessionOutcome], None]]:
    """A progress bar on stderr and the callback that moves it (``--json`` hides it)."""
    from tqdm import tqdm

    bar = tqdm(total=0, unit="session", desc="rescoring", file=sys.stderr, disable=disable)

    def update(done: int, total: int, _outcome: SessionOutcome) -> None:
        bar.total = total
        bar.update(done - bar.n)

    return bar, update


def score(
    kw: dict[str, Any],
    config: ScoringConfig,
    spec: GateSpec | None,
    gate_opts: dict[str, Any],
    since: int,
) -> tuple[ScoringRecord, list[SessionOutcome]]:
    """Score ``kw["run_ref"]`` as the options ask; the new scoring and its sessions.

    Returns only on success; otherwise raises a usage error (exit 2) or exits
    (1, or the gate's 3 when ``spec`` is given: the scoring recorded since
    ``since`` is gated, so the JUnit file says why).
    """
    import asyncio

    import grpc

    from vae.cli.scoring import rescore_verdict
    from vae.cli.scoring.gate_hooks import could_not_score
    from vae.recordings.errors import ScenarioError
    from vae.scorer_service.config import ConfigError
    from vae.scorer_service.edge.wire_client import remote_rescore
    from vae.scorer_service.judge.client import JudgeUnusableError
    from vae.scorer_service.ray_scoring.connect import RayScoringError
    from vae.scorer_service.scoring.rescore import RescoreError, rescore

    mode = "append" if kw["append"] else "overwrite"
    runner = _ray_runner(kw)
    bar, update = _progress(disable=kw["as_json"] or None)
    try:
        if kw["scorer_addr"]:
            return asyncio.run(
                remote_rescore(
                    kw["scorer_addr"],
                    kw["run_ref"],
                    config,
                    mode=mode,
                    session_ids=kw["session_ids"],
                    token=kw["token"],
                    tls_ca=kw["tls_ca"],
                    on_progress=update,
                    make_current=kw["make_current"],
                )
            )
        result = asyncio.run(
            rescore(
                kw["db_path"],
                kw["run_ref"],
                config,
                mode=mode,
                session_ids=kw["session_ids"],
                on_progress=update,
                make_current=kw["make_current"],
                runner=runner,
            )
        )
        return result.scoring, result.sessions
    except (ConfigError, ScenarioError, RescoreError) as exc:
        raise click.UsageError(str(exc)) from exc
    except JudgeUnusableError as exc:
        if spec is not None:
            bar.close()
            could_not_score(kw["db_path"], kw["run_ref"], since, spec, gate_opts, str(exc),
                            kw["as_json"])  # fmt: skip
        click.echo(rescore_verdict.judge_unusable_line(str(exc)), err=True)
        sys.exit(1)
    except RayScoringError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except grpc.aio.AioRpcError as exc:
        if exc.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
            raise click.UsageError(exc.details() or str(exc.code())) from exc
        reason = f"scorer {kw['scorer_addr']}: {exc.code().name}: {exc.details()}"
        if spec is not None:
            bar.close()
            could_not_score(kw["db_path"], kw["run_ref"], since, spec, gate_opts, reason,
                            kw["as_json"])  # fmt: skip
        click.echo(f"error: {reason}", err=True)
        sys.exit(1)
    finally:
        bar.close()
        if runner is not None:
            runner.close()


def _ray_runner(kw: dict[str, Any]) -> RayRunner | None:
    """The Ray runner ``--ray`` asks for (None without it); bad input exits before any work."""
    address = kw["ray_address"]
    if not address:
        return None
    if kw["scorer_addr"]:
        raise click.UsageError(
            "--ray scores in this process; a scorer service scores on Ray when started with "
            "`vae scorer serve --ray ADDRESS`"
        )
    from vae.scorer_service.ray_scoring.connect import (
        RayAddressError,
        RayScoringError,
        parse_address,
        require_ray,
    )
    from vae.scorer_service.ray_scoring.runner import RayRunner

    try:
        parse_address(address)
        require_ray()
    except RayAddressError as exc:
        raise click.UsageError(str(exc)) from exc
    except RayScoringError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    return RayRunner(address)
