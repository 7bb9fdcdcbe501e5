"""What plays each session of ``vae bot``: a scripted or LLM-driven brain, from its options.

Why apart from ``bot_cmd`` (the command: its options, the bridge or SIP line
it joins, how a refusal is reported): these choices change with the kinds of
brain vae ships — scripts, a changed agent's scripts (``--script-from``), an
LLM with an optional transcriber (``--asr``), tools through the session's
backend — not with how the bot reaches a session. Imported only when the
command runs, so the heavy bot modules stay out of ``--help``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from vae.bots.brains.llm import LlmBrain, LlmSettings
from vae.bots.brains.scripted import overriding, play_script
from vae.bots.client import Brain


@dataclass(frozen=True)
class BrainOptions:
    """``vae bot``'s options on what plays each session."""

    role: str
    llm_base_url: str | None
    llm_model: str | None
    llm_api_key: str
    asr: str | None
    asr_base_url: str
    asr_model: str
    asr_api_key: str
    asr_language: str
    script_from: Path | None
    tool_backend: bool
    #: ``--capacity``/``--base-latency``/``--slow-down``: pace the scripted agent (``vae load``).
    capacity: int | None = None
    base_latency: float | None = None
    slow_down: float = 0.0


def brain_factory(o: BrainOptions) -> tuple[Callable[[], Brain], str]:
    """A new brain per session, and its kind (``scripted``/``llm``) for the bot's name.

    Raises :class:`click.UsageError` for options that do not go together.
    """
    if bool(o.llm_base_url) != bool(o.llm_model):
        raise click.UsageError("--llm-base-url and --llm-model go together")
    if o.asr and not o.llm_base_url:
        raise click.UsageError("--asr is for LLM bots: give --llm-base-url and --llm-model too")
    pacing = o.capacity is not None or o.base_latency is not None or o.slow_down > 0
    if pacing and (o.role != "agent" or o.llm_base_url):
        raise click.UsageError(
            "--capacity, --base-latency and --slow-down pace the scripted agent: "
            "use them with `vae bot agent` and without --llm-base-url"
        )
    transcriber = None
    if o.asr:
        from vae.speech.stt import SttConfigError, make_transcriber
        from vae.speech.stt_settings import TranscriptionSettings

        stt = TranscriptionSettings(
            o.asr, o.asr_base_url, o.asr_model, o.asr_api_key, o.asr_language
        )
        try:
            transcriber = make_transcriber(stt)
        except SttConfigError as exc:
            raise click.UsageError(f"{exc} (--asr {o.asr}: --asr-base-url, --asr-model)") from exc
    brain: Brain = play_script
    kind = "scripted"
    sides = _scripts(o.script_from, o.role) if o.script_from is not None else {}
    if sides:
        brain = overriding(sides)
    if pacing:
        from vae.bots.brains.capacity import Capacity

        brain = Capacity(o.capacity, o.base_latency, o.slow_down).brain(
            lambda conv, pace: overriding(sides, pace)(conv)
        )
    if o.llm_base_url and o.llm_model:
        settings = LlmSettings(base_url=o.llm_base_url, model=o.llm_model, api_key=o.llm_api_key)
        kind = "llm"

        def make() -> Brain:
            return LlmBrain(settings, transcriber=transcriber)
    else:

        def make() -> Brain:
            return brain

    if o.tool_backend:
        from vae.bots.brains.backend_tools import through_backend

        local = make

        def make() -> Brain:
            return through_backend(local())

    return make, kind


def _scripts(path: Path, role: str) -> dict[str, dict[str, Any]]:
    """Scenario name -> this side's scripted-bot config, from scenario files."""
    from vae.recordings.errors import ScenarioError
    from vae.recordings.scenarios.lint import load_path

    try:
        return {sc.name: sc.side(role).extras for sc in load_path(str(path))}
    except ScenarioError as exc:
        raise click.UsageError(str(exc)) from exc
