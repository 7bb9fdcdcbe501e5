"""Reassembling a bot's chunked final state.

A final state and an LLM context history are JSON documents sent as ordered
``JsonChunk`` pieces, so no message-size limit ever cuts them short. Each
piece must start where the previous one ended (``offset``); the document is
parsed once the session ends, and its canonical hash is taken with the
scenario's order-independent lists.

Large documents must never stall the event loop that drives every session's
audio clock: beyond ``SPOOL_BYTES`` a document is streamed to a temporary
file piece by piece (each write in a thread), and a collector holding more
than ``INLINE_BYTES`` is parsed, hashed, canonicalised and stored by a worker
process (:mod:`vae.bridge_service.session.final_state_worker`), never on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import IO, Any

from vae.bridge_service.connectors.base import (
    BotLimitError,
    BotProtocolError,
    FinalStatePart,
    JsonPiece,
)
from vae.recordings.canonical import state_hash

#: A document larger than this is streamed to a temporary file.
SPOOL_BYTES = 1 << 20
#: Collectors holding more than this are processed by a worker process.
INLINE_BYTES = 256 * 1024


@dataclass
class _Document:
    name: str
    limit: int
    data: bytearray = field(default_factory=bytearray)
    size: int = 0
    spool: IO[bytes] | None = None
    complete: bool = False

    async def add(self, piece: JsonPiece) -> None:
        if self.complete:
            raise BotProtocolError(f"final_state.{self.name}", "chunk after the last one")
        if piece.offset != self.size:
            raise BotProtocolError(
                f"final_state.{self.name}.offset",
                f"expected offset {self.size}, got {piece.offset} (chunks out of order)",
            )
        if self.size + len(piece.data) > self.limit:
            raise BotLimitError(
                "max_final_state_bytes",
                f"final_state.{self.name} is larger than the {self.limit}-byte limit "
                "(max_final_state_bytes); nothing of it is kept",
            )
        self.size += len(piece.data)
        self.complete = piece.last
        if self.spool is None and self.size > SPOOL_BYTES:
            self.spool = await asyncio.to_thread(_spool_file, bytes(self.data))
            self.data = bytearray()
        elif self.spool is None:
            self.data += piece.data
            return
        if self.spool is not None and piece.data:
            await asyncio.to_thread(self.spool.write, piece.data)

    def source(self) -> bytes | str:
        """The document for a worker: its bytes, or the path of its spool file."""
        if self.spool is None:
            return bytes(self.data)
        self.spool.flush()
        return self.spool.name

    def discard(self) -> None:
        """Drop the document (delete its spool file): it reads as never sent."""
        if self.spool is not None:
            self.spool.close()
            with contextlib.suppress(OSError):
                os.unlink(self.spool.name)
            self.spool = None
        self.data = bytearray()
        self.size = 0
        self.complete = False


def _spool_file(head: bytes) -> IO[bytes]:
    spool = tempfile.NamedTemporaryFile(prefix="vae-final-state-", delete=False)  # noqa: SIM115
    spool.write(head)
    return spool


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

    async def add(self, part: FinalStatePart) -> bool:
        """Add one part; return True when the bot said it is done."""
        if self.done:
            raise BotProtocolError("final_state", "sent after the part marked done")
        if part.state is not None:
            await self._state.add(part.state)
        if part.context is not None:
            await self._context.add(part.context)
        self.done = part.done
        return self.done

    @property
    def has_state(self) -> bool:
        """Whether the bot sent a state document (a context alone is not one)."""
        return self._state.size > 0

    @property
    def empty(self) -> bool:
        return not self._state.size and not self._context.size

    @property
    def large(self) -> bool:
        """Too large to parse on the event loop (see INLINE_BYTES)."""
        return self._state.size + self._context.size > INLINE_BYTES

    def sources(self) -> tuple[Source, Source]:
        """State and context for a worker (None where the bot sent nothing)."""
        return _source(self._state), _source(self._context)

    def result(self, order_independent: list[str]) -> FinalStateResult:
        """Parse and hash here (small documents only; large ones go to the worker)."""
        state, context = self.sources()
        return parse_documents(state, context, order_independent)

    def discard(self) -> None:
        """Delete spool files (after the worker or ``result`` is done with them).

        The collector is ``empty`` afterwards: storing it again stores nothing.
        """
        self._state.discard()
        self._context.discard()


#: A document for :func:`parse_documents`: None, its bytes, or a spool file's path.
Source = tuple[bytes | str, bool] | None


def _source(doc: _Document) -> Source:
    return None if not doc.size else (doc.source(), doc.complete)


def parse_documents(
    state_src: Source, context_src: Source, order_independent: list[str]
) -> FinalStateResult:
    """Parse both documents and hash the state (runs on the loop or in a worker)."""
    out = FinalStateResult()
    for name, src in (("state", state_src), ("context", context_src)):
        if src is None:
            continue
        data, complete = src
        if isinstance(data, str):
            with open(data, "rb") as f:
                data = f.read()
        if not complete:
            out.problems.append(f"final_state.{name}: last chunk missing; kept as text")
        try:
            value: Any = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            excerpt = data[:200].decode("utf-8", errors="replace")
            out.problems.append(
                f"final_state.{name}: not valid JSON ({exc}); not kept: {excerpt!r}"
            )
            continue
        expected = dict if name == "state" else list
        if not isinstance(value, expected):
            out.problems.append(
                f"final_state.{name}: must be a JSON "
                f"{'object' if expected is dict else 'list'}, got {type(value).__name__}; "
                "not kept"
            )
            continue
        if name == "state":
            out.state = value
            out.state_hash = state_hash(value, order_independent=order_independent)
        else:
            out.context = value
    return out
