#!/usr/bin/env bash
# Create the separate virtual environment the example LiveKit agent runs in.
#
# A LiveKit agent is its own program with its own dependencies (livekit-agents
# brings the LiveKit FFI library, onnxruntime, PyAV, OpenTelemetry...), none of
# which vae needs: vae starts the agent with this venv's interpreter, in
# LiveKit's console mode, once per session (the livekit connector), and talks
# to it over loopback TCP. vae itself only needs livekit's generated protocol
# classes (pip install 'vae[livekit]').
#
# Usage: scripts/setup_livekit_env.sh [VENV_DIR]   (default: .livekit-venv)
# Env:   LIVEKIT_AGENTS_VERSION  pin another livekit-agents version (default below)
#        PYTHON                  interpreter to build the venv from (default python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-$here/.livekit-venv}"
version="${LIVEKIT_AGENTS_VERSION:-1.8.9}"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
# The plugins the example agent uses: OpenAI-compatible STT, LLM and TTS
# (pointed at loopback stand-ins in the tests) and Silero VAD, whose model
# ships inside the package: nothing is downloaded at run time.
"$venv/bin/python" -m pip install --quiet "livekit-agents==$version" \
  "livekit-plugins-openai==$version" "livekit-plugins-silero==$version"
"$venv/bin/python" -c "import livekit.agents, livekit.plugins.silero; print('livekit-agents', livekit.agents.__version__)"
echo "livekit venv ready: $venv"
