"""A synthetic session round-trips through the writer, readers and exports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from tests.conftest import tone
from tests.recordings.helpers import T0, add_run, add_session, stream_channel
from vae.recordings.backends.locator import Locator
from vae.recordings.models import Channel, EventKind, EventRecord, FinalStateRecord, Side
from vae.recordings.read.export import export_session, stereo_mix
from vae.recordings.read.reader import RecordingReader
from vae.recordings.write.writer import open_writer

RATE = 16000


async def _write_session(db: Locator) -> tuple[str, np.ndarray, np.ndarray]:
    user = tone(1.5, RATE, 200.0)
    agent = tone(2.25, RATE, 330.0)
    async with open_writer(db) as w:
        await add_run(w, "2024-06-01T10-00-00", ["greet"])
        sid = await add_session(w, "2024-06-01T10-00-00", "greet", final_state=False)
        # user speaks 0.5–2.0 s, agent 1.5–3.75 s: a 0.5 s overlap; then a gap,
        # then the user again at 5.0 s (a jump on its sample clock).
        ub = await stream_channel(w, sid, Channel.USER, user, rate=RATE, start_s=0.5)
        await stream_channel(w, sid, Channel.AGENT, agent, rate=RATE, start_s=1.5)
        await stream_channel(w, sid, Channel.USER, user[:8000], rate=RATE, start_s=5.0, builder=ub)
        await w.add_events(
            [
                EventRecord(sid, Side.AGENT, EventKind.TOOL_CALL, T0 + 2 * 10**9,
                            {"name": "book", "arguments": {"seat": "3A"}}, bot_ns=123),
                EventRecord(sid, Side.USER, EventKind.TRANSCRIPT, T0 + 3 * 10**9,
                            {"text": "thanks", "is_final": True, "kind": "spoken"}),
            ]
        )  # fmt: skip
        await w.put_final_state(
            FinalStateRecord(sid, Side.AGENT, T0 + 4 * 10**9, state={"seats": ["3A"]},
                             state_hash="abc", context=[{"role": "assistant", "content": "ok"}])
        )  # fmt: skip
    return sid, user, agent


async def test_session_round_trips(store: Locator) -> None:
    sid, user, agent = await _write_session(store)
    with RecordingReader(store) as r:
        u = r.read_channel(sid, Channel.USER)
        a = r.read_channel(sid, Channel.AGENT)
        assert u.sample_rate == RATE and a.sample_rate == RATE
        # each sample at its recorded offset, exactly (equal rates)
        assert np.array_equal(u.samples[8000 : 8000 + len(user)], user)
        assert np.array_equal(u.samples[80000 : 80000 + 8000], user[:8000])
        assert not u.samples[8000 + len(user) : 80000].any()  # silence in the gap
        assert np.array_equal(a.samples[24000 : 24000 + len(agent)], agent)
        assert not a.samples[:24000].any()
        frames = r.frame_timings(sid, Channel.USER)
        assert frames["samples"].sum() == len(user) + 8000
        assert list(frames["sequence"][:3]) == [0, 1, 2]
        kinds = [e.kind for e in r.events(sid)]
        assert EventKind.TOOL_CALL in kinds and EventKind.TRANSCRIPT in kinds
        tool = r.events(sid, [EventKind.TOOL_CALL])[0]
        assert tool.payload["arguments"] == {"seat": "3A"} and tool.bot_ns == 123
        fs = r.final_states(sid)[Side.AGENT]
        assert fs.state == {"seats": ["3A"]} and fs.context[0]["content"] == "ok"  # type: ignore[index]


async def test_stereo_export_has_each_sample_at_its_offset(store: Locator, tmp_path: Path) -> None:
    sid, user, agent = await _write_session(store)
    with RecordingReader(store) as r:
        mix, rate = stereo_mix(r, sid)
        paths = export_session(r, sid, tmp_path / "out", "wav")
        flac = export_session(r, sid, tmp_path / "out", "flac")
        js = export_session(r, sid, tmp_path / "out", "json")
    assert rate == RATE
    expected_len = max(80000 + 8000, 24000 + len(agent))
    assert mix.shape == (expected_len, 2)
    stereo, sr = sf.read(paths[0], dtype="int16")
    assert sr == RATE and stereo.shape == (expected_len, 2)
    assert np.array_equal(stereo[8000 : 8000 + len(user), 0], user)
    assert np.array_equal(stereo[24000 : 24000 + len(agent), 1], agent)
    flac_stereo, _ = sf.read(flac[0], dtype="int16")
    assert np.array_equal(flac_stereo, stereo)  # lossless
    mono, _ = sf.read(paths[1], dtype="int16")
    assert mono.ndim == 1
    assert '"thanks"' in js[0].read_text()


async def test_export_resamples_unequal_rates(store: Locator) -> None:
    async with open_writer(store) as w:
        await add_run(w, "r", ["s"])
        sid = await add_session(w, "r", "s")
        await stream_channel(
            w, sid, Channel.USER, tone(1.0, 8000), rate=8000, start_s=0.0, frame=160
        )
        await stream_channel(
            w, sid, Channel.AGENT, tone(1.0, 24000), rate=24000, start_s=1.0, frame=480
        )
    with RecordingReader(store) as r:
        mix, rate = stereo_mix(r, sid)
    assert rate == 24000
    assert mix.shape[0] == 48000  # agent ends at 2.0 s
    # the upsampled user tone keeps its energy and ends at 1.0 s
    assert np.abs(mix[:24000, 0]).max() > 8000
    assert np.abs(mix[25000:, 0]).max() < 200
