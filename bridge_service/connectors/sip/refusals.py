"""A call that was not set up, as the stop reason and detail its attempt records.

The SIP status is the first thing in the detail (``SIP 486 Busy Here: ...``),
so ``vae runs show`` and the report show it; ``vae runs show --json`` also
gives it as ``sip_code``. Other refusals (a 3xx, 488, 415, ...) are
``connector_failed`` with the code in the detail the same way.
"""

from __future__ import annotations

from vae.bridge_service.connectors.base import CallRefused
from vae.sip.outgoing import CallFailed

BUSY, NOT_FOUND, NO_ANSWER = "sip_busy", "sip_not_found", "sip_no_answer"
DECLINED, SERVER_ERROR, AUTH_FAILED = "sip_declined", "sip_server_error", "sip_auth_failed"


def stop_reason(failed: CallFailed) -> str:
    code = failed.code
    if failed.auth:
        return AUTH_FAILED
    if failed.ring_timeout or code in (408, 480):
        return NO_ANSWER
    if code in (486, 600):
        return BUSY
    if code == 404:
        return NOT_FOUND
    if code == 603:
        return DECLINED
    if 500 <= code < 600:
        return SERVER_ERROR
    return "connector_failed"


def refused(failed: CallFailed, url: str) -> CallRefused:
    status = f"SIP {failed.code} {failed.phrase}: " if failed.code else ""
    return CallRefused(stop_reason(failed), f"{status}{failed.detail} (calling {url})")
