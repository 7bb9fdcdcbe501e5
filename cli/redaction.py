"""The redaction options every command shares (``--redact``, ``--redact-config``) and their checks.

Why one module: ``vae redact``, ``vae import calls --redact``, ``vae run
--redact`` and ``vae rescore --redact`` read the same configuration file the
same way, and refuse it the same way — a malformed file or an unknown entity
type is a usage error (exit 2) raised before anything touches the store; a
missing ``redact`` extra is an error naming ``pip install 'vae[redact]'``
(exit 1). Nothing heavy is imported until a command asks for a redactor.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from vae.redaction.config import RedactionConfig
    from vae.redaction.redactor import Redactor

F = TypeVar("F", bound=Callable[..., Any])

CONFIG_HELP = (
    "Redaction configuration (YAML/JSON: entity types, custom regexes, audio mask; "
    "`vae schema redaction`); default: every built-in type (env VAE_REDACT_CONFIG)."
)


def redact_config_option(func: F) -> F:
    return click.option(
        "--redact-config",
        "redact_config",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        envvar="VAE_REDACT_CONFIG",
        help=CONFIG_HELP,
    )(func)


def load(path: Path | None) -> RedactionConfig:
    """The configuration at ``path`` (None: defaults); a bad one is a usage error (exit 2)."""
    from vae.redaction.config import RedactionConfigError, load_config

    if path is not None and not path.exists():
        raise click.BadParameter(f"{path}: no such file", param_hint="--redact-config")
    try:
        return load_config(path)
    except RedactionConfigError as exc:
        raise click.UsageError(f"redaction config: {exc}") from exc


def redactor(config: RedactionConfig) -> Redactor:
    """The redactor for ``config``; exit 1 naming the extra when presidio is missing."""
    from vae.redaction.config import RedactionUnavailable
    from vae.redaction.redactor import make_redactor

    try:
        return make_redactor(config)
    except RedactionUnavailable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


def checked(path: Path | None) -> Any:
    """Configuration and redactor in one step (usage errors first, then the extra)."""
    return redactor(load(path))
