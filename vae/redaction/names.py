"""Names and free-form addresses found by an OpenAI-compatible endpoint (optional).

Why an endpoint: a pattern finds "my name is Ann Lee" but not "Ann said she
would call back", nor "the flat above the bakery on Mill Lane"; a language
model does. vae never downloads a model, so this is opt-in: the redaction
configuration names an endpoint (``names: {base_url, model}``), reached
through the real ``openai`` client, and its API key comes from the
environment (``names.api_key_env``), never from a file or the store.

The model is asked for the exact substrings; each one returned is located in
the text (every occurrence, case-insensitively) and becomes a finding. A reply
that is not the JSON asked for, or an endpoint that stays unreachable after
its retries, raises :class:`NamesEndpointError`: a redaction that was asked
to remove names must fail rather than keep them silently.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

from vae.redaction.config import NamesEndpoint
from vae.redaction.recognisers import Hit

PROMPT = (
    "You find personal data in call transcripts. List every person's name (PERSON) and "
    "every postal address or place someone lives (ADDRESS) in the user's text, copied "
    "exactly as written. Answer only JSON: "
    '{"items": [{"type": "PERSON" or "ADDRESS", "text": "..."}]}; {"items": []} if none.'
)
TYPES = ("PERSON", "ADDRESS")


class NamesEndpointError(RuntimeError):
    """The names endpoint failed or answered something unusable; the message says which."""


class NameFinder:
    """One client for one endpoint; answers cached by text for the life of the finder."""

    def __init__(self, endpoint: NamesEndpoint) -> None:
        import openai

        self.endpoint = endpoint
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=endpoint.base_url,
            api_key=os.environ.get(endpoint.api_key_env, "") or "not-needed",
            timeout=endpoint.timeout_s,
            max_retries=0,
        )
        self._cache: dict[str, list[tuple[str, str]]] = {}
        self.requests = 0

    def close(self) -> None:
        self._client.close()

    def _ask(self, text: str) -> list[tuple[str, str]]:
        attempts = 0
        while True:
            attempts += 1
            self.requests += 1
            try:
                reply = self._client.chat.completions.create(
                    model=self.endpoint.model,
                    messages=[
                        {"role": "system", "content": PROMPT},
                        {"role": "user", "content": text},
                    ],
                    temperature=0,
                    response_format={"type": "json_object"},
                )
                break
            except Exception as exc:
                if _transient(self._openai, exc) and attempts <= self.endpoint.max_retries:
                    time.sleep(0.2 * 2 ** (attempts - 1))
                    continue
                raise NamesEndpointError(
                    f"names endpoint {self.endpoint.base_url} failed after {attempts} "
                    f"attempt(s): {type(exc).__name__}: {exc}"
                ) from exc
        return _items(reply)

    def find(self, text: str) -> list[Hit]:
        if not text.strip():
            return []
        items = self._cache.get(text)
        if items is None:
            items = self._cache[text] = self._ask(text)
        hits = []
        for entity, found in items:
            for m in re.finditer(re.escape(found), text, re.IGNORECASE):
                hits.append(Hit(entity, m.start(), m.end(), 0.85))
        return hits


def _transient(openai: Any, exc: Exception) -> bool:
    if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return bool(exc.status_code == 429 or exc.status_code >= 500)
    return False


def _items(reply: Any) -> list[tuple[str, str]]:
    try:
        content = reply.choices[0].message.content or ""
        doc = json.loads(content)
        items = doc["items"]
        out = []
        for item in items:
            entity, found = str(item["type"]).upper(), str(item["text"]).strip()
            if entity in TYPES and found:
                out.append((entity, found))
        return out
    except (AttributeError, IndexError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise NamesEndpointError(
            f"the names endpoint's answer is not the JSON asked for ({exc!r})"
        ) from exc
