"""Keypad tones: generation and the Goertzel detector (vae/dtmf.py)."""

from __future__ import annotations

import numpy as np
import pytest

from vae import dtmf


@pytest.mark.parametrize("rate", [8000, 16000, 24000, 48000])
def test_every_key_is_detected_at_every_rate(rate: int) -> None:
    assert dtmf.detect(dtmf.tones(dtmf.DIGITS, rate), rate) == dtmf.DIGITS


def test_each_key_is_its_standard_pair() -> None:
    assert dtmf.frequencies("1") == (697.0, 1209.0)
    assert dtmf.frequencies("#") == (941.0, 1477.0)
    assert dtmf.frequencies("D") == (941.0, 1633.0)
    rate = 8000
    samples = dtmf.tones("5", rate, 200, 0)
    spectrum = np.abs(np.fft.rfft(samples))
    freqs = np.fft.rfftfreq(len(samples), 1 / rate)
    top = sorted(freqs[np.argsort(spectrum)[-2:]])
    assert top == pytest.approx([770, 1336], abs=6)


def test_a_tone_cut_into_frames_is_the_tone_made_whole() -> None:
    whole = dtmf.tone("7", 16000, 0, 1600, 1600)
    parts = np.concatenate([dtmf.tone("7", 16000, s, 320, 1600) for s in range(0, 1600, 320)])
    assert np.array_equal(whole, parts)


def test_short_tones_are_rejected_and_40_ms_tones_accepted() -> None:
    rate = 8000
    assert dtmf.detect(dtmf.tones("123", rate, 40, 40), rate) == "123"
    assert dtmf.detect(dtmf.tones("123", rate, 15, 40), rate) == ""


def test_a_held_key_is_one_key_and_a_repeated_key_after_a_gap_is_two() -> None:
    rate = 16000
    assert dtmf.detect(dtmf.tones("9", rate, 1000, 100), rate) == "9"
    assert dtmf.detect(dtmf.tones("99", rate), rate) == "99"


def test_noise_speech_like_sounds_and_single_tones_are_not_keys() -> None:
    rate = 16000
    rng = np.random.default_rng(3)
    noise = rng.normal(0, 5000, rate * 3)
    t = np.arange(rate * 2) / rate
    harmonics = sum(3000 / k * np.sin(2 * np.pi * 140 * k * t) for k in range(1, 20))
    single = 8000 * np.sin(2 * np.pi * 697 * t)
    for signal in (noise, harmonics, single):
        assert dtmf.detect(np.asarray(signal), rate) == ""


def test_keys_survive_moderate_noise() -> None:
    rate = 8000
    tones = dtmf.tones("42#", rate)
    noisy = tones + np.random.default_rng(5).normal(0, 300, len(tones))
    assert dtmf.detect(noisy, rate) == "42#"


@pytest.mark.parametrize(
    ("digits", "problem"),
    [("", "must not be empty"), ("12x", "'x'"), ("1" * 65, "at most 64")],
)
def test_bad_digit_strings_say_why(digits: str, problem: str) -> None:
    assert problem in dtmf.problem(digits)
    assert not dtmf.valid(digits)


def test_good_digit_strings() -> None:
    assert dtmf.problem("0123456789*#ABCD") == "" and dtmf.valid("42#")
