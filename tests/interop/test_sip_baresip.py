"""baresip, a real softphone, as the far end of a call vae places.

baresip picks its own addresses, so the whole exchange (bridge, caller bot,
baresip) runs in a network namespace this test creates (``unshare -n``, only
loopback up): nothing can leave the machine, and the addresses in every
message are checked to be loopback all the same. baresip auto-answers,
plays a chirp and dumps what it hears. Then:

- what vae's caller said is in baresip's dump (normalised cross-correlation
  of the audio the bridge delivered to the agent with the dump);
- what baresip played is in vae's recording of the agent;
- the caller's ``42#`` reached baresip as RFC 4733 events, in order.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.conftest import require_tool
from tests.interop.conftest import ROOT
from tests.interop.sip_helpers import assert_loopback_only
from vae.recordings.models import Channel
from vae.recordings.read.reader import RecordingReader


def best_match(needle: np.ndarray, haystack: np.ndarray) -> float:
    """Highest normalised cross-correlation of ``needle`` anywhere in ``haystack``."""
    a = needle.astype(np.float64) - needle.mean()
    b = haystack.astype(np.float64)
    n = len(a)
    size = 1 << int(np.ceil(np.log2(len(a) + len(b))))
    corr = np.fft.irfft(np.fft.rfft(b, size) * np.conj(np.fft.rfft(a, size)), size)[: len(b) - n]
    energy = np.convolve(b**2, np.ones(n), "valid")[: len(b) - n]
    means = np.convolve(b, np.ones(n), "valid")[: len(b) - n] / n
    var = np.maximum(energy - n * means**2, 1e-9)
    return float(np.max(corr / (np.sqrt(var) * np.linalg.norm(a))))


def loudest(x: np.ndarray, rate: int, seconds: float) -> np.ndarray:
    """The ``seconds`` of ``x`` with the most energy."""
    n = int(rate * seconds)
    energy = np.convolve(x.astype(np.float64) ** 2, np.ones(n), "valid")
    start = int(np.argmax(energy))
    return x[start : start + n]


def chirp(path: Path) -> np.ndarray:
    """A 3 s chirp (300 -> 3000 Hz), then 12 s of quiet: baresip hangs up when its file ends."""
    t = np.arange(int(8000 * 3.0)) / 8000
    x = (np.sin(2 * np.pi * (300 * t + 450 * t**2)) * 9000).astype(np.int16)
    sf.write(path, np.concatenate([x, np.zeros(8000 * 12, np.int16)]), 8000)
    return x


def test_baresip_answers_hears_the_caller_plays_to_it_and_gets_the_keys(tmp_path: Path) -> None:
    require_tool("baresip", "bash scripts/ci_setup_sip.sh")
    pytest.importorskip("sipmessage", reason="pip install 'vae[sip]'")
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -n is refused here (needs root or user namespaces)")
    played = chirp(tmp_path / "play.wav")
    script = 'ip link set lo up && exec "$0" -m tests.interop.sip_baresip_case "$1"'
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = ["unshare", "-n", "sh", "-c", script, sys.executable, str(tmp_path)]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "result.json").read_text())
    log = (tmp_path / "baresip.log").read_text(errors="replace")
    assert_loopback_only(log)  # baresip's SIP trace: both sides' messages
    keys = re.findall(r"received event: '(.)' \(end=0\)", log)
    assert keys == ["4", "2", "#"], keys
    (dump,) = result["received"]
    heard_by_baresip, rate = sf.read(tmp_path / dump, dtype="int16")
    assert rate == 8000
    with RecordingReader(Path(result["db"])) as r:
        (s,) = r.sessions(result["run_id"])
        to_agent = r.read_channel(s.session_id, Channel.TO_AGENT)
        agent = r.read_channel(s.session_id, Channel.AGENT)
    assert s.agent_bot["labels"]["connector"] == "sip" and s.stop_reason == "max_duration"
    assert to_agent.sample_rate == agent.sample_rate == 8000
    said = loudest(to_agent.samples, 8000, 1.0)
    assert best_match(said, heard_by_baresip) > 0.6  # the caller's words reached baresip
    assert best_match(played[4000:12000], agent.samples) > 0.6  # baresip's chirp reached vae
    noise = np.random.default_rng(1).normal(0, 3000, len(agent.samples)).astype(np.int16)
    assert best_match(played[4000:12000], noise) < 0.3  # the measure can fail
