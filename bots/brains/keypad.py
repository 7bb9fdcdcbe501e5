"""The reference agent's ear for keypad tones: detect DTMF in what it hears, report it.

Why apart from :mod:`vae.bots.sound.listening`: the listener decides *when* the peer
talks (turns, barge-ins); this decides *which keys* the peer pressed, and
reports them as the agent's own ``BotEvent.dtmf`` so the recording holds
what the agent heard beside what the caller keyed (the DTMF_RECEIVED signal
compares the two). Detection is :class:`vae.dtmf.Detector` (the Goertzel
power of the eight keypad frequencies) over every frame the agent receives.

Keys are reported together once the line has been free of tones for
:data:`INTER_DIGIT_S` (counted in received samples, so the virtual clock
gives the same report as the real one), or when the call ends. In a text
session there are no tones: the bridge passes the keys as
``BridgeMessage.dtmf`` and they are reported as they come.
"""

from __future__ import annotations

import numpy as np

from vae import dtmf
from vae.bots.brains.conversation import Conversation
from vae.common.v1 import common_pb2

#: Quiet after the last key before the keys heard are reported, seconds.
INTER_DIGIT_S = 0.5


class KeypadEar:
    def __init__(self, conv: Conversation, rate: int) -> None:
        self.conv = conv
        self.detector = dtmf.Detector(rate)
        self._quiet = int(rate * INTER_DIGIT_S)
        self._pending = ""
        self._last = 0
        #: Every key reported so far, in order.
        self.reported = ""

    async def hear(self, pcm: bytes) -> None:
        """Feed one received frame; report the pending keys after the inter-digit quiet."""
        keys = self.detector.feed(np.frombuffer(pcm, dtype="<i2"))
        if keys:
            self._pending += keys
            self._last = self.detector.position
        elif self._pending and self.detector.position - self._last >= self._quiet:
            await self.flush()

    async def flush(self) -> None:
        """Report the keys heard and not yet reported (the call is ending, or a pause)."""
        if self._pending:
            await self.report(self._pending)
            self._pending = ""

    async def report(self, digits: str) -> None:
        self.reported += digits
        await self.conv.emit(dtmf=common_pb2.Dtmf(digits=digits))
