"""``vae rescore``'s judge options, and the ``ScoringConfig`` all its options make.

Why a module: the judge's settings (endpoint, sampling, retries, cache,
prompt) gain options whenever the judge client does, and the translation of
the command's keywords into a ``ScoringConfig`` changes with the scorer's
configuration, not with how ``vae rescore`` runs a scoring or reports it
(``cli/rescore_cmd.py``). The declarations import no service, so ``--help``
stays instant; ``scorer_service`` is imported only when a config is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from scorer_service.config import ScoringConfig

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


def judge_options(f: Any) -> Any:
    """Declare every judge option on ``f`` (in the order of the list above)."""
    for flag, kwargs, help_text in reversed(_JUDGE_OPTIONS):
        shown = kwargs.get("default") not in (None, "", False)
        f = click.option(flag, help=help_text, show_default=shown, **kwargs)(f)
    return f


def scoring_config(kw: dict[str, Any]) -> ScoringConfig:
    """The scoring configuration of ``vae rescore``'s keywords; exit 2 on bad input.

    An unknown ``--only`` name and a bad ``--overrides`` file are usage
    errors, raised before anything is scored.
    """
    from scorer_service.config import ConfigError, JudgeSettings, ScoringConfig, load_overrides
    from scorer_service.registry import SCORER_NAMES

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
        overrides=overrides,
        strict_match=kw["strict_match"],
        min_agent_turns=kw["min_agent_turns"],
        end_policy=kw["end_policy"],
        label=kw["label"],
    )
