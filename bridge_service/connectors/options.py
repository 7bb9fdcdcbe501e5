"""Connector options and URLs: checked before the run starts, the same way for every kind.

Why shared: every connector takes ``ConnectorConfig.options`` from a user's
``--connector-options`` JSON and a pool of URLs, and each must fail the same
way before the run starts — an unknown key or a wrong type names the key and
what it must be, a URL of the wrong form names the forms the kind takes
(:class:`ConnectorOptionsError`; StartRun refuses the run with
``INVALID_ARGUMENT`` through the kind's ``check_config``, see
``registry.check_connector``).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

from vae.bridge_service.connectors.base import ConnectorConfig, ConnectorOptionsError

T = TypeVar("T")


def parse_dataclass(cls: type[T], raw: dict[str, Any], label: str) -> T:
    """``cls(**raw)`` with each value checked against the type of its default."""
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise ConnectorOptionsError(f"{label}: unknown option {key!r} ({', '.join(known)})")
        values[key] = coerce(f"{label}: option {key!r} must be", value, getattr(cls, key))
    return cls(**values)


def coerce(problem: str, value: Any, default: Any) -> Any:
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConnectorOptionsError(f"{problem} true or false")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConnectorOptionsError(f"{problem} an integer")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConnectorOptionsError(f"{problem} a number")
        return float(value)
    if isinstance(default, tuple):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConnectorOptionsError(f"{problem} a list of strings")
        return tuple(value)
    if not isinstance(value, str):
        raise ConnectorOptionsError(f"{problem} a string")
    return value


def check_urls(
    config: ConnectorConfig, label: str, schemes: tuple[str, ...], prefix: str = ""
) -> None:
    """Every URL of the run's pool is ``[prefix]SCHEME...`` (``prefix`` optional); else
    :class:`ConnectorOptionsError` naming the forms the ``label`` connector takes."""
    for url in config.urls:
        if not url.removeprefix(prefix).startswith(schemes):
            forms = " or ".join(f"{prefix}{scheme}" for scheme in schemes)
            raise ConnectorOptionsError(f"{label} connector needs a {forms} url, got {url!r}")
