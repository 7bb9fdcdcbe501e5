"""Starting a run so that Ctrl-C can always cancel it.

Why: a Ctrl-C that lands while StartRun is in flight used to leave the run
running in the bridge (the client never learnt its id), and ``vae demo`` then
shut its bridge down under a run that read ``failed`` instead of
``cancelled``. Here the StartRun call is shielded: if the caller is cancelled
meanwhile, the call is still awaited to learn the run id, the run is
cancelled, and the cancellation goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def start_run(stub: Any, request: Any, started: list[str]) -> Any:
    """``stub.StartRun(request)``; the run id is appended to ``started`` as soon as known."""
    from vae.bridge.v1 import bridge_pb2

    call = asyncio.ensure_future(stub.StartRun(request))
    try:
        response = await asyncio.shield(call)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            response = await call
            started.append(response.run.run_id)
            if not request.dry_run:
                cancel = bridge_pb2.CancelRunRequest(run_id=response.run.run_id)
                await stub.CancelRun(cancel)
        raise
    started.append(response.run.run_id)
    return response
