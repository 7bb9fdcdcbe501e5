#!/usr/bin/env bash
# Install the npm packages of the Node.js examples (examples/node): @grpc/grpc-js
# and @grpc/proto-loader, pinned by examples/node/package-lock.json.
# Needs node (>= 18) and npm on PATH; on Debian: apt-get install -y nodejs npm.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "node and npm are required: apt-get install -y nodejs npm" >&2
  exit 1
fi
cd "$here/examples/node"
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund
else
  npm install --no-audit --no-fund
fi
node -e "require('@grpc/grpc-js'); require('@grpc/proto-loader'); console.log('node examples ready')"
