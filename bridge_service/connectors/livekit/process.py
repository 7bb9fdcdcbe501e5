"""The agent's own process: started for one session, watched, and always ended.

Why the care: the connector starts an interpreter per session, and a process
that outlived its session (a cancelled run, a bridge stopped with SIGTERM)
would hold a model, a port and a CPU forever. So each process

- runs in a session (process group) of its own, so ending it ends whatever it
  started too, and so LiveKit's second-signal handler (``killpg`` of its own
  group) can never reach the bridge;
- on Linux, is killed by the kernel if the bridge process dies first
  (``PR_SET_PDEATHSIG``, set by :func:`launcher` in the agent's interpreter
  before it execs itself as the agent), which covers even a SIGKILLed bridge;
- is ended by :meth:`AgentProcess.stop` — SIGTERM to its group, SIGKILL after
  ``stop_timeout_s`` — from the endpoint's ``close``, which the run calls on
  every way out of an attempt (end, cancel, shutdown).

Its output is kept for the stop reasons' details: the last lines of stderr
(tracebacks, a crash) and the error lines of its log (LiveKit logs to
stdout; ``ERROR``/``CRITICAL`` lines are kept, debug chatter is not).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections import deque
from collections.abc import Sequence

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ERROR = re.compile(r"\b(ERROR|CRITICAL|FATAL|Traceback)\b")
_PR_SET_PDEATHSIG = 1


#: Run by the agent's own interpreter before it becomes the agent: ask the kernel for
#: SIGKILL when the bridge dies (kept across exec), give up if it already has, exec.
#: Not a ``preexec_fn``: Python code between fork and exec in the bridge, a process
#: with gRPC's threads, can deadlock or crash the child.
_LAUNCHER = (
    "import ctypes, os, signal, sys\n"
    "try:\n"
    "    ctypes.CDLL(None).prctl({option}, signal.SIGKILL)\n"
    "except Exception:\n"
    "    pass\n"
    "if os.getppid() != {parent}:\n"
    "    sys.exit('the bridge that started this agent is gone')\n"
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])\n"
)


def launcher(python: str) -> list[str]:
    """The argv prefix that starts ``python`` bound to this process's life (Linux)."""
    if not sys.platform.startswith("linux"):
        return [python]
    return [python, "-c", _LAUNCHER.format(option=_PR_SET_PDEATHSIG, parent=os.getpid())]


class LogTail:
    """The last lines of stderr and the error lines of stdout, bounded."""

    def __init__(self, lines: int) -> None:
        self.stderr: deque[str] = deque(maxlen=lines)
        self.errors: deque[str] = deque(maxlen=lines)

    def add(self, stream: str, raw: bytes) -> None:
        line = _ANSI.sub("", raw.decode(errors="replace")).rstrip()[:1000]
        if not line:
            return
        if stream == "stderr":
            self.stderr.append(line)
        elif _ERROR.search(line):
            self.errors.append(line)

    def text(self) -> str:
        parts = []
        if self.errors:
            parts.append("error lines of its log:\n" + "\n".join(self.errors))
        if self.stderr:
            parts.append("stderr:\n" + "\n".join(self.stderr))
        return "\n".join(parts) or "(it wrote nothing to stderr and logged no error)"


class AgentProcess:
    """One running agent; ``exited`` is set when it has ended, for whatever reason."""

    def __init__(self, proc: asyncio.subprocess.Process, tail: LogTail) -> None:
        self.proc = proc
        self.pid = proc.pid
        self.tail = tail
        self.exited = asyncio.Event()
        self._readers = [
            asyncio.ensure_future(self._read("stdout", proc.stdout)),
            asyncio.ensure_future(self._read("stderr", proc.stderr)),
        ]
        self._waiter = asyncio.ensure_future(self._wait())

    @classmethod
    async def start(
        cls, argv: Sequence[str], env: dict[str, str], cwd: str, log_lines: int
    ) -> AgentProcess:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        return cls(proc, LogTail(log_lines))

    async def _read(self, stream: str, pipe: asyncio.StreamReader | None) -> None:
        """Drain one pipe for good (a full pipe would block the agent), keeping lines."""
        if pipe is None:
            return
        pending = b""
        with contextlib.suppress(OSError):
            while chunk := await pipe.read(1 << 16):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    self.tail.add(stream, line)
                if len(pending) > 1 << 16:  # a very long line: keep its start
                    self.tail.add(stream, pending)
                    pending = b""
        self.tail.add(stream, pending)

    async def _wait(self) -> None:
        await self.proc.wait()
        # Its last words: the pipes close when it exits (or soon after, for children).
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self._readers), 1.0)
        self.exited.set()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def how_it_ended(self) -> str:
        code = self.proc.returncode
        if code is None:
            return "is still running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"was killed by {signal.Signals(-code).name}"
        return f"exited with status {code}"

    async def stop(self, timeout_s: float) -> None:
        """SIGTERM to its process group, SIGKILL after ``timeout_s``; idempotent."""
        try:
            if self.proc.returncode is None:
                self._signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(asyncio.shield(self._waiter), timeout_s)
                except TimeoutError:
                    self._signal(signal.SIGKILL)
            # Whatever it started in its group goes too.
            self._signal(signal.SIGKILL)
            await asyncio.shield(self._waiter)
        except asyncio.CancelledError:
            self._signal(signal.SIGKILL)  # cancelled while waiting: never leave it running
            raise
        finally:
            for task in self._readers:
                task.cancel()

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
