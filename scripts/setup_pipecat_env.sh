#!/usr/bin/env bash
# Create the separate virtual environment the pipecat example bot runs in.
#
# pipecat-ai pins protobuf < 7 while vae's generated stubs need protobuf >= 7,
# so a pipecat bot never shares vae's interpreter: it
# runs from this venv as its own process and vae reaches it over a WebSocket.
#
# Usage: scripts/setup_pipecat_env.sh [VENV_DIR]   (default: .pipecat-venv)
# Env:   PIPECAT_VERSION  pin another pipecat-ai version (default below)
#        PYTHON           interpreter to build the venv from (default python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${1:-$here/.pipecat-venv}"
version="${PIPECAT_VERSION:-1.14.0}"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
# [websocket] brings the WebSocket server transport; the protobuf and Twilio
# serializers are in the base package. [webrtc] brings SmallWebRTCTransport
# (aiortc), which examples/pipecat_bot/webrtc_bot.py serves. fastapi + uvicorn
# serve the Twilio Media Streams example (examples/pipecat_bot/twilio_bot.py)
# through pipecat's FastAPI WebSocket transport, and the WebRTC example's
# POST /api/offer. No model weights or network services are needed by
# examples/pipecat_bot. [tracing] brings pipecat's OpenTelemetry tracing, and
# opentelemetry-exporter-otlp-proto-http the OTLP/HTTP exporter the example
# bot sends its spans to vae with (docs/traces.md).
"$venv/bin/python" -m pip install --quiet "pipecat-ai[websocket,webrtc,tracing]==$version" numpy fastapi uvicorn \
  opentelemetry-exporter-otlp-proto-http
"$venv/bin/python" -c "import pipecat, google.protobuf; print('pipecat', pipecat.__version__ if hasattr(pipecat, '__version__') else '?', 'protobuf', google.protobuf.__version__)"
echo "pipecat venv ready: $venv"
