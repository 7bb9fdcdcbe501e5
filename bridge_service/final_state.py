"""Reassembling a bot's chunked final state (DESIGN.md §2).

A final state and an LLM context history are JSON documents sent as ordered
``JsonChunk`` pieces, so no message-size limit ever cuts them short. Each
piece must start where the previous one ended (``offset``); the document is
parsed once its ``last`` piece arrives, and its canonical hash is taken with
the scenario's order-independent lists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bridge_service.connectors.base import (
    BotLimitError,
    BotProtocolError,
    FinalStatePart,
    JsonPiece,
)
from recordings.canonical import state_hash


@dataclass
class _Document:
    name: str
    limit: int
    data: bytearray = field(default_factory=bytearray)
    complete: bool = False

    def add(self, piece: JsonPiece) -> None:
        if self.complete:
            raise BotProtocolError(f"final_state.{self.name}", "chunk after the last one")
        if piece.offset != len(self.data):
            raise BotProtocolError(
                f"final_state.{self.name}.offset",
                f"expected offset {len(self.data)}, got {piece.offset} (chunks out of order)",
            )
        if len(self.data) + len(piece.data) > self.limit:
            raise BotLimitError(
                "max_final_state_bytes",
                f"final_state.{self.name} is larger than the {self.limit}-byte limit "
                "(max_final_state_bytes); nothing of it is kept",
            )
        self.data += piece.data
        self.complete = piece.last


@dataclass
class FinalStateResult:
    state: Any = None
    state_hash: str | None = None
    context: Any = None
    #: Problems found while parsing (recorded as malformed_event).
    problems: list[str] = field(default_factory=list)


class FinalStateCollector:
    """Collects one side's FinalState parts until ``done``."""

    def __init__(self, limit: int) -> None:
        self._state = _Document("state", limit)
        self._context = _Document("context", limit)
        self.done = False

    def add(self, part: FinalStatePart) -> bool:
        """Add one part; return True when the bot said it is done."""
        if self.done:
            raise BotProtocolError("final_state", "sent after the part marked done")
        if part.state is not None:
            self._state.add(part.state)
        if part.context is not None:
            self._context.add(part.context)
        self.done = part.done
        return self.done

    def result(self, order_independent: list[str]) -> FinalStateResult:
        out = FinalStateResult()
        for doc in (self._state, self._context):
            if not doc.data:
                continue
            if not doc.complete:
                out.problems.append(f"final_state.{doc.name}: last chunk missing; kept as text")
            try:
                value: Any = json.loads(doc.data.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                excerpt = doc.data[:200].decode("utf-8", errors="replace")
                out.problems.append(
                    f"final_state.{doc.name}: not valid JSON ({exc}); not kept: {excerpt!r}"
                )
                continue
            expected = dict if doc is self._state else list
            if not isinstance(value, expected):
                out.problems.append(
                    f"final_state.{doc.name}: must be a JSON "
                    f"{'object' if expected is dict else 'list'}, got {type(value).__name__}; "
                    "not kept"
                )
                continue
            if doc is self._state:
                out.state = value
                out.state_hash = state_hash(value, order_independent=order_independent)
            else:
                out.context = value
        return out
