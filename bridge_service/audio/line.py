"""The phone line on the user -> agent direction: gain, clipping, codec, loss, jitter.

Why here, frame by frame: :class:`~vae.bridge_service.audio.path.Direction` hands
out one frame per tick of whichever clock drives the session (the open-mic
clock in real time, ``lockstep`` on the virtual clock), and applies the
scenario's noise to it; the line follows the noise on the same frame, so it
holds for every user bot (gRPC or connector) and on both clocks. The frames
are recorded as ``to_agent`` after it; ``user`` stays what the bot sent.

In order, as a phone call degrades a caller's voice (docs/scenarios.md, "The line"):

1. ``gain_db``, then hard ``clipping`` at a level in dBFS (the caller's handset);
2. ``codec: mulaw8k``: resampled to 8 kHz (a streaming polyphase FIR
   resampler, band-limited below 4 kHz), mu-law companded (G.711: encoded to
   8 bits and decoded), and resampled back to the agent's rate. FIR filters
   give one sample out per sample in, so every frame is full and the agent
   hears the caller a fixed 10 ms later (at 16 kHz). Not soxr's streams here:
   fed 16 ms frames they answer in blocks of about 100 ms, which would leave
   gaps or add that much delay;
3. 20 ms packets on a position grid from the session's first frame: each lost
   with ``packet_loss`` (independently, or in bursts of mean
   ``packet_loss_burst`` packets: a two-state Gilbert model with the same
   average rate), or late by more than the far end's 40 ms playout buffer
   with a delay variation of ``jitter_ms`` (the delay of a packet is
   ``|N(0, jitter_ms)|``). A lost or late packet is played as silence (zeros).

Everything random draws from one generator seeded by the session's seed
(``SessionStart.seed``: the run's ``--seed`` and the scenario name), so the
same seed gives the same ``to_agent`` sample for sample.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from vae.bridge_service.audio.narrowband import Narrowband
from vae.recordings.scenarios.line import (
    PACKET_MS,
    PLAYOUT_MS,
    LineConditions,
    line_from_dict,
    merge,
)
from vae.recordings.scenarios.model import NoiseConfig, Scenario


class LineTransform:
    """One session's line on frames at the agent's receive rate (PCM16 LE in, out)."""

    def __init__(self, line: LineConditions, rate: int, seed: int) -> None:
        self.line = line
        self.rate = rate
        self._rng = np.random.default_rng([seed, 0x11E])
        self._gain = 10 ** (line.gain_db / 20)
        self._clip = None if line.clipping is None else 10 ** (line.clipping / 20) * 32767
        self._codec = Narrowband(rate) if line.codec == "mulaw8k" else None
        self.packet_samples = rate * PACKET_MS // 1000
        self._position = 0
        self._packet = -1
        self._packet_lost = False
        self._bad = False  # the Gilbert model's state (in a burst)
        #: Packets decided so far, and how many of them were lost or late.
        self.packets = 0
        self.lost = 0
        self.late = 0

    def apply(self, pcm: bytes) -> bytes:
        """The frame as the agent receives it over this line."""
        x = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
        if self._gain != 1.0:
            x = x * self._gain
        if self._clip is not None:
            x = np.clip(x, -self._clip, self._clip)
        if self._codec is not None:
            x = self._codec.process(x)
        if self.line.packet_loss > 0 or self.line.jitter_ms > 0:
            x = self._packets(x)
        out: bytes = np.clip(np.rint(x), -32768, 32767).astype("<i2").tobytes()
        return out

    def _packets(self, x: np.ndarray) -> np.ndarray:
        """Zero the lost and late packets' samples in ``x`` (apply's own array: in place)."""
        start = self._position
        end = start + len(x)
        pos = start
        while pos < end:
            packet = pos // self.packet_samples
            if packet != self._packet:
                self._packet = packet
                self._packet_lost = self._decide()
            stop = min(end, (packet + 1) * self.packet_samples)
            if self._packet_lost:
                x[pos - start : stop - start] = 0.0
            pos = stop
        self._position = end
        return x

    def _decide(self) -> bool:
        """Whether the next packet is lost or late: a loss draw, then (with jitter) a delay."""
        line = self.line
        p = line.packet_loss
        u = float(self._rng.random())
        if line.packet_loss_burst is None or p in (0.0, 1.0):
            lost = u < p
        else:
            leave = 1.0 / line.packet_loss_burst  # bad -> good
            enter = p * leave / (1.0 - p)  # good -> bad: the stationary rate is p
            self._bad = u >= leave if self._bad else u < enter
            lost = self._bad
        delay = abs(float(self._rng.normal(0.0, line.jitter_ms))) if line.jitter_ms > 0 else 0.0
        late = not lost and delay > PLAYOUT_MS
        self.packets += 1
        self.lost += lost
        self.late += late
        return lost or late

    def stats(self) -> dict[str, int]:
        return {"packets": self.packets, "lost": self.lost, "late": self.late}


def session_line(
    scenario: Scenario, overrides: dict[str, Any]
) -> tuple[LineConditions | None, NoiseConfig | None]:
    """A session's line (the scenario's ``user.line`` with the run's ``--line`` over it).

    None when neither sets one. The line's ``white_noise_db`` replaces the
    white-noise level of the scenario's noise (its noise files stay); the
    noise returned is the one to add.
    """
    stated = scenario.user.extras.get("line")
    if stated is None and not overrides:
        return None, scenario.noise
    line = merge(line_from_dict(stated), overrides)
    noise = scenario.noise
    if line.white_noise_db is not None:
        noise = replace(noise or NoiseConfig(), white_noise_db=line.white_noise_db)
    return line, noise


def check_lines(scenarios: list[Scenario], overrides: dict[str, Any]) -> None:
    """Refuse a run whose ``--line`` makes a scenario's line impossible (ValueError naming it)."""
    if not overrides:
        return
    for sc in scenarios:
        try:
            session_line(sc, overrides)
        except ValueError as exc:
            raise ValueError(f"options.line with scenario {sc.name!r}: {exc}") from None
