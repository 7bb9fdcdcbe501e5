"""What a judge call used, from the response, for cost and for vae's trace.

Kept in ``JUDGE_PASSED``'s detail as ``usage``: ``{model, response_model,
input_tokens, output_tokens, started_ns, ended_ns, cached}``. Tokens are what
the response's ``usage`` says (None when it says nothing: unknown, not 0); a
reply from the cache cost nothing and says so (``cached``).
"""

from __future__ import annotations

import time
from typing import Any


def reply_usage(reply: Any) -> dict[str, Any]:
    """Tokens and model of one chat completion."""
    usage = getattr(reply, "usage", None)

    def tokens(name: str) -> int | None:
        value = getattr(usage, name, None) if usage is not None else None
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else None

    return {
        "response_model": str(getattr(reply, "model", "") or ""),
        "input_tokens": tokens("prompt_tokens"),
        "output_tokens": tokens("completion_tokens"),
    }


def usage_of(
    got: dict[str, Any] | None, cached: bool, model: str, started_ns: int
) -> dict[str, Any]:
    """A call's usage record: ``got`` from :func:`reply_usage` (None: no reply)."""
    got = got or {}
    return {
        "model": model,
        "response_model": got.get("response_model", ""),
        "input_tokens": None if cached else got.get("input_tokens"),
        "output_tokens": None if cached else got.get("output_tokens"),
        "started_ns": started_ns,
        "ended_ns": time.time_ns(),
        "cached": cached,
    }
