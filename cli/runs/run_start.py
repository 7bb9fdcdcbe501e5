"""Starting a run so that Ctrl-C can always cancel it.

Why: a Ctrl-C that lands while StartRun is in flight used to leave the run
running in the bridge (the client never learnt its id), and ``vae demo`` then
shut its bridge down under a run that read ``failed`` instead of
``cancelled``. Here the StartRun call is shielded: if the caller is cancelled
meanwhile, the call is still awaited to learn the run id, the run is
cancelled, and the cancellation goes on. If that CancelRun fails, a warning
says the run may still be running and the RPC error is raised instead of the
cancellation, so no caller reports the run as cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import click


async def start_run(stub: Any, request: Any, started: list[str]) -> Any:
    """``stub.StartRun(request)``; the run id is appended to ``started`` as soon as known."""
    from vae.bridge.v1 import bridge_pb2

    call = asyncio.ensure_future(stub.StartRun(request))
    try:
        response = await asyncio.shield(call)
    except asyncio.CancelledError:
        response = None
        with contextlib.suppress(Exception):
            # A StartRun that failed started nothing: there is nothing to cancel.
            response = await call
        if response is not None:
            run_id = response.run.run_id
            started.append(run_id)
            if not request.dry_run:
                try:
                    await stub.CancelRun(bridge_pb2.CancelRunRequest(run_id=run_id))
                except Exception as exc:
                    click.echo(
                        f"warning: run {run_id} may still be running: cancelling it failed"
                        f" ({_describe(exc)})",
                        err=True,
                    )
                    raise
        raise
    started.append(response.run.run_id)
    return response


def _describe(exc: Exception) -> str:
    code = getattr(exc, "code", None)
    details = getattr(exc, "details", None)
    if callable(code) and callable(details):
        return f"{code().name}: {details()}"
    return f"{type(exc).__name__}: {exc}"
