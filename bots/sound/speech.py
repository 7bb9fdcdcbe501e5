"""Speech synthesis for the reference bots: eSpeak NG when present, else a voiced buzz.

A bot must speak real audio so the bridge, the recorder and the timing metrics
see what a real voice bot would produce. eSpeak NG is used through ``ctypes``
when its shared library can be found — first the copy the ``espeakng-loader``
wheel ships (located with ``importlib.util.find_spec``, without importing the
package, so bots keep importing only the contract, the standard library and
numpy), then a system ``libespeak-ng``. Without it the bots fall back to a
deterministic harmonic buzz with a syllable-like envelope whose length follows
the text, so turn-taking, energy detection and latency metrics still work.

The library is process-global and not re-entrant, so every synthesis holds a
lock; results are cached by text because scripted bots repeat their lines.
"""

from __future__ import annotations

import _ctypes
import ctypes
import ctypes.util
import functools
import importlib.util
import logging
import os
import shutil
import tempfile
import threading
from typing import Protocol

import numpy as np

log = logging.getLogger("vae.bots.speech")

_AUDIO_OUTPUT_SYNCHRONOUS = 0x02
_ESPEAK_CHARS_UTF8 = 1
_ESPEAK_INIT_DONT_EXIT = 0x8000
_ESPEAK_RATE = 1
_ESPEAK_PITCH = 3


class Synthesiser(Protocol):
    """Turns text into mono int16 PCM at :attr:`sample_rate`."""

    name: str
    sample_rate: int

    def synthesise(self, text: str) -> np.ndarray: ...


class BuzzSynthesiser:
    """A deterministic voiced signal: one ~180 ms "syllable" per vowel group.

    Harmonics of a 120–160 Hz fundamental (varied per word so it is not a
    steady tone) under a raised-cosine envelope, with 60 ms gaps between words:
    energy-based voice-activity detection sees it exactly as speech.
    """

    name = "buzz"

    def __init__(self, sample_rate: int = 16000, amplitude: float = 0.25) -> None:
        self.sample_rate = sample_rate
        self.amplitude = amplitude

    def synthesise(self, text: str) -> np.ndarray:
        rate = self.sample_rate
        pieces: list[np.ndarray] = []
        for w, word in enumerate(text.split()):
            syllables = max(1, _vowel_groups(word))
            n = int(rate * 0.18 * syllables)
            t = np.arange(n) / rate
            f0 = 120.0 + 10.0 * (w % 5)
            wave = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 6))
            env = np.sin(np.pi * ((t * rate) % int(rate * 0.18)) / (rate * 0.18)) ** 0.5
            pieces.append(np.asarray(wave * env, dtype=np.float64))
            pieces.append(np.zeros(int(rate * 0.06)))
        if not pieces:
            return np.zeros(0, dtype=np.int16)
        signal = np.concatenate(pieces)
        peak = float(np.max(np.abs(signal))) or 1.0
        return (signal / peak * self.amplitude * 32767).astype(np.int16)


def _vowel_groups(word: str) -> int:
    groups, previous = 0, False
    for ch in word.lower():
        vowel = ch in "aeiouy"
        if vowel and not previous:
            groups += 1
        previous = vowel
    return groups


_SynthCallback = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)


class EspeakSynthesiser:
    """eSpeak NG in synchronous mode, PCM collected through its callback.

    Every synthesis runs on a fresh copy of the library, loaded for it and
    unloaded after: eSpeak keeps state between utterances (its spectrum
    interpolation and pitch flutter live in static variables that neither
    ``espeak_Terminate`` nor a new ``espeak_Initialize`` resets), so the same
    line would come out a few samples different depending on what the process
    said before — and, with concurrent sessions, on scheduling. A fresh library
    makes the voice a pure function of the text: two runs on the virtual clock
    are identical sample for sample. It costs a few ms per distinct line
    (results are cached by text).
    """

    name = "espeak-ng"
    _lock = threading.Lock()

    def __init__(
        self,
        library: str,
        data_dir: str | None,
        voice: str = "en",
        words_per_minute: int = 205,
        pitch: int | None = None,
    ) -> None:
        self._library = library
        self._data = data_dir.encode() if data_dir else None
        self._voice = voice.encode()
        #: eSpeak's name of the voice (``es+f2``), for what a session records.
        self.voice = voice
        # A brisk phone voice keeps the example conversations short.
        self._words_per_minute = words_per_minute
        #: eSpeak pitch 0-100; None keeps the voice's own.
        self._pitch = pitch
        self._rate_now = words_per_minute
        self._copies = tempfile.TemporaryDirectory(prefix="vae-espeak-")
        self._loaded = 0
        self._chunks: list[bytes] = []
        # Keep a reference: ctypes frees the trampoline with the Python object.
        self._callback = _SynthCallback(self._collect)
        with self._lock:
            lib, path, rate = self._load()
            self._unload(lib, path)
        self.sample_rate = rate

    def _load(self) -> tuple[ctypes.CDLL, str, int]:
        """A fresh copy of the library, initialised with the voice (OSError if unusable)."""
        self._loaded += 1
        path = os.path.join(self._copies.name, f"libespeak-ng-{self._loaded}.so")
        shutil.copyfile(self._library, path)
        lib = ctypes.CDLL(path)
        lib.espeak_Initialize.restype = ctypes.c_int
        rate = lib.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, 0, self._data, _ESPEAK_INIT_DONT_EXIT
        )
        if rate <= 0:
            self._unload(lib, path, initialised=False)
            raise OSError(f"espeak_Initialize failed ({rate})")
        lib.espeak_SetSynthCallback(self._callback)
        if lib.espeak_SetVoiceByName(self._voice) != 0:
            self._unload(lib, path)
            raise OSError(f"espeak-ng has no voice {self._voice.decode()!r}")
        lib.espeak_SetParameter(_ESPEAK_RATE, self._rate_now, 0)
        if self._pitch is not None:
            lib.espeak_SetParameter(_ESPEAK_PITCH, self._pitch, 0)
        # Some variants (f2's roughness, whisper's breath) draw random numbers that
        # eSpeak seeds from the time of day: a fixed seed keeps the voice a function
        # of the text (eSpeak NG's own seed, and libc's rand() it also reads;
        # synthesis holds the lock).
        if hasattr(lib, "espeak_ng_SetRandSeed"):
            lib.espeak_ng_SetRandSeed(ctypes.c_long(1))
        _libc().srand(1)
        return lib, path, int(rate)

    @staticmethod
    def _unload(lib: ctypes.CDLL, path: str, *, initialised: bool = True) -> None:
        if initialised:
            lib.espeak_Terminate()
        _ctypes.dlclose(lib._handle)
        os.unlink(path)

    def _collect(self, wav: ctypes._Pointer[ctypes.c_short], count: int, _events: int) -> int:
        if count > 0 and wav:
            self._chunks.append(ctypes.string_at(wav, count * 2))
        return 0

    def synthesise(self, text: str) -> np.ndarray:
        return self.synthesise_at(text, self._words_per_minute)

    @functools.lru_cache(maxsize=512)  # noqa: B019 - one instance per voice
    def synthesise_at(self, text: str, words_per_minute: int) -> np.ndarray:
        """``text`` at ``words_per_minute`` (a caller whose rate varies per reply)."""
        data = text.encode("utf-8")
        with self._lock:
            self._rate_now = words_per_minute
            lib, path, _ = self._load()
            try:
                self._chunks = []
                status = lib.espeak_Synth(
                    ctypes.c_char_p(data), ctypes.c_size_t(len(data) + 1),
                    0, 0, 0, _ESPEAK_CHARS_UTF8, None, None,
                )  # fmt: skip
                chunks, self._chunks = self._chunks, []
            finally:
                self._unload(lib, path)
        if status != 0:
            raise OSError(f"espeak_Synth failed ({status})")
        pcm = np.frombuffer(b"".join(chunks), dtype="<i2")
        return _trim_silence(pcm)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c"))


def _trim_silence(pcm: np.ndarray, threshold: int = 64) -> np.ndarray:
    """Drop eSpeak's leading/trailing silence so speech boundaries are the voice's."""
    loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) > threshold)
    if len(loud) == 0:
        return pcm[:0]
    return pcm[loud[0] : loud[-1] + 1].copy()


def espeak_voice(voice: str, words_per_minute: int, pitch: int | None) -> EspeakSynthesiser:
    """An eSpeak NG synthesiser for one voice (``es+f2``); OSError when it cannot speak it."""
    problems: list[str] = []
    for lib, data in _espeak_locations():
        try:
            return EspeakSynthesiser(lib, data, voice, words_per_minute, pitch)
        except OSError as exc:
            problems.append(f"{lib}: {exc}")
    raise OSError("eSpeak NG cannot speak " + repr(voice) + ": " + ("; ".join(problems) or
                  "it is not installed (pip install espeakng-loader)"))  # fmt: skip


def _espeak_locations() -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    spec = importlib.util.find_spec("espeakng_loader")
    if spec is not None and spec.origin:
        base = os.path.dirname(spec.origin)
        lib = os.path.join(base, "libespeak-ng.so")
        if os.path.exists(lib):
            found.append((lib, os.path.join(base, "espeak-ng-data")))
    system = ctypes.util.find_library("espeak-ng")
    if system:
        found.append((system, None))
    return found


_default: Synthesiser | None = None
_default_lock = threading.Lock()


def default_synthesiser(kind: str = "auto") -> Synthesiser:
    """The process's synthesiser: ``auto`` (eSpeak NG if usable), ``espeak`` or ``buzz``.

    The environment variable ``VAE_BOT_TTS`` overrides ``auto``.
    """
    global _default
    kind = os.environ.get("VAE_BOT_TTS", kind) if kind == "auto" else kind
    if kind == "buzz":
        return BuzzSynthesiser()
    with _default_lock:
        if _default is not None:
            return _default
        for lib, data in _espeak_locations():
            try:
                _default = EspeakSynthesiser(lib, data)
                return _default
            except OSError as exc:
                log.warning("eSpeak NG at %s unusable: %s", lib, exc)
        if kind == "espeak":
            raise OSError("eSpeak NG is not installed (pip install espeakng-loader)")
        _default = BuzzSynthesiser()
        return _default
