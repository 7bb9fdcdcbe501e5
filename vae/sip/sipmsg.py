"""The ``sipmessage`` names vae uses, imported in one place: a missing extra says what to install.

Every module of ``vae.sip`` takes them from here, so whichever is imported
first without the ``sip`` extra raises :class:`vae.sip.SipUnavailable` (an
``ImportError``) naming ``pip install 'vae[sip]'``; the connector registry
turns it into StartRun's refusal.
"""

from __future__ import annotations

from vae.sip import EXTRA_HINT, SipUnavailable

try:
    from sipmessage import URI, AuthChallenge, Message, Request, Response
except ImportError as exc:
    raise SipUnavailable(EXTRA_HINT) from exc

__all__ = ["URI", "AuthChallenge", "Message", "Request", "Response"]
