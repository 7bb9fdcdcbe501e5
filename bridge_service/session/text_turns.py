"""Text turns in a session: how one is recorded, counted, timed and delivered.

A text session (``RunOptions.modality`` text) is the same session as an audio
one — the same pairing, events, tool calls, state sync, limits, ending and
final state — with whole text turns (``TextTurn``) in place of audio. What a
turn is, in the recording: the sender's spoken ``transcript`` event (payload
``source: text_turn``), exactly what an audio bot reports for its speech, so
the scorer (NL assertions, the judge) reads a text session as it reads an
audio one. It counts as one turn of its side (``user_turns``/``agent_turns``)
and as speech for the inactivity timeout.

When it reaches the peer depends on the clock: on the real clock at once; on
the virtual clock when it has been "spoken" (:func:`duration_ns`: the bot's
``duration_ms``, else 180 words a minute), see
:mod:`vae.bridge_service.clocks.text_clock`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vae.bridge_service.connectors.base import BotText, PeerText
from vae.bridge_service.session.turns import TextTurnCounter
from vae.recordings.models import EventKind, Side

if TYPE_CHECKING:
    from vae.bridge_service.session.state import SessionState

#: Speaking rate used to time a text turn on the virtual clock when the bot gives none.
WORDS_PER_MINUTE = 180
_NS_PER_MS = 1_000_000
_PEER = {Side.USER: Side.AGENT, Side.AGENT: Side.USER}


def duration_ns(turn: BotText) -> int:
    """How long saying ``turn`` takes on the virtual clock (at least 1 ms)."""
    if turn.duration_ms > 0:
        return turn.duration_ms * _NS_PER_MS
    words = max(1, len(turn.text.split()))
    return max(1, round(words * 60_000 / WORDS_PER_MINUTE)) * _NS_PER_MS


async def record_turn(
    io: SessionState, side: Side, turn: BotText, start_ns: int, end_ns: int
) -> None:
    """Record ``turn`` as ``side``'s spoken transcript and count it (session-clock times)."""
    payload = {
        "kind": "spoken",
        "text": turn.text,
        "is_final": True,
        "source": "text_turn",
        "sequence": turn.sequence,
        "start_unix_nanos": start_ns,
        "end_unix_nanos": end_ns,
        "start_sample_offset": -1,
        "end_sample_offset": -1,
    }
    if turn.duration_ms:
        payload["duration_ms"] = turn.duration_ms
    await io.recorder.event(
        side, EventKind.TRANSCRIPT, payload, bot_ns=turn.sent_ns, bridge_ns=start_ns
    )
    counter = io.counters[side]
    assert isinstance(counter, TextTurnCounter)
    counter.count(end_ns)
    io.last_turn_ns[side] = start_ns


async def deliver(io: SessionState, sender: Side, text: str, at_ns: int) -> None:
    """Hand ``sender``'s turn to its peer at ``at_ns`` (session clock), if the peer is there."""
    peer = _PEER[sender]
    if io.is_gone(peer):
        return
    sequence = io.text_delivered[peer]
    io.text_delivered[peer] = sequence + 1
    session_ms = (at_ns - io.started_ns) // _NS_PER_MS
    await io.send(peer, PeerText(text, sequence, session_ms, at_ns))
