"""A recorded caller as a :class:`~vae.bridge_service.connectors.base.SideEndpoint`.

Why an endpoint: the session treats it exactly like a bot that dialled in.
Each delivered frame (:class:`PeerAudio`) is handed to the
:class:`~vae.bridge_service.replay.player.ReplayPlayer` inside ``send``, and the
caller's audio for the same span of time comes straight back out of
``receive`` — so the replayed caller speaks on the bridge's own clock, one
frame per tick, like a bot with a perfectly steady line.

What it reports, as a bot would: ``speech_started``/``speech_stopped`` at each
replayed turn's sample offsets (source ``replay``), the caller's recorded
transcripts with their new times, one ``log`` event per placed turn with the
planned and the actual cue (``payload["replay"]``), and at the end an
``end_conversation`` of kind ``replay_finished``. Keys the caller pressed
(DTMF) are pressed again at the end of the turn they followed, so the agent
hears the tones again (they are not in the recorded ``user`` channel). The replayed caller has no
tools and no state of its own: its final state is empty.

It follows the virtual clock too (``vae run --replay RUN --clock virtual``):
each frame is answered at once with the caller's audio for that span, then a
``ClockAck`` for the frame's step. It cannot play text: a replay is audio.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from vae.bridge_service.connectors.base import (
    BotAudio,
    BotEvent,
    BotInfo,
    BotInput,
    BotProtocolError,
    BridgeOutput,
    Capabilities,
    ClockAck,
    FinalStatePart,
    PeerAudio,
    SessionEndingOut,
    SessionStartInfo,
)
from vae.bridge_service.replay.player import ReplayPlayer
from vae.bridge_service.session.ending import REPLAY_FINISHED_KIND
from vae.recordings.models import EventKind, Side
from vae.recordings.read.replay_script import ReplayScript

_NS = 1_000_000_000
_TIMES = ("start_s", "end_s", "start_unix_nanos", "end_unix_nanos")


class ReplayEndpoint:
    role = Side.USER
    capabilities = Capabilities(virtual_clock=True)

    def __init__(self, script: ReplayScript, gate_silence_s: float) -> None:
        self.script = script
        self.bot = BotInfo(
            "vae-replay",
            "1",
            {"replayed_run": script.run_id, "replayed_session": script.session_id},
        )
        self.send_rate = script.rate
        self.receive_rate = script.rate
        self.player = ReplayPlayer(script, self.receive_rate, gate_silence_s)
        self._queue: asyncio.Queue[BotInput | None] = asyncio.Queue()
        self._seq = 0
        self._t0_ns = 0
        self._ended = False
        self._virtual = False

    # ------------------------------------------------------------ SideEndpoint
    async def receive(self) -> AsyncIterator[BotInput]:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            yield item

    async def send(self, message: BridgeOutput) -> bool:
        if isinstance(message, PeerAudio):
            self._on_frame(message)
        elif isinstance(message, SessionStartInfo):
            self._t0_ns = time.time_ns()
            self._virtual = message.clock == "virtual"
            s = self.script
            text = (
                f"replaying the caller of session {s.session_id} (run {s.run_id}):"
                f" {len(s.turns)} turns"
            )
            self._event(EventKind.LOG, {"level": "info", "message": text})
        elif isinstance(message, SessionEndingOut) and not self._ended:
            self._ended = True
            self._queue.put_nowait(FinalStatePart(done=True))
        return True

    async def close(self, error: BotProtocolError | None = None) -> None:
        self._queue.put_nowait(None)

    # ------------------------------------------------------------ playing
    def _on_frame(self, frame: PeerAudio) -> None:
        if self._ended:
            return
        offset = self.player.out_position
        pcm, happened = self.player.on_frame(frame.pcm)
        if pcm:
            self._queue.put_nowait(BotAudio(self._seq, offset, pcm, time.time_ns()))
            self._seq += 1
        for what in happened:
            self._report(what)
        if self._virtual:
            self._queue.put_nowait(ClockAck(frame.sequence))

    def _report(self, what: dict[str, Any]) -> None:
        event = what["event"]
        if event == "turn_started":
            info = {k: v for k, v in what.items() if k != "event"}
            self._event(EventKind.SPEECH_STARTED, _boundary(info["start_offset"]))
            message = (
                f"replay turn {info['turn']}: {info['gate']}, {info['delay_s']:.3f} s"
                f" (recorded {info['recorded_delay_s']:.3f} s)"
            )
            self._event(EventKind.LOG, {"level": "info", "message": message, "replay": info})
        elif event == "turn_ended":
            self._event(EventKind.SPEECH_STOPPED, _boundary(what["end_offset"]))
            self._transcripts(what["turn"])
            for keys in self.script.turns[what["turn"]].keys:  # pressed again, right after
                self._event(EventKind.DTMF, {**keys, "replayed": True})
        elif event == "finished":
            reason = "replay finished: the last recorded caller turn was played"
            if self.script.reply_expected:
                reason += " and the agent replied"
            payload = {"kind": REPLAY_FINISHED_KIND, "reason": reason}
            self._event(EventKind.END_CONVERSATION, payload)

    def _transcripts(self, index: int) -> None:
        placed = next(p for p in self.player.placed if p["turn"] == index)
        start, end = placed["start_offset"], placed["end_offset"]
        rate = self.send_rate
        for recorded in self.script.turns[index].transcripts:
            payload = dict(recorded)
            payload.update(
                start_sample_offset=start,
                end_sample_offset=end,
                start_unix_nanos=self._t0_ns + start * _NS // rate,
                end_unix_nanos=self._t0_ns + end * _NS // rate,
                start_s=start / rate,
                end_s=end / rate,
                replayed_from={
                    "session_id": self.script.session_id,
                    **{k: recorded[k] for k in _TIMES if k in recorded},
                },
            )
            self._event(EventKind.TRANSCRIPT, payload)

    def _event(self, kind: EventKind, payload: dict[str, Any]) -> None:
        self._queue.put_nowait(BotEvent(kind, time.time_ns(), payload))


def _boundary(offset: int) -> dict[str, Any]:
    return {"source": "replay", "sample_offset": offset}
