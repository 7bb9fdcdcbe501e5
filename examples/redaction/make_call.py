"""Make a recorded call with personal data in it, for trying out redaction (docs/privacy.md).

Writes ``FOLDER/card-call.wav`` (stereo: the caller left, the agent right)
and ``FOLDER/card-call.transcript.json``, whose segments list their timed
words as Whisper's verbose_json does. The voices are eSpeak NG's (bundled
with vae): each word is synthesised alone, so its times are exact.

Usage: ``python3 examples/redaction/make_call.py FOLDER``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

from vae.bots.sound.speech import default_synthesiser

LINES = [
    ("agent", "North Bank, how can I help?"),
    ("user", "Hi, I want to pay my bill. My card number is four one one one, one one one one, "
             "one one one one, one one one one."),
    ("agent", "Thank you. And your member number?"),
    ("user", "It is M one two three four five six, and the receipt goes to ann dot lee at "
             "example dot com."),
    ("agent", "Done, the bill is paid. Goodbye."),
]  # fmt: skip


def main(folder: Path) -> None:
    synth = default_synthesiser("espeak")
    rate = synth.sample_rate
    sides: dict[str, list[np.ndarray]] = {"user": [], "agent": []}
    segments = []
    t = 0.3
    for side in sides:
        sides[side].append(np.zeros(int(t * rate), dtype=np.int16))
    for side, text in LINES:
        start, words = t, []
        for word in text.split():
            pcm = synth.synthesise(word.strip(",."))
            gap = np.zeros(int(0.06 * rate), dtype=np.int16)
            words.append({"word": word, "start": round(t, 3), "end": round(t + len(pcm) / rate, 3)})
            chunk = np.concatenate([pcm, gap])
            for s in sides:
                sides[s].append(chunk if s == side else np.zeros(len(chunk), dtype=np.int16))
            t += len(chunk) / rate
        segments.append({"speaker": side, "text": text, "start": round(start, 3),
                         "end": round(t, 3), "words": words})  # fmt: skip
        for s in sides:
            sides[s].append(np.zeros(int(0.5 * rate), dtype=np.int16))
        t += 0.5
    folder.mkdir(parents=True, exist_ok=True)
    stereo = np.stack([np.concatenate(sides["user"]), np.concatenate(sides["agent"])], axis=1)
    sf.write(str(folder / "card-call.wav"), stereo, rate, subtype="PCM_16")
    (folder / "card-call.transcript.json").write_text(json.dumps({"segments": segments}, indent=1))
    print(f"wrote {folder / 'card-call.wav'} ({t:.1f} s) and its transcript")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "calls"))
