"""The brain's gate: waits on the line, and how a lock-step bot knows its brain is waiting."""

from __future__ import annotations

import asyncio

from vae.bots.brains.gate import Gate


async def test_until_returns_at_once_when_it_already_holds() -> None:
    gate = Gate()
    await asyncio.wait_for(gate.until(lambda: True), 1)
    assert not gate.parked


async def test_a_poke_wakes_the_brain_only_when_its_wait_is_over() -> None:
    gate, state = Gate(), {"heard": 0}
    waiter = asyncio.create_task(gate.until(lambda: state["heard"] >= 2))
    await asyncio.sleep(0)
    assert gate.parked and gate.wake_at_ms is None
    state["heard"] = 1
    gate.poke()
    await asyncio.sleep(0)
    assert not waiter.done() and gate.parked
    state["heard"] = 2
    gate.poke()
    await asyncio.wait_for(waiter, 1)
    assert not gate.parked


async def test_settle_waits_for_the_brain_to_wait_on_the_line_again() -> None:
    """Real work in between (synthesis, an LLM call) is not a wait on the line."""
    gate, state, work, woke = Gate(), {"frame": 0}, asyncio.Event(), asyncio.Event()
    steps: list[str] = []

    async def brain() -> None:
        await gate.until(lambda: state["frame"] >= 1)
        steps.append("woke")
        woke.set()
        await work.wait()  # not the gate: the clock must wait for it
        steps.append("worked")
        await gate.until(lambda: state["frame"] >= 2, at_ms=1500)
        steps.append("never")

    task = asyncio.create_task(brain())
    await gate.settle()  # parks on its first wait
    assert steps == [] and gate.parked
    state["frame"] = 1
    settled = asyncio.create_task(gate.settle())
    await asyncio.wait_for(woke.wait(), 1)  # settle's poke woke the brain; now it works
    assert steps == ["woke"] and not settled.done(), "still working: not settled"
    work.set()
    await asyncio.wait_for(settled, 1)
    assert steps == ["woke", "worked"] and gate.wake_at_ms == 1500
    task.cancel()


async def test_a_finished_brain_is_settled() -> None:
    gate = Gate()

    async def brain() -> None:
        try:
            await asyncio.sleep(0)
        finally:
            gate.finish()

    task = asyncio.create_task(brain())
    await asyncio.wait_for(gate.settle(), 1)
    assert gate.finished and not gate.parked and gate.wake_at_ms is None
    await task
