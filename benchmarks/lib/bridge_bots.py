"""Synthetic bots for ``benchmarks/bridge.py``, run in their own processes.

``python benchmarks/lib/bridge_bots.py --address A --run R --sessions K ...``
plays K sessions (both bots of each) of one run and prints ONE JSON document:
per direction the chunks lost, the late stretches and the added latencies,
the worst gap between frames a bot received, and this process's own CPU
time (so the benchmark reports the generator's cost beside the bridge's).

``--kind heavy`` plays the disruptive sessions of ``--heavy`` instead: one
whose user bot sends a 64 MB final state, one whose user floods audio at
``--flood-x`` times real time.

The bots follow redirects (``Join.accepts_redirect``): against a bridge
started with ``--workers N`` each pair is sent to one worker process and
conversed there (one channel per worker address per generator process);
``--no-redirects`` keeps them on the bridge's own process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from vae.bridge.v1 import bridge_pb2, bridge_pb2_grpc
from vae.common.v1 import common_pb2

RATE, CHUNK_MS, JITTER_MS = 16000, 40, 80
CHUNK = RATE * CHUNK_MS // 1000
MARK = 1000  # sample value of chunk i is MARK + i
OPTIONS = [
    ("grpc.max_send_message_length", 64 << 20),
    ("grpc.max_receive_message_length", 64 << 20),
]


def fmt() -> common_pb2.AudioFormat:
    return common_pb2.AudioFormat(
        encoding=common_pb2.AUDIO_ENCODING_PCM16LE, sample_rate_hz=RATE, channels=1
    )


@dataclass
class Bot:
    role: int
    seconds: float
    frame_ms: int = 0
    per_message: int = 0
    flood_x: float = 1.0
    final_state: bytes = b""
    end_after_s: float | None = None
    sent_ns: list[int] = field(default_factory=list)
    frames: list[tuple[int, bytes]] = field(default_factory=list)
    session_id: str = ""
    out: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    #: Where the session ran: 0 for the bridge's own process, else a worker's port.
    port: int = 0

    async def requests(self, run_id: str, redirects: bool, ticket: str = "") -> Any:
        join = bridge_pb2.Join(
            role=self.role,  # type: ignore[arg-type]
            bot=common_pb2.BotInfo(name="bench", version="1"),
            send_format=fmt(),
            receive_format=fmt(),
            run_filter=run_id,
            frame_ms=self.frame_ms,
            frames_per_message=self.per_message,
        )
        if redirects or ticket:  # fields a bridge before workers does not know: unset
            join.accepts_redirect = not ticket
            join.ticket = ticket
        yield bridge_pb2.BotMessage(join=join)
        while (msg := await self.out.get()) is not None:
            yield msg

    async def speak(self) -> None:
        n = int(self.seconds * 1000 / CHUNK_MS * self.flood_x)
        t0 = time.monotonic()
        for i in range(n):
            await asyncio.sleep(
                max(0.0, t0 + i * CHUNK_MS / 1000 / self.flood_x - time.monotonic())
            )
            pcm = np.full(CHUNK, MARK + i % 30000, dtype="<i2").tobytes()
            self.sent_ns.append(time.time_ns())
            audio = common_pb2.AudioChunk(
                sequence=i, sample_offset=i * CHUNK, pcm=pcm, sent_unix_nanos=self.sent_ns[-1]
            )
            await self.out.put(bridge_pb2.BotMessage(audio=audio))
            if self.end_after_s is not None and time.monotonic() - t0 >= self.end_after_s:
                break
        if self.role == common_pb2.ROLE_AGENT or self.end_after_s is not None:
            end = common_pb2.EndConversation(kind=common_pb2.END_KIND_AGENT_END_TOOL)
            await self.out.put(
                bridge_pb2.BotMessage(event=common_pb2.BotEvent(end_conversation=end))
            )

    async def send_final_state(self) -> None:
        step = 1 << 20
        data = self.final_state
        for off in range(0, len(data), step):
            piece = common_pb2.JsonChunk(
                offset=off, data=data[off : off + step], last=off + step >= len(data)
            )
            await self.out.put(
                bridge_pb2.BotMessage(final_state=bridge_pb2.FinalState(state=piece))
            )
        await self.out.put(bridge_pb2.BotMessage(final_state=bridge_pb2.FinalState(done=True)))

    async def run(self, stub: Any, run_id: str, at_port: Any = None) -> None:
        """Play one session; ``at_port(port)`` gives a stub for a worker (None: no redirects)."""
        redirect = await self._converse(stub, self.requests(run_id, at_port is not None))
        if redirect is not None:
            self.out = asyncio.Queue()
            self.port = redirect.port
            ticket = redirect.ticket
            await self._converse(at_port(redirect.port), self.requests(run_id, False, ticket))

    async def _converse(self, stub: Any, requests: Any) -> Any:
        """One stream: play what comes; the Redirect if one came instead of a session."""
        speaker: asyncio.Task[None] | None = None
        redirect = None
        async for msg in stub.Converse(requests):
            which = msg.WhichOneof("message")
            if which == "audio":
                self.frames.append((time.time_ns(), msg.audio.pcm))
            elif which == "session_start":
                self.session_id = msg.session_start.session.session_id
                speaker = asyncio.create_task(self.speak())
            elif which == "session_ending":
                await self.send_final_state()
            elif which == "redirect":
                redirect = msg.redirect
        await self.out.put(None)
        if speaker is not None:
            speaker.cancel()
        return redirect


def analyse(receiver: Bot, sender: Bot) -> dict[str, Any]:
    """Lost and late chunks, per-chunk latency and the worst frame gap of one direction."""
    if not receiver.frames:
        return {"lost": len(sender.sent_ns), "late": 0, "latency_ms": [], "gap_ms": 0.0}
    samples = np.frombuffer(b"".join(p for _, p in receiver.frames), dtype="<i2").astype(np.int64)
    frame_len = len(receiver.frames[0][1]) // 2
    times = np.array([t for t, _ in receiver.frames])
    gap_ms = (
        float(np.max(np.diff(times)) / 1e6 - 1000 * frame_len / RATE) if len(times) > 1 else 0.0
    )
    recv_ns = np.repeat(times, frame_len)[: len(samples)]
    ids = samples - MARK
    sent = len(sender.sent_ns)
    valid = (ids >= 0) & (ids < sent)
    counts = np.bincount(ids[valid], minlength=sent)[:sent]
    # The last chunk may still be in flight at the end of the call: not a loss.
    lost = int(np.sum(counts[:-1] < CHUNK))
    idx = np.flatnonzero(valid)
    late = 0
    if len(idx):
        span = samples[idx[0] : idx[-1] + 1]
        late = int(np.sum(np.diff((span == 0).astype(np.int8)) == 1))
    first: dict[int, int] = {}
    for i in idx[np.r_[True, np.diff(ids[idx]) != 0]]:
        first.setdefault(int(ids[i]), int(recv_ns[i]))
    latency = [(first[c] - sender.sent_ns[c]) / 1e6 - JITTER_MS for c in first]
    return {"lost": lost, "late": late, "latency_ms": latency, "gap_ms": gap_ms}


def big_state(megabytes: int) -> bytes:
    row = {"id": 0, "name": "x" * 80, "tags": ["a", "b", "c"], "n": 1.5}
    count = megabytes * 1_000_000 // (len(json.dumps(row)) + 8)
    return json.dumps({"rows": [dict(row, id=i) for i in range(count)]}).encode()


async def play(args: argparse.Namespace) -> dict[str, Any]:
    if args.kind == "heavy":
        bots = [
            Bot(common_pb2.ROLE_USER, args.seconds, final_state=big_state(args.final_state_mb)),
            Bot(common_pb2.ROLE_AGENT, args.seconds, end_after_s=args.seconds / 3),
            Bot(common_pb2.ROLE_USER, args.seconds, flood_x=args.flood_x),
            Bot(common_pb2.ROLE_AGENT, args.seconds),
        ]
        runs = [args.run, args.run, args.flood_run, args.flood_run]
    else:
        bots = [
            Bot(role, args.seconds, args.frame_ms, args.frames_per_message)
            for _ in range(args.sessions)
            for role in (common_pb2.ROLE_USER, common_pb2.ROLE_AGENT)
        ]
        runs = [args.run] * len(bots)
    cpu0 = time.process_time()  # the generator's cost from here on, not its imports
    print("ready", file=sys.stderr, flush=True)
    host = args.address.rsplit(":", 1)[0]
    workers: dict[int, grpc.aio.Channel] = {}

    def at_port(port: int) -> Any:
        if port not in workers:
            workers[port] = grpc.aio.insecure_channel(f"{host}:{port}", options=OPTIONS)
        return bridge_pb2_grpc.BridgeServiceStub(workers[port])

    follow = None if args.no_redirects else at_port
    try:
        async with grpc.aio.insecure_channel(args.address, options=OPTIONS) as channel:
            stub = bridge_pb2_grpc.BridgeServiceStub(channel)
            await asyncio.gather(*(b.run(stub, r, follow) for b, r in zip(bots, runs, strict=True)))
    finally:
        for worker in workers.values():
            await worker.close()
    sessions: dict[str, list[Bot]] = {}
    for b in bots:
        sessions.setdefault(b.session_id, []).append(b)
    directions = []
    for pair in sessions.values():
        if len(pair) == 2:
            directions += [analyse(pair[0], pair[1]), analyse(pair[1], pair[0])]
    return {
        "sessions": sorted(s for s in sessions if s),
        "directions": directions,
        "cpu_s": time.process_time() - cpu0,
        # Messages through the bridge for these bots: chunks in, audio messages out.
        "messages": sum(len(b.sent_ns) + len(b.frames) for b in bots),
        # Bots per process that served them (0: the bridge's own; else a worker's port).
        "by_port": {str(p): sum(1 for b in bots if b.port == p) for p in {b.port for b in bots}},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--flood-run", default="")
    parser.add_argument("--kind", choices=["normal", "heavy"], default="normal")
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--frame-ms", type=int, default=0)
    parser.add_argument("--frames-per-message", type=int, default=0)
    parser.add_argument("--final-state-mb", type=int, default=64)
    parser.add_argument("--flood-x", type=float, default=100.0)
    parser.add_argument("--no-redirects", action="store_true", help="never follow a Redirect")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(play(args))))


if __name__ == "__main__":
    main()
