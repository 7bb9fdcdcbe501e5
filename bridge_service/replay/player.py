"""The turn-gated player: recorded caller turns, cued by the live agent's speech.

Why a pure state machine: the user side of a replay must not depend on
wall-clock jitter. The player's only clock is the audio it hears — the frames
the bridge delivers to the user side on its open-mic clock — so its output is
a function of what the agent said and when (counted in delivered samples),
and replaying the same run against the same agent gives the same caller
audio, sample for sample.

For every delivered frame (``on_frame``) the player

1. follows the agent's speech on the frame (:class:`AgentFollower`: onsets
   after a quiet of at least the gate silence, the end of the last loud
   sample), the same way :mod:`vae.recordings.read.replay_script` cut the recording;
2. starts the next recorded turn when its cue (:class:`~vae.recordings.read.replay_script.Gate`)
   is met, at the exact sample the cue names (the agent's end of speech plus
   the hold, or its onset plus the recorded barge-in offset);
3. returns the caller's audio for the same span of time: silence, or the
   turn's samples exactly as recorded.

After the last turn, the player waits for the agent's reply (when the
recording had one) and then ``FINISH_AFTER_S`` of quiet before it reports
``finished`` — unless the agent's end tool, or a limit, ends the call first.

Output positions are on the caller's own sample clock (rate of the
recording); delivered positions are converted with integer arithmetic.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vae.recordings.read.replay_script import Gate, ReplayScript, ReplayTurn

#: Quiet after the agent's reply to the last turn before the replay ends: an agent
#: that ends the call with its end tool as it stops speaking gets to do so first.
FINISH_AFTER_S = 2.0


class AgentFollower:
    """The agent's turns on the delivered line, in delivered samples.

    A frame is voiced when its RMS is above the threshold; a voiced run counts
    once it lasts ``min_speech_s`` (shorter ones are clicks). A counted run that
    starts at least the gate silence after the previous speech ended is a new
    turn; its onset is its first loud sample, searched one frame back. The end
    of speech is one past the last loud sample of a counted run (including the
    frame right after it) — the same boundaries the recording was cut by.
    """

    def __init__(
        self,
        rate: int,
        gate_silence_s: float,
        threshold_dbfs: float = -45.0,
        min_speech_s: float = 0.06,
    ) -> None:
        self.rate = rate
        self.position = 0
        #: Onset positions of the agent's turns.
        self.onsets: list[int] = []
        #: One past the agent's last loud sample (-1: it never spoke).
        self.last_end = -1
        self._level = 10 ** (threshold_dbfs / 20) * 32768
        self._gap = round(gate_silence_s * rate)
        self._min = max(1, round(min_speech_s * rate))
        self._prev = np.zeros(0, dtype=np.int16)
        self._run_len = 0
        self._run_onset = 0
        self._run_end = -1
        self._counted = False
        self._end_before_run = -1

    def feed(self, pcm: bytes) -> None:
        x = np.frombuffer(pcm, dtype="<i2")
        start = self.position
        self.position += len(x)
        if not len(x):
            return
        loud = np.flatnonzero(np.abs(x.astype(np.int32)) >= self._level)
        voiced = float(np.sqrt(np.mean(x.astype(np.float64) ** 2))) > self._level
        if voiced:
            if self._run_len == 0:
                self._start_run(start, loud)
            self._run_len += len(x)
            if len(loud):
                self._run_end = start + int(loud[-1]) + 1
            if not self._counted and self._run_len >= self._min:
                self._counted = True
                quiet = self._run_onset - self._end_before_run
                if self._end_before_run < 0 or quiet >= self._gap:
                    self.onsets.append(self._run_onset)
            if self._counted:
                self.last_end = self._run_end
        else:
            if self._run_len and self._counted and len(loud):
                self.last_end = start + int(loud[-1]) + 1
            self._run_len = 0
            self._counted = False
        self._prev = x

    def _start_run(self, start: int, loud: np.ndarray) -> None:
        self._end_before_run = self.last_end
        back = np.flatnonzero(np.abs(self._prev.astype(np.int32)) >= self._level)
        if len(back):
            self._run_onset = start - len(self._prev) + int(back[0])
        elif len(loud):
            self._run_onset = start + int(loud[0])
        else:
            self._run_onset = start
        self._run_end = self._run_onset

    @property
    def in_run(self) -> bool:
        """A counted voiced run is going on right now."""
        return self._counted


class ReplayPlayer:
    def __init__(
        self,
        script: ReplayScript,
        heard_rate: int,
        gate_silence_s: float,
        finish_after_s: float = FINISH_AFTER_S,
    ) -> None:
        self.script = script
        self.finish_after_s = max(finish_after_s, gate_silence_s)
        self.rate = script.rate
        self.heard_rate = heard_rate
        self.gate_silence_s = gate_silence_s
        self.agent = AgentFollower(heard_rate, gate_silence_s)
        self.next_turn = 0
        #: The turn playing: (turn, output start position).
        self.playing: tuple[ReplayTurn, int] | None = None
        #: Delivered positions where the previous turn started and ended.
        self.prev_start = -1
        self.prev_end = 0
        self.finished = False
        self.out_position = 0
        #: Each placed turn: what was planned and what happened (recorded as a log event).
        self.placed: list[dict[str, Any]] = []

    def _out(self, heard_pos: int) -> int:
        return heard_pos * self.rate // self.heard_rate

    def _heard(self, out_pos: int) -> int:
        return -(-out_pos * self.heard_rate // self.rate)

    def on_frame(self, pcm: bytes) -> tuple[bytes, list[dict[str, Any]]]:
        """Hear one delivered frame; return the caller's audio for it and what happened."""
        frame_start = self.agent.position
        self.agent.feed(pcm)
        frame_end = self.agent.position
        out_end = self._out(frame_end)
        out = np.zeros(out_end - self.out_position, dtype=np.int16)
        happened: list[dict[str, Any]] = []
        while True:
            if self.playing is not None:
                turn, start = self.playing
                end = start + len(turn.samples)
                lo, hi = max(start, self.out_position), min(end, out_end)
                if hi > lo:
                    out[lo - self.out_position : hi - self.out_position] = turn.samples[
                        lo - start : hi - start
                    ]
                if end > out_end:
                    break
                self.playing = None
                self.prev_end = self._heard(end)
                happened.append({"event": "turn_ended", "turn": turn.index, "end_offset": end})
                continue
            if self.finished:
                break
            if self.next_turn >= len(self.script.turns):
                if self._reply_over(frame_end):
                    self.finished = True
                    happened.append({"event": "finished", "at": frame_end})
                break
            turn = self.script.turns[self.next_turn]
            cue = self._cue(turn, frame_end)
            if cue is None:
                break
            at, reference = cue
            at = max(at, frame_start, self.prev_end)
            if at >= frame_end:
                break
            start = self._out(at)
            self.playing = (turn, start)
            self.prev_start = at
            self.next_turn += 1
            info = self._placement(turn, at, reference, start)
            self.placed.append(info)
            happened.append({"event": "turn_started", **info})
        self.out_position = out_end
        return out.tobytes(), happened

    def _cue(self, turn: ReplayTurn, now: int) -> tuple[int, int] | None:
        """Where ``turn`` starts (delivered samples) and the point its delay counts from."""
        hr = self.heard_rate
        agent = self.agent
        if turn.gate is Gate.AFTER_USER:
            ref = self.prev_end if self.prev_start >= 0 else 0
            return ref + round(turn.delay_s * hr), ref
        onsets = [o for o in agent.onsets if o > self.prev_start]
        if turn.gate is Gate.BARGE_IN:
            if not onsets:
                return None
            return onsets[0] + round(turn.delay_s * hr), onsets[0]
        if not onsets or agent.in_run or agent.last_end < 0:
            return None
        if turn.agent_after_previous and agent.last_end <= self.prev_end:
            return None
        hold = round(max(self.gate_silence_s, turn.delay_s) * hr)
        if now - agent.last_end < hold:
            return None
        return agent.last_end + hold, agent.last_end

    def _reply_over(self, now: int) -> bool:
        agent = self.agent
        replied = any(o > self.prev_start for o in agent.onsets) and agent.last_end > self.prev_end
        if self.script.reply_expected and not replied:
            return False
        quiet_since = max(self.prev_end, agent.last_end)
        hold = round(self.finish_after_s * self.heard_rate)
        return not agent.in_run and now - quiet_since >= hold

    def _placement(self, turn: ReplayTurn, at: int, reference: int, start: int) -> dict[str, Any]:
        return {
            "turn": turn.index,
            "gate": str(turn.gate),
            "recorded_delay_s": round(turn.delay_s, 6),
            "delay_s": round((at - reference) / self.heard_rate, 6),
            "start_offset": start,
            "end_offset": start + len(turn.samples),
            # Where the cue's reference fell (the agent's end of speech or onset,
            # or the previous turn's end) on the caller's clock.
            "cue_offset": self._out(reference),
            "samples": len(turn.samples),
            "source_start_s": round(turn.source_start_s, 6),
        }
