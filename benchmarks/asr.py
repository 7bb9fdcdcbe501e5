"""The embedded recogniser on the example suite: word error rate and speed.

Records the example suite exactly as ``vae demo`` does (in-process bridge,
the scripted reference bots speaking through eSpeak NG, shared transcripts),
then rescores the run with ``--transcribe pocketsphinx`` and measures:

1. **WER** of pocketsphinx's transcription of each side's recorded channel
   against what that side's bot reported saying (the text it synthesised),
   pooled over the run, per side, and per scenario;
2. **speed**: every transcribed turn decoded again in this process with one
   decoder, timed in CPU seconds (× real time on one core, whatever else the
   machine runs); the stage's own decoding time (wall, per decoder process);
   and its wall-clock cost: the rescore with the stage minus without it;
3. **cache**: a second rescore with the same configuration makes no calls.

Usage: ``python benchmarks/asr.py [--suite examples/suite] [--concurrency 2] [--quick]``
(``--quick``: the suite's first three scenarios). Prints figures; never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vae.cli.demo.demo_run import run_demo
from vae.recordings.read.reader import RecordingReader
from vae.recordings.vad import spurts
from vae.scorer_service.config import ScoringConfig
from vae.scorer_service.scoring.rescore import rescore
from vae.scorer_service.transcription.stage import PAD_S
from vae.speech.stt import SPHINX_RATE, to_rate
from vae.speech.stt_settings import TranscriptionSettings


def cpu_speed(db: Path, scoring_id: str) -> tuple[float, float]:
    """(speech seconds, CPU seconds) decoding every transcribed turn again, one decoder."""
    import pocketsphinx

    decoder = pocketsphinx.Decoder(samprate=SPHINX_RATE, loglevel="FATAL")
    speech = cpu = 0.0
    with RecordingReader(db) as reader:
        done = {(r.session_id, r.channel) for r in reader.transcripts(scoring_id)}
        for session_id, channel in sorted(done):
            audio = reader.read_channel(session_id, channel)
            rate, pad = audio.sample_rate, round(PAD_S * audio.sample_rate)
            for s in spurts(audio.samples, rate):
                pcm = to_rate(audio.samples[max(0, s.start - pad) : s.end + pad], rate, SPHINX_RATE)
                started = time.process_time()
                decoder.start_utt()
                decoder.process_raw(pcm.tobytes(), full_utt=True)
                decoder.end_utt()
                cpu += time.process_time() - started
                speech += (s.end - s.start) / rate
    return speech, cpu


async def timed(db: Path, run_id: str, config: ScoringConfig) -> tuple[Any, float]:
    started = time.perf_counter()
    result = await rescore(db, run_id, config)
    return result, time.perf_counter() - started


def per_side(result: Any) -> dict[str, tuple[int, int]]:
    sides: dict[str, tuple[int, int]] = {}
    for o in result.sessions:
        score = o.get("transcription.wer")
        for side, row in (score.detail.get("sides") or {}).items() if score else []:
            words, errors = sides.get(side, (0, 0))
            sides[side] = (words + int(row["words"]), errors + int(row["errors"]))
    return sides


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", type=Path, default=Path("examples/suite"))
    parser.add_argument("--concurrency", type=int, default=2, help="decoder processes")
    parser.add_argument("--quick", action="store_true", help="the first three scenarios")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        suite = args.suite
        if args.quick:
            suite = Path(tmp) / "suite"
            suite.mkdir()
            for path in sorted(args.suite.glob("*.yaml"))[:3]:
                shutil.copy(path, suite)
        db = Path(tmp) / "asr.db"
        demo = await run_demo(db, suite, report_path=Path(tmp) / "r.html", show_progress=False)
        print(f"recorded {len(demo.sessions)} scenarios ({demo.seconds:.0f} s)")
        plain = ScoringConfig(no_judge=True)
        _, base_s = await timed(db, demo.run_id, plain)
        asr = TranscriptionSettings("pocketsphinx", concurrency=args.concurrency)
        first, asr_s = await timed(db, demo.run_id, ScoringConfig(no_judge=True, transcription=asr))
        second, _ = await timed(db, demo.run_id, ScoringConfig(no_judge=True, transcription=asr))
        speech_s, cpu_s = await asyncio.to_thread(cpu_speed, db, first.scoring.scoring_id)
    t = first.scoring.summary["transcription"]
    stage_s = max(1e-9, asr_s - base_s)
    print(f"pocketsphinx {t['engine']['version']} ({t['engine']['model']}), "
          f"{args.concurrency} decoder process(es)")  # fmt: skip
    print(f"turns transcribed: {t['turns']}, speech {t['audio_s']:.1f} s, failed {t['errors']}")
    print(f"WER against the bots' own text: {t['wer']:.1%} over {t['words']} words")
    for side, (words, errors) in sorted(per_side(first).items()):
        print(f"  {side:5s} {errors / words if words else 0:.1%} over {words} words")
    for o in first.sessions:
        score = o.get("transcription.wer")
        if score is not None and score.value is not None:
            print(f"  {o.scenario_name:32s} {score.value:6.1%}")
    print(f"one decoder, CPU time: {cpu_s:.1f} s for {speech_s:.1f} s of speech: "
          f"{speech_s / cpu_s:.2f}x real time per core")  # fmt: skip
    print(f"the stage's decoding, wall: {t['busy_s']:.1f} s for {t['audio_s']:.1f} s of speech: "
          f"{t['audio_s'] / t['busy_s']:.2f}x real time per decoder process")  # fmt: skip
    print(f"stage wall clock: rescore {asr_s:.1f} s with it, {base_s:.1f} s without: "
          f"{t['audio_s'] / stage_s:.2f}x real time")  # fmt: skip
    again = second.scoring.summary["transcription"]
    print(f"second rescore: {again['requests']} calls, {again['cache_hits']} cached turns")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
