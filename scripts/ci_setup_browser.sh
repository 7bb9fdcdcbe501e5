#!/usr/bin/env bash
# Install what the report's browser test needs on a fresh Debian machine (as root):
# Debian's Chromium (/usr/bin/chromium) and the Python Playwright driver. Playwright's
# own browser download is never used: the test launches Debian's Chromium through
# executable_path, with the flags that keep it off the network.
set -euo pipefail

if ! command -v chromium >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium
fi

python -m pip install --quiet "playwright>=1.45"
# eSpeak NG for the reference bots' voice (a PyPI wheel that bundles the library).
python -m pip install --quiet "espeakng-loader>=0.2"

chromium --version
python -c "import playwright; from importlib.metadata import version; print('playwright', version('playwright'))"
