"""Two disruptive sessions' bots in a process of their own (as real bots would be).

``python -m tests.bridge_service.disruptive_bots ADDRESS HEAVY_RUN FLOOD_RUN MB``
prints ``ready`` once its large document is encoded, then plays:

- the heavy run's session: the agent speaks briefly and ends the call; the
  user answers SessionEnding with an MB-megabyte final state in 1 MB chunks;
- the flood run's session: the user sends 40 ms chunks at 100x real time for
  1.5 s, then ends the call.

Running them outside the test process keeps their own CPU (encoding and
sending 16 MB, 3,750 chunks) off the bridge's event loop, so the isolation
test measures what the bridge does with them, not what the test's bots do.
"""

from __future__ import annotations

import asyncio
import json
import sys

from tests.bridge_service.bots import TestBot, never_zero
from vae.bridge.v1 import bridge_pb2
from vae.common.v1 import common_pb2

USER, AGENT = common_pb2.ROLE_USER, common_pb2.ROLE_AGENT


def big_state_json(megabytes: int) -> bytes:
    row = {"id": 0, "name": "x" * 80, "tags": ["a", "b", "c"], "n": 1.5}
    rows = [dict(row, id=i) for i in range(megabytes * 1024 * 1024 // 120)]
    return json.dumps({"rows": rows}).encode()


async def main(address: str, heavy_run: str, flood_run: str, megabytes: int) -> None:
    big = big_state_json(megabytes)
    print("ready", flush=True)

    async def heavy_agent(bot: TestBot) -> None:
        await bot.speak(never_zero(0.3))
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL, "done")

    async def heavy_user(bot: TestBot) -> None:
        await bot.ending.wait()
        step = 1024 * 1024
        for off in range(0, len(big), step):
            piece = common_pb2.JsonChunk(
                offset=off, data=big[off : off + step], last=off + step >= len(big)
            )
            await bot.send(bridge_pb2.BotMessage(final_state=bridge_pb2.FinalState(state=piece)))
        await bot.send(bridge_pb2.BotMessage(final_state=bridge_pb2.FinalState(done=True)))

    async def flooder(bot: TestBot) -> None:
        # 40 ms chunks, 10 of them every 4 ms: 100x real time, for 1.5 s.
        chunk = never_zero(0.04).tobytes()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        for burst in range(375):
            for _ in range(10):
                await bot.audio(chunk)
            await asyncio.sleep(max(0.0, t0 + (burst + 1) * 0.004 - loop.time()))
        await bot.end(common_pb2.END_KIND_AGENT_END_TOOL, "done")

    bots = [
        TestBot(address, USER, flooder, run_filter=flood_run),
        TestBot(address, AGENT, None, run_filter=flood_run),
        TestBot(address, USER, heavy_user, run_filter=heavy_run, answer_ending=False),
        TestBot(address, AGENT, heavy_agent, run_filter=heavy_run),
    ]
    got = await asyncio.gather(*(b.run() for b in bots))
    print(json.dumps([str(g.status) for g in got]), flush=True)


if __name__ == "__main__":
    address, heavy, flood, mb = sys.argv[1:5]
    asyncio.run(main(address, heavy, flood, int(mb)))
