"""Status codes for bugs: ``INTERNAL`` with an error id, logged once.

A client mistake gets a specific code naming what was wrong (see
``docs/errors.md``). Anything else is a bug in the server; the client gets
``INTERNAL: internal error <id> (...); the server log has the details`` and
the server logs the traceback exactly once under the same id, so a user's
report can be matched to the log line. Both services use this, so it lives
in the contract layer beside :mod:`vae.serving`.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

import grpc


def error_id() -> str:
    return "E" + secrets.token_hex(6)


async def internal_error(context: Any, log: logging.Logger, rpc: str, exc: BaseException) -> None:
    """Log ``exc`` with a traceback and a fresh id; abort the RPC with INTERNAL and the id."""
    ident = error_id()
    log.error("internal error %s in %s", ident, rpc, exc_info=exc)
    await context.abort(
        grpc.StatusCode.INTERNAL,
        f"internal error {ident} in {rpc} ({type(exc).__name__}); the server log has the details",
    )
