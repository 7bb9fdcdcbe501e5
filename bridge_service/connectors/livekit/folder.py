"""The session's folder: how a LiveKit agent learns the scenario and reports its state.

LiveKit has no notion of a scenario's database, so vae offers one through
files, in a folder made for each session and removed with it. The agent's
environment names it (``VAE_SESSION_DIR``); at SessionStart vae writes
``start.json`` there (the session, the scenario's prompt, tools and initial
state); a ``final_state.json`` the agent writes there is recorded as its final
state. An agent that ignores both simply has no final state.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from vae.bridge_service.connectors.base import FinalStatePart, JsonPiece, SessionStartInfo

#: Largest final_state.json read back.
MAX_STATE_BYTES = 16 << 20


class SessionFolder:
    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="vae-livekit-"))

    def start(self, start: SessionStartInfo) -> None:
        document = {
            "session_id": start.session_id,
            "run_id": start.run_id,
            "scenario": start.scenario_name,
            "role": str(start.role),
            "domain": start.domain,
            "system_prompt": start.system_prompt,
            "tools": start.tools,
            "initial_state": start.initial_state,
            "modality": start.modality,
        }
        (self.path / "start.json").write_text(json.dumps(document, default=str))

    def final(self, context: Any) -> FinalStatePart:
        """The agent's final state (its final_state.json, if any) and ``context``."""
        state = None
        path = self.path / "final_state.json"
        with contextlib.suppress(OSError, ValueError):
            if path.stat().st_size <= MAX_STATE_BYTES:
                state = json.loads(path.read_text())
        return FinalStatePart(_piece(state), _piece(context), done=True)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _piece(value: Any) -> JsonPiece | None:
    if value is None:
        return None
    return JsonPiece(0, json.dumps(value, default=str).encode(), True)
