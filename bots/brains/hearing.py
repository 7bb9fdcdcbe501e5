"""The scripted agent's ears: it reports what it heard of each caller turn.

A scripted agent has no recogniser; what it "hears" is the caller's own
transcript, which the bridge forwards when the run shares transcripts
(``vae run --share-transcripts``; ``vae demo`` does). Each forwarded line is
reported back as a HEARD transcript as it is received (a hook on the peer's
lines, not a task of its own, so on the virtual clock the report belongs to
the step that brought the line) — the caller's words as
delivered, so the scorer's HEARD_CORRECTLY sees a perfect listener — unless
the script step that answers that turn says otherwise: ``heard: "..."`` on an
agent step is what it reports for the caller's preceding turn (once, for the
whole turn) and what goes into its context history, the text it then acts on.
That is how a suite demonstrates a mishearing.

Without shared transcripts the agent reports nothing it heard (it cannot
know), and says so once in its log, so HEARD_CORRECTLY is unscored rather
than wrong.
"""

from __future__ import annotations

from vae.bots.brains.conversation import Conversation
from vae.common.v1 import common_pb2


class HeardReporter:
    """Reports each caller turn; :meth:`expect` and :meth:`acted` bracket a step's cue."""

    def __init__(self, conv: Conversation) -> None:
        self.conv = conv
        self.enabled = conv.info.share_transcripts
        #: The scripted text for the turn now being heard (None: as delivered).
        self._override: str | None = None
        self._used = False
        if self.enabled:
            conv.reports_heard = True
            conv.peer.on_text = self._received

    async def explain_silence(self) -> None:
        if not self.enabled:
            await self.conv.log(
                "transcripts are not shared in this run: the scripted agent cannot report "
                "what it heard (vae run --share-transcripts)",
                common_pb2.LOG_LEVEL_INFO,
            )

    def expect(self, heard: str | None) -> None:
        """A step now waits for the caller's turn; ``heard`` overrides what it hears of it."""
        self._override, self._used = heard, False

    async def acted(self) -> None:
        """The step's cue has come: an override not yet reported is reported now."""
        if self.enabled and self._override is not None and not self._used:
            self._used = True
            await self.conv.heard(self._override)
        self._override = None

    async def _received(self, text: str) -> None:
        """A forwarded caller line: report it, or the step's scripted text instead."""
        if self._override is None:
            await self.conv.heard(text)
        elif not self._used:  # the scripted text stands for the whole turn
            self._used = True
            await self.conv.heard(self._override)
