"""SIP and RTP, the pieces both the bridge and the reference bots speak.

Why in the contract-side package (beside :mod:`vae.dtmf` and :mod:`vae.speech`):
the bridge calls agents and takes their calls over SIP
(``vae.bridge_service.connectors.sip``), and vae's reference agent answers
them (``vae.bots.sip``); bots may import only ``vae``, and both ends must agree
byte for byte on the same protocol. Nothing here imports a service, the store
or the bots.

What lives here, bottom to top:

- pure codecs, no I/O: :mod:`.g711` (PCMU/PCMA), :mod:`.rtp` (RTP headers and
  RFC 4733 telephone-events), :mod:`.jitter` (the receive jitter buffer),
  :mod:`.sdp` (offer/answer), :mod:`.digest` (RFC 8760 digest credentials),
  :mod:`.messages` (parsing and building SIP messages on top of the
  ``sipmessage`` library, with vae's size and sanity limits), :mod:`.info`
  (the vae-session / vae-bot INFO packages);
- I/O on asyncio, callbacks and futures only (no task of their own):
  :mod:`.transport` (UDP and TCP), :mod:`.transactions` (RFC 3261 §17 client
  and server transactions and their timers), :mod:`.media` (one call's RTP
  stream), :mod:`.dialog` (a dialog's state and the requests built from it),
  :mod:`.call` (one established call), :mod:`.incoming` (a call offered,
  answered or rejected), :mod:`.agent` (a user agent: routes what arrives),
  :mod:`.outgoing` (placing a call).

Everything that parses SIP needs the ``sipmessage`` package, imported once in
:mod:`.sipmsg`: without ``pip install 'vae[sip]'`` importing any of these
raises :class:`SipUnavailable` (an ``ImportError``) saying so.
"""

from __future__ import annotations

EXTRA_HINT = "SIP needs the sip extra: pip install 'vae[sip]'"


class SipUnavailable(ImportError):
    """The ``sip`` extra is not installed (an ImportError, so importers treat it as one)."""


def require() -> None:
    """Raise :class:`SipUnavailable` naming the extra when ``sipmessage`` is missing."""
    try:
        import sipmessage  # noqa: F401
    except ImportError as exc:
        raise SipUnavailable(EXTRA_HINT) from exc
