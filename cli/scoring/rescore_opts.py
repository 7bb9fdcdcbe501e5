"""``vae rescore``'s judge and transcription options, and the ``ScoringConfig`` they make.

Why a module: the judge's settings (endpoint, sampling, retries, cache,
prompt) gain options whenever the judge client does, and the translation of
the command's keywords into a ``ScoringConfig`` changes with the scorer's
configuration, not with how ``vae rescore`` runs a scoring
(``cli/scoring/rescore_exec.py``) or reports it (``cli/scoring/rescore_cmd.py``).
The declarations import no service, so ``--help`` stays instant;
``scorer_service`` is imported only when a config is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vae.cli.redaction import load, redact_config_option, redactor

if TYPE_CHECKING:
    from vae.scorer_service.config import ScoringConfig

#: (flag, click keyword arguments, help) of every judge option.
_JUDGE_OPTIONS: list[tuple[str, dict[str, Any], str]] = [
    ("--judge-base-url", {"default": "", "envvar": "VAE_JUDGE_BASE_URL"},
     "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1; empty: no judge "
     "(env VAE_JUDGE_BASE_URL)."),
    ("--judge-model", {"default": "", "envvar": "VAE_JUDGE_MODEL"},
     "Judge model name (env VAE_JUDGE_MODEL)."),
    ("--judge-api-key", {"default": "", "envvar": "VAE_JUDGE_API_KEY"},
     "Judge API key, never stored (env VAE_JUDGE_API_KEY)."),
    ("--judge-temperature", {"type": float}, "Sampling temperature."),
    ("--judge-seed", {"type": int}, "Sampling seed."),
    ("--judge-max-tokens", {"type": int}, "Max completion tokens."),
    ("--judge-top-p", {"type": float}, "Nucleus sampling top_p."),
    ("--judge-timeout", {"type": float, "default": 60.0}, "Seconds per judge request."),
    ("--judge-retries", {"type": int, "default": 3}, "Retries on 429, 5xx and timeouts."),
    ("--judge-concurrency", {"type": int, "default": 4}, "Judge requests at once."),
    ("--judge-threshold", {"type": click.FloatRange(0, 1), "default": 0.9},
     "JUDGE_PASSED when the judge's score >= this."),
    ("--judge-include-conversation/--no-judge-include-conversation", {"default": False},
     "Give the judge the bridge's transcript turns (noisy with cross-talk)."),
    ("--judge-prompt", {"type": click.Path(exists=True, dir_okay=False, path_type=Path)},
     "A file holding a replacement judge prompt (its hash is stored)."),
    ("--no-judge", {"is_flag": True, "envvar": "VAE_NO_JUDGE"},
     "Score without a judge on purpose: NL_ASSERTION and JUDGE_PASSED are unscored "
     "(cause no_judge) where a scenario needs them (env VAE_NO_JUDGE)."),
    ("--no-judge-cache", {"is_flag": True, "envvar": "VAE_NO_JUDGE_CACHE"},
     "Ask the judge again even when a reply is cached (env VAE_NO_JUDGE_CACHE)."),
]  # fmt: skip


#: (flag, click keyword arguments, help) of the transcription stage's options.
_ASR_OPTIONS: list[tuple[str, dict[str, Any], str]] = [
    ("--transcribe", {"type": click.Choice(["openai", "pocketsphinx"]), "default": None,
                      "envvar": "VAE_ASR"},
     "Transcribe the recorded channels turn by turn before scoring, into a layer tied to "
     "this scoring (cached: a second rescore makes no calls): openai (any OpenAI-compatible "
     "/v1/audio/transcriptions endpoint) or pocketsphinx (embedded, English; "
     "pip install 'vae[asr]') (env VAE_ASR)."),
    ("--transcripts", {"type": click.Choice(["bots", "asr", "prefer-asr"]), "default": "bots",
                       "envvar": "VAE_TRANSCRIPTS"},
     "Each side's words for NL assertions, the judge and HEARD_CORRECTLY: what its bot "
     "reported (the transcription fills a side that reported nothing), the transcription "
     "only, or the transcription where it succeeded (env VAE_TRANSCRIPTS)."),
    ("--asr-base-url", {"default": "", "envvar": "VAE_ASR_BASE_URL"},
     "--transcribe openai: the endpoint, e.g. http://127.0.0.1:8000/v1 (env VAE_ASR_BASE_URL)."),
    ("--asr-model", {"default": "", "envvar": "VAE_ASR_MODEL"},
     "Transcription model, e.g. whisper-1 (env VAE_ASR_MODEL)."),
    ("--asr-api-key", {"default": "", "envvar": "VAE_ASR_API_KEY"},
     "Transcription API key, never stored (env VAE_ASR_API_KEY)."),
    ("--asr-language", {"default": "", "envvar": "VAE_ASR_LANGUAGE"},
     "Language hint, e.g. en (env VAE_ASR_LANGUAGE)."),
    ("--asr-timeout", {"type": click.FloatRange(min=0, min_open=True), "default": 60.0},
     "Seconds per transcription request."),
    ("--asr-retries", {"type": click.IntRange(0), "default": 3},
     "Retries on 429, 5xx and timeouts, as for the judge."),
    ("--asr-concurrency", {"type": click.IntRange(1), "default": 2},
     "Transcriptions at once."),
    ("--no-asr-cache", {"is_flag": True, "envvar": "VAE_NO_ASR_CACHE"},
     "Transcribe again even when the cache holds the turn (env VAE_NO_ASR_CACHE)."),
]  # fmt: skip


def asr_defaults() -> dict[str, Any]:
    """The transcription keywords at their defaults, for callers without those options.

    ``vae run``'s gate scores what it just recorded without a transcription
    stage; ``vae rescore --transcribe`` adds one to an existing run.
    """
    return {
        flag.removeprefix("--").replace("-", "_"): kwargs.get("default", False)
        for flag, kwargs, _ in _ASR_OPTIONS
    }


def redact_options(f: Any) -> Any:
    """``vae rescore --redact`` and ``--redact-config`` (``vae run --redact`` records redacted)."""
    f = redact_config_option(f)
    f = click.option(
        "--redact",
        is_flag=True,
        envvar="VAE_REDACT",
        help="The judge and every scorer read only redacted text: personal data replaced by "
        "its type (<CREDIT_CARD>) in the conversation, tool calls, states and the scenario; "
        "the scoring says so (docs/privacy.md; pip install 'vae[redact]') (env VAE_REDACT).",
    )(f)
    return f


def judge_options(f: Any) -> Any:
    """Declare every judge and transcription option on ``f`` (in the order of the lists)."""
    for flag, kwargs, help_text in reversed([*_JUDGE_OPTIONS, *_ASR_OPTIONS]):
        shown = kwargs.get("default") not in (None, "", False)
        f = click.option(flag, help=help_text, show_default=shown, **kwargs)(f)
    return f


def _redaction(kw: dict[str, Any]) -> dict[str, Any] | None:
    """``--redact``'s configuration as plain data (None without it); bad input exits first."""
    if not kw.get("redact"):
        if kw.get("redact_config") is not None:
            raise click.UsageError("--redact-config needs --redact")
        return None
    if kw.get("scorer_addr"):
        raise click.UsageError(
            "--redact scores in this process (the judge must see only redacted text); "
            "drop --scorer, or redact the run first: vae redact RUN --out NEW_DB"
        )
    config = load(kw.get("redact_config"))
    redactor(config).close()  # the extra is there (else exit 1 naming it)
    return config.to_dict()


def scoring_config(kw: dict[str, Any]) -> ScoringConfig:
    """The scoring configuration of ``vae rescore``'s keywords; exit 2 on bad input.

    An unknown ``--only`` name and a bad ``--overrides`` file are usage
    errors, raised before anything is scored.
    """
    from vae.scorer_service.config import (
        ConfigError,
        JudgeSettings,
        ScoringConfig,
        load_overrides,
    )
    from vae.scorer_service.scoring.registry import SCORER_NAMES
    from vae.speech.stt_settings import TranscriptionSettings

    unknown = [name for name in kw["scorers"] if name not in SCORER_NAMES]
    if unknown:
        raise click.BadParameter(
            f"unknown scorer {unknown[0]!r} (choose from {', '.join(SCORER_NAMES)})",
            param_hint="--only",
        )
    prompt = kw["judge_prompt"].read_text(encoding="utf-8") if kw["judge_prompt"] else ""
    try:
        overrides = load_overrides(kw["overrides"]) if kw["overrides"] else {}
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    return ScoringConfig(
        scorers=list(kw["scorers"]),
        judge=JudgeSettings(
            base_url=kw["judge_base_url"],
            model=kw["judge_model"],
            api_key=kw["judge_api_key"],
            temperature=kw["judge_temperature"],
            seed=kw["judge_seed"],
            max_tokens=kw["judge_max_tokens"],
            top_p=kw["judge_top_p"],
            prompt_template=prompt,
            timeout_s=kw["judge_timeout"],
            max_retries=kw["judge_retries"],
            concurrency=kw["judge_concurrency"],
            threshold=kw["judge_threshold"],
            include_conversation=kw["judge_include_conversation"],
            no_cache=kw["no_judge_cache"],
        ),
        no_judge=kw["no_judge"],
        transcription=TranscriptionSettings(
            engine=kw["transcribe"] or "",
            base_url=kw["asr_base_url"],
            model=kw["asr_model"],
            api_key=kw["asr_api_key"],
            language=kw["asr_language"],
            timeout_s=kw["asr_timeout"],
            max_retries=kw["asr_retries"],
            concurrency=kw["asr_concurrency"],
            transcripts=kw["transcripts"],
            no_cache=kw["no_asr_cache"],
        ),
        overrides=overrides,
        strict_match=kw["strict_match"],
        min_agent_turns=kw["min_agent_turns"],
        end_policy=kw["end_policy"],
        label=kw["label"],
        redaction=_redaction(kw),
    )
