"""The line benchmark: CPU per session-second of the phone line and of the agent's keypad ear.

    python benchmarks/line.py            # 120 s of 16 ms frames at 16 kHz per case
    python benchmarks/line.py --quick    # 20 s
    python benchmarks/line.py --json

What a session pays for ``user.line`` (``bridge_service/audio/line.py``) on the
bridge's per-frame path, against the baseline measured in the same run: the
scenario's noise alone (``NoiseSource.add_to``, what every noisy session
already pays). Cases: the baseline; ``packet_loss`` with bursts and jitter
(numpy only); ``mulaw8k`` (two streaming soxr resamplers and mu-law per frame);
everything at once. Then the reference agent's keypad ear (``bots/brains/keypad.py``:
the Goertzel detector over every frame it hears). Printed as CPU microseconds
per session-second and as a ratio to the baseline, never asserted; ``--json``
prints one JSON document to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

import numpy as np

from vae import dtmf
from vae.bridge_service.audio.line import LineTransform
from vae.bridge_service.audio.noise import NoiseSource
from vae.recordings.scenarios.line import LineConditions
from vae.recordings.scenarios.model import NoiseConfig

RATE = 16000
FRAME = RATE * 16 // 1000


def _frames(seconds: float) -> list[bytes]:
    rng = np.random.default_rng(1)
    n = int(seconds * 1000 / 16)
    speech = np.clip(rng.normal(0, 3000, n * FRAME), -32768, 32767).astype("<i2")
    return [speech[i * FRAME : (i + 1) * FRAME].tobytes() for i in range(n)]


def _cpu_us_per_s(work: Callable[[bytes], object], frames: list[bytes], seconds: float) -> float:
    start = time.process_time()
    for frame in frames:
        work(frame)
    return (time.process_time() - start) * 1e6 / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 s per case instead of 120 s")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    seconds = 20.0 if args.quick else 120.0
    frames = _frames(seconds)
    noise = NoiseSource(NoiseConfig(white_noise_db=-40), RATE, 7)
    lines = {
        "loss + bursts + jitter": LineConditions(
            packet_loss=0.05, packet_loss_burst=2, jitter_ms=20
        ),
        "mulaw8k": LineConditions(codec="mulaw8k"),
        "everything": LineConditions(
            codec="mulaw8k", packet_loss=0.05, packet_loss_burst=2, jitter_ms=20,
            gain_db=-3, clipping=-6, white_noise_db=-40,
        ),
    }  # fmt: skip
    results: dict[str, float] = {
        "noise alone (baseline)": _cpu_us_per_s(noise.add_to, frames, seconds)
    }
    for name, line in lines.items():
        transform = LineTransform(line, RATE, 7)
        results[f"line: {name}"] = _cpu_us_per_s(transform.apply, frames, seconds)
    detector = dtmf.Detector(RATE)
    results["keypad ear (agent)"] = _cpu_us_per_s(
        lambda f: detector.feed(np.frombuffer(f, dtype="<i2")), frames, seconds
    )
    base = results["noise alone (baseline)"]
    if args.json:
        print(json.dumps({"seconds": seconds, "cpu_us_per_session_s": results}, indent=2))
        return
    print(f"{seconds:.0f} s of 16 ms frames at 16 kHz per case", file=sys.stderr)
    for name, value in results.items():
        ms = value / 1000
        print(f"{name:28s} {ms:7.2f} ms CPU per session-second  ({value / base:5.1f}x baseline)")


if __name__ == "__main__":
    main()
