"""Calling the judge: OpenAI-compatible endpoint, retries, bounded concurrency, cache.

The ``openai`` client is built with ``max_retries=0`` and retried here, so the
policy is ours and tested: 429, 5xx, timeouts and connection errors are
retried with exponential backoff up to ``max_retries`` times; anything else
(400, 401, 404, a reply that is not valid JSON) is final. A call that still
fails returns a :class:`JudgeOutcome` with ``error`` set — the caller turns it
into ``judge_error`` (unscored), never into an agent failure.

A judge that cannot be used at all is told apart from a flaky one: until the
endpoint has answered once, a connection that cannot be made (refused,
unknown host), 401, 403 or 404 (unknown model or path) raises
:class:`JudgeUnusableError`, which stops the rescore (the scoring is recorded
``failed``) instead of leaving every session ``judge_error``.

Every valid reply is cached by a hash of (endpoint, model, messages, sampling
parameters): in memory for this scoring and in the store's ``judge_cache``
table for the next, so rescoring the same run twice costs no judge calls; two
endpoints serving the same model name never share replies. ``no_cache``
bypasses the lookup (fresh replies still refresh the cache). Invalid replies
are not cached: a flaky judge gets another chance next time.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import openai

from vae.scorer_service.config import JudgeSettings
from vae.scorer_service.judge.prompt import JudgeOutputError, JudgeVerdict, parse_verdict
from vae.scorer_service.judge.usage import reply_usage, usage_of

log = logging.getLogger("vae.scorer.judge")

CacheGet = Callable[[str], Awaitable[Any]]
CachePut = Callable[[str, str, dict[str, Any], dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class JudgeOutcome:
    verdict: JudgeVerdict | None
    error: str = ""
    cached: bool = False
    attempts: int = 0
    raw: str = ""
    #: What the call used, from the response (:func:`usage_of`): model, tokens, times.
    usage: dict[str, Any] | None = None


@dataclass
class JudgeStats:
    requests: int = 0
    cache_hits: int = 0
    errors: int = 0


class JudgeUnusableError(Exception):
    """The judge endpoint cannot be used at all (detected before it ever answered)."""


def _unusable(exc: Exception) -> bool:
    """Errors that mean "this endpoint/model/key will never work", not "try later"."""
    if isinstance(exc, openai.APITimeoutError):
        return False
    if isinstance(exc, openai.APIConnectionError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (401, 403, 404)
    return False


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


class JudgeClient:
    """One judge endpoint for one scoring."""

    def __init__(self, settings: JudgeSettings, cache_get: CacheGet, cache_put: CachePut) -> None:
        self.settings = settings
        self._client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key or "not-needed",
            timeout=settings.timeout_s,
            max_retries=0,
        )
        self._semaphore = asyncio.Semaphore(settings.concurrency)
        self._memory: dict[str, dict[str, Any]] = {}
        self._cache_get = cache_get
        self._cache_put = cache_put
        self.stats = JudgeStats()
        #: Set once the endpoint has answered (even with a reply we cannot read).
        self.answered = False

    async def close(self) -> None:
        await self._client.close()

    def params(self) -> dict[str, Any]:
        s = self.settings
        raw = {
            "temperature": s.temperature,
            "seed": s.seed,
            "max_tokens": s.max_tokens,
            "top_p": s.top_p,
        }
        return {k: v for k, v in raw.items() if v is not None}

    def cache_key(self, messages: list[dict[str, str]]) -> str:
        body = {
            "base_url": self.settings.base_url.rstrip("/"),
            "model": self.settings.model,
            "messages": messages,
            "params": self.params(),
        }
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    async def judge(self, messages: list[dict[str, str]]) -> JudgeOutcome:
        started = time.time_ns()
        outcome = await self._judge(messages)
        used = usage_of(outcome.usage, outcome.cached, self.settings.model, started)
        return replace(outcome, usage=used)

    async def _judge(self, messages: list[dict[str, str]]) -> JudgeOutcome:
        key = self.cache_key(messages)
        hit = (
            None
            if self.settings.no_cache
            else (self._memory.get(key) or await self._cache_get(key))
        )
        if isinstance(hit, dict) and isinstance(hit.get("content"), str):
            try:
                verdict = parse_verdict(hit["content"])
            except JudgeOutputError:
                pass  # a cached reply this version cannot read: ask again
            else:
                self.stats.cache_hits += 1
                return JudgeOutcome(verdict, cached=True, raw=hit["content"])
        async with self._semaphore:
            outcome = await self._call(messages)
        if outcome.verdict is not None:
            response = {"content": outcome.raw}
            self._memory[key] = response
            request = {"messages": messages, "params": self.params()}
            await self._cache_put(key, self.settings.model, request, response)
        else:
            self.stats.errors += 1
        return outcome

    async def _call(self, messages: list[dict[str, str]]) -> JudgeOutcome:
        attempts = 0
        while True:
            attempts += 1
            self.stats.requests += 1
            try:
                reply = await self._client.chat.completions.create(
                    model=self.settings.model,
                    messages=messages,  # type: ignore[arg-type]
                    **self.params(),
                )
            except Exception as exc:
                if not self.answered and _unusable(exc):
                    raise JudgeUnusableError(
                        f"the judge at {self.settings.base_url} (model {self.settings.model!r})"
                        f" cannot be used: {_describe(exc, attempts)}"
                    ) from exc
                if _retryable(exc) and attempts <= self.settings.max_retries:
                    delay = self.settings.backoff_s * 2 ** (attempts - 1)
                    log.warning("judge call failed (%s); retry %d in %.2fs", exc, attempts, delay)
                    await asyncio.sleep(delay)
                    continue
                return JudgeOutcome(None, error=_describe(exc, attempts), attempts=attempts)
            self.answered = True
            content = reply.choices[0].message.content if reply.choices else None
            text = content or ""
            used = reply_usage(reply)
            try:
                verdict = parse_verdict(text)
            except JudgeOutputError as exc:
                return JudgeOutcome(None, error=str(exc), attempts=attempts, raw=text, usage=used)
            return JudgeOutcome(verdict, attempts=attempts, raw=text, usage=used)


def _describe(exc: Exception, attempts: int) -> str:
    kind = type(exc).__name__
    status = getattr(exc, "status_code", None)
    where = f" (HTTP {status})" if status else ""
    return f"judge request failed after {attempts} attempt(s): {kind}{where}: {exc}"
